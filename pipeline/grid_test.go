package pipeline

import (
	"strings"
	"testing"
	"time"

	"labelprivacy/config"
	"labelprivacy/model"
	"labelprivacy/pets"
	"labelprivacy/report"
)

func testConfig(out string) *config.Config {
	c := config.Defaults()
	c.Name, c.Output, c.Seed = "t", out, 5
	c.Data.Synth.Rows, c.Data.Synth.TestRows, c.Data.Synth.Features = 600, 200, 4
	c.Model.Hidden = []int{8}
	c.Train.Epochs, c.Train.BatchSize, c.Train.Trials = 1, 64, 2
	c.Train.LearningRates = []float64{0.01, 0.003}
	c.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: pets.RR, Epsilon: []float64{1}},
		{Mechanism: pets.LLPGeom, K: []int{4, 8}, Epsilon: []float64{1}}, {Mechanism: pets.Bot}}
	c.Audit.Examples = 100
	return &c
}

// mustRuns expands the grid of c on a dataset of 600 training rows.
func mustRuns(t *testing.T, c *config.Config, settings []*setting, id string) []*runSpec {
	t.Helper()
	runs, err := expandRuns(c, settings, gridData{ID: id, TrainRows: 600})
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// A batch size that is not a multiple of k is noted at start, not rounded
// silently.
func TestNotices(t *testing.T) {
	c := testConfig("o")
	settings, err := expandSettings(c.Pets, 2)
	if err != nil {
		t.Fatal(err)
	}
	c.Train.BatchSize = 70
	n := notices(c, mustRuns(t, c, settings, "sha256:a"))
	if len(n) != 2 || n[0] != "train.batch_size 70 is not a multiple of k=4: llp_geom batches hold 17 bags (68 rows)" ||
		n[1] != "train.batch_size 70 is not a multiple of k=8: llp_geom batches hold 8 bags (64 rows)" {
		t.Fatalf("notices %q", n)
	}
	c.Train.BatchSize = 64
	if n := notices(c, mustRuns(t, c, settings, "sha256:a")); len(n) != 0 {
		t.Fatalf("notices %q", n)
	}
	// pets left out (the default, none alone) or listing none only: a note.
	for _, p := range [][]config.PetConfig{config.Defaults().Pets, {{Mechanism: pets.None}}} {
		c := *c
		c.Pets = p
		settings, err := expandSettings(c.Pets, 2)
		if err != nil {
			t.Fatal(err)
		}
		if n := notices(&c, mustRuns(t, &c, settings, "sha256:a")); len(n) != 1 || !strings.Contains(n[0], "pets lists no mechanism") {
			t.Fatalf("pets %v: notices %q", p, n)
		}
	}
	// A batch larger than the training rows is capped, and said once per setting.
	c.Train.BatchSize = 1000
	n = notices(c, mustRuns(t, c, settings, "sha256:a"))
	if len(n) != 4 || n[0] != "train.batch_size 1000 is more than the 600 rows none trains on: its batches hold 600 rows" ||
		n[2] != "train.batch_size 1000 is more than the 600 rows llp_geom_k4_eps1 trains on: its batches hold 600 rows" {
		t.Fatalf("notices %q", n)
	}
}

func TestSettingsAndRuns(t *testing.T) {
	c := testConfig("o")
	c.Pets = append(c.Pets, config.PetConfig{Mechanism: pets.RR, Epsilon: []float64{1}}) // a duplicate setting
	settings, err := expandSettings(c.Pets, 2)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range settings {
		ids = append(ids, s.ID)
	}
	if got := ids; len(got) != 5 || got[0] != "none" || got[1] != "rr_eps1" || got[2] != "llp_geom_k4_eps1" || got[4] != "bot" {
		t.Fatalf("settings %v", got)
	}
	runs := mustRuns(t, c, settings, "sha256:a")
	if len(runs) != 5*2*2 {
		t.Fatalf("%d runs", len(runs))
	}
	// Grid order: settings, then trials, then learning rates.
	if r := runs[3]; r.Setting.ID != "none" || r.Trial != 1 || r.LR != 0.003 || r.Index != 3 {
		t.Fatalf("run 3: %s", r.Name())
	}
	// A trial's runs share their seed at every learning rate; trials and
	// settings differ.
	if runs[0].Seed != runs[1].Seed || runs[0].Seed == runs[2].Seed || runs[0].Seed == runs[4].Seed {
		t.Fatalf("seeds %d %d %d %d", runs[0].Seed, runs[1].Seed, runs[2].Seed, runs[4].Seed)
	}
	ids2 := map[string]bool{}
	for _, r := range runs {
		if ids2[r.ID] {
			t.Fatalf("duplicate run id %s", r.ID)
		}
		ids2[r.ID] = true
	}
	// Identity: the backend, the dataset's content and the seed change run
	// ids; the output directory and the group size do not; seeds never
	// depend on the backend.
	for _, tc := range []struct {
		name    string
		edit    func(*config.Config)
		dataset string
		same    bool
	}{
		{"output", func(c *config.Config) { c.Output = "elsewhere" }, "sha256:a", true},
		{"replicas", func(c *config.Config) { c.Train.Replicas = config.Replicas{N: 8} }, "sha256:a", true},
		{"backend", func(c *config.Config) { c.Backend = mustBackend(t, "xla:cuda") }, "sha256:a", false},
		{"dataset", func(*config.Config) {}, "sha256:b", false},
		{"seed", func(c *config.Config) { c.Seed = 6 }, "sha256:a", false},
		{"epochs", func(c *config.Config) { c.Train.Epochs = 3 }, "sha256:a", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c2 := testConfig("o")
			tc.edit(c2)
			other := mustRuns(t, c2, settings, tc.dataset)
			if (other[0].ID == runs[0].ID) != tc.same {
				t.Fatalf("run id %s vs %s, want same=%v", other[0].ID, runs[0].ID, tc.same)
			}
			if tc.name == "backend" && other[0].Seed != runs[0].Seed {
				t.Fatal("the backend changed a run's seed")
			}
		})
	}
}

