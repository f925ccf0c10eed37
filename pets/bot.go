package pets

// bot is M_⊥ (Section 2): it releases nothing about the labels (ε = 0),
// the baseline of the uninformed adversary. Nothing is trained (its best
// model is a constant score); the audit sees one uninformative release.
type botScheme struct{}

// Bot is ⊥: nothing released.
const Bot Kind = 1

var _ = builtin(Bot, botScheme{})

func (botScheme) Spec() Spec {
	return Spec{Name: "bot", Takes: Takes{Classes: true}, Privacy: Silent, Release: ReleaseNothing,
		Look: Look{Name: "bot", Plain: "nothing released", Color: RGB{0x99, 0x99, 0x99}, Marker: MarkerRing}}
}

func (botScheme) Law(Params) (Law, error) { return silentLaw{}, nil }

// silentLaw shows one value whatever the label: P(0 | y) = 1.
type silentLaw struct{}

var silentChannel = []Channel{{C: 2, Z: 1, P: []float64{1, 1}}}

func (silentLaw) Classes() int          { return 2 }
func (silentLaw) Channels() []Channel   { return silentChannel }
func (silentLaw) ChannelOf(float64) int { return 0 }

// Release writes 0 for every label, drawing nothing.
func (silentLaw) Release(dst, labels []uint8, _ []float64, _ Rand) {
	checkBinary(labels)
	clear(dst[:len(labels)])
}
