package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"time"

	"labelprivacy/audit"
	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/internal/flock"
	"labelprivacy/internal/memctl"
	"labelprivacy/llp"
	"labelprivacy/pets"
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

	// ev is the caller's Events, serialized (a stage's meter reports from
	// its own goroutine); clock the time its progress is reported with
	// (the caller's Events' when Clocked).
	ev    Events
	clock Clock
	// releaseMeter is the meter of the releases being made (makeUnits),
	// which rr_prior's prior model reports its training through.
	releaseMeter atomic.Pointer[meter]
	lock         *flock.Lock
	// staged: a synthetic dataset written by this open and not yet in place
	// at <output>/data (published once every check passed).
	staged *data.StagedDataset
	ids    *data.IDs // the training rows' data.id_column, or nil
	// grid is a dataset of conversion values' grid (the zero Grid for
	// classes; values.go); binFrame and binShare the clean model's classes
	// of the training values and how they spread over the grid, made once.
	grid     pets.Grid
	binFrame *data.Frame
	binShare []float64
	// peopleSorted: the ledger's keys of the training rows, sorted
	// (sortedPeople); peopleDistinct: no person has two training rows.
	peopleSorted   []uint64
	peopleDistinct bool
	peopleKey      string // the key check peopleSorted was computed with
	// newSampler, when set (by a test), makes the sampler the audit
	// attacks instead of the production release path (auditSampler).
	newSampler func(part llp.Partitioner, prior []float64) audit.Sampler
	// probeState: the training rows the model attack asks every model to
	// predict (modelProbe, made once).
	probeState
	// canaryExec, when set (by a test), trains the audit's canary models
	// instead of a model executor for the configured backend.
	canaryExec executor
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
// key groups, test classes, model), expands the grid, standardizes the
// data, puts a dataset it synthesized in place at <output>/data and writes
// config.resolved.yaml. A refusal (any failed Open) leaves the output as
// it was: a synthesized dataset is checked where it was staged and
// discarded, and the lock's file and holders folder and the output folder
// go again when this Open made them and nothing else holds them.
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
	// Let about a tenth of the live heap (at least 64 MiB) pile up as
	// garbage, not all of it (unless GOGC or GOMEMLIMIT says otherwise).
	memctl.Start()
	s := &Session{cfg: cfg, ev: &syncEvents{ev: orDiscard(ev)}, clock: clockOf(ev), configID: configFingerprint(cfg), started: time.Now(), light: o.light}
	ok := false
	// A refusal (or any failure) in open leaves the output as it was: what
	// this open made there (a staged dataset, the lock's file and holders
	// folder, the output folder and its missing parents) goes again.
	before := snapshotOutput(cfg.Output)
	defer func() {
		if !ok {
			s.staged.Discard()
			s.undoLock(before)
			before.removeMadeDirs()
		}
	}()
	if err := s.checkPlanned(o); err != nil {
		return nil, err
	}
	if err := s.lockOutput(o.access); err != nil {
		return nil, err
	}
	dir, err := s.dataStage(ctx)
	if err != nil {
		return nil, err
	}
	// files is where the dataset's files are until it is published: a
	// synthetic dataset is checked where it was staged, and named by dir
	// (where it goes) in every message.
	files := dir
	if s.staged != nil {
		files = s.staged.Dir
	}
	if err := s.loadDataset(dir, files); err != nil {
		return nil, err
	}
	if err := s.expandGrid(dir, o.audit); err != nil {
		return nil, err
	}
	if err := s.standardize(files); err != nil {
		return nil, err
	}
	if err := s.publishData(); err != nil {
		return nil, err
	}
	// Written once the config is known to fit the dataset: a refused one
	// leaves no resolved config claiming it ran.
	path, err := cfg.WriteResolved()
	if err != nil {
		return nil, err
	}
	s.ev.Info("config", path)
	for _, n := range notices(cfg, s.runs) {
		s.ev.Warn("config", n)
	}
	ok = true
	return s, nil
}

// checkPlanned makes the refusals that need only the config and meta.json
// (the labels' kind for the first stage, the memory, and for an audit the
// settings the exact audit takes): before the output lock, so a refused
// run leaves nothing in the output.
func (s *Session) checkPlanned(o openOptions) error {
	cfg := s.cfg
	m, err := s.plannedMeta()
	if err != nil {
		return err
	}
	if err := checkLabelKind(o.firstStage(), m); err != nil {
		return fmt.Errorf("data.path: %s: %w", cfg.Data.Path, err)
	}
	if err := s.checkMemory(m); err != nil { // before synthesizing or loading anything
		return err
	}
	if o.audit {
		sets, err := expandSettingsIn(cfg.Pets, spaceOf(m, cfg.Data.Path == ""))
		if err != nil {
			return err
		}
		if err := checkAuditable(sets, m.NumClasses()); err != nil { // before training what could not be audited
			return err
		}
	}
	return nil
}

