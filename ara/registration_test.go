package ara

import (
	"math/big"
	"reflect"
	"strings"
	"testing"
)

func TestParseRegistration(t *testing.T) {
	cases := []struct {
		name   string
		json   string
		source Source
		want   Config
		states int64
	}{
		{"navigation defaults", `{}`, Navigation, Default(Navigation), 2925},
		{"event defaults", `{}`, Event, Default(Event), 3},
		{"null", `null`, Navigation, Default(Navigation), 2925},
		// Issue #734: an attribution window under 2 days leaves one
		// window, ((8+3) choose 3) = 165 states; under 7 days two, 969.
		{"expiry of one day", `{"destination": "https://x.example", "expiry": "86400"}`, Navigation, Uniform(8, 1, 3), 165},
		{"expiry of exactly 2 days", `{"expiry": 172800}`, Navigation, Uniform(8, 1, 3), 165},
		{"expiry of 5 days", `{"expiry": 432000}`, Navigation, Uniform(8, 2, 3), 969},
		{"expiry clamped to a day", `{"expiry": 60}`, Navigation, Uniform(8, 1, 3), 165},
		{"expiry clamped to 30 days", `{"expiry": 99999999}`, Navigation, Uniform(8, 3, 3), 2925},
		{"event_report_window below the expiry", `{"expiry": 2592000, "event_report_window": "86400"}`, Navigation, Uniform(8, 1, 3), 165},
		{"an event source has one default window", `{"expiry": 2592000}`, Event, Uniform(2, 1, 1), 3},
		{"flexible_event_privacy.py's navigation default",
			`{"trigger_specs": [{"trigger_data": [0, 1, 2, 3, 4, 5, 6, 7], "event_report_windows": {"end_times": [172800, 604800, 2592000]}}]}`,
			Navigation, Uniform(8, 3, 3), 2925},
		{"top-level trigger data and windows (lite flexible)",
			`{"max_event_level_reports": 2, "trigger_data": [5, 9], "event_report_windows": {"start_time": 0, "end_times": [3600, 86400]}}`,
			Event, Uniform(2, 2, 2), 15},
		{"specs with summary buckets",
			`{"max_event_level_reports": 3, "trigger_specs": [
				{"trigger_data": [0, 1], "event_report_windows": {"end_times": [3600, 86400]}, "summary_buckets": [1]},
				{"trigger_data": [2], "summary_buckets": [1, 5]}]}`,
			Navigation, Config{MaxReports: 3, Specs: []TriggerSpec{{2, 2, 1}, {1, 3, 2}}}, 0},
		{"a spec takes the top-level windows", `{"event_report_windows": {"end_times": [86400]}, "trigger_specs": [{"trigger_data": [1]}]}`,
			Navigation, Config{MaxReports: 3, Specs: []TriggerSpec{{1, 1, 3}}}, 4},
		{"no trigger data", `{"trigger_data": []}`, Navigation, Config{MaxReports: 3}, 1},
		{"no trigger specs", `{"trigger_specs": []}`, Navigation, Config{MaxReports: 3}, 1},
		{"no reports", `{"max_event_level_reports": 0}`, Navigation, Uniform(8, 3, 0), 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseRegistration(strings.NewReader(tc.json), tc.source)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c, tc.want) {
				t.Fatalf("config %+v, want %+v", c, tc.want)
			}
			want := big.NewInt(tc.states)
			if tc.states == 0 {
				want = big.NewInt(int64(bruteStates(c)))
			}
			if got := c.States(); got.Cmp(want) != 0 {
				t.Errorf("states %v, want %v", got, want)
			}
		})
	}
}

