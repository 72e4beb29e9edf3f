package explain

import (
	"context"
	"testing"

	"xbo/space"
)

// The regional request's criterion reaches the tree: every criterion
// grows one on the same ICE curves, the l2 root impurity is the default's,
// the others measure something else, and an unknown name is refused.
func TestRegionalCriterion(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Config{})
	h := linearStudy(t, space.Minimize, 40)
	root := map[string]float64{}
	for _, c := range []string{"", "l2", "l1", "area", "point"} {
		res, err := e.Regional(ctx, h, RegionalRequest{Param: "a", Criterion: c})
		if err != nil {
			t.Fatalf("criterion %q: %v", c, err)
		}
		root[c] = res.RootImpurity
	}
	if root[""] != root["l2"] {
		t.Errorf("default root impurity %v, l2's %v", root[""], root["l2"])
	}
	for _, c := range []string{"l1", "area", "point"} {
		if root[c] == root["l2"] {
			t.Errorf("criterion %s: root impurity %v equals l2's: the option did not reach the tree", c, root[c])
		}
	}
	if _, err := e.Regional(ctx, h, RegionalRequest{Param: "a", Criterion: "gini"}); err == nil {
		t.Error("criterion gini was accepted")
	}
}
