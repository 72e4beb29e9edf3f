package runner

import (
	"errors"
	"slices"
	"testing"

	"xbo/space"
)

// A {word} that names no parameter is refused with the words and the
// parameters; braces around anything else, ${shell variables} and known
// names pass.
func TestCheckPlaceholders(t *testing.T) {
	sp, err := space.Parse([]byte(`{"params":[{"name":"x1","type":"float","low":0,"high":1},{"name":"batch-size","type":"int","low":1,"high":8}]}`))
	if err != nil {
		t.Fatal(err)
	}
	ok := [][]string{
		{"echo", "{x1}", "--bs={batch-size}"},
		{"awk", "BEGIN { print 1 }"},
		{"sh", "-c", "echo ${HOME} ${x3} > log.${XBO_TRIAL}"},
		{"python3", "-c", `print({"a": 1})`},
		{"find", ".", "-exec", "echo", "{}", ";"},
	}
	for _, cmd := range ok {
		if err := CheckPlaceholders(cmd, sp); err != nil {
			t.Errorf("%q: %v", cmd, err)
		}
	}
	err = CheckPlaceholders([]string{"echo", "{x1}", "{x3}", "--lr={lr}", "{x3}"}, sp)
	var pe *PlaceholderError
	if !errors.As(err, &pe) || !slices.Equal(pe.Unknown, []string{"x3", "lr"}) || !slices.Equal(pe.Known, []string{"x1", "batch-size"}) {
		t.Fatalf("got %v", err)
	}
	if want := "runner: {x3}, {lr} in the command name no parameter of the study (its parameters: x1, batch-size)"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if err := CheckPlaceholders([]string{"echo"}, nil); err == nil {
		t.Error("no space accepted")
	}
}
