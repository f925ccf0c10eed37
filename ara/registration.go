package ara

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// MaxRegistrationBytes bounds the JSON ParseRegistration reads (1 MiB; a
// registration header Chromium takes is a few KiB).
const MaxRegistrationBytes = 1 << 20

// ParseRegistration reads the event-level configuration of a source of
// type s from the JSON of its Attribution-Reporting-Register-Source header
// (what flexible_event_privacy.py reads on stdin). It reads:
//
//   - max_event_level_reports (default 3 for navigation, 1 for event);
//   - trigger_specs: each one's trigger_data (a non-empty list of distinct
//     uint32 values), its event_report_windows.end_times (one window per
//     end time) and its summary_buckets (at most that many reports of each
//     value; default max_event_level_reports);
//   - else the top-level trigger_data (default 0…7 for navigation, 0…1 for
//     event; an empty list: no trigger data, one state);
//   - the top-level event_report_windows.end_times, for a spec without its
//     own; else Chromium's default windows, which end at
//     event_report_window, else at expiry (seconds, clamped to [1 day,
//     30 days], default 30 days): a navigation source has a window ending
//     at each of 2 and 7 days that falls before that end, then one ending
//     there (3 by default; issue #734's 1 and 2 for short expiries), an
//     event source one.
//
// Other fields of the header are ignored. Errors are *ParamError naming
// the field (trigger_specs[1].summary_buckets); Param is empty for the
// document as a whole (not JSON, too long).
func ParseRegistration(r io.Reader, s Source) (Config, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxRegistrationBytes+1))
	if err != nil {
		return Config{}, err
	}
	if len(b) > MaxRegistrationBytes {
		return Config{}, &ParamError{Msg: fmt.Sprintf("longer than %d bytes", MaxRegistrationBytes)}
	}
	var reg registration
	if err := decodeStrict(b, &reg, ""); err != nil {
		return Config{}, err
	}
	return reg.config(s)
}

type registration struct {
	MaxReports  *int               `json:"max_event_level_reports"`
	TriggerData *[]uint32          `json:"trigger_data"`
	Windows     *reportWindows     `json:"event_report_windows"`
	Window      json.RawMessage    `json:"event_report_window"`
	Expiry      json.RawMessage    `json:"expiry"`
	Specs       *[]json.RawMessage `json:"trigger_specs"`
}

type reportWindows struct {
	StartTime *int64  `json:"start_time"`
	EndTimes  []int64 `json:"end_times"`
}

type triggerSpec struct {
	TriggerData *[]uint32      `json:"trigger_data"`
	Windows     *reportWindows `json:"event_report_windows"`
	Buckets     *[]uint32      `json:"summary_buckets"`
}

// Chromium's default report windows (seconds).
const (
	day             = 86400
	defaultExpiry   = 30 * day
	minExpiry       = day
	minReportWindow = 3600
)

// navigationDeadlines are the ends of a default navigation source's early
// windows: 2 and 7 days.
var navigationDeadlines = []int64{2 * day, 7 * day}

func (reg *registration) config(s Source) (Config, error) {
	c := Config{MaxReports: 3}
	if s == Event {
		c.MaxReports = 1
	}
	if reg.MaxReports != nil {
		if *reg.MaxReports < 0 || *reg.MaxReports > MaxReports {
			return Config{}, &ParamError{Param: "max_event_level_reports", Msg: fmt.Sprintf("must be in [0, %d], got %d", MaxReports, *reg.MaxReports)}
		}
		c.MaxReports = *reg.MaxReports
	}
	windows, err := reg.defaultWindows(s)
	if err != nil {
		return Config{}, err
	}
	if reg.Specs != nil && reg.TriggerData != nil {
		return Config{}, &ParamError{Param: "trigger_specs", Msg: "and the top-level trigger_data exclude each other"}
	}
	seen := map[uint32]int{}
	if reg.Specs == nil {
		values := defaultTriggerData(s)
		if reg.TriggerData != nil {
			values = *reg.TriggerData
		}
		if err := distinct(values, seen, -1, "trigger_data"); err != nil {
			return Config{}, err
		}
		if len(values) > 0 {
			c.Specs = []TriggerSpec{{TriggerData: len(values), Windows: windows, Reports: c.MaxReports}}
		}
		return c, c.Validate()
	}
	for i, raw := range *reg.Specs {
		prefix := fmt.Sprintf("trigger_specs[%d]", i)
		var spec triggerSpec
		if err := decodeStrict(raw, &spec, prefix+"."); err != nil {
			return Config{}, err
		}
		if spec.TriggerData == nil || len(*spec.TriggerData) == 0 {
			return Config{}, &ParamError{Param: prefix + ".trigger_data", Msg: "must list at least one value"}
		}
		if err := distinct(*spec.TriggerData, seen, i, prefix+".trigger_data"); err != nil {
			return Config{}, err
		}
		ts := TriggerSpec{TriggerData: len(*spec.TriggerData), Windows: windows, Reports: c.MaxReports}
		if spec.Windows != nil {
			if ts.Windows, err = spec.Windows.count(prefix + ".event_report_windows"); err != nil {
				return Config{}, err
			}
		}
		if spec.Buckets != nil {
			if ts.Reports, err = buckets(*spec.Buckets, c.MaxReports, prefix+".summary_buckets"); err != nil {
				return Config{}, err
			}
		}
		c.Specs = append(c.Specs, ts)
	}
	return c, c.Validate()
}

