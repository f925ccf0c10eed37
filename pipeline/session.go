package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"time"

	"labelprivacy/audit"
	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/internal/flock"
	"labelprivacy/internal/memctl"
	"labelprivacy/llp"
)

// Access is how a session uses its output directory.
type Access int

const (
	// Exclusive: a single-writer stage (run, fit, audit). A second one on
	// the same output fails at once, naming the holder.
	Exclusive Access = iota + 1
	// Shared: a sweep shard; shards of one sweep run concurrently (also on
	// several hosts of a shared filesystem) and exclude single-writer stages.
	Shared
)

// Session is a validated config with its dataset and its grid: what every
// stage needs.
type Session struct {
	cfg       *config.Config
	dataset   *data.Dataset // dir and meta; its Train and Test are the frames below
	datasetID string        // content identity (data.Meta.Identity)
	// std is the standardization applied to Train and Test (nil: none).
	std *data.Standardizer
	// train and test are the frames the models see: standardized features
	// (when Std is set) with the original label (and eta) columns.
	train, test *data.Frame
	settings    []*setting
	runs        []*runSpec
	configID    string

	ev   Events
	lock *flock.Lock
	ids  *data.IDs // the training rows' data.id_column, or nil
	// peopleSorted: the ledger's keys of the training rows, sorted
	// (sortedPeople); peopleDistinct: no person has two training rows.
	peopleSorted   []uint64
	peopleDistinct bool
	peopleKey      string // the key check peopleSorted was computed with
	// newSampler, when set (by a test), makes the sampler the audit
	// attacks instead of the production release path (auditSampler).
	newSampler func(part llp.Partitioner, prior []float64) audit.Sampler
	// started is when Open was called (the command's start, for
	// provenance and the report's wall time).
	started time.Time
	// light: a session of stages that never train (the audit): train holds
	// the training rows' labels and key columns only (no features, η or
	// ids), and no release is made.
	light bool
}

// Open validates cfg, checks the planned dataset against the memory
// available (before writing anything), takes the output lock, makes or
// loads the dataset, checks the config against it (bag rules' columns and
// key groups, test classes, model), writes config.resolved.yaml,
// standardizes the data and expands the grid.
func Open(ctx context.Context, cfg *config.Config, access Access, ev Events) (*Session, error) {
	return open(ctx, cfg, ev, openOptions{access: access})
}

// openOptions say what a session is opened for.
type openOptions struct {
	access Access
	// light: the session never trains (Session.light).
	light bool
	// audit: the session audits; a setting the exact audit cannot take
	// (checkAuditable) is refused before anything is written.
	audit bool
}

// open is Open; a light session (the audit alone) does not load the
// training features (Session.light).
func open(ctx context.Context, cfg *config.Config, ev Events, o openOptions) (*Session, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	light := o.light
	// Let about a tenth of the live heap (at least 64 MiB) pile up as
	// garbage, not all of it (unless GOGC or GOMEMLIMIT says otherwise).
	memctl.Start()
	s := &Session{cfg: cfg, ev: orDiscard(ev), configID: configFingerprint(cfg), started: time.Now(), light: light}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	// Refusals that need only the config and meta.json come before the
	// output lock: a refused run leaves nothing in the output.
	m, err := s.plannedMeta()
	if err != nil {
		return nil, err
	}
	if err := s.checkMemory(m); err != nil { // before synthesizing or loading anything
		return nil, err
	}
	if o.audit {
		sets, err := expandSettings(cfg.Pets, m.NumClasses())
		if err != nil {
			return nil, err
		}
		if err := checkAuditable(sets, m.NumClasses()); err != nil { // before training what could not be audited
			return nil, err
		}
	}
	mode := flock.Exclusive
	if o.access == Shared {
		mode = flock.Shared
	}
	l, err := flock.Acquire(filepath.Join(cfg.Output, ".lock"), mode, false, "train "+cfg.Name)
	if err != nil {
		var held *flock.HeldError
		if errors.As(err, &held) {
			return nil, fmt.Errorf("output %s is in use: %w (wait for it, or choose another output)", cfg.Output, err)
		}
		return nil, err
	}
	s.lock = l
	dir, err := s.dataStage(ctx)
	if err != nil {
		return nil, err
	}
	if s.dataset, s.ids, err = data.LoadWith(dir, data.LoadOptions{IDColumn: cfg.Data.IDColumn, NoTrainEta: true, NoTrainFeatures: light}); err != nil {
		return nil, err
	}
	s.datasetID = s.dataset.ID
	s.train, s.test = s.dataset.Train, s.dataset.Test
	if err := checkDatasetBags(cfg, dir, s.dataset.TrainSchema); err != nil {
		return nil, err
	}
	if err := checkKeyGroups(cfg, dir, s.train, s.test); err != nil {
		return nil, err
	}
	if err := checkTestClasses(dir, s.test.Label, s.classes()); err != nil {
		return nil, err
	}
	if _, err := s.modelConfig(); err != nil && !light {
		return nil, err
	}
	// Every mechanism and loss must take the dataset's classes, and every
	// setting fill a batch: refused here, before the resolved config or
	// anything else is written.
	if s.settings, err = expandSettings(cfg.Pets, s.classes()); err != nil {
		return nil, err
	}
	if s.runs, err = expandRuns(cfg, s.settings, gridData{ID: s.datasetID, TrainRows: s.train.Rows}); err != nil {
		return nil, err
	}
	// Written once the config is known to fit the dataset: a refused one
	// leaves no resolved config claiming it ran.
	path, err := cfg.WriteResolved()
	if err != nil {
		return nil, err
	}
	s.ev.Info("config", path)
	if cfg.Data.Standardize && s.dataset.TrainSchema.Dim() > 0 {
		if light {
			s.std, err = data.FitStandardizerFile(data.SplitFile(dir, "train"), cfg.Data.IDColumn)
		} else {
			s.std, err = data.FitStandardizer(s.train)
		}
		if err != nil {
			return nil, fmt.Errorf("data.standardize: %w", err)
		}
		// In place: one copy of the features (10M Higgs rows: 1.1 GB), read
		// once into it. The session owns the frames; nothing needs the raw
		// values after this.
		if err := s.std.ApplyInPlace(s.train); err != nil && !light {
			return nil, err
		}
		if err := s.std.ApplyInPlace(s.test); err != nil {
			return nil, err
		}
	}
	for _, n := range notices(cfg, s.runs) {
		s.ev.Warn("config", n)
	}
	ok = true
	return s, nil
}

