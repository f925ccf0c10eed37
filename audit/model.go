package audit

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"labelprivacy/pets"
)

// The model attack: a model trained on a release is asked to guess the
// labels of its own training rows (its argmax; for bags each row's own
// prediction), as Wu et al. (AISTATS 2023) attack label-DP models. The
// model is post-processing of the release (and of the label-free
// features), so it can reveal no more than the release does. This file
// turns that into numbers and into a test.
//
// Notation: rows i with features x_i, true labels y_i drawn independently
// from η(x_i); Z the release the model trained on; g_i the model's guess,
// a_i = argmax η_i the prior-only attacker's guess; p_i = P(y_i = · | Z, X)
// the exact posterior given the release (ReleasePosteriors: the same law
// the exact audit uses, on the bags and priors of the release itself).
//
//   - Adv = mean_i 1{g_i = y_i} − 1{a_i = y_i}: the model attack's
//     accuracy over that of the attacker who sees x and η(x) only, on the
//     same rows (paired), against the true labels.
//   - BayesAdv = mean_i max_y p_i(y) − p_i(a_i): what the Bayes attacker
//     who sees this very release gains over the prior, in expectation over
//     the labels given Z. Its expectation over releases is the release's
//     E[adv] (Definition 3.1) on these rows, what audit.csv's eadv
//     estimates on the audit rows.
//   - Expected = mean_i p_i(g_i) − p_i(a_i) ≤ BayesAdv: the model's own
//     guesses' expected gain given Z.
//
// The bracket. g is a function of Z, X and training randomness independent
// of the labels, and given (Z, X) the labels are independent across
// release units (a row of a per-example kind, a bag of the LLP family)
// with law p. So D_u = Σ_{i∈u} 1{g_i = y_i} − 1{a_i = y_i} has, given Z,
// mean μ_u = Σ_{i∈u} p_i(g_i) − p_i(a_i) exactly, whatever the model, and
// the units are independent. Rows with g_i = a_i contribute 0. A row with
// g_i ≠ a_i has D_i ∈ {−1, 0, 1} with variance q + r − (q − r)², q =
// p_i(g_i), r = p_i(a_i); a unit's variance is at most (Σ_i sd_i)²
// (Cauchy–Schwarz: bag-mates' labels are dependent given the bag's
// release) and D_u − μ_u ≤ 2·m_u (m_u rows with g ≠ a). Bernstein's
// inequality for independent centred terms ≤ b with total variance ≤ V:
//
//	P(Σ_u D_u − μ_u ≥ t) ≤ α  at  t = bL/3 + √((bL/3)² + 2VL),  L = ln(1/α).
//
// The check fails when N·(Adv − Expected) > t: the model's guesses were
// right more often than the release lets any function of it be. Its
// false-failure rate is at most α for every honest model, conditionally
// on the release and so unconditionally, provided η is the labels' true
// law (synthetic data); with an estimated η the posteriors are the
// attacker's beliefs and the test is not valid. A model that read raw
// labels (a trainer that peeks) and memorized them is caught once its
// excess over the release is above t/N (0.02 at 10,000 rows of which
// 1,000 disagree with the prior, α = 1e-9).

// ModelRelease is the release a model was trained on, as the model attack
// reads it: one entry per release row. Row indexes the arrays passed with
// it (η, labels); a row appears at most once, and rows that no release row
// names (an LLP remainder left out) keep their prior as posterior.
type ModelRelease struct {
	Row []int
	// Label is the released label of the per-example kinds (rr, rr_prior;
	// for none, whose "release" is the raw label the clean model trains
	// on, the raw label). Nil for bot and the LLP family.
	Label []uint8
	// Bag and Alpha, for the LLP family: each row's bag (the rows of one
	// bag consecutive) and its bag's released proportion: one value per
	// row (binary: of label 1) or C−1 (classes 1..C−1, not debiased).
	Bag   []int64
	Alpha []float64
	// Prior, for a kind released with a prior (rr_prior), is each row's
	// public prior, as its release recorded it (the uniform prior of its
	// first stage included): P(y = 1 | x) on binary labels, C values a row
	// on C ≥ 3 classes. Its channel is the law's ChannelOf of it.
	Prior []float64
	// Skip, when set, marks release rows whose own posterior is not
	// wanted (a bag-mate of attacked rows): it keeps its prior, which
	// saves the LLP family's O(k) per member.
	Skip []bool
}

