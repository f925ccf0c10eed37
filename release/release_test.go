package release

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"labelprivacy/data"
	"labelprivacy/internal/testutil"
	"labelprivacy/ledger"
	"labelprivacy/pets"
)

func synth(t testing.TB, rows int) *data.Frame {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ds")
	if _, err := data.Synth(context.Background(), data.SynthOptions{Kind: data.SynthLogistic, Rows: rows, TestRows: 10, Features: 4, Seed: 5, Out: dir}); err != nil {
		t.Fatal(err)
	}
	ds, err := data.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ds.Train
}

// memLedger records in memory (Publish's record-first contract).
type memLedger struct {
	rows     []ledger.Row
	refuse   error
	onRecord func()
}

func (l *memLedger) Record(r ledger.Release) (ledger.Row, error) {
	if l.onRecord != nil {
		l.onRecord()
	}
	if l.refuse != nil {
		return ledger.Row{}, l.refuse
	}
	e := ledger.Row{ID: r.ID, Status: ledger.StatusReleased, Path: r.Path, SHA256: r.SHA256, Seed: r.Seed, Noise: r.Noise}
	l.rows = append(l.rows, e)
	return e, nil
}

func (l *memLedger) Abort(id, reason string) (ledger.Row, error) {
	e := ledger.Row{ID: id, Status: ledger.StatusAborted, Reason: reason}
	l.rows = append(l.rows, e)
	return e, nil
}

func ship(t *testing.T, f *data.Frame, m *pets.Mechanism, o Options) (path string, b []byte) {
	t.Helper()
	rel, err := Apply(f.Label, m, o)
	if err != nil {
		t.Fatal(err)
	}
	out, err := rel.Ship(f)
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), "r.arrow")
	if _, err := Publish(path, out, rel.Meta(), &memLedger{}, rel.Entry(path, o.Seed), NoReplace); err != nil {
		t.Fatal(err)
	}
	b, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, b
}

