package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labelprivacy/config"
	"labelprivacy/data"
)

// araCLI runs `train ara states args…` with stdin, returning stdout,
// stderr and the error.
func araCLI(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRootCmd(&out, &errb, mapEnv(nil))
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(append([]string{"ara", "states"}, args...))
	err := root.ExecuteContext(context.Background())
	return out.String(), errb.String(), err
}

// araJSON is `train ara states --json`'s object.
type araJSON struct {
	States              json.Number `json:"states"`
	FlipProbability     float64     `json:"flip_probability"`
	InformationGainBits float64     `json:"information_gain_bits"`
	Source              string      `json:"source"`
	Epsilon             float64     `json:"epsilon"`
	Config              string      `json:"config"`
	CapBits             float64     `json:"information_gain_cap_bits"`
	Exceeds             []string    `json:"exceeds"`
}

// araStatesJSON runs `train ara states args… --json` (stdin as given)
// and decodes its object, checking it has exactly its 8 keys.
func araStatesJSON(t *testing.T, stdin string, args ...string) (araJSON, string) {
	t.Helper()
	out, stderr, err := araCLI(t, stdin, append(args, "--json")...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	var j araJSON
	var keys map[string]any
	if err := json.Unmarshal([]byte(out), &keys); err != nil || len(keys) != 8 {
		t.Fatalf("%v: not the 8 keys: %s", args, out)
	}
	if err := dec.Decode(&j); err != nil {
		t.Fatalf("%v: %v in %s", args, err, out)
	}
	return j, stderr
}

// `train ara states` reproduces issue 38's seven figures to the digits
// given, at Chromium's ε = 14 (the default): the navigation default's
// 2,925 states, 0.24263% and 11.46 bits; the event default's 3 states and
// p ≈ 2.49×10⁻⁶; WICG/attribution-reporting-api issue #734's 165 states
// (8 trigger-data values, 3 reports, 1 window) at 0.01372% and 969 (2
// windows) at 0.08051%.
func TestCLIAraStatesFigures(t *testing.T) {
	cases := []struct {
		name               string
		stdin              string
		args               []string
		states             string
		percent, sci, bits string // 100·p %.5f, p %.2e, bits %.2f ("" not given)
	}{
		{"navigation default", "", nil, "2925", "0.24263", "", "11.46"},
		{"event default", "", []string{"--source", "event"}, "3", "", "2.49e-06", ""},
		{"issue 734, 1 window", "", []string{"--trigger-data", "8", "--windows", "1", "--reports", "3"}, "165", "0.01372", "", ""},
		{"issue 734, 2 windows", "", []string{"--windows", "2"}, "969", "0.08051", "", ""},
		{"issue 734 from a registration's expiry of a day", `{"destination": "https://shop.example", "expiry": "86400"}`, []string{"--registration", "-"}, "165", "0.01372", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j, _ := araStatesJSON(t, tc.stdin, tc.args...)
			if j.States.String() != tc.states {
				t.Errorf("states %s, want %s", j.States, tc.states)
			}
			if got := fmt.Sprintf("%.5f", 100*j.FlipProbability); tc.percent != "" && got != tc.percent {
				t.Errorf("flip %s%%, want %s%%", got, tc.percent)
			}
			if got := fmt.Sprintf("%.2e", j.FlipProbability); tc.sci != "" && got != tc.sci {
				t.Errorf("flip %s, want %s", got, tc.sci)
			}
			if got := fmt.Sprintf("%.2f", j.InformationGainBits); tc.bits != "" && got != tc.bits {
				t.Errorf("information gain %s bits, want %s", got, tc.bits)
			}
			if j.Epsilon != 14 || len(j.Exceeds) != 0 || j.Exceeds == nil {
				t.Errorf("ε %v, exceeds %v", j.Epsilon, j.Exceeds)
			}
		})
	}
	out, _, err := araCLI(t, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"navigation source: 8 trigger-data values × 3 windows, at most 3 reports; ε = 14", "2,925", "0.24263%", "11.46 bits", "11.46173"} {
		if !strings.Contains(out, s) {
			t.Errorf("the text does not say %q:\n%s", s, out)
		}
	}
}

