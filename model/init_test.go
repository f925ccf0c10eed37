package model

import (
	"github.com/gomlx/gomlx/backends"
	"math"
	"slices"
	"testing"
)

// TestInitDistributions draws a 400→300 layer (120,000 weights, 300 biases)
// with each Init and checks the range, mean and variance against the
// definition. Tolerances are 6 standard errors of the sample mean and
// variance (false-failure rate < 1e-8 per check); a 10% error in a bound or
// standard deviation moves the variance by ≥ 19% of its value, about 60
// standard errors at this size.
func TestInitDistributions(t *testing.T) {
	const in, out = 400, 300
	tests := []struct {
		init       Init
		wVar       float64 // variance of a weight
		wBound     float64 // |w| ≤ bound (uniform), 0: unbounded
		bVar       float64 // variance of a bias (0: all zero)
		uniformish bool
	}{
		{InitUniformFanIn, 1.0 / (3 * in), 1 / math.Sqrt(in), 1.0 / (3 * in), true},
		{InitGlorotUniform, 6.0 / (in + out) / 3, math.Sqrt(6.0 / (in + out)), 0, true},
		{InitHeNormal, 2.0 / in, 0, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.init.String(), func(t *testing.T) {
			m, err := ModelConfig{Kind: KindMLP, InputDim: in, Hidden: []int{out}, Init: tc.init}.WithDefaults()
			if err != nil {
				t.Fatal(err)
			}
			specs := m.params()
			vals := make([][]float32, len(specs))
			for i, p := range specs {
				vals[i] = make([]float32, p.size())
			}
			m.initReplica(42, vals)
			check := func(name string, v []float32, wantVar, bound float64) {
				n := float64(len(v))
				var sum, sq float64
				for _, x := range v {
					if bound > 0 && math.Abs(float64(x)) > bound {
						t.Fatalf("%s: %v outside ±%v", name, x, bound)
					}
					sum += float64(x)
					sq += float64(x) * float64(x)
				}
				mean := sum / n
				variance := sq/n - mean*mean
				if wantVar == 0 {
					if sq != 0 {
						t.Fatalf("%s: want zeros, got variance %v", name, variance)
					}
					return
				}
				kurt := 3.0 // normal; uniform: 9/5
				if bound > 0 {
					kurt = 1.8
				}
				seMean, seVar := math.Sqrt(wantVar/n), wantVar*math.Sqrt((kurt-1)/n)
				if math.Abs(mean) > 6*seMean || math.Abs(variance-wantVar) > 6*seVar {
					t.Errorf("%s: mean %.3g (6σ %.3g), variance %.4g want %.4g (6σ %.3g)", name, mean, 6*seMean, variance, wantVar, 6*seVar)
				}
			}
			check("dense_0 weights", vals[0], tc.wVar, tc.wBound)
			if tc.bVar > 0 {
				check("dense_0 biases", vals[1], tc.bVar, tc.wBound)
			} else {
				check("dense_0 biases", vals[1], 0, 0)
			}
		})
	}
}

// TestInitDependsOnSeedOnly: a group's stacked initial parameters hold, for
// each replica, exactly initReplica(its seed), whatever its position; other
// seeds give other weights.
func TestInitDependsOnSeedOnly(t *testing.T) {
	w, b := trueModel(5, 1, 1)
	tr := makeLogistic(64, w, b, 1)
	feat := denseFrame(tr.X, 5)
	seeds := []uint64{9, 3, 9, 77}
	tt := &trainer{cfg: GroupConfig{Name: "init", Backend: goBackend(t), Model: ModelConfig{Kind: KindMLP, InputDim: 5, Hidden: []int{4}},
		Loss: LossBCE, Features: feat}}
	for _, s := range seeds {
		tt.cfg.Replicas = append(tt.cfg.Replicas, Replica{Seed: s, Source: source(t, feat, srcOpts{labels: tr.Y, batch: 16})})
	}
	if err := tt.validate(); err != nil {
		t.Fatal(err)
	}
	tt.state = make([]backends.Buffer, 3*len(tt.gspecs)+1)
	if err := tt.initialState(); err != nil {
		t.Fatal(err)
	}
	defer tt.release()
	for i, p := range tt.specs {
		stacked := make([]float32, len(seeds)*p.size())
		if err := tt.be.BufferToFlatData(tt.state[i], stacked); err != nil {
			t.Fatal(err)
		}
		for k, s := range seeds {
			want := make([][]float32, len(tt.specs))
			for j, q := range tt.specs {
				want[j] = make([]float32, q.size())
			}
			tt.m.initReplica(s, want)
			if got := stacked[k*p.size() : (k+1)*p.size()]; !slices.Equal(got, want[i]) {
				t.Fatalf("%s of replica %d (seed %d) is not initReplica(%d)", p.name, k, s, s)
			}
		}
		if slices.Equal(stacked[:p.size()], stacked[p.size():2*p.size()]) {
			t.Fatalf("%s: seeds 9 and 3 drew the same values", p.name)
		}
	}
}

// TestHostTableInit: kdd_embed's host-kept table is initialized row by row
// in place; each replica's rows hold exactly initReplica(its seed)'s
// table, the trash row and both moments zero.
func TestHostTableInit(t *testing.T) {
	const width, buckets = 4, 37
	idx, mask, y := sparseData(64, width, buckets, 3)
	feat := sparseFrame(idx, mask, width)
	seeds := []uint64{5, 8}
	tt := &trainer{cfg: GroupConfig{Name: "hostinit", Backend: goBackend(t), Model: ModelConfig{Kind: KindKDDEmbed, Buckets: buckets},
		Loss: LossBCE, Features: feat, SparseEmbedding: true, Resident: ResidentNever}}
	for _, s := range seeds {
		tt.cfg.Replicas = append(tt.cfg.Replicas, Replica{Seed: s, Source: source(t, feat, srcOpts{labels: y, batch: 16})})
	}
	if err := tt.validate(); err != nil {
		t.Fatal(err)
	}
	tt.state = make([]backends.Buffer, 3*len(tt.gspecs)+1)
	tt.host = newHostEmbedding(tt.s.r, tt.m.Buckets, tt.m.EmbedDim, tt.s.u)
	if err := tt.initialState(); err != nil {
		t.Fatal(err)
	}
	defer tt.release()
	e := tt.m.EmbedDim
	for k, s := range seeds {
		want := make([][]float32, len(tt.specs))
		for j, q := range tt.specs {
			want[j] = make([]float32, q.size())
		}
		tt.m.initReplica(s, want)
		for row := range buckets + 1 {
			got := tt.host.row(k*(buckets+1)+row, 0)
			if !slices.Equal(got, want[0][row*e:(row+1)*e]) {
				t.Fatalf("replica %d (seed %d) table row %d is not initReplica's", k, s, row)
			}
			for part := 1; part < 3; part++ {
				if slices.ContainsFunc(tt.host.row(k*(buckets+1)+row, part), func(v float32) bool { return v != 0 }) {
					t.Fatalf("replica %d row %d: moment %d not zero", k, row, part)
				}
			}
		}
	}
}
