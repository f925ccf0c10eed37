package audit

import "labelprivacy/pets"

// chanOf returns the channel m's law sends an example of the given prior
// through (nil: its prior-free channel).
func chanOf(m *pets.Mechanism, prior []float64) *pets.Channel {
	ex := m.ExampleLaw()
	ch := ex.Channel(ex.ChannelOf(prior))
	return &ch
}

// setChan returns rr_prior's channel over the classes of mask: the one a
// prior uniform over them chooses (its top-k mass k/k beats every other
// k).
func setChan(m *pets.Mechanism, mask uint64) *pets.Channel {
	c := m.Classes()
	prior := make([]float64, c)
	k := 0
	for y := range c {
		if mask>>y&1 == 1 {
			k++
		}
	}
	for y := range c {
		if mask>>y&1 == 1 {
			prior[y] = 1 / float64(k)
		}
	}
	return chanOf(m, prior)
}

// binaryPriors returns the priors (1 − p, p) of scalar priors p, as the
// binary laws take them.
func binaryPriors(p []float64) []float64 {
	out := make([]float64, 2*len(p))
	for i, v := range p {
		out[2*i], out[2*i+1] = 1-v, v
	}
	return out
}
