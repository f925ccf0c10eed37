package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/internal/flock"
	"labelprivacy/llp"
	"labelprivacy/model"
	"labelprivacy/pets"
)

// outputListing is every path under dir (relative, "/"-separated) with its
// content's digest ("dir" for a folder); nil when dir does not exist.
func outputListing(t *testing.T, dir string) map[string]string {
	t.Helper()
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			got[filepath.ToSlash(rel)] = "dir"
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		h := sha256.Sum256(b)
		got[filepath.ToSlash(rel)] = hex.EncodeToString(h[:8])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// diffListings names what differs between two listings ("" for none).
func diffListings(before, after map[string]string) string {
	if before == nil && after != nil {
		return "the output folder was created"
	}
	if before != nil && after == nil {
		return "the output folder was removed"
	}
	var d []string
	for p, h := range after {
		if b, ok := before[p]; !ok {
			d = append(d, "added "+p)
		} else if b != h {
			d = append(d, "changed "+p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			d = append(d, "removed "+p)
		}
	}
	return strings.Join(d, ", ")
}

// nanDataset writes a dataset directory whose first training row has a
// NaN feature (loads; data.standardize cannot fit it), with meta.json's
// digests matching its files.
func nanDataset(t *testing.T, dir string) {
	t.Helper()
	if _, err := data.Synth(context.Background(), data.SynthOptions{Kind: data.SynthLogistic, Rows: 300, TestRows: 100, Features: 3, Seed: 1, Out: dir}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, data.TrainFile)
	md, err := data.ReadMetadata(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := data.ReadFrame(path)
	if err != nil {
		t.Fatal(err)
	}
	f.X[0] = float32(math.NaN())
	if err := data.WriteFrame(path, f, md); err != nil {
		t.Fatal(err)
	}
	m, err := data.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.TrainSHA256, err = data.FileSHA256(path); err != nil {
		t.Fatal(err)
	}
	if err := data.WriteMeta(dir, m); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, ".identity-cache.json"))
}

// Every refusal of train run, fit, audit and sweep at open leaves the
// output folder as it was: a fresh output (and its missing parent) is not
// created, and an output of an earlier run (its lock file and holders
// folder, a synthetic dataset of another config, its resolved config, a
// file of the user's) gains, loses and changes nothing, whether the
// refusal needs only the config or the dataset's rows. Each error names
// its key (or file) as before.
func TestRefusalsLeaveTheOutputAsItWas(t *testing.T) {
	tmp := t.TempDir()
	noKeys := filepath.Join(tmp, "nokeys")
	if _, err := data.Synth(context.Background(), data.SynthOptions{Kind: data.SynthLogistic, Rows: 300, TestRows: 100, Features: 3, Seed: 1, Out: noKeys}); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(tmp, "broken")
	if _, err := data.Synth(context.Background(), data.SynthOptions{Kind: data.SynthLogistic, Rows: 300, TestRows: 100, Features: 3, Seed: 1, Out: broken}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(broken, data.TestFile)); err != nil {
		t.Fatal(err)
	}
	withNaN := filepath.Join(tmp, "nan")
	nanDataset(t, withNaN)

	type cmd struct {
		name string
		run  func(*config.Config) error
	}
	cmds := []cmd{
		{"run", func(c *config.Config) error { return Run(context.Background(), c, nil, StageAll) }},
		{"fit", func(c *config.Config) error { return Run(context.Background(), c, nil, StageFit) }},
		{"audit", func(c *config.Config) error { return Run(context.Background(), c, nil, StageAudit) }},
		{"sweep", func(c *config.Config) error { return Sweep(context.Background(), c, allShards, nil) }},
	}
	fieldKey := func(key string) func(error) bool {
		return func(err error) bool {
			var fe *config.FieldError
			return errors.As(err, &fe) && fe.Key == key
		}
	}
	for _, tc := range []struct {
		name string
		edit func(c *config.Config)
		// want: the error is the refusal expected; says: its message
		// says these (the data folder named as "<data>").
		want func(error) bool
		says []string
		skip string // a command that does not refuse it
		hold bool   // another holder keeps the output locked
	}{
		{name: "key groups smaller than k", edit: func(c *config.Config) {
			c.Data.Synth.Groups = 40
			c.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: pets.LLP, K: []int{16}, Bags: []llp.Rule{{}, rule(t, "key:group")}}}
		}, want: fieldKey("pets[1].bags[1]"), says: []string{"key:group", "k = 16", "<data>"}},
		{name: "bag column missing from the dataset", edit: func(c *config.Config) {
			c.Data.Path = noKeys
			c.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: pets.LLP, K: []int{4}, Bags: []llp.Rule{{Kind: llp.RuleKey, Column: "campaign"}}}}
		}, want: fieldKey("pets[1].bags[0]"), says: []string{`"campaign"`, noKeys}},
		{name: "test set without two rows of each class", edit: func(c *config.Config) {
			c.Data.Synth.TestRows = 1
		}, want: func(err error) bool { return errors.Is(err, ErrDegenerate) }, says: []string{"the test set of <data>", "at least 2 of each"}},
		{name: "kdd_embed on dense data", edit: func(c *config.Config) {
			c.Model.Kind = model.KindKDDEmbed
		}, want: func(err error) bool { return strings.HasPrefix(err.Error(), "model.kind: kdd_embed needs") }, skip: "audit"},
		{name: "binary-only mechanism on 3 classes", edit: func(c *config.Config) {
			c.Data.Synth.Kind, c.Data.Synth.Classes = data.SynthMulticlass, 3
			c.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: binaryOnlyKind(t), Epsilon: []float64{1}}}
		}, want: func(err error) bool { return errors.Is(err, config.ErrConfig) }, says: []string{"pets[1]", "classes"}},
		{name: "easyllp on 3 classes", edit: func(c *config.Config) {
			c.Data.Synth.Kind, c.Data.Synth.Classes = data.SynthMulticlass, 3
			c.Train.LLPLoss = model.LossEasyLLP
			c.Pets = []config.PetConfig{{Mechanism: pets.LLP, K: []int{4}}}
		}, want: fieldKey("train.llp_loss")},
		{name: "bag larger than the training rows", edit: func(c *config.Config) {
			c.Data.Synth.Rows = 6
			c.Pets = []config.PetConfig{{Mechanism: pets.LLP, K: []int{8}}}
		}, want: func(err error) bool { return errors.Is(err, errTooFewRows) }, says: []string{"llp_k8", "k = 8"}},
		{name: "data.path missing its test file", edit: func(c *config.Config) {
			c.Data.Path = broken
		}, want: func(err error) bool { return errors.Is(err, fs.ErrNotExist) }, says: []string{filepath.Join(broken, data.TestFile)}},
		{name: "data.standardize on a NaN feature", edit: func(c *config.Config) {
			c.Data.Path, c.Data.Standardize = withNaN, true
		}, want: func(err error) bool { return strings.HasPrefix(err.Error(), "data.standardize: ") }, says: []string{`"x0"`}},
		{name: "grid over a million runs", edit: func(c *config.Config) {
			c.Train.Trials = config.MaxRuns
		}, want: fieldKey("train.trials")},
		{name: "repeated setting", edit: func(c *config.Config) {
			c.Pets = []config.PetConfig{{Mechanism: pets.LLP, K: []int{4, 4}}}
		}, want: fieldKey("pets[0].k[1]")},
		{name: "model beyond the memory", edit: func(c *config.Config) {
			c.Model.Hidden = []int{1_000_000_000, 1_000_000_000}
		}, want: func(err error) bool { return strings.HasPrefix(err.Error(), "model.hidden") }},
		{name: "output in use", hold: true, edit: func(c *config.Config) {},
			want: func(err error) bool { return errors.Is(err, flock.ErrHeld) }, says: []string{"is in use"}},
	} {
		for _, c := range cmds {
			if c.name == tc.skip {
				continue
			}
			for _, fresh := range []bool{true, false} {
				if fresh && tc.hold {
					continue // a held output exists
				}
				name := tc.name + "/" + c.name + "/existing output"
				if fresh {
					name = tc.name + "/" + c.name + "/fresh output"
				}
				t.Run(name, func(t *testing.T) {
					root := t.TempDir()
					out := filepath.Join(root, "new", "out")
					if !fresh {
						// An earlier run's output: its lock and holders
						// folder, a dataset of another seed, its resolved
						// config; and a file of the user's.
						earlier := testConfig(out)
						earlier.Data.Synth.Rows, earlier.Data.Synth.TestRows = 300, 100
						earlier.Seed = 6
						s, err := Open(context.Background(), earlier, Exclusive, nil)
						if err != nil {
							t.Fatal(err)
						}
						s.Close()
						if err := os.WriteFile(filepath.Join(out, "earlier.txt"), []byte("x"), 0o644); err != nil {
							t.Fatal(err)
						}
					}
					if tc.hold {
						l, err := flock.Acquire(filepath.Join(out, ".lock"), flock.Exclusive, false, "another")
						if err != nil {
							t.Fatal(err)
						}
						defer l.Release()
					}
					parent := outputListing(t, filepath.Dir(out))
					before := outputListing(t, out)
					cfg := testConfig(out)
					cfg.Data.Synth.Rows, cfg.Data.Synth.TestRows = 300, 100
					cfg.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: pets.LLP, K: []int{4}}}
					tc.edit(cfg)
					err := c.run(cfg)
					if err == nil || !tc.want(err) {
						t.Fatalf("err = %v", err)
					}
					for _, w := range tc.says {
						w = strings.ReplaceAll(w, "<data>", filepath.Join(out, "data"))
						if !strings.Contains(err.Error(), w) {
							t.Errorf("error %q does not say %q", err, w)
						}
					}
					if d := diffListings(before, outputListing(t, out)); d != "" {
						t.Errorf("the refusal (%v) changed the output: %s", err, d)
					}
					if d := diffListings(parent, outputListing(t, filepath.Dir(out))); fresh && d != "" {
						t.Errorf("the refusal (%v) left the output's parent changed: %s", err, d)
					}
				})
			}
		}
	}
}
