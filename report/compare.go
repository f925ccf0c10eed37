package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"labelprivacy/data"
	"labelprivacy/pets"

	"labelprivacy/report/internal/display"
)

// Side says which summaries of a comparison hold a setting.
type Side uint8

const (
	InBoth  Side = iota // both summaries
	OnlyInA             // only the first (a)
	OnlyInB             // only the second (b)
)

// String returns "" (InBoth), "a" or "b": the only_in column's values.
func (s Side) String() string {
	switch s {
	case InBoth:
		return ""
	case OnlyInA:
		return "a"
	case OnlyInB:
		return "b"
	}
	return fmt.Sprintf("Side(%d)", uint8(s))
}

func parseSide(s string) (Side, error) {
	for _, v := range []Side{InBoth, OnlyInA, OnlyInB} {
		if v.String() == s {
			return v, nil
		}
	}
	return 0, fmt.Errorf("report: only_in %q is not \"\", \"a\" or \"b\"", s)
}

// Comparison is one setting of Compare's result.
type Comparison struct {
	// Dataset and ConfigID name the setting's group when either summary
	// holds several datasets or configs (rows then match within a group);
	// both are "" when each summary holds one group (rows match by setting,
	// so two configs or code versions of one grid can be compared).
	Dataset, ConfigID string
	// DatasetA, ConfigIDA and DatasetB, ConfigIDB are the dataset and
	// config of the rows compared on each side ("" on the side without the
	// setting).
	DatasetA, ConfigIDA, DatasetB, ConfigIDB string
	Setting                                  string
	Pet                                      pets.Kind
	K                                        int
	Epsilon                                  float64
	AUCA, AUCB                               float64 // each side's AUCMean (NaN on the side without the setting)
	DAUC, DAUCSE                             float64 // AUCB − AUCA and √(SE_a² + SE_b²)
	EAdvA, EAdvB                             float64
	DEAdv, DEAdvSE                           float64 // EAdvB − EAdvA and √(SE_a² + SE_b²)
	// Classes is the class count C of both summaries (2: binary; they
	// never differ). AccuracyA, AccuracyB are each side's mean test
	// accuracy (Row.AccuracyMean), DAccuracy and DAccuracySE their
	// difference B − A and its SE, NaN as for AUC.
	Classes                int
	AccuracyA, AccuracyB   float64
	DAccuracy, DAccuracySE float64
	// SignificantMetric: |Δmetric| > 2·SE of the reporting rule's metric
	// (DMetric: AUC for binary labels, accuracy for C ≥ 3);
	// SignificantEAdv: |DEAdv| > 2·DEAdvSE. The two tests are apart: a
	// row may differ in one and not the other. A NaN difference or SE (no
	// audit, a single trial) is never significant; an SE of 0 (an exact
	// audit) makes any nonzero difference significant.
	SignificantMetric, SignificantEAdv bool
	OnlyIn                             Side
	// Tested: both sides have the setting and at least one of the two
	// differences has a standard error (an exact audit, or ≥ 2 trials a
	// side), so the flags say something; false for single trials without
	// an audit, where nothing could be tested. TestedMetric and
	// TestedEAdv say it per difference.
	Tested bool
	// ConfigNameA and ConfigNameB are the config names of the rows
	// compared; ConfigDiff the config keys whose values differ between
	// them, "key: a → b; …" ("" when they agree or are unknown): the keys
	// config_id fingerprints (Row.Config) and train.learning_rates, the
	// learning rates each side's best-LR rule chose among
	// (Row.LearningRates).
	ConfigNameA, ConfigNameB, ConfigDiff string
}

// Significant reports whether either difference is beyond 2 SE.
func (c Comparison) Significant() bool { return c.SignificantMetric || c.SignificantEAdv }

// TestedMetric reports whether the metric's difference (DMetric) has a
// standard error, so that SignificantMetric says something.
func (c Comparison) TestedMetric() bool { d, se := c.DMetric(); return testable(d, se) }

