package pets

import "fmt"

// llp is learning from label proportions (Section 2): rows are partitioned
// into bags of k (at random, or by a curated bag rule: the rule is a
// parameter of the release, not of the mechanism, since the law of a
// bag's release given its labels does not depend on how the bag was
// formed) and only the proportion α = (sum of labels)/n of each bag is
// released; on C ≥ 3 classes the proportions α_c = n_c/n of classes
// 1..C−1 (class 0's, 1 − Σ α_c, is implied). Not differentially private
// (ε = +Inf: a bag whose labels are all equal shows them). The model
// trains per bag with train.llp_loss (PropMatch, Section 2; propmatch_ce
// on C classes).
type llpScheme struct{}

// LLP is label proportions of bags of k.
const LLP Kind = 3

var _ = builtin(LLP, llpScheme{})

func (llpScheme) Spec() Spec {
	return Spec{Name: "llp", Takes: Takes{K: true, Classes: true}, Privacy: NotDP, Release: ReleaseBags,
		Train: Train{Loss: LossProportion, Target: TargetAlpha},
		Look:  Look{Name: "LLP", Color: RGB{0x1f, 0x77, 0xb4}, Marker: MarkerBox}} // blue
}

func (llpScheme) Law(p Params) (Law, error) { return exactBags{c: max(p.Classes, 2)}, nil }

// exactBags releases each bag's exact proportions.
type exactBags struct{ c int }

func (b exactBags) Classes() int                     { return b.c }
func (exactBags) SumNoise() SumNoise                 { return SumExact }
func (exactBags) NoiseRate() float64                 { return 0 }
func (b exactBags) Sensitivity() int                 { return countSensitivity(b.c) }
func (exactBags) Target(dst, alpha []float64, _ int) { copy(dst, alpha) }

func (b exactBags) ReleaseBag(dst []float64, counts []int, _ Rand) {
	fn := float64(bagSize(dst, counts, b.c))
	for c := 1; c < b.c; c++ {
		dst[c-1] = float64(counts[c]) / fn
	}
}

// countSensitivity returns Δ, the L1 sensitivity of the released count
// vector (n_1, …, n_{C−1}) of a bag when one of its labels changes,
// whatever the bag:
//
//	Δ = 1 for C = 2,  Δ = 2 for C ≥ 3.
//
// Proof. Changing one label a → b (a ≠ b) lowers n_a by 1 and raises n_b by
// 1 and leaves the other counts alone. Class 0's count is not released, so
// the released vector moves by 1 in each of the coordinates a and b that
// are not 0: two coordinates when a, b ≥ 1 (possible only for C ≥ 3), one
// when a or b is 0. The largest L1 change is therefore 2 for C ≥ 3 and 1
// for C = 2 (where the only change is 0 ↔ 1). ∎
func countSensitivity(c int) int {
	if c == 2 {
		return 1
	}
	return 2
}

// bagSize checks a bag's class counts (len c, entries ≥ 0) and its output
// (len c−1) and returns n = Σ counts ≥ 1; it panics otherwise.
func bagSize(dst []float64, counts []int, c int) int {
	if len(counts) != c || len(dst) != c-1 {
		panic(fmt.Sprintf("pets: ReleaseBag: %d counts and %d outputs for %d classes (want %d and %d)",
			len(counts), len(dst), c, c, c-1))
	}
	n := 0
	for y, v := range counts {
		if v < 0 {
			panic(fmt.Sprintf("pets: ReleaseBag: class %d has count %d", y, v))
		}
		n += v
	}
	if n < 1 {
		panic("pets: ReleaseBag: empty bag")
	}
	return n
}
