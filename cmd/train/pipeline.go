package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"reflect"

	"labelprivacy/data"
)

// runPipeline loads the config and runs the stages that exist, printing
// where it wrote what.
func runPipeline(ctx context.Context, file string, sets []string, stdout, stderr io.Writer, lookup env) error {
	cfg, err := loadConfig(file, sets, lookup)
	if err != nil {
		return err
	}
	path, err := writeResolved(cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "config: %s\n", path)
	ds, err := dataStage(ctx, cfg, stdout)
	if err != nil {
		return err
	}
	_ = ds
	return nil
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