// Posteriors are the exact posteriors of rows given a release
// (ReleasePosteriors): Post holds C values per row (C = 2 for binary
// labels: P(y = 0), P(y = 1)); Unit is each row's release unit (its bag for
// the LLP family, else the row itself), numbered 0..units−1: given the
// release, labels of different units are independent.
type Posteriors struct {
	Classes int
	Post    []float64
	Unit    []int
	// bags (binary LLP family) holds what the joint posterior of two
	// members of a bag needs (Pair); nil otherwise.
	bags []*bagPost
	pos  []int // each row's position in its bag (bags only)
}

// bagPost is one binary bag as Pair needs it: its members' η, the law of
// their sum and the likelihood of the bag's release given each sum.
type bagPost struct {
	eta   []float64
	p     []float64 // P(S = s), s = 0..n
	noise pets.SumNoise
	rate  float64 // the noise rate
	t     float64 // the release in units of the sum
	once  sync.Once
	lik   []float64 // L(release | S = s), s = 0..n, up to a common factor (made on first use)
}

// likelihoods returns b.lik, made once (Pair may be called concurrently).
func (b *bagPost) likelihoods() []float64 {
	b.once.Do(func() {
		w := newBagWork(len(b.eta), b.rate)
		b.lik = w.sumLikelihoods(b.noise, b.t)
	})
	return b.lik
}

// Pair returns the joint posterior P(y_i = b, y_j = b' | release) at
// [2b+b'] of two rows of one bag of a binary LLP-family release, and false
// when the posteriors hold no such pair (other kinds, C ≥ 3 classes, rows
// of different units: independent).
func (ps *Posteriors) Pair(i, j int) ([4]float64, bool) {
	if ps.bags == nil || i == j || ps.Unit[i] != ps.Unit[j] || ps.Unit[i] >= len(ps.bags) {
		return [4]float64{}, false
	}
	b := ps.bags[ps.Unit[i]]
	n := len(b.eta)
	lik := b.likelihoods()
	pi, pj := ps.pos[i], ps.pos[j]
	q1 := make([]float64, n) // the law of the others' sum without i
	leaveOneOut(q1, b.p, b.eta[pi])
	q2 := make([]float64, n-1) // … and without j
	leaveOneOut(q2, q1[:n], b.eta[pj])
	var out [4]float64
	tot := 0.0
	for yi := range 2 {
		for yj := range 2 {
			wi, wj := b.eta[pi], b.eta[pj]
			if yi == 0 {
				wi = 1 - wi
			}
			if yj == 0 {
				wj = 1 - wj
			}
			v := 0.0
			for s, q := range q2 {
				v += q * lik[s+yi+yj]
			}
			out[2*yi+yj] = wi * wj * v
			tot += out[2*yi+yj]
		}
	}
	if !(tot > 0) {
		return [4]float64{}, false
	}
	for k := range out {
		out[k] /= tot
	}
	return out, true
}

// ReleasePosteriors returns, for every row of eta (n values P(y = 1 | x)
// for binary labels, n·C row-major for C ≥ 3), its exact posterior over the
// C classes given the release rel of mechanism m, and each row's release
// unit (Posteriors). The rows of an LLP bag are the bag's members, all of
// them, with their η. It fails on a release the stated law makes
// impossible, naming the row or bag.
func ReleasePosteriors(m *pets.Mechanism, eta []float64, rel *ModelRelease) (*Posteriors, error) {
	if m == nil || rel == nil {
		return nil, paramErr("mechanism", "nil mechanism or release")
	}
	c := m.Classes()
	w := c
	if c < 3 {
		w = 1
	}
	if len(eta)%w != 0 {
		return nil, paramErr("eta", fmt.Sprintf("%d values are not rows of %d classes", len(eta), c))
	}
	n := len(eta) / w
	post := make([]float64, n*c)
	for i := range n {
		priorVec(post[i*c:(i+1)*c], eta, i, c)
	}
	unit := make([]int, n)
	for i := range unit {
		unit[i] = -1
	}
	seen := make([]bool, n)
	for j, i := range rel.Row {
		if i < 0 || i >= n {
			return nil, paramErr("release", fmt.Sprintf("release row %d names row %d of %d", j, i, n))
		}
		if seen[i] {
			return nil, paramErr("release", fmt.Sprintf("row %d released twice", i))
		}
		seen[i] = true
	}
	ps := &Posteriors{Classes: c, Post: post, Unit: unit}
	var err error
	sp := m.Spec()
	switch {
	case sp.Release == pets.ReleaseNothing:
	case sp.Release.Proportions() && c < 3: // bags (or, ReleaseCounts, bags of one) of a BagLaw
		err = bagPosteriors(m, eta, rel, ps)
	case sp.Release.Proportions():
		err = bagPosteriorsC(m, eta, rel, post, unit)
	default:
		err = rowPosteriors(m, eta, rel, post)
	}
	if err != nil {
		return nil, err
	}
	next := 0
	for _, u := range unit {
		next = max(next, u+1)
	}
	for i, u := range unit {
		if u < 0 {
			unit[i] = next
			next++
		}
	}
	return ps, nil
}