// Close releases the output lock.
func (s *Session) Close() error {
	if s == nil || s.lock == nil {
		return nil
	}
	err := s.lock.Release()
	s.lock = nil
	return err
}

// Out joins path elements under the output directory.
func (s *Session) Out(elem ...string) string {
	return filepath.Join(append([]string{s.cfg.Output}, elem...)...)
}

// classes is the number of label classes C of the session's dataset
// (meta.json's classes; 2 for binary labels).
func (s *Session) classes() int {
	if s.dataset == nil { // a session made by hand in a test
		return 2
	}
	return s.dataset.Meta.NumClasses()
}

// minTestPerClass is how many test rows of each class a dataset needs: the
// AUC needs one of each, the audit's standard errors two.
const minTestPerClass = 2

// ErrDegenerate is wrapped when a dataset cannot be evaluated.
var ErrDegenerate = errors.New("pipeline: degenerate dataset")

// checkTestClasses refuses a test set without minTestPerClass rows of each
// of the dataset's c classes, before any release is made or model trained.
func checkTestClasses(dir string, labels []uint8, c int) error {
	n := make([]int, max(c, 2))
	for _, y := range labels {
		if int(y) < len(n) {
			n[y]++
		}
	}
	if c <= 2 {
		if ones, zeros := n[1], n[0]; ones < minTestPerClass || zeros < minTestPerClass {
			return fmt.Errorf("%w: the test set of %s has %d rows of class 1 and %d of class 0; the test AUC and the audit need at least %d of each",
				ErrDegenerate, dir, ones, zeros, minTestPerClass)
		}
		return nil
	}
	for y, k := range n {
		if k < minTestPerClass {
			return fmt.Errorf("%w: the test set of %s has %d rows of class %d (of %d classes); the macro AUC and the audit need at least %d of each",
				ErrDegenerate, dir, k, y, c, minTestPerClass)
		}
	}
	return nil
}

// dataStage returns the dataset directory: data.path, or a synthetic
// dataset under <output>/data (reused when its meta matches the config).
func (s *Session) dataStage(ctx context.Context) (string, error) {
	cfg := s.cfg
	if cfg.Data.Path != "" {
		m, err := data.ReadMeta(cfg.Data.Path)
		if err != nil {
			return "", fmt.Errorf("data.path: %w", err)
		}
		s.ev.Info("data", fmt.Sprintf("using %s (%s, train %d rows, test %d rows)", cfg.Data.Path, m.Source, m.TrainRows, m.TestRows))
		return cfg.Data.Path, nil
	}
	sc := cfg.Data.Synth
	dir := s.Out("data")
	want := data.SynthOptions{Kind: sc.Kind, Rows: sc.Rows, TestRows: sc.TestRows, Features: sc.Features, Seed: cfg.Seed, Out: dir, Groups: sc.Groups,
		Classes: sc.Classes}
	if m, err := data.ReadMeta(dir); err == nil {
		if synthMatches(m, want) {
			s.ev.Info("data", fmt.Sprintf("reusing %s (%s, train %d rows, test %d rows%s)", dir, m.Kind, m.TrainRows, m.TestRows, bayesNote(m)))
			return dir, nil
		}
		s.ev.Warn("data", fmt.Sprintf("%s holds another synthetic dataset (config changed): rewriting it", dir))
	}
	m, err := data.Synth(ctx, want)
	if err != nil {
		return "", err
	}
	s.ev.Info("data", fmt.Sprintf("wrote %s (%s, train %d rows, test %d rows%s)", dir, m.Kind, m.TrainRows, m.TestRows, bayesNote(m)))
	return dir, nil
}

func synthMatches(m *data.Meta, o data.SynthOptions) bool {
	return m.Source == "synth" && m.Kind == o.Kind.String() && m.TrainRows == int64(o.Rows) &&
		m.TestRows == int64(o.TestRows) && len(m.Features) == o.Features && m.Seed == o.Seed &&
		m.Tool == data.Tool && reflect.DeepEqual(m.Features, data.SynthFeatureNames(o.Features)) && m.Groups == o.Groups &&
		m.NumClasses() == max(o.Classes, 2)
}

// bayesNote describes a synthetic dataset's Bayes-optimal AUC ("" otherwise).
func bayesNote(m *data.Meta) string {
	if m.BayesAUC == nil {
		return ""
	}
	return fmt.Sprintf(", Bayes AUC %.4f", *m.BayesAUC)
}
