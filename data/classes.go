package data

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Labels with C classes. A label is a uint8 class 0..C−1 with
// 2 ≤ C ≤ MaxClasses; C = 2 is the binary case, whose files and frames are
// exactly those of binary labels (no `classes` anywhere, the scalar columns
// eta, alpha, alpha_debiased, prior, branch, soft_target). With C ≥ 3 a
// frame holds per-class vectors instead, one float64 column per class:
//
//	eta_0 … eta_{C−1}                        η_c(x) = P(y=c|x), synthetic data only (raw)
//	prior_0 … prior_{C−1}                    rr_prior: the public prior over the classes
//	alpha_1 … alpha_{C−1}                    LLP family: the bag's released proportions of
//	                                         classes 1..C−1 (class 0's is 1 − Σ, implied)
//	alpha_debiased_1 … alpha_debiased_{C−1}  llp_geom: their debiased values
//	soft_target_0 … soft_target_{C−1}        in memory: a per-row soft target vector
//
// held row-major in the Frame (Frame.EtaC[i·C+c] is η_c of row i; AlphaC
// and AlphaDebiasedC have C−1 entries a row, class c at c−1), the
// scalar uint8 label and label_rr holding the class, and rr_prior's chosen
// set as prior_set (uint64 bit mask, bit c set ⇔ class c in the set) and
// prior_set_size (uint8, its size k). The Arrow schema metadata of such a
// file records "classes" (decimal C), and a dataset's meta.json records
// classes; absent, both mean 2.

// MaxClasses is the largest number of classes (labels are uint8, a set of
// classes is one uint64 mask); it equals pets.MaxClasses.
const MaxClasses = 64

// MetaClasses is the Arrow schema metadata key (and meta.json key) of the
// number of classes.
const MetaClasses = "classes"

// ProbTolerance is how far from 1 the sum of a row's class probabilities
// (eta_c, prior_c) may be: float32 softmax outputs sum to 1 within ~1e-6
// (pets.PriorTolerance and audit.EtaTolerance are the same).
const ProbTolerance = 1e-4

// Column name prefixes of the per-class columns (a prefix and the class
// number in decimal, no leading zeros: eta_0, alpha_1).
const (
	ColEtaPrefix           = "eta_"
	ColPriorPrefix         = "prior_"
	ColAlphaPrefix         = "alpha_"
	ColAlphaDebiasedPrefix = "alpha_debiased_"
	ColSoftTargetPrefix    = "soft_target_"
)

// ColPriorSet and ColPriorSetSize are rr_prior's chosen set for C ≥ 3 (at
// C = 2 the branch column says the same: branch 1 ⇔ a set of size 1).
const (
	ColPriorSet     = "prior_set"      // uint64: bit c set ⇔ class c is in the set
	ColPriorSetSize = "prior_set_size" // uint8: the set's size k, 1..C
)

// ClassColumn returns the name of class c's column of a per-class family,
// e.g. ClassColumn(ColEtaPrefix, 3) = "eta_3".
func ClassColumn(prefix string, c int) string { return prefix + strconv.Itoa(c) }

// NumClasses returns C: Classes, or 2 when it is 0.
func (f *Frame) NumClasses() int {
	if f.Classes == 0 {
		return 2
	}
	return f.Classes
}

// NumClasses returns the dataset's C: Classes, or 2 when it is absent.
func (m *Meta) NumClasses() int {
	if m.Classes == 0 {
		return 2
	}
	return m.Classes
}

// CheckClasses returns an error wrapping ErrInvalid, naming the key
// `classes`, unless c is a class count: 2 ≤ c ≤ MaxClasses (0 is accepted
// and means 2).
func CheckClasses(c int) error {
	if c != 0 && (c < 2 || c > MaxClasses) {
		return fmt.Errorf("%w: %s must be in [2, %d], got %d", ErrInvalid, MetaClasses, MaxClasses, c)
	}
	return nil
}

// classVec is a family of per-class float64 columns held row-major in one
// Frame field: the columns prefix+first … prefix+(C−1).
type classVec struct {
	prefix string
	first  int // 0: one column per class; 1: classes 1..C−1 (class 0 implied)
	field  func(*Frame) *[]float64
	raw    bool // a raw-label column (never in a privatized frame)
}

