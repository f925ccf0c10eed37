package release

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"

	"labelprivacy/data"
	"labelprivacy/internal/par"
)

// Label-like features. A release ships the features as they are, so a
// feature column that gives the labels away (a copy of the label, y·2+1,
// 1 − y, one column of a one-hot of the classes, a category the label was
// derived from) ships every raw label whatever the mechanism and whatever ε
// the ledger charges. LabelLikeColumns finds them by two rules, each
// judged against chance: a column independent of the labels fires either
// rule with probability at most e^−LabelLikeEvidence ≈ 9e-14 (per column,
// and per class for the AUC rule).
//
//   - AUC: the column alone separates a class from the others (binary:
//     class 1 from class 0) with AUC ≥ LabelLikeAUC or ≤ 1 − LabelLikeAUC
//     (ties count ½). Chance is bounded by Hoeffding's inequality for the
//     two-sample U-statistic, P(|AUC − ½| ≥ t) ≤ 2·exp(−2·m·t²), m the
//     smaller of the class and the rest: the rule needs 2·m·(sep − ½)² ≥
//     LabelLikeEvidence, so a class of fewer than about 62 rows cannot be
//     told from chance by it and is not flagged. A genuine feature that
//     separates the labels this well fires too — and is a true leak: whoever
//     holds the file reads the labels off it.
//   - Function: every distinct value of the column holds rows of one class
//     only ("the label is a function of the value"), over at most
//     LabelLikeValues distinct values, and that purity would have
//     probability P = Π_v Σ_c p_c^{r_v} ≤ e^−LabelLikeEvidence for a
//     column independent of the labels (r_v distinct rows of value v, all
//     features compared; p_c the classes' shares). A continuous feature
//     whose values are all distinct is a trivial function of them (P = 1:
//     no evidence), so it never fires, nor does one whose only repeated
//     values are those of duplicated rows (identical rows share a label
//     whatever the column: one draw); ordinary features with repeated
//     values mix classes and stop the scan at the first conflict. A non-monotone coding of the label over more
//     than LabelLikeValues values is not caught (the AUC rule sees only
//     monotone ones).
//
// Only dense feature columns are judged (not sparse indices). Cost, per
// column: one pass counting the classes in 2^16 buckets of the value
// (bounds on the AUC that settle nearly every column), a hash-map scan that
// stops at the first conflict or at LabelLikeValues values, and a sort
// only for a column whose bounds leave the AUC rule open.
const (
	LabelLikeAUC      = 0.99
	LabelLikeValues   = 1 << 16
	LabelLikeEvidence = 30.0
)

// LabelLike is a feature column that gives the labels away.
type LabelLike struct {
	Column string
	Rule   string  // "auc" or "function"
	AUC    float64 // rule auc: max(AUC, 1 − AUC) of the column for Class against the others
	Class  int     // rule auc: the class it separates (1 for binary labels)
	Values int     // rule function: distinct values
	LogP   float64 // ln of the chance a column independent of the labels would fire the rule as this one does
}

func (l LabelLike) String() string {
	if l.Rule == "function" {
		return fmt.Sprintf("%q: the label is a function of its value (%d distinct values, each of one class; chance e^%.0f if it were independent of the labels)",
			l.Column, l.Values, l.LogP)
	}
	return fmt.Sprintf("%q: alone it separates class %d from the others with AUC %.4f (≥ %g)", l.Column, l.Class, l.AUC, LabelLikeAUC)
}

// LabelLikeColumns returns the dense feature columns of f that give its
// labels away (see LabelLike), in column order. f must have labels.
func LabelLikeColumns(f *data.Frame) []LabelLike {
	d, n, c := f.Dim(), f.Rows, f.NumClasses()
	if d == 0 || n < 2 || len(f.Label) != n {
		return nil
	}
	counts := make([]int, c)
	for _, y := range f.Label {
		counts[y]++
	}
	logp := make([]float64, c)
	for k, m := range counts {
		logp[k] = math.Log(float64(m) / float64(n))
	}
	h := classHistograms(f.X, d, f.Label, c)
	found := make([][]LabelLike, d)
	rows := sync.OnceValue(func() []uint64 { return rowHashes(f) })
	par.Each(d, 0, func(_, j int) {
		if l, ok := functionRule(f.X, d, j, f.Label, logp, rows); ok {
			l.Column = f.Features[j]
			found[j] = append(found[j], l)
			return
		}
		if !h.aucOpen(j, counts) {
			return
		}
		if l, ok := exactAUC(f.X, d, j, f.Label, counts); ok {
			l.Column = f.Features[j]
			found[j] = append(found[j], l)
		}
	})
	return slices.Concat(found...)
}

