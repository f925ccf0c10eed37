package model

import (
	"fmt"
	"slices"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best dot-imported.
)

// trainer is the state of one TrainGroup call: its validated configuration
// and program shape (validate.go), and the group's state on the device,
// which this file creates (from a checkpoint or the replicas' seeds),
// snapshots to the host, reads losses from and releases.
type trainer struct {
	cfg        GroupConfig
	m          ModelConfig
	s          trainShape
	be         backends.Backend
	specs      []paramSpec // every parameter
	gspecs     []paramSpec // those the program holds (all but a host-kept table)
	host       *hostEmbedding
	spe, total int64 // steps per epoch, steps in all
	fp         string
	prog       *Graph
	state      []backends.Buffer // program params, m, v (len(gspecs) each), loss accumulator
	consts     []backends.Buffer // flip, prior [R]
	feats      backends.Buffer   // resident features, or nil
	feed       *feeder           // this step's batches
	next       *feeder           // the next step's, read while the program runs
}

func (t *trainer) notice(msg string) {
	if t.cfg.Notices != nil {
		t.cfg.Notices(t.cfg.Name + ": " + msg)
	}
}

func (t *trainer) wrap(err error) error { return fmt.Errorf("model: group %q: %w", t.cfg.Name, err) }

// loadState puts the group's state on the device — a checkpoint's
// (returned; nil when none was found) or the replicas' initialization —
// with the per-replica constants and resident features, and makes the
// step feeders.
func (t *trainer) loadState() (*ckptHeader, error) {
	t.state = make([]backends.Buffer, 3*len(t.gspecs)+1)
	if t.s.feed == feedSparseHost {
		t.host = newHostEmbedding(t.s.r, t.m.Buckets, t.m.EmbedDim, t.s.u)
		t.host.threads = func() int { return threadsOf(t.be) }
	}
	h, err := t.resume()
	if err != nil {
		return nil, err
	}
	if h == nil {
		if err := t.initialState(); err != nil {
			return nil, err
		}
	}
	if err := t.resetLossAcc(); err != nil {
		return nil, err
	}
	if err := t.uploadConsts(); err != nil {
		return nil, err
	}
	if t.s.feed == feedResident {
		if t.feats, err = t.upload(t.cfg.Features.X, t.s.n, t.s.d); err != nil {
			return nil, fmt.Errorf("uploading %d×%d features: %w", t.s.n, t.s.d, err)
		}
	}
	t.feed = newFeeder(t.s, t.cfg.Features, t.m.Buckets)
	t.next = newFeeder(t.s, t.cfg.Features, t.m.Buckets)
	return h, nil
}

// stateTensors names and shapes the checkpointed state (params, m, v).
func (t *trainer) stateTensors() []ckptTensor {
	var ts []ckptTensor
	for _, prefix := range []string{"param/", "adam_m/", "adam_v/"} {
		for _, p := range t.specs {
			ts = append(ts, ckptTensor{Name: prefix + p.name, Dims: p.dims(t.s.r)})
		}
	}
	return ts
}

// stateSlot maps checkpoint tensor i (stateTensors order) to the part of a
// host-kept table it is (0 values, 1 and 2 moments; −1: none) or to its
// index in t.state.
func (t *trainer) stateSlot(i int) (hostPart, state int) {
	n := len(t.specs)
	kind, p := i/n, i%n
	if t.host != nil {
		if p == 0 {
			return kind, -1
		}
		return -1, kind*len(t.gspecs) + p - 1
	}
	return -1, i
}

// resume restores the newest checkpoint of the group's directory into its
// state and returns its header (nil when there is none, or no directory).
func (t *trainer) resume() (*ckptHeader, error) {
	if t.cfg.CheckpointDir == "" {
		return nil, nil
	}
	h, data, err := loadCheckpoint(t.cfg.CheckpointDir, t.fp, t.notice)
	if err != nil || h == nil {
		return nil, err
	}
	return h, t.restore(h, data)
}

// restore uploads a checkpoint's state.
func (t *trainer) restore(h *ckptHeader, data [][]float32) error {
	want := t.stateTensors()
	if len(h.Tensors) != len(want) {
		return fmt.Errorf("%w: checkpoint has %d tensors, want %d", ErrCheckpointMismatch, len(h.Tensors), len(want))
	}
	for i, w := range want {
		if h.Tensors[i].Name != w.Name || !slices.Equal(h.Tensors[i].Dims, w.Dims) {
			return fmt.Errorf("%w: checkpoint tensor %s%v, want %s%v", ErrCheckpointMismatch, h.Tensors[i].Name, h.Tensors[i].Dims, w.Name, w.Dims)
		}
		if part, _ := t.stateSlot(i); part >= 0 {
			t.host.set(part, data[i])
			data[i] = nil
			continue
		}
		b, err := t.upload(data[i], w.Dims...)
		if err != nil {
			return err
		}
		_, j := t.stateSlot(i)
		t.state[j] = b
		data[i] = nil
	}
	return nil
}

// snapshotInto copies the state (params and moments) to the host.
//
// The parts of a host-kept table are not copied: the snapshot reads them
// from the live table while it is written (snapshot.read), so it must be
// written before the next step (liveHost reports it).
func (t *trainer) snapshotInto(s *snapshot) error {
	s.tensors = t.stateTensors()
	if s.data == nil {
		s.data = make([][]float32, len(s.tensors))
		s.read = make([]func([]float32, int), len(s.tensors))
	}
	for i, ts := range s.tensors {
		part, j := t.stateSlot(i)
		if part >= 0 {
			t.host.flush()
			s.data[i], s.read[i] = nil, func(dst []float32, off int) { t.host.getRange(part, dst, off) }
			continue
		}
		if n := ts.size(); len(s.data[i]) != n {
			s.data[i] = make([]float32, n)
		}
		if err := t.be.BufferToFlatData(t.state[j], s.data[i]); err != nil {
			return err
		}
	}
	return nil
}

