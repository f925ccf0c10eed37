package data

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Dataset file names inside a dataset directory.
const (
	TrainFile = "train.arrow"
	TestFile  = "test.arrow"
	MetaFile  = "meta.json"
)

// Meta is a dataset directory's meta.json. It is written last, so a
// directory without it is an incomplete dataset.
type Meta struct {
	Source    string   `json:"source"`          // higgs | libsvm | synth
	Kind      string   `json:"kind,omitempty"`  // synth kind: logistic | beta | uniform
	Input     string   `json:"input,omitempty"` // input file(s) of an import
	TrainRows int64    `json:"train_rows"`
	TestRows  int64    `json:"test_rows"`
	Features  []string `json:"features"` // dense feature names
	Dims      int      `json:"dims"`     // dense features, or hash buckets for sparse data

	HashBuckets     uint32 `json:"hash_buckets,omitempty"`
	Hash            string `json:"hash,omitempty"`                // the index hash (HashIndex)
	MaxIndices      int    `json:"max_indices_per_row,omitempty"` // widest sparse row
	NonBinaryValues int64  `json:"nonbinary_values,omitempty"`    // libsvm values ∉ {0,1}, kept as presence

	DroppedRows int64  `json:"dropped_rows"` // rows dropped by --drop-invalid
	Seed        uint64 `json:"seed"`

	// Synthetic logistic data: η(x) = σ(w·x + b), x ~ N(0, I).
	Weights []float64 `json:"weights,omitempty"`
	Bias    float64   `json:"bias,omitempty"`
	// BayesAUC is the expected test AUC of the Bayes scorer η over the label
	// draws (exact, from the test set's η values); BayesAUCEmpirical is the
	// AUC of η against the drawn test labels — the figure a perfect model
	// would get on this test set.
	BayesAUC          *float64 `json:"bayes_auc,omitempty"`
	BayesAUCEmpirical *float64 `json:"bayes_auc_empirical,omitempty"`
	PositiveRate      float64  `json:"positive_rate"` // train label mean

	Tool string `json:"tool"`
}

// Tool identifies files written by this version of the data layer.
const Tool = "labelprivacy/data v0.1"

// WriteMeta writes dir/meta.json atomically.
func WriteMeta(dir string, m *Meta) error {
	m.Tool = Tool
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("data: meta: %w", err)
	}
	return WriteFileAtomic(filepath.Join(dir, MetaFile), append(b, '\n'))
}

// ReadMeta reads dir/meta.json.
func ReadMeta(dir string) (*Meta, error) {
	b, err := os.ReadFile(filepath.Join(dir, MetaFile))
	if err != nil {
		return nil, fmt.Errorf("data: %s is not a complete dataset directory (no %s): %w", dir, MetaFile, err)
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("data: %s: %w", filepath.Join(dir, MetaFile), err)
	}
	return &m, nil
}

// Dataset is a loaded dataset directory.
type Dataset struct {
	Dir         string
	Meta        *Meta
	Train, Test *Frame
}

// Load reads a dataset directory (train.arrow or train.parquet, the same for
// test, and meta.json).
func Load(dir string) (*Dataset, error) {
	m, err := ReadMeta(dir)
	if err != nil {
		return nil, err
	}
	ds := &Dataset{Dir: dir, Meta: m}
	for _, s := range []struct {
		name string
		dst  **Frame
	}{{"train", &ds.Train}, {"test", &ds.Test}} {
		path := filepath.Join(dir, s.name+".arrow")
		if _, err := os.Stat(path); err != nil {
			if alt := filepath.Join(dir, s.name+".parquet"); fileExists(alt) {
				path = alt
			}
		}
		if *s.dst, err = ReadFrame(path); err != nil {
			return nil, err
		}
	}
	return ds, nil
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