var classVecs = []classVec{
	{ColEtaPrefix, 0, func(f *Frame) *[]float64 { return &f.EtaC }, true},
	{ColAlphaPrefix, 1, func(f *Frame) *[]float64 { return &f.AlphaC }, false},
	{ColAlphaDebiasedPrefix, 1, func(f *Frame) *[]float64 { return &f.AlphaDebiasedC }, false},
	{ColPriorPrefix, 0, func(f *Frame) *[]float64 { return &f.PriorC }, false},
	{ColSoftTargetPrefix, 0, func(f *Frame) *[]float64 { return &f.SoftTargetC }, false},
}

// width is the number of columns (values a row) at c classes.
func (v classVec) width(c int) int { return c - v.first }

func (v classVec) present(f *Frame) bool { return *v.field(f) != nil }

// name is the column of the family's j-th value (class first+j).
func (v classVec) name(j int) string { return ClassColumn(v.prefix, v.first+j) }

// classColumnOf parses a column name as a per-class column: its family (an
// index into classVecs) and class, ok false when the name is of no family.
// A name with a family's prefix followed by digits that are not a canonical
// class number (eta_01, eta_64, alpha_0) is a family's name all the same
// and gives an error.
func classColumnOf(name string) (fam, class int, ok bool, err error) {
	fam = -1
	for i, v := range classVecs {
		// At most one family matches: after a prefix comes only digits.
		if strings.HasPrefix(name, v.prefix) && isDigits(name[len(v.prefix):]) {
			fam = i
		}
	}
	if fam < 0 {
		return -1, 0, false, nil
	}
	v := classVecs[fam]
	s := name[len(v.prefix):]
	c, perr := strconv.Atoi(s)
	if perr != nil || strconv.Itoa(c) != s || c < v.first || c >= MaxClasses {
		return fam, 0, true, fmt.Errorf("%w: column %q: %q is not a class number in %d..%d", ErrSchema, name, s, v.first, MaxClasses-1)
	}
	return fam, c, true, nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// reservedName reports whether name is a column the frame gives meaning to
// (so no feature or key may be called so).
func reservedName(name string) bool {
	if columnNamed(name) != nil || name == ColIndices {
		return true
	}
	_, _, ok, _ := classColumnOf(name)
	return ok
}

// binaryOnly are the scalar columns a frame of C ≥ 3 classes cannot hold
// (they mean P(y=1) or a 0/1 branch).
func binaryOnly(f *Frame) []string {
	var cols []string
	for _, c := range []struct {
		name    string
		present bool
	}{{ColEta, f.Eta != nil}, {ColAlpha, f.Alpha != nil}, {ColAlphaDebiased, f.AlphaDebiased != nil},
		{ColPrior, f.Prior != nil}, {ColBranch, f.Branch != nil}, {ColSoftTarget, f.SoftTarget != nil}} {
		if c.present {
			cols = append(cols, c.name)
		}
	}
	return cols
}

// validateClasses checks what depends on the number of classes: Classes
// itself, labels below C, which columns may be present, the per-class
// vectors' lengths and values, and rr_prior's sets.
func (f *Frame) validateClasses() error {
	if f.Classes != 0 && (f.Classes < 2 || f.Classes > MaxClasses) {
		return fmt.Errorf("%w: %s is %d, want 0 (binary) or 2..%d", ErrSchema, MetaClasses, f.Classes, MaxClasses)
	}
	c := f.NumClasses()
	for _, col := range []struct {
		name string
		v    []uint8
	}{{ColLabel, f.Label}, {ColLabelRR, f.LabelRR}} {
		for i, y := range col.v {
			if int(y) >= c && !(col.name == ColLabelRR && f.ARAState != nil && int(y) == c) {
				return labelError(col.name, i, int64(y), c)
			}
		}
	}
	if f.ARAState != nil && f.LabelRR != nil {
		for i, s := range f.ARAState {
			if want := uint8(min(s, uint64(c))); f.LabelRR[i] != want {
				return fmt.Errorf("%w: row %d released state %d, whose class is %d, but %s %d", ErrInvalid, i, s, want, ColLabelRR, f.LabelRR[i])
			}
		}
	}
	for i, y := range f.Branch {
		if y > 1 {
			return fmt.Errorf("%w: column %q row %d has value %d, want 0 or 1", ErrLabel, ColBranch, i, y)
		}
	}
	if c == 2 {
		for _, v := range classVecs {
			if v.present(f) {
				return fmt.Errorf("%w: per-class columns %s… need %s ≥ 3 (binary frames use the scalar columns)", ErrSchema, v.prefix, MetaClasses)
			}
		}
		if f.PriorSet != nil || f.PriorSetSize != nil {
			return fmt.Errorf("%w: %s and %s need %s ≥ 3 (binary rr_prior uses %s)", ErrSchema, ColPriorSet, ColPriorSetSize, MetaClasses, ColBranch)
		}
		return nil
	}
	if cols := binaryOnly(f); len(cols) > 0 {
		return fmt.Errorf("%w: columns %q are binary-only; a frame of %s %d holds per-class columns instead", ErrSchema, cols, MetaClasses, c)
	}
	for _, v := range classVecs {
		vals := *v.field(f)
		if vals == nil {
			continue
		}
		w := v.width(c)
		if len(vals) != f.Rows*w {
			return fmt.Errorf("%w: columns %s… have %d values, want %d rows × %d", ErrSchema, v.prefix, len(vals), f.Rows, w)
		}
		prob := v.prefix == ColEtaPrefix || v.prefix == ColPriorPrefix
		for i := range f.Rows {
			row := vals[i*w : (i+1)*w]
			sum := 0.0
			for j, x := range row {
				if prob && !(x >= 0 && x <= 1) || !finite(x) {
					return fmt.Errorf("%w: row %d has %s=%v", ErrInvalid, i, v.name(j), x)
				}
				sum += x
			}
			if prob && math.Abs(sum-1) > ProbTolerance {
				return fmt.Errorf("%w: row %d: %s0…%s%d sum to %v, not 1", ErrInvalid, i, v.prefix, v.prefix, c-1, sum)
			}
		}
	}
	if (f.PriorSet == nil) != (f.PriorSetSize == nil) {
		return fmt.Errorf("%w: %s and %s come together", ErrSchema, ColPriorSet, ColPriorSetSize)
	}
	for i, m := range f.PriorSet {
		k := int(f.PriorSetSize[i])
		switch {
		case m == 0 || c < 64 && m>>c != 0:
			return fmt.Errorf("%w: row %d has %s %#x, not a non-empty set of classes 0..%d", ErrInvalid, i, ColPriorSet, m, c-1)
		case bits.OnesCount64(m) != k:
			return fmt.Errorf("%w: row %d has %s %#x of %d classes but %s %d", ErrInvalid, i, ColPriorSet, m, bits.OnesCount64(m), ColPriorSetSize, k)
		case f.LabelRR != nil && m>>f.LabelRR[i]&1 == 0:
			return fmt.Errorf("%w: row %d released class %d outside its %s %#x", ErrInvalid, i, f.LabelRR[i], ColPriorSet, m)
		}
	}
	return nil
}

// labelError is the ErrLabel error of a label column's value not below c
// classes (naming the key `classes`).
func labelError(col string, row int, v int64, c int) error {
	return fmt.Errorf("%w: column %q row %d has value %d, not a class below %s = %d", ErrLabel, col, row, v, MetaClasses, c)
}

// classFields are the schema fields of the frame's per-class columns (in
// classVecs order, classes increasing).
func classFields(f *Frame) []arrow.Field {
	var fields []arrow.Field
	c := f.NumClasses()
	for _, v := range classVecs {
		if v.present(f) {
			for j := range v.width(c) {
				fields = append(fields, arrow.Field{Name: v.name(j), Type: arrow.PrimitiveTypes.Float64})
			}
		}
	}
	return fields
}

// classArrays are those columns' arrays, transposed from the row-major
// fields into fresh column slices.
func classArrays(f *Frame) []arrow.Array {
	var cols []arrow.Array
	c := f.NumClasses()
	for _, v := range classVecs {
		vals := *v.field(f)
		if vals == nil {
			continue
		}
		w := v.width(c)
		for j := range w {
			col := make([]float64, f.Rows)
			for i := range col {
				col[i] = vals[i*w+j]
			}
			cols = append(cols, primArray(arrow.PrimitiveTypes.Float64, col))
		}
	}
	return cols
}

// classRef is a file column's place in a per-class field: family fam
// (index into classVecs), value j of each row.
type classRef struct{ fam, j int }

// resolveClasses decides the number of classes of a file from its schema
// metadata ("classes"), its per-class columns (each family must be whole:
// every class once) and want (meta.json's classes when the file is part of
// a dataset, 0 otherwise), which must agree; absent all three, 2. It sets
// fr.Classes and the per-class fields of the families present, and returns
// each file column's classRef (fam −1: not a per-class column).
func (fr *frameReader) resolveClasses(md arrow.Metadata, want int) error {
	c, src := 0, ""
	agree := func(n int, from string) error {
		if c != 0 && n != c {
			sentinel := ErrSchema // the file disagrees with itself
			if from == "meta.json" {
				sentinel = ErrMismatch
			}
			return fmt.Errorf("%w: %s: %s %d, but %s: %d", sentinel, src, MetaClasses, c, from, n)
		}
		c, src = n, from
		return nil
	}
	if i := md.FindKey(MetaClasses); i >= 0 {
		s := md.Values()[i]
		n, err := strconv.Atoi(s)
		if err != nil || strconv.Itoa(n) != s || n < 2 || n > MaxClasses {
			return fmt.Errorf("%w: schema metadata %q is %q, want a class count in 2..%d", ErrSchema, MetaClasses, s, MaxClasses)
		}
		c, src = n, "the schema metadata"
	}
	seen := make([]map[int]bool, len(classVecs))
	for _, ref := range fr.classOf {
		if ref.fam >= 0 {
			if seen[ref.fam] == nil {
				seen[ref.fam] = map[int]bool{}
			}
			seen[ref.fam][ref.j+classVecs[ref.fam].first] = true
		}
	}
	for fam, classes := range seen {
		if classes == nil {
			continue
		}
		v := classVecs[fam]
		n := len(classes) + v.first
		for cl := v.first; cl < n; cl++ {
			if !classes[cl] {
				return fmt.Errorf("%w: columns %s… lack %s (a family of per-class columns holds every class)", ErrSchema, v.prefix, ClassColumn(v.prefix, cl))
			}
		}
		if err := agree(n, fmt.Sprintf("the %s… columns", v.prefix)); err != nil {
			return err
		}
	}
	if want != 0 {
		if err := agree(want, "meta.json"); err != nil {
			return err
		}
	}
	if c == 0 {
		c = 2
	}
	for fam, classes := range seen {
		if classes != nil && c < 3 {
			return fmt.Errorf("%w: per-class columns %s… need %s ≥ 3 (binary files use the scalar columns)", ErrSchema, classVecs[fam].prefix, MetaClasses)
		}
		if classes != nil {
			*classVecs[fam].field(fr.Frame) = []float64{}
		}
	}
	if c >= 3 {
		fr.Classes = c
	}
	return nil
}

// appendClassColumn writes a file column of per-class values (float32 or
// float64) into rows base… of its field, already grown to hold them.
func (fr *frameReader) appendClassColumn(ref classRef, col arrow.Array, base int, name string) error {
	v := classVecs[ref.fam]
	w := v.width(fr.NumClasses())
	dst := (*v.field(fr.Frame))[base*w:]
	switch a := col.(type) {
	case *array.Float64:
		for i, x := range a.Float64Values() {
			dst[i*w+ref.j] = x
		}
	case *array.Float32:
		for i, x := range a.Float32Values() {
			dst[i*w+ref.j] = float64(x)
		}
	default:
		return fmt.Errorf("%w: column %q has type %s, want float64", ErrSchema, name, col.DataType())
	}
	return nil
}
