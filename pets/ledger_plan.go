package pets

// A ledger's state and the plan of a release: the rows read and indexed,
// the people file streamed into history classes, the classes a release
// moves people into and the worst covered person's totals.

import (
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// ledgerState is the CSV's rows, indexed.
type ledgerState struct {
	rows    []LedgerEntry
	byID    map[string]*LedgerEntry // the released row of each id
	aborted map[string]bool
}

func (st *ledgerState) live(id string) bool { return st.byID[id] != nil && !st.aborted[id] }

func (st *ledgerState) step(id string) Step {
	e := st.byID[id]
	return Step{Kind: e.Mechanism, Epsilon: e.Epsilon}
}

// load reads and checks every CSV row of f (locked by the caller).
func (l *Ledger) load(f *os.File) (*ledgerState, error) {
	b, err := readAll(f)
	if err != nil {
		return nil, fmt.Errorf("pets: ledger: read %s: %w", l.path, err)
	}
	rows, err := parseLedger(l.path, b)
	if err != nil {
		return nil, err
	}
	return indexRows(rows), nil
}

func indexRows(rows []LedgerEntry) *ledgerState {
	st := &ledgerState{rows: rows, byID: map[string]*LedgerEntry{}, aborted: map[string]bool{}}
	for i := range rows {
		if rows[i].Status == StatusReleased {
			st.byID[rows[i].ID] = &rows[i]
		} else {
			st.aborted[rows[i].ID] = true
		}
	}
	return st
}

// openPeopleFor opens the people file and checks it against the CSV: its
// key check must be the key's, and it must name every live release.
func (l *Ledger) openPeopleFor(st *ledgerState) (*peopleReader, error) {
	pp := PeoplePath(l.path)
	pr, err := openPeople(pp)
	if err != nil {
		return nil, err
	}
	var known map[string]bool
	if pr != nil {
		k, err := readKey(KeyPath(l.path))
		if err != nil {
			pr.Close()
			return nil, fmt.Errorf("%w: %v", ErrLedgerKey, err)
		}
		if pr.hdr.keyCheck != keyCheckBytes(k.Check()) {
			pr.Close()
			return nil, fmt.Errorf("%w: %s was recorded with another key than %s (the key was replaced?): "+
				"restore the original key", ErrLedgerKey, pp, KeyPath(l.path))
		}
		known = make(map[string]bool, len(pr.hdr.ids))
		for _, id := range pr.hdr.ids {
			known[id] = true
		}
	}
	for id := range st.byID {
		if st.live(id) && !known[id] {
			if pr != nil {
				pr.Close()
			}
			return nil, &LedgerError{Path: l.path, Msg: fmt.Sprintf("release %q is recorded but %s does not list "+
				"its people (the people file is missing or older than the ledger): refusing, since every "+
				"total would under-count; restore the people file that goes with this ledger", id, pp)}
		}
	}
	return pr, nil
}

// class is a history class with its live history.
type class struct {
	ids   []string // live release ids
	steps []Step
	had   map[string]bool // every id of the stored history (aborted ones too)
	size  uint64
}

// currentClasses returns the people file's classes with live histories
// (full verification of the file when verify).
func (l *Ledger) currentClasses(st *ledgerState, verify bool) ([]class, error) {
	pr, err := l.openPeopleFor(st)
	if err != nil || pr == nil {
		return nil, err
	}
	defer pr.Close()
	if verify {
		if err := merge(pr, nil, func(uint64, int, bool) {}); err != nil {
			return nil, err
		}
	}
	out := make([]class, len(pr.hdr.classes))
	for i, c := range pr.hdr.classes {
		out[i] = class{had: map[string]bool{}, size: c.size}
		for _, id := range idsOf(&pr.hdr, i) {
			out[i].had[id] = true
			if st.live(id) {
				out[i].ids = append(out[i].ids, id)
				out[i].steps = append(out[i].steps, st.step(id))
			}
		}
	}
	return out, nil
}

// plan is the people file after a release, as computed by pass 1.
type plan struct {
	hdr        peopleHeader
	stay, move []int32 // old class → new class (−1: the person is dropped)
	fresh      int32   // class of covered people not yet in the file
	rows       int
	worst      worst
}

// plan walks the people file once (pass 1) to count, for each history
// class, the people r covers and those it does not; builds the classes
// after r (live histories only: aborted and unrecorded releases are
// dropped, identical histories merged); computes the worst covered
// person's totals and applies the budget.
func (l *Ledger) plan(st *ledgerState, r *Release) (*plan, error) {
	pr, err := l.openPeopleFor(st)
	if err != nil {
		return nil, err
	}
	var old peopleHeader
	var stats mergeStats
	if pr != nil {
		old = pr.hdr
		stats.stay = make([]uint64, len(old.classes))
		stats.move = make([]uint64, len(old.classes))
		err = merge(pr, r.People, func(_ uint64, c int, covered bool) {
			switch {
			case c < 0:
				stats.fresh++
			case covered:
				stats.move[c]++
			default:
				stats.stay[c]++
			}
		})
		pr.Close()
		if err != nil {
			return nil, err
		}
	} else {
		stats.fresh = uint64(len(r.People))
	}
	k, err := readKey(KeyPath(l.path))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLedgerKey, err)
	}
	p := &plan{rows: r.Rows, fresh: -1}
	p.hdr.keyCheck = keyCheckBytes(k.Check())
	// Release table: the live ids in recording order, then r.
	remap := make([]int32, len(old.ids))
	for i, id := range old.ids {
		remap[i] = -1
		if st.live(id) {
			remap[i] = int32(len(p.hdr.ids))
			p.hdr.ids = append(p.hdr.ids, id)
		}
	}
	rIdx := uint32(len(p.hdr.ids))
	p.hdr.ids = append(p.hdr.ids, r.ID)
	index := map[string]int32{}
	intern := func(h []uint32, n uint64) int32 {
		var b strings.Builder
		for _, x := range h {
			b.WriteString(strconv.FormatUint(uint64(x), 36))
			b.WriteByte(',')
		}
		c, ok := index[b.String()]
		if !ok {
			c = int32(len(p.hdr.classes))
			index[b.String()] = c
			p.hdr.classes = append(p.hdr.classes, peopleClass{hist: slices.Clone(h)})
		}
		p.hdr.classes[c].size += n
		p.hdr.persons += n
		return c
	}
	p.stay = make([]int32, len(old.classes))
	p.move = make([]int32, len(old.classes))
	withR := map[int32]bool{}
	for c, oc := range old.classes {
		var h []uint32
		for _, x := range oc.hist {
			if remap[x] >= 0 {
				h = append(h, uint32(remap[x]))
			}
		}
		p.stay[c], p.move[c] = -1, -1
		if stats.stay[c] > 0 && len(h) > 0 {
			p.stay[c] = intern(h, stats.stay[c])
		}
		if stats.move[c] > 0 {
			p.move[c] = intern(append(h, rIdx), stats.move[c])
			withR[p.move[c]] = true
		}
	}
	if stats.fresh > 0 {
		p.fresh = intern([]uint32{rIdx}, stats.fresh)
		withR[p.fresh] = true
	}
	// The covered people's totals with r, and without it for the budget.
	rStep := StepOf(r.Mech)
	var after []weighted
	for _, c := range slices.Sorted(maps.Keys(withR)) { // deterministic order
		cl := p.hdr.classes[c]
		steps := make([]Step, 0, len(cl.hist))
		for _, x := range cl.hist[:len(cl.hist)-1] {
			steps = append(steps, st.step(p.hdr.ids[x]))
		}
		after = append(after, weighted{steps: append(steps, rStep), n: cl.size})
	}
	if p.worst, err = worstOf(after, l.deltaPrime); err != nil {
		return nil, err
	}
	if l.budget > 0 && p.worst.comp.Total > l.budget {
		be := &BudgetError{Budget: l.budget, DeltaPrime: l.deltaPrime}
		for _, w := range after {
			ca, err := Compose(w.steps, l.deltaPrime)
			if err != nil {
				return nil, err
			}
			if ca.Total <= l.budget {
				continue
			}
			be.People += int(w.n)
			cb, err := Compose(w.steps[:len(w.steps)-1], l.deltaPrime)
			if err != nil {
				return nil, err
			}
			if cb.Total > be.Current || be.People == int(w.n) {
				be.Current, be.Releases = cb.Total, len(w.steps)-1
			}
			be.Would = math.Max(be.Would, ca.Total)
		}
		return nil, be
	}
	return p, nil
}

