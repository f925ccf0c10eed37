package ara

import (
	"math"
	"math/big"
	"strings"
	"testing"
)

func TestChromiumLimits(t *testing.T) {
	cases := []struct {
		name   string
		c      Config
		source Source
		eps    float64
		params []string // the Excess params, in order
		says   string   // a piece of the last message
	}{
		{"navigation default", Default(Navigation), Navigation, 14, nil, ""},
		{"event default", Default(Event), Event, 14, nil, ""},
		{"ε above 14", Default(Navigation), Navigation, 14.5, []string{"epsilon", "epsilon"}, "11.46173 bits"},
		{"ε above 14, gain below the cap", Default(Event), Event, 15, []string{"epsilon"}, "largest event-level ε, 14"},
		{"a fourth window", Uniform(8, 4, 3), Navigation, 14, []string{"epsilon"}, "6,545 states at ε = 14"},
		{"the same at ε = 11", Uniform(8, 4, 3), Navigation, 11, nil, ""},
		{"issue 734's 165 states as an event source", Uniform(8, 1, 3), Event, 14, []string{"epsilon"}, "cap for event sources, 6.5 bits"},
		{"six windows", Uniform(1, 6, 1), Event, 14, []string{"windows"}, "more than Chromium's 5"},
		{"33 trigger-data values", Uniform(33, 1, 1), Event, 14, []string{"trigger_data"}, "more than Chromium's 32"},
		{"21 reports", Uniform(1, 1, 21), Event, 14, []string{"reports"}, "more than Chromium's 20"},
		{"a flexible spec's windows", Config{MaxReports: 1, Specs: []TriggerSpec{{1, 1, 1}, {1, 6, 1}}}, Event, 14, []string{"trigger_specs[1].event_report_windows"}, ""},
		{"more states than a uint32 (and almost no gain)", Uniform(32, 5, 20), Navigation, 14, []string{"trigger_data"}, "175,142,105,857,592,248,012,292,655 states"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Evaluate(tc.c, tc.source, tc.eps)
			if err != nil {
				t.Fatal(err)
			}
			ex := Chromium.Exceeded(tc.c, r)
			var params []string
			for _, e := range ex {
				params = append(params, e.Param)
				if strings.Contains(e.Msg, "\n") {
					t.Errorf("a message of two lines: %q", e.Msg)
				}
			}
			if strings.Join(params, " ") != strings.Join(tc.params, " ") {
				t.Fatalf("exceeded %v, want %v", ex, tc.params)
			}
			if tc.says != "" && !strings.Contains(ex[len(ex)-1].Msg, tc.says) {
				t.Errorf("%q does not say %q", ex[len(ex)-1].Msg, tc.says)
			}
		})
	}
}

func TestEvaluateRefuses(t *testing.T) {
	cases := []struct {
		name   string
		c      Config
		source Source
		eps    float64
		param  string
	}{
		{"ε = 0", Default(Navigation), Navigation, 0, "epsilon"},
		{"ε < 0", Default(Navigation), Navigation, -1, "epsilon"},
		{"ε = +Inf", Default(Navigation), Navigation, math.Inf(1), "epsilon"},
		{"ε NaN", Default(Navigation), Navigation, math.NaN(), "epsilon"},
		{"no source type", Default(Navigation), 0, 14, "source"},
		{"no windows", Uniform(8, 0, 3), Navigation, 14, "windows"},
	}
	for _, tc := range cases {
		if _, err := Evaluate(tc.c, tc.source, tc.eps); err == nil || err.(*ParamError).Param != tc.param {
			t.Errorf("%s: %v, want a *ParamError naming %s", tc.name, err, tc.param)
		}
	}
	if _, err := ParseSource("click"); err == nil || err.(*ParamError).Param != "source" {
		t.Errorf("ParseSource(click): %v", err)
	}
	for _, s := range []Source{Navigation, Event} {
		if got, err := ParseSource(" " + strings.ToUpper(s.String())); err != nil || got != s {
			t.Errorf("ParseSource(%v) = %v, %v", s, got, err)
		}
	}
}

func TestThousands(t *testing.T) {
	for in, want := range map[string]string{"0": "0", "12": "12", "123": "123", "1234": "1,234", "2925": "2,925", "4294967295": "4,294,967,295", "-1000": "-1,000"} {
		k, _ := new(big.Int).SetString(in, 10)
		if got := Thousands(k); got != want {
			t.Errorf("Thousands(%s) = %s, want %s", in, got, want)
		}
	}
}
