package pipeline

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/ledger"
	"labelprivacy/pets"
	"labelprivacy/release"
)

// stateOf reads and verifies the ledger at path whole.
func stateOf(path string) (*ledger.State, error) {
	l, err := ledger.Open(path, ledger.Options{})
	if err != nil {
		return nil, err
	}
	return l.State(0)
}

// The simulation releases of a fit compose per training row in the
// output directory's ledger: testConfig's 3 releasing settings × 2 trials
// at ε = 1 cover every one of the 600 rows 6 times (k = 4 and 8 divide 600).
// With privacy.ledger elsewhere the ledger (and its key and people file)
// lives there, and a rerun still reuses every release.
func TestSimulationLedgerPerRow(t *testing.T) {
	for _, elsewhere := range []bool{false, true} {
		c := testConfig(filepath.Join(t.TempDir(), "out"))
		if elsewhere {
			c.Privacy.Ledger = filepath.Join(t.TempDir(), "sims.csv")
		}
		s := openTest(t, c)
		if _, err := Fit(context.Background(), s, FitOptions{executor: &fakeExec{t: t}}); err != nil {
			t.Fatal(err)
		}
		want := s.Out(ledger.File)
		if elsewhere {
			want = c.Privacy.Ledger
		}
		st, err := stateOf(want)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Rows) != 6 || st.People != 600 || len(st.Classes) != 1 || st.Classes[0].Comp.Basic != 6 {
			t.Fatalf("ledger %s: %d rows, %d people, classes %+v", want, len(st.Rows), st.People, st.Classes)
		}
		if _, err := os.Stat(ledger.KeyPath(want)); err != nil {
			t.Fatal(err)
		}
		if _, err := Fit(context.Background(), s, FitOptions{executor: &fakeExec{t: t}}); err != nil {
			t.Fatal(err)
		}
		if rows, _ := ledger.Read(want); len(rows) != 6 {
			t.Fatalf("a rerun added ledger rows: %d", len(rows))
		}
	}
}

// privacy.budget refuses the simulation release that would take the rows
// above it: 6 releases at ε = 1 against a budget of 3.5 stop at the fourth,
// which is neither written nor recorded, before any model trains (under a
// budget no release is left to make while groups train).
func TestSimulationBudget(t *testing.T) {
	c := testConfig(filepath.Join(t.TempDir(), "out"))
	c.Privacy.Budget = 3.5
	c.Train.Replicas = config.Replicas{N: 2}
	s := openTest(t, c)
	ex := &fakeExec{t: t}
	_, err := Fit(context.Background(), s, FitOptions{executor: ex})
	if !errors.Is(err, ledger.ErrBudget) || !strings.Contains(err.Error(), "600 people") {
		t.Fatalf("fit: %v, want a budget refusal naming 600 people", err)
	}
	if len(ex.calls) > 0 {
		t.Fatalf("%d groups trained before the budget refused a release", len(ex.calls))
	}
	if rows, _ := ledger.Read(s.ledgerPath()); len(rows) != 3 {
		t.Fatalf("%d ledger rows, want the 3 within the budget", len(rows))
	}
}