// lockOutput takes the output's lock (<output>/.lock, exclusive or shared
// by access) into s.lock; a lock held elsewhere is refused, naming it.
func (s *Session) lockOutput(access Access) error {
	cfg := s.cfg
	mode := flock.Exclusive
	if access == Shared {
		mode = flock.Shared
	}
	l, err := flock.Acquire(filepath.Join(cfg.Output, ".lock"), mode, false, "train "+cfg.Name)
	if err != nil {
		var held *flock.HeldError
		if errors.As(err, &held) {
			return fmt.Errorf("output %s is in use: %w (wait for it, or choose another output)", cfg.Output, err)
		}
		return err
	}
	s.lock = l
	return nil
}

// loadDataset loads the dataset from files (its directory dir, or where
// it is staged) into s (no training features when light) and checks it
// against the config: bags and key groups, the test rows' values (setting
// s.grid) or classes, and the model.
func (s *Session) loadDataset(dir, files string) error {
	cfg := s.cfg
	var err error
	if s.dataset, s.ids, err = data.LoadWith(files, data.LoadOptions{IDColumn: cfg.Data.IDColumn, NoTrainEta: true, NoTrainFeatures: s.light}); err != nil {
		return err
	}
	s.dataset.Dir = dir
	s.datasetID = s.dataset.ID
	s.train, s.test = s.dataset.Train, s.dataset.Test
	if err := checkDatasetBags(cfg, dir, s.dataset.TrainSchema); err != nil {
		return err
	}
	if err := checkKeyGroups(cfg, dir, s.train, s.test); err != nil {
		return err
	}
	if s.dataset.Meta.LabelKind() == data.LabelsValues {
		m := s.dataset.Meta
		s.grid = pets.Grid{Max: m.ValueMax, Step: m.ValueStep}
		if err := checkTestValues(dir, s.test.Value); err != nil {
			return err
		}
	} else if err := checkTestClasses(dir, s.test.Label, s.classes()); err != nil {
		return err
	}
	if _, err := s.modelConfig(); err != nil && !s.light {
		return err
	}
	return nil
}

// expandGrid expands the settings and runs of the dataset in dir. Every
// mechanism and loss must take the dataset's classes, every setting fill
// a batch and (forAudit) a values audit have its η: refused here, before the
// resolved config or anything else is written.
func (s *Session) expandGrid(dir string, forAudit bool) error {
	cfg := s.cfg
	var err error
	if s.settings, err = expandSettingsIn(cfg.Pets, spaceOf(s.dataset.Meta, false)); err != nil {
		return err
	}
	if err := checkSources(cfg, dir, s.dataset.Meta); err != nil {
		return err
	}
	if forAudit && s.values() {
		if err := s.checkValueEta(); err != nil { // before training what could not be audited
			return err
		}
	}
	s.runs, err = expandRuns(cfg, s.settings, gridData{ID: s.datasetID, TrainRows: s.train.Rows})
	return err
}

// standardize fits s.std on the training rows (read from files' train
// split when light) and applies it to the train and test features in
// place, when data.standardize is on and there are dense features.
func (s *Session) standardize(files string) error {
	cfg := s.cfg
	if !(cfg.Data.Standardize && s.dataset.TrainSchema.Dim() > 0) {
		return nil
	}
	var err error
	if s.light {
		s.std, err = data.FitStandardizerFile(data.SplitFile(files, "train"), cfg.Data.IDColumn)
	} else {
		s.std, err = data.FitStandardizer(s.train)
	}
	if err != nil {
		return fmt.Errorf("data.standardize: %w", err)
	}
	// In place: one copy of the features (10M Higgs rows: 1.1 GB), read
	// once into it. The session owns the frames; nothing needs the raw
	// values after this.
	if err := s.std.ApplyInPlace(s.train); err != nil && !s.light {
		return err
	}
	return s.std.ApplyInPlace(s.test)
}

// outputState is what open found of the output before taking its lock:
// what a failed open must remove again and what it must leave.
type outputState struct {
	// made is the outermost folder of the output path (the output itself
	// or a parent) that did not exist; "" when the output existed.
	made string
	out  string
	// lock and holders: the lock's file and its holders folder existed.
	lock, holders bool
}

