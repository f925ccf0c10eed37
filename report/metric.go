package report

import "fmt"

// Metric is the test metric the reporting rule maximises over learning
// rates (Best): the paper's test AUC for binary labels; test accuracy for
// labels of C ≥ 3 classes, the metric multi-class label-DP results are
// reported in (RRWithPrior's CIFAR-10 accuracies), where the macro
// one-vs-rest AUC (Run.TestAUC) is reported beside it.
type Metric uint8

const (
	MetricAUC      Metric = iota // test AUC (binary labels)
	MetricAccuracy               // test accuracy (C ≥ 3)
	MetricMSE                    // test MSE (conversion values; minimised)
)

// MetricFor returns the reporting rule's metric for labels of C classes
// (0 or 2: binary).
func MetricFor(classes int) Metric {
	switch {
	case classes == valuesKey:
		return MetricMSE
	case classes >= 3:
		return MetricAccuracy
	}
	return MetricAUC
}

// Lower reports whether the metric is better lower (MSE).
func (m Metric) Lower() bool { return m == MetricMSE }

// String is the metric's name in text and on axes: "test AUC", "test
// accuracy".
func (m Metric) String() string {
	switch m {
	case MetricAccuracy:
		return "test accuracy"
	case MetricMSE:
		return "test MSE"
	}
	return "test AUC"
}

// Short is the metric's name in table headings and legends: "AUC",
// "accuracy".
func (m Metric) Short() string {
	switch m {
	case MetricAccuracy:
		return "accuracy"
	case MetricMSE:
		return "MSE"
	}
	return "AUC"
}

// Metric returns the row's mean and standard error of its reporting
// metric (MetricFor(r.Classes)) at the best learning rate.
func (r Row) Metric() (mean, se float64) {
	switch MetricFor(r.labelKey()) {
	case MetricAccuracy:
		return r.AccuracyMean, r.AccuracySE
	case MetricMSE:
		return r.MSEMean, r.MSESE
	}
	return r.AUCMean, r.AUCSE
}

// ClassesTitle is what headings and figure titles add for labels of C ≥ 3
// classes, " (C = 10 classes)"; "" for binary labels, whose report reads
// as it always did.
func ClassesTitle(classes int) string {
	if classes == valuesKey {
		return " (conversion values)"
	}
	if classes < 3 {
		return ""
	}
	return fmt.Sprintf(" (C = %d classes)", classes)
}

// classesText names a class count in messages: "2 classes (binary)", "10
// classes".
func classesText(c int) string {
	switch c {
	case valuesKey:
		return "conversion values"
	case 2:
		return "2 classes (binary)"
	}
	return fmt.Sprintf("%d classes", c)
}
