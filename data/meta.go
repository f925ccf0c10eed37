package data

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"

	"labelprivacy/internal/atomicfile"
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
	Kind      string   `json:"kind,omitempty"`  // synth kind: logistic | beta | uniform | multiclass
	Input     string   `json:"input,omitempty"` // input file(s) of an import
	TrainRows int64    `json:"train_rows"`
	TestRows  int64    `json:"test_rows"`
	Features  []string `json:"features"` // dense feature names
	Dims      int      `json:"dims"`     // dense features, or hash buckets for sparse data
	// Classes is the number of label classes C, 2..MaxClasses; absent (0)
	// means 2. Binary imports leave it out (their meta.json is what it was
	// before labels could have more classes); kind multiclass records it.
	Classes int `json:"classes,omitempty"`
	// Labels is the kind of the labels (LabelKind): absent for binary
	// labels and for classes (Classes ≥ 3), as every meta.json written so
	// far; "values" (conversion values) is reserved, and every stage
	// refuses it.
	Labels LabelKind `json:"labels,omitempty"`
	// Conversion values (labels "values"): the grid's B and step, and what
	// an import clipped to B (values above it) and rounded to the grid.
	ValueMax      float64 `json:"value_max,omitempty"`
	ValueStep     float64 `json:"value_step,omitempty"`
	ClippedValues int64   `json:"clipped_values,omitempty"`
	RoundedValues int64   `json:"rounded_values,omitempty"`
	// ValueZeroRate and ValueMean are the training values' share of zeros
	// and mean (values only).
	ValueZeroRate *float64 `json:"value_zero_rate,omitempty"`
	ValueMean     *float64 `json:"value_mean,omitempty"`

	HashBuckets     uint32 `json:"hash_buckets,omitempty"`
	Hash            string `json:"hash,omitempty"`                // the index hash (HashIndex)
	MaxIndices      int    `json:"max_indices_per_row,omitempty"` // widest sparse row
	NonBinaryValues int64  `json:"nonbinary_values,omitempty"`    // libsvm values ∉ {0,1}, kept as presence
	// DuplicateIndices counts libsvm entries dropped because their raw index
	// already appeared (non-zero) earlier on the same line; absent means 0.
	DuplicateIndices int64 `json:"duplicate_indices,omitempty"`
	// BucketCollisions counts kept entries whose bucket equals that of an
	// earlier, different raw index of the same row: the model then sees the
	// bucket twice (an embedding sum adds it twice). Absent means 0.
	BucketCollisions int64 `json:"bucket_collisions,omitempty"`

	DroppedRows int64  `json:"dropped_rows"` // rows dropped by --drop-invalid
	Seed        uint64 `json:"seed"`
	// Groups is a synthetic dataset's number of `group` key bins (0: no
	// key column; SynthOptions.Groups).
	Groups int `json:"groups,omitempty"`

	// Content identity: SHA-256 (hex) of train.arrow and
	// test.arrow as written, and ContentSHA256 = SHA-256 of the ASCII text
	// TrainSHA256 followed by TestSHA256. It depends on the files' bytes
	// only, not on where they lie. It digests labelled data, so it must stay
	// in meta.json, with the raw data: never copy it into a privatized
	// release, where it would let an attacker confirm label guesses.
	TrainSHA256   string `json:"train_sha256,omitempty"`
	TestSHA256    string `json:"test_sha256,omitempty"`
	ContentSHA256 string `json:"content_sha256,omitempty"`

	// Synthetic logistic data: η(x) = σ(w·x + b), x ~ N(0, I).
	Weights []float64 `json:"weights,omitempty"`
	Bias    float64   `json:"bias,omitempty"`
	// BayesAUC is the expected test AUC of the Bayes scorer η over the label
	// draws (exact, from the test set's η values); BayesAUCEmpirical is the
	// AUC of η against the drawn test labels — the figure a perfect model
	// would get on this test set.
	BayesAUC          *float64 `json:"bayes_auc,omitempty"`
	BayesAUCEmpirical *float64 `json:"bayes_auc_empirical,omitempty"`
	// PositiveRate is the fraction of training labels that are 1 (the
	// label mean), for binary labels only; nil (absent from meta.json) for
	// C ≥ 3 classes, whose rates are ClassRates. A meta.json written before
	// it was left out for C ≥ 3 may still carry it (there: the fraction
	// not of class 0).
	PositiveRate *float64 `json:"positive_rate,omitempty"`

	// Multiclass synthetic data (kind multiclass): η(x) = softmax(W·x),
	// x ~ N(0, I_D), row c of W (ClassWeights[c]) of norm LogitNorm.
	ClassWeights [][]float64 `json:"class_weights,omitempty"`
	LogitNorm    float64     `json:"logit_norm,omitempty"`
	// BayesAccuracy is the expected test accuracy of the Bayes classifier
	// argmax_c η_c(x) over the label draws, mean_i max_c η_c(x_i) over the
	// test rows; BayesAccuracyEmpirical is its accuracy on the drawn test
	// labels. Kind multiclass only.
	BayesAccuracy          *float64 `json:"bayes_accuracy,omitempty"`
	BayesAccuracyEmpirical *float64 `json:"bayes_accuracy_empirical,omitempty"`
	// ClassRates is the fraction of training labels in each class 0..C−1
	// (recorded for C ≥ 3 and for kinds multiclass and conversions).
	ClassRates []float64 `json:"class_rates,omitempty"`

	// Kind conversions: the trigger-data values T and reporting windows W
	// of its C = 1 + T·W classes (class 0 no report, class 1 + t·W + w one
	// report of trigger data t in window w), the conversion rate asked for
	// and the no-report logit added to class 0's that gives it (the rate
	// drawn is 1 − ClassRates[0]).
	TriggerData    int     `json:"trigger_data,omitempty"`
	Windows        int     `json:"windows,omitempty"`
	ConversionRate float64 `json:"conversion_rate,omitempty"`
	NoReportLogit  float64 `json:"no_report_logit,omitempty"`

	// Kind values (synth_values.go): P(y = 0 | x) = σ(ZeroWeights·x +
	// ZeroBias), y | y > 0 = exp(N(MuWeights·x + MuBias, Sigma²)) clipped
	// and rounded; the zero rate asked for; ValuePrior, the population
	// marginal of y over the grid (the mean of p(y | x) over 20,000 draws
	// of x of their own, no label read: a public prior); BayesMSE the
	// expected test MSE of the Bayes predictor E[y | x] (the mean of
	// Var(y | x_i) over the test rows) and BayesMSEEmpirical its MSE on the
	// drawn test values.
	ZeroWeights       []float64 `json:"zero_weights,omitempty"`
	ZeroBias          float64   `json:"zero_bias,omitempty"`
	MuWeights         []float64 `json:"mu_weights,omitempty"`
	MuBias            float64   `json:"mu_bias,omitempty"`
	Sigma             float64   `json:"sigma,omitempty"`
	ZeroRate          float64   `json:"zero_rate,omitempty"`
	ValuePrior        []float64 `json:"value_prior,omitempty"`
	BayesMSE          *float64  `json:"bayes_mse,omitempty"`
	BayesMSEEmpirical *float64  `json:"bayes_mse_empirical,omitempty"`

	Tool string `json:"tool"`
}