func snapshotOutput(out string) outputState {
	st := outputState{out: filepath.Clean(out)}
	for d := st.out; !exists(d); d = filepath.Dir(d) {
		st.made = d
		if filepath.Dir(d) == d {
			break
		}
	}
	lock := filepath.Join(out, ".lock")
	st.lock, st.holders = exists(lock), exists(lock+".holders")
	return st
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// undoLock lets the output lock go after a failed open: its file and
// holders folder are removed when this open made them and no other
// process holds the lock (a sweep shard beside this one keeps it).
func (s *Session) undoLock(before outputState) {
	if s.lock == nil {
		return
	}
	l := s.lock
	s.lock = nil
	if before.lock {
		l.Release()
	} else {
		l.ReleaseAndRemoveIfAlone()
	}
	if !before.holders {
		os.Remove(filepath.Join(before.out, ".lock.holders")) // only when empty: another holder's record stays
	}
}

// removeMadeDirs removes the output folder and the parents open made for
// it, each only when empty, innermost first.
func (st outputState) removeMadeDirs() {
	if st.made == "" {
		return
	}
	for d := st.out; ; d = filepath.Dir(d) {
		if os.Remove(d) != nil || d == st.made {
			return
		}
	}
}

// publishData puts a synthetic dataset that open wrote (staged, then
// checked against the config) in place at <output>/data.
func (s *Session) publishData() error {
	st := s.staged
	if st == nil {
		return nil
	}
	m := st.Meta
	if old, err := data.ReadMeta(st.Out); err == nil && !synthMatches(old, s.synthOptions()) {
		s.ev.Warn("data", fmt.Sprintf("%s holds another synthetic dataset (config changed): rewriting it", st.Out))
	}
	if err := st.Publish(); err != nil {
		return err
	}
	s.staged = nil
	s.ev.Info("data", fmt.Sprintf("wrote %s (%s, train %d rows, test %d rows%s)", st.Out, m.Kind, m.TrainRows, m.TestRows, bayesNote(m)))
	return nil
}

// Close releases the output lock.
func (s *Session) Close() error {
	if s == nil || s.lock == nil {
		return nil
	}
	s.dataset.Close() // the frames' off-heap memory: nothing of the session reads them after Close
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
	want := s.synthOptions()
	dir := want.Out
	if m, err := data.ReadMeta(dir); err == nil && synthMatches(m, want) {
		s.ev.Info("data", fmt.Sprintf("reusing %s (%s, train %d rows, test %d rows%s)", dir, m.Kind, m.TrainRows, m.TestRows, bayesNote(m)))
		return dir, nil
	}
	// Written next to dir and put in place only once open's checks pass
	// (publishData): a refused config leaves no dataset, nor loses the one
	// of another config that dir holds.
	st, err := data.SynthStaged(ctx, want)
	if err != nil {
		return "", err
	}
	s.staged = st
	return dir, nil
}

// synthOptions is the synthetic dataset the config asks for, at
// <output>/data.
func (s *Session) synthOptions() data.SynthOptions {
	cfg := s.cfg
	sc := cfg.Data.Synth
	return data.SynthOptions{Kind: sc.Kind, Rows: sc.Rows, TestRows: sc.TestRows, Features: sc.Features, Seed: cfg.Seed, Out: s.Out("data"), Groups: sc.Groups,
		Classes: sc.Classes, ValueMax: sc.ValueMax, ValueStep: sc.ValueStep, ZeroRate: sc.ZeroRate}
}

func synthMatches(m *data.Meta, o data.SynthOptions) bool {
	return m.Source == "synth" && m.Kind == o.Kind.String() && m.TrainRows == int64(o.Rows) &&
		m.TestRows == int64(o.TestRows) && len(m.Features) == o.Features && m.Seed == o.Seed &&
		m.Tool == data.Tool && reflect.DeepEqual(m.Features, data.SynthFeatureNames(o.Features)) && m.Groups == o.Groups &&
		m.NumClasses() == max(o.Classes, 2) && synthValuesMatch(m, o)
}

// bayesNote describes a synthetic dataset's Bayes-optimal AUC ("" otherwise).
func bayesNote(m *data.Meta) string {
	if m.BayesAUC == nil {
		return ""
	}
	return fmt.Sprintf(", Bayes AUC %.4f", *m.BayesAUC)
}