// priorVec writes row i's class probabilities (C values) into dst.
func priorVec(dst, eta []float64, i, c int) {
	if c < 3 {
		dst[0], dst[1] = 1-eta[i], eta[i]
		return
	}
	copy(dst, eta[i*c:(i+1)*c])
}

// rowPosteriors fills the posteriors of a per-example kind's release:
// each row's likelihoods are its channel's (the law's ChannelOf of its
// prior, for a kind released with one).
func rowPosteriors(m *pets.Mechanism, eta []float64, rel *ModelRelease, post []float64) error {
	c := m.Classes()
	if len(rel.Label) != len(rel.Row) {
		return paramErr("release", fmt.Sprintf("%d released labels for %d rows", len(rel.Label), len(rel.Row)))
	}
	w := 1 // prior values a row
	if c >= 3 {
		w = c
	}
	withPrior := m.Spec().Release.WithPrior()
	if withPrior && len(rel.Prior) != w*len(rel.Row) {
		return paramErr("release", fmt.Sprintf("%s: %d prior values for %d rows of %d classes", m, len(rel.Prior), len(rel.Row), c))
	}
	ex := m.ExampleLaw()
	chans := map[uint64]pets.Channel{}
	lik, two := make([]float64, c), make([]float64, 2)
	for j, i := range rel.Row {
		z := rel.Label[j]
		var prior []float64
		switch {
		case withPrior && c < 3:
			two[0], two[1] = 1-rel.Prior[j], rel.Prior[j]
			prior = two
		case withPrior:
			prior = rel.Prior[j*c : (j+1)*c]
		}
		key := ex.ChannelOf(prior)
		ch, ok := chans[key]
		if !ok {
			ch = ex.Channel(key)
			chans[key] = ch
		}
		if int(z) >= ch.Z { // C, or C + 1 with the release that shows no class (pets.FormRRErased)
			return paramErr("release", fmt.Sprintf("row %d: released label %d is not in 0..%d", i, z, ch.Z-1))
		}
		for y := range lik {
			lik[y] = ch.Prob(z, uint8(y))
		}
		if !posteriorInto(post[i*c:(i+1)*c], lik) {
			return &ReleaseError{What: fmt.Sprintf("row %d (released %d)", i, z)}
		}
	}
	return nil
}

// posteriorInto turns the prior in dst into the posterior given the
// likelihoods lik; false for a release of likelihood 0 under the prior.
func posteriorInto(dst, lik []float64) bool {
	s := 0.0
	for y, e := range dst {
		s += e * lik[y]
	}
	if !(s > 0) {
		return false
	}
	for y, e := range dst {
		dst[y] = e * lik[y] / s
	}
	return true
}

// ReleaseError is a release that the stated law (with the given η) makes
// impossible: the model attack cannot compute its posteriors. It wraps
// ErrReleaseMismatch.
type ReleaseError struct{ What string }

func (e *ReleaseError) Error() string {
	return "audit: model attack: " + e.What + " has probability 0 under the mechanism's stated law and η"
}

// Unwrap makes errors.Is(err, ErrReleaseMismatch) true.
func (e *ReleaseError) Unwrap() error { return ErrReleaseMismatch }