// defaultWindows is the number of windows of a spec without its own
// event_report_windows.
func (reg *registration) defaultWindows(s Source) (int, error) {
	if reg.Windows != nil {
		if len(reg.Window) > 0 {
			return 0, &ParamError{Param: "event_report_windows", Msg: "and event_report_window exclude each other"}
		}
		return reg.Windows.count("event_report_windows")
	}
	end := int64(defaultExpiry)
	if len(reg.Expiry) > 0 {
		e, err := seconds(reg.Expiry, "expiry")
		if err != nil {
			return 0, err
		}
		end = min(max(e, minExpiry), defaultExpiry)
	}
	if len(reg.Window) > 0 {
		w, err := seconds(reg.Window, "event_report_window")
		if err != nil {
			return 0, err
		}
		end = min(max(w, minReportWindow), end)
	}
	if s == Event {
		return 1, nil
	}
	n := 1
	for _, d := range navigationDeadlines {
		if d < end {
			n++
		}
	}
	return n, nil
}

// count checks w's times and returns its number of windows.
func (w *reportWindows) count(field string) (int, error) {
	start := int64(0)
	if w.StartTime != nil {
		if start = *w.StartTime; start < 0 {
			return 0, &ParamError{Param: field + ".start_time", Msg: fmt.Sprintf("must be ≥ 0, got %d", start)}
		}
	}
	switch {
	case len(w.EndTimes) == 0:
		return 0, &ParamError{Param: field + ".end_times", Msg: "must list at least one end time"}
	case len(w.EndTimes) > MaxWindows:
		return 0, &ParamError{Param: field + ".end_times", Msg: fmt.Sprintf("lists %d windows, more than %d", len(w.EndTimes), MaxWindows)}
	}
	prev := start
	for j, e := range w.EndTimes {
		if e <= prev {
			return 0, &ParamError{Param: fmt.Sprintf("%s.end_times[%d]", field, j), Msg: fmt.Sprintf("%d must be after %d (the start time or the end before)", e, prev)}
		}
		prev = e
	}
	return len(w.EndTimes), nil
}

// buckets checks summary buckets and returns their number: the most
// reports of each value of the spec.
func buckets(b []uint32, maxReports int, field string) (int, error) {
	if len(b) == 0 || len(b) > maxReports {
		return 0, &ParamError{Param: field, Msg: fmt.Sprintf("must list 1 to max_event_level_reports (%d) buckets, got %d", maxReports, len(b))}
	}
	prev := uint32(0)
	for j, v := range b {
		if v <= prev {
			return 0, &ParamError{Param: fmt.Sprintf("%s[%d]", field, j), Msg: fmt.Sprintf("%d must be > 0 and above the bucket before", v)}
		}
		prev = v
	}
	return len(b), nil
}

// distinct records values as spec i's, refusing one seen before.
func distinct(values []uint32, seen map[uint32]int, i int, field string) error {
	for _, v := range values {
		if j, dup := seen[v]; dup {
			where := "earlier in the list"
			if j != i {
				where = fmt.Sprintf("in trigger_specs[%d]", j)
			}
			return &ParamError{Param: field, Msg: fmt.Sprintf("trigger data %d is also %s", v, where)}
		}
		seen[v] = i
	}
	return nil
}

func defaultTriggerData(s Source) []uint32 {
	n := 8
	if s == Event {
		n = 2
	}
	v := make([]uint32, n)
	for i := range v {
		v[i] = uint32(i)
	}
	return v
}

// seconds reads a duration field: a JSON integer, or a string holding
// one (as headers write them), ≥ 0.
func seconds(raw json.RawMessage, field string) (int64, error) {
	s := strings.TrimSpace(string(raw))
	if unq, err := strconv.Unquote(s); err == nil {
		s = unq
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, &ParamError{Param: field, Msg: fmt.Sprintf("must be a whole number of seconds ≥ 0, got %s", raw)}
	}
	return v, nil
}

// decodeStrict decodes b into v, turning JSON errors into *ParamError (the
// field under prefix, or the document).
func decodeStrict(b []byte, v any, prefix string) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &te) && te.Field != "":
			return &ParamError{Param: prefix + te.Field, Msg: fmt.Sprintf("a JSON %s where %s is wanted", te.Value, te.Type)}
		case errors.As(err, &te):
			return &ParamError{Param: strings.TrimSuffix(prefix, "."), Msg: fmt.Sprintf("must be a JSON object, got a JSON %s", te.Value)}
		case errors.As(err, &se):
			return &ParamError{Param: strings.TrimSuffix(prefix, "."), Msg: fmt.Sprintf("not JSON at byte %d: %v", se.Offset, err)}
		}
		return &ParamError{Param: strings.TrimSuffix(prefix, "."), Msg: err.Error()}
	}
	if dec.More() {
		return &ParamError{Param: strings.TrimSuffix(prefix, "."), Msg: "more than one JSON value"}
	}
	return nil
}
