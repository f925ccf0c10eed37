// Package store is a run directory's result files: every finished run is
// one file OUT/runs/<run_id>.json (report.Run, validated when read), a
// failed run OUT/runs/<run_id>.failed.json, the grid OUT/grid.json, the
// clean models' test predictions OUT/eta_hat/<run_id>.parquet (the audit's
// η̂), every model's predictions for the model attack
// OUT/model_hat/<run_id>.parquet (modelhat.go) and each group's checkpoint
// directory. Files are written atomically,
// so a rerun, a crashed sweep or another shard knows what is done by
// looking.
package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"labelprivacy/data"
	"labelprivacy/internal/atomicfile"
	"labelprivacy/report"
)

// Store is a run directory's result files.
type Store struct{ Dir string }

// RunsDir is OUT/runs; ResultPath the record of a finished run.
func (st Store) RunsDir() string              { return filepath.Join(st.Dir, "runs") }
func (st Store) ResultPath(id string) string  { return filepath.Join(st.RunsDir(), id+".json") }
func (st Store) failurePath(id string) string { return filepath.Join(st.RunsDir(), id+".failed.json") }
func (st Store) etaHatPath(id string) string  { return filepath.Join(st.Dir, "eta_hat", id+".parquet") }
func (st Store) gridPath() string             { return filepath.Join(st.Dir, "grid.json") }

// CheckpointDir is the checkpoint directory of group id.
func (st Store) CheckpointDir(id string) string { return filepath.Join(st.Dir, "checkpoints", id) }

// GroupLockPath is the lock file of group id, held while a process trains
// it (OUT/.locks/<id>.lock).
func (st Store) GroupLockPath(id string) string { return filepath.Join(st.LocksDir(), id+".lock") }

// LocksDir is the folder of the group locks (OUT/.locks).
func (st Store) LocksDir() string { return filepath.Join(st.Dir, ".locks") }

// DamagedRecordError is a run record that cannot be a finished run's: not
// JSON, a missing or invalid field, or a run_id other than its file name.
type DamagedRecordError struct {
	Path string
	Err  error
}

func (e *DamagedRecordError) Error() string {
	return fmt.Sprintf("%s is not a valid run record (%v)", e.Path, e.Err)
}

func (e *DamagedRecordError) Unwrap() error { return e.Err }

// readRecord reads and validates one run record; id is the run id its
// file name says.
func readRecord(path, id string) (*report.Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r report.Run
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, &DamagedRecordError{Path: path, Err: err}
	}
	if err := r.Validate(); err != nil {
		return nil, &DamagedRecordError{Path: path, Err: err}
	}
	if r.RunID != id {
		return nil, &DamagedRecordError{Path: path, Err: fmt.Errorf("its run_id is %q", r.RunID)}
	}
	return &r, nil
}

// Result returns the stored result of run id, or nil when it has not
// finished. A damaged record is a *DamagedRecordError: the run is not done.
func (st Store) Result(id string) (*report.Run, error) {
	r, err := readRecord(st.ResultPath(id), id)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return r, err
}

// setAside moves a damaged record out of the way (to <file>.damaged, kept
// for inspection), so that its run is trained again.
func (st Store) SetAside(d *DamagedRecordError) error {
	if err := os.Rename(d.Path, d.Path+".damaged"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w (and setting it aside failed: %v)", d, err)
	}
	return nil
}

// PutAll stores finished runs, each in its file (ResultPath), and clears
// the failure records earlier attempts left. The files are written and
// synced at once, and the runs folder is read once for stale temporaries,
// not once a run (atomicfile.WriteFiles): one run after another, a group of
// 64 spent ~0.5 s waiting for syncs, and the paper's grid of 17,680 runs
// would read a folder of up to 17,680 files 17,680 times. Every run is
// attempted; the errors of those that failed are returned joined (and no
// failure record is cleared).
func (st Store) PutAll(rs []*report.Run) error {
	paths, files := make([]string, len(rs)), make([][]byte, len(rs))
	for i, r := range rs {
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		paths[i], files[i] = st.ResultPath(r.RunID), append(b, '\n')
	}
	if err := atomicfile.WriteFiles(paths, files); err != nil {
		return err
	}
	for _, r := range rs {
		os.Remove(st.failurePath(r.RunID))
	}
	return nil
}

// Failure is a failed run's record.
type Failure struct {
	RunID   string  `json:"run_id"`
	Setting string  `json:"setting"`
	LR      float64 `json:"lr"`
	Trial   int     `json:"trial"`
	Error   string  `json:"error"`
}

