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

// personKeys returns the privacy ledger's key of every row of f: its id
// when ids is not nil, otherwise its feature values under rule (dense
// values in the order of the sorted feature names, so a copy with its
// columns reordered is the same people; sparse indices sorted). Rows are
// hashed in parallel.
func personKeys(k *ledger.Keys, f *data.Frame, ids *data.IDs, rule ledger.Identity) []uint64 {
	out := make([]uint64, f.Rows)
	d := f.Dim()
	perm := make([]int, d)
	for j := range perm {
		perm[j] = j
	}
	slices.SortFunc(perm, func(a, b int) int { return strings.Compare(f.Features[a], f.Features[b]) })
	par.Ranges(f.Rows, max(1, min(runtime.GOMAXPROCS(0), f.Rows/4096)), func(_, lo, hi int) {
		h := k.NewPersonHasher()
		var buf []byte
		x := make([]float32, d)
		for i := lo; i < hi; i++ {
			if ids != nil {
				buf = ids.Append(buf[:0], i)
				out[i] = h.ID(buf)
				continue
			}
			row := f.X[i*d : (i+1)*d]
			for j, p := range perm {
				x[j] = row[p]
			}
			var idx []uint32
			if f.Offsets != nil {
				idx = f.Indices[f.Offsets[i]:f.Offsets[i+1]]
			}
			out[i] = h.Row(rule, x, idx)
		}
	})
	return out
}

// coveredPeople returns the person key of each release row.
func coveredPeople(all []uint64, rows []int) []uint64 {
	out := make([]uint64, len(rows))
	for i, r := range rows {
		out[i] = all[r]
	}
	return out
}