// TestedEAdv reports whether ΔE[adv] has a standard error (both sides
// audited), so that SignificantEAdv says something.
func (c Comparison) TestedEAdv() bool { return testable(c.DEAdv, c.DEAdvSE) }

func testable(d, se float64) bool { return !math.IsNaN(d) && !math.IsNaN(se) }

// CompareOptions configure Compare.
type CompareOptions struct {
	// AllowMixed compares summaries of different datasets or configs (e.g.
	// a config change made on purpose); without it that is ErrMixed.
	AllowMixed bool
}

// Compare compares two summaries, e.g. a baseline a and a new result set b,
// setting by setting (see Comparison). A setting present in one summary
// only gets a row with its own AUC and E[adv] and NaN elsewhere. Rows are
// ordered by group, then canonically (mechanism, k, ε). A nil summary or
// one that lists a setting twice in a group is an error, and so are
// summaries whose (dataset, config) groups differ, unless o.AllowMixed: a
// ΔAUC across datasets, or across configs nobody meant to compare, is not
// a measurement of anything. Summaries of different class counts are
// ErrMixed whatever o says (binary AUC against 10-class accuracy is no
// difference of anything).
func Compare(a, b *Summary, o CompareOptions) ([]Comparison, error) {
	if a == nil || b == nil {
		return nil, fmt.Errorf("report: Compare: nil summary")
	}
	if a.Classes == valuesKey || b.Classes == valuesKey {
		return nil, fmt.Errorf("%w: comparing results of conversion values (ΔMSE, ΔR²-advantage) is not built yet; "+
			"report each set on its own (train report --in DIR)", ErrUnsupported)
	}
	if a.Classes != 0 && b.Classes != 0 && a.Classes != b.Classes {
		return nil, fmt.Errorf("%w: a holds labels of %s, b of %s: results of different class counts are never compared "+
			"(--allow-mixed does not apply)", ErrMixed, classesText(a.Classes), classesText(b.Classes))
	}
	classes := max(a.Classes, b.Classes)
	if ga, gb := groupList(a), groupList(b); !o.AllowMixed && !slices.Equal(ga, gb) {
		return nil, fmt.Errorf("%w: a holds %s, b holds %s: compare results of one dataset and config, "+
			"or allow it (train report --compare … --allow-mixed) when the difference is the point", ErrMixed,
			strings.Join(ga, ", "), strings.Join(gb, ", "))
	}
	byGroup := groupCount(a) > 1 || groupCount(b) > 1
	index := func(s *Summary, name string) (map[SettingKey]Row, error) {
		m := make(map[SettingKey]Row, len(s.Rows))
		for _, r := range s.Rows {
			k := SettingKey{Setting: r.Setting}
			if byGroup {
				k.Dataset, k.ConfigID = r.Dataset, r.ConfigID
			}
			if _, dup := m[k]; dup {
				return nil, fmt.Errorf("report: Compare: summary %s lists setting %q twice", name, r.Setting)
			}
			m[k] = r
		}
		return m, nil
	}
	ma, err := index(a, "a")
	if err != nil {
		return nil, err
	}
	mb, err := index(b, "b")
	if err != nil {
		return nil, err
	}
	nan := math.NaN()
	var out []Comparison
	add := func(k SettingKey, ra, rb Row, side Side) {
		r := ra
		if side == OnlyInB {
			r = rb
		}
		c := Comparison{Dataset: k.Dataset, ConfigID: k.ConfigID, Setting: k.Setting, Pet: r.Pet, K: r.K, Epsilon: r.Epsilon,
			AUCA: nan, AUCB: nan, DAUC: nan, DAUCSE: nan, EAdvA: nan, EAdvB: nan, DEAdv: nan, DEAdvSE: nan, OnlyIn: side,
			Classes: binaryIs2(classes), AccuracyA: nan, AccuracyB: nan, DAccuracy: nan, DAccuracySE: nan}
		if side != OnlyInB {
			c.AUCA, c.EAdvA, c.AccuracyA = ra.AUCMean, ra.EAdv, ra.AccuracyMean
			c.DatasetA, c.ConfigIDA, c.ConfigNameA = ra.Dataset, ra.ConfigID, ra.ConfigName
		}
		if side != OnlyInA {
			c.AUCB, c.EAdvB, c.AccuracyB = rb.AUCMean, rb.EAdv, rb.AccuracyMean
			c.DatasetB, c.ConfigIDB, c.ConfigNameB = rb.Dataset, rb.ConfigID, rb.ConfigName
		}
		if side == InBoth {
			c.DAUC, c.DAUCSE = rb.AUCMean-ra.AUCMean, math.Hypot(ra.AUCSE, rb.AUCSE)
			c.DAccuracy, c.DAccuracySE = rb.AccuracyMean-ra.AccuracyMean, math.Hypot(ra.AccuracySE, rb.AccuracySE)
			c.DEAdv, c.DEAdvSE = rb.EAdv-ra.EAdv, math.Hypot(ra.EAdvSE, rb.EAdvSE)
			d, se := c.DMetric()
			c.SignificantMetric, c.SignificantEAdv = math.Abs(d) > 2*se, math.Abs(c.DEAdv) > 2*c.DEAdvSE
			c.Tested = c.TestedMetric() || c.TestedEAdv()
			c.ConfigDiff = strings.Join(ConfigDiff(withLRs(ra), withLRs(rb)), configSep)
		}
		out = append(out, c)
	}
	for k, ra := range ma {
		if rb, ok := mb[k]; ok {
			add(k, ra, rb, InBoth)
		} else {
			add(k, ra, Row{}, OnlyInA)
		}
	}
	for k, rb := range mb {
		if _, ok := ma[k]; !ok {
			add(k, Row{}, rb, OnlyInB)
		}
	}
	slices.SortFunc(out, func(x, y Comparison) int {
		return cmp.Or(cmp.Compare(x.Dataset, y.Dataset), cmp.Compare(x.ConfigID, y.ConfigID),
			display.SettingOrder(x.Pet, x.K, x.Epsilon, x.Setting, y.Pet, y.K, y.Epsilon, y.Setting))
	})
	return out, nil
}

