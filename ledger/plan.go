package ledger

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"labelprivacy/pets"
)

// plan is what a release does to the people file: the ops of its R record
// (or the classes of a new snapshot) and where each person goes.
type plan struct {
	row     uint64 // the release's row number
	step    pets.Step
	c       *covered
	nch     int
	tgt     []int32 // [class*(nch+1) + charge, or nch for not covered]: the class after
	fresh   []int32 // [charge]: the class of new people
	classes []pclass
	ops     []byte // encoded ops
	nops    int
	nfresh  int
	freshB  []byte // encoded new-people entries
	listed  uint64 // people who change class
	worst   worst
	// cand holds, in key order, the people pass 1 saw that the release
	// does not cover or that are new (up to maxCand): when no covered
	// person of a known class moves, they are all a release can list, and
	// a second pass is not needed.
	cand      []candidate
	candFull  bool
	splitsCov bool
}

type candidate struct {
	key       uint64
	class, ch int32
}

// maxCand bounds the candidates pass 1 keeps (1 MiB): plenty for the
// people an LLP release drops, and a second pass beyond.
const maxCand = 1 << 16

// plan computes the row r would get (pass 1 over the people: every
// person counted, the snapshot's MAC verified), the ops, and applies the
// budget.
func (ld *loaded) plan(r *Release) (Row, *plan, error) {
	l := ld.l
	if _, ok := ld.byID[r.ID]; ok || ld.aborted[r.ID] {
		return Row{}, nil, fmt.Errorf("%w: id %q is already in %s", ErrDuplicateRelease, r.ID, l.path)
	}
	if err := ld.fits(r.Identity, r.IDColumn, r.KeyCheck); err != nil {
		return Row{}, nil, err
	}
	c := coveredBy(r)
	pl := &plan{row: uint64(len(ld.csv.rows) + 1), step: pets.StepOf(r.Mech), c: c, nch: len(c.charges)}
	counts, freshCounts, err := ld.countCovered(pl)
	if err != nil {
		return Row{}, nil, err
	}
	after := ld.planClasses(pl, counts)
	after = ld.planFresh(pl, freshCounts, after)
	if pl.worst, err = worstOf(ld.people.h, after, ld.delta); err != nil {
		return Row{}, nil, err
	}
	if b := l.opt.Budget; b > 0 && pl.worst.comp.Total > b {
		return Row{}, nil, ld.overBudget(b, after)
	}
	return ld.rowOf(r, pl), pl, nil
}

// countCovered is pass 1: the people of each class the release covers, per
// charge (counts[class·nch + charge]), the new people per charge, and the
// candidates (pl.cand: people not covered or new, up to maxCand).
func (ld *loaded) countCovered(pl *plan) (counts, fresh []uint64, err error) {
	p, nch := ld.people, pl.nch
	counts, fresh = make([]uint64, len(p.classes)*nch), make([]uint64, nch)
	err = p.walk(ld.keys, pl.c, func(key uint64, class, ch int32) {
		switch {
		case ch >= 0 && class >= 0:
			counts[int(class)*nch+int(ch)]++
			return
		case ch >= 0:
			fresh[ch]++
		}
		if len(pl.cand) < maxCand {
			pl.cand = append(pl.cand, candidate{key, class, ch})
		} else {
			pl.candFull = true
		}
	})
	return counts, fresh, err
}

// addOp appends one op (class, charge, mode, count) to pl.
func (pl *plan) addOp(class, ch int, mode byte, n uint64) {
	pl.ops = binary.AppendUvarint(pl.ops, uint64(class))
	pl.ops = binary.AppendUvarint(pl.ops, uint64(ch))
	pl.ops = append(pl.ops, mode)
	pl.ops = binary.AppendUvarint(pl.ops, n)
	pl.nops++
}

// newClass adds a class of n people of history hist to pl; its index.
func (pl *plan) newClass(hist int32, n uint64) int32 {
	pl.classes = append(pl.classes, pclass{hist, n})
	return int32(len(pl.classes) - 1)
}

// planClasses makes the ops of the known classes: each keeps its largest
// part (its people the release does not cover, or those covered with one
// charge); the others are listed as classes of their own. It returns the
// histories the covered people reach, with their counts.
func (ld *loaded) planClasses(pl *plan, counts []uint64) (after []weighted) {
	p, c, nch := ld.people, pl.c, pl.nch
	pl.classes = slices.Clone(p.classes)
	pl.tgt = make([]int32, len(p.classes)*(nch+1))
	for ci, cl := range p.classes {
		row := pl.tgt[ci*(nch+1) : (ci+1)*(nch+1)]
		for j := range row {
			row[j] = int32(ci)
		}
		cov := counts[ci*nch : (ci+1)*nch]
		var covered uint64
		best := -1
		for ch, n := range cov {
			covered += n
			if n > 0 && (best < 0 || n > cov[best]) {
				best = ch
			}
			if n > 0 {
				after = append(after, weighted{hist: p.h.add(cl.hist, pl.step, c.charges[ch]), from: cl.hist, n: n})
			}
		}
		if best < 0 {
			continue
		}
		u := cl.size - covered
		keep := -1 // the charge whose people stay in the class; −1: the uncovered stay
		if cov[best] > u {
			keep = best
		}
		for ch, n := range cov {
			if n > 0 && ch != keep {
				pl.splitsCov = true
				pl.addOp(ci, ch, opSplitCovered, n)
				pl.classes[ci].size -= n
				row[ch] = pl.newClass(p.h.add(cl.hist, pl.step, c.charges[ch]), n)
				pl.listed += n
			}
		}
		if keep >= 0 {
			grown := p.h.add(cl.hist, pl.step, c.charges[keep])
			if u > 0 {
				pl.addOp(ci, keep, opSplitUncovered, u)
				pl.classes[ci].size -= u
				row[nch] = pl.newClass(cl.hist, u)
				pl.listed += u
			} else {
				pl.addOp(ci, keep, opAll, 0)
			}
			pl.classes[ci].hist = grown
		}
	}
	return after
}