// DeriveSeed is part of every stored result's identity: changing it
// silently would retrain finished sweeps. Golden values.
func TestDeriveSeedGolden(t *testing.T) {
	if got := deriveSeed(1, "release", "rr_eps1", "0"); got != 10048560941588496544 {
		t.Fatalf("DeriveSeed = %d, want 10048560941588496544", got)
	}
	if deriveSeed(1, "ab", "c") == deriveSeed(1, "a", "bc") {
		t.Fatal("labels are not separated")
	}
}

// mustBackend parses a backend name a test spells.
func mustBackend(t *testing.T, name string) model.BackendName {
	t.Helper()
	b, err := model.ParseBackend(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// train data synth makes, by default, the test set a default config
// synthesizes: room for the default audit set and η's calibration rows.
func TestSynthDefaultsLeaveCalibrationRows(t *testing.T) {
	d, o := config.Defaults(), NewDatasetOptions("synth").Synth
	if o.TestRows != d.Data.Synth.TestRows || o.TestRows < d.Audit.Examples+d.Audit.CalibrationRows {
		t.Fatalf("data synth's %d test rows; data.synth.test_rows %d; audit.examples %d + audit.calibration_rows %d",
			o.TestRows, d.Data.Synth.TestRows, d.Audit.Examples, d.Audit.CalibrationRows)
	}
}

// Slurm's time limit forms, and the signal lead checked against them.
func TestSlurmDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration // 0: refused
	}{
		{"30", 30 * time.Minute}, {"10:30", 10*time.Minute + 30*time.Second}, {"04:00:00", 4 * time.Hour},
		{"2-3", 51 * time.Hour}, {"1-00:30", 24*time.Hour + 30*time.Minute}, {"1-02:03:04", 26*time.Hour + 3*time.Minute + 4*time.Second},
		{"", 0}, {"1:2:3:4", 0}, {"x", 0}, {"1-1:2:3:4", 0}, {"-5", 0},
	} {
		got, err := slurmDuration(tc.in)
		if (err != nil) != (tc.want == 0) || got != tc.want {
			t.Errorf("%q: %v (%v), want %v", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		limit string
		lead  time.Duration
		want  int // seconds; -1: refused
	}{{"04:00:00", 5 * time.Minute, 300}, {"10", 10 * time.Minute, -1}, {"", 90 * time.Second, 90}, {"", 0, -1}, {"30-0", 20 * time.Hour, -1}, {"bad", time.Minute, -1}} {
		got, err := signalLead(tc.limit, EmitOptions{Requeue: true, SignalLead: tc.lead})
		if (err != nil) != (tc.want < 0) || err == nil && got != tc.want {
			t.Errorf("limit %q, lead %v: %d (%v), want %d", tc.limit, tc.lead, got, err, tc.want)
		}
	}
}

// report.PriorParamsOf reads back what config.Setting.ID writes of
// rr_prior's stage fraction and prior learning rate, the defaults
// included, so that figures can name the parameter two settings differ in.
func TestPriorParamsOfSettingIDs(t *testing.T) {
	if report.DefaultStageFraction != config.DefaultStageFraction {
		t.Fatalf("report.DefaultStageFraction %v, config's %v", report.DefaultStageFraction, config.DefaultStageFraction)
	}
	for _, s := range []config.Setting{
		{Params: pets.Params{Kind: pets.RRPrior, Epsilon: 1}, StageFraction: config.DefaultStageFraction},
		{Params: pets.Params{Kind: pets.RRPrior, Epsilon: 1}, StageFraction: 0.7},
		{Params: pets.Params{Kind: pets.RRPrior, Epsilon: 0.5}, StageFraction: 0.3, PriorLR: 0.01},
		{Params: pets.Params{Kind: pets.RRPrior, Epsilon: 2}, StageFraction: config.DefaultStageFraction, PriorLR: 1e-3},
	} {
		got, ok := report.PriorParamsOf(s.ID(), s.Kind)
		if want := (report.PriorParams{StageFraction: s.StageFraction, PriorLR: s.PriorLR}); !ok || got != want {
			t.Errorf("%s: %+v (%v), want %+v", s.ID(), got, ok, want)
		}
	}
	if _, ok := report.PriorParamsOf("rr_eps1", pets.RR); ok {
		t.Error("rr has prior parameters")
	}
}