// data.id_column: a dataset whose train file carries a string id column
// (here two rows per id) loads with the column split off (not a feature),
// and its simulation releases compose per id: 300 people.
func TestSessionIDColumn(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	if _, err := data.Synth(context.Background(), data.SynthOptions{Kind: data.SynthLogistic, Rows: 600, TestRows: 200,
		Features: 4, Seed: 5, Out: dir}); err != nil {
		t.Fatal(err)
	}
	ds, err := data.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Both splits as pandas would write them (Parquet, int64 label, float64
	// features); only the train file carries the ids.
	write := func(f *data.Frame, name string, uid []string) {
		cols := []data.Column{{Name: data.ColLabel, Values: widenLabels(f.Label)}}
		if uid != nil {
			cols = append(cols, data.Column{Name: "uid", Values: uid})
		}
		for j, name := range f.Features {
			v := make([]float64, f.Rows)
			for i := range v {
				v[i] = float64(f.X[i*f.Dim()+j])
			}
			cols = append(cols, data.Column{Name: name, Values: v})
		}
		if err := (&data.Table{Columns: cols}).WriteParquet(filepath.Join(dir, name+".parquet")); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(dir, name+".arrow"))
	}
	uid := make([]string, ds.Train.Rows)
	for i := range uid {
		uid[i] = "user-" + strconv.Itoa(i/2)
	}
	write(ds.Train, "train", uid)
	write(ds.Test, "test", nil)
	m, err := data.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	m.TrainSHA256, m.TestSHA256, m.ContentSHA256 = "", "", "" // the train file changed
	if err := data.WriteMeta(dir, m); err != nil {
		t.Fatal(err)
	}
	c := testConfig(filepath.Join(t.TempDir(), "out"))
	c.Data.Path, c.Data.IDColumn = dir, "uid"
	s := openTest(t, c)
	if s.train.Dim() != 4 || s.ids == nil || s.ids.Len() != 600 {
		t.Fatalf("session: %d features, ids %v", s.train.Dim(), s.ids)
	}
	if _, err := Fit(context.Background(), s, FitOptions{executor: &fakeExec{t: t}}); err != nil {
		t.Fatal(err)
	}
	st, err := stateOf(s.ledgerPath())
	if err != nil || st.People != 300 {
		t.Fatalf("%v people (%v), want 300 ids", st.People, err)
	}
	// Each id has two rows, each charged: 6 releases at ε = 1 cost every
	// person basic 12 (rows in one bag as one draw at 2ε, or two at ε).
	for _, c := range st.Classes {
		if c.Comp.Basic != 12 || c.Releases != 6 {
			t.Fatalf("class %+v, want basic 12 over 6 releases", c)
		}
	}
}

func widenLabels(l []uint8) []int64 {
	out := make([]int64, len(l))
	for i, v := range l {
		out[i] = int64(v)
	}
	return out
}

// CheckEpsilon is the one ε range of the config and privatize.
func TestCheckEpsilon(t *testing.T) {
	for _, tc := range []struct {
		eps float64
		ok  bool
	}{
		{config.MinEpsilon, true}, {1, true}, {pets.MaxEpsilon, true}, {1e-6, true}, {100, true}, {100.01, false}, {700, false}, {9.9e-7, false},
		{config.MinEpsilon / 2, false}, {0, false}, {-1, false}, {pets.MaxEpsilon + 0.5, false},
		{math.Inf(1), false}, {math.NaN(), false},
	} {
		err := config.CheckEpsilon(tc.eps)
		var pe *pets.ParamError
		if (err == nil) != tc.ok || (err != nil && (!errors.As(err, &pe) || pe.Param != "epsilon")) {
			t.Errorf("CheckEpsilon(%v) = %v, want ok %v", tc.eps, err, tc.ok)
		}
		c := testConfig("o")
		c.Pets = []config.PetConfig{{Mechanism: pets.RR, Epsilon: []float64{tc.eps}}}
		if err := c.Validate(); (err == nil) != tc.ok {
			t.Errorf("config epsilon %v: %v, want ok %v", tc.eps, err, tc.ok)
		}
	}
}

// privacy.budget must be finite and ≥ 0.
func TestValidatePrivacyBudget(t *testing.T) {
	for _, b := range []float64{-1, math.Inf(1), math.NaN()} {
		c := testConfig("o")
		c.Privacy.Budget = b
		var fe *config.FieldError
		if err := c.Validate(); !errors.As(err, &fe) || fe.Key != "privacy.budget" {
			t.Errorf("budget %v: %v", b, err)
		}
	}
}

