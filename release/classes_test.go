package release

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/bits"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"labelprivacy/data"
	"labelprivacy/internal/testutil"
	"labelprivacy/pets"
)

// synthC is the training frame of a multiclass synthetic dataset of c classes.
func synthC(t testing.TB, rows, c int) *data.Frame {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ds")
	if _, err := data.Synth(context.Background(), data.SynthOptions{Kind: data.SynthMulticlass, Classes: c, Rows: rows, TestRows: 10,
		Features: 4, Seed: 7, Out: dir}); err != nil {
		t.Fatal(err)
	}
	ds, err := data.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ds.Train
}

// TestEveryMechanismClasses: on labels of C = 5 classes every mechanism
// ships its C-class columns (label_rr as the class; bag_id and alpha_1…4,
// alpha_debiased_1…4 for llp_geom) with classes = 5 in the metadata, and
// never a raw column (label, eta_0…4), a row number or the seed. llp's
// proportions are each bag's exact class shares; rr keeps a label with
// probability e^ε/(e^ε+C−1); llp_geom's debiased proportions are
// BagLaw's Target of the released ones.
func TestEveryMechanismClasses(t *testing.T) {
	const c = 5
	f := synthC(t, 2003, c)
	if f.NumClasses() != c || f.EtaC == nil {
		t.Fatalf("synthetic frame: %d classes, eta_c %v", f.NumClasses(), f.EtaC != nil)
	}
	alphas := func(prefix string) []string {
		var s []string
		for j := 1; j < c; j++ {
			s = append(s, prefix+strconv.Itoa(j))
		}
		return s
	}
	for _, tc := range []struct {
		name    string
		p       pets.Params
		columns []string
		rows    int
	}{
		{"bot", pets.Params{Kind: pets.Bot}, nil, 2003},
		{"rr", pets.Params{Kind: pets.RR, Epsilon: 1}, []string{"label_rr"}, 2003},
		{"llp", pets.Params{Kind: pets.LLP, K: 8}, append([]string{"bag_id"}, alphas("alpha_")...), 2000},
		{"llp_lap", pets.Params{Kind: pets.LLPLap, K: 8, Epsilon: 2, Secure: true}, append([]string{"bag_id"}, alphas("alpha_")...), 2000},
		{"llp_geom", pets.Params{Kind: pets.LLPGeom, K: 8, Epsilon: 2},
			append(append([]string{"bag_id"}, alphas("alpha_")...), alphas("alpha_debiased_")...), 2000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.p
			p.Classes = c
			m := testutil.MustNew(p)
			const seed = 7654321
			_, a := ship(t, f, m, Options{Noise: pets.NoiseSeeded, Seed: seed})
			path, b := ship(t, f, m, Options{Noise: pets.NoiseSeeded, Seed: seed})
			if !bytes.Equal(a, b) {
				t.Fatal("seeded: same seed, different release bytes")
			}
			got, err := data.ReadFrame(path)
			if err != nil {
				t.Fatal(err)
			}
			if cols := got.RawLabelColumns(); len(cols) != 0 || got.Row != nil || got.Label != nil || got.EtaC != nil {
				t.Fatalf("shipped file carries raw columns %v (row column: %v)", cols, got.Row != nil)
			}
			for k, v := range got.Meta {
				if strings.Contains(strings.ToLower(k), "seed") || strings.Contains(v, strconv.Itoa(seed)) {
					t.Fatalf("metadata %q=%q carries the seed", k, v)
				}
			}
			if got.Meta[data.MetaClasses] != "5" || got.NumClasses() != c || got.Rows != tc.rows {
				t.Fatalf("classes %q (%d), %d rows", got.Meta[data.MetaClasses], got.NumClasses(), got.Rows)
			}
			var present []string
			if got.LabelRR != nil {
				present = append(present, "label_rr")
			}
			if got.BagID != nil {
				present = append(present, "bag_id")
			}
			if got.AlphaC != nil {
				present = append(present, alphas("alpha_")...)
			}
			if got.AlphaDebiasedC != nil {
				present = append(present, alphas("alpha_debiased_")...)
			}
			if got.Alpha != nil || got.AlphaDebiased != nil || got.Prior != nil || got.Branch != nil {
				t.Fatal("a binary column in a 5-class release")
			}
			if !slices.Equal(present, tc.columns) {
				t.Fatalf("release columns %v, want %v", present, tc.columns)
			}
		})
	}

	// The laws, on the simulation layout (rows name their input row).
	sim := func(p pets.Params) *data.Frame {
		p.Classes = c
		rel, err := Apply(f.Label, testutil.MustNew(p), Options{Noise: pets.NoiseSimulation, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		return rel.Simulation()
	}
	llpSim := sim(pets.Params{Kind: pets.LLP, K: 8})
	counts := map[int64][]int{}
	for i, row := range llpSim.Row {
		if counts[llpSim.BagID[i]] == nil {
			counts[llpSim.BagID[i]] = make([]int, c)
		}
		counts[llpSim.BagID[i]][f.Label[row]]++
	}
	for i := range llpSim.Rows {
		n := counts[llpSim.BagID[i]]
		for j := 1; j < c; j++ {
			if got, want := llpSim.AlphaC[i*(c-1)+j-1], float64(n[j])/8; got != want {
				t.Fatalf("llp row %d class %d: α = %v, want %v", i, j, got, want)
			}
		}
	}
	rrSim := sim(pets.Params{Kind: pets.RR, Epsilon: 1})
	kept := 0
	for i, z := range rrSim.LabelRR {
		if z == f.Label[rrSim.Row[i]] {
			kept++
		}
	}
	q := math.E / (math.E + c - 1)
	// 6σ: a false failure about once in 10^9 runs.
	if se := math.Sqrt(q * (1 - q) / float64(f.Rows)); math.Abs(float64(kept)/float64(f.Rows)-q) > 6*se {
		t.Errorf("rr kept %.4f of the labels, want e/(e+4) = %.4f ± %.4f", float64(kept)/float64(f.Rows), q, 6*se)
	}
	geom := sim(pets.Params{Kind: pets.LLPGeom, K: 8, Epsilon: 2})
	law := testutil.MustNew(pets.Params{Kind: pets.LLPGeom, K: 8, Epsilon: 2, Classes: c}).BagLaw()
	deb := make([]float64, c-1)
	for i := range geom.Rows {
		law.Target(deb, geom.AlphaC[i*(c-1):(i+1)*(c-1)], 8)
		if !slices.Equal(deb, geom.AlphaDebiasedC[i*(c-1):(i+1)*(c-1)]) {
			t.Fatalf("llp_geom row %d: debiased %v, want %v", i, geom.AlphaDebiasedC[i*(c-1):(i+1)*(c-1)], deb)
		}
	}
}

// TestBinaryClassesUnchanged: a mechanism made with Classes 2 ships the
// bytes of the binary one (same seed), for every kind that ships.
func TestBinaryClassesUnchanged(t *testing.T) {
	f := synth(t, 503)
	for _, p := range []pets.Params{{Kind: pets.Bot}, {Kind: pets.RR, Epsilon: 1}, {Kind: pets.LLP, K: 4},
		{Kind: pets.LLPLap, K: 4, Epsilon: 1}, {Kind: pets.LLPGeom, K: 4, Epsilon: 1}} {
		o := Options{Noise: pets.NoiseSeeded, Seed: 11}
		_, a := ship(t, f, testutil.MustNew(p), o)
		p.Classes = 2
		_, b := ship(t, f, testutil.MustNew(p), o)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: Classes 2 ships other bytes than binary", p.Kind)
		}
	}
}

