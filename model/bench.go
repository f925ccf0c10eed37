package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/gomlx/gomlx/backends"

	"labelprivacy/data"
)

// BenchConfig configures Bench. Zero fields take the defaults of the paper's
// Higgs benchmark: higgs_mlp on 28 features, losses bce,
// debiased_bce and propmatch (bags of 64), R ∈ {1, 8, 64}, 1024 rows per
// replica and step, 20 timed steps. A model of C ≥ 3 classes
// (Model.Classes) defaults to the losses ce, forward_ce and propmatch_ce.
type BenchConfig struct {
	Model    ModelConfig // default higgs_mlp, InputDim 28
	Losses   []Loss
	Replicas []int
	Batch    int // rows per replica and step
	BagSize  int // per-bag losses (default 64)
	Steps    int // steps per group; the first (warm-up) is not timed
	// Width is the indices per row of kdd_embed's synthetic rows (default 11,
	// KDD12's), drawn uniformly from the model's buckets.
	Width           int
	SparseEmbedding bool
	Resident        ResidentMode
	Seed            uint64
	// Alongside, when not empty, holds more backends of the same kind: each
	// (loss, R) is then measured as 1+len(Alongside) independent groups
	// trained at once, one on the backend Bench is given and one on each of
	// these, with their own seeds, targets and data order, sharing the
	// cores through a CoreShare (as train fit trains groups concurrently).
	// The row's rates are then the aggregate over the window from the end
	// of the first group's first step to the end of the last group (the
	// steps that ran before a group's first step ended are not counted:
	// a slight underestimate).
	Alongside []backends.Backend
	// Row, when set, is called with each row as soon as it is measured.
	Row func(BenchRow)
}

// BenchRow is one measured group.
type BenchRow struct {
	Model    string
	Loss     string
	Replicas int
	// Groups is the number of independent groups of Replicas models trained
	// at once (1 + len(BenchConfig.Alongside)).
	Groups int
	Batch  int
	Steps  int
	// CompileS is the program's compile time (0 when the process had it).
	CompileS float64
	// ExamplesPerS is the aggregate steady-state rate of every model of
	// every group (first step excluded); PerReplicaExamplesPerS =
	// ExamplesPerS / (Replicas·Groups).
	ExamplesPerS, PerReplicaExamplesPerS float64
	// CPUPerExampleUs is the process's CPU µs per example in the same steady
	// state (Group.CPUPerExampleUs): robust to other load on the machine.
	CPUPerExampleUs float64
	// StateBytes is the parameters and Adam moments of every group.
	StateBytes int64
}

func (c BenchConfig) withDefaults() BenchConfig {
	if c.Model.Kind == 0 {
		c.Model = ModelConfig{Kind: KindHiggsMLP, InputDim: 28}
	}
	if c.Losses == nil {
		c.Losses = []Loss{LossBCE, LossDebiasedBCE, LossPropMatch}
		if c.Model.Classes >= 3 {
			c.Losses = []Loss{LossCE, LossForwardCE, LossPropMatchCE}
		}
	}
	if c.Replicas == nil {
		c.Replicas = []int{1, 8, 64}
	}
	if c.Batch == 0 {
		c.Batch = 1024
	}
	if c.BagSize == 0 {
		c.BagSize = 64
	}
	if c.Steps == 0 {
		c.Steps = 20
	}
	if c.Width == 0 {
		c.Width = 11
	}
	return c
}