// The ledger statement in words: the worst person's (ε, δ'), over how many
// releases, how many people carry it; non-DP releases and an empty ledger
// said as such.
func TestLedgerStatement(t *testing.T) {
	cls := func(people int, total float64, releases int) ledger.Class {
		return ledger.Class{People: people, Releases: releases, Comp: pets.Composition{Total: total}}
	}
	for _, tc := range []struct {
		classes []ledger.Class
		want    string
	}{
		{nil, "no release is recorded"},
		{[]ledger.Class{cls(1999, 2.77543, 40), cls(1, 2.1, 30)},
			"each person's label is (2.7754, 1e-6)-label-DP over 40 releases; 1,999 people carry the most"},
		{[]ledger.Class{cls(1, 3, 3), cls(12000, 2, 2)},
			"each person's label is (3, 1e-6)-label-DP over 3 releases; 1 person carries the most"},
		{[]ledger.Class{cls(7, 1, 1)},
			"each person's label is (1, 1e-6)-label-DP over 1 release; 7 people carry the most"},
		{[]ledger.Class{cls(10, math.Inf(1), 1), cls(5, math.Inf(1), 2), cls(100, 1, 1)},
			"15 of 115 people had their labels released without a DP guarantee"},
	} {
		st := &ledger.State{DeltaPrime: 1e-6, Classes: tc.classes}
		for _, c := range tc.classes {
			st.People += c.People
		}
		if got := ledgerStatement(st); !strings.HasPrefix(got, tc.want) {
			t.Errorf("statement %q, want %q", got, tc.want)
		}
	}
}