// writePeople streams the people file again (pass 2), writing each person
// with its class after the release, and renames the result into place.
func (l *Ledger) writePeople(p *plan, keys []uint64) error {
	pp := PeoplePath(l.path)
	pr, err := openPeople(pp)
	if err != nil {
		return err
	}
	if pr != nil {
		defer pr.Close()
	}
	pw, err := newPeopleWriter(pp, &p.hdr)
	if err != nil {
		return err
	}
	err = merge(pr, keys, func(key uint64, old int, covered bool) {
		c := p.fresh
		switch {
		case old >= 0 && covered:
			c = p.move[old]
		case old >= 0:
			c = p.stay[old]
		}
		if c >= 0 {
			pw.put(key, uint32(c))
		}
	})
	if err != nil {
		pw.abort()
		return err
	}
	return pw.commit()
}

// weighted is a history shared by n people.
type weighted struct {
	steps []Step
	n     uint64
}

// worst is the largest total among some people.
type worst struct {
	comp     Composition
	releases int
	people   uint64 // people at that total
}

// worstOf returns the worst of the histories: the largest Total, ties
// broken by Basic then by the number of releases; people counts everyone
// whose Total equals it.
func worstOf(hs []weighted, deltaPrime float64) (worst, error) {
	var w worst
	for i, h := range hs {
		c, err := Compose(h.steps, deltaPrime)
		if err != nil {
			return worst{}, err
		}
		switch {
		case i == 0 || c.Total > w.comp.Total:
			w = worst{comp: c, releases: len(h.steps), people: h.n}
		case c.Total == w.comp.Total:
			w.people += h.n
			if c.Basic > w.comp.Basic || (c.Basic == w.comp.Basic && len(h.steps) > w.releases) {
				w.comp, w.releases = c, len(h.steps)
			}
		}
	}
	return w, nil
}
