package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

func init() {
	register(command{name: "completion", summary: "print a shell completion script: xbo completion bash|zsh",
		synopsis: "xbo completion bash|zsh",
		about: `Prints a script that completes xbo's commands, subcommands, benchmarks
and flags, written from the commands' own flag definitions. Load it with
  source <(xbo completion bash)      in ~/.bashrc
  source <(xbo completion zsh)       in ~/.zshrc (after compinit)`,
		run: runCompletion})
}

// completionShells are the shells xbo writes completion scripts for.
var completionShells = []string{"bash", "zsh"}

func runCompletion(ctx context.Context, args []string, env *cliEnv) error {
	fs := flag.NewFlagSet("completion", flag.ContinueOnError)
	var shell string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		shell, args = args[0], args[1:]
	}
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	if shell == "" {
		return usagef("which shell? xbo completion bash|zsh")
	}
	table, err := completionTable(ctx)
	if err != nil {
		return err
	}
	switch shell {
	case "bash":
		return writeBashCompletion(env.stdout, table)
	case "zsh":
		return writeZshCompletion(env.stdout, table)
	}
	if s := suggest(shell, completionShells); s != "" {
		return usagef("unknown shell %q; did you mean %q?", shell, s)
	}
	return usagef("unknown shell %q (one of %s)", shell, strings.Join(completionShells, ", "))
}

// completions is what a completion script offers: the words xbo takes
// first, the words that may follow each of them (a group's commands,
// bench's benchmarks, completion's shells, help's commands), and the flags
// of every command line that takes flags ("run", "explain pdp", "bench
// peers").
type completions struct {
	top   []string
	next  map[string][]string
	flags map[string][]string
}

// completionTable collects the commands and, by running each with a flag
// sink instead of its arguments (cliEnv.flagSets), the flags each really
// defines: the script cannot drift from the commands.
func completionTable(ctx context.Context) (completions, error) {
	t := completions{top: topLevelNames(), next: map[string][]string{}, flags: map[string][]string{}}
	t.next["help"] = t.top
	t.next["completion"] = completionShells
	for name := range benchmarks {
		t.next["bench"] = append(t.next["bench"], name)
	}
	lines := map[string]func(context.Context, []string, *cliEnv) error{}
	for name, c := range commands {
		if group, sub, ok := strings.Cut(name, " "); ok {
			t.next[group] = append(t.next[group], sub)
		}
		if name != "bench" {
			lines[name] = c.run
		}
	}
	for name, b := range benchmarks {
		lines["bench "+name] = b.run
	}
	// The commands stop at their flag sets: nothing runs, nothing is read.
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	for line, run := range lines {
		var names []string
		env := &cliEnv{stdout: io.Discard, stderr: io.Discard, stdin: strings.NewReader(""),
			flagSets: func(fs *flag.FlagSet) {
				fs.VisitAll(func(f *flag.Flag) { names = append(names, dashed(f.Name)) })
			}}
		// Every command parses its flags before anything else, so each
		// must stop at the sink; one that does not would leave its flags
		// out of the script.
		if err := run(stopped, nil, env); !errors.Is(err, flag.ErrHelp) {
			return completions{}, fmt.Errorf("completion: xbo %s did not reach its flags: %v", line, err)
		}
		sort.Strings(names)
		t.flags[line] = names
	}
	for k := range t.next {
		sort.Strings(t.next[k])
	}
	return t, nil
}

// writeCompletionData writes the table as two shell functions that bash and
// zsh both read: _xbo_next WORD prints the words that may follow WORD,
// _xbo_flags "CMD [SUB]" prints a command line's flags.
func writeCompletionData(w io.Writer, t completions) {
	fmt.Fprintf(w, "_xbo_top='%s'\n\n", strings.Join(t.top, " "))
	fmt.Fprintln(w, "_xbo_next() {\n    case \"$1\" in")
	for _, k := range sortedKeys(t.next) {
		fmt.Fprintf(w, "        %s) echo '%s' ;;\n", k, strings.Join(t.next[k], " "))
	}
	fmt.Fprintln(w, "    esac\n}\n\n_xbo_flags() {\n    case \"$1\" in")
	for _, k := range sortedKeys(t.flags) {
		if len(t.flags[k]) > 0 {
			fmt.Fprintf(w, "        '%s') echo '%s' ;;\n", k, strings.Join(t.flags[k], " "))
		}
	}
	fmt.Fprintln(w, "    esac\n}")
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// bashCompletion completes the command words, then flags; after xbo
// run's "--" and for flag values it leaves bash's own file completion.
const bashCompletion = `
_xbo() {
    local cur=${COMP_WORDS[COMP_CWORD]} i key next
    COMPREPLY=()
    for ((i = 1; i < COMP_CWORD; i++)); do
        [[ ${COMP_WORDS[i]} == -- ]] && return
    done
    if ((COMP_CWORD == 1)); then
        COMPREPLY=($(compgen -W "$_xbo_top" -- "$cur"))
        return
    fi
    key=${COMP_WORDS[1]}
    next=$(_xbo_next "$key")
    if [[ -n $next && $key != help && $key != completion ]]; then
        if ((COMP_CWORD == 2)); then
            COMPREPLY=($(compgen -W "$next" -- "$cur"))
            return
        fi
        key="$key ${COMP_WORDS[2]}"
    elif [[ -n $next ]] && ((COMP_CWORD == 2)); then
        COMPREPLY=($(compgen -W "$next" -- "$cur"))
        return
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_xbo_flags "$key")" -- "$cur"))
    fi
}
complete -o default -F _xbo xbo
`

func writeBashCompletion(w io.Writer, t completions) error {
	fmt.Fprintln(w, "# bash completion for xbo, written by `xbo completion bash` from xbo's own commands and flags.")
	writeCompletionData(w, t)
	_, err := io.WriteString(w, bashCompletion)
	return err
}

// zshCompletion is the same walk with zsh's words (1-based, the command
// itself first) and compadd.
const zshCompletion = `
_xbo() {
    local key next
    if ((${words[(I)--]} > 0 && ${words[(I)--]} < CURRENT)); then
        _files
        return
    fi
    if ((CURRENT == 2)); then
        compadd -- ${=_xbo_top}
        return
    fi
    key=$words[2]
    next=$(_xbo_next "$key")
    if [[ -n $next && $key != help && $key != completion ]]; then
        if ((CURRENT == 3)); then
            compadd -- ${=next}
            return
        fi
        key="$key $words[3]"
    elif [[ -n $next ]] && ((CURRENT == 3)); then
        compadd -- ${=next}
        return
    fi
    if [[ $PREFIX == -* ]]; then
        compadd -- ${=$(_xbo_flags "$key")}
    else
        _files
    fi
}
compdef _xbo xbo
`

func writeZshCompletion(w io.Writer, t completions) error {
	fmt.Fprintln(w, "#compdef xbo")
	fmt.Fprintln(w, "# zsh completion for xbo, written by `xbo completion zsh` from xbo's own commands and flags.")
	writeCompletionData(w, t)
	_, err := io.WriteString(w, zshCompletion)
	return err
}
