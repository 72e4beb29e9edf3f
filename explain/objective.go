package explain

import (
	"xbo/history"
)

// ObjectiveParam is the query parameter (and the CLI's --objective) that
// chooses the objective of a study with several: its name or its index.
// Every kind but tradeoff (which covers them all) takes it; ParseQuery
// leaves it to Objective. Without it, an explanation of a study with
// several objectives is of the first.
const ObjectiveParam = "objective"

// Objective returns the history an explanation of one objective reads:
// objective name (an objective's name or its index, "" for the first) of
// a study with several objectives, as history.History.ForObjective gives
// it, so each objective is explained by a surrogate of its own values, in
// its own units and direction, and the result names it (About.Objective).
// A single-objective history is returned as it is ("", "0" and its one
// name are accepted). Errors wrap ErrInvalid.
func Objective(h *history.History, name string) (*history.History, error) {
	if h == nil || h.Space == nil {
		return nil, invalidf("no history")
	}
	k := 0
	if name != "" {
		var err error
		if k, err = h.Space.ObjectiveIndex(name); err != nil {
			return nil, invalidf("%v", err)
		}
	}
	out, err := h.ForObjective(k)
	if err != nil {
		return nil, invalidf("%v", err)
	}
	return out, nil
}
