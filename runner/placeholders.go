package runner

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"xbo/space"
)

// PlaceholderError says that a command's {word} names no parameter of the
// study: most often a typo or a parameter of another space, which would
// otherwise reach the command as the literal text "{x3}" and fail (or,
// worse, run) every trial with it.
type PlaceholderError struct {
	Unknown []string // the words, in the order they appear, each once
	Known   []string // the study's parameter names, in space order
}

func (e *PlaceholderError) Error() string {
	verb := "names no parameter"
	if len(e.Unknown) > 1 {
		verb = "name no parameter"
	}
	return fmt.Sprintf("runner: %s in the command %s of the study (its parameters: %s)",
		e.Braced(), verb, strings.Join(e.Known, ", "))
}

// Braced writes the unknown words as the command had them: "{x3}, {y}".
func (e *PlaceholderError) Braced() string {
	braced := make([]string, len(e.Unknown))
	for i, w := range e.Unknown {
		braced[i] = "{" + w + "}"
	}
	return strings.Join(braced, ", ")
}

// placeholderWord is what a {word} must look like to be taken for a
// placeholder when it names no parameter: braces around anything else
// (JSON, awk programs, "{}" of find) are the command's own.
var placeholderWord = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)

// CheckPlaceholders returns a *PlaceholderError when an argument of
// command holds a {word} that looks like a placeholder but names no
// parameter of sp. ${word} is a shell variable, not a placeholder, and is
// not checked. Run makes this check unless Config.LiteralBraces is set.
func CheckPlaceholders(command []string, sp *space.Space) error {
	if sp == nil {
		return errors.New("runner: check placeholders: no space")
	}
	known := make(map[string]bool, sp.Dim())
	for _, p := range sp.Params {
		known[p.Name] = true
	}
	var unknown []string
	seen := map[string]bool{}
	for _, arg := range command {
		eachPlaceholder(arg, func(name string, dollar bool) (string, bool) {
			if !known[name] && !dollar && !seen[name] && placeholderWord.MatchString(name) {
				seen[name] = true
				unknown = append(unknown, name)
			}
			return "", false
		})
	}
	if len(unknown) > 0 {
		return &PlaceholderError{Unknown: unknown, Known: sp.Names()}
	}
	return nil
}

// eachPlaceholder rewrites arg: every {name} for which replace answers true
// becomes the text it returns, other braces stay as they are. dollar says
// the brace follows a "$". Substitution and CheckPlaceholders both read
// arguments through it, so they agree on what a placeholder is.
func eachPlaceholder(arg string, replace func(name string, dollar bool) (string, bool)) string {
	if !strings.Contains(arg, "{") {
		return arg
	}
	var b strings.Builder
	for {
		open := strings.IndexByte(arg, '{')
		if open < 0 {
			break
		}
		end := strings.IndexByte(arg[open+1:], '}')
		if end < 0 {
			break
		}
		name := arg[open+1 : open+1+end]
		v, ok := replace(name, open > 0 && arg[open-1] == '$')
		if !ok {
			b.WriteString(arg[:open+1])
			arg = arg[open+1:]
			continue
		}
		b.WriteString(arg[:open])
		b.WriteString(v)
		arg = arg[open+1+end+1:]
	}
	b.WriteString(arg)
	return b.String()
}
