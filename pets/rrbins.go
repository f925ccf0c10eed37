package pets

import (
	"fmt"
	"math"
	"slices"
)

// rr_bins is RR-on-Bins (Ghazi, Kamath, Kumar, Leeman, Manurangsi,
// Varadarajan, Zhang, "Regression with Label Differential Privacy", ICLR
// 2023): given a prior p over the grid that does not depend on the row's
// label, the grid is cut into m contiguous bins Φ and each label y is
// released as the value ŷ_j of a bin: its own bin's with probability
// e^ε/(e^ε+m−1), each other bin's with probability 1/(e^ε+m−1). Every
// likelihood is one of those two, so it is ε-label-DP. For squared loss
// the optimal mechanism of this form (the paper's Theorem: the optimal
// ε-DP mechanism is RR on contiguous bins) minimises
//
//	E[(y − M(y))²] = (1/(e^ε+m−1))·Σ_j Σ_y p(y)(1 + (e^ε−1)[y ∈ bin j])(y − ŷ_j)²,
//
// with ŷ_j the weighted mean of that bin's sum, found with m by the
// dynamic program of OptimalBins. The prior is public (Params without
// PriorEpsilon: the config gives it) or private: a noisy histogram of the
// training values (value_prior) that spends PriorEpsilon = ε₁ of ε, the
// bins getting ε − ε₁ (basic composition; the ledger charges the two as
// steps of their own: PriorStage, BinsStage). A model trains with squared
// loss on the released values, as the paper does.
type rrBinsScheme struct{}

// RRBins is RR-on-Bins.
const RRBins Kind = 10

var _ = builtin(RRBins, rrBinsScheme{})

func (rrBinsScheme) Spec() Spec {
	return Spec{Name: "rr_bins", Takes: Takes{Epsilon: true, Values: true, ValuePrior: true}, Privacy: DPRR, Release: ReleaseValues,
		Train: Train{Loss: LossSquared, Target: TargetValueRR},
		Look:  Look{Name: "RR-on-Bins", Color: RGB{0x17, 0xbe, 0xcf}, Marker: MarkerTriangle}} // cyan
}

// MaxBinsPoints is the most grid points rr_bins takes: its dynamic program
// over the grid's contiguous partitions takes about G³/6 steps (0.2 s at
// G = 1,025 on one core).
const MaxBinsPoints = 1_025

func (rrBinsScheme) Law(p Params) (Law, error) {
	g, err := valueGrid(p, "rr_bins")
	if err != nil {
		return nil, err
	}
	if n := g.Points(); n > MaxBinsPoints {
		return nil, &ParamError{Param: "value_step", Msg: fmt.Sprintf("rr_bins takes grids of at most %d points (its dynamic program is cubic in them); %s has %d", MaxBinsPoints, g, n)}
	}
	e1 := p.PriorEpsilon
	if !(e1 >= 0 && e1 < p.Epsilon) {
		return nil, &ParamError{Param: "prior_epsilon", Msg: fmt.Sprintf("the private prior's ε₁ must be in (0, ε) = (0, %v) (0: a public prior), got %v", p.Epsilon, e1)}
	}
	return &binsLaw{valueBase: valueBase{g}, eps: p.Epsilon - e1}, nil
}

// binsLaw is rr_bins's law: RR over the bins a prior gives, at eps (ε − ε₁).
type binsLaw struct {
	valueBase
	eps float64
}

func (*binsLaw) Form() ValueForm { return ValueBins }

func (l *binsLaw) ReleaseBag(float64, int, Rand) float64 { l.notPerBag(ValueBins); return 0 }

// Release releases each value through the bins: one word of r for the keep
// decision (as rr), and when it moves, an exact uniform draw among the
// m − 1 other bins. m = 1 draws nothing.
func (l *binsLaw) Release(dst, labels []float64, b *Bins, r Rand) {
	checkValues(dst, labels, l.g)
	if b == nil || b.Grid != l.g {
		panic("pets: rr_bins releases through bins of its grid (Mechanism.Bins)")
	}
	m := b.Len()
	for i, v := range labels {
		idx, _ := l.g.Index(v)
		j := int(b.binOf[idx])
		if m > 1 && flipWith(r, b.move, b.moveWord) {
			k := int(uniformIntn(r, uint64(m-1)))
			if k >= j {
				k++
			}
			j = k
		}
		dst[i] = b.Values[j]
	}
}

