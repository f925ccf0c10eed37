package release

import (
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"labelprivacy/ara"
	"labelprivacy/data"
	"labelprivacy/internal/testutil"
	"labelprivacy/llp"
	"labelprivacy/pets"
)

// ara_event's release carries the state each source's browser sent
// (ara_state, in [0, k)) and its projection (label_rr, C for a state of no
// class), in the simulation frame and the shipped file alike, with k and
// the source in the metadata and no raw column.
func TestARAEventRelease(t *testing.T) {
	f := synth(t, 2000)
	m := testutil.MustNew(pets.Params{Kind: pets.ARAEvent, Epsilon: 1, TriggerData: 1, Windows: 1, Reports: 3})
	rel, err := Apply(f.Label, m, Options{Noise: pets.NoiseSeeded, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	sim := rel.Simulation()
	if err := sim.Validate(); err != nil {
		t.Fatal(err)
	}
	erased, kept := 0, 0
	for i, s := range sim.ARAState {
		if s >= 4 || sim.LabelRR[i] != uint8(min(s, 2)) {
			t.Fatalf("row %d: state %d, label_rr %d", i, s, sim.LabelRR[i])
		}
		switch {
		case s >= 2:
			erased++
		case uint8(s) == f.Label[sim.Row[i]]:
			kept++
		}
	}
	// p = 4/(4 + e − 1): p·2/4 of the rows erased, 1 − p + p/4 kept, each
	// count within 5 binomial SE (a false failure below 1e-6).
	p := 4 / (3 + math.E)
	for _, c := range []struct {
		n    int
		want float64
	}{{erased, p / 2}, {kept, 1 - p + p/4}} {
		if se := math.Sqrt(2000 * c.want * (1 - c.want)); math.Abs(float64(c.n)-2000*c.want) > 5*se {
			t.Errorf("%d erased, %d kept of 2000 (want %.0f, %.0f)", erased, kept, 2000*p/2, 2000*(1-p+p/4))
		}
	}
	path := filepath.Join(t.TempDir(), "r.arrow")
	out, err := rel.Ship(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Publish(path, out, rel.Meta(), &memLedger{}, rel.Entry(path, 9), NoReplace); err != nil {
		t.Fatal(err)
	}
	got, err := data.ReadFrame(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.ARAState) != 2000 || len(got.LabelRR) != 2000 || got.RawLabelColumns() != nil || got.Row != nil {
		t.Fatalf("shipped: %d states, %d labels, raw %v", len(got.ARAState), len(got.LabelRR), got.RawLabelColumns())
	}
	if md := got.Meta; md["states"] != "4" || md["reports"] != "3" || md["trigger_data"] != "1" || md["mechanism"] != "ara_event" {
		t.Errorf("metadata %v", md)
	}
}

// ara_summary releases one proportion per key group, every group whole
// (whatever its size, privacy.keep_remainder or not), and refuses a
// release without the key's groups.
func TestARASummaryRelease(t *testing.T) {
	f := synth(t, 1000)
	keys := make([]int64, f.Rows)
	size := map[int64]int{}
	for i := range keys {
		keys[i] = int64(i*i%37) % 9 // groups of unequal sizes
		size[keys[i]]++
	}
	m := testutil.MustNew(pets.Params{Kind: pets.ARASummary, Epsilon: 4, CountShare: 0.5})
	rel, err := Apply(f.Label, m, Options{Noise: pets.NoiseSeeded, Seed: 3, Partition: llp.Keyed{Column: "g", Keys: keys}})
	if err != nil {
		t.Fatal(err)
	}
	if rel.Bags != len(size) || rel.Dropped != 0 || rel.Rows() != f.Rows {
		t.Fatalf("%d bags (%d keys), %d dropped, %d rows", rel.Bags, len(size), rel.Dropped, rel.Rows())
	}
	sim := rel.Simulation()
	members := map[int64]map[int64]bool{} // bag → keys
	rows := map[int64]int{}
	for i, b := range sim.BagID {
		if members[b] == nil {
			members[b] = map[int64]bool{}
		}
		members[b][keys[sim.Row[i]]] = true
		rows[b]++
	}
	for b, ks := range members {
		if len(ks) != 1 {
			t.Fatalf("bag %d mixes keys %v", b, ks)
		}
		for k := range ks {
			if rows[b] != size[k] {
				t.Fatalf("bag %d holds %d of key %d's %d rows", b, rows[b], k, size[k])
			}
		}
	}
	if md := rel.Meta(); md["bags"] != strconv.Itoa(len(size)) || md["budget_share_count"] != "0.5" || md["count_noise_rate"] != "2" || md["bag_rule"] != "key:g" {
		t.Errorf("metadata %v", md)
	}
	if _, err := Apply(f.Label, m, Options{Noise: pets.NoiseSeeded, Seed: 3}); err == nil || !strings.Contains(err.Error(), "key") {
		t.Errorf("a summary without keys: %v", err)
	}
}

// The summary reports' RMSRE₅ (Noise Lab's, per key and over the keys)
// equals its analytic expectation within Monte-Carlo error: over 2,000
// releases of one training set's key groups through release.Apply, each
// key's mean squared relative error against 2b²/max(m, 5)² (b = 1/(ε·s)
// the count's Laplace scale, m the key's conversions) and the mean of
// RMSRE₅² against ara.ExpectedRMSRESquared, each within 5 SE of the
// releases' own spread (a false failure below 1e-6 per comparison; 40
// comparisons).
func TestARASummaryRMSRE(t *testing.T) {
	f := synth(t, 3000)
	const groups = 38
	keys := make([]int64, f.Rows)
	for i := range keys {
		keys[i] = int64(i*7919%101) % groups
	}
	for _, tc := range []struct {
		eps, share float64
	}{{1, 1}, {4, 0.25}} {
		m := testutil.MustNew(pets.Params{Kind: pets.ARASummary, Epsilon: tc.eps, CountShare: tc.share})
		b := 1 / (tc.eps * tc.share)
		const releases = 2000
		var perKey [][]float64 // squared relative error per release, per key (in bag order)
		var truth []float64
		var r2 []float64
		for seed := range uint64(releases) {
			rel, err := Apply(f.Label, m, Options{Noise: pets.NoiseSimulation, Seed: seed, Partition: llp.Keyed{Column: "g", Keys: keys}})
			if err != nil {
				t.Fatal(err)
			}
			sim := rel.Simulation()
			noisy, tr := summaryCounts(sim, f.Label, keys)
			if truth == nil {
				truth, perKey = tr, make([][]float64, len(tr))
			}
			for k := range tr {
				e := (noisy[k] - tr[k]) / math.Max(tr[k], ara.RMSREThreshold)
				perKey[k] = append(perKey[k], e*e)
			}
			v := ara.RMSRE(noisy, tr, ara.RMSREThreshold)
			r2 = append(r2, v*v)
		}
		check := func(what string, xs []float64, want float64) {
			mean, sd := meanSD(xs)
			if se := sd / math.Sqrt(float64(len(xs))); math.Abs(mean-want) > 5*se {
				t.Errorf("ε=%v share %v: %s %v, analytic %v (SE %v)", tc.eps, tc.share, what, mean, want, se)
			}
		}
		for k, xs := range perKey {
			d := math.Max(truth[k], ara.RMSREThreshold)
			check("key "+strconv.Itoa(k)+"'s mean squared relative error", xs, 2*b*b/(d*d))
		}
		check("mean RMSRE₅²", r2, ara.ExpectedRMSRESquared(truth, b, ara.RMSREThreshold))
	}
}

// summaryCounts reads a simulation release of key groups: per key value
// (ascending), the released count α·n and the true count.
func summaryCounts(sim *data.Frame, labels []uint8, keys []int64) (noisy, truth []float64) {
	type acc struct{ alpha, n, m float64 }
	by := map[int64]*acc{}
	for i, r := range sim.Row {
		k := keys[r]
		a := by[k]
		if a == nil {
			a = &acc{alpha: sim.Alpha[i]}
			by[k] = a
		}
		a.n++
		a.m += float64(labels[r])
	}
	for k := int64(0); k < int64(len(by)); k++ {
		a := by[k]
		noisy, truth = append(noisy, a.alpha*a.n), append(truth, a.m)
	}
	return noisy, truth
}

func meanSD(xs []float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(xs)-1))
}