// Bench measures training throughput on backend be: for each loss and each
// R, one group trains Steps steps on synthetic data shaped like the model's
// (standard normal dense features; uniform bucket indices), each replica
// with its own targets and order.
func Bench(ctx context.Context, be backends.Backend, cfg BenchConfig) ([]BenchRow, error) {
	cfg = cfg.withDefaults()
	m, err := cfg.Model.WithDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.Batch < 1 || cfg.Steps < 2 || slices.ContainsFunc(cfg.Replicas, func(r int) bool { return r < 1 }) {
		return nil, fmt.Errorf("%w: bench needs Batch ≥ 1, Steps ≥ 2 and R ≥ 1", ErrInvalidConfig)
	}
	rows := cfg.Batch * cfg.Steps
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x62656e6368)) // "bench"
	feat := &data.Features{Rows: rows}
	if m.Kind == KindKDDEmbed {
		feat.Offsets = make([]int64, rows+1)
		feat.Indices = make([]uint32, 0, rows*cfg.Width)
		for i := range rows {
			for range cfg.Width {
				feat.Indices = append(feat.Indices, uint32(rng.IntN(m.Buckets)))
			}
			feat.Offsets[i+1] = int64(len(feat.Indices))
		}
	} else {
		feat.Names = make([]string, m.InputDim)
		for i := range feat.Names {
			feat.Names[i] = fmt.Sprintf("x%d", i)
		}
		feat.X = make([]float32, rows*m.InputDim)
		for i := range feat.X {
			feat.X[i] = float32(rng.NormFloat64())
		}
	}
	bes := append([]backends.Backend{be}, cfg.Alongside...)
	var out []BenchRow
	for _, loss := range cfg.Losses {
		for _, r := range cfg.Replicas {
			gcs := make([]GroupConfig, len(bes))
			for k, gbe := range bes {
				reps := make([]Replica, r)
				for i := range reps {
					var src BatchSource
					var p LossParams
					var err error
					if m.multiclass() {
						src, p = benchClassSource(feat.Rows, m.Classes, loss, cfg, rng)
					} else {
						src, p, err = benchSource(feat, loss, cfg, rng)
					}
					if err != nil {
						return out, err
					}
					reps[i] = Replica{Name: fmt.Sprintf("bench%d", i), Seed: rng.Uint64(), LR: 1e-3, Params: p, Source: src}
				}
				gcs[k] = GroupConfig{Name: fmt.Sprintf("bench %s %s R=%d #%d", m.Kind, loss, r, k), Backend: gbe, Model: m,
					Loss: loss, Features: feat, Replicas: reps, SparseEmbedding: cfg.SparseEmbedding, Resident: cfg.Resident,
					LossEvery: cfg.Steps}
			}
			gs, err := trainAtOnce(ctx, gcs)
			if err != nil {
				return out, err
			}
			row := BenchRow{Model: m.Kind.String(), Loss: loss.String(), Replicas: r, Groups: len(gs), Batch: cfg.Batch,
				Steps: cfg.Steps, StateBytes: int64(len(gs)) * m.StateBytes(r)}
			if len(gs) == 1 {
				row.CompileS, row.ExamplesPerS, row.CPUPerExampleUs = gs[0].CompileS, gs[0].ExamplesPerS, gs[0].CPUPerExampleUs
			} else {
				row.CompileS, row.ExamplesPerS, row.CPUPerExampleUs = combineSteady(gs)
			}
			row.PerReplicaExamplesPerS = row.ExamplesPerS / float64(r*len(gs))
			for _, g := range gs {
				g.Close()
			}
			out = append(out, row)
			if cfg.Row != nil {
				cfg.Row(row)
			}
		}
	}
	return out, nil
}

