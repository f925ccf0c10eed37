package pipeline

import (
	"math/bits"

	"labelprivacy/pets"
)

// binaryBranch is what a binary prior p = P(y = 1 | x) does to a row of a
// kind released with a prior: whether its channel shows nothing (rr_prior's
// argmax branch) and then the one label it releases.
func binaryBranch(m *pets.Mechanism, p float64) (label uint8, argmax bool) {
	ex := m.ExampleLaw()
	ch := ex.Channel(ex.ChannelOf([]float64{1 - p, p}))
	if ch.Informative() {
		return 0, false
	}
	return uint8(bits.TrailingZeros64(ch.Support())), true
}