// A configuration above Chromium's limits is one error line naming the
// parameter and --allow-above-cap, a usage error (config.ErrConfig: exit
// status 2, TestCLIAraStatesExitCodes); with --allow-above-cap it is computed and warned of. Bad
// flags and registrations name the flag (and the file's field).
func TestCLIAraStatesRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := write("bad.json", `{"trigger_specs": [{"trigger_data": [1], "event_report_windows": {"end_times": [86400, 3600]}}]}`)
	huge := write("huge.json", `{"max_event_level_reports": 20, "trigger_specs": [{"trigger_data": [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31], "event_report_windows": {"end_times": [1,2,3,4,5]}}]}`)
	cases := []struct {
		name string
		args []string
		says []string
	}{
		{"a fourth window", []string{"--windows", "4"}, []string{"--epsilon: the information gain of this navigation source, 12.5590 bits (6,545 states at ε = 14)", "11.46173 bits", "--allow-above-cap"}},
		{"an event source with a navigation's states", []string{"--source", "event", "--trigger-data", "8", "--reports", "3"}, []string{"--epsilon:", "cap for event sources, 6.5 bits", "--allow-above-cap"}},
		{"ε above Chromium's", []string{"--epsilon", "15"}, []string{"--epsilon: ε = 15 is above Chromium's largest event-level ε, 14 (and 1 more of Chromium's limits)", "--allow-above-cap"}},
		{"33 trigger-data values", []string{"--source", "event", "--trigger-data", "33"}, []string{"--trigger-data: 33 trigger-data values are more than Chromium's 32", "--allow-above-cap"}},
		{"more states than Chromium counts", []string{"--registration", huge}, []string{"--registration: " + huge + ": trigger_data: 175,142,105,857,592,248,012,292,655 states are more than Chromium's 4,294,967,295", "--allow-above-cap"}},
		{"no windows", []string{"--windows", "0"}, []string{"--windows: must be in [1, 100], got 0"}},
		{"ε = 0", []string{"--epsilon", "0"}, []string{"--epsilon: must be finite and > 0, got 0"}},
		{"an unknown source", []string{"--source", "click"}, []string{`--source: "click" is not navigation or event`}},
		{"a bad registration", []string{"--registration", bad}, []string{"--registration: " + bad + ": trigger_specs[0].event_report_windows.end_times[1]: 3600 must be after 86400"}},
		{"a missing registration", []string{"--registration", filepath.Join(dir, "none.json")}, []string{"--registration: open ", "none.json"}},
		{"a registration and flags", []string{"--registration", bad, "--reports", "2", "--windows", "1"}, []string{"--registration: sets the configuration; leave out --windows, --reports"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := araCLI(t, "", tc.args...)
			if err == nil {
				t.Fatalf("accepted: %s", out)
			}
			if !errors.Is(err, config.ErrConfig) || strings.Contains(err.Error(), "\n") || out != "" {
				t.Errorf("error %q (a usage error: %v), output %q", err, errors.Is(err, config.ErrConfig), out)
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
		})
	}

	j, stderr := araStatesJSON(t, "", "--windows", "4", "--allow-above-cap")
	if j.States.String() != "6545" || len(j.Exceeds) != 1 || !strings.Contains(stderr, "warning: above Chromium's limits: the information gain") {
		t.Errorf("--allow-above-cap: %+v, stderr %q", j, stderr)
	}
	j, _ = araStatesJSON(t, "", "--trigger-data", "32", "--windows", "5", "--reports", "20", "--allow-above-cap")
	if j.States.String() != "175142105857592248012292655" || j.InformationGainBits < 0 || j.FlipProbability <= 0.99 {
		t.Errorf("C(180, 20) states: %+v", j)
	}
}

// `train data synth --kind conversions --trigger-data T --windows W`
// writes C = 1 + T·W classes with columns eta_0 … eta_{C−1}, most rows of
// class 0; a product above 64 classes is refused, writing nothing.
func TestCLIDataSynthConversions(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "conv")
	if _, err := cli(t, nil, "data", "synth", "--out", out, "--kind", "conversions", "--trigger-data", "8", "--windows", "3",
		"--rows", "3000", "--test-rows", "300", "--features", "4", "--seed", "7"); err != nil {
		t.Fatal(err)
	}
	ds, err := data.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	m := ds.Meta
	if m.Classes != 25 || m.TriggerData != 8 || m.Windows != 3 || m.ConversionRate != data.DefaultConversionRate || len(ds.Train.EtaC) != 25*3000 {
		t.Fatalf("meta %+v", m)
	}
	if m.ClassRates[0] < 0.9 {
		t.Errorf("class 0 (no report) is %.3f of the rows", m.ClassRates[0])
	}
	synth, _, err := newRootCmd(&bytes.Buffer{}, &bytes.Buffer{}, mapEnv(nil)).Find([]string{"data", "synth"})
	if err != nil {
		t.Fatal(err)
	}
	if u := synth.Flags().Lookup("conversion-rate").Usage; !strings.Contains(u, fmt.Sprintf("%v)", data.DefaultConversionRate)) {
		t.Errorf("--conversion-rate says %q, the default is %v", u, data.DefaultConversionRate)
	}
	if _, err := cli(t, nil, "data", "synth", "--out", filepath.Join(dir, "big"), "--kind", "conversions", "--trigger-data", "8", "--windows", "8",
		"--rows", "10"); err == nil || !strings.Contains(err.Error(), "at most 64") {
		t.Fatalf("8 × 8: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "big")); err == nil {
		t.Error("a refused synth wrote its directory")
	}
}

// As a process: 0 when computed, 2 for a configuration above Chromium's
// limits or a bad flag value (a usage error), with the one line on stderr.
func TestCLIAraStatesExitCodes(t *testing.T) {
	cases := []struct {
		args []string
		want int
		says string
	}{
		{[]string{"ara", "states"}, 0, "2,925"},
		{[]string{"ara", "states", "--windows", "4"}, 2, "train: --epsilon: the information gain of this navigation source, 12.5590 bits"},
		{[]string{"ara", "states", "--windows", "4", "--allow-above-cap"}, 0, "warning: above Chromium's limits"},
		{[]string{"ara", "states", "--reports", "-1"}, 2, "train: --reports: must be in [0, 100], got -1"},
		{[]string{"ara", "states", "--windows", "two"}, 2, `invalid argument "two" for "--windows"`},
	}
	for _, tc := range cases {
		cmd, out := child(t, tc.args...)
		if got := status(t, cmd.Run()); got != tc.want || !strings.Contains(out.String(), tc.says) {
			t.Errorf("%q: exit status %d, want %d; output (want %q in it):\n%s", tc.args, got, tc.want, tc.says, out)
		}
	}
}
