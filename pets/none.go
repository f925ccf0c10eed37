package pets

// none is no PET: the clean labels (the utility ceiling; label-DP
// ε = +Inf). Its "release" is the raw labels, which never leave as a
// release: the clean model trains on the dataset's label column, and the
// audit sees each label revealed (IEAdv = 1 − max_y η_y, |MA| = ∞).
type noneScheme struct{}

// None is clean labels.
const None Kind = 0

var _ = builtin(None, noneScheme{})

func (noneScheme) Spec() Spec {
	return Spec{Name: "none", Takes: Takes{Classes: true, Values: true}, Privacy: NotDP, Release: ReleaseRaw,
		Train: Train{Loss: LossBCE, Target: TargetLabel},
		Look:  Look{Name: "no PET", Plain: "clean labels", Marker: MarkerSquare}} // black
}

func (noneScheme) Law(p Params) (Law, error) {
	if !p.Values.IsZero() {
		return identityValues{valueBase{p.Values}}, nil
	}
	c := max(p.Classes, 2)
	ch := Channel{C: c, Z: c, P: make([]float64, c*c), Form: FormRR}
	for y := range c {
		ch.P[y*c+y] = 1
	}
	return &identityLaw{ch: ch}, nil
}

// identityLaw releases every label as it is: P(z | y) = 1{z = y}.
type identityLaw struct{ ch Channel }

func (l *identityLaw) Classes() int               { return l.ch.C }
func (l *identityLaw) ChannelOf([]float64) uint64 { return 0 }
func (l *identityLaw) Channel(uint64) Channel     { return l.ch }

func (l *identityLaw) Release(dst, labels []uint8, _ []float64, _ Rand) {
	checkLabels(labels, l.ch.C)
	copy(dst, labels)
}