// liveHost reports whether a snapshot of t reads a host-kept table in
// place (the checkpoint must then be written before training goes on).
func (t *trainer) liveHost() bool { return t.host != nil }

// upload creates a backend buffer from host data.
func (t *trainer) upload(flat any, dims ...int) (backends.Buffer, error) {
	shape := f32(dims...)
	if _, ok := flat.([]int32); ok {
		shape = i32(dims...)
	}
	return t.be.BufferFromFlatData(0, flat, shape)
}

// initialState uploads the replicas' initial parameters and zero moments
// (a host-kept table stays on the host).
func (t *trainer) initialState() error {
	r := t.s.r
	host := make([][]float32, len(t.specs))
	for i, p := range t.specs {
		if i == 0 && t.host != nil {
			continue // written in place below
		}
		host[i] = make([]float32, r*p.size())
	}
	dst := make([][]float32, len(t.specs))
	for k, rep := range t.cfg.Replicas {
		for i, p := range t.specs {
			if host[i] != nil {
				dst[i] = host[i][k*p.size() : (k+1)*p.size()]
			}
		}
		var tableRow func(int) []float32
		if t.host != nil { // replica k's rows start at k·(Buckets+1); moments stay zero
			base := k * (t.m.Buckets + 1)
			tableRow = func(row int) []float32 { return t.host.row(base+row, 0) }
		}
		t.m.initReplicaRows(rep.Seed, dst, tableRow)
	}
	if t.host != nil {
		host = host[1:]
	}
	np := len(t.gspecs)
	zeros := map[int][]float32{}
	for i, p := range t.gspecs {
		b, err := t.upload(host[i], p.dims(r)...)
		if err != nil {
			return err
		}
		t.state[i] = b
		host[i] = nil
		n := r * p.size()
		if zeros[n] == nil {
			zeros[n] = make([]float32, n)
		}
		for _, j := range []int{np + i, 2*np + i} {
			if t.state[j], err = t.upload(zeros[n], p.dims(r)...); err != nil {
				return err
			}
		}
	}
	return nil
}

// uploadConsts uploads each replica's loss parameters: flip [R], prior [R].
func (t *trainer) uploadConsts() error {
	r := t.s.r
	flip, prior := make([]float32, r), make([]float32, r)
	for i, rep := range t.cfg.Replicas {
		flip[i], prior[i] = float32(rep.Params.FlipProb), float32(rep.Params.Prior)
	}
	t.consts = make([]backends.Buffer, 2)
	for i, v := range [][]float32{flip, prior} {
		var err error
		if t.consts[i], err = t.upload(v, r); err != nil {
			return err
		}
	}
	return nil
}

// resetLossAcc replaces the loss accumulator with zeros.
func (t *trainer) resetLossAcc() error {
	i := len(t.state) - 1
	if t.state[i] != nil {
		_ = t.be.BufferFinalize(t.state[i])
	}
	var err error
	t.state[i], err = t.upload(make([]float32, t.s.r), t.s.r)
	return err
}

// readLossAcc reads the accumulated losses back and resets the accumulator.
func (t *trainer) readLossAcc() ([]float64, error) {
	acc := make([]float32, t.s.r)
	if err := t.be.BufferToFlatData(t.state[len(t.state)-1], acc); err != nil {
		return nil, err
	}
	out := make([]float64, len(acc))
	for i, v := range acc {
		out[i] = float64(v)
	}
	return out, t.resetLossAcc()
}

// handOver moves the trained parameters out of the state, as Group.params
// holds them (a host-kept table uploaded first), and releases the rest.
func (t *trainer) handOver() ([]backends.Buffer, error) {
	np := len(t.gspecs)
	params := make([]backends.Buffer, np)
	copy(params, t.state[:np])
	clear(t.state[:np])
	if t.host != nil {
		table, err := t.hostTableBuffer()
		if err != nil {
			for _, b := range params {
				_ = t.be.BufferFinalize(b)
			}
			return nil, err
		}
		params = append([]backends.Buffer{table}, params...)
		t.host.free()
		t.host = nil
	}
	t.release()
	return params, nil
}

// hostTableBuffer puts the host-kept table's values on the backend for
// prediction, ending training's use of the table: its values are compacted
// in place and the moments' pages released first, then copied into a
// backend buffer (kdd_embed: 100 MB next to 100 MB, not to the whole 300 MB
// table plus a host copy). The caller frees the table.
func (t *trainer) hostTableBuffer() (backends.Buffer, error) {
	dims := t.specs[0].dims(t.s.r)
	values := t.host.compactValues()
	if t.be.HasSharedBuffers() {
		buf, flat, err := t.be.NewSharedBuffer(0, f32(dims...))
		if err != nil {
			return nil, err
		}
		if dst, ok := flat.([]float32); ok && len(dst) == len(values) {
			copy(dst, values)
			return buf, nil
		}
		_ = t.be.BufferFinalize(buf)
	}
	return t.upload(values, dims...)
}

// release finalizes every buffer the trainer still holds.
func (t *trainer) release() {
	for _, bs := range [][]backends.Buffer{t.state, t.consts} {
		for i, b := range bs {
			if b != nil {
				_ = t.be.BufferFinalize(b)
				bs[i] = nil
			}
		}
	}
	if t.feats != nil {
		_ = t.be.BufferFinalize(t.feats)
		t.feats = nil
	}
	if t.host != nil {
		t.host.free()
		t.host = nil
	}
}
