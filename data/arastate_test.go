package data

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// ara_event's release: the state column round-trips, label_rr may be C (a
// state that is no class) only beside it, and must be its projection.
func TestARAStateColumn(t *testing.T) {
	for _, c := range []int{2, 5} {
		classes := 0
		if c >= 3 {
			classes = c
		}
		states := []uint64{0, 1, uint64(c - 1), uint64(c), 2924, 1 << 40}
		f := &Frame{Rows: len(states), Classes: classes, Features: []string{"x0"}, X: make([]float32, len(states)), ARAState: states}
		for _, s := range states {
			f.LabelRR = append(f.LabelRR, uint8(min(s, uint64(c))))
		}
		if err := f.Validate(); err != nil {
			t.Fatalf("C=%d: %v", c, err)
		}
		p := filepath.Join(t.TempDir(), "r.arrow")
		if err := WriteFrame(p, f, nil); err != nil {
			t.Fatal(err)
		}
		back, err := ReadFrame(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := framesEqual(back, f); err != nil {
			t.Fatal(err)
		}
		bad := *f
		bad.LabelRR = append([]uint8(nil), f.LabelRR...)
		bad.LabelRR[4] = 0
		if err := bad.Validate(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "row 4 released state 2924") {
			t.Errorf("C=%d: a label_rr that is not the state's class: %v", c, err)
		}
		bad.LabelRR, bad.ARAState = f.LabelRR, nil
		if err := bad.Validate(); !errors.Is(err, ErrLabel) {
			t.Errorf("C=%d: label_rr = C without ara_state: %v", c, err)
		}
	}
}