func TestParseRegistrationErrors(t *testing.T) {
	cases := []struct {
		name, json, param string
	}{
		{"not JSON", `{"max_event_level_reports": `, ""},
		{"not an object", `[1, 2]`, ""},
		{"two documents", `{} {}`, ""},
		{"fractional reports", `{"max_event_level_reports": 1.5}`, "max_event_level_reports"},
		{"too many reports", `{"max_event_level_reports": 101}`, "max_event_level_reports"},
		{"negative trigger data", `{"trigger_data": [-1]}`, "trigger_data"},
		{"trigger data above uint32", `{"trigger_data": [4294967296]}`, "trigger_data"},
		{"repeated trigger data", `{"trigger_data": [1, 2, 1]}`, "trigger_data"},
		{"specs and top-level trigger data", `{"trigger_data": [1], "trigger_specs": [{"trigger_data": [2]}]}`, "trigger_specs"},
		{"a spec without trigger data", `{"trigger_specs": [{"summary_buckets": [1]}]}`, "trigger_specs[0].trigger_data"},
		{"a spec of the wrong type", `{"trigger_specs": [{"trigger_data": "x"}]}`, "trigger_specs[0].trigger_data"},
		{"trigger data in two specs", `{"trigger_specs": [{"trigger_data": [1, 2]}, {"trigger_data": [3, 2]}]}`, "trigger_specs[1].trigger_data"},
		{"no end times", `{"trigger_specs": [{"trigger_data": [1], "event_report_windows": {"end_times": []}}]}`, "trigger_specs[0].event_report_windows.end_times"},
		{"end times out of order", `{"trigger_specs": [{"trigger_data": [1], "event_report_windows": {"end_times": [86400, 3600]}}]}`, "trigger_specs[0].event_report_windows.end_times[1]"},
		{"an end before the start", `{"event_report_windows": {"start_time": 7200, "end_times": [3600]}}`, "event_report_windows.end_times[0]"},
		{"a negative start", `{"event_report_windows": {"start_time": -1, "end_times": [3600]}}`, "event_report_windows.start_time"},
		{"too many buckets", `{"max_event_level_reports": 2, "trigger_specs": [{"trigger_data": [1], "summary_buckets": [1, 2, 3]}]}`, "trigger_specs[0].summary_buckets"},
		{"buckets out of order", `{"trigger_specs": [{"trigger_data": [1], "summary_buckets": [2, 2]}]}`, "trigger_specs[0].summary_buckets[1]"},
		{"both window forms", `{"event_report_window": 86400, "event_report_windows": {"end_times": [3600]}}`, "event_report_windows"},
		{"an expiry in words", `{"expiry": "a month"}`, "expiry"},
		{"a negative window", `{"event_report_window": -5}`, "event_report_window"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseRegistration(strings.NewReader(tc.json), Navigation)
			pe, ok := err.(*ParamError)
			if !ok || pe.Param != tc.param || strings.Contains(err.Error(), "\n") || pe.Msg == "" {
				t.Fatalf("error %v (%T), want a one-line *ParamError naming %q", err, err, tc.param)
			}
		})
	}
	long := `{"trigger_data": [` + strings.Repeat("1,", MaxRegistrationBytes/2) + `1]}`
	if _, err := ParseRegistration(strings.NewReader(long), Navigation); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("a registration over %d bytes: %v", MaxRegistrationBytes, err)
	}
}

// Whatever the bytes, ParseRegistration returns a valid Config or a
// *ParamError, and never panics.
func FuzzParseRegistration(f *testing.F) {
	for _, s := range []string{`{}`, `{"expiry": "86400"}`, `{"trigger_specs": [{"trigger_data": [0], "summary_buckets": [1]}]}`,
		`{"max_event_level_reports": 2, "trigger_data": [5, 9], "event_report_windows": {"end_times": [3600, 86400]}}`, `[`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, s := range []Source{Navigation, Event} {
			c, err := ParseRegistration(strings.NewReader(string(b)), s)
			if err != nil {
				if _, ok := err.(*ParamError); !ok {
					t.Fatalf("%T %v", err, err)
				}
				continue
			}
			if err := c.Validate(); err != nil {
				t.Fatalf("accepted an invalid config %+v: %v", c, err)
			}
			if c.MaxReports <= 3 && c.TriggerData() <= 64 {
				if k := c.States(); k.Sign() <= 0 {
					t.Fatalf("%+v: %v states", c, k)
				}
			}
		}
	})
}
