package main

import (
	"regexp"
	"strings"
	"testing"
)

// internalNumber matches the project's internal issue and paper numbers
// (the word issue or paper followed by a number, as the tracker and the
// folder of source papers number them), which mean nothing to a user or a
// newcomer: help texts and comments cite papers by authors and year and
// say what a benchmark measures or why a check exists instead.
var internalNumber = regexp.MustCompile(`(?i)\bissues? ?#?[0-9]+|\bpapers? ?[0-9]{3}\b`)

// TestHelpCitesNoInternalNumbers reads xbo's help, the groups' and the
// benchmarks' lists and every command's and benchmark's help, flag
// descriptions and defaults included (a preset value named after a paper's
// number counts too).
func TestHelpCitesNoInternalNumbers(t *testing.T) {
	for _, args := range helpCalls() {
		_, stdout, stderr := runCLI(t, args...)
		for _, line := range strings.Split(stdout+"\n"+stderr, "\n") {
			if internalNumber.MatchString(line) {
				t.Errorf("xbo %s cites an internal number: %q", strings.Join(args, " "), line)
			}
		}
	}
}
