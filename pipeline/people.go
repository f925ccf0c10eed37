package pipeline

import (
	"runtime"
	"slices"
	"strings"

	"labelprivacy/data"
	"labelprivacy/internal/par"
	"labelprivacy/ledger"
)

// identityOf is the ledger's rule for who a person is: an id column when
// there is one, else the feature values as stored in the dataset's files
// (privatize, and sessions without standardization) or standardized
// (sessions with data.standardize), never matched with each other.
func identityOf(ids *data.IDs, standardized bool) ledger.Identity {
	switch {
	case ids != nil:
		return ledger.ByID
	case standardized:
		return ledger.ByStandardizedFeatures
	}
	return ledger.ByFeatures
}

// idColumnOf is the id column the ledger binds for ids (none without).
func idColumnOf(ids *data.IDs) ledger.IDColumn {
	if ids == nil {
		return ledger.IDColumn{}
	}
	t := ledger.IDInteger
	if ids.Text() {
		t = ledger.IDText
	}
	return ledger.IDColumn{Name: ids.Column, Type: t}
}

// personKeys returns the privacy ledger's key of every row of f: its id
// when ids is not nil, otherwise its feature values under rule (dense
// values in the order of the sorted feature names, so a copy with its
// columns reordered is the same people; sparse indices sorted). Rows are
// hashed in parallel.
func personKeys(k *ledger.Keys, f *data.Frame, ids *data.IDs, rule ledger.Identity) []uint64 {
	return personKeysCounted(k, f, ids, rule, nil)
}

// personKeysCounted is personKeys telling done (when set, from the
// workers) of every hashedPerReport rows hashed.
func personKeysCounted(k *ledger.Keys, f *data.Frame, ids *data.IDs, rule ledger.Identity, done func(rows int)) []uint64 {
	out := make([]uint64, f.Rows)
	par.Ranges(f.Rows, max(1, min(runtime.GOMAXPROCS(0), f.Rows/4096)), func(_, lo, hi int) {
		h := newRowHasher(k, f, ids, rule)
		for i := lo; i < hi; i++ {
			out[i] = h.key(i)
			if done != nil && (i-lo+1)%hashedPerReport == 0 {
				done(hashedPerReport)
			}
		}
		if done != nil {
			done((hi - lo) % hashedPerReport)
		}
	})
	return out
}

// hashedPerReport is how many rows a worker hashes between two counts.
const hashedPerReport = 1 << 16

// rowHasher computes personKeys' key of one row at a time (one goroutine).
type rowHasher struct {
	h    *ledger.PersonHasher
	f    *data.Frame
	ids  *data.IDs
	rule ledger.Identity
	perm []int // dense columns in the order of their sorted names
	x    []float32
	buf  []byte
}

func newRowHasher(k *ledger.Keys, f *data.Frame, ids *data.IDs, rule ledger.Identity) *rowHasher {
	d := f.Dim()
	perm := make([]int, d)
	for j := range perm {
		perm[j] = j
	}
	slices.SortFunc(perm, func(a, b int) int { return strings.Compare(f.Features[a], f.Features[b]) })
	return &rowHasher{h: k.NewPersonHasher(), f: f, ids: ids, rule: rule, perm: perm, x: make([]float32, d)}
}

// key is row i's key.
func (rh *rowHasher) key(i int) uint64 {
	if rh.ids != nil {
		rh.buf = rh.ids.Append(rh.buf[:0], i)
		return rh.h.ID(rh.buf)
	}
	f, d := rh.f, len(rh.perm)
	row := f.X[i*d : (i+1)*d]
	for j, p := range rh.perm {
		rh.x[j] = row[p]
	}
	var idx []uint32
	if f.Offsets != nil {
		idx = f.Indices[f.Offsets[i]:f.Offsets[i+1]]
	}
	return rh.h.Row(rh.rule, rh.x, idx)
}

// coveredPeople returns the person key of each release row.
func coveredPeople(all []uint64, rows []int) []uint64 {
	out := make([]uint64, len(rows))
	for i, r := range rows {
		out[i] = all[r]
	}
	return out
}
