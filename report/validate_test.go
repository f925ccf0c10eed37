package report

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"labelprivacy/pets"
)

// Validate accepts a finished run and names the first bad field by its
// column in runs.csv (a column of runSchema).
func TestRunValidate(t *testing.T) {
	if r := fullRun(); r.Validate() != nil {
		t.Fatalf("a full run is invalid: %v", r.Validate())
	}
	for _, ok := range []func(*Run){
		func(r *Run) { r.Classes = 0 },                              // binary, unset
		func(r *Run) { r.Classes = pets.MaxClasses },                // the most classes
		func(r *Run) { r.Classes, r.TestAccuracy = 10, math.NaN() }, // accuracy not measured
		func(r *Run) { r.TestAccuracy = 0 },                         // all wrong
	} {
		r := fullRun()
		ok(&r)
		if err := r.Validate(); err != nil {
			t.Errorf("classes %d, accuracy %v: %v", r.Classes, r.TestAccuracy, err)
		}
	}
	cases := []struct {
		col string
		bad func(*Run)
	}{
		{"run_id", func(r *Run) { r.RunID = " " }},
		{"dataset", func(r *Run) { r.Dataset = "" }},
		{"config_id", func(r *Run) { r.ConfigID = "" }},
		{"model", func(r *Run) { r.Model = "" }},
		{"setting", func(r *Run) { r.Setting = "" }},
		{"loss", func(r *Run) { r.Loss = "" }},
		{"backend", func(r *Run) { r.Backend = "" }},
		{"pet", func(r *Run) { r.Pet = pets.Kind(200) }},
		{"lr", func(r *Run) { r.LR = 0 }},
		{"test_auc", func(r *Run) { r.TestAUC = 1.1 }},
		{"test_auc", func(r *Run) { r.TestAUC = math.NaN() }},
		{"test_logloss", func(r *Run) { r.TestLogLoss = -0.1 }},
		{"epsilon", func(r *Run) { r.Epsilon = math.Inf(1) }},
		{"label_dp_epsilon", func(r *Run) { r.LabelDPEpsilon = math.NaN() }},
		{"trial", func(r *Run) { r.Trial = -1 }},
		{"epochs", func(r *Run) { r.Epochs = 0 }},
		{"steps", func(r *Run) { r.Steps = -1 }},
		{"k", func(r *Run) { r.K = -1 }},
		{"classes", func(r *Run) { r.Classes = 1 }},
		{"classes", func(r *Run) { r.Classes = pets.MaxClasses + 1 }},
		{"classes", func(r *Run) { r.Classes = -2 }},
		{"test_accuracy", func(r *Run) { r.TestAccuracy = 1.5 }},
		{"test_accuracy", func(r *Run) { r.TestAccuracy = math.Inf(-1) }},
	}
	for _, tc := range cases {
		t.Run(tc.col, func(t *testing.T) {
			if !slices.Contains(runSchema.names(), tc.col) {
				t.Fatalf("%s is not a runs.csv column", tc.col)
			}
			r := fullRun()
			tc.bad(&r)
			err := r.Validate()
			if !errors.Is(err, ErrInvalidRun) || !strings.Contains(err.Error(), ": "+tc.col+" ") {
				t.Fatalf("err %v, want ErrInvalidRun naming %s", err, tc.col)
			}
		})
	}
}
