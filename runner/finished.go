package runner

import (
	"context"
	"errors"
	"fmt"

	"xbo/client"
)

// Finished counts a study's finished trials as Config.Trials counts them:
// complete, pruned and failed ones, but not those failed because a run was
// interrupted (they were not evaluations), nor running or pending ones. A
// banner that says how far a resumed study is must use this count, or it
// disagrees with the total the run then works toward.
func Finished(ctx context.Context, c *client.Client, study string) (int, error) {
	if c == nil {
		return 0, errors.New("runner: finished trials: no client")
	}
	if study == "" {
		return 0, errors.New("runner: finished trials: no study name")
	}
	st, err := c.Study(ctx, study)
	if err != nil {
		return 0, fmt.Errorf("runner: study %q: %w", study, err)
	}
	stopped, err := countInterrupted(ctx, c, study)
	if err != nil {
		return 0, err
	}
	return st.Counts["complete"] + st.Counts["failed"] + st.Counts["pruned"] - stopped, nil
}

// countInterrupted counts a study's trials that runs failed as
// interrupted.
func countInterrupted(ctx context.Context, c *client.Client, study string) (int, error) {
	failed, err := c.Trials(ctx, study, "failed")
	if err != nil {
		return 0, fmt.Errorf("runner: list failed trials of %q: %w", study, err)
	}
	n := 0
	for _, t := range failed {
		if t.FailReason == reasonInterrupted {
			n++
		}
	}
	return n, nil
}
