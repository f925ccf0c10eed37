package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"labelprivacy/data"
)

// runSpec is one model of the grid: a PET setting × learning rate × trial.
type runSpec struct {
	Setting petSetting
	LR      float64
	Trial   int
}

// expandRuns lists the grid's runs in a fixed order (settings in config
// order, then trials, then learning rates) so that shards partition it
// deterministically.
func expandRuns(cfg *Config, settings []petSetting) []runSpec {
	var out []runSpec
	for _, s := range settings {
		for t := range cfg.Train.Trials {
			for _, lr := range cfg.Train.LearningRates {
				out = append(out, runSpec{Setting: s, LR: lr, Trial: t})
			}
		}
	}
	return out
}

// runKey is everything a run's result depends on; its hash is the run_id.
type runKey struct {
	Dataset   string  `json:"dataset"` // dataset identity: meta source, kind, rows, seed
	Model     string  `json:"model"`
	Hidden    []int   `json:"hidden,omitempty"`
	Backend   string  `json:"backend"`
	Epochs    int     `json:"epochs"`
	BatchSize int     `json:"batch_size"`
	Loss      string  `json:"loss"`
	Setting   string  `json:"setting"`
	LR        float64 `json:"lr"`
	Trial     int     `json:"trial"`
	Seed      uint64  `json:"seed"`
	Remainder bool    `json:"keep_remainder,omitempty"`
	Secure    bool    `json:"secure,omitempty"`
}

// runID is a deterministic id of the resolved run parameters and seed: the
// first 16 hex digits of SHA-256 over runKey's JSON.
func runID(k runKey) string {
	b, _ := json.Marshal(k)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// datasetIdentity names a dataset by what determines its content.
func datasetIdentity(m *data.Meta, dir string) string {
	switch m.Source {
	case "synth":
		return fmt.Sprintf("synth:%s:rows=%d:test=%d:d=%d:seed=%d", m.Kind, m.TrainRows, m.TestRows, m.Dims, m.Seed)
	}
	return fmt.Sprintf("%s:%s:rows=%d:test=%d", m.Source, filepath.Clean(dir), m.TrainRows, m.TestRows)
}

// jfloat is a float64 that survives JSON when non-finite ("inf", "nan").
type jfloat float64

func (f jfloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return []byte(strconv.Quote(data.FormatFloat(v))), nil
	}
	return []byte(strconv.FormatFloat(v, 'g', -1, 64)), nil
}

func (f *jfloat) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return err
	}
	*f = jfloat(v)
	return nil
}

// runResult is one finished run: the row of runs.csv, stored as
// <output>/runs/<run_id>.json (written atomically when the run finishes).
type runResult struct {
	RunID          string `json:"run_id"`
	Dataset        string `json:"dataset"`
	Model          string `json:"model"`
	Setting        string `json:"setting"`
	Pet            string `json:"pet"`
	K              int    `json:"k"`
	Epsilon        jfloat `json:"epsilon"`
	LabelDPEpsilon jfloat `json:"label_dp_epsilon"`
	Loss           string `json:"loss"`
	LR             jfloat `json:"lr"`
	Trial          int    `json:"trial"`
	Seed           uint64 `json:"seed"`
	Epochs         int    `json:"epochs"`
	Steps          int64  `json:"steps"`
	TrainLoss      jfloat `json:"train_loss"`
	TestAUC        jfloat `json:"test_auc"`
	TestLogLoss    jfloat `json:"test_logloss"`
	WallS          jfloat `json:"wall_s"`
	ExamplesPerS   jfloat `json:"examples_per_s"`
	Backend        string `json:"backend"`
}

func runsDir(cfg *Config) string { return filepath.Join(cfg.Output, "runs") }

func runResultPath(cfg *Config, id string) string { return filepath.Join(runsDir(cfg), id+".json") }

func writeRunResult(cfg *Config, r *runResult) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return data.WriteFileAtomic(runResultPath(cfg, r.RunID), append(b, '\n'))
}

// readRunResult returns the stored result of run id, or nil when the run has
// not finished (no file). A corrupt file is an error naming it.
func readRunResult(cfg *Config, id string) (*runResult, error) {
	b, err := os.ReadFile(runResultPath(cfg, id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r runResult
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", runResultPath(cfg, id), err)
	}
	return &r, nil
}

// runsTable converts results into the runs.csv / runs.parquet table.
func runsTable(rs []*runResult) *data.Table {
	col := func(name string, f func(*runResult) any) data.Column {
		var out any
		switch f(&runResult{}).(type) {
		case string:
			v := make([]string, len(rs))
			for i, r := range rs {
				v[i] = f(r).(string)
			}
			out = v
		case float64:
			v := make([]float64, len(rs))
			for i, r := range rs {
				v[i] = f(r).(float64)
			}
			out = v
		case int64:
			v := make([]int64, len(rs))
			for i, r := range rs {
				v[i] = f(r).(int64)
			}
			out = v
		}
		return data.Column{Name: name, Values: out}
	}
	return &data.Table{Meta: map[string]string{"tool": version}, Columns: []data.Column{
		col("dataset", func(r *runResult) any { return r.Dataset }),
		col("model", func(r *runResult) any { return r.Model }),
		col("pet", func(r *runResult) any { return r.Pet }),
		col("k", func(r *runResult) any { return int64(r.K) }),
		col("epsilon", func(r *runResult) any { return float64(r.Epsilon) }),
		col("lr", func(r *runResult) any { return float64(r.LR) }),
		col("trial", func(r *runResult) any { return int64(r.Trial) }),
		col("seed", func(r *runResult) any { return int64(r.Seed) }),
		col("epochs", func(r *runResult) any { return int64(r.Epochs) }),
		col("steps", func(r *runResult) any { return r.Steps }),
		col("train_loss", func(r *runResult) any { return float64(r.TrainLoss) }),
		col("test_auc", func(r *runResult) any { return float64(r.TestAUC) }),
		col("test_logloss", func(r *runResult) any { return float64(r.TestLogLoss) }),
		col("wall_s", func(r *runResult) any { return float64(r.WallS) }),
		col("examples_per_s", func(r *runResult) any { return float64(r.ExamplesPerS) }),
		col("backend", func(r *runResult) any { return r.Backend }),
		col("setting", func(r *runResult) any { return r.Setting }),
		col("label_dp_epsilon", func(r *runResult) any { return float64(r.LabelDPEpsilon) }),
		col("loss", func(r *runResult) any { return r.Loss }),
		col("run_id", func(r *runResult) any { return r.RunID }),
	}}
}

func labelDPEpsilon(s petSetting) float64 {
	m, err := newMechanism(s.Kind, s.K, s.Epsilon, false)
	if err != nil {
		return math.NaN()
	}
	return m.Epsilon()
}
