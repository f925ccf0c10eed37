package report

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"labelprivacy/pets"
)

// ErrInvalidRun is wrapped by every error of Run.Validate.
var ErrInvalidRun = errors.New("report: invalid run record")

// Validate checks what every stored result must hold: the identity fields
// (run_id, dataset, config_id, model, setting, loss, backend), a valid
// mechanism, and finite, in-range numbers where a finished run always has
// them (lr > 0, test_auc in [0, 1], test_logloss ≥ 0, steps ≥ 0, trial ≥ 0,
// epochs ≥ 1, ε ≥ 0), classes 0 or 2 (binary) or 3..pets.MaxClasses, and
// test_accuracy in [0, 1] or NaN (not measured: records written before it
// existed). The first problem is named by its column.
func (r *Run) Validate() error {
	bad := func(col, format string, args ...any) error {
		return fmt.Errorf("%w: %s %s", ErrInvalidRun, col, fmt.Sprintf(format, args...))
	}
	for _, f := range []struct{ col, v string }{{"run_id", r.RunID}, {"dataset", r.Dataset}, {"config_id", r.ConfigID},
		{"model", r.Model}, {"setting", r.Setting}, {"loss", r.Loss}, {"backend", r.Backend}} {
		if strings.TrimSpace(f.v) == "" {
			return bad(f.col, "is missing")
		}
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case !r.Pet.Valid():
		return bad("pet", "%v is not a mechanism", r.Pet)
	case !finite(r.LR) || r.LR <= 0:
		return bad("lr", "%v is not a finite learning rate > 0", r.LR)
	case r.OfValues() && (math.IsInf(r.ValueMax, 0) || r.Classes > 2):
		return bad("value_max", "%v is not the finite B of a dataset of values", r.ValueMax)
	case r.OfValues() && !math.IsNaN(r.TestMSE) && !(r.TestMSE >= 0):
		return bad("test_mse", "%v is not ≥ 0 (nor NaN: diverged)", r.TestMSE)
	case !r.OfValues() && (!finite(r.TestAUC) || r.TestAUC < 0 || r.TestAUC > 1):
		return bad("test_auc", "%v is not in [0, 1]", r.TestAUC)
	case !r.OfValues() && (!finite(r.TestLogLoss) || r.TestLogLoss < 0):
		return bad("test_logloss", "%v is not a finite number ≥ 0", r.TestLogLoss)
	case !finite(r.Epsilon) || r.Epsilon < 0:
		return bad("epsilon", "%v is not a finite number ≥ 0", r.Epsilon)
	case !(r.LabelDPEpsilon >= 0):
		return bad("label_dp_epsilon", "%v is not ≥ 0", r.LabelDPEpsilon)
	case r.Trial < 0:
		return bad("trial", "%d is negative", r.Trial)
	case r.Epochs < 1:
		return bad("epochs", "%d is not ≥ 1", r.Epochs)
	case r.Steps < 0:
		return bad("steps", "%d is negative", r.Steps)
	case r.K < 0:
		return bad("k", "%d is negative", r.K)
	case r.Classes < 0 || r.Classes == 1 || r.Classes > pets.MaxClasses:
		return bad("classes", "%d is not 2 (binary) or 3..%d", r.Classes, pets.MaxClasses)
	case !math.IsNaN(r.TestAccuracy) && !(r.TestAccuracy >= 0 && r.TestAccuracy <= 1):
		return bad("test_accuracy", "%v is not in [0, 1] (nor NaN: not measured)", r.TestAccuracy)
	}
	return nil
}