// withLRs is r's config (Row.Config) with train.learning_rates, the
// learning rates its best-LR rule chose among ("" when the config is
// unknown: a result written before configs were recorded).
func withLRs(r Row) string {
	if r.Config == "" {
		return ""
	}
	m := ParseConfig(r.Config)
	if len(r.LearningRates) > 0 {
		m["train.learning_rates"] = formatFloats(r.LearningRates)
	}
	return FormatConfig(m)
}

// DMetric returns the difference B − A of the reporting rule's metric
// (MetricFor(c.Classes): AUC for binary labels, accuracy for C ≥ 3) and
// its standard error.
func (c Comparison) DMetric() (d, se float64) {
	if MetricFor(c.Classes) == MetricAccuracy {
		return c.DAccuracy, c.DAccuracySE
	}
	return c.DAUC, c.DAUCSE
}

// ComparedConfigDiffs lists the distinct config differences of a
// comparison's rows (Comparison.ConfigDiff), in order of appearance: one
// line per pair of configs compared, "key: a → b; key: a → b".
func ComparedConfigDiffs(cs []Comparison) []string {
	var out []string
	for _, c := range cs {
		if c.ConfigDiff != "" && !slices.Contains(out, c.ConfigDiff) {
			out = append(out, c.ConfigDiff)
		}
	}
	return out
}

// groupCount is the number of distinct (dataset, config) pairs in s.
func groupCount(s *Summary) int { return len(groupList(s)) }

// groupList lists s's distinct (dataset, config) pairs as "dataset X config
// Y", sorted.
func groupList(s *Summary) []string {
	seen := map[string]bool{}
	for _, r := range s.Rows {
		seen[fmt.Sprintf("dataset %s config %s", r.Dataset, r.ConfigID)] = true
	}
	return sortedKeys(seen)
}

