package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"

	"labelprivacy/data"
	"labelprivacy/internal/english"
	"labelprivacy/internal/flock"
	"labelprivacy/ledger"
	"labelprivacy/pets"
	"labelprivacy/release"
)

// releaseUnit is one (setting, trial): its models at every learning rate
// train on the same release (their plans name the same path and seed).
type releaseUnit struct {
	s    *setting
	path string
	seed uint64
}

// ledgerPath is the simulation releases' ledger: privacy.ledger, or
// privacy_ledger.csv in the output directory (which holds their seeds and
// never leaves the machine).
func (s *Session) ledgerPath() string {
	if s.cfg.Privacy.Ledger != "" {
		return s.cfg.Privacy.Ledger
	}
	return s.Out(ledger.File)
}

// identity is the ledger's rule for the training rows.
func (s *Session) identity() ledger.Identity { return identityOf(s.ids, s.std != nil) }

// idColumn is the id column the ledger binds (data.id_column), if any.
func (s *Session) idColumn() ledger.IDColumn { return idColumnOf(s.ids) }

// personKeys returns the ledger key of every training row, in row order:
// its id (data.id_column) or its feature values as the models see them
// (standardized when data.standardize). Hashed on every call (8 bytes a
// row: 80 MB at 10M rows); sortedPeople keeps the session's one copy.
func (s *Session) personKeys(k *ledger.Keys) []uint64 {
	return personKeys(k, s.train, s.ids, s.identity())
}

// sortedPeople returns the training rows' keys sorted, computed once per
// key and kept while releases are made (the only copy the session holds),
// and notes whether every row is a different person.
func (s *Session) sortedPeople(k *ledger.Keys) []uint64 {
	if s.peopleSorted == nil || s.peopleKey != k.Check() {
		keys := s.personKeys(k)
		slices.Sort(keys)
		s.peopleSorted, s.peopleKey, s.peopleDistinct = keys, k.Check(), distinctSorted(keys)
	}
	return s.peopleSorted
}

// distinctSorted reports whether the sorted keys hold no value twice.
func distinctSorted(keys []uint64) bool {
	for i := 1; i < len(keys); i++ {
		if keys[i] == keys[i-1] {
			return false
		}
	}
	return true
}

// releasePeople returns the person key of each of a release's rows and
// their draws for the ledger (release.Draws). When no person has two
// training rows, draws change no charge, and the keys are the session's
// sorted copy (sortedPeople), which Ledger.Record checks in one scan
// instead of sorting 10M keys per release: as it is for a release of
// every row, else less the keys of the rows the release leaves out
// (hashed alone), removed in place (the copy is then made again for the
// next release: hashing costs time, a second copy memory). Otherwise the
// rows go in release order with their draws (hashed again).
func (s *Session) releasePeople(k *ledger.Keys, rel *release.Release) ([]uint64, []int64) {
	sorted := s.sortedPeople(k)
	switch {
	case rel.Rows() == len(sorted) && (rel.Draws() == nil || s.peopleDistinct):
		return sorted, nil
	case !s.peopleDistinct:
		s.peopleSorted = nil
		return coveredPeople(s.personKeys(k), rel.Covered()), rel.Draws()
	}
	in := make([]bool, len(sorted))
	for _, r := range rel.Covered() {
		in[r] = true
	}
	h := newRowHasher(k, s.train, s.ids, s.identity())
	var left []uint64
	for i, x := range in {
		if !x {
			left = append(left, h.key(i))
		}
	}
	slices.Sort(left)
	out, j := sorted[:0], 0
	for _, key := range sorted { // distinct: each left key drops one
		if j < len(left) && left[j] == key {
			j++
			continue
		}
		out = append(out, key)
	}
	s.peopleSorted = nil
	return out, nil
}

// makeReleases makes (or finds) the simulation release of every
// (setting, trial) that runs train on, once: under a lock shared by every
// process writing to this output (sweep shards too), a release whose
// ledger row matches its seed, its labels (keyed digest) and its file's
// SHA-256 is reused; any other is made and published with its ledger row,
// which composes it per training row (privacy.budget refuses one that
// would take a row above it).
func (s *Session) makeReleases(ctx context.Context, runs []*runSpec, exec executor) error {
	// The person keys (a uint64 per training row: 80 MB for 10M rows) serve
	// only the ledger entries made here.
	defer func() { s.peopleSorted = nil }()
	n, err := s.makeUnits(ctx, releaseUnits(runs), exec, nil)
	if err == nil {
		s.sayReleases(n, "")
	}
	return err
}

// releaseCount counts the releases a stage made and found current.
type releaseCount struct{ wrote, reused int }

func (c releaseCount) add(d releaseCount) releaseCount {
	return releaseCount{c.wrote + d.wrote, c.reused + d.reused}
}

// sayReleases reports what a stage's releases came to (nothing when it
// had none), with a note.
func (s *Session) sayReleases(n releaseCount, note string) {
	if n == (releaseCount{}) {
		return
	}
	s.ev.Info("privatize", fmt.Sprintf("%s written, %d reused under %s; ledger %s%s",
		english.Count(n.wrote, "release"), n.reused, s.Out("releases"), s.ledgerPath(), note))
}

// releaseUnits lists the (setting, trial) releases runs read, once each,
// in the order of their first run.
func releaseUnits(runs []*runSpec) []releaseUnit {
	var units []releaseUnit
	seen := map[releaseUnit]bool{}
	for _, r := range runs {
		u := releaseUnit{r.Setting, r.Plan.Release, r.Plan.ReleaseSeed}
		if u.path != "" && !seen[u] {
			seen[u] = true
			units = append(units, u)
		}
	}
	return units
}