// sortable maps a float32 to a uint32 of the same order, branch-free (−0
// as +0: −0 + 0 is +0).
func sortable(v float32) uint32 {
	u := math.Float32bits(v + 0)
	return u ^ (uint32(int32(u)>>31) | 1<<31)
}

// histograms counts each column's rows per class in buckets of the
// sortable value's top bits: [column][bucket][class].
type histograms struct {
	counts []uint32
	shift  uint // bucket = sortable >> shift
	cells  int  // buckets × classes per column
	c      int
}

// classHistograms counts in one row-major pass over x (on every core, a
// histogram per goroutine, merged): 2^16 buckets for binary labels, fewer
// for more classes or very many columns (at most 64 MiB per goroutine).
func classHistograms(x []float32, d int, labels []uint8, c int) *histograms {
	b := 13 - bits.Len(uint(c-1)) // 2^b buckets × c classes ≤ 2^13 cells
	for b > 8 && (d<<b)*c*4 > 64<<20 {
		b--
	}
	h := &histograms{shift: uint(32 - b), cells: c << b, c: c}
	n := len(labels)
	workers := par.Workers(0, n/(1<<16)+1)
	parts := make([][]uint32, workers)
	par.Ranges(n, workers, func(w, lo, hi int) {
		cnt := make([]uint32, d*h.cells)
		for i := lo; i < hi; i++ {
			y := int(labels[i])
			row := x[i*d : (i+1)*d]
			for j, v := range row {
				cnt[j*h.cells+int(sortable(v)>>h.shift)*c+y]++
			}
		}
		parts[w] = cnt
	})
	h.counts = parts[0]
	for _, p := range parts[1:] {
		for i, v := range p {
			h.counts[i] += v
		}
	}
	return h
}

// aucOpen reports whether column j's buckets leave the AUC rule open for
// some class (aucBounds): it is closed when hi < LabelLikeAUC and lo >
// 1 − LabelLikeAUC.
func (h *histograms) aucOpen(j int, counts []int) bool {
	for k := range h.c {
		if h.c == 2 && k == 0 {
			continue // binary: class 0's AUC is 1 − class 1's
		}
		if lo, hi, ok := h.aucBounds(j, k, counts); ok && (lo <= 1-LabelLikeAUC || hi >= LabelLikeAUC) {
			return true
		}
	}
	return false
}

// aucBounds bounds column j's AUC for class k against the others: pairs in
// different buckets are ordered, those in one bucket may fall either way,
// so AUC ∈ [lo, hi]. ok is false when class k or the rest is empty.
func (h *histograms) aucBounds(j, k int, counts []int) (lo, hi float64, ok bool) {
	cnt := h.counts[j*h.cells : (j+1)*h.cells]
	n := 0
	for _, m := range counts {
		n += m
	}
	pos, neg := float64(counts[k]), float64(n-counts[k])
	if pos == 0 || neg == 0 {
		return 0, 0, false
	}
	var negBelow float64
	for b := 0; b < len(cnt); b += h.c {
		var tot uint32
		for _, v := range cnt[b : b+h.c] {
			tot += v
		}
		p := float64(cnt[b+k])
		nb := float64(tot) - p
		lo += p * negBelow
		hi += p * (negBelow + nb)
		negBelow += nb
	}
	return lo / (pos * neg), hi / (pos * neg), true
}

// exactAUC returns the most separating class of column j that passes the
// AUC rule (LabelLikeAUC and the chance bound), from exactAUCs.
func exactAUC(x []float32, d, j int, labels []uint8, counts []int) (LabelLike, bool) {
	n, c := len(labels), len(counts)
	aucs := exactAUCs(x, d, j, labels, counts)
	best := LabelLike{Rule: "auc"}
	found := false
	for k := range c {
		pos, neg := float64(counts[k]), float64(n-counts[k])
		if c == 2 && k == 0 || pos == 0 || neg == 0 {
			continue
		}
		sep := max(aucs[k], 1-aucs[k])
		// Hoeffding: P(|AUC − ½| ≥ t) ≤ 2 exp(−2 m t²) for a column
		// independent of the labels, m = min(pos, neg).
		logChance := math.Ln2 - 2*min(pos, neg)*(sep-0.5)*(sep-0.5)
		if sep >= LabelLikeAUC && logChance <= -LabelLikeEvidence && (!found || sep > best.AUC) {
			best.AUC, best.Class, best.LogP, found = sep, k, logChance, true
		}
	}
	return best, found
}