var comparisonSchema = schema[Comparison]{name: "compare", cols: []column[Comparison]{
	strCol("setting", func(c *Comparison) *string { return &c.Setting }),
	kindCol("pet", func(c *Comparison) *pets.Kind { return &c.Pet }),
	nullIntCol("k", func(c *Comparison) *int { return &c.K }),
	nullF64Col("epsilon", func(c *Comparison) *float64 { return &c.Epsilon }),
	f64Col("auc_a", func(c *Comparison) *float64 { return &c.AUCA }),
	f64Col("auc_b", func(c *Comparison) *float64 { return &c.AUCB }),
	f64Col("d_auc", func(c *Comparison) *float64 { return &c.DAUC }),
	f64Col("d_auc_se", func(c *Comparison) *float64 { return &c.DAUCSE }),
	f64Col("eadv_a", func(c *Comparison) *float64 { return &c.EAdvA }),
	f64Col("eadv_b", func(c *Comparison) *float64 { return &c.EAdvB }),
	f64Col("d_eadv", func(c *Comparison) *float64 { return &c.DEAdv }),
	f64Col("d_eadv_se", func(c *Comparison) *float64 { return &c.DEAdvSE }),
	boolCol("significant_metric", func(c *Comparison) *bool { return &c.SignificantMetric }),
	boolCol("significant_eadv", func(c *Comparison) *bool { return &c.SignificantEAdv }),
	mapCol("only_in", func(c *Comparison) *Side { return &c.OnlyIn }, Side.String, parseSide, nil),
	strCol("dataset_a", func(c *Comparison) *string { return &c.DatasetA }),
	strCol("config_id_a", func(c *Comparison) *string { return &c.ConfigIDA }),
	strCol("dataset_b", func(c *Comparison) *string { return &c.DatasetB }),
	strCol("config_id_b", func(c *Comparison) *string { return &c.ConfigIDB }),
	opt(boolCol("tested", func(c *Comparison) *bool { return &c.Tested })),
	opt(strCol("config_name_a", func(c *Comparison) *string { return &c.ConfigNameA })),
	opt(strCol("config_name_b", func(c *Comparison) *string { return &c.ConfigNameB })),
	opt(strCol("config_diff", func(c *Comparison) *string { return &c.ConfigDiff })),
	opt(classesCol("classes", func(c *Comparison) *int { return &c.Classes })),
	opt(f64Col("accuracy_a", func(c *Comparison) *float64 { return &c.AccuracyA })),
	opt(f64Col("accuracy_b", func(c *Comparison) *float64 { return &c.AccuracyB })),
	opt(f64Col("d_accuracy", func(c *Comparison) *float64 { return &c.DAccuracy })),
	opt(f64Col("d_accuracy_se", func(c *Comparison) *float64 { return &c.DAccuracySE })),
}}

// ComparisonTable converts Compare's result into compare.csv /
// compare.parquet, with comparisonSchema's columns (listed in README's
// "Reports"): only_in is "", "a" or "b"; dataset_a, config_id_a, dataset_b,
// config_id_b are each side's dataset and config ("" on the side without
// the setting); classes, then accuracy_a, accuracy_b, d_accuracy and
// d_accuracy_se, as auc_a … d_auc_se for test accuracy (auc_* hold the
// macro one-vs-rest AUC for C ≥ 3); significant_metric tests the reporting
// rule's metric (ΔAUC for binary labels, Δaccuracy for C ≥ 3),
// significant_eadv ΔE[adv].
func ComparisonTable(cs []Comparison) *data.Table {
	return comparisonSchema.toTable(cs, map[string]string{})
}

// ReadComparisons reads ComparisonTable's output back.
func ReadComparisons(t *data.Table) ([]Comparison, error) { return comparisonSchema.fromTable(t) }
