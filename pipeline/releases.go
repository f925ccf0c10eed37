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

// personKeys returns the ledger key of every training row (computed once
// per key): its id (data.id_column) or its feature values as the models
// see them (standardized when data.standardize).
func (s *Session) personKeys(k *ledger.Keys) []uint64 {
	if s.people == nil || s.peopleKey != k.Check() {
		s.people, s.peopleKey = personKeys(k, s.train, s.ids, s.identity()), k.Check()
		s.peopleAll = nil
	}
	return s.people
}

// releasePeople returns the person key of each of a release's rows and
// their draws for the ledger (release.Draws). When no person has two
// training rows, draws change no charge, and the keys are taken from one
// sorted copy of the training rows' (less the rows a release leaves out),
// which Ledger.Record checks in one scan instead of sorting 10M keys per
// release; otherwise the rows go in release order with their draws.
func (s *Session) releasePeople(k *ledger.Keys, rel *release.Release) ([]uint64, []int64) {
	all := s.personKeys(k)
	if s.peopleAll == nil {
		s.peopleAll = slices.Clone(all)
		slices.Sort(s.peopleAll)
		s.peopleDistinct = len(slices.Compact(slices.Clone(s.peopleAll))) == len(s.peopleAll)
	}
	switch {
	case rel.Rows() == len(all) && (rel.Draws() == nil || s.peopleDistinct):
		return s.peopleAll, nil
	case !s.peopleDistinct:
		return coveredPeople(all, rel.Covered()), rel.Draws()
	}
	in := make([]bool, len(all))
	for _, r := range rel.Covered() {
		in[r] = true
	}
	var left []uint64
	for i, x := range in {
		if !x {
			left = append(left, all[i])
		}
	}
	slices.Sort(left)
	out := make([]uint64, 0, rel.Rows())
	j := 0
	for _, key := range s.peopleAll { // distinct: each left key drops one
		if j < len(left) && left[j] == key {
			j++
			continue
		}
		out = append(out, key)
	}
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
	var units []releaseUnit
	seen := map[releaseUnit]bool{}
	for _, r := range runs {
		u := releaseUnit{r.Setting, r.Plan.Release, r.Plan.ReleaseSeed}
		if u.path != "" && !seen[u] {
			seen[u] = true
			units = append(units, u)
		}
	}
	if len(units) == 0 {
		return nil
	}
	// The person keys (two uint64 per training row: 160 MB for 10M rows)
	// serve only the ledger entries made here.
	defer func() { s.people, s.peopleAll = nil, nil }()
	lock, err := flock.Acquire(s.Out(".release.lock"), flock.Exclusive, true, "train: making releases")
	if err != nil {
		return err
	}
	defer lock.Release()
	l, err := ledger.Open(s.ledgerPath(), ledger.Options{DeltaPrime: s.cfg.Privacy.DeltaPrime, Budget: s.cfg.Privacy.Budget})
	if err != nil {
		return fmt.Errorf("privacy: %w", err)
	}
	keys, err := l.Keys()
	if err != nil {
		return err
	}
	if err := l.Check(s.identity()); err != nil {
		return err
	}
	labels := keys.Labels(s.train.Label)
	entries, err := l.Rows()
	if err != nil {
		return err
	}
	aborted := map[string]bool{}
	for _, e := range entries {
		if e.Status == ledger.StatusAborted {
			aborted[e.ID] = true
		}
	}
	wrote, reused := 0, 0
	for i, u := range units {
		if err := ctx.Err(); err != nil {
			return err
		}
		path, seed := u.path, u.seed
		chk := s.checkRelease(entries, aborted, u, labels)
		if chk.current {
			reused++
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
			return fmt.Errorf("release %s: %w", path, err)
		}
		entry := rel.Entry(path, seed)
		entry.Input, entry.Labels, entry.KeyCheck, entry.Identity = s.dataset.Dir, labels, keys.Check(), s.identity()
		entry.People, entry.Draws = s.releasePeople(keys, rel)
		row, err := release.Publish(path, rel.Simulation(), md, l, entry)
		if err != nil {
			return fmt.Errorf("release %s: %w", path, err)
		}
		entries = append(entries, row)
		wrote++
		s.ev.Progress(Progress{Stage: "release", What: u.s.ID, UnitsDone: i + 1, Units: len(units)})
	}
	s.ev.Info("privatize", fmt.Sprintf("%s written, %d reused under %s; ledger %s",
		count(wrote, "release"), reused, s.Out("releases"), s.ledgerPath()))
	return nil
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
