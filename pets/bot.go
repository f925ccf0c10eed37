package pets

// bot is M_⊥ (Section 2): it releases nothing about the labels (ε = 0),
// the baseline of the uninformed adversary. Nothing is trained (its best
// model is a constant score); the audit sees one uninformative release.
type botScheme struct{}

// Bot is ⊥: nothing released.
const Bot Kind = 1

var _ = builtin(Bot, botScheme{})

func (botScheme) Spec() Spec {
	return Spec{Name: "bot", Takes: Takes{Classes: true, Values: true}, Privacy: Silent, Release: ReleaseNothing,
		Look: Look{Name: "bot", Plain: "nothing released", Color: RGB{0x99, 0x99, 0x99}, Marker: MarkerRing}}
}

func (botScheme) Law(p Params) (Law, error) {
	if !p.Values.IsZero() {
		return silentValues{valueBase{p.Values}}, nil
	}
	c := max(p.Classes, 2)
	ch := Channel{C: c, Z: 1, P: make([]float64, c)}
	for y := range ch.P {
		ch.P[y] = 1
	}
	return &silentLaw{ch: ch}, nil
}

// silentLaw shows one value whatever the label: P(0 | y) = 1.
type silentLaw struct{ ch Channel }

func (l *silentLaw) Classes() int               { return l.ch.C }
func (l *silentLaw) ChannelOf([]float64) uint64 { return 0 }
func (l *silentLaw) Channel(uint64) Channel     { return l.ch }

// Release writes 0 for every label, drawing nothing.
func (l *silentLaw) Release(dst, labels []uint8, _ []float64, _ Rand) {
	checkLabels(labels, l.ch.C)
	clear(dst[:len(labels)])
}
