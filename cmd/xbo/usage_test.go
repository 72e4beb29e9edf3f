package main

import (
	"regexp"
	"strings"
	"testing"
)

// A mistyped command, subcommand, benchmark or flag gets one error line
// naming what was most likely meant, and exit status 2.
func TestMistypesAreNamedWithTheirCorrection(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"explain", "importanse"}, `xbo explain: unknown command "importanse"; did you mean "importance"?`},
		{[]string{"explain", "importanse", "--study", "s"}, `xbo explain: unknown command "importanse"; did you mean "importance"?`},
		{[]string{"study", "exprot", "s"}, `xbo study: unknown command "exprot"; did you mean "export"?`},
		{[]string{"optimise", "--budget", "3"}, `xbo: unknown command "optimise"; did you mean "optimize"?`},
		{[]string{"bench", "calibraton"}, `xbo bench: unknown benchmark "calibraton"; did you mean "calibration"?`},
		{[]string{"run", "--trails", "3", "--", "true"}, `xbo run: unknown flag --trails; did you mean --trials?`},
		{[]string{"optimize", "--fuction", "branin"}, `xbo optimize: unknown flag --fuction; did you mean --function?`},
		{[]string{"explain", "pdp", "--parm=x"}, `xbo explain pdp: unknown flag --parm; did you mean --param?`},
		{[]string{"study", "list", "--jsno"}, `xbo study list: unknown flag --jsno; did you mean --json?`},
	} {
		code, stdout, stderr := runCLI(t, tc.args...)
		if code != 2 || stdout != "" || stderr != tc.want+"\n" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and the line %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}

// Every misuse says what is wrong in one line that starts with xbo and the
// command, never only a help text.
func TestEveryMisuseHasAnErrorLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"explain"}, "xbo explain: which command? give one before the flags: ablation, bias, budgets, importance, lpi, paths, pdp, regional, report, shapley, tradeoff"},
		{[]string{"explain", "--study", "s"}, "xbo explain: which command? give one before the flags:"},
		{[]string{"study", "frobnicate"}, `xbo study: unknown command "frobnicate" (one of create, `},
		{[]string{"frobnicate"}, `xbo: unknown command "frobnicate" (run xbo help)`},
		{[]string{"optimize", "--budget", "x"}, `xbo optimize: invalid value "x" for flag --budget: parse error`},
		{[]string{"optimize", "--seed"}, "xbo optimize: flag needs an argument: --seed"},
		{[]string{"run", "--zzzzzz", "1"}, "xbo run: unknown flag --zzzzzz (xbo run -h lists the flags)"},
		{[]string{"study", "list", "extra"}, `xbo study list: unexpected argument "extra" (xbo study list -h shows what it takes)`},
		{[]string{"bench", "compare", "--seeds", "0"}, "xbo bench compare: --seeds and --budget-per-dim must be at least 1"},
		{[]string{"bench", "compare", "--sedes", "3"}, "xbo bench compare: unknown flag --sedes; did you mean --seeds?"},
		{[]string{"version", "--echo=maybe"}, "xbo version: unknown flag --echo (xbo version -h lists the flags)"},
	} {
		code, _, stderr := runCLI(t, tc.args...)
		lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
		if code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line starting %q", tc.args, code, stderr, tc.want)
		}
	}
}

