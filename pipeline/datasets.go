package pipeline

import (
	"context"
	"fmt"
	"time"

	"labelprivacy/config"
	"labelprivacy/data"
)

// DatasetOptions describe a dataset to import or synthesize (`train data
// import higgs|libsvm`, `train data synth`): Source picks one; the matching
// options are data's.
type DatasetOptions struct {
	Source string // "higgs", "libsvm" or "synth"
	Import data.ImportOptions
	Synth  data.SynthOptions
}

// NewDatasetOptions are the defaults of source: the paper's 10,000 test rows
// and 500,000 hash buckets; a logistic synthetic dataset of 28 features,
// seed 1, with data.synth.test_rows' 20,000 test rows (the default audit
// set and η's calibration rows, 10,000 each).
func NewDatasetOptions(source string) DatasetOptions {
	return DatasetOptions{Source: source,
		Import: data.ImportOptions{TestRows: 10000, HashBuckets: data.DefaultHashBuckets},
		Synth:  data.SynthOptions{Kind: data.SynthLogistic, TestRows: config.Defaults().Data.Synth.TestRows, Features: 28, Seed: 1}}
}

// MakeDataset writes the dataset o describes (a directory published whole,
// its identity recorded in meta.json) and returns its meta. It reports an
// import's progress (unless o.Import.Progress is set) and what it wrote
// through ev (nil: nothing).
func MakeDataset(ctx context.Context, o DatasetOptions, ev Events) (*data.Meta, error) {
	clock := clockOf(ev)
	ev = &syncEvents{ev: orDiscard(ev)}
	start := clock.Now()
	if o.Import.Progress == nil {
		m := startMeter(ev, clock, Progress{Stage: "import", What: o.Source + ": opening " + o.Import.In})
		defer m.Stop()
		o.Import.Progress = func(p data.ImportProgress) {
			q := Progress{Stage: "import", What: importStatus(o.Source, p, clock.Now().Sub(start))}
			if p.InputSize > 0 { // the bar's fraction; the text says the rest
				q.Done, q.Total = p.InputPos, p.InputSize
			}
			m.Set(q)
		}
	}
	var m *data.Meta
	var err error
	switch o.Source {
	case "higgs":
		m, err = data.ImportHiggs(ctx, o.Import)
	case "libsvm":
		if b := o.Import.HashBuckets; b == 0 || b > data.MaxHashBuckets {
			return nil, &config.FieldError{Key: "hash_buckets", Msg: fmt.Sprintf("must be in [1, %d] (2^26, above KDD Cup 2012's 54,686,452 raw dimensions; the paper: %d), got %d",
				data.MaxHashBuckets, data.DefaultHashBuckets, b)}
		}
		m, err = data.ImportLibSVM(ctx, o.Import)
	case "csv":
		m, err = data.ImportCSV(ctx, o.Import)
	case "synth":
		if m, err = data.Synth(ctx, o.Synth); err == nil {
			ev.Info("data", fmt.Sprintf("wrote %s (%s, train %d rows, test %d rows, %d features%s)",
				o.Synth.Out, m.Kind, m.TrainRows, m.TestRows, len(m.Features), bayesNote(m)))
		}
		return m, err
	default:
		return nil, fmt.Errorf("pipeline: dataset source %q is not higgs, libsvm, csv or synth", o.Source)
	}
	if err != nil {
		return nil, err
	}
	ev.Info("data", fmt.Sprintf("wrote %s (train %d rows, test %d rows, dropped %d) in %s",
		o.Import.Out, m.TrainRows, m.TestRows, m.DroppedRows, time.Since(start).Round(time.Millisecond)))
	if m.NonBinaryValues > 0 {
		ev.Warn("data", fmt.Sprintf("%d feature values were neither 0 nor 1 and were kept as presence", m.NonBinaryValues))
	}
	if m.DuplicateIndices > 0 {
		ev.Warn("data", fmt.Sprintf("%d repeated feature indices within a row were dropped", m.DuplicateIndices))
	}
	if m.ClippedValues > 0 || m.RoundedValues > 0 {
		ev.Info("data", fmt.Sprintf("conversion values: %d clipped to B = %g and %d rounded to the grid's step %g (meta.json clipped_values, rounded_values)",
			m.ClippedValues, m.ValueMax, m.RoundedValues, m.ValueStep))
	}
	return m, nil
}

// importStatus formats an import's progress: its kind, rows, MB read and
// MB/s, and, when the input's size is known, the percentage and an ETA
// from the position in the (possibly compressed) input.
func importStatus(kind string, p data.ImportProgress, elapsed time.Duration) string {
	mb := float64(p.Bytes) / 1e6
	s := fmt.Sprintf("%s: %d rows, %.0f MB (%.0f MB/s)", kind, p.Rows, mb, mb/max(elapsed.Seconds(), 1e-9))
	if p.InputSize > 0 && p.InputPos > 0 {
		frac := float64(p.InputPos) / float64(p.InputSize)
		eta := time.Duration(float64(elapsed) * (1 - frac) / frac)
		s = fmt.Sprintf("%s: %.1f%% ETA %s, %d rows, %.0f MB (%.0f MB/s)", kind, 100*frac, roundDur(eta), p.Rows, mb, mb/max(elapsed.Seconds(), 1e-9))
	}
	if p.Dropped > 0 {
		s += fmt.Sprintf(", %d dropped", p.Dropped)
	}
	return s
}
