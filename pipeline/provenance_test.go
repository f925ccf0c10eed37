package pipeline

import (
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"labelprivacy/config"
	"labelprivacy/model"
	"labelprivacy/pets"
	"labelprivacy/report"
)

func TestRevisionOf(t *testing.T) {
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "a4d8729eadd9494316519d2df80c155c05d3c956"}
	cases := []struct {
		name string
		in   []debug.BuildSetting
		want string
	}{
		{"clean", []debug.BuildSetting{rev, {Key: "vcs.modified", Value: "false"}}, "a4d8729eadd9"},
		{"modified", []debug.BuildSetting{{Key: "vcs.modified", Value: "true"}, rev}, "a4d8729eadd9+modified"},
		{"none recorded", []debug.BuildSetting{{Key: "vcs.modified", Value: "true"}}, ""},
	}
	for _, tc := range cases {
		if got := revisionOf(tc.in); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// configKeys is config_id in words: every change that moves the
// fingerprint shows in it as the key changed, and a change the
// fingerprint ignores (the grid, the output) does not.
func TestConfigKeysFollowFingerprint(t *testing.T) {
	base := config.Defaults()
	base.Pets = []config.PetConfig{{Mechanism: pets.RR, Epsilon: []float64{1}}}
	cases := []struct {
		key    string // "" : the fingerprint must not change
		change func(*config.Config)
	}{
		{"model.kind", func(c *config.Config) { c.Model.Kind = model.KindHiggsMLP }},
		{"model.hidden", func(c *config.Config) { c.Model.Hidden = []int{8} }},
		{"model.init", func(c *config.Config) { c.Model.Init = model.InitHeNormal }},
		{"data.standardize", func(c *config.Config) { c.Data.Standardize = false }},
		{"train.epochs", func(c *config.Config) { c.Train.Epochs = 7 }},
		{"train.batch_size", func(c *config.Config) { c.Train.BatchSize = 64 }},
		{"train.rr_loss", func(c *config.Config) { c.Train.RRLoss = model.LossBCE }},
		{"train.llp_loss", func(c *config.Config) { c.Train.LLPLoss = model.LossEasyLLP }},
		{"privacy.keep_remainder", func(c *config.Config) { c.Privacy.KeepRemainder = true }},
		{"backend", func(c *config.Config) { c.Backend = mustBackend(t, "xla:cpu") }},
		{"train.rr_prior_targets", func(c *config.Config) {
			c.Pets = append(c.Pets, config.PetConfig{Mechanism: pets.RRPrior, Epsilon: []float64{1}})
		}},
		{"train.sparse_embedding", func(c *config.Config) { c.Model.Kind = model.KindKDDEmbed }},
		{"", func(c *config.Config) {
			c.Train.LearningRates = []float64{0.5}
			c.Output = "elsewhere"
			c.Name = "other"
		}},
	}
	if n := reflect.TypeFor[fingerprint]().NumField(); len(cases)-1 < n {
		t.Fatalf("%d fingerprint fields, %d key cases: cover the new one", n, len(cases)-1)
	}
	for _, tc := range cases {
		c := base
		c.Model.Hidden = slices.Clone(base.Model.Hidden)
		c.Pets = slices.Clone(base.Pets)
		tc.change(&c)
		idChanged := configFingerprint(&c) != configFingerprint(&base)
		diff := report.ConfigDiff(configKeys(&base), configKeys(&c))
		named := slices.ContainsFunc(diff, func(d string) bool { return strings.HasPrefix(d, tc.key+": ") })
		switch {
		case tc.key == "" && (idChanged || len(diff) > 0):
			t.Errorf("a change outside the fingerprint moved it (%v) or its keys (%q)", idChanged, diff)
		case tc.key != "" && (!idChanged || !named):
			t.Errorf("%s: fingerprint changed %v, keys diff %q", tc.key, idChanged, diff)
		}
	}
}

// train version says the revision, or that the build recorded none.
func TestVersionLine(t *testing.T) {
	if got, want := versionLine("a4d8729eadd9"), Version+" (revision a4d8729eadd9)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if got := versionLine(""); !strings.Contains(got, "no VCS revision recorded") || !strings.Contains(got, "-buildvcs=false") {
		t.Errorf("without VCS information: %q", got)
	}
}
