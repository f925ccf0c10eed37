package config

import (
	"strings"
	"testing"
)

// araMinimal is a config of the two Attribution Reporting kinds on the
// synthetic dataset (binary labels: conversions of one trigger-data value
// in one window; key column group).
const araMinimal = `
name: t
output: OUT
data: {synth: {kind: beta, rows: 100, test_rows: 20, features: 3, groups: 4}}
pets:
  - {mechanism: ara_event, trigger_data: 1, windows: 1, reports: [1, 3], epsilon: [1, 14]}
  - {mechanism: ara_summary, key: group, budget_share: [{count: 1}, {count: 0.5}], epsilon: [1, 64]}
`

// The Attribution Reporting keys expand the grid and name the settings;
// each bad value is one error naming its key.
func TestARAConfig(t *testing.T) {
	cfg, err := loadConfig(writeConfig(t, araMinimal), nil, mapEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range cfg.Pets {
		for _, st := range p.Settings() {
			ids = append(ids, st.ID())
		}
	}
	want := "ara_event_eps1_t1_w1_r1 ara_event_eps1_t1_w1_r3 ara_event_eps14_t1_w1_r1 ara_event_eps14_t1_w1_r3 " +
		"ara_summary_eps1_key-group ara_summary_eps1_key-group_count0.5 ara_summary_eps64_key-group ara_summary_eps64_key-group_count0.5"
	if got := strings.Join(ids, " "); got != want {
		t.Errorf("settings %s\nwant     %s", got, want)
	}
	for _, tc := range []struct {
		name, from, to string
		want           []string
	}{
		{"ε above Chromium's 14", "epsilon: [1, 14]", "epsilon: [1, 14.5]", []string{"pets[0].epsilon[1]", "Chromium's largest event-level ε, 14"}},
		{"ε ≤ 0", "epsilon: [1, 14]", "epsilon: [0, 14]", []string{"pets[0].epsilon[0]"}},
		{"summary ε above 64", "epsilon: [1, 64]", "epsilon: [1, 65]", []string{"pets[1].epsilon[1]", "aggregation service's largest ε, 64"}},
		{"shares above 1", "{count: 0.5}", "{count: 0.75, value: 0.5}", []string{"pets[1].budget_share[1]", "sum to 1.25"}},
		{"no count share", "{count: 0.5}", "{count: 0}", []string{"pets[1].budget_share[1]", "(0, 1]"}},
		{"no reports", "reports: [1, 3], ", "", []string{"pets[0].reports", "at least one"}},
		{"reports 0", "reports: [1, 3]", "reports: [0, 3]", []string{"pets[0].reports[0]", "≥ 1"}},
		{"reports repeated", "reports: [1, 3]", "reports: [3, 3]", []string{"pets[0].reports[1]", "repeats 3"}},
		{"six windows", "windows: 1", "windows: 6", []string{"pets[0].windows", "Chromium's 5"}},
		{"no trigger data", "trigger_data: 1, ", "", []string{"pets[0].trigger_data", "≥ 1"}},
		{"no key", "key: group, ", "", []string{"pets[1].key", "needs the integer key column"}},
		{"a key that is no column", "key: group", "key: campaign", []string{"pets[1].key", `no integer key column "campaign"`}},
		{"bags on the summary", "key: group,", "key: group, bags: [random],", []string{"pets[1].bags", "groups of its key"}},
		{"a source on rr", "mechanism: ara_event,", "mechanism: rr,", []string{"pets[0].trigger_data", "only ara_event"}},
		{"a budget on llp_lap", "mechanism: ara_summary, key: group,", "mechanism: llp_lap, k: 4,", []string{"pets[1].budget_share", "only ara_summary"}},
		{"a key on llp", "mechanism: ara_summary, key: group, budget_share: [{count: 1}, {count: 0.5}],", "mechanism: llp_lap, k: 4, key: group,", []string{"pets[1].key", "bags: key:<column>"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := strings.Replace(araMinimal, tc.from, tc.to, 1)
			if body == araMinimal {
				t.Fatalf("%q not in the config", tc.from)
			}
			_, err := loadConfig(writeConfig(t, body), nil, mapEnv(nil))
			if err == nil {
				t.Fatal("no error")
			}
			if strings.Count(err.Error(), "\n") > 0 {
				t.Errorf("more than one line: %q", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}
