package ara

import (
	"fmt"
	"strings"
)

// Source is an attribution source's type, which sets Chromium's defaults
// and its cap on the information gain: a navigation source (registered on
// a click) or an event source (a view).
type Source uint8

const (
	Navigation Source = iota + 1
	Event
)

func (s Source) String() string {
	switch s {
	case Navigation:
		return "navigation"
	case Event:
		return "event"
	}
	return fmt.Sprintf("Source(%d)", uint8(s))
}

// ParseSource reads navigation or event (case-insensitive).
func ParseSource(name string) (Source, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "navigation":
		return Navigation, nil
	case "event":
		return Event, nil
	}
	return 0, &ParamError{Param: "source", Msg: fmt.Sprintf("%q is not navigation or event", name)}
}

// ParamError is a bad value of one parameter. Param is named as the
// command's flags and configs name it (trigger_data, windows, reports,
// epsilon, source), or as the field of a registration's JSON
// (trigger_specs[1].event_report_windows.end_times).
type ParamError struct{ Param, Msg string }

func (e *ParamError) Error() string {
	if e.Param == "" {
		return e.Msg
	}
	return e.Param + ": " + e.Msg
}

// TriggerSpec is a group of trigger-data values alike in their reports
// (one of a flexible-event registration's trigger_specs): each value may
// be reported in any of Windows reporting windows, at most Reports times
// in all (its summary buckets).
type TriggerSpec struct {
	TriggerData int // trigger-data values of the group, ≥ 1
	Windows     int // reporting windows of each value, in [1, MaxWindows]
	Reports     int // most reports of each value, ≥ 0 (at or above MaxReports it binds nothing)
}

// Config is an event-level source's output configuration: at most
// MaxReports reports (max_event_level_reports), each one of a trigger-data
// value of Specs and one of that value's windows.
type Config struct {
	MaxReports int // in [0, MaxReports] (0: the source never reports; one state)
	Specs      []TriggerSpec
}

// Bounds of the arithmetic (far above Chromium's own limits, which
// Limits.Exceeded checks): k stays a number of at most a few thousand
// digits, computed in well under a second.
const (
	MaxReports     = 100     // reports of a source
	MaxWindows     = 100     // reporting windows of one trigger-data value
	MaxTriggerData = 1 << 32 // trigger-data values of a source (trigger data is a uint32)
)

// Uniform is the configuration of triggerData values, each with windows
// reporting windows, and at most reports reports: the shape of Chromium's
// defaults and of every source before flexible event-level reports.
func Uniform(triggerData, windows, reports int) Config {
	return Config{MaxReports: reports, Specs: []TriggerSpec{{TriggerData: triggerData, Windows: windows, Reports: reports}}}
}

// Default is Chromium's configuration of a source of type s: navigation 8
// trigger-data values, 3 windows, 3 reports; event 2 values, 1 window, 1
// report.
func Default(s Source) Config {
	if s == Event {
		return Uniform(2, 1, 1)
	}
	return Uniform(8, 3, 3)
}

// uniform reports whether c is one group whose cap binds nothing: the
// form Uniform makes.
func (c Config) uniform() bool {
	return len(c.Specs) == 1 && c.Specs[0].Reports >= c.MaxReports
}

// TriggerData is the number of trigger-data values of c.
func (c Config) TriggerData() int {
	n := 0
	for _, s := range c.Specs {
		n += s.TriggerData
	}
	return n
}

// String says c in words: "8 trigger-data values × 3 windows, at most 3
// reports" (Uniform), else each group's shape.
func (c Config) String() string {
	var b strings.Builder
	for i, s := range c.Specs {
		if i > 0 {
			b.WriteString(" + ")
		}
		fmt.Fprintf(&b, "%s × %s", count(s.TriggerData, "trigger-data value"), count(s.Windows, "window"))
		if s.Reports < c.MaxReports {
			fmt.Fprintf(&b, " (at most %s each)", count(s.Reports, "report"))
		}
	}
	if len(c.Specs) == 0 {
		b.WriteString("no trigger data")
	}
	fmt.Fprintf(&b, ", at most %s", count(c.MaxReports, "report"))
	return b.String()
}

func count(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// Validate checks c's parameters against the bounds of the arithmetic
// (not Chromium's limits: Limits.Exceeded). Errors are *ParamError, named
// trigger_data, windows and reports for a one-group configuration, else
// trigger_specs[i].… and max_event_level_reports.
func (c Config) Validate() error {
	one := len(c.Specs) == 1
	name := func(i int, field string) string {
		if one {
			return field
		}
		return fmt.Sprintf("trigger_specs[%d].%s", i, field)
	}
	maxName := "max_event_level_reports"
	if one && c.Specs[0].Reports == c.MaxReports {
		maxName = "reports"
	}
	if c.MaxReports < 0 || c.MaxReports > MaxReports {
		return &ParamError{Param: maxName, Msg: fmt.Sprintf("must be in [0, %d], got %d", MaxReports, c.MaxReports)}
	}
	total := 0
	for i, s := range c.Specs {
		switch {
		case s.TriggerData < 1 || s.TriggerData > MaxTriggerData:
			return &ParamError{Param: name(i, "trigger_data"), Msg: fmt.Sprintf("must be in [1, %d] values, got %d", MaxTriggerData, s.TriggerData)}
		case s.Windows < 1 || s.Windows > MaxWindows:
			return &ParamError{Param: name(i, "windows"), Msg: fmt.Sprintf("must be in [1, %d], got %d", MaxWindows, s.Windows)}
		case s.Reports < 0:
			return &ParamError{Param: name(i, "reports"), Msg: fmt.Sprintf("must be ≥ 0, got %d", s.Reports)}
		}
		if total += s.TriggerData; total > MaxTriggerData {
			return &ParamError{Param: name(i, "trigger_data"), Msg: fmt.Sprintf("the source's trigger-data values number more than %d", MaxTriggerData)}
		}
	}
	return nil
}
