package audit

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"labelprivacy/pets"
)

// jfloat is a float64 whose JSON form writes +Inf, -Inf and NaN as the
// strings "inf", "-inf" and "nan" (as the pets ledger does in CSV, and
// readable by pandas), which encoding/json otherwise rejects.
type jfloat float64

func (f jfloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsNaN(v):
		return []byte(`"nan"`), nil
	case math.IsInf(v, 1):
		return []byte(`"inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-inf"`), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

func (f *jfloat) UnmarshalJSON(b []byte) error {
	var s string
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		switch s {
		case "nan", "NaN":
			*f = jfloat(math.NaN())
		case "inf", "+inf", "Inf", "+Inf":
			*f = jfloat(math.Inf(1))
		case "-inf", "-Inf":
			*f = jfloat(math.Inf(-1))
		default:
			return fmt.Errorf("audit: bad float %q", s)
		}
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	*f = jfloat(v)
	return err
}

type summaryJSON struct {
	Mechanism  string    `json:"mechanism"`
	Kind       pets.Kind `json:"kind"`
	K          int       `json:"k"`
	Epsilon    jfloat    `json:"epsilon"`
	NExamples  int       `json:"n_examples"`
	NDropped   int       `json:"n_dropped"`
	NBags      int       `json:"n_bags"`
	LabelDraws int       `json:"label_draws"`
	EAdv       jfloat    `json:"eadv"`
	EAdvSE     jfloat    `json:"eadv_se"`
	SEUnit     string    `json:"eadv_se_unit"`
	MAP50      jfloat    `json:"ma_p50"`
	MAP90      jfloat    `json:"ma_p90"`
	MAP98      jfloat    `json:"ma_p98"`
	MAP99      jfloat    `json:"ma_p99"`
	MAMax      jfloat    `json:"ma_max"`
	MAInfFrac  jfloat    `json:"ma_inf_frac"`
	MACount    int64     `json:"ma_count"`
}

// MarshalJSON writes the summary as a flat object with snake_case keys
// (mechanism, kind, k, epsilon, n_examples, n_dropped, n_bags, label_draws,
// eadv, eadv_se, eadv_se_unit, ma_p50, ma_p90, ma_p98, ma_p99, ma_max,
// ma_inf_frac, ma_count); non-finite numbers as "inf", "-inf", "nan".
func (s Summary) MarshalJSON() ([]byte, error) {
	return json.Marshal(summaryJSON{s.Mechanism, s.Kind, s.K, jfloat(s.Epsilon), s.NExamples, s.NDropped,
		s.NBags, s.LabelDraws, jfloat(s.EAdv), jfloat(s.EAdvSE), s.SEUnit, jfloat(s.MAP50), jfloat(s.MAP90),
		jfloat(s.MAP98), jfloat(s.MAP99), jfloat(s.MAMax), jfloat(s.MAInfFrac), s.MACount})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Summary) UnmarshalJSON(b []byte) error {
	var j summaryJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = Summary{j.Mechanism, j.Kind, j.K, float64(j.Epsilon), j.NExamples, j.NDropped, j.NBags,
		j.LabelDraws, float64(j.EAdv), float64(j.EAdvSE), j.SEUnit, float64(j.MAP50), float64(j.MAP90),
		float64(j.MAP98), float64(j.MAP99), float64(j.MAMax), float64(j.MAInfFrac), j.MACount}
	return nil
}

type sampleJSON struct {
	Index     int    `json:"index"`
	Prior     jfloat `json:"prior"`
	Label     uint8  `json:"label"`
	Release   jfloat `json:"release"`
	Posterior jfloat `json:"posterior"`
	IEAdv     jfloat `json:"ieadv"`
	AbsMA     jfloat `json:"abs_ma"`
}

// MarshalJSON writes {index, prior, label, release, posterior, ieadv,
// abs_ma}, with an infinite abs_ma as "inf".
func (s Sample) MarshalJSON() ([]byte, error) {
	return json.Marshal(sampleJSON{s.Index, jfloat(s.Prior), s.Label, jfloat(s.Release),
		jfloat(s.Posterior), jfloat(s.IEAdv), jfloat(s.AbsMA)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Sample) UnmarshalJSON(b []byte) error {
	var j sampleJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*s = Sample{j.Index, float64(j.Prior), j.Label, float64(j.Release), float64(j.Posterior),
		float64(j.IEAdv), float64(j.AbsMA)}
	return nil
}

type resultJSON struct {
	Summary Summary  `json:"summary"`
	Samples []Sample `json:"samples"`
}

// MarshalJSON writes {"summary": {...}, "samples": [...]} (Result needs its
// own methods: the embedded Summary's would otherwise be promoted and drop
// the samples).
func (r Result) MarshalJSON() ([]byte, error) {
	return json.Marshal(resultJSON{r.Summary, r.Samples})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *Result) UnmarshalJSON(b []byte) error {
	var j resultJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	r.Summary, r.Samples = j.Summary, j.Samples
	return nil
}
