package pipeline

import (
	"fmt"

	"labelprivacy/data"
	"labelprivacy/pets"
)

// servesLabels reports whether the pipeline's stages (fit: releases and
// training; audit; report) serve a dataset's label kind: binary labels,
// classes (3..pets.MaxClasses, through each mechanism's C-class law) and
// conversion values (values.go, through each mechanism's ValueLaw).
func servesLabels(k data.LabelKind) bool {
	return k == data.LabelsBinary || k == data.LabelsClasses || k == data.LabelsValues
}

// checkLabelKind refuses, naming the stage ("fit", "audit", "report") and
// the kind, a dataset whose labels the stage does not serve.
func checkLabelKind(stage string, m *data.Meta) error {
	k := m.LabelKind()
	if servesLabels(k) {
		return nil
	}
	return fmt.Errorf("%w: train %s does not serve the labels of this dataset: they are %s (meta.json %s: %q); it serves binary "+
		"labels, classes (%s 3..%d) and conversion values", data.ErrInvalid, stage, k.Words(m.NumClasses()), data.MetaLabels, string(k),
		data.MetaClasses, pets.MaxClasses)
}

// firstStage is the first stage an open session runs: fit, unless it
// never trains; then the audit, or the report alone.
func (o openOptions) firstStage() string {
	switch {
	case !o.light:
		return "fit"
	case o.audit:
		return "audit"
	}
	return "report"
}
