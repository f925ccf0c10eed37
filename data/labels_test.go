package data

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLabelKind: meta.json's labels key, absent in every file written so
// far, derives binary or classes from classes; values is read with its
// grid (value_max B > 0, a whole number of value_step); an unknown kind or
// one that contradicts classes or its grid is refused naming the key;
// binary meta.json stays as it was.
func TestLabelKind(t *testing.T) {
	for _, tc := range []struct {
		name string
		json string
		want LabelKind
		bad  string // "": read
	}{
		{"binary, no key", `{"source":"synth","train_rows":1,"test_rows":1,"features":[],"dims":0,"dropped_rows":0,"seed":0,"tool":"x"}`, LabelsBinary, ""},
		{"classes, no key", `{"source":"synth","classes":10,"train_rows":1,"test_rows":1,"features":[],"dims":0,"dropped_rows":0,"seed":0,"tool":"x"}`, LabelsClasses, ""},
		{"values", `{"source":"libsvm","labels":"values","value_max":400,"value_step":1,"train_rows":1,"test_rows":1,"features":[],"dims":0,"dropped_rows":0,"seed":0,"tool":"x"}`, LabelsValues, ""},
		{"explicit binary", `{"source":"synth","labels":"binary","train_rows":1,"test_rows":1,"features":[],"dims":0,"dropped_rows":0,"seed":0,"tool":"x"}`, LabelsBinary, ""},
		{"unknown kind", `{"source":"synth","labels":"ranks","train_rows":1,"test_rows":1,"features":[],"dims":0,"dropped_rows":0,"seed":0,"tool":"x"}`, "", `labels "ranks" is not a label kind`},
		{"classes without classes", `{"source":"synth","labels":"classes","train_rows":1,"test_rows":1,"features":[],"dims":0,"dropped_rows":0,"seed":0,"tool":"x"}`, "", `labels "classes" with classes 0`},
		{"values without B", `{"source":"synth","labels":"values","value_step":1,"train_rows":1,"test_rows":1,"features":[],"dims":0,"dropped_rows":0,"seed":0,"tool":"x"}`, "", `value_max (B) must be finite and > 0, got 0`},
		{"values B ≤ 0", `{"source":"synth","labels":"values","value_max":-5,"value_step":1,"train_rows":1,"test_rows":1,"features":[],"dims":0,"dropped_rows":0,"seed":0,"tool":"x"}`, "", `value_max (B) must be finite and > 0, got -5`},
		{"values step off B", `{"source":"synth","labels":"values","value_max":10,"value_step":3,"train_rows":1,"test_rows":1,"features":[],"dims":0,"dropped_rows":0,"seed":0,"tool":"x"}`, "", `value_max 10 is not a whole number of value_step 3`},
		{"B on classes", `{"source":"synth","value_max":10,"value_step":1,"train_rows":1,"test_rows":1,"features":[],"dims":0,"dropped_rows":0,"seed":0,"tool":"x"}`, "", `value_max and value_step are for labels "values"`},
		{"values with classes", `{"source":"synth","labels":"values","classes":3,"train_rows":1,"test_rows":1,"features":[],"dims":0,"dropped_rows":0,"seed":0,"tool":"x"}`, "", `labels "values" with classes 3`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, MetaFile), []byte(tc.json), 0o644); err != nil {
				t.Fatal(err)
			}
			m, err := ReadMeta(dir)
			if tc.bad != "" {
				if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.bad) || !strings.Contains(err.Error(), MetaFile) {
					t.Fatalf("ReadMeta: %v, want an error naming %q and the file", err, tc.bad)
				}
				return
			}
			if err != nil || m.LabelKind() != tc.want {
				t.Fatalf("ReadMeta: %v, %v; want kind %s", m, err, tc.want)
			}
		})
	}
	// A binary dataset's meta.json carries no labels key.
	dir := t.TempDir()
	if err := WriteMeta(dir, &Meta{Source: "synth"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, MetaFile))
	if err != nil || strings.Contains(string(b), `"labels"`) {
		t.Fatalf("binary meta.json: %s, %v", b, err)
	}
}
