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
}

// Bytes is the whole estimate.
func (f Footprint) Bytes() float64 { return f.StateBytes + f.ActivationBytes }

// Footprint estimates a group of r replicas training batch rows per step
// per replica on m (with defaults: call WithDefaults first).
func (m ModelConfig) Footprint(r, batch int) Footprint {
	var params, units float64
	in := float64(m.InputDim)
	if m.Kind == KindKDDEmbed {
		params += float64(m.Buckets+1) * float64(m.EmbedDim)
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
	return Footprint{Params: params, StateBytes: 3 * 4 * params * rr, ActivationBytes: 4 * 4 * units * float64(batch) * rr}
}