// personKeys: a person known by features is the same whatever the column
// order, and −0 is 0; a changed value, another domain (standardized) or an
// id are other keys; ids of equal canonical bytes are one person.
func TestPersonKeys(t *testing.T) {
	l, err := ledger.Open(filepath.Join(t.TempDir(), ledger.File), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	k, err := l.Keys()
	if err != nil {
		t.Fatal(err)
	}
	negZero := float32(math.Copysign(0, -1))
	a := &data.Frame{Rows: 3, Features: []string{"x", "y"}, X: []float32{1, 2, 3, 0, 5, 6}}
	b := &data.Frame{Rows: 3, Features: []string{"y", "x"}, X: []float32{2, 1, negZero, 3, 6, 5}}
	c := &data.Frame{Rows: 3, Features: []string{"x", "y"}, X: []float32{1, 2, 3, 0, 5, 6.0000005}}
	ka, kb, kc := personKeys(k, a, nil, ledger.ByFeatures), personKeys(k, b, nil, ledger.ByFeatures), personKeys(k, c, nil, ledger.ByFeatures)
	if !slices.Equal(ka, kb) {
		t.Fatalf("reordered columns: %x vs %x", ka, kb)
	}
	if ka[2] == kc[2] || ka[0] != kc[0] {
		t.Fatalf("a changed value: %x vs %x", ka, kc)
	}
	if ks := personKeys(k, a, nil, ledger.ByStandardizedFeatures); ks[0] == ka[0] {
		t.Fatal("the standardized domain matches raw rows")
	}
	if ka[0] == ka[1] || ka[1] == ka[2] {
		t.Fatalf("distinct rows share keys: %x", ka)
	}
	// Many rows (the parallel path) give the same keys as one at a time.
	big := &data.Frame{Rows: 20000, Features: []string{"x"}, X: make([]float32, 20000)}
	for i := range big.X {
		big.X[i] = float32(i % 5000)
	}
	kb2 := personKeys(k, big, nil, ledger.ByFeatures)
	for i := range big.Rows {
		if kb2[i] != kb2[i%5000] {
			t.Fatalf("row %d key differs from its equal row %d", i, i%5000)
		}
		if one := personKeys(k, big.Slice(i, i+1), nil, ledger.ByFeatures); i%4999 == 0 && one[0] != kb2[i] {
			t.Fatalf("row %d: parallel key differs", i)
		}
	}
}

// releasePeople: for training rows of distinct people, a release of every
// row passes the session's one sorted copy of the keys itself (no second
// copy), an LLP release that drops its remainder passes the sorted keys of
// exactly the rows it covers, without draws (they change no charge), twice
// in a row; with a person in two rows it passes the rows in release order
// with their bags.
func TestReleasePeople(t *testing.T) {
	s := openTest(t, testConfig(filepath.Join(t.TempDir(), "out")))
	l, err := ledger.Open(filepath.Join(t.TempDir(), ledger.File), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	k, err := l.Keys()
	if err != nil {
		t.Fatal(err)
	}
	rr, err := pets.New(pets.Params{Kind: pets.RR, Epsilon: 1})
	if err != nil {
		t.Fatal(err)
	}
	all, err := release.Apply(s.train.Label, rr, release.Options{Noise: pets.NoiseSimulation, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	keys, draws := s.releasePeople(k, all)
	want := s.personKeys(k)
	slices.Sort(want)
	if draws != nil || !slices.Equal(keys, want) || &keys[0] != &s.peopleSorted[0] {
		t.Fatalf("every row: %d keys (draws %v, the session's copy: %v), want the %d sorted, the session's own",
			len(keys), draws != nil, &keys[0] == &s.peopleSorted[0], len(want))
	}
	m, err := pets.New(pets.Params{Kind: pets.LLPGeom, K: 7, Epsilon: 1})
	if err != nil {
		t.Fatal(err)
	}
	rel, err := release.Apply(s.train.Label, m, release.Options{Noise: pets.NoiseSimulation, Seed: 3})
	if err != nil || rel.Dropped == 0 {
		t.Fatalf("%v, dropped %d", err, rel.Dropped)
	}
	want = coveredPeople(s.personKeys(k), rel.Covered())
	slices.Sort(want)
	for i := range 2 {
		keys, draws = s.releasePeople(k, rel)
		if draws != nil || !slices.Equal(keys, want) {
			t.Fatalf("distinct rows, release %d: %d keys (draws %v), want the %d covered, sorted", i, len(keys), draws != nil, len(want))
		}
	}
	s.sortedPeople(k)
	s.peopleDistinct = false // as if a person had two rows
	keys, draws = s.releasePeople(k, rel)
	if !slices.Equal(draws, rel.Draws()) || !slices.Equal(keys, coveredPeople(s.personKeys(k), rel.Covered())) {
		t.Fatal("repeated people: want the rows in release order with their bags")
	}
}

// One release is "1 release", two are "2 releases": in privatize's summary
// and in the ledger report's header and statement (they once said
// "1 releases").
func TestReleaseCountsSingular(t *testing.T) {
	dir := t.TempDir()
	ds := filepath.Join(dir, "ds")
	if _, err := data.Synth(context.Background(), data.SynthOptions{Kind: data.SynthLogistic, Rows: 64, TestRows: 10, Features: 3, Seed: 5, Out: ds}); err != nil {
		t.Fatal(err)
	}
	led := filepath.Join(dir, "ledger", ledger.File)
	for i, want := range []string{"1 release", "2 releases"} {
		p, err := Privatize(PrivatizeOptions{In: filepath.Join(ds, data.TrainFile), Out: filepath.Join(dir, "ship", "r"+strconv.Itoa(i)+".arrow"),
			Params: pets.Params{Kind: pets.LLPGeom, K: 8, Epsilon: 1}, Ledger: led})
		if err != nil {
			t.Fatal(err)
		}
		sum := p.Summary()
		if !strings.Contains(sum, "(llp_geom(k=8, ε=1), 64 rows, 8 bags, 0 rows dropped,") || !strings.Contains(sum, " over "+want+" (basic") {
			t.Errorf("release %d: summary %q, want it to say 8 bags, 0 rows dropped and over %s", i, sum, want)
		}
		var b strings.Builder
		if _, err := LedgerReport(&b, led, 0); err != nil {
			t.Fatal(err)
		}
		if out := b.String(); !strings.Contains(out, ": "+want+" (0 aborted, still counted), 64 people in 1 history class;") ||
			!strings.Contains(out, "-label-DP over "+want+"; 64 people carry the most") {
			t.Errorf("release %d: ledger report\n%s\nwant it to say %s and 1 history class", i, out, want)
		}
	}
}