// Bins is RR-on-Bins made for a prior over a grid: m contiguous bins of
// grid points, bin j the points Edges[j] ≤ i < Edges[j+1] (grid point
// indices; Edges[0] = 0, Edges[m] = Points()), released as Values[j].
// Keep = e^ε/(e^ε+m−1) is the probability of a label's own bin's value,
// Other = 1/(e^ε+m−1) each other bin's.
type Bins struct {
	Grid    Grid
	Epsilon float64   // the bins' ε (rr_bins's ε − ε₁)
	Prior   []float64 // the prior over the grid they were made for (sums to 1)
	Edges   []int
	Values  []float64
	Keep    float64
	Other   float64
	// MSE is the noisy-label error E[(y − M(y))²] under Prior.
	MSE float64

	binOf    []int32 // bin of each grid point
	move     float64 // 1 − Keep
	moveWord uint64
}

// Len is the number of bins m.
func (b *Bins) Len() int { return len(b.Values) }

// Bin returns the bin of grid point i.
func (b *Bins) Bin(i int) int { return int(b.binOf[i]) }

// Prob returns P(release Values[j] | label at grid point i).
func (b *Bins) Prob(j, i int) float64 {
	if b.Bin(i) == j {
		return b.Keep
	}
	return b.Other
}

// ValueIndex returns the bin whose value is v, or −1.
func (b *Bins) ValueIndex(v float64) int {
	for j, w := range b.Values {
		if w == v {
			return j
		}
	}
	return -1
}

// EdgeValues returns the m+1 cut points in value units: bin j is
// [edge_j, edge_{j+1}), the last edge is Max + Step (one past the grid).
func (b *Bins) EdgeValues() []float64 {
	out := make([]float64, len(b.Edges))
	for j, e := range b.Edges {
		if e == b.Grid.Points() {
			out[j] = b.Grid.Max + b.Grid.Step
		} else {
			out[j] = b.Grid.Value(e)
		}
	}
	return out
}

// Bins returns rr_bins's bins for a prior over its grid (a public prior,
// or the normalized noisy histogram of value_prior): OptimalBins at the
// bins' ε (ε − ε₁). Errors (a *ParamError naming "prior") for a prior
// CheckValuePrior refuses; panics for another kind.
func (m *Mechanism) Bins(prior []float64) (*Bins, error) {
	l, ok := m.vl.(*binsLaw)
	if !ok {
		panic("pets: Bins of " + m.String())
	}
	if err := CheckValuePrior(prior, l.g); err != nil {
		return nil, err
	}
	return OptimalBins(prior, l.g, l.eps), nil
}

// CheckValuePrior returns an error (a *ParamError naming "prior") unless
// prior covers the grid: one weight per grid point, each finite and ≥ 0,
// summing to 1 within PriorTolerance.
func CheckValuePrior(prior []float64, g Grid) error {
	if n := g.Points(); len(prior) != n {
		return &ParamError{Param: "prior", Msg: fmt.Sprintf("has %d entries; the grid %s has %d points", len(prior), g, n)}
	}
	s := 0.0
	for i, v := range prior {
		if !(v >= 0 && v <= 1) {
			return &ParamError{Param: "prior", Msg: fmt.Sprintf("the value %v has probability %v", g.Value(i), v)}
		}
		s += v
	}
	if math.Abs(s-1) > PriorTolerance {
		return &ParamError{Param: "prior", Msg: fmt.Sprintf("sums to %v, not 1", s)}
	}
	return nil
}

