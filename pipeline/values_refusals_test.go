package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/pets"
)

// Bad input around conversion values is refused by train run's open with
// one line naming the key (or the file), before a byte of output is
// written: a kind of classes on values and a kind of values on classes, a
// grid with B ≤ 0, τ < 0, a public prior that does not cover the grid or
// that the dataset lacks, and an attacker's prior values cannot take.
// (Values that are negative or NaN are refused at import naming
// file:line: data's TestImportValues; the pipeline's import below.)
func TestValueRefusals(t *testing.T) {
	root := t.TempDir()
	synth := func(name string, o data.SynthOptions) string {
		dir := filepath.Join(root, name)
		o.Out, o.Rows, o.TestRows, o.Features, o.Seed = dir, 400, 200, 3, 1
		if _, err := data.Synth(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	values := synth("values", data.SynthOptions{Kind: data.SynthValues})
	classes := synth("classes", data.SynthOptions{Kind: data.SynthLogistic})
	// An imported dataset of values: no synthetic law, no population prior.
	var csv strings.Builder
	csv.WriteString("a,value\n")
	for i := range 300 {
		csv.WriteString(strings.Repeat("1", 1+i%3) + "," + []string{"0", "12", "0", "250"}[i%4] + "\n")
	}
	in := filepath.Join(root, "v.csv")
	if err := os.WriteFile(in, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	imported := filepath.Join(root, "imported")
	if _, err := data.ImportCSV(context.Background(), data.ImportOptions{In: in, Out: imported, TestRows: 100, LabelColumn: "value",
		Values: data.ValueGrid{Max: 400, Step: 1}}); err != nil {
		t.Fatal(err)
	}
	eps := []float64{1}
	laplace := config.PetConfig{Mechanism: pets.LaplaceValue, Epsilon: eps}
	tau := -1.0
	for _, tc := range []struct {
		name string
		edit func(c *config.Config)
		want string // in the one line of the error
	}{
		{"a kind of classes on values", func(c *config.Config) {
			c.Data.Path = values
			c.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: pets.RR, Epsilon: eps}}
		}, "pets[1]"},
		{"a kind of values on classes", func(c *config.Config) {
			c.Data.Path = classes
			c.Pets = []config.PetConfig{{Mechanism: pets.None}, laplace}
		}, "pets[1]"},
		{"synthetic B ≤ 0", func(c *config.Config) {
			c.Data.Synth.Kind, c.Data.Synth.ValueMax = data.SynthValues, -400
			c.Pets = []config.PetConfig{laplace}
		}, "data.synth.value_max"},
		{"a grid on a class synth", func(c *config.Config) {
			c.Data.Synth.ValueMax = 400
		}, "data.synth.value_max"},
		{"τ < 0", func(c *config.Config) {
			c.Data.Path, c.Audit.Tau = values, &tau
			c.Pets = []config.PetConfig{laplace}
		}, "audit.tau"},
		{"a prior that does not cover the grid", func(c *config.Config) {
			c.Data.Path = values
			c.Pets = []config.PetConfig{laplace, {Mechanism: pets.RRBins, Epsilon: eps, PriorWeights: []float64{1, 2, 3}}}
		}, "pets[1].prior_weights"},
		{"a population prior the dataset lacks", func(c *config.Config) {
			c.Data.Path = imported
			c.Audit.Eta = config.EtaCleanModel
			c.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: pets.RRBins, Epsilon: eps, Prior: config.PriorPopulation}}
		}, "pets[1].prior"},
		{"no private prior on laplace", func(c *config.Config) {
			c.Data.Path = values
			e1 := 0.1
			c.Pets = []config.PetConfig{{Mechanism: pets.LaplaceValue, Epsilon: eps, PriorEpsilon: &e1}}
		}, "pets[0].prior_epsilon"},
		{"ε₁ not below ε", func(c *config.Config) {
			c.Data.Path = values
			e1 := 1.0
			c.Pets = []config.PetConfig{{Mechanism: pets.RRBins, Epsilon: eps, PriorEpsilon: &e1}}
		}, "pets[0].prior_epsilon"},
		{"knn on values", func(c *config.Config) {
			c.Data.Path, c.Audit.Eta = values, config.EtaKNN
			c.Pets = []config.PetConfig{laplace}
		}, "audit.eta"},
		{"the true law of an import", func(c *config.Config) {
			c.Data.Path, c.Audit.Eta = imported, config.EtaTrue
			c.Pets = []config.PetConfig{laplace}
		}, "audit.eta"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testConfig(filepath.Join(t.TempDir(), "out"))
			c.Audit.Eta = config.EtaTrue
			tc.edit(c)
			_, err := open(context.Background(), c, nil, openOptions{access: Exclusive, audit: true})
			if err == nil {
				t.Fatalf("open: no error, want one naming %s", tc.want)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Fatalf("open: %q, want one line naming %s", msg, tc.want)
			}
			if _, err := os.Stat(c.Output); !os.IsNotExist(err) {
				t.Fatalf("the refused open left its output folder: %v", err)
			}
		})
	}
	// Negative and NaN values: the import through the pipeline names
	// file:line and leaves no dataset.
	for _, tc := range []struct{ name, label, line string }{{"negative", "-3", ":3"}, {"NaN", "NaN", ":3"}} {
		t.Run("import "+tc.name, func(t *testing.T) {
			in := filepath.Join(t.TempDir(), "bad.csv")
			if err := os.WriteFile(in, []byte("a,value\n1,0\n2,"+tc.label+"\n3,4\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			o := NewDatasetOptions("csv")
			o.Import.In, o.Import.Out, o.Import.LabelColumn, o.Import.TestRows = in, filepath.Join(t.TempDir(), "ds"), "value", 1
			o.Import.Values = data.ValueGrid{Max: 400, Step: 1}
			_, err := MakeDataset(context.Background(), o, nil)
			if err == nil || !strings.Contains(err.Error(), in+tc.line) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("import: %v, want one line naming %s%s", err, in, tc.line)
			}
			if _, err := os.Stat(o.Import.Out); !os.IsNotExist(err) {
				t.Fatalf("the refused import left %s behind", o.Import.Out)
			}
		})
	}
}
