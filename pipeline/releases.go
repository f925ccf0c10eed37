package pipeline

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"

	"labelprivacy/data"
	"labelprivacy/internal/flock"
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
	return s.Out(pets.LedgerFile)
}

// personKeys returns the ledger key of every training row (computed once
// per key): its id (data.id_column) or its feature values as the models
// see them (standardized when data.standardize).
func (s *Session) personKeys(k *pets.Keys) []uint64 {
	if s.people == nil || s.peopleKey != k.Check() {
		domain := domainRaw
		if s.std != nil {
			domain = domainStandardized
		}
		s.people, s.peopleKey = personKeys(k, s.train, s.ids, domain), k.Check()
		s.peopleAll = nil
	}
	return s.people
}

// releasePeople returns the person keys of a release's rows; a release of
// every training row (rr, bot, LLP without a dropped remainder) shares one
// sorted, deduplicated copy, which Ledger.Record leaves as it is.
func (s *Session) releasePeople(k *pets.Keys, rel *release.Release) []uint64 {
	all := s.personKeys(k)
	if rel.Rows() != len(all) {
		return coveredPeople(all, rel.Covered())
	}
	if s.peopleAll == nil {
		s.peopleAll = pets.SortKeys(slices.Clone(all))
	}
	return s.peopleAll
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
	ledger, err := pets.NewLedger(s.ledgerPath(), s.cfg.Privacy.DeltaPrime)
	if err != nil {
		return err
	}
	if err := ledger.SetBudget(s.cfg.Privacy.Budget); err != nil {
		return fmt.Errorf("privacy.budget: %w", err)
	}
	keys, err := ledger.Keys()
	if err != nil {
		return err
	}
	labels := keys.Labels(s.train.Label)
	var entries []pets.LedgerEntry
	if _, err := os.Stat(s.ledgerPath()); err == nil {
		if entries, err = pets.ReadLedger(s.ledgerPath()); err != nil {
			return err
		}
	}
	aborted := map[string]bool{}
	for _, e := range entries {
		if e.Status == pets.StatusAborted {
			aborted[e.ID] = true
		}
	}
	wrote, reused := 0, 0
	for i, u := range units {
		if err := ctx.Err(); err != nil {
			return err
		}
		path, seed := u.path, u.seed
		if ok, err := s.releaseCurrent(entries, aborted, path, seed, labels); err != nil {
			return err
		} else if ok && s.sideFilesCurrent(u) {
			reused++
			continue
		}
		rel, md, err := s.applyRelease(ctx, exec, u)
		if err != nil {
			return fmt.Errorf("release %s: %w", path, err)
		}
		entry := rel.Entry(path, seed)
		entry.Input, entry.Labels, entry.KeyCheck = s.dataset.Dir, labels, keys.Check()
		entry.People = s.releasePeople(keys, rel)
		row, err := release.Publish(path, rel.Simulation(), md, ledger, entry)
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

// releaseCurrent reports whether path holds the simulation release of
// these labels (their keyed digest) made with seed: its ledger row is
// there, not aborted, and the file's bytes are the ones recorded.
func (s *Session) releaseCurrent(entries []pets.LedgerEntry, aborted map[string]bool, path string, seed uint64, labels string) (bool, error) {
	want := strconv.FormatUint(seed, 10)
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.Path != path || e.Status != pets.StatusReleased || aborted[e.ID] {
			continue
		}
		if e.Noise != pets.NoiseSimulation || e.Seed != want || e.Labels != labels {
			return false, nil
		}
		sum, err := data.FileSHA256(path)
		if err != nil {
			return false, nil // missing or unreadable: make it again
		}
		return sum == e.SHA256, nil
	}
	return false, nil
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