// PutFailure records a failed run.
func (st Store) PutFailure(f Failure) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(st.failurePath(f.RunID), append(b, '\n'))
}

// Failed reports whether run id has a failure record.
func (st Store) Failed(id string) bool {
	_, err := os.Stat(st.failurePath(id))
	return err == nil
}

// All reads every finished run of the directory (every shard's), sorted by
// run id. Damaged records are left out and returned, one error each.
func (st Store) All() ([]report.Run, []error, error) {
	files, err := filepath.Glob(filepath.Join(st.RunsDir(), "*.json"))
	if err != nil {
		return nil, nil, err
	}
	var out []report.Run
	var damaged []error
	for _, f := range files {
		if strings.HasSuffix(f, ".failed.json") {
			continue
		}
		r, err := readRecord(f, strings.TrimSuffix(filepath.Base(f), ".json"))
		var d *DamagedRecordError
		switch {
		case errors.As(err, &d):
			damaged = append(damaged, d)
			continue
		case err != nil:
			return nil, nil, err
		}
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b report.Run) int { return strings.Compare(a.RunID, b.RunID) })
	return out, damaged, nil
}

// Grid is OUT/grid.json: which runs the current config's grid holds, so
// that a report over the directory leaves out runs of an earlier config.
type Grid struct {
	Dataset string   `json:"dataset"`
	Config  string   `json:"config_id"`
	Runs    []string `json:"run_ids"`
}

// PutGrid records the session's grid (every shard writes the same bytes).
func (st Store) PutGrid(g Grid) error {
	b, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(st.gridPath(), append(b, '\n'))
}

// ReadGrid returns the recorded grid, or nil when the directory has none
// (a result set from before grids were recorded).
func (st Store) ReadGrid() (*Grid, error) {
	b, err := os.ReadFile(st.gridPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var g Grid
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, fmt.Errorf("%s: %w", st.gridPath(), err)
	}
	return &g, nil
}

// InGrid returns a membership test for the grid's run ids.
func (g *Grid) InGrid() func(id string) bool {
	set := make(map[string]bool, len(g.Runs))
	for _, id := range g.Runs {
		set[id] = true
	}
	return func(id string) bool { return set[id] }
}

// PutEtaHat stores a clean model's test-set predictions (the audit's η̂):
// for binary labels one P(y = 1) per test row (column eta_hat); on C ≥ 3
// classes C probabilities per row, row-major (columns eta_hat_0 …
// eta_hat_{C−1}).
func (st Store) PutEtaHat(id string, probs []float32, classes int) error {
	w := 1
	if classes >= 3 {
		w = classes
	}
	if len(probs)%w != 0 {
		return fmt.Errorf("store: %d predictions are not rows of %d classes", len(probs), classes)
	}
	n := len(probs) / w
	row := make([]int64, n)
	for i := range row {
		row[i] = int64(i)
	}
	cols := []data.Column{{Name: "test_row", Values: row}}
	for j := range w {
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(probs[i*w+j])
		}
		name := "eta_hat"
		if w > 1 {
			name = "eta_hat_" + strconv.Itoa(j)
		}
		cols = append(cols, data.Column{Name: name, Values: v})
	}
	t := &data.Table{Columns: cols, Meta: map[string]string{"run_id": id}}
	return t.WriteParquet(st.etaHatPath(id))
}

// EtaHat reads a clean run's stored test-set predictions: one value per
// test row for binary labels, C per row (row-major) on C ≥ 3 classes.
func (st Store) EtaHat(id string, classes int) ([]float64, error) {
	t, err := data.ReadTable(st.etaHatPath(id))
	if err != nil {
		return nil, err
	}
	col := func(name string) []float64 {
		for _, c := range t.Columns {
			if c.Name == name {
				if v, ok := c.Values.([]float64); ok {
					return v
				}
			}
		}
		return nil
	}
	if classes < 3 {
		if v := col("eta_hat"); v != nil {
			return v, nil
		}
		return nil, fmt.Errorf("%s: no float64 eta_hat column", st.etaHatPath(id))
	}
	var out []float64
	for j := range classes {
		v := col("eta_hat_" + strconv.Itoa(j))
		if v == nil {
			return nil, fmt.Errorf("%s: no float64 eta_hat_%d column (%d classes)", st.etaHatPath(id), j, classes)
		}
		if out == nil {
			out = make([]float64, len(v)*classes)
		}
		for i, x := range v {
			out[i*classes+j] = x
		}
	}
	return out, nil
}
