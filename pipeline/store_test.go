package pipeline

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"labelprivacy/config"
	"labelprivacy/model"
	"labelprivacy/pets"
	"labelprivacy/pipeline/internal/store"
	"labelprivacy/report"
)

// A run record that is not a finished run's — empty JSON, not JSON, another
// run's record, a NaN AUC — is never counted as done: status counts it as
// missing and says so, a report leaves it out and says so, and fit sets it
// aside and trains exactly those runs again. (Before, `echo '{}' >` a
// record made status report every run done and fit skip it, and a non-JSON
// record blocked fit, status and report.)
func TestDamagedRecordsAreRetrained(t *testing.T) {
	c := testConfig(filepath.Join(t.TempDir(), "out"))
	ev := &recorder{}
	s, err := Open(context.Background(), c, Exclusive, ev)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := Fit(context.Background(), s, FitOptions{executor: &fakeExec{t: t}}); err != nil {
		t.Fatal(err)
	}
	st := store.Store{Dir: c.Output}
	var victims []string
	for _, i := range []int{0, 5, 9, 12} {
		victims = append(victims, s.runs[i].ID)
	}
	other, err := os.ReadFile(st.ResultPath(s.runs[1].ID))
	if err != nil {
		t.Fatal(err)
	}
	var nanAUC map[string]any
	b, _ := os.ReadFile(st.ResultPath(victims[3]))
	json.Unmarshal(b, &nanAUC)
	nanAUC["test_auc"] = "nan"
	nan, _ := json.Marshal(nanAUC)
	for i, content := range [][]byte{[]byte("{}"), []byte("not json\n"), other, nan} {
		if err := os.WriteFile(st.ResultPath(victims[i]), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()

	status, err := SweepStatus(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if status.Done != len(s.runs)-4 || status.Missing != 4 || len(status.Damaged) != 4 {
		t.Fatalf("status %+v, want %d done, 4 missing, 4 damaged", status, len(s.runs)-4)
	}
	rs, err := loadResultSet(c.Output)
	if err != nil || len(rs.Runs) != len(s.runs)-4 || len(rs.Damaged) != 4 {
		t.Fatalf("result set: %d runs, %d damaged, %v", len(rs.Runs), len(rs.Damaged), err)
	}

	s2, err := Open(context.Background(), c, Exclusive, ev)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	ex := &fakeExec{t: t}
	res, err := Fit(context.Background(), s2, FitOptions{executor: ex})
	if err != nil {
		t.Fatal(err)
	}
	retrained := ex.runs()
	slices.Sort(retrained)
	slices.Sort(victims)
	if !slices.Equal(retrained, victims) || len(res) != len(s.runs) {
		t.Fatalf("retrained %v, want %v; %d results", retrained, victims, len(res))
	}
	for _, id := range victims {
		if _, err := os.Stat(st.ResultPath(id) + ".damaged"); err != nil {
			t.Fatalf("damaged record of %s not kept aside: %v", id, err)
		}
	}
	n := 0
	for _, w := range ev.warns {
		if strings.Contains(w, "is not a valid run record") && strings.Contains(w, "set aside") {
			n++
		}
	}
	if n != 4 {
		t.Fatalf("%d set-aside notices, want 4: %q", n, ev.warns)
	}
}

// Data a run cannot use is an error when the session opens, before any
// release is made or model trained (before, a one-row test set printed
// "test AUC NaN" for every run and then panicked in the audit).
func TestDegenerateDataFailsFirst(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*config.Config)
		want string
	}{
		{"one test row", func(c *config.Config) { c.Data.Synth.TestRows = 1 }, "the test AUC and the audit need at least 2 of each"},
		{"k above the training rows", func(c *config.Config) {
			c.Pets = append(c.Pets, config.PetConfig{Mechanism: pets.LLP, K: []int{601}})
		}, "600 training rows do not fill one bag of k = 601"},
		{"kdd_embed on dense data", func(c *config.Config) { c.Model.Kind = model.KindKDDEmbed }, `kdd_embed needs a dataset with a sparse "indices" column`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testConfig(filepath.Join(t.TempDir(), "out"))
			tc.edit(c)
			s, err := Open(context.Background(), c, Exclusive, nil)
			if err == nil {
				s.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(c.Output, "releases")); err == nil {
				t.Fatal("releases were made before the error")
			}
		})
	}
}

// Merging result sets keeps every set: one without a recorded grid (an
// older output) makes every run count, but no set after it is dropped (it
// used to be).
func TestMergeKeepsEverySet(t *testing.T) {
	a := &resultSet{Runs: []report.Run{{RunID: "a"}}}
	b := &resultSet{Runs: []report.Run{{RunID: "b"}}, Calibration: []report.Calibration{{Dataset: "d"}}, Grid: &store.Grid{Runs: []string{"b"}}}
	for _, order := range [][]*resultSet{{a, b}, {b, a}} {
		rs, in := merge(order)
		if len(rs.Runs) != 2 || len(rs.Calibration) != 1 || in != nil {
			t.Fatalf("merged %d runs, %d calibration tables, grid filter %v", len(rs.Runs), len(rs.Calibration), in != nil)
		}
	}
	c := &resultSet{Runs: []report.Run{{RunID: "c"}}, Grid: &store.Grid{Runs: []string{"c"}}}
	rs, in := merge([]*resultSet{b, c})
	if len(rs.Runs) != 2 || in == nil || !in("b") || !in("c") || in("x") {
		t.Fatal("two sets with grids: the union of their grids counts")
	}
}
