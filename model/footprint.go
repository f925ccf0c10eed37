package model

// Footprint is what training one group holds in memory, estimated from
// its shape before anything is allocated (float64: absurd configurations
// must not overflow the estimate that refuses them).
type Footprint struct {
	// Params is one replica's parameter count.
	Params float64
	// StateBytes is every replica's parameters and Adam's two moments
	// (StateBytes, float32).
	StateBytes float64
	// ActivationBytes is a training step's activations: for every replica
	// and layer, batch rows of its input, pre-activation and their
	// gradients (four float32 per unit), and kdd_embed's gathered rows.
	ActivationBytes float64
	// TableParams is, of Params, kdd_embed's embedding table (kept on the
	// host and updated in place on backend go).
	TableParams float64
	// Replicas is the group's number of models.
	Replicas int
}

// GoStateCopies is how many float32 copies of its parameters (but a
// host-kept embedding table) a group holds at its peak on backend go,
// where StateBytes counts three (the parameters and Adam's two moments).
// Measured (2-core EPYC, batch 64, one model): mlp 4→8000→8000→1, 64M
// parameters, grew the process's peak address space (VmPeak) by 3.15 GB,
// 12.3 copies of its 256 MB of parameters, and its peak RSS by 2.76 GB,
// 10.8 copies; mlp 4→4000→4000→1 by 11.3 and 9.8. They are the initial
// values on the host and uploaded, the moments and the zeros they start
// from, the gradients, a step's outputs before its inputs are freed, and
// buffers the backend keeps for reuse.
const GoStateCopies = 12.5

// GoBytes is Bytes on backend go: the parameters GoStateCopies times
// (kdd_embed's host table three times: itself and its moments, updated in
// place), and the activations. A guard of host memory against Bytes let a
// model through that needed three to four times as much (a 214-line
// out-of-memory dump under `ulimit -v`).
func (f Footprint) GoBytes() float64 {
	r := float64(f.Replicas)
	return GoStateCopies*4*(f.Params-f.TableParams)*r + 3*4*f.TableParams*r + f.ActivationBytes
}

// Bytes is the whole estimate.
func (f Footprint) Bytes() float64 { return f.StateBytes + f.ActivationBytes }

// Footprint estimates a group of r replicas training batch rows per step
// per replica on m (with defaults: call WithDefaults first).
func (m ModelConfig) Footprint(r, batch int) Footprint {
	var params, table, units float64
	in := float64(m.InputDim)
	if m.Kind == KindKDDEmbed {
		table = float64(m.Buckets+1) * float64(m.EmbedDim)
		params += table
		in = float64(m.EmbedDim)
		units += float64(m.EmbedDim) * 16 // ~11 gathered rows per example (KDD12), summed
	}
	units += in
	for _, h := range append(append([]int(nil), m.Hidden...), 1) {
		out := float64(h)
		params += (in + 1) * out
		units += out
		in = out
	}
	rr := float64(r)
	return Footprint{Params: params, StateBytes: 3 * 4 * params * rr, ActivationBytes: 4 * 4 * units * float64(batch) * rr,
		TableParams: table, Replicas: r}
}
