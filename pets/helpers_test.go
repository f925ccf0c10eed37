package pets

// Test helpers over the laws: the release calls of the kinds without a
// prior, rr_prior's on two classes with scalar priors, and a bag's
// target.

// releaseRR releases labels through m's prior-free channel.
func releaseRR(m *Mechanism, dst, labels []uint8, r Rand) {
	if len(dst) != len(labels) {
		panic("releaseRR: lengths differ")
	}
	m.ExampleLaw().Release(dst, labels, nil, r)
}

// binaryPriors returns the priors (1 − p, p) of scalar priors p.
func binaryPriors(p []float64) []float64 {
	out := make([]float64, 2*len(p))
	for i, v := range p {
		out[2*i], out[2*i+1] = 1-v, v
	}
	return out
}

// priorBranch is rr_prior's binary branch for prior p.
func priorBranch(m *Mechanism, p float64) (uint8, bool) {
	return m.ExampleLaw().(*priorLaw).branch(p)
}

// releaseRRPrior releases binary labels through rr_prior with scalar
// priors, recording each row's branch in argmax (true: the channel shows
// nothing).
func releaseRRPrior(m *Mechanism, dst, labels []uint8, prior []float64, argmax []bool, r Rand) {
	ex := m.ExampleLaw()
	v := binaryPriors(prior)
	ex.Release(dst, labels, v, r)
	for i := range argmax {
		ch := ex.Channel(ex.ChannelOf(v[2*i : 2*i+2]))
		argmax[i] = !ch.Informative()
	}
}

// debias is the binary BagLaw's Target of one proportion.
func debias(m *Mechanism, alpha float64, n int) float64 {
	d := []float64{alpha}
	m.BagLaw().Target(d, d, n)
	return d[0]
}