// makeUnits is makeReleases of units, in order, calling made (when set)
// after each is current on disk (made or verified), and returns how many
// it wrote and reused; it keeps the session's person keys (sortedPeople)
// for a later call and reports nothing (sayReleases).
func (s *Session) makeUnits(ctx context.Context, units []releaseUnit, exec executor, made func(releaseUnit)) (n releaseCount, err error) {
	if len(units) == 0 {
		return n, nil
	}
	lock, err := flock.Acquire(s.Out(".release.lock"), flock.Exclusive, true, "train: making releases")
	if err != nil {
		return n, err
	}
	defer lock.Release()
	l, err := ledger.Open(s.ledgerPath(), ledger.Options{DeltaPrime: s.cfg.Privacy.DeltaPrime, Budget: s.cfg.Privacy.Budget})
	if err != nil {
		return n, fmt.Errorf("privacy: %w", err)
	}
	keys, err := l.Keys()
	if err != nil {
		return n, err
	}
	if err := l.Check(s.identity(), s.idColumn()); err != nil {
		return n, err
	}
	labels := keys.Labels(s.train.Label)
	if s.values() {
		labels = keys.Values(s.train.Value)
	}
	entries, err := l.Rows()
	if err != nil {
		return n, err
	}
	aborted := map[string]bool{}
	for _, e := range entries {
		if e.Status == ledger.StatusAborted {
			aborted[e.ID] = true
		}
	}
	m := s.startMeter(Progress{Stage: "release", Units: len(units)})
	defer m.Stop()
	s.releaseMeter.Store(m)
	defer s.releaseMeter.CompareAndSwap(m, nil)
	for i, u := range units {
		m.Unit(u.s.ID, i)
		if err := ctx.Err(); err != nil {
			return n, err
		}
		path, seed := u.path, u.seed
		chk := s.checkRelease(entries, aborted, u, labels)
		if chk.current {
			n.reused++
			if made != nil {
				made(u)
			}
			continue
		}
		switch {
		case chk.damaged:
			s.ev.Warn("release", chk.why+": made again (a new ledger row: the ledger counts it again, the safe direction)")
		case chk.why != "":
			s.ev.Info("release", chk.why+": made again")
		}
		rel, md, err := s.applyRelease(ctx, exec, u)
		if err != nil {
			return n, fmt.Errorf("release %s: %w", path, err)
		}
		steps := rel.Entries(path, seed) // one, or rr_bins's private prior before its bins
		people, draws := s.releasePeople(keys, rel)
		for j := range steps {
			e := &steps[j]
			e.Input, e.Labels, e.KeyCheck, e.Identity, e.IDColumn = s.dataset.Dir, labels, keys.Check(), s.identity(), s.idColumn()
			e.People, e.Draws = people, draws
			if e.Mech.Spec().Release == pets.ReleaseHistogram { // rr_bins's private prior
				e.Draws = make([]int64, len(people)) // the histogram: one draw of every row
			}
		}
		rows, err := release.PublishSteps(path, rel.SimulationChunked(), md, l, steps, release.Replace) // a damaged one is made again
		if err != nil {
			return n, fmt.Errorf("release %s: %w", path, err)
		}
		entries = append(entries, rows...)
		n.wrote++
		if made != nil {
			made(u)
		}
		m.Unit(u.s.ID, i+1)
	}
	return n, nil
}

// releaseCheck is the verdict on a unit's release on disk.
type releaseCheck struct {
	current bool   // reuse it
	why     string // why it is made again ("": made for the first time)
	// damaged: a file does not match what was recorded of it (or is gone
	// while its record is there), as opposed to a changed config or data.
	damaged bool
}

// checkRelease verifies unit u's release: the last ledger row for its
// path, not aborted, records these labels (their keyed digest), this seed
// and simulation noise; the file's SHA-256 is the row's; and what lives
// beside it is current too (checkSideFiles).
func (s *Session) checkRelease(entries []ledger.Row, aborted map[string]bool, u releaseUnit, labels string) releaseCheck {
	path, want := u.path, strconv.FormatUint(u.seed, 10)
	_, statErr := os.Stat(path)
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.Path != path || e.Status != ledger.StatusReleased || aborted[e.ID] {
			continue
		}
		if e.Noise != pets.NoiseSimulation || e.Seed != want || e.Labels != labels {
			return releaseCheck{why: fmt.Sprintf("release %s was made from other labels or with another seed", path)}
		}
		if errors.Is(statErr, fs.ErrNotExist) {
			return releaseCheck{why: fmt.Sprintf("release %s is missing (its ledger row %s is there)", path, e.ID), damaged: true}
		}
		sum, err := data.FileSHA256(path)
		if err != nil {
			return releaseCheck{why: fmt.Sprintf("release %s cannot be read (%v)", path, err), damaged: true}
		}
		if sum != e.SHA256 {
			return releaseCheck{why: fmt.Sprintf("release %s is damaged: its SHA-256 %.12s… differs from its ledger row's %.12s…", path, sum, e.SHA256), damaged: true}
		}
		return s.checkSideFiles(u)
	}
	if statErr == nil {
		return releaseCheck{why: fmt.Sprintf("release %s has no row in the ledger %s", path, s.ledgerPath()), damaged: true}
	}
	return releaseCheck{}
}

// readRelease reads a simulation release back for training, refusing one
// that carries raw label columns.
func readRelease(path string) (*data.Frame, error) {
	f, err := data.ReadFrame(path)
	if err != nil {
		return nil, err
	}
	if cols := f.RawLabelColumns(); len(cols) > 0 {
		return nil, fmt.Errorf("fit: release %s carries raw columns %v; refusing to train on it", path, cols)
	}
	return f, nil
}
