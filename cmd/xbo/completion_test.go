package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// helpFlags reads the flags a command's -h lists.
func helpFlags(t *testing.T, line string) []string {
	t.Helper()
	_, stdout, _ := runCLI(t, append(strings.Fields(line), "-h")...)
	var flags []string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "  -") {
			flags = append(flags, strings.Fields(l)[0])
		}
	}
	slices.Sort(flags)
	return flags
}

// The bash script lists every command, subcommand and benchmark, and for
// each command line exactly the flags its help lists.
func TestBashCompletionListsEveryCommand(t *testing.T) {
	code, script, stderr := runCLI(t, "completion", "bash")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	top := strings.Fields(strings.SplitN(strings.SplitN(script, "_xbo_top='", 2)[1], "'", 2)[0])
	lines := []string{}
	for name := range commands {
		if name != "bench" {
			lines = append(lines, name)
		}
	}
	for name := range benchmarks {
		lines = append(lines, "bench "+name)
	}
	for _, line := range lines {
		words := strings.Fields(line)
		if !slices.Contains(top, words[0]) {
			t.Errorf("%q is not among the first words %v", words[0], top)
		}
		if len(words) == 2 && !strings.Contains(script, "        "+words[0]+") echo '") {
			t.Errorf("the script has no list after %q", words[0])
		}
		if len(words) == 2 && !slices.Contains(strings.Fields(scriptCase(script, words[0]+")")), words[1]) {
			t.Errorf("the script does not offer %q after %q", words[1], words[0])
		}
		want := helpFlags(t, line)
		got := strings.Fields(scriptCase(script, "'"+line+"')"))
		if !slices.Equal(got, want) {
			t.Errorf("xbo %s: the script offers %v, its help lists %v", line, got, want)
		}
	}
}

// scriptCase returns the words a case branch of the script echoes.
func scriptCase(script, label string) string {
	i := strings.Index(script, "        "+label+" echo '")
	if i < 0 {
		return ""
	}
	rest := script[i+len("        "+label+" echo '"):]
	return rest[:strings.IndexByte(rest, '\'')]
}

// Loaded into bash, the script completes commands, subcommands and flags,
// and leaves the words after xbo run's -- to bash.
func TestBashCompletionCompletes(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("bash is needed for this test")
	}
	_, script, _ := runCLI(t, "completion", "bash")
	path := filepath.Join(t.TempDir(), "xbo.bash")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	for line, want := range map[string]string{
		"xbo expl":                           "explain",
		"xbo explain imp":                    "importance",
		"xbo study d":                        "delete",
		"xbo bench pdp-split --pre":          "--preset",
		"xbo run --tri":                      "--trial-timeout --trials",
		"xbo run --space s.json --lit":       "--literal-braces",
		"xbo run --trials 3 -- python3 --li": "",
		"xbo help stu":                       "study",
		"xbo completion z":                   "zsh",
		"xbo tell --sta":                     "--state",
		"xbo ask --study s --wor":            "--worker",
	} {
		words := strings.Fields(line)
		prog := "source " + path + "\nCOMP_WORDS=(" + strings.Join(words, " ") + ")\nCOMP_CWORD=" +
			strconv.Itoa(len(words)-1) + "\n_xbo\necho \"${COMPREPLY[*]}\"\n"
		out, err := exec.Command(bash, "--norc", "--noprofile", "-c", prog).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != want {
			t.Errorf("%q: completed %q (%v), want %q", line, out, err, want)
		}
	}
}

// The zsh script holds bash's table, is valid zsh and completes commands,
// subcommands and flags (zsh is not installed everywhere: the test needs it
// only from its third check on).
func TestZshCompletionCompletes(t *testing.T) {
	code, script, stderr := runCLI(t, "completion", "zsh")
	if code != 0 || !strings.HasPrefix(script, "#compdef xbo\n") || !strings.Contains(script, "compdef _xbo xbo") {
		t.Fatalf("exit %d, %s: %.80q", code, stderr, script)
	}
	bashScript := func() string { _, s, _ := runCLI(t, "completion", "bash"); return s }()
	for _, fn := range []string{"_xbo_next", "_xbo_flags", "_xbo_top"} {
		if !strings.Contains(script, fn) || scriptCase(script, "'run')") != scriptCase(bashScript, "'run')") {
			t.Errorf("the zsh script lacks %s or differs from bash's table", fn)
		}
	}
	zsh, err := exec.LookPath("zsh")
	if err != nil {
		t.Skip("zsh is not installed")
	}
	path := filepath.Join(t.TempDir(), "_xbo")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(zsh, "-n", path).CombinedOutput(); err != nil {
		t.Fatalf("zsh -n: %v: %s", err, out)
	}
	prog := "autoload -U compinit && compinit -u -D && source " + path + " && whence -w _xbo"
	out, err := exec.Command(zsh, "-f", "-c", prog).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "_xbo: function" {
		t.Fatalf("zsh: %v: %s", err, out)
	}
	// Outside a completion widget words, CURRENT and PREFIX are plain
	// variables, and compadd and _files can be stood in for: _xbo's walk
	// then runs as it would on a tab (compadd filters by PREFIX itself).
	harness := "compdef() { :; }\nsource " + path + `
compadd() { [[ $1 == -- ]] && shift; print -r -- "$*"; }
_files() { print FILES; }
words=("$@"); CURRENT=$#words; PREFIX=$words[-1]; _xbo`
	for line, want := range map[string]string{
		"xbo ''":                        strings.Join(topLevelNames(), " "),
		"xbo study ''":                  "create delete export list",
		"xbo explain pdp --p":           strings.Join(helpFlags(t, "explain pdp"), " "),
		"xbo completion ''":             "bash zsh",
		"xbo run --trials 3 -- python3": "FILES",
		"xbo run --space":               strings.Join(helpFlags(t, "run"), " "),
	} {
		args := append([]string{"-f", "-c", harness, "zsh"}, strings.Fields(strings.ReplaceAll(line, "''", "EMPTY"))...)
		for i := range args {
			if args[i] == "EMPTY" {
				args[i] = ""
			}
		}
		out, err := exec.Command(zsh, args...).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != want {
			t.Errorf("zsh, %s: %q (%v), want %q", line, out, err, want)
		}
	}
}

func TestCompletionMisuse(t *testing.T) {
	for args, want := range map[string]string{
		"completion":      "xbo completion: which shell? xbo completion bash|zsh\n",
		"completion bsah": "xbo completion: unknown shell \"bsah\"; did you mean \"bash\"?\n",
		"completion fish": "xbo completion: unknown shell \"fish\" (one of bash, zsh)\n",
	} {
		code, stdout, stderr := runCLI(t, strings.Fields(args)...)
		if code != 2 || stdout != "" || stderr != want {
			t.Errorf("xbo %s: exit %d, stdout %q, stderr %q; want %q", args, code, stdout, stderr, want)
		}
	}
}