func TestEveryMechanism(t *testing.T) {
	f := synth(t, 1003)
	for _, tc := range []struct {
		name    string
		p       pets.Params
		columns []string // release columns besides the features
		rows    int
	}{
		{"bot", pets.Params{Kind: pets.Bot}, nil, 1003},
		{"rr", pets.Params{Kind: pets.RR, Epsilon: 1}, []string{"label_rr"}, 1003},
		{"llp", pets.Params{Kind: pets.LLP, K: 8}, []string{"bag_id", "alpha"}, 1000},
		{"llp_lap", pets.Params{Kind: pets.LLPLap, K: 8, Epsilon: 2, Secure: true}, []string{"bag_id", "alpha"}, 1000},
		{"llp_geom", pets.Params{Kind: pets.LLPGeom, K: 8, Epsilon: 1}, []string{"bag_id", "alpha", "alpha_debiased"}, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := testutil.MustNew(tc.p)
			const seed = 1234567
			_, a := ship(t, f, m, Options{Noise: pets.NoiseSeeded, Seed: seed})
			path, b := ship(t, f, m, Options{Noise: pets.NoiseSeeded, Seed: seed})
			if !bytes.Equal(a, b) {
				t.Fatal("seeded: same seed, different release bytes")
			}
			if tc.p.Kind != pets.Bot {
				_, s1 := ship(t, f, m, Options{Noise: pets.NoiseSecure})
				_, s2 := ship(t, f, m, Options{Noise: pets.NoiseSecure})
				if bytes.Equal(s1, s2) {
					t.Fatal("secure: two releases have the same bytes")
				}
			}
			got, err := data.ReadFrame(path)
			if err != nil {
				t.Fatal(err)
			}
			// Privacy hygiene: no raw column, no row numbers, no seed anywhere in the metadata.
			if cols := got.RawLabelColumns(); len(cols) != 0 || got.Row != nil {
				t.Fatalf("shipped file carries raw columns %v (row column: %v)", cols, got.Row != nil)
			}
			for k, v := range got.Meta {
				if strings.Contains(strings.ToLower(k), "seed") || strings.Contains(v, strconv.Itoa(seed)) {
					t.Fatalf("metadata %q=%q carries the seed", k, v)
				}
			}
			if got.Meta["mechanism"] != tc.p.Kind.String() || got.Meta["noise"] != "seeded" {
				t.Fatalf("metadata %v", got.Meta)
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

// LLP releases exactly each bag's mean raw label: checked on the shipped
// file by matching feature rows back to the raw data, and on the
// simulation file through its row column.
func TestLLPProportions(t *testing.T) {
	f := synth(t, 640)
	rel, err := Apply(f.Label, testutil.MustNew(pets.Params{Kind: pets.LLP, K: 16}), Options{Noise: pets.NoiseSeeded, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if rel.Bags != 40 || rel.Dropped != 0 {
		t.Fatalf("bags %d dropped %d", rel.Bags, rel.Dropped)
	}
	label := map[[4]float32]uint8{}
	d := f.Dim()
	for i := range f.Rows {
		label[[4]float32(f.X[i*d:(i+1)*d])] = f.Label[i]
	}
	shipped, err := rel.Ship(f)
	if err != nil {
		t.Fatal(err)
	}
	sim := rel.Simulation()
	if sim.X != nil || sim.Row == nil {
		t.Fatal("a simulation release holds row numbers and no features")
	}
	for b := range 40 {
		var sum, simSum int
		for r := b * 16; r < (b+1)*16; r++ {
			if shipped.BagID[r] != int64(b) || sim.BagID[r] != int64(b) {
				t.Fatalf("row %d in bag %d/%d, want %d", r, shipped.BagID[r], sim.BagID[r], b)
			}
			sum += int(label[[4]float32(shipped.X[r*d:(r+1)*d])])
			simSum += int(f.Label[sim.Row[r]])
		}
		want := float64(sum) / 16
		if shipped.Alpha[b*16] != want || sim.Alpha[b*16] != float64(simSum)/16 || sum != simSum {
			t.Fatalf("bag %d alpha %v / %v, want %v", b, shipped.Alpha[b*16], sim.Alpha[b*16], want)
		}
	}
}

// A shipped RR release does not keep the input's row order: an input
// sorted by label would otherwise give its labels away.
func TestShipShufflesRows(t *testing.T) {
	labels := make([]uint8, 2000)
	x := make([]float32, 2000)
	for i := range labels {
		x[i] = float32(i)
		if i >= 1000 {
			labels[i] = 1 // sorted by label
		}
	}
	f := &data.Frame{Rows: 2000, Features: []string{"i"}, X: x, Label: labels}
	rel, err := Apply(labels, testutil.MustNew(pets.Params{Kind: pets.RR, Epsilon: 8}), Options{Noise: pets.NoiseSecure})
	if err != nil {
		t.Fatal(err)
	}
	out, err := rel.Ship(f)
	if err != nil {
		t.Fatal(err)
	}
	// Position in the file predicts the label no better than chance: the
	// first half holds 1000 ± 6σ (σ = √(2000·¼·¼)·… ≈ 11.2 for a uniform
	// permutation) original first-half rows. False-failure rate ~2e-9.
	first := 0
	for i := range 1000 {
		if out.X[i] < 1000 {
			first++
		}
	}
	if math.Abs(float64(first)-500) > 6*11.2 {
		t.Fatalf("%d of the first 1000 shipped rows come from the first half of the input", first)
	}
}

// The attack that recovered 100,000 of 100,000 labels: an attacker with the
// release file and this package regenerates the noise from everything the
// file says (every number in its metadata, and small seeds) and XORs it
// out. Against a default (crypto/rand) release their best guess agrees with
// the true labels no more than the mechanism allows: P(agree) = 1 − π for
// the released label itself, π²+(1−π)² for a wrong regenerated noise.
func TestRegenerationAttackFails(t *testing.T) {
	f := synth(t, 20000)
	m := testutil.MustNew(pets.Params{Kind: pets.RR, Epsilon: 1})
	rel, err := Apply(f.Label, m, Options{Noise: pets.NoiseSecure})
	if err != nil {
		t.Fatal(err)
	}
	out := rel.Simulation() // release order = input order: the attacker's best case
	out.Row = nil
	md := rel.Meta()
	var candidates []uint64
	for _, v := range md {
		if n, err := strconv.ParseUint(v, 10, 64); err == nil {
			candidates = append(candidates, n)
		}
	}
	for s := range uint64(200) {
		candidates = append(candidates, s)
	}
	zeros := make([]uint8, f.Rows)
	n := float64(f.Rows)
	pi := m.FlipProb()
	best := 0.0
	for _, s := range candidates {
		noise, err := Apply(zeros, m, Options{Noise: pets.NoiseSeeded, Seed: s})
		if err != nil {
			t.Fatal(err)
		}
		agree := 0
		for i := range f.Rows {
			if out.LabelRR[i]^noise.labelRR[i] == f.Label[i] {
				agree++
			}
		}
		best = max(best, float64(agree)/n)
	}
	// The released labels alone agree with probability 1−π ≈ 0.731; allow
	// 6σ (σ = √(p(1−p)/n) ≈ 0.0031) over the max of ~200 candidates.
	if limit := 1 - pi + 6*math.Sqrt(pi*(1-pi)/n); best > limit {
		t.Fatalf("regenerated noise recovers %.4f of the labels (mechanism allows ≤ %.4f)", best, limit)
	}
	// The same attack on a seeded release whose seed is known undoes it:
	// why a seed must never travel with a release.
	seeded, _ := Apply(f.Label, m, Options{Noise: pets.NoiseSeeded, Seed: 42})
	noise, _ := Apply(zeros, m, Options{Noise: pets.NoiseSeeded, Seed: 42})
	for i := range f.Rows {
		if seeded.labelRR[i]^noise.labelRR[i] != f.Label[i] {
			t.Fatalf("row %d: a known seed should undo the release exactly", i)
		}
	}
}

func TestRejects(t *testing.T) {
	labels := []uint8{0, 1, 1}
	if _, err := Apply(labels, testutil.MustNew(pets.Params{Kind: pets.None}), Options{Noise: pets.NoiseSecure}); !errors.Is(err, ErrNoRelease) {
		t.Fatalf("none: err = %v", err)
	}
	rr := testutil.MustNew(pets.Params{Kind: pets.RR, Epsilon: 1})
	for name, o := range map[string]Options{"secure with a seed": {Noise: pets.NoiseSecure, Seed: 3}, "no noise mode": {}} {
		if _, err := Apply(labels, rr, o); err == nil {
			t.Fatalf("%s: no error", name)
		}
	}
	if _, err := Apply(nil, rr, Options{Noise: pets.NoiseSecure}); err == nil {
		t.Fatal("no labels: no error")
	}
}

// Publish records first: when the ledger records the release no byte of
// it exists (not even a temporary: a complete unrecorded release once sat
// as a hidden file in the outbox, and tar or rsync would ship it), and the
// SHA-256 it records is the file's; a ledger that refuses leaves nothing;
// a write that fails leaves the row aborted and no file.
func TestPublishRecordsFirst(t *testing.T) {
	f := synth(t, 100)
	rel, err := Apply(f.Label, testutil.MustNew(pets.Params{Kind: pets.RR, Epsilon: 1}), Options{Noise: pets.NoiseSecure})
	if err != nil {
		t.Fatal(err)
	}
	frame, _ := rel.Ship(f)
	dir := t.TempDir()
	path := filepath.Join(dir, "r.arrow")
	empty := func() {
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Fatalf("the outbox holds %v when the release is recorded", left)
		}
	}

	l := &memLedger{refuse: errors.New("disk full"), onRecord: empty}
	if _, err := Publish(path, frame, rel.Meta(), l, rel.Entry(path, 0), NoReplace); err == nil {
		t.Fatal("a refusing ledger: no error")
	}
	empty()

	l = &memLedger{onRecord: empty}
	row, err := Publish(path, frame, rel.Meta(), l, rel.Entry(path, 0), NoReplace)
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := data.FileSHA256(path)
	if len(l.rows) != 1 || row.SHA256 != sum || row.Status != ledger.StatusReleased {
		t.Fatalf("ledger %+v, file sha %s", l.rows, sum)
	}

	blocked := filepath.Join(dir, "blocked")
	os.MkdirAll(filepath.Join(blocked, "x"), 0o755) // a non-empty directory: rename onto it fails
	l = &memLedger{}
	if _, err := Publish(blocked, frame, rel.Meta(), l, rel.Entry(blocked, 0), Replace); err == nil || !strings.Contains(err.Error(), "aborted") {
		t.Fatalf("failed rename: err = %v", err)
	}
	if len(l.rows) != 2 || l.rows[1].Status != ledger.StatusAborted || l.rows[1].ID != l.rows[0].ID {
		t.Fatalf("ledger after a failed rename: %+v", l.rows)
	}
	if pend, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(pend) != 0 {
		t.Fatalf("pending files left: %v", pend)
	}
}

// The digest recorded before writing is the written file's, for every
// layout (LLP bags, the simulation layout, metadata): the writer is
// deterministic.
func TestFrameSHA256MatchesFile(t *testing.T) {
	f := synth(t, 300)
	for _, p := range []pets.Params{{Kind: pets.RR, Epsilon: 1}, {Kind: pets.LLPGeom, K: 8, Epsilon: 1}, {Kind: pets.Bot}} {
		rel, err := Apply(f.Label, testutil.MustNew(p), Options{Noise: pets.NoiseSeeded, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		for _, frame := range []*data.Frame{must(rel.Ship(f)), rel.Simulation()} {
			want, err := data.FrameSHA256(frame, rel.Meta())
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "r.arrow")
			if err := data.WriteFrame(path, frame, rel.Meta()); err != nil {
				t.Fatal(err)
			}
			if got, _ := data.FileSHA256(path); got != want {
				t.Fatalf("%v: file %s, computed %s", p, got, want)
			}
		}
	}
	if g := (&Release{bagID: []int64{0, 0, 1}}).Draws(); !slices.Equal(g, []int64{0, 0, 1}) {
		t.Fatal(g)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// A simulation release published a chunk at a time (its row column made
// per record batch) is the file and digest of the whole Simulation frame;
// a release of every row in order (rr, bot, rr_prior) holds no row
// numbers of its own yet covers rows 0…n−1.
func TestSimulationChunked(t *testing.T) {
	const n = 1003
	f := synth(t, n)
	prior := make([]float64, n)
	for i := range prior {
		prior[i] = float64(i%10) / 10
	}
	for _, p := range []pets.Params{{Kind: pets.Bot}, {Kind: pets.RR, Epsilon: 1}, {Kind: pets.LLPGeom, K: 8, Epsilon: 1}, {Kind: pets.RRPrior, Epsilon: 1}} {
		m := testutil.MustNew(p)
		o := Options{Noise: pets.NoiseSimulation, Seed: 9}
		var r *Release
		var err error
		if p.Kind == pets.RRPrior {
			r, err = ApplyRRPrior(f.Label, prior, m, o)
		} else {
			r, err = Apply(f.Label, m, o)
		}
		if err != nil {
			t.Fatal(err)
		}
		inOrder := !p.Kind.IsLLP()
		if r.InOrder() != inOrder || (inOrder && (r.rows != nil || !slices.Equal(r.Covered(), identity(n)) || r.Rows() != n)) {
			t.Fatalf("%s: InOrder %v, rows %d, covered %d", p.Kind, r.InOrder(), r.Rows(), len(r.Covered()))
		}
		dir := t.TempDir()
		var la, lb memLedger
		whole, chunked := filepath.Join(dir, "whole.arrow"), filepath.Join(dir, "chunked.arrow")
		ra, err := Publish(whole, r.Simulation(), r.Meta(), &la, r.Entry(whole, 9), NoReplace)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := PublishChunked(chunked, r.SimulationChunked(), r.Meta(), &lb, r.Entry(chunked, 9), Replace)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := os.ReadFile(whole)
		b, _ := os.ReadFile(chunked)
		if !bytes.Equal(a, b) || ra.SHA256 != rb.SHA256 {
			t.Fatalf("%s: the chunked release differs from the whole one", p.Kind)
		}
		sim, err := data.ReadFrame(chunked)
		if err != nil {
			t.Fatal(err)
		}
		for i, row := range sim.Row {
			if int(row) != r.Covered()[i] {
				t.Fatalf("%s: release row %d has row %d, want %d", p.Kind, i, row, r.Covered()[i])
			}
		}
	}
}

// NoReplace never replaces: a file put at the path while the release was
// written (here by the ledger's Record, as a second privatize to the same
// --out would) stays as it is, the release is refused with ErrExists
// naming the path, and its ledger row is marked aborted (the charge
// stays); Replace replaces it (--force).
func TestPublishNoReplace(t *testing.T) {
	f := synth(t, 100)
	rel, err := Apply(f.Label, testutil.MustNew(pets.Params{Kind: pets.RR, Epsilon: 1}), Options{Noise: pets.NoiseSecure})
	if err != nil {
		t.Fatal(err)
	}
	frame, _ := rel.Ship(f)
	dir := t.TempDir()
	path := filepath.Join(dir, "r.arrow")
	other := []byte("the other run's release")
	l := &memLedger{onRecord: func() { os.WriteFile(path, other, 0o644) }}
	_, err = Publish(path, frame, rel.Meta(), l, rel.Entry(path, 0), NoReplace)
	if !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "aborted") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a file put at the path meanwhile: %v, want ErrExists naming %s and the aborted row, on one line", err, path)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, other) {
		t.Fatal("the file put there meanwhile was replaced")
	}
	if len(l.rows) != 2 || l.rows[1].Status != ledger.StatusAborted || l.rows[1].ID != l.rows[0].ID || !strings.Contains(l.rows[1].Reason, path) {
		t.Fatalf("ledger %+v, want the release recorded then aborted, naming the file", l.rows)
	}
	if names, _ := os.ReadDir(dir); len(names) != 1 {
		t.Fatalf("left in the folder: %v", names)
	}
	l = &memLedger{}
	row, err := Publish(path, frame, rel.Meta(), l, rel.Entry(path, 0), Replace)
	if sum, _ := data.FileSHA256(path); err != nil || row.SHA256 != sum {
		t.Fatalf("Replace: %v (file %s, row %s)", err, sum, row.SHA256)
	}
}
