package release

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"labelprivacy/ara"
	"labelprivacy/internal/testutil"
	"labelprivacy/llp"
	"labelprivacy/pets"
)

// ara_summary on values releases one mean per key group whose sum,
// bag_mean·n, is the group's value sum plus Lap(B/(v·ε)): Noise Lab's
// RMSRE₅ in value units over 2,000 releases, per key (its mean squared
// relative error, analytic 2b²/max(S, 5)²) and over the keys (the mean
// RMSRE₅², analytic ara.ExpectedRMSRESquared), within 5 SE each: 2 × 31
// checks, a false failure below 4e-5 in all (normal approximation; the
// squared Laplace errors' mean over 2,000 releases is close to normal).
// A noise scale 10% off (B/ε instead of B/(v·ε) at v = ½ is 100% off)
// fails the per-key checks. The metadata names the value's share and scale.
func TestARASummaryValuesRMSRE(t *testing.T) {
	g := pets.Grid{Max: 400, Step: 1}
	r := rand.New(rand.NewPCG(11, 12))
	const rows, groups = 1500, 30
	values, keys := make([]float64, rows), make([]int64, rows)
	for i := range values {
		if r.Float64() < 0.7 {
			values[i] = float64(r.IntN(401))
		}
		keys[i] = int64(r.IntN(groups))
	}
	keys[0] = groups // one key of one row, whose sum may be under t = 5
	values[0] = 2
	for _, tc := range []struct {
		eps, share float64
	}{{1, 1}, {4, 0.5}} {
		m := testutil.MustNew(pets.Params{Kind: pets.ARASummary, Epsilon: tc.eps, ValueShare: tc.share, Values: g})
		b := g.Max / (tc.eps * tc.share)
		const releases = 2000
		var perKey [][]float64
		var truth, r2 []float64
		for seed := range uint64(releases) {
			rel, err := ApplyValues(values, m, Options{Noise: pets.NoiseSimulation, Seed: seed, Partition: llp.Keyed{Column: "g", Keys: keys}}, ValueOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if seed == 0 {
				md := rel.Meta()
				if md["budget_share_value"] != strconv.FormatFloat(tc.share, 'g', -1, 64) || md["value_noise_scale"] == "" || md["bags"] != strconv.Itoa(groups+1) {
					t.Fatalf("metadata %v", md)
				}
			}
			noisy, tr := keySums(rel, values, keys)
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

// keySums reads a release of key groups' means: per key value (ascending),
// the released sum bag_mean·n and the true sum.
func keySums(rel *Release, values []float64, keys []int64) (noisy, truth []float64) {
	sim := rel.Simulation()
	type acc struct{ mean, n, s float64 }
	by := map[int64]*acc{}
	for i, row := range sim.Row {
		k := keys[row]
		a := by[k]
		if a == nil {
			a = &acc{mean: sim.BagMean[i]}
			by[k] = a
		}
		a.n++
		a.s += values[row]
	}
	for k := int64(0); k < int64(len(by)); k++ {
		a := by[k]
		noisy, truth = append(noisy, a.mean*a.n), append(truth, a.s)
	}
	return noisy, truth
}
