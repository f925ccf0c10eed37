package ara

import (
	"fmt"
	"math/big"
	"strings"
)

// Limits are the bounds beyond which Chromium refuses an event-level source
// registration.
type Limits struct {
	MaxEpsilon float64 // the largest settable event_level_epsilon
	// The caps on a source's information gain (InformationGain), bits.
	NavigationInfoGain, EventInfoGain float64
	MaxStates                         uint64 // the largest trigger-state cardinality k
	MaxReports                        int    // max_event_level_reports
	MaxWindows                        int    // reporting windows (end_times) of a trigger spec
	MaxTriggerData                    int    // distinct trigger-data values of a source
}

// Chromium is Chromium's limits: ε ≤ 14 (event_level_epsilon.cc); an
// information gain of at most 11.46173 bits for navigation sources (the
// default navigation source's 11.4617280 bits, rounded up at the 5th
// decimal) and 6.5 for event sources (attribution_config.h's
// kDefaultMaxNavigationInfoGain and kDefaultMaxEventInfoGain; "11.46 bits"
// and "6.5 bits" in params/chromium-params.md); at most 2^32 − 1 trigger
// states, 20 reports, 5 windows and 32 trigger-data values
// (attribution_reporting/constants.h).
var Chromium = Limits{
	MaxEpsilon:         14,
	NavigationInfoGain: 11.46173,
	EventInfoGain:      6.5,
	MaxStates:          1<<32 - 1,
	MaxReports:         20,
	MaxWindows:         5,
	MaxTriggerData:     32,
}

// InfoGainCap is the cap on the information gain of a source of type s, bits.
func (l Limits) InfoGainCap(s Source) float64 {
	if s == Event {
		return l.EventInfoGain
	}
	return l.NavigationInfoGain
}

// Excess is one limit a configuration exceeds. Param names the parameter
// that sets it, as ParamError does (epsilon for the information gain: ε
// lowers it whatever the rest); Msg says the value and the limit.
type Excess struct{ Param, Msg string }

// Exceeded lists the limits of l that r, the evaluation of c, exceeds:
// reports, windows, trigger-data values, ε, states, information gain (nil:
// within every one).
func (l Limits) Exceeded(c Config, r *Result) []Excess {
	var out []Excess
	add := func(param, format string, args ...any) {
		out = append(out, Excess{Param: param, Msg: fmt.Sprintf(format, args...)})
	}
	one := len(c.Specs) == 1
	if c.MaxReports > l.MaxReports {
		add(map[bool]string{true: "reports", false: "max_event_level_reports"}[one], "%d reports are more than Chromium's %d", c.MaxReports, l.MaxReports)
	}
	for i, s := range c.Specs {
		if s.Windows > l.MaxWindows {
			param := "windows"
			if !one {
				param = fmt.Sprintf("trigger_specs[%d].event_report_windows", i)
			}
			add(param, "%d reporting windows are more than Chromium's %d", s.Windows, l.MaxWindows)
		}
	}
	if t := c.TriggerData(); t > l.MaxTriggerData {
		add(map[bool]string{true: "trigger_data", false: "trigger_specs"}[one], "%d trigger-data values are more than Chromium's %d", t, l.MaxTriggerData)
	}
	if r.Epsilon > l.MaxEpsilon {
		add("epsilon", "ε = %v is above Chromium's largest event-level ε, %v", r.Epsilon, l.MaxEpsilon)
	}
	if r.States.Cmp(new(big.Int).SetUint64(l.MaxStates)) > 0 {
		add(map[bool]string{true: "trigger_data", false: "trigger_specs"}[one], "%s states are more than Chromium's %s", Thousands(r.States), Thousands(new(big.Int).SetUint64(l.MaxStates)))
	}
	if cap := l.InfoGainCap(r.Source); r.InformationGainBits > cap {
		add("epsilon", "the information gain of this %s source, %.4f bits (%s states at ε = %v), is above Chromium's cap for %s sources, %v bits",
			r.Source, r.InformationGainBits, Thousands(r.States), r.Epsilon, r.Source, cap)
	}
	return out
}

// Thousands writes k in decimal with commas between groups of three digits.
func Thousands(k *big.Int) string {
	s := k.String()
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, d := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	return b.String()
}

// Summary reports (the aggregation service's side of the API): a source's
// aggregatable contributions sum to at most ContributionBudget (the L1
// budget, 2^16), and the service adds to every key Laplace noise of scale
// ContributionBudget/ε, standard deviation √2·L1/ε, for an ε of at most
// MaxSummaryEpsilon (the developer documentation's "contribution budget",
// 2^16; WICG/attribution-reporting-api issue #485 for the noise, of
// standard deviation √2·L1/ε; patcg-individual-drafts/private-aggregation-api
// issue #23 for the aggregation service's range of ε, up to 64; production
// draws a discrete Laplace of that scale).
const (
	ContributionBudget = 1 << 16
	MaxSummaryEpsilon  = 64
)
