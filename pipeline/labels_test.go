package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/pets"
)

// Every stage serves every label kind (binary, classes, values); a dataset
// whose meta.json says its labels are conversion values while its files
// hold classes is refused at open, naming the file and both, before a
// byte of output is written.
func TestLabelKindRefusedAtOpen(t *testing.T) {
	for _, k := range []data.LabelKind{data.LabelsBinary, data.LabelsClasses, data.LabelsValues} {
		if !servesLabels(k) {
			t.Errorf("the pipeline does not serve %s", k)
		}
	}
	dir := filepath.Join(t.TempDir(), "ds")
	if _, err := data.Synth(context.Background(), data.SynthOptions{Kind: data.SynthLogistic, Rows: 300, TestRows: 100, Features: 3, Seed: 1, Out: dir}); err != nil {
		t.Fatal(err)
	}
	m, err := data.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	m.Labels, m.ValueMax, m.ValueStep = data.LabelsValues, 400, 1
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
			c.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: pets.LaplaceValue, Epsilon: []float64{1}}} // kinds of values
			_, err := open(context.Background(), c, nil, tc.o)
			if !errors.Is(err, data.ErrMismatch) || !strings.Contains(err.Error(), "conversion values") ||
				!strings.Contains(err.Error(), "of classes") || !strings.Contains(err.Error(), dir) {
				t.Fatalf("open (%s): %v, want a refusal naming conversion values, classes and %s", tc.stage, err, dir)
			}
			if _, err := os.Stat(c.Output); !os.IsNotExist(err) {
				t.Fatalf("the refused open left its output folder: %v", err)
			}
		})
	}
}