// positiveRate is Meta.PositiveRate of ones labels 1 among n.
func positiveRate(ones, n int64) *float64 {
	r := float64(ones) / float64(n)
	return &r
}

// Tool identifies files written by this version of the data layer.
// v0.2: libsvm duplicates removed, content checksums in meta.json.
const Tool = "labelprivacy/data v0.2"

// Identity names the dataset by its content: "sha256:" and the first 16 hex
// digits of ContentSHA256 (64 bits: no accidental collision among any
// plausible number of datasets). It is "" for a meta.json written before
// checksums were recorded; DatasetIdentity computes it for those.
func (m *Meta) Identity() string {
	if len(m.ContentSHA256) != 2*sha256.Size {
		return ""
	}
	return "sha256:" + m.ContentSHA256[:16]
}

// setContent records the digests of the train and test files.
func (m *Meta) setContent(train, test string) {
	m.TrainSHA256, m.TestSHA256, m.ContentSHA256 = train, test, contentDigest(train, test)
}

// contentDigest is ContentSHA256 of two hex file digests.
func contentDigest(train, test string) string {
	h := sha256.Sum256([]byte(train + test))
	return hex.EncodeToString(h[:])
}

// DatasetIdentity returns the identity (Meta.Identity) of the dataset in
// dir, taken from the bytes: its train and test files are streamed through
// SHA-256 (or their digests taken from the directory's identity cache when
// a file's size, mtime, ctime and inode are unchanged) and checked against
// meta.json, so a changed or swapped file is an *IdentityError naming it
// and both digests, never a finished sweep's identity. A dataset written
// before digests were recorded gets the identity of its bytes. Moving or
// copying a dataset directory does not change its identity. No rows are
// kept in memory.
func DatasetIdentity(dir string) (string, error) {
	m, err := ReadMeta(dir)
	if err != nil {
		return "", err
	}
	return verifiedIdentity(dir, m)
}

