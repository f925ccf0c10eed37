package ara

import (
	"encoding/json"
	"fmt"
	"io"
	"math/big"
)

// Summary is a configuration's evaluation with Chromium's verdict on it:
// what `train ara states` prints.
type Summary struct {
	Config Config
	Result
	CapBits float64  // the cap on the information gain of the source's type
	Exceeds []Excess // the limits it exceeds (Limits.Exceeded)
}

// Summarize evaluates c for a source of type s at ε (Evaluate) and checks
// it against l.
func Summarize(c Config, s Source, epsilon float64, l Limits) (*Summary, error) {
	r, err := Evaluate(c, s, epsilon)
	if err != nil {
		return nil, err
	}
	return &Summary{Config: c, Result: *r, CapBits: l.InfoGainCap(s), Exceeds: l.Exceeded(c, r)}, nil
}

// summaryJSON is Summary's JSON: states (an exact integer), the flip
// probability and the information gain (float64, full precision).
type summaryJSON struct {
	States              *big.Int `json:"states"`
	FlipProbability     float64  `json:"flip_probability"`
	InformationGainBits float64  `json:"information_gain_bits"`
	Source              string   `json:"source"`
	Epsilon             float64  `json:"epsilon"`
	Config              string   `json:"config"`
	CapBits             float64  `json:"information_gain_cap_bits"`
	Exceeds             []string `json:"exceeds"` // Chromium's limits exceeded, in words; [] when none
}

// MarshalJSON writes the keys states, flip_probability,
// information_gain_bits, source, epsilon, config,
// information_gain_cap_bits and exceeds.
func (s *Summary) MarshalJSON() ([]byte, error) {
	ex := make([]string, len(s.Exceeds))
	for i, e := range s.Exceeds {
		ex[i] = e.Msg
	}
	return json.Marshal(summaryJSON{States: s.States, FlipProbability: s.FlipProbability, InformationGainBits: s.InformationGainBits,
		Source: s.Source.String(), Epsilon: s.Epsilon, Config: s.Config.String(), CapBits: s.CapBits, Exceeds: ex})
}

// WriteText writes s for a person: the configuration, k, the flip
// probability as flexible_event_privacy.py prints it (a percentage to 5
// decimals) and in full, and the information gain to 2 decimals (as it
// prints it) against the cap.
func (s *Summary) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "%s source: %s; ε = %v\nstates            %s\nflip probability  %.5f%% (p = %v)\ninformation gain  %.2f bits (%.6g; Chromium's cap for %s sources: %v bits)\n",
		s.Source, s.Config, s.Epsilon, Thousands(s.States), 100*s.FlipProbability, s.FlipProbability,
		s.InformationGainBits, s.InformationGainBits, s.Source, s.CapBits)
	return err
}