// exactAUCs is column j's AUC for each class against the others (ties ½;
// NaN for an empty class or rest), from one sort of (value, label).
func exactAUCs(x []float32, d, j int, labels []uint8, counts []int) []float64 {
	n, c := len(labels), len(counts)
	keys := make([]uint64, n)
	for i, y := range labels {
		keys[i] = uint64(sortable(x[i*d+j]))<<8 | uint64(y)
	}
	slices.Sort(keys)
	below := make([]float64, c) // rows of each class in lower groups
	conc := make([]float64, c)  // Σ over a class's rows of the other rows below (ties ½)
	group := make([]float64, c)
	var belowAll float64
	for i := 0; i < n; {
		v := keys[i] >> 8
		clear(group)
		var tot float64
		for ; i < n && keys[i]>>8 == v; i++ {
			group[keys[i]&0xff]++
			tot++
		}
		for k, g := range group {
			if g > 0 {
				conc[k] += g * (belowAll - below[k] + 0.5*(tot-g))
			}
		}
		for k, g := range group {
			below[k] += g
		}
		belowAll += tot
	}
	for k := range conc {
		conc[k] /= float64(counts[k]) * float64(n-counts[k])
	}
	return conc
}

// functionRule scans column j for a value holding rows of two classes
// (stopping there, or at LabelLikeValues distinct values); a column with
// none fires when its purity's chance under independence, Π_v Σ_c
// p_c^{r_v}, is at most e^−LabelLikeEvidence, r_v the distinct rows of
// value v (all features compared, rows hashes from rows): identical rows
// (a duplicated line, a row written twice) share their label whatever the
// column, so they are one draw, and a continuous column of a file with
// duplicated rows is no evidence.
func functionRule(x []float32, d, j int, labels []uint8, logp []float64, rows func() []uint64) (LabelLike, bool) {
	type cell struct {
		y uint8
		n uint32
	}
	seen := make(map[uint32]cell, 64)
	for i, y := range labels {
		k := sortable(x[i*d+j])
		c, ok := seen[k]
		switch {
		case !ok && len(seen) == LabelLikeValues:
			return LabelLike{}, false
		case !ok:
			seen[k] = cell{y, 1}
		case c.y != y:
			return LabelLike{}, false
		default:
			c.n++
			seen[k] = c
		}
	}
	chance := func(sizes func(yield func(uint64))) float64 {
		var logP float64
		terms := make([]float64, len(logp))
		sizes(func(m uint64) {
			if m < 2 {
				return // Σ_c p_c = 1: a single row is no evidence
			}
			for k, lp := range logp {
				terms[k] = float64(m) * lp
			}
			logP += logSumExp(terms)
		})
		return logP
	}
	// An upper bound first (rows counted, not distinct rows): most pure
	// columns that lack evidence stop here without the sort.
	logP := chance(func(yield func(uint64)) {
		for _, c := range seen {
			yield(uint64(c.n))
		}
	})
	if logP > -LabelLikeEvidence {
		return LabelLike{}, false
	}
	pairs := make([]uint64, len(labels)) // (value, row hash) of each row: distinct rows per value
	hs := rows()
	for i := range labels {
		pairs[i] = uint64(sortable(x[i*d+j]))<<32 | hs[i]>>32
	}
	slices.Sort(pairs)
	logP = chance(func(yield func(uint64)) {
		var r uint64
		for i, p := range pairs {
			if i > 0 && p>>32 != pairs[i-1]>>32 {
				yield(r)
				r = 0
			}
			if i == 0 || p != pairs[i-1] {
				r++
			}
		}
		yield(r)
	})
	if logP > -LabelLikeEvidence {
		return LabelLike{}, false
	}
	return LabelLike{Rule: "function", Values: len(seen), LogP: logP}, true
}

// rowHashes hashes each row of f (its dense values, −0 as +0, and its
// sparse indices): equal rows, equal hashes; distinct rows collide with
// probability about 2^−32 per pair within a value (only the top 32 bits
// are compared), which merges them: less evidence, never more.
func rowHashes(f *data.Frame) []uint64 {
	d := f.Dim()
	out := make([]uint64, f.Rows)
	par.Ranges(f.Rows, 0, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			h := uint64(14695981039346656037)
			for _, v := range f.X[i*d : (i+1)*d] {
				h = (h ^ uint64(math.Float32bits(v+0))) * 1099511628211
			}
			if f.Offsets != nil {
				for _, ix := range f.Indices[f.Offsets[i]:f.Offsets[i+1]] {
					h = (h ^ uint64(ix) ^ 1<<40) * 1099511628211
				}
			}
			h ^= h >> 31 // splitmix64's finalizer: every input bit reaches the top 32
			h *= 0xbf58476d1ce4e5b9
			h ^= h >> 27
			h *= 0x94d049bb133111eb
			out[i] = h ^ h>>31
		}
	})
	return out
}

// logSumExp is ln Σ e^v (−Inf terms, of absent classes, add nothing).
func logSumExp(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = max(m, x)
	}
	if math.IsInf(m, -1) {
		return m
	}
	var s float64
	for _, x := range v {
		s += math.Exp(x - m)
	}
	return m + math.Log(s)
}
