package main

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"labelprivacy/data"
	"labelprivacy/pets"
)

func synthDataset(t *testing.T, rows int) *data.Dataset {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ds")
	if _, err := data.Synth(context.Background(), data.SynthOptions{Kind: data.SynthLogistic, Rows: rows, TestRows: 10, Features: 4, Seed: 5, Out: dir}); err != nil {
		t.Fatal(err)
	}
	ds, err := data.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func TestPrivatizeEveryMechanism(t *testing.T) {
	ds := synthDataset(t, 1003)
	tests := []struct {
		name    string
		s       petSetting
		columns []string // release columns besides the features
		rows    int
	}{
		{"bot", petSetting{Kind: pets.Bot}, nil, 1003},
		{"rr", petSetting{Kind: pets.RR, Epsilon: 1}, []string{"label_rr"}, 1003},
		{"llp", petSetting{Kind: pets.LLP, K: 8}, []string{"bag_id", "alpha"}, 1000},
		{"llp_lap", petSetting{Kind: pets.LLPLap, K: 8, Epsilon: 2}, []string{"bag_id", "alpha"}, 1000},
		{"llp_geom", petSetting{Kind: pets.LLPGeom, K: 8, Epsilon: 1}, []string{"bag_id", "alpha", "alpha_debiased"}, 1000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tc.s.mechanism(false)
			if err != nil {
				t.Fatal(err)
			}
			o := releaseOptions{Seed: 11}
			write := func(name string) []byte {
				rel, info, err := privatize(ds.Train, m, o)
				if err != nil {
					t.Fatal(err)
				}
				path := filepath.Join(t.TempDir(), name)
				if err := data.WriteFrame(path, rel, releaseMeta(m, o, info, "train.arrow")); err != nil {
					t.Fatal(err)
				}
				b, _ := os.ReadFile(path)
				return b
			}
			a, b := write("a.arrow"), write("b.arrow")
			if !bytes.Equal(a, b) {
				t.Fatal("same seed, different release bytes")
			}
			path := filepath.Join(t.TempDir(), "r.arrow")
			os.WriteFile(path, a, 0o644)
			got, err := data.ReadFrame(path)
			if err != nil {
				t.Fatal(err)
			}
			// Privacy hygiene: no raw label or eta column, by schema.
			if cols := got.RawLabelColumns(); len(cols) != 0 {
				t.Fatalf("privatized file carries raw columns %v", cols)
			}
			md, _ := data.ReadMetadata(path)
			for _, key := range []string{"mechanism", "seed", "label_dp_epsilon", "tool"} {
				if md[key] == "" {
					t.Fatalf("metadata lacks %q: %v", key, md)
				}
			}
			if md["mechanism"] != tc.s.Kind.String() || md["seed"] != "11" {
				t.Fatalf("metadata %v", md)
			}
			if got.Rows != tc.rows {
				t.Fatalf("%d rows, want %d", got.Rows, tc.rows)
			}
			var present []string
			for name, ok := range map[string]bool{"label_rr": got.LabelRR != nil, "bag_id": got.BagID != nil, "alpha": got.Alpha != nil, "alpha_debiased": got.AlphaDebiased != nil} {
				if ok {
					present = append(present, name)
				}
			}
			slices.Sort(present)
			want := slices.Clone(tc.columns)
			slices.Sort(want)
			if !slices.Equal(present, want) {
				t.Fatalf("release columns %v, want %v", present, want)
			}
		})
	}
}

// LLP releases exactly the bag mean of the raw labels (checked against the
// raw data by matching feature rows), with bags of k consecutive rows.
func TestPrivatizeLLPProportions(t *testing.T) {
	ds := synthDataset(t, 640)
	m, _ := petSetting{Kind: pets.LLP, K: 16}.mechanism(false)
	rel, info, err := privatize(ds.Train, m, releaseOptions{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if info.Bags != 40 || info.Dropped != 0 {
		t.Fatalf("info %+v", info)
	}
	label := map[[4]float32]uint8{}
	d := ds.Train.Dim()
	for i := range ds.Train.Rows {
		label[[4]float32(ds.Train.X[i*d:(i+1)*d])] = ds.Train.Label[i]
	}
	for b := range 40 {
		var sum int
		for r := b * 16; r < (b+1)*16; r++ {
			if rel.BagID[r] != int64(b) {
				t.Fatalf("row %d in bag %d, want %d", r, rel.BagID[r], b)
			}
			sum += int(label[[4]float32(rel.X[r*d:(r+1)*d])])
		}
		if want := float64(sum) / 16; rel.Alpha[b*16] != want {
			t.Fatalf("bag %d alpha %v, want %v", b, rel.Alpha[b*16], want)
		}
	}
}

func TestPrivatizeRejects(t *testing.T) {
	ds := synthDataset(t, 50)
	m, _ := petSetting{Kind: pets.None}.mechanism(false)
	if _, _, err := privatize(ds.Train, m, releaseOptions{}); !errors.Is(err, errNoRelease) {
		t.Fatalf("none: err = %v", err)
	}
	rr, _ := petSetting{Kind: pets.RR, Epsilon: 1}.mechanism(false)
	noLabels := &data.Frame{Rows: 1, Features: []string{"x"}, X: []float32{1}}
	if _, _, err := privatize(noLabels, rr, releaseOptions{}); err == nil || !strings.Contains(err.Error(), "label") {
		t.Fatalf("unlabelled input: err = %v", err)
	}
	// Secure noise runs (and is not reproducible by design).
	sec, err := petSetting{Kind: pets.LLPLap, K: 5, Epsilon: 1}.mechanism(true)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := privatize(ds.Train, sec, releaseOptions{Secure: true}); err != nil {
		t.Fatal(err)
	}
}

func TestCLIPrivatizeLedger(t *testing.T) {
	ds := synthDataset(t, 200)
	dir := t.TempDir()
	in := filepath.Join(ds.Dir, data.TrainFile)
	for i, seed := range []string{"1", "2"} {
		out, err := cli(t, nil, "privatize", "--in", in, "--pet", "rr", "--epsilon", "0.5", "--seed", seed, "--out", filepath.Join(dir, "rr"+seed+".arrow"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "privacy_ledger.csv") {
			t.Fatalf("output %q", out)
		}
		entries, err := pets.ReadLedger(filepath.Join(dir, pets.LedgerFile))
		if err != nil {
			t.Fatal(err)
		}
		e := entries[len(entries)-1]
		if len(entries) != i+1 || e.Releases != i+1 || math.Abs(e.EpsBasic-0.5*float64(i+1)) > 1e-12 || e.Rows != 200 {
			t.Fatalf("ledger after %d releases: %+v", i+1, entries)
		}
	}
	_, err := cli(t, nil, "privatize", "--in", in, "--pet", "rr", "--epsilon", "-1", "--out", filepath.Join(dir, "x.arrow"))
	if err == nil || !strings.Contains(err.Error(), "--epsilon") {
		t.Fatalf("err = %v, want it to name --epsilon", err)
	}
	_, err = cli(t, nil, "privatize", "--in", in, "--pet", "llp", "--out", filepath.Join(dir, "x.arrow"))
	if err == nil || !strings.Contains(err.Error(), "--k") {
		t.Fatalf("err = %v, want it to name --k", err)
	}
}
