package data

import "fmt"

// LabelKind is what a dataset's labels are (Meta.Labels, Meta.LabelKind).
// Each stage of the pipeline says which kinds it serves and refuses the
// others at open, naming itself and the kind.
type LabelKind string

const (
	// LabelsBinary: labels 0 and 1 (the paper's), a uint8 label column.
	LabelsBinary LabelKind = "binary"
	// LabelsClasses: classes 0..C−1, C = Meta.Classes ≥ 3, a uint8 label
	// column.
	LabelsClasses LabelKind = "classes"
	// LabelsValues: a value per row (conversion values, values.go): a
	// float64 label column on the grid of Meta.ValueMax and ValueStep.
	LabelsValues LabelKind = "values"
)

// Words describes the kind in a sentence: "binary labels", "labels of 10
// classes" (c = the dataset's classes), "conversion values".
func (k LabelKind) Words(c int) string {
	switch k {
	case LabelsBinary:
		return "binary labels"
	case LabelsClasses:
		return fmt.Sprintf("labels of %d classes", c)
	case LabelsValues:
		return "conversion values"
	}
	return fmt.Sprintf("labels of kind %q", string(k))
}

// LabelKind returns the kind of the dataset's labels: Labels when set,
// else classes when Classes ≥ 3 and binary otherwise (every meta.json
// written before the key existed).
func (m *Meta) LabelKind() LabelKind {
	switch {
	case m.Labels != "":
		return m.Labels
	case m.Classes >= 3:
		return LabelsClasses
	}
	return LabelsBinary
}

// checkLabelKind checks meta.json's labels against its classes: a known
// kind, classes ≥ 3 exactly for LabelsClasses, no classes for values.
func (m *Meta) checkLabelKind() error {
	switch k := m.Labels; {
	case k == "":
	case k != LabelsBinary && k != LabelsClasses && k != LabelsValues:
		return fmt.Errorf("%w: %s %q is not a label kind (%s, %s or %s)", ErrInvalid, MetaLabels, string(k), LabelsBinary, LabelsClasses, LabelsValues)
	case (k == LabelsClasses) != (m.Classes >= 3), k == LabelsValues && m.Classes != 0:
		return fmt.Errorf("%w: %s %q with %s %d", ErrInvalid, MetaLabels, string(k), MetaClasses, m.Classes)
	case k == LabelsValues:
		return ValueGrid{Max: m.ValueMax, Step: m.ValueStep}.Check()
	}
	if m.ValueMax != 0 || m.ValueStep != 0 {
		return fmt.Errorf("%w: %s and %s are for %s %q", ErrInvalid, MetaValueMax, MetaValueStep, MetaLabels, string(LabelsValues))
	}
	return nil
}

// MetaLabels is meta.json's key of the label kind.
const MetaLabels = "labels"
