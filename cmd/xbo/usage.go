package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
)

// parseFlags parses a subcommand's flags, turning flag errors into usage
// errors (one line, with a suggestion for a mistyped flag) and refusing
// stray positional arguments. Every command's -h goes through writeUsage,
// so all of them print help in one style.
func parseFlags(fs *flag.FlagSet, args []string, env *cliEnv) error {
	if env.flagSets != nil {
		// The completion script asks for the command's flags, not a run.
		env.flagSets(fs)
		return flag.ErrHelp
	}
	// The flag package would print its own usage on every error, in its own
	// style: errors become one line here instead, and -h prints writeUsage.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			writeUsage(env.stdout, fs)
			return err
		}
		return usageError{flagError(fs, err)}
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q (xbo %s -h shows what it takes)", fs.Arg(0), fs.Name())
	}
	return nil
}

// dashed writes a flag as the help and docs/cli.md do: --name, or -o for a
// one-letter flag.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// flagErrorForms are the flag package's error messages that name a flag
// (Go's flag.FlagSet.failf), with the flag's name as the last group.
var (
	undefinedFlag = regexp.MustCompile(`^flag provided but not defined: -(.*)$`)
	namedFlag     = regexp.MustCompile(`^(flag needs an argument: |invalid value (?:".*") for flag |invalid boolean value (?:".*") for )-([^:]*)`)
)

// flagError rewrites a flag package error in xbo's words: an unknown flag
// is named with the flag it most likely meant, other errors name the flag
// with the dashes the help shows.
func flagError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	if m := undefinedFlag.FindStringSubmatch(msg); m != nil {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		typed := strings.TrimLeft(m[1], "-")
		if s := suggest(typed, names); s != "" {
			return fmt.Errorf("unknown flag %s; did you mean %s?", dashed(typed), dashed(s))
		}
		return fmt.Errorf("unknown flag %s (xbo %s -h lists the flags)", dashed(typed), fs.Name())
	}
	if m := namedFlag.FindStringSubmatchIndex(msg); m != nil {
		start, end := m[4], m[5]
		return errors.New(msg[:start-1] + dashed(msg[start:end]) + msg[end:])
	}
	return err
}

// writeUsage prints a command's help: its synopsis, what it does, and its
// flags, each with its default once (unless its description already says
// what the default is).
func writeUsage(w io.Writer, fs *flag.FlagSet) {
	name := fs.Name()
	synopsis, about := "xbo "+name+" [flags]", ""
	if c, ok := commands[name]; ok {
		if c.synopsis != "" {
			synopsis = c.synopsis
		}
		about = c.summary
		if c.about != "" {
			about = c.about
		}
	} else if b, ok := benchmarks[strings.TrimPrefix(name, "bench ")]; ok && strings.HasPrefix(name, "bench ") {
		about = b.summary
	}
	fmt.Fprintln(w, "Usage:")
	// A synopsis's continuation lines keep their own indentation.
	for _, line := range strings.Split(strings.Trim(synopsis, "\n"), "\n") {
		fmt.Fprintf(w, "  %s\n", strings.TrimRight(line, " "))
	}
	if about != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(about))
	}
	first := true
	fs.VisitAll(func(f *flag.Flag) {
		if first {
			fmt.Fprintln(w, "\nFlags:")
			first = false
		}
		fmt.Fprintln(w, flagHelp(f))
	})
}

// flagHelp is one flag's entry in writeUsage: "  --name TYPE" and its
// description on the next line.
func flagHelp(f *flag.Flag) string {
	kind, text := flag.UnquoteUsage(f)
	head := "  " + dashed(f.Name)
	if kind != "" {
		head += " " + kind
	}
	if !isZeroDefault(f.DefValue) && !strings.Contains(text, "(default") {
		def := f.DefValue
		if kind == "string" {
			def = fmt.Sprintf("%q", def)
		}
		text += " (default " + def + ")"
	}
	return head + "\n        " + strings.ReplaceAll(text, "\n", "\n        ")
}

// isZeroDefault reports whether a flag's default is its type's zero value,
// which says nothing worth printing.
func isZeroDefault(v string) bool {
	switch v {
	case "", "0", "false", "0s", "[]":
		return true
	}
	return false
}

// runGroup answers a command line whose first word names a group of
// commands (xbo explain, xbo study) but whose second word names none of
// them: the group's list for help, and otherwise one error line (with the
// command most likely meant) and exit status 2.
func runGroup(group string, args []string, env *cliEnv) int {
	var subs []string
	for n := range commands {
		if sub, ok := strings.CutPrefix(n, group+" "); ok {
			subs = append(subs, sub)
		}
	}
	sort.Strings(subs)
	switch {
	case len(args) > 0 && (args[0] == "help" || args[0] == "-h" || args[0] == "--help"):
		printHelp(env.stdout, group)
		return 0
	case len(args) == 0 || strings.HasPrefix(args[0], "-"):
		fmt.Fprintf(env.stderr, "xbo %s: which command? give one before the flags: %s\n", group, strings.Join(subs, ", "))
		return 2
	}
	if s := suggest(args[0], subs); s != "" {
		fmt.Fprintf(env.stderr, "xbo %s: unknown command %q; did you mean %q?\n", group, args[0], s)
	} else {
		fmt.Fprintf(env.stderr, "xbo %s: unknown command %q (one of %s)\n", group, args[0], strings.Join(subs, ", "))
	}
	return 2
}

// topLevelNames are the words xbo takes first: each command's or group's
// first word, and help.
func topLevelNames() []string {
	seen := map[string]bool{"help": true}
	for n := range commands {
		seen[strings.Fields(n)[0]] = true
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// isGroup reports whether word is the first word of two-word commands.
func isGroup(word string) bool {
	for n := range commands {
		if strings.HasPrefix(n, word+" ") {
			return true
		}
	}
	return false
}
