package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"labelprivacy/ara"
	"labelprivacy/config"
)

func newAraCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "ara", Short: "Chrome's Attribution Reporting API: the noise and information gain of event-level reports"}
	cmd.AddCommand(newAraStatesCmd(stdout, stderr))
	return cmd
}

// araStates are the flags of `train ara states`.
type araStates struct {
	source                        string
	triggerData, windows, reports int
	epsilon                       float64
	registration                  string
	allowAboveCap, json           bool
}

func newAraStatesCmd(stdout, stderr io.Writer) *cobra.Command {
	var o araStates
	cmd := &cobra.Command{
		Use:   "states [--source navigation|event] [--trigger-data T --windows W --reports R | --registration FILE] [--epsilon E] [--json]",
		Short: "Output states k, flip probability and information gain of an event-level source",
		Long: `states counts the output states k of an attribution source's event-level reports —
every way of placing up to R reports over (trigger-data value × reporting window),
C(T·W + R, R) — and prints k, the probability p = k/(k + e^ε − 1) that the browser
replaces the source's output by one drawn uniformly from all k (k-ary randomized
response), and the information gain in bits (the capacity of the k-ary symmetric
channel), as WICG/attribution-reporting-api's flexible_event_privacy.py computes them.

--source picks Chromium's defaults (navigation: 8 trigger-data values, 3 windows, 3
reports; event: 2, 1, 1), which --trigger-data, --windows and --reports override.
--registration FILE reads a flexible-event configuration instead from the JSON of an
Attribution-Reporting-Register-Source header (- for stdin): max_event_level_reports,
trigger_specs (each one's trigger_data, event_report_windows.end_times, summary_buckets)
or the top-level trigger_data and event_report_windows, else Chromium's default windows
from expiry or event_report_window.

A configuration Chromium would refuse — an information gain above its cap (11.46173
bits for navigation sources, 6.5 for event sources), ε above 14, more than 2^32 − 1
states, 20 reports, 5 windows or 32 trigger-data values — is refused, naming the limit,
unless --allow-above-cap (then each is warned of, and listed under "exceeds" in --json).

--json prints one object: states (an exact integer), flip_probability,
information_gain_bits, source, epsilon, config, information_gain_cap_bits, exceeds.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd, stdout, stderr) },
	}
	f := cmd.Flags()
	f.StringVar(&o.source, "source", "navigation", "source type, for the defaults and the cap: navigation | event")
	f.IntVar(&o.triggerData, "trigger-data", 0, "trigger-data values T (default: the source's, 8 | 2)")
	f.IntVar(&o.windows, "windows", 0, "reporting windows W of each value (default: the source's, 3 | 1)")
	f.IntVar(&o.reports, "reports", 0, "most reports R of the source, max_event_level_reports (default: the source's, 3 | 1)")
	f.Float64Var(&o.epsilon, "epsilon", ara.Chromium.MaxEpsilon, "event-level ε (Chromium's: 14)")
	f.StringVar(&o.registration, "registration", "", "a flexible-event configuration: the JSON of an Attribution-Reporting-Register-Source header (- for stdin)")
	f.BoolVar(&o.allowAboveCap, "allow-above-cap", false, "compute a configuration above Chromium's limits instead of refusing it (warned)")
	f.BoolVar(&o.json, "json", false, "print one JSON object")
	return cmd
}

// run is the command: flags → ara.Summarize → one error line, or the
// summary (warnings on stderr).
func (o *araStates) run(cmd *cobra.Command, stdout, stderr io.Writer) error {
	src, err := ara.ParseSource(o.source)
	if err != nil {
		return araError(err, "")
	}
	c, err := o.config(cmd, src)
	if err != nil {
		return err
	}
	s, err := ara.Summarize(c, src, o.epsilon, ara.Chromium)
	if err != nil {
		return araError(err, o.registration)
	}
	if len(s.Exceeds) > 0 && !o.allowAboveCap {
		e := s.Exceeds[0]
		msg := e.Msg
		if n := len(s.Exceeds) - 1; n > 0 {
			msg += fmt.Sprintf(" (and %d more of Chromium's limits)", n)
		}
		return araError(&ara.ParamError{Param: e.Param, Msg: msg + "; `allow_above_cap` computes it anyway"}, o.registration)
	}
	for _, e := range s.Exceeds {
		fmt.Fprintf(stderr, "ara states: warning: above Chromium's limits: %s\n", e.Msg)
	}
	if o.json {
		b, err := json.Marshal(s)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	return s.WriteText(stdout)
}

// config is the configuration the flags give: --registration's, or the
// source's default with --trigger-data, --windows and --reports.
func (o *araStates) config(cmd *cobra.Command, src ara.Source) (ara.Config, error) {
	changed := func(names ...string) []string {
		var out []string
		for _, n := range names {
			if cmd.Flags().Changed(n) {
				out = append(out, "--"+n)
			}
		}
		return out
	}
	if o.registration != "" {
		if given := changed("trigger-data", "windows", "reports"); len(given) > 0 {
			return ara.Config{}, araError(&ara.ParamError{Param: "registration", Msg: "sets the configuration; leave out " + strings.Join(given, ", ")}, "")
		}
		r := cmd.InOrStdin()
		if o.registration != "-" {
			f, err := os.Open(o.registration)
			if err != nil {
				return ara.Config{}, araError(&ara.ParamError{Param: "registration", Msg: err.Error()}, "")
			}
			defer f.Close()
			r = f
		}
		c, err := ara.ParseRegistration(r, src)
		if err != nil {
			return ara.Config{}, araError(err, o.registration)
		}
		return c, nil
	}
	d := ara.Default(src).Specs[0]
	t, w, r := d.TriggerData, d.Windows, d.Reports
	if len(changed("trigger-data")) > 0 {
		t = o.triggerData
	}
	if len(changed("windows")) > 0 {
		w = o.windows
	}
	if len(changed("reports")) > 0 {
		r = o.reports
	}
	return ara.Uniform(t, w, r), nil
}

// araError says an ara error in flags: a *ara.ParamError becomes a
// config.FieldError of its parameter (a usage error, exit status 2), the
// fields of a registration file under --registration FILE.
func araError(err error, registration string) error {
	var pe *ara.ParamError
	if !errors.As(err, &pe) {
		if registration != "" {
			return fmt.Errorf("--registration %s: %w", registration, err)
		}
		return err
	}
	key, msg := pe.Param, pe.Msg
	switch {
	case registration != "" && key != "epsilon" && key != "source":
		// A field of the file (or the document), or a limit its
		// configuration exceeds.
		key, msg = "registration", registration+": "+pe.Error()
	case key == "":
		key = "registration"
	}
	return flagError(&config.FieldError{Key: key, Msg: msg}, nil)
}
