package pipeline

import (
	"context"
	"fmt"

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

// ImportProgress is an import's progress report (rows, bytes, position in
// the input).
type ImportProgress = data.ImportProgress

// NewDatasetOptions are the defaults of source: the paper's 10,000 test rows
// and 500,000 hash buckets; a logistic synthetic dataset of 28 features,
// seed 1.
func NewDatasetOptions(source string) DatasetOptions {
	return DatasetOptions{Source: source,
		Import: data.ImportOptions{TestRows: 10000, HashBuckets: data.DefaultHashBuckets},
		Synth:  data.SynthOptions{Kind: data.SynthLogistic, TestRows: 10000, Features: 28, Seed: 1}}
}

// MakeDataset writes the dataset o describes (a directory published whole,
// its identity recorded in meta.json) and returns its meta.
func MakeDataset(ctx context.Context, o DatasetOptions) (*data.Meta, error) {
	switch o.Source {
	case "higgs":
		return data.ImportHiggs(ctx, o.Import)
	case "libsvm":
		if b := o.Import.HashBuckets; b == 0 || b > data.MaxHashBuckets {
			return nil, &config.FieldError{Key: "hash_buckets", Msg: fmt.Sprintf("must be in [1, %d] (2^26, above KDD Cup 2012's 54,686,452 raw dimensions; the paper: %d), got %d",
				data.MaxHashBuckets, data.DefaultHashBuckets, b)}
		}
		return data.ImportLibSVM(ctx, o.Import)
	case "synth":
		return data.Synth(ctx, o.Synth)
	}
	return nil, fmt.Errorf("pipeline: dataset source %q is not higgs, libsvm or synth", o.Source)
}
