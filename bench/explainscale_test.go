package bench

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// ExplainScale runs every kind on a study above the GP's exact limit and the
// table names the approximation.
func TestExplainScaleSmall(t *testing.T) {
	row, err := ExplainScale(context.Background(), 300, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if row.Trials != 300 || !row.Approximate || row.ConditionedOn != 300 || row.First <= 0 {
		t.Fatalf("row %+v", row)
	}
	for _, kind := range ScaleKinds {
		if row.Further[kind] <= 0 {
			t.Errorf("%s not timed", kind)
		}
	}
	var buf bytes.Buffer
	if err := WriteScaleTable(&buf, []*ScaleRow{row}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "300 (subset)") {
		t.Errorf("table:\n%s", buf.String())
	}
}

// BenchmarkExplainScale times the explanation engine's scale targets: the first
// explanation of a fresh study version (it fits the GP) and the slowest further
// one, at T = 1,500 and 10,000 (go test -run X -bench ExplainScale -benchtime 1x
// ./bench). xbo bench explain-scale prints the same as a table, with the peak
// memory of each size measured in its own process.
func BenchmarkExplainScale(b *testing.B) {
	for _, n := range []int{1500, 10000} {
		b.Run(fmt.Sprintf("T=%d", n), func(b *testing.B) {
			var first, slowest float64
			for b.Loop() {
				row, err := ExplainScale(context.Background(), n, 1, nil)
				if err != nil {
					b.Fatal(err)
				}
				first += row.First
				further := make([]float64, 0, len(row.Further))
				for _, s := range row.Further {
					further = append(further, s)
				}
				slowest += slices.Max(further)
			}
			b.ReportMetric(first/float64(b.N), "first-s")
			b.ReportMetric(slowest/float64(b.N), "slowest-further-s")
		})
	}
}