// Help that was asked for goes to standard output with exit status 0, for
// groups too, and xbo help CMD is CMD -h.
func TestHelpOnRequest(t *testing.T) {
	for _, args := range [][]string{{"explain", "-h"}, {"explain", "help"}, {"help", "explain"}, {"study", "--help"}} {
		code, stdout, stderr := runCLI(t, args...)
		if code != 0 || stderr != "" || !strings.Contains(stdout, "Commands:") || !strings.Contains(stdout, args[len(args)-1]+" ") && !strings.Contains(stdout, args[0]+" ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	if _, stdout, _ := runCLI(t, "study", "-h"); !strings.Contains(stdout, "Usage:\n  xbo study <command> [flags]   (xbo study <command> -h for its flags)\n") {
		t.Errorf("xbo study -h: %q", stdout)
	}
	_, want, _ := runCLI(t, "explain", "pdp", "-h")
	code, got, _ := runCLI(t, "help", "explain", "pdp")
	if code != 0 || got != want || !strings.HasPrefix(got, "Usage:\n  xbo explain pdp") {
		t.Errorf("xbo help explain pdp: exit %d, %q; want %q", code, got, want)
	}
}

// helpCalls are the command lines that print every command's and every
// benchmark's help.
func helpCalls() [][]string {
	calls := [][]string{{"help"}, {"bench", "help"}, {"explain", "-h"}, {"study", "-h"}}
	for name := range commands {
		calls = append(calls, append(strings.Fields(name), "-h"))
	}
	for name := range benchmarks {
		calls = append(calls, []string{"bench", name, "-h"})
	}
	return calls
}

// Every command's help has one style: "Usage:" and the command, then its
// flags with two dashes and each default said once; never the flag
// package's "Usage of ...".
func TestOneHelpStyle(t *testing.T) {
	for _, args := range helpCalls() {
		code, stdout, stderr := runCLI(t, args...)
		name := strings.Join(args[:len(args)-1], " ")
		if code != 0 || stderr != "" {
			t.Errorf("xbo %s: exit %d, stderr %q", strings.Join(args, " "), code, stderr)
		}
		if strings.Contains(stdout, "Usage of") {
			t.Errorf("xbo %s prints the flag package's usage: %q", strings.Join(args, " "), stdout)
		}
		if args[len(args)-1] != "-h" || name == "explain" || name == "study" {
			continue
		}
		if !strings.HasPrefix(stdout, "Usage:\n  xbo "+name) {
			t.Errorf("xbo %s -h starts %.60q", name, stdout)
		}
		for _, line := range strings.Split(stdout, "\n") {
			if len(defaultSaid.FindAllString(line, -1)) > 1 {
				t.Errorf("xbo %s -h says a default twice: %q", name, line)
			}
			if strings.HasPrefix(line, "  -") && !strings.HasPrefix(line, "  --") && len(strings.Fields(line)[0]) > 2 {
				t.Errorf("xbo %s -h shows a flag with one dash: %q", name, line)
			}
		}
	}
}

// defaultSaid opens a parenthesis that states a default: "(default 1)",
// "(default: chosen at random)", "(the default)".
var defaultSaid = regexp.MustCompile(`\((the )?default\b`)

// The seed's help says its default in words, once.
func TestSeedDefaultSaidOnce(t *testing.T) {
	_, stdout, _ := runCLI(t, "study", "create", "-h")
	want := "  --seed int\n        random seed (default: chosen at random and stored)\n"
	if !strings.Contains(stdout, want) {
		t.Errorf("xbo study create -h: want %q in %q", want, stdout)
	}
}

// xbo run -h counts --trials as docs/run.md does.
func TestRunHelpCountsTrialsAsTheReadme(t *testing.T) {
	_, stdout, _ := runCLI(t, "run", "-h")
	if !strings.Contains(stdout, "finished trials (complete, pruned or failed; interrupted ones do not count)") ||
		strings.Contains(stdout, "complete or failed") {
		t.Errorf("xbo run -h: %q", stdout)
	}
}

func TestSuggest(t *testing.T) {
	cands := []string{"trials", "trial-timeout", "workers", "worker", "name", "db"}
	for word, want := range map[string]string{
		"trails":  "trials",  // swapped letters
		"trial":   "trials",  // a prefix of two, one edit from one
		"wokers":  "workers", // a letter missing
		"nmae":    "name",
		"d":       "db", // the one candidate with that prefix
		"zzzzzz":  "",
		"trialss": "trials",
	} {
		if got := suggest(word, cands); got != want {
			t.Errorf("suggest(%q) = %q, want %q", word, got, want)
		}
	}
}
