package pets

// none is no PET: the clean labels (the utility ceiling; label-DP
// ε = +Inf). Its "release" is the raw labels, which never leave as a
// release: the clean model trains on the dataset's label column, and the
// audit sees each label revealed (IEAdv = min(η, 1−η), |MA| = ∞).
type noneScheme struct{}

// None is clean labels.
const None Kind = 0

var _ = builtin(None, noneScheme{})

func (noneScheme) Spec() Spec {
	return Spec{Name: "none", Takes: Takes{Classes: true}, Privacy: NotDP, Release: ReleaseRaw,
		Train: Train{Loss: LossBCE, Target: TargetLabel},
		Look:  Look{Name: "no PET", Plain: "clean labels", Marker: MarkerSquare}} // black
}

func (noneScheme) Law(Params) (Law, error) { return identityLaw{}, nil }

// identityLaw releases every label as it is: P(z | y) = 1{z = y}.
type identityLaw struct{}

var identityChannel = []Channel{{C: 2, Z: 2, P: []float64{1, 0, 0, 1}}}

func (identityLaw) Classes() int          { return 2 }
func (identityLaw) Channels() []Channel   { return identityChannel }
func (identityLaw) ChannelOf(float64) int { return 0 }

func (identityLaw) Release(dst, labels []uint8, _ []float64, _ Rand) {
	checkBinary(labels)
	copy(dst, labels)
}
