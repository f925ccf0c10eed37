package pipeline

import (
	"fmt"
	"math"

	"labelprivacy/ara"
	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/report"
)

// checkSources refuses, before anything is written, an attribution
// source (ara_event's trigger_data and windows) that does not match the
// conversions its dataset records (data synth --kind conversions writes
// trigger_data and windows in meta.json): class 1 + t·W + w is one report
// of t in window w only for the dataset's own T and W, even where another
// T·W gives as many classes. A dataset that records none is checked by its
// classes alone (expandSettings).
func checkSources(c *config.Config, dir string, m *data.Meta) error {
	if m == nil || m.TriggerData == 0 {
		return nil
	}
	for i, p := range c.Pets {
		if !p.Mechanism.Spec().Takes.Source {
			continue
		}
		key, v, want := "trigger_data", p.TriggerData, m.TriggerData
		if v == want {
			key, v, want = "windows", p.Windows, m.Windows
		}
		if v != want {
			return &config.FieldError{Key: fmt.Sprintf("pets[%d].%s", i, key), Msg: fmt.Sprintf("%d, but the conversions of %s have %d trigger-data values in %d windows (its meta.json): a class is one report of a value in a window of those",
				v, dir, m.TriggerData, m.Windows)}
		}
	}
	return nil
}

// summaryAccuracy sets a's RMSRE figures for a setting released as one
// noisy aggregate per key group (ara_summary, pets.Takes.KeyGroups): Noise
// Lab's RMSRE_5 of each trial's training release — per key the released
// count, α·n, against the key's true count of conversions, or on values
// the released value sum, bag_mean·n, against the key's true sum, in
// value units (t = 5 of them) — averaged over the trials whose release is
// there, and √E[RMSRE_5²] of trial 0's keys under the release's Laplace
// noise (scale 1/NoiseRate in counts, B/(v·ε) in value units). The
// other kinds get NaN. The releases and the training labels are read only
// here, by the audit, never by a trainer.
func (s *Session) summaryAccuracy(set *setting, a *report.Audit) error {
	a.RMSRE, a.RMSREExpected = math.NaN(), math.NaN()
	if !set.Kind.Spec().Takes.KeyGroups {
		return nil
	}
	read, b := func(f *data.Frame) ([]float64, []float64, error) { return keyCounts(f, s.train.Label) }, 0.0
	if l := set.Mech.ValueLaw(); l != nil { // values: each key's value sum, Laplace scale B/(v·ε) in value units
		read, b = func(f *data.Frame) ([]float64, []float64, error) { return keyValueSums(f, s.train.Value) }, l.Scale()
	} else {
		b = 1 / set.Mech.BagLaw().NoiseRate()
	}
	var sum float64
	trials := 0
	for t := range s.cfg.Train.Trials {
		f, err := data.ReadFrame(releasePath(s.cfg.Output, set, t))
		if err != nil {
			s.ev.Warn("audit", fmt.Sprintf("%s: trial %d's release cannot be read for its RMSRE (%v); train fit makes it", set.ID, t, err))
			continue
		}
		noisy, truth, err := read(f)
		if err != nil {
			return fmt.Errorf("%s: trial %d's release: %w", set.ID, t, err)
		}
		sum += ara.RMSRE(noisy, truth, ara.RMSREThreshold)
		if trials == 0 {
			a.RMSREKeys = len(truth)
			a.RMSREExpected = math.Sqrt(ara.ExpectedRMSRESquared(truth, b, ara.RMSREThreshold))
		}
		trials++
	}
	if trials > 0 {
		a.RMSRE = sum / float64(trials)
	}
	return nil
}

// keyCounts reads a release of one proportion per bag (a simulation
// release: bag_id, alpha, row) as a summary report: per bag, in order of
// first appearance, the released count α·n and the true count of label-1
// rows among its n rows.
func keyCounts(f *data.Frame, labels []uint8) (noisy, truth []float64, err error) {
	if f.BagID == nil || len(f.Alpha) != f.Rows || len(f.Row) != f.Rows {
		return nil, nil, fmt.Errorf("not a simulation release of bags (%s, %s, %s)", data.ColBagID, data.ColAlpha, data.ColRow)
	}
	return keySums(f, f.Alpha, len(labels), func(row int64) float64 { return float64(labels[row]) })
}

// keyValueSums reads a release of one mean value per bag (a simulation
// release: bag_id, bag_mean, row) as a summary report of values: per bag,
// in order of first appearance, the released sum bag_mean·n and the true
// sum of its n rows' values.
func keyValueSums(f *data.Frame, values []float64) (noisy, truth []float64, err error) {
	if f.BagID == nil || len(f.BagMean) != f.Rows || len(f.Row) != f.Rows {
		return nil, nil, fmt.Errorf("not a simulation release of value bags (%s, %s, %s)", data.ColBagID, data.ColBagMean, data.ColRow)
	}
	return keySums(f, f.BagMean, len(values), func(row int64) float64 { return values[row] })
}

// keySums is keyCounts and keyValueSums: per bag of f, in order of first
// appearance, its released mean (mean, one per row) times its n rows, and
// the sum of truth over its rows (dataset rows below rows).
func keySums(f *data.Frame, mean []float64, rows int, truthOf func(row int64) float64) (noisy, truth []float64, err error) {
	at := map[int64]int{}
	var n []float64
	for i, id := range f.BagID {
		j, ok := at[id]
		if !ok {
			j = len(truth)
			at[id] = j
			truth, n, noisy = append(truth, 0), append(n, 0), append(noisy, mean[i])
		}
		row := f.Row[i]
		if row < 0 || row >= int64(rows) {
			return nil, nil, fmt.Errorf("row %d refers to dataset row %d of %d", i, row, rows)
		}
		truth[j] += truthOf(row)
		n[j]++
	}
	for j := range noisy {
		noisy[j] *= n[j]
	}
	return noisy, truth, nil
}