// TestRRPriorTwoStagesClasses: rr_prior on C = 4 classes releases stage 1
// by k-ary RR (the uniform prior: every class in the set), stage 2 through
// the set PriorSet picks from each row's prior (a released class is always
// in its row's set; a set of one releases its class), records the priors,
// sets and stages and no branch, and ships without raw columns;
// ApplyRRPrior is Finish's per-row law; bad priors are refused naming the
// row.
func TestRRPriorTwoStagesClasses(t *testing.T) {
	const c = 4
	f := synthC(t, 1000, c)
	m := testutil.MustNew(pets.Params{Kind: pets.RRPrior, Epsilon: 1, Classes: c})
	ts, err := StartRRPrior(f.Label, m, 0.3, Options{Noise: pets.NoiseSimulation, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	s1 := ts.Stage1()
	if s1.Rows != 300 || s1.NumClasses() != c || s1.RawLabelColumns() != nil {
		t.Fatalf("stage 1: %d rows of %d classes, raw %v", s1.Rows, s1.NumClasses(), s1.RawLabelColumns())
	}
	rows := ts.Stage2Rows()
	prior := make([]float64, len(rows)*c)
	for i, row := range rows {
		// Confident priors on some rows (a set of one), flat on others.
		top := row % c
		conf := []float64{0.97, 0.6, 0.25}[row%3]
		for j := range c {
			prior[i*c+j] = (1 - conf) / (c - 1)
		}
		prior[i*c+top] = conf
	}
	bad := slices.Clone(prior)
	bad[2*c] = 0.9 // row 2's vector sums to more than 1
	if _, err := ts.Finish(bad); err == nil || !strings.Contains(err.Error(), "stage-2 row 2") {
		t.Fatalf("Finish with a bad prior: %v", err)
	}
	if _, err := ts.Finish(prior[:len(prior)-1]); err == nil {
		t.Fatal("Finish took a prior vector short of its classes")
	}
	rel, err := ts.Finish(prior)
	if err != nil {
		t.Fatal(err)
	}
	sim := rel.Simulation()
	if sim.NumClasses() != c || sim.Prior != nil || sim.Branch != nil || sim.PriorC == nil || sim.PriorSet == nil {
		t.Fatal("a 4-class rr_prior release has the binary columns, or lacks its per-class ones")
	}
	if err := sim.Validate(); err != nil {
		t.Fatal(err)
	}
	at := map[int]int{}
	for i, row := range rows {
		at[row] = i
	}
	ex := m.ExampleLaw()
	singles := 0
	for i := range sim.Rows {
		set, k := sim.PriorSet[i], int(sim.PriorSetSize[i])
		if set>>sim.LabelRR[i]&1 == 0 || bits.OnesCount64(set) != k {
			t.Fatalf("row %d released %d outside its set %b", i, sim.LabelRR[i], set)
		}
		switch sim.Stage[i] {
		case 1:
			if k != c || sim.PriorC[i*c] != 0.25 {
				t.Fatalf("stage-1 row %d: set %b, prior %v", i, set, sim.PriorC[i*c:(i+1)*c])
			}
		case 2:
			p := prior[at[i]*c : (at[i]+1)*c]
			ch := ex.Channel(ex.ChannelOf(p))
			if want := ch.Support(); set != want || !slices.Equal(sim.PriorC[i*c:(i+1)*c], p) {
				t.Fatalf("stage-2 row %d: set %b, want %b", i, set, want)
			}
			if k == 1 {
				singles++
			}
		}
	}
	if singles == 0 {
		t.Fatal("no confident prior took a set of one")
	}
	if md := rel.Meta(); md[data.MetaClasses] != "4" || md["argmax_rows"] != strconv.Itoa(singles) {
		t.Errorf("metadata %v (want argmax_rows %d)", md, singles)
	}
	shipped, err := rel.Ship(f)
	if err != nil {
		t.Fatal(err)
	}
	if cols := shipped.RawLabelColumns(); cols != nil || shipped.Row != nil {
		t.Fatalf("shipped rr_prior carries %v", cols)
	}

	// ApplyRRPrior: the same per-row law, rows in input order.
	all := make([]float64, f.Rows*c)
	for i := range f.Rows {
		all[i*c+f.Rows%c] = 1 // a certain prior: a set of one, class Rows mod C
	}
	ap, err := ApplyRRPrior(f.Label, all, m, Options{Noise: pets.NoiseSimulation, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, z := range ap.Simulation().LabelRR {
		if int(z) != f.Rows%c {
			t.Fatalf("row %d with a certain prior released %d", i, z)
		}
	}
}

// TestRejectsBadLabels: a label that is not a class of the mechanism is
// refused before anything is drawn, naming the row.
func TestRejectsBadLabels(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels []uint8
		p      pets.Params
	}{
		{"binary label 2", []uint8{0, 1, 2}, pets.Params{Kind: pets.RR, Epsilon: 1}},
		{"label 3 of 3 classes", []uint8{0, 3, 1}, pets.Params{Kind: pets.LLP, K: 2, Classes: 3}},
		{"rr_prior", []uint8{0, 1, 9}, pets.Params{Kind: pets.RRPrior, Epsilon: 1, Classes: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := testutil.MustNew(tc.p)
			var err error
			if m.Spec().Release.WithPrior() {
				_, err = StartRRPrior(tc.labels, m, 0.5, Options{Noise: pets.NoiseSimulation, Seed: 1})
			} else {
				_, err = Apply(tc.labels, m, Options{Noise: pets.NoiseSimulation, Seed: 1})
			}
			if !errors.Is(err, ErrLabel) || !strings.Contains(err.Error(), "at row") {
				t.Fatalf("err = %v", err)
			}
		})
	}
}