// FileSHA256 returns the hex SHA-256 of the file at path (streamed).
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("data: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", inFile(path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// WriteMeta writes dir/meta.json atomically.
func WriteMeta(dir string, m *Meta) error {
	m.Tool = Tool
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("data: meta: %w", err)
	}
	return atomicfile.WriteFile(filepath.Join(dir, MetaFile), append(b, '\n'))
}

// ReadMeta reads dir/meta.json.
func ReadMeta(dir string) (*Meta, error) {
	b, err := os.ReadFile(filepath.Join(dir, MetaFile))
	if err != nil {
		return nil, fmt.Errorf("data: %s is not a complete dataset directory (no %s): %w", dir, MetaFile, err)
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, inFile(filepath.Join(dir, MetaFile), err)
	}
	if err := CheckClasses(m.Classes); err != nil {
		return nil, inFile(filepath.Join(dir, MetaFile), err)
	}
	if err := m.checkLabelKind(); err != nil {
		return nil, inFile(filepath.Join(dir, MetaFile), err)
	}
	return &m, nil
}

// Dataset is a loaded dataset directory.
type Dataset struct {
	Dir  string
	Meta *Meta
	// ID is the dataset's identity, verified from its files' bytes
	// (DatasetIdentity).
	ID          string
	Train, Test *Frame
	// TrainSchema has the training file's columns and no rows (as
	// ReadSchema): its dense feature names, sparse and key columns, whether
	// or not LoadWith read them into Train.
	TrainSchema *Frame
}

// Load reads a dataset directory (train.arrow or train.parquet, the same for
// test, and meta.json) and checks that its files agree: test has train's
// columns (names, types, order: so the same dense width and sparse presence),
// meta.json's features are train's, row counts are meta.json's, and every
// sparse index is below meta.json's hash_buckets. A disagreement is an error
// wrapping ErrMismatch that names both files and the first column or count
// that differs. The files' bytes are checked against meta.json's digests
// (DatasetIdentity): a changed or swapped file is an *IdentityError.
func Load(dir string) (*Dataset, error) {
	ds, _, err := LoadWithIDs(dir, "")
	return ds, err
}

// dataFile returns dir's file for split ("train", "test"): the .arrow file,
// or the .parquet one when only that exists.
func dataFile(dir, split string) string {
	p := filepath.Join(dir, split+".arrow")
	if alt := filepath.Join(dir, split+".parquet"); !fileExists(p) && fileExists(alt) {
		return alt
	}
	return p
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// checkSplits checks a dataset's train and test files against each other and
// against its meta.json (see Load).
func checkSplits(metaPath string, m *Meta, paths [2]string, s [2]*frameReader) error {
	train, test := s[0], s[1]
	mismatch := func(a, b, format string, args ...any) error {
		return fmt.Errorf("%w: %s and %s: %s", ErrMismatch, a, b, fmt.Sprintf(format, args...))
	}
	trainFields, testFields := train.allFields(), test.allFields()
	for i := range max(len(trainFields), len(testFields)) {
		switch {
		case i >= len(testFields):
			return mismatch(paths[0], paths[1], "column %d (%q) is missing from the test file", i+1, trainFields[i].Name)
		case i >= len(trainFields):
			return mismatch(paths[0], paths[1], "column %d (%q) of the test file is not in the train file", i+1, testFields[i].Name)
		}
		a, b := trainFields[i], testFields[i]
		if a.Name != b.Name || !arrow.TypeEqual(a.Type, b.Type) {
			return mismatch(paths[0], paths[1], "column %d is %q %s in the train file, %q %s in the test file", i+1, a.Name, a.Type, b.Name, b.Type)
		}
	}
	trainFeatures := featureNames(trainFields)
	if m.Features != nil && !slices.Equal(m.Features, trainFeatures) {
		for j := range max(len(m.Features), len(trainFeatures)) {
			if j >= len(m.Features) || j >= len(trainFeatures) || m.Features[j] != trainFeatures[j] {
				return mismatch(metaPath, paths[0], "dense feature %d is %s in meta.json, %s in the train file",
					j+1, quoteAt(m.Features, j), quoteAt(trainFeatures, j))
			}
		}
	}
	if m.HashBuckets == 0 && m.Dims != len(trainFeatures) {
		return mismatch(metaPath, paths[0], "meta.json says %d dense features, the train file has %d", m.Dims, len(trainFeatures))
	}
	for i, c := range []struct {
		rows int
		want int64
		key  string
	}{{train.Rows, m.TrainRows, "train_rows"}, {test.Rows, m.TestRows, "test_rows"}} {
		if int64(c.rows) != c.want {
			return mismatch(metaPath, paths[i], "meta.json says %s %d, the file has %d rows", c.key, c.want, c.rows)
		}
	}
	if m.HashBuckets > 0 {
		for i, f := range s {
			if !slices.ContainsFunc(f.allFields(), func(a arrow.Field) bool { return a.Name == ColIndices }) {
				return mismatch(metaPath, paths[i], "meta.json says hash_buckets %d but the file has no %q column", m.HashBuckets, ColIndices)
			}
			if !f.HasSparse() {
				continue // left unread (LoadOptions.NoTrainFeatures)
			}
			for r := range f.Rows {
				for _, v := range f.Indices[f.Offsets[r]:f.Offsets[r+1]] {
					if v >= m.HashBuckets {
						return mismatch(metaPath, paths[i], "row %d has index %d, not below meta.json's hash_buckets %d", r, v, m.HashBuckets)
					}
				}
			}
		}
	}
	return nil
}

// quoteAt returns names[j] quoted, or "none" past the end.
func quoteAt(names []string, j int) string {
	if j < len(names) {
		return strconv.Quote(names[j])
	}
	return "none"
}
