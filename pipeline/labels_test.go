package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labelprivacy/data"
)

// A dataset whose meta.json says its labels are conversion values is
// refused at open by the first stage a command runs, naming the stage and
// the kind, before a byte of output is written.
func TestLabelKindRefusedAtOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	if _, err := data.Synth(context.Background(), data.SynthOptions{Kind: data.SynthLogistic, Rows: 300, TestRows: 100, Features: 3, Seed: 1, Out: dir}); err != nil {
		t.Fatal(err)
	}
	m, err := data.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	m.Labels = data.LabelsValues
	if err := data.WriteMeta(dir, m); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		o     openOptions
		stage string
	}{
		{"fit", openOptions{access: Exclusive}, "train fit"},
		{"audit alone", openOptions{access: Exclusive, light: true, audit: true}, "train audit"},
		{"report alone", openOptions{access: Exclusive, light: true}, "train report"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testConfig(filepath.Join(t.TempDir(), "out"))
			c.Data.Path = dir
			_, err := open(context.Background(), c, nil, tc.o)
			if !errors.Is(err, data.ErrInvalid) || !strings.Contains(err.Error(), tc.stage+" does not serve") ||
				!strings.Contains(err.Error(), "conversion values") || !strings.Contains(err.Error(), dir) {
				t.Fatalf("open: %v, want a refusal by %s naming conversion values and %s", err, tc.stage, dir)
			}
			if _, err := os.Stat(c.Output); !os.IsNotExist(err) {
				t.Fatalf("the refused open left its output folder: %v", err)
			}
		})
	}
}