// OptimalBins returns RR-on-Bins at ε for the prior p over the grid g
// (CheckValuePrior holds): the partition of the grid into m contiguous
// bins, over every m and every such partition, that minimises the
// noisy-label error. With e = e^ε − 1, μ = E[y], M2 = E[y²] and a bin's
// mass P_j and sum S_j = Σ_{y∈j} p(y)·y, the weight of y in bin j's output
// is 1 + e·[y ∈ j], so its best value is the weighted mean
// ŷ_j = N_j/W_j (N_j = μ + e·S_j, W_j = 1 + e·P_j) and, since
// Σ_j Σ_y p(y)(1 + e[y ∈ j])y² = (e^ε+m−1)·M2,
//
//	E[(y − M(y))²] = M2 − (Σ_j N_j²/W_j)/(e^ε+m−1).
//
// A bin's term depends on its own points only, so for each m the best
// partition maximises Σ_j N_j²/W_j by a dynamic program over the sorted
// grid (best[m][b] = max_a best[m−1][a] + f(a, b)), O(G²) per m and
// O(G³/6) for every m. Ties go to the smaller m, then to the first
// partition found (cut points as far left as possible).
func OptimalBins(p []float64, g Grid, eps float64) *Bins {
	n := g.Points()
	v := g.Values()
	e := math.Expm1(eps)
	cumP, cumS := make([]float64, n+1), make([]float64, n+1)
	var m2 float64
	for i, w := range p {
		cumP[i+1] = cumP[i] + w
		cumS[i+1] = cumS[i] + w*v[i]
		m2 += w * v[i] * v[i]
	}
	mu := cumS[n]
	f := func(a, b int) float64 { // bin of points [a, b)
		num := mu + e*(cumS[b]-cumS[a])
		return num * num / (1 + e*(cumP[b]-cumP[a]))
	}
	// prev[b]: best Σ f over m−1 bins of points [0, b); cut[m][b]: the
	// start a of the last bin of the best m-bin partition of [0, b).
	prev, cur := make([]float64, n+1), make([]float64, n+1)
	for b := range prev {
		prev[b] = math.Inf(-1)
	}
	prev[0] = 0
	cuts := [][]int32{nil}
	bestM, bestLoss := 0, math.Inf(1)
	for m := 1; m <= n; m++ {
		cut := make([]int32, n+1)
		for b := range cur {
			cur[b] = math.Inf(-1)
		}
		for b := m; b <= n; b++ {
			best, at := math.Inf(-1), 0
			for a := m - 1; a < b; a++ {
				if prev[a] == math.Inf(-1) {
					continue
				}
				if s := prev[a] + f(a, b); s > best {
					best, at = s, a
				}
			}
			cur[b], cut[b] = best, int32(at)
		}
		cuts = append(cuts, cut)
		if loss := m2 - cur[n]/(math.Exp(eps)+float64(m-1)); loss < bestLoss {
			bestM, bestLoss = m, loss
		}
		prev, cur = cur, prev
	}
	edges := make([]int, bestM+1)
	edges[bestM] = n
	for m, b := bestM, n; m > 0; m-- {
		b = int(cuts[m][b])
		edges[m-1] = b
	}
	return newBins(p, g, eps, edges)
}

// newBins makes the bins of the given cut points for the prior p: their
// values, probabilities and noisy-label error.
func newBins(p []float64, g Grid, eps float64, edges []int) *Bins {
	n, m := g.Points(), len(edges)-1
	e := math.Expm1(eps)
	var mu, m2 float64
	for i, w := range p {
		y := g.Value(i)
		mu += w * y
		m2 += w * y * y
	}
	b := &Bins{Grid: g, Epsilon: eps, Prior: slices.Clone(p), Edges: edges, Values: make([]float64, m), binOf: make([]int32, n)}
	d := math.Exp(eps) + float64(m-1)
	b.Keep, b.Other = math.Exp(eps)/d, 1/d
	b.move = float64(m-1) / d
	b.moveWord = flipWord(b.move)
	var sumF float64
	for j := range m {
		var pj, sj float64
		for i := edges[j]; i < edges[j+1]; i++ {
			b.binOf[i] = int32(j)
			pj += p[i]
			sj += p[i] * g.Value(i)
		}
		num, w := mu+e*sj, 1+e*pj
		b.Values[j] = num / w
		sumF += num * num / w
	}
	b.MSE = max(m2-sumF/d, 0)
	return b
}

// LaplaceLabelMSE is the noisy-label error E[(y − z)²] of laplace at ε on
// a grid up to B: the variance 2b² of Lap(b), b = B/ε, whatever the prior.
func LaplaceLabelMSE(b, eps float64) float64 { s := b / eps; return 2 * s * s }
