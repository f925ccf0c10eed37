package enum

import (
	"errors"
	"strings"
	"testing"
)

type color int

var colors = New("colour", errBad, []string{"red", "green"}, []color{1, 2})

var errBad = errors.New("bad")

// Names round-trip, parsing is case- and space-insensitive, and errors name
// the bad value, list the valid ones and wrap the package's sentinel.
func TestSet(t *testing.T) {
	for _, c := range []color{1, 2} {
		b, err := colors.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var got color
		if err := colors.Unmarshal(&got, []byte(" "+strings.ToUpper(string(b))+"\n")); err != nil || got != c {
			t.Fatalf("round trip of %d: %v, %v", c, got, err)
		}
	}
	if s := colors.String(7, "color"); s != "color(7)" {
		t.Fatalf("String of an unnamed value: %q", s)
	}
	got := color(1)
	err := colors.Unmarshal(&got, []byte("blue"))
	if !errors.Is(err, errBad) || !strings.Contains(err.Error(), `"blue"`) || !strings.Contains(err.Error(), "red, green") || got != 1 {
		t.Fatalf("Unmarshal(blue): %v (value %d)", err, got)
	}
	if _, err := colors.Marshal(7); !errors.Is(err, errBad) {
		t.Fatalf("Marshal(7): %v", err)
	}
}