// planFresh makes a class per charge of the new people, adding their
// histories to after.
func (ld *loaded) planFresh(pl *plan, freshCounts []uint64, after []weighted) []weighted {
	h := ld.people.h
	pl.fresh = make([]int32, pl.nch)
	for ch, n := range freshCounts {
		pl.fresh[ch] = -1
		if n > 0 {
			hist := h.add(0, pl.step, pl.c.charges[ch])
			after = append(after, weighted{hist: hist, from: 0, n: n})
			pl.fresh[ch] = pl.newClass(hist, n)
			pl.freshB = binary.AppendUvarint(pl.freshB, uint64(ch))
			pl.freshB = binary.AppendUvarint(pl.freshB, n)
			pl.nfresh++
			pl.listed += n
		}
	}
	return after
}

// overBudget says how many people the release would take above budget b,
// how many of them to the largest total, and what they carry now.
func (ld *loaded) overBudget(b float64, after []weighted) error {
	h := ld.people.h
	be := &BudgetError{Budget: b, DeltaPrime: ld.delta}
	for _, w := range after {
		ca, err := h.compose(w.hist, ld.delta)
		if err != nil {
			return err
		}
		if ca.Total <= b {
			continue
		}
		be.Over += int(w.n)
		cb, err := h.compose(w.from, ld.delta)
		if err != nil {
			return err
		}
		switch {
		case ca.Total > be.Would:
			be.Would, be.AtWorst, be.Current, be.Releases = ca.Total, int(w.n), cb.Total, h.list[w.from].releases
		case ca.Total == be.Would:
			be.AtWorst += int(w.n)
			if cb.Total > be.Current {
				be.Current, be.Releases = cb.Total, h.list[w.from].releases
			}
		}
	}
	return be
}

// rowOf is the ledger row of release r as planned.
func (ld *loaded) rowOf(r *Release, pl *plan) Row {
	m, c := r.Mech, pl.c
	e := Row{ID: r.ID, Status: StatusReleased, Input: r.Input, Labels: r.Labels, Identity: r.Identity, IDColumn: r.IDColumn,
		Rows: c.rows, People: len(c.keys), Mechanism: m.Kind(), K: m.K(), Epsilon: m.Epsilon(),
		Noise: r.Noise, Seed: r.Seed, Path: r.Path, SHA256: r.SHA256}
	w := pl.worst
	e.Releases, e.PeopleAtWorst = w.releases, int(w.people)
	cm := w.comp
	e.EpsTotal, e.EpsTotalBasic, e.EpsTotalDRV, e.EpsTotalDRVQuad, e.EpsTotalPLD = cm.Total, cm.Basic, cm.DRV, cm.DRVQuad, cm.PLD
	e.DeltaPrime = ld.delta
	e.Time = ld.l.now().UTC()
	return e
}

// write records the plan in the people file: an R record listing the
// people who change class, or, when those listed since the snapshot grow
// past a quarter of it, a new snapshot (pass 2 over the people).
func (pl *plan) write(ld *loaded, line []byte) error {
	p := ld.people
	var persons uint64
	for _, c := range pl.classes {
		persons += c.size
	}
	baseN := uint64(0)
	if p.base != nil {
		baseN = p.base.n
	}
	if uint64(p.listed)+pl.listed > max(baseN/4, uint64(compactMinListed)) || p.records+1 >= compactRecords {
		return pl.writeSnapshot(ld, line, persons)
	}
	var chs []byte
	for _, ch := range pl.c.charges {
		chs = binary.AppendUvarint(chs, uint64(ch.single))
		chs = binary.AppendUvarint(chs, uint64(len(ch.groups)))
		for _, g := range ch.groups {
			chs = binary.AppendUvarint(chs, uint64(g))
		}
	}
	b := (&dec{}).appendRow(pl.row, line)
	b = binary.AppendUvarint(b, uint64(len(pl.c.charges)))
	b = append(b, chs...)
	b = binary.AppendUvarint(b, uint64(pl.nops))
	b = append(b, pl.ops...)
	b = binary.AppendUvarint(b, uint64(pl.nfresh))
	b = append(b, pl.freshB...)
	var listed []byte
	n, last := uint64(0), uint64(0)
	list := func(key uint64, class, ch int32) {
		to := pl.target(class, ch)
		if to == class {
			return
		}
		listed = binary.AppendUvarint(listed, key-last)
		listed = binary.AppendUvarint(listed, uint64(to))
		last = key
		n++
	}
	switch {
	case pl.listed == 0:
	case !pl.splitsCov && !pl.candFull:
		for _, x := range pl.cand {
			list(x.key, x.class, x.ch)
		}
	default:
		if err := p.walk(ld.keys, pl.c, list); err != nil {
			return err
		}
	}
	if n != pl.listed {
		return fmt.Errorf("ledger: people file: listed %d people, the plan says %d", n, pl.listed)
	}
	b = binary.AppendUvarint(b, n)
	b = append(b, listed...)
	return p.appendRecord(ld.keys, recRelease, b)
}

