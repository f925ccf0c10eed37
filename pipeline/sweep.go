package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/pipeline/internal/store"
)

// ResolveShard picks the shard of a sweep process: given ("i/n", the
// caller's choice, e.g. --shard) when not empty, else a Slurm array task
// (SLURM_ARRAY_TASK_ID − SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT),
// else a Kubernetes Indexed Job (JOB_COMPLETION_INDEX of JOB_COMPLETIONS,
// which the emitted manifest sets), else the whole sweep. It returns where
// where the shard came from ("" for given); a bad given is a
// *config.FieldError naming "shard".
func ResolveShard(given string, lookup func(string) (string, bool)) (Shard, string, error) {
	if given != "" {
		s, err := parseShard(given)
		if err != nil {
			return s, "", &config.FieldError{Key: "shard", Msg: err.Error()}
		}
		return s, "", nil
	}
	get := func(k string) (int, bool, error) {
		v, ok := lookup(k)
		if !ok || v == "" {
			return 0, false, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, true, fmt.Errorf("$%s=%q is not an integer", k, v)
		}
		return n, true, nil
	}
	if id, ok, err := get("SLURM_ARRAY_TASK_ID"); ok || err != nil {
		if err != nil {
			return Shard{}, "", err
		}
		count, okc, err := get("SLURM_ARRAY_TASK_COUNT")
		if err != nil || !okc {
			return Shard{}, "", fmt.Errorf("SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not (%v)", err)
		}
		lo, _, err := get("SLURM_ARRAY_TASK_MIN")
		if err != nil {
			return Shard{}, "", err
		}
		s, err := parseShard(fmt.Sprintf("%d/%d", id-lo, count))
		return s, "Slurm array task", err
	}
	if idx, ok, err := get("JOB_COMPLETION_INDEX"); ok || err != nil {
		if err != nil {
			return Shard{}, "", err
		}
		count, okc, err := get("JOB_COMPLETIONS")
		if err != nil || !okc {
			return Shard{}, "", fmt.Errorf("JOB_COMPLETION_INDEX is set but JOB_COMPLETIONS is not (%v); set it to the Job's completions", err)
		}
		s, err := parseShard(fmt.Sprintf("%d/%d", idx, count))
		return s, "Kubernetes indexed job", err
	}
	return allShards, "default", nil
}

// Status counts a sweep's done, failed and missing runs.
type Status struct {
	Done, Failed, Missing int
	Settings              []SettingStatus // in grid order
	// Damaged lists run records that are not valid results (counted as
	// missing: the next fit or sweep sets them aside and trains them again).
	Damaged []string
}

// WriteTable writes the counts as a table: one line per setting, then the
// total.
func (st *Status) WriteTable(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%-24s %6s %6s %8s\n", "setting", "done", "failed", "missing")
	for _, s := range st.Settings {
		fmt.Fprintf(&b, "%-24s %6d %6d %8d\n", s.Setting, s.Done, s.Failed, s.Missing)
	}
	fmt.Fprintf(&b, "%-24s %6d %6d %8d\n", "total", st.Done, st.Failed, st.Missing)
	_, err := io.WriteString(w, b.String())
	return err
}

// SettingStatus is one setting's counts.
type SettingStatus struct {
	Setting               string
	Done, Failed, Missing int
}

// SweepStatus reads only what run ids depend on — the dataset's meta and
// content identity, never its rows — and the run store. It synthesizes
// nothing: before any shard started there is no dataset, which is an error.
func SweepStatus(ctx context.Context, cfg *config.Config) (*Status, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	dir := cfg.Data.Path
	if dir == "" {
		dir = filepath.Join(cfg.Output, "data")
	}
	m, err := data.ReadMeta(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("sweep status: no dataset at %s yet (no shard has started): %w", dir, err)
	} else if err != nil {
		return nil, err
	}
	id, err := data.DatasetIdentity(dir)
	if err != nil {
		return nil, err
	}
	settings, err := expandSettings(cfg.Pets, m.NumClasses())
	if err != nil {
		return nil, err
	}
	st := store.Store{Dir: cfg.Output}
	out := &Status{}
	index := map[string]int{}
	for _, s := range settings {
		index[s.ID] = len(out.Settings)
		out.Settings = append(out.Settings, SettingStatus{Setting: s.ID})
	}
	runs, err := expandRuns(cfg, settings, gridData{ID: id, TrainRows: int(m.TrainRows)})
	if err != nil {
		return nil, err
	}
	for i, r := range runs {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		c := &out.Settings[index[r.Setting.ID]]
		res, err := st.Result(r.ID)
		var d *store.DamagedRecordError
		if errors.As(err, &d) {
			out.Damaged = append(out.Damaged, d.Error())
			res, err = nil, nil
		}
		switch {
		case err != nil:
			return nil, err
		case res != nil:
			out.Done++
			c.Done++
		case st.Failed(r.ID):
			out.Failed++
			c.Failed++
		default:
			out.Missing++
			c.Missing++
		}
	}
	return out, nil
}
