package audit

import (
	"fmt"
	"math"

	"labelprivacy/llp"
)

// givenBags sets the audit up on Options.Bags (curated bags formed on the
// audit examples by the release's rule) instead of a random partition.
func (r *runner) givenBags(b *llp.Bags, n int) error {
	if b.N != n {
		return paramErr("bags", fmt.Sprintf("bags of %d rows for %d examples", b.N, n))
	}
	if b.NumBags == 0 {
		return paramErr("bags", "no bag")
	}
	k := r.m.K()
	if r.m.Spec().Takes.KeyGroups { // whole key groups, whatever their size: k is the largest
		for u := range b.NumBags {
			k = max(k, b.Size(u))
		}
	}
	for u := range b.NumBags {
		if sz := b.Size(u); sz > k {
			return paramErr("bags", fmt.Sprintf("bag %d has %d rows, more than k = %d", u, sz, k))
		}
	}
	r.k, r.units, r.bags = k, b.NumBags, b
	r.bagTot = make([]float64, b.NumBags)
	s := &r.sum
	s.NBags, s.NExamples, s.NDropped, s.SEUnit = b.NumBags, b.Kept(), n-b.Kept(), "bag"
	return nil
}

// sized returns the worker's workspace for bags of n rows (n < k: a kept
// remainder of curated bags).
func (w *worker) sized(n int) *bagWork {
	if b := w.sizes[n]; b != nil {
		return b
	}
	if w.sizes == nil {
		w.sizes = map[int]*bagWork{}
	}
	b := newBagWork(n, w.bag.eps)
	w.sizes[n] = b
	return b
}

// givenBagsEAdv returns EAdv, the mean IEAdv over the examples in the given
// bags (Σ_b T_b / Σ_b n_b, T_b the IEAdv sum of bag b), and its standard
// error as a ratio estimator over independent bags:
// √(Σ_b (T_b − EAdv·n_b)² / (B(B−1))) / n̄, n̄ the mean bag size. With bags
// of equal size it is sd(bag mean IEAdv)/√B, the random-bag formula. NaN
// with fewer than 2 bags. Sums run in bag order: the result does not depend
// on the workers.
func (r *runner) givenBagsEAdv() (eadv, se float64) { return givenBagsEAdvOf(r.bagTot, r.bags) }

// givenBagsEAdvOf is givenBagsEAdv from the bags' IEAdv sums bagTot.
func givenBagsEAdvOf(bagTot []float64, bags *llp.Bags) (eadv, se float64) {
	var tot, rows float64
	for u, t := range bagTot {
		tot += t
		rows += float64(bags.Size(u))
	}
	eadv = tot / rows
	nb := float64(len(bagTot))
	if len(bagTot) < 2 {
		return eadv, math.NaN()
	}
	var ss float64
	for u, t := range bagTot {
		d := t - eadv*float64(bags.Size(u))
		ss += d * d
	}
	return eadv, math.Sqrt(ss/(nb*(nb-1))) / (rows / nb)
}