// target is the class after the release of a person of class (−1: new)
// covered with charge ch (−1: not covered).
func (pl *plan) target(class, ch int32) int32 {
	if class < 0 {
		return pl.fresh[ch]
	}
	if ch < 0 {
		ch = int32(pl.nch)
	}
	return pl.tgt[int(class)*(pl.nch+1)+int(ch)]
}

// writeSnapshot rewrites the people file as one snapshot after the
// release: classes with equal histories merged, empty ones dropped.
func (pl *plan) writeSnapshot(ld *loaded, line []byte, persons uint64) error {
	p := ld.people
	h := p.h
	histIdx := map[int32]uint64{}
	var hists []int32
	merged := map[int32]uint32{} // history → new class
	remap := make([]uint32, len(pl.classes))
	var classes []pclass
	for i, c := range pl.classes {
		if c.size == 0 {
			continue
		}
		nc, ok := merged[c.hist]
		if !ok {
			nc = uint32(len(classes))
			merged[c.hist] = nc
			classes = append(classes, pclass{c.hist, 0})
			if _, ok := histIdx[c.hist]; !ok {
				histIdx[c.hist] = uint64(len(hists))
				hists = append(hists, c.hist)
			}
		}
		classes[nc].size += c.size
		remap[i] = nc
	}
	head := (&dec{}).appendRow(pl.row, line)
	head = appendHistories(head, h, hists, snapshotVersion)
	head = binary.AppendUvarint(head, uint64(len(classes)))
	for _, c := range classes {
		head = binary.AppendUvarint(head, histIdx[c.hist])
		head = binary.AppendUvarint(head, c.size)
	}
	sw, err := newSnapshotWriter(p.path, ld.keys, head, persons, snapshotVersion)
	if err != nil {
		return err
	}
	err = p.walk(ld.keys, pl.c, func(key uint64, class, ch int32) {
		sw.put(key, remap[pl.target(class, ch)])
	})
	if err != nil {
		sw.abort()
		return err
	}
	return sw.commit()
}

// snapshotVersion is the version of the people files snapshots write:
// peopleVersion (tests write peopleVersionIndex files with it).
var snapshotVersion uint32 = peopleVersion

// appendHistories appends the histories hists of h to a snapshot's head
// in the encoding of a people file of the given version: each step's
// mechanism by name (peopleVersion) or, for peopleVersionIndex files (the
// tests write them), by registry value.
func appendHistories(head []byte, h *histories, hists []int32, version uint32) []byte {
	head = binary.AppendUvarint(head, uint64(len(hists)))
	for _, id := range hists {
		x := h.list[id]
		head = binary.AppendUvarint(head, uint64(x.releases))
		head = binary.AppendUvarint(head, uint64(len(x.steps)))
		for _, sc := range x.steps {
			if version == peopleVersionIndex {
				head = append(head, byte(sc.s.Kind))
			} else {
				name := sc.s.Kind.String()
				head = binary.AppendUvarint(head, uint64(len(name)))
				head = append(head, name...)
			}
			head = binary.LittleEndian.AppendUint64(head, math.Float64bits(sc.s.Epsilon))
			head = binary.AppendUvarint(head, uint64(sc.n))
		}
	}
	return head
}

// weighted is n people going from history from to history hist.
type weighted struct {
	hist, from int32
	n          uint64
}

// worst is the largest total among some people.
type worst struct {
	comp     pets.Composition
	releases int
	people   uint64 // people at that total
}

// worstOf returns the worst of the histories: the largest Total, ties
// broken by Basic then by the number of releases; people counts everyone
// whose Total equals it.
func worstOf(h *histories, ws []weighted, deltaPrime float64) (worst, error) {
	var w worst
	for i, x := range ws {
		c, err := h.compose(x.hist, deltaPrime)
		if err != nil {
			return worst{}, err
		}
		rel := h.list[x.hist].releases
		switch {
		case i == 0 || c.Total > w.comp.Total:
			w = worst{comp: c, releases: rel, people: x.n}
		case c.Total == w.comp.Total:
			w.people += x.n
			if c.Basic > w.comp.Basic || (c.Basic == w.comp.Basic && rel > w.releases) {
				w.comp, w.releases = c, rel
			}
		}
	}
	return w, nil
}