// bags splits a release into its bags: fn gets each bag's id, its release
// rows [start, end) and its first row's α offset.
func bags(rel *ModelRelease, per int, fn func(id int64, start, end int) error) error {
	if len(rel.Bag) != len(rel.Row) || len(rel.Alpha) != per*len(rel.Row) {
		return paramErr("release", fmt.Sprintf("%d bag ids and %d proportions for %d rows", len(rel.Bag), len(rel.Alpha), len(rel.Row)))
	}
	done := map[int64]bool{}
	for start := 0; start < len(rel.Row); {
		id := rel.Bag[start]
		end := start + 1
		for end < len(rel.Row) && rel.Bag[end] == id {
			end++
		}
		if done[id] {
			return paramErr("release", fmt.Sprintf("the rows of bag %d are not consecutive", id))
		}
		done[id] = true
		if err := fn(id, start, end); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// bagPosteriors fills the posteriors of a binary LLP-family release: each
// member's leave-one-out law on its bag (bag.go), the bag's unit number.
func bagPosteriors(m *pets.Mechanism, eta []float64, rel *ModelRelease, ps *Posteriors) error {
	post, unit := ps.Post, ps.Unit
	ps.pos = make([]int, len(unit))
	noise := m.BagLaw().SumNoise()
	works := map[int]*bagWork{}
	u := 0
	return bags(rel, 1, func(id int64, start, end int) error {
		n := end - start
		b := works[n]
		if b == nil {
			b = newBagWork(n, m.BagLaw().NoiseRate())
			works[n] = b
		}
		alpha := rel.Alpha[start]
		for j := start; j < end; j++ {
			if rel.Alpha[j] != alpha {
				return paramErr("release", fmt.Sprintf("bag %d shows two proportions, %v and %v", id, alpha, rel.Alpha[j]))
			}
		}
		t := alpha * float64(n)
		if noise.Discrete() {
			t = math.Round(t)
			if t < 0 || t > float64(n) {
				return &ReleaseError{What: fmt.Sprintf("bag %d of %d rows (α = %v)", id, n, alpha)}
			}
		}
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return &ReleaseError{What: fmt.Sprintf("bag %d of %d rows (α = %v)", id, n, alpha)}
		}
		for j := start; j < end; j++ {
			b.eta[j-start] = eta[rel.Row[j]]
		}
		pbPMF(b.p, b.eta)
		ps.bags = append(ps.bags, &bagPost{eta: slices.Clone(b.eta), p: slices.Clone(b.p), noise: noise, rate: m.BagLaw().NoiseRate(), t: t})
		for j := start; j < end; j++ {
			i := rel.Row[j]
			ps.pos[i] = j - start
			unit[i] = u
			if rel.Skip != nil && rel.Skip[j] {
				continue
			}
			b.leaveOut(noise, b.eta[j-start])
			l1, l0 := b.likelihoods(noise, t)
			lik := [2]float64{l0, l1}
			if !posteriorInto(post[2*i:2*i+2], lik[:]) {
				return &ReleaseError{What: fmt.Sprintf("bag %d (α = %v), row %d", id, alpha, i)}
			}
		}
		u++
		return nil
	})
}

// sumLikelihoods returns L(release | S = s) for s = 0..n, up to the
// common factor likelihoods has, through likelihoods itself: with the
// leave-one-out law a point mass at s, its y = 0 likelihood is L(· | s)
// (and its y = 1 one L(· | s+1), for s = n). O(n²); it clobbers the
// member tables.
func (w *bagWork) sumLikelihoods(noise pets.SumNoise, t float64) []float64 {
	n := w.k
	out := make([]float64, n+1)
	for s := range n {
		clear(w.q)
		w.q[s] = 1
		w.tables(noise)
		l1, l0 := w.likelihoods(noise, t)
		out[s] = l0
		if s == n-1 {
			out[n] = l1
		}
	}
	return out
}

// bagPosteriorsC fills the posteriors of an LLP-family release on C ≥ 3
// classes (BagAuditorC.Likelihoods, exact for every kind).
func bagPosteriorsC(m *pets.Mechanism, eta []float64, rel *ModelRelease, post []float64, unit []int) error {
	c := m.Classes()
	auditors := map[int]*BagAuditorC{}
	u := 0
	var be, dst []float64
	return bags(rel, c-1, func(id int64, start, end int) error {
		n := end - start
		a := auditors[n]
		if a == nil {
			var err error
			if a, err = NewBagAuditorC(m, n); err != nil {
				return err
			}
			auditors[n] = a
		}
		alpha := rel.Alpha[start*(c-1) : (start+1)*(c-1)]
		be, dst = be[:0], append(dst[:0], make([]float64, n*c)...)
		for j := start; j < end; j++ {
			i := rel.Row[j]
			be = append(be, eta[i*c:(i+1)*c]...)
		}
		if err := a.Likelihoods(dst, be, alpha); err != nil {
			return fmt.Errorf("audit: model attack: bag %d: %w", id, err)
		}
		for j := start; j < end; j++ {
			i := rel.Row[j]
			if !posteriorInto(post[i*c:(i+1)*c], dst[(j-start)*c:(j-start+1)*c]) {
				return &ReleaseError{What: fmt.Sprintf("bag %d, row %d", id, i)}
			}
			unit[i] = u
		}
		u++
		return nil
	})
}

// ModelGuesses is one model's guesses on rows, for ModelAttack. Eta and
// Prob are in the audit's layout (binary: P(y = 1 | x) per row; C ≥ 3: C
// values per row, row-major).
type ModelGuesses struct {
	Classes int       // C: 2 for binary labels
	Eta     []float64 // every row's η: the prior-only attacker guesses its argmax (binary: 1{η > ½})
	Label   []uint8   // every row's true label
	// Release (ReleasePosteriors, with the same rows) enables the bracket
	// and makes its units those of the SE; nil: no bracket, each row its
	// own unit.
	Release *Posteriors
	Rows    []int     // the attacked rows (indices into the arrays above), each at most once
	Prob    []float64 // the model's prediction on each attacked row: 1 value (binary) or C
}

// ModelAttackResult is the model attack on one model's rows.
type ModelAttackResult struct {
	Rows, Units int // attacked rows; the units they fall in (bags, or rows)
	// ModelAcc and PriorAcc are the accuracies of the model's and the
	// prior's guesses, with SEs over units; Adv = ModelAcc − PriorAcc
	// (paired, on the same rows and labels) with its SE over units.
	ModelAcc, ModelAccSE float64
	PriorAcc, PriorAccSE float64
	Adv, AdvSE           float64
	// With posteriors (else NaN): BayesAdv, the Bayes attacker's exact
	// expected advantage on these rows given the release; Expected, the
	// model's own guesses' (≤ BayesAdv); Excess = Adv − Expected; Slack
	// the Bernstein threshold of Excess at level Alpha; Z = Excess over
	// its variance bound's square root (0 when that is 0).
	BayesAdv, Expected float64
	Excess, Slack      float64
	Alpha, Z           float64
}

// Exceeds reports whether the model's guesses were right more often than
// any function of its release can be, at level r.Alpha (the bracket).
func (r *ModelAttackResult) Exceeds() bool { return r.Excess > r.Slack+BoundTolerance }

// ModelAttack scores a model's guesses on g.Rows against the true labels
// (Adv over the prior attacker, paired) and, with posteriors, tests them
// against the release at level alpha ∈ (0, 1) (the file comment).
func ModelAttack(g *ModelGuesses, alpha float64) (*ModelAttackResult, error) {
	c := g.Classes
	if c < 2 || c > pets.MaxClasses {
		return nil, paramErr("classes", fmt.Sprintf("must be in 2..%d, got %d", pets.MaxClasses, c))
	}
	if !(alpha > 0 && alpha < 1) {
		return nil, paramErr("alpha", fmt.Sprintf("must be in (0, 1), got %v", alpha))
	}
	w := c
	if c == 2 {
		w = 1
	}
	n := len(g.Label)
	switch {
	case len(g.Eta) != n*w:
		return nil, paramErr("eta", fmt.Sprintf("%d values for %d rows of %d classes", len(g.Eta), n, c))
	case len(g.Prob) != len(g.Rows)*w:
		return nil, paramErr("prob", fmt.Sprintf("%d predictions for %d attacked rows of %d classes", len(g.Prob), len(g.Rows), c))
	case g.Release != nil && (len(g.Release.Post) != n*c || len(g.Release.Unit) != n || g.Release.Classes != c):
		return nil, paramErr("release", fmt.Sprintf("posteriors of %d values and %d units for %d rows of %d classes",
			len(g.Release.Post), len(g.Release.Unit), n, c))
	case len(g.Rows) == 0:
		return nil, paramErr("rows", "no attacked row")
	}
	type unitSum struct {
		m                 int     // attacked rows
		model, prior, d   float64 // Σ correct_model, Σ correct_prior, Σ D
		mu, sd, disagreed float64 // Σ μ_i, Σ sd_i, rows with g ≠ a
		vars              float64 // Σ Var D_i
		split             []split // the rows with g ≠ a
	}
	// Units by key (a unit number of the release, else the row): both
	// dense, so a slice; visited in increasing key order.
	units := make([]*unitSum, n)
	seen := make([]bool, n)
	res := &ModelAttackResult{Rows: len(g.Rows), Alpha: alpha, BayesAdv: math.NaN(), Expected: math.NaN(),
		Excess: math.NaN(), Slack: math.NaN(), Z: math.NaN()}
	var bayes float64
	for j, i := range g.Rows {
		if i < 0 || i >= n || seen[i] {
			return nil, paramErr("rows", fmt.Sprintf("attacked row %d: %d is out of 0..%d or repeated", j, i, n-1))
		}
		seen[i] = true
		y := int(g.Label[i])
		if y >= c {
			return nil, paramErr("label", fmt.Sprintf("row %d: label %d is not in 0..%d", i, y, c-1))
		}
		var gi, ai int
		if c == 2 {
			gi, ai = b2i(g.Prob[j] > 0.5), b2i(g.Eta[i] > 0.5)
		} else {
			gi, _ = argmax(g.Prob[j*c : (j+1)*c])
			ai, _ = argmax(g.Eta[i*c : (i+1)*c])
		}
		key := i
		if g.Release != nil {
			key = g.Release.Unit[i]
			if key < 0 || key >= n {
				return nil, paramErr("release", fmt.Sprintf("row %d: unit %d out of 0..%d", i, key, n-1))
			}
		}
		u := units[key]
		if u == nil {
			u = &unitSum{}
			units[key] = u
		}
		u.m++
		cm, cp := b2f(gi == y), b2f(ai == y)
		u.model, u.prior, u.d = u.model+cm, u.prior+cp, u.d+cm-cp
		if g.Release != nil {
			p := g.Release.Post[i*c : (i+1)*c]
			_, best := argmax(p)
			bayes += best - p[ai]
			if gi != ai {
				q, r := p[gi], p[ai]
				v := max(0, q+r-(q-r)*(q-r))
				u.mu += q - r
				u.vars += v
				u.sd += math.Sqrt(v)
				u.disagreed++
				u.split = append(u.split, split{row: i, g: gi, a: ai, mean: q - r})
			}
		}
	}
	N := float64(len(g.Rows))
	var order []*unitSum
	for _, u := range units {
		if u != nil {
			order = append(order, u)
		}
	}
	res.Units = len(order)
	var model, prior, d, mu, v, b float64
	for _, u := range order {
		model, prior, d, mu = model+u.model, prior+u.prior, d+u.d, mu+u.mu
		v += unitVariance(g.Release, u.vars, u.sd, u.split)
		b = max(b, u.disagreed-u.mu) // D_u − μ_u ≤ m_u − μ_u
	}
	res.ModelAcc, res.PriorAcc, res.Adv = model/N, prior/N, d/N
	res.ModelAccSE, res.PriorAccSE, res.AdvSE = math.NaN(), math.NaN(), math.NaN()
	if U := float64(len(order)); U > 1 {
		var sm, sp, sd float64
		for _, u := range order {
			m := float64(u.m)
			sm += (u.model - m*res.ModelAcc) * (u.model - m*res.ModelAcc)
			sp += (u.prior - m*res.PriorAcc) * (u.prior - m*res.PriorAcc)
			sd += (u.d - m*res.Adv) * (u.d - m*res.Adv)
		}
		f := U / (U - 1)
		res.ModelAccSE, res.PriorAccSE, res.AdvSE = math.Sqrt(f*sm)/N, math.Sqrt(f*sp)/N, math.Sqrt(f*sd)/N
	}
	if g.Release != nil {
		res.BayesAdv, res.Expected = bayes/N, mu/N
		res.Excess = (d - mu) / N
		res.Slack = bernsteinTail(v, b, alpha) / N
		res.Z = 0
		if v > 0 {
			res.Z = (d - mu) / math.Sqrt(v)
		}
	}
	return res, nil
}

// split is an attacked row whose model guess g differs from the prior's
// a, with E[D_i | release] = mean.
type split struct {
	row, g, a int
	mean      float64
}

// maxPairs caps the pairs of a unit whose joint posterior unitVariance
// computes (O(k) each); past it, Cauchy–Schwarz.
const maxPairs = 1 << 12

// unitVariance returns Var(D_u | release) for a unit whose rows with g ≠ a
// are rows (Σ Var D_i = vars, Σ sd_i = sd): exactly from the pairwise
// joint posteriors where ps has them (binary bags), else the
// Cauchy–Schwarz bound sd², exact for a unit of one such row.
func unitVariance(ps *Posteriors, vars, sd float64, rows []split) float64 {
	if len(rows) < 2 {
		return vars
	}
	if len(rows)*(len(rows)-1)/2 > maxPairs {
		return sd * sd
	}
	v := vars
	for x, ri := range rows {
		for _, rj := range rows[x+1:] {
			joint, ok := ps.Pair(ri.row, rj.row)
			if !ok {
				return sd * sd
			}
			e := 0.0 // E[D_i D_j]
			for yi := range 2 {
				for yj := range 2 {
					e += joint[2*yi+yj] * splitD(ri, yi) * splitD(rj, yj)
				}
			}
			v += 2 * (e - ri.mean*rj.mean)
		}
	}
	return max(0, v)
}

// splitD is D_i = 1{y = g} − 1{y = a} for label y.
func splitD(s split, y int) float64 { return b2f(y == s.g) - b2f(y == s.a) }

// bernsteinTail is the t at which Bernstein's inequality gives
// P(Σ X_u ≥ t) ≤ alpha for independent X_u with mean ≤ 0, X_u ≤ b and
// Σ Var X_u ≤ v: the root of exp(−t²/(2v + 2bt/3)) = alpha.
func bernsteinTail(v, b, alpha float64) float64 {
	l := math.Log(1 / alpha)
	c := b * l / 3
	return c + math.Sqrt(c*c+2*v*l)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// ErrModelExceedsRelease is wrapped by every *BracketViolation.
var ErrModelExceedsRelease = errors.New("audit: a model reveals more of its training labels than its release")

// BracketViolation reports a model whose guesses of its training labels
// beat what its release allows (ModelAttackResult.Exceeds): its trainer
// read something the release does not carry (raw labels), or the release
// it names is not the one it trained on. Setting and Run name it.
type BracketViolation struct {
	Setting, Run string
	Result       *ModelAttackResult
}

func (e *BracketViolation) Error() string {
	r := e.Result
	return fmt.Sprintf("audit: %s: model %s guesses its %d training rows' labels with advantage %.5f over the prior, "+
		"%.5f more than the release it trained on allows for those guesses (%.5f; the Bayes attacker on that release: %.5f), "+
		"beyond the %.5f that chance explains at false-failure rate %g: a model is post-processing of its release and can "+
		"reveal no more, so its trainer read labels the release does not carry (raw labels?) or trained on another release",
		e.Setting, e.Run, r.Rows, r.Adv, r.Excess, r.Expected, r.BayesAdv, r.Slack, r.Alpha)
}

// Unwrap makes errors.Is(err, ErrModelExceedsRelease) true.
func (e *BracketViolation) Unwrap() error { return ErrModelExceedsRelease }

// CanaryBound certifies an ε lower bound from canaries whose labels were
// fair coins (coins, 0/1) scored by an attacker (scores: its log-odds
// that the coin is 1, chosen without looking at any coin): the one-run
// bound of canary.go at level alpha (eps at confidence 1 − alpha), with the
// guesses it made and how many were right. Scores of 0 or NaN abstain.
func CanaryBound(coins []uint8, scores []float64, alpha float64) (eps float64, guesses, right int, err error) {
	if len(coins) != len(scores) {
		return 0, 0, 0, paramErr("scores", fmt.Sprintf("%d scores for %d canaries", len(scores), len(coins)))
	}
	if !(alpha > 0 && alpha < 1) {
		return 0, 0, 0, paramErr("alpha", fmt.Sprintf("must be in (0, 1), got %v", alpha))
	}
	trials := make([]canaryTrial, len(coins))
	for i, y := range coins {
		if y > 1 {
			return 0, 0, 0, paramErr("coins", fmt.Sprintf("canary %d: coin %d is not 0 or 1", i, y))
		}
		trials[i] = canaryTrial{y: y, s: scores[i]}
	}
	o := oneRunBound(trials, alpha)
	return o.eps, o.guesses, o.right, nil
}
