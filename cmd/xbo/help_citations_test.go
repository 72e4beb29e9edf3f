package main

import (
	"regexp"
	"strings"
	"testing"
)

// internalNumber matches the project's internal issue and paper numbers
// ("issue 17", "paper 000"), which mean nothing to a user: help texts cite
// papers by authors and year and say what a benchmark measures instead.
var internalNumber = regexp.MustCompile(`(?i)\bissues? ?#?[0-9]+|\bpapers? ?[0-9]{3}\b`)

// TestHelpCitesNoInternalNumbers reads xbo's help, the groups' and the
// benchmarks' lists and every command's and benchmark's help, flag
// descriptions and defaults included (a value such as a preset named
// "paper000" counts too).
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