// trainAtOnce trains the groups concurrently, each on its own backend,
// sharing the cores (CoreShare); one group trains on the caller's
// goroutine with the cores to itself.
func trainAtOnce(ctx context.Context, gcs []GroupConfig) ([]*Group, error) {
	if len(gcs) == 1 {
		g, err := TrainGroup(ctx, gcs[0])
		if err != nil {
			return nil, err
		}
		return []*Group{g}, nil
	}
	share := NewCoreShare(0)
	gs := make([]*Group, len(gcs))
	errs := make([]error, len(gcs))
	var wg sync.WaitGroup
	for k := range gcs {
		wg.Go(func() {
			defer share.Enter(gcs[k].Backend)()
			gs[k], errs[k] = TrainGroup(ctx, gcs[k])
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, g := range gs {
			if g != nil {
				g.Close()
			}
		}
		return nil, err
	}
	return gs, nil
}

// combineSteady is the aggregate of groups trained at once over the window
// from the earliest end of a first step to the latest end: the largest
// compile time, the examples of every group's steady state per second of
// that window, and the process's CPU µs per example in it (0 where CPU time
// is not measured).
func combineSteady(gs []*Group) (compileS, examplesPerS, cpuPerExampleUs float64) {
	var from, to time.Time
	var cpuFrom, cpuTo time.Duration
	var examples int64
	for _, g := range gs {
		compileS = max(compileS, g.CompileS)
		st := g.steady
		if st.examples == 0 {
			continue
		}
		if from.IsZero() || st.from.Before(from) {
			from, cpuFrom = st.from, st.cpuFrom
		}
		if st.to.After(to) {
			to, cpuTo = st.to, st.cpuTo
		}
		examples += st.examples
	}
	if examples == 0 || !to.After(from) {
		return compileS, 0, 0
	}
	examplesPerS = float64(examples) / to.Sub(from).Seconds()
	if cpuTo > cpuFrom {
		cpuPerExampleUs = (cpuTo - cpuFrom).Seconds() * 1e6 / float64(examples)
	}
	return compileS, examplesPerS, cpuPerExampleUs
}

// benchSource makes one replica's source: random 0/1 labels (bce,
// debiased_bce with π = 0.25) or random bag proportions (per-bag losses).
func benchSource(feat *data.Features, loss Loss, cfg BenchConfig, rng *rand.Rand) (*data.BatchSource, LossParams, error) {
	f := &data.Frame{Rows: feat.Rows}
	o := data.BatchOptions{BatchSize: cfg.Batch, Shuffle: true, Seed: rng.Uint64(), DropLast: true, Features: feat, IndexOnly: true}
	var p LossParams
	if loss.PerBag() {
		k := cfg.BagSize
		f.BagID, f.Alpha = make([]int64, f.Rows), make([]float64, f.Rows)
		a := 0.0
		for i := range f.Rows {
			if i%k == 0 {
				a = float64(rng.IntN(k+1)) / float64(k)
			}
			f.BagID[i], f.Alpha[i] = int64(i/k), a
		}
		o.Target, o.BagSize = data.TargetAlpha, k
		o.BatchSize = max(1, cfg.Batch/k) * k
		p.Prior = 0.5
	} else {
		f.LabelRR = make([]uint8, f.Rows)
		for i := range f.LabelRR {
			f.LabelRR[i] = uint8(rng.IntN(2))
		}
		o.Target = data.TargetLabelRR
		if loss == LossDebiasedBCE {
			p.FlipProb = 0.25
		}
	}
	s, err := data.NewBatchSource(f, o)
	return s, p, err
}

// benchClassSource makes one replica's source for a model of c classes:
// random one-hot labels (ce; forward_ce and backward_ce with flip
// probability ½·(c−1)/c) or random class-proportion vectors of bags
// (propmatch_ce).
func benchClassSource(rows, c int, loss Loss, cfg BenchConfig, rng *rand.Rand) (BatchSource, LossParams) {
	var p LossParams
	if loss == LossForwardCE || loss == LossBackwardCE {
		p.FlipProb = 0.5 * float64(c-1) / float64(c)
	}
	if !loss.PerBag() {
		t := make([]float32, rows*c)
		for i := range rows {
			t[i*c+rng.IntN(c)] = 1
		}
		return newMemSource(t, c, 0, cfg.Batch, rng.Uint64()), p
	}
	k := cfg.BagSize
	t := make([]float32, rows/k*c)
	for u := range rows / k {
		for range k {
			t[u*c+rng.IntN(c)] += 1 / float32(k)
		}
	}
	return newMemSource(t, c, k, max(1, cfg.Batch/k)*k, rng.Uint64()), p
}

// memSource is a BatchSource over targets held in memory: width values per
// row (bag = 0) or per bag of bag consecutive rows (row u·bag+j is member j
// of bag u), batch rows per batch (whole bags; a partial last batch is
// dropped), units shuffled every epoch from PCG(seed, epoch). Bench feeds
// C-class groups with it (synthetic targets), as the tests do.
type memSource struct {
	width, bag, batch int
	seed              uint64
	targets           []float32 // units × width
	units             int
	order             []int32
	pos               int
	b                 data.Batch
}

// newMemSource makes a source over targets (units × width).
func newMemSource(targets []float32, width, bag, batch int, seed uint64) *memSource {
	s := &memSource{width: width, bag: bag, batch: batch, seed: seed, targets: targets, units: len(targets) / width}
	s.order = make([]int32, s.units)
	s.SeekEpoch(0)
	return s
}

func (s *memSource) perBatch() int { return s.batch / max(s.bag, 1) }

// SeekEpoch implements BatchSource.
func (s *memSource) SeekEpoch(e uint64) {
	for i := range s.order {
		s.order[i] = int32(i)
	}
	r := rand.New(rand.NewPCG(s.seed, e))
	r.Shuffle(len(s.order), func(i, j int) { s.order[i], s.order[j] = s.order[j], s.order[i] })
	s.pos = 0
}

// Next implements BatchSource.
func (s *memSource) Next() (*data.Batch, error) {
	per := s.perBatch()
	if s.pos+per > s.units {
		return nil, io.EOF
	}
	b := &s.b
	b.Rows, b.BagSize, b.TargetWidth = s.batch, s.bag, s.width
	b.RowIDs, b.Target = b.RowIDs[:0], b.Target[:0]
	for _, u := range s.order[s.pos : s.pos+per] {
		if s.bag == 0 {
			b.RowIDs = append(b.RowIDs, u)
		} else {
			for j := range s.bag {
				b.RowIDs = append(b.RowIDs, u*int32(s.bag)+int32(j))
			}
		}
		b.Target = append(b.Target, s.targets[int(u)*s.width:(int(u)+1)*s.width]...)
	}
	s.pos += per
	return b, nil
}

// BatchesPerEpoch implements BatchSource.
func (s *memSource) BatchesPerEpoch() int { return s.units / s.perBatch() }

// Units implements BatchSource.
func (s *memSource) Units() int { return s.units }
