package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"strconv"

	"labelprivacy/data"
	"labelprivacy/pets"
)

// session is a loaded config with its dataset and its grid.
type session struct {
	cfg      *Config
	ds       *data.Dataset
	settings []petSetting
	specs    []runSpec
}

// openSession loads and validates the config, writes the resolved config,
// makes or finds the dataset and expands the grid.
func openSession(ctx context.Context, file string, sets []string, stdout io.Writer, lookup env) (*session, error) {
	cfg, err := loadConfig(file, sets, lookup)
	if err != nil {
		return nil, err
	}
	path, err := writeResolved(cfg)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stdout, "config: %s\n", path)
	dir, err := dataStage(ctx, cfg, stdout)
	if err != nil {
		return nil, err
	}
	ds, err := data.Load(dir)
	if err != nil {
		return nil, err
	}
	settings, err := expandPets(cfg.Pets)
	if err != nil {
		return nil, err
	}
	return &session{cfg: cfg, ds: ds, settings: settings, specs: expandRuns(cfg, settings)}, nil
}

// runPipeline runs every stage for a config (data, releases, fit, audit,
// report), printing where it wrote what.
func runPipeline(ctx context.Context, file string, sets []string, stdout, stderr io.Writer, lookup env) error {
	s, err := openSession(ctx, file, sets, stdout, lookup)
	if err != nil {
		return err
	}
	cfg := s.cfg
	results, err := fitAll(ctx, s, stdout, stderr)
	if err != nil {
		return err
	}
	auditT, postT, err := auditStage(cfg, s.ds, s.settings, results, stdout)
	if err != nil {
		return err
	}
	return reportStage(cfg, runsTable(results), auditT, postT, stdout)
}

// releaseFile is where trial t of a setting's release is written.
func releaseFile(cfg *Config, s petSetting, trial int) string {
	return filepath.Join(cfg.Output, "releases", s.ID(), fmt.Sprintf("trial-%d.arrow", trial))
}

// releaseSeed is the seed of trial t's release of setting s: fresh bags and
// noise per trial, as in the paper, all derived from cfg.Seed.
func releaseSeed(cfg *Config, s petSetting, trial int) uint64 {
	return deriveSeed(cfg.Seed, "release", s.ID(), strconv.Itoa(trial))
}

// releaseStage privatizes the training labels for every (PET setting,
// trial) that specs train on (mechanism none releases nothing: its model
// reads the clean data; bot releases nothing either) and records each
// release written in <output>/privacy_ledger.csv. An existing release file
// made with the same seed is reused (a rerun after a crash, or another shard
// of the sweep that made it first: the bytes are identical).
func releaseStage(ctx context.Context, cfg *Config, ds *data.Dataset, specs []runSpec, stdout io.Writer) error {
	type unit struct {
		s     petSetting
		trial int
	}
	var units []unit
	seen := map[unit]bool{}
	for _, r := range specs {
		u := unit{r.Setting, r.Trial}
		if r.Setting.Kind != pets.None && r.Setting.Kind != pets.Bot && !seen[u] {
			seen[u] = true
			units = append(units, u)
		}
	}
	wrote, reused := 0, 0
	for _, u := range units {
		if err := ctx.Err(); err != nil {
			return err
		}
		s, t := u.s, u.trial
		m, err := s.mechanism(cfg.Privacy.Secure)
		if err != nil {
			return fmt.Errorf("pets %s: %w", s.ID(), err)
		}
		o := releaseOptions{Seed: releaseSeed(cfg, s, t), Secure: cfg.Privacy.Secure, KeepRemainder: cfg.Privacy.KeepRemainder}
		path := releaseFile(cfg, s, t)
		if releaseUpToDate(path, o) {
			reused++
			continue
		}
		rel, info, err := privatize(ds.Train, m, o)
		if err != nil {
			return fmt.Errorf("pets %s trial %d: %w", s.ID(), t, err)
		}
		if err := data.WriteFrame(path, rel, releaseMeta(m, o, info, filepath.Join(ds.Dir, data.TrainFile))); err != nil {
			return err
		}
		l, err := pets.NewLedger(filepath.Join(cfg.Output, pets.LedgerFile), cfg.Privacy.DeltaPrime)
		if err != nil {
			return err
		}
		if _, err := l.Record(m, info.Rows, o.Seed, t+1); err != nil {
			return err
		}
		wrote++
	}
	fmt.Fprintf(stdout, "privatize: %d releases written, %d reused under %s; ledger %s\n",
		wrote, reused, filepath.Join(cfg.Output, "releases"), filepath.Join(cfg.Output, pets.LedgerFile))
	return nil
}

// releaseUpToDate reports whether path holds a release made with o's seed
// and options by this tool. Secure releases are never reused: a rerun could
// not reproduce them, and a half-finished run must not mix two draws.
func releaseUpToDate(path string, o releaseOptions) bool {
	if o.Secure {
		return false
	}
	md, err := data.ReadMetadata(path)
	if err != nil {
		return false
	}
	return md["seed"] == strconv.FormatUint(o.Seed, 10) && md["tool"] == version &&
		md["secure"] == "false" && (md["keep_remainder"] == "" || md["keep_remainder"] == strconv.FormatBool(o.KeepRemainder))
}

// dataStage returns the run's dataset directory: data.path, or a synthetic
// dataset under <output>/data (reused when its meta matches the config).
func dataStage(ctx context.Context, cfg *Config, stdout io.Writer) (string, error) {
	if cfg.Data.Path != "" {
		m, err := data.ReadMeta(cfg.Data.Path)
		if err != nil {
			return "", fmt.Errorf("data.path: %w", err)
		}
		fmt.Fprintf(stdout, "data: using %s (%s, train %d rows, test %d rows)\n", cfg.Data.Path, m.Source, m.TrainRows, m.TestRows)
		return cfg.Data.Path, nil
	}
	s := cfg.Data.Synth
	kind, err := data.ParseSynthKind(s.Kind)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cfg.Output, "data")
	want := data.SynthOptions{Kind: kind, Rows: s.Rows, TestRows: s.TestRows, Features: s.Features, Seed: cfg.Seed, Out: dir}
	if m, err := data.ReadMeta(dir); err == nil && synthMatches(m, want) {
		fmt.Fprintf(stdout, "data: reusing %s (%s, train %d rows, test %d rows%s)\n", dir, m.Kind, m.TrainRows, m.TestRows, bayesNote(m))
		return dir, nil
	}
	m, err := data.Synth(ctx, want)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(stdout, "data: wrote %s (%s, train %d rows, test %d rows%s)\n", dir, m.Kind, m.TrainRows, m.TestRows, bayesNote(m))
	return dir, nil
}

func synthMatches(m *data.Meta, o data.SynthOptions) bool {
	return m.Source == "synth" && m.Kind == o.Kind.String() && m.TrainRows == int64(o.Rows) &&
		m.TestRows == int64(o.TestRows) && len(m.Features) == o.Features && m.Seed == o.Seed &&
		m.Tool == data.Tool && reflect.DeepEqual(m.Features, data.SynthFeatureNames(o.Features))
}
