package pipeline

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"labelprivacy/config"
	"labelprivacy/internal/english"
	"labelprivacy/model"
	"labelprivacy/pets"
	"labelprivacy/report"
)

// minSteps is the fewest optimizer steps of a model that counts as trained:
// below it (configs/higgs.yaml on a 7,500-row sample took 4 per model) a
// test AUC measures the training budget, not the mechanism.
const minSteps = 50

// nearChanceSEs is the rule for a clean model near chance: its test metric
// less than nearChanceSEs standard errors above what a model that learned
// nothing scores (chance.se). A model truly at chance is flagged with
// probability 99.87% (one-sided normal); one truly 3 SE above, half the time.
const nearChanceSEs = 3

// chance is what a model that learned nothing scores on the test set, and
// its standard error there.
type chance struct {
	metric    string  // "test AUC" (binary) or "test accuracy" (C ≥ 3 classes)
	value, se float64 // ½ and the AUC's SE under no signal; or the majority class's share p and √(p(1−p)/n)
	rows      int
}

// chanceOf is chance on test labels of c classes: for binary labels the
// AUC ½ with its standard error when scores carry no signal (Hanley and
// McNeil at AUC = ½, the Mann–Whitney variance: √((n₀+n₁+1)/(12 n₀ n₁)));
// for C ≥ 3 the accuracy of always predicting the majority class, p, with
// the binomial SE √(p(1−p)/n). nil without both classes.
func chanceOf(labels []uint8, c int) *chance {
	n := len(labels)
	counts := make([]int, max(c, 2))
	for _, y := range labels {
		if int(y) < len(counts) {
			counts[y]++
		}
	}
	if c >= 3 {
		p := float64(slices.Max(counts)) / float64(n)
		if n == 0 {
			return nil
		}
		return &chance{metric: "test accuracy", value: p, se: math.Sqrt(p * (1 - p) / float64(n)), rows: n}
	}
	n0, n1 := float64(counts[0]), float64(counts[1])
	if n0 == 0 || n1 == 0 {
		return nil
	}
	return &chance{metric: "test AUC", value: 0.5, se: math.Sqrt((n0 + n1 + 1) / (12 * n0 * n1)), rows: n}
}

// of is run r's metric that chance describes.
func (ch *chance) of(r *report.Run) float64 {
	if ch.metric == "test accuracy" {
		return r.TestAccuracy
	}
	return r.TestAUC
}

// trainingNotes are the notes about models that barely trained, said at
// the end of fit and in report.md: trained runs of fewer than minSteps
// optimizer steps, and clean models near chance (ch nil: not judged, as in
// train report, which has no test labels), with what the audit's η̂ is
// then worth when audit.eta is clean_model (etaClean). The first note says
// that the unbounded losses the runs used (debiased BCE, backward CE) may
// go below zero without diverging.
func trainingNotes(runs []report.Run, ch *chance, etaClean bool) []string {
	var few, nearChance []*report.Run
	unbounded := map[string]bool{}
	trained := 0
	for i := range runs {
		r := &runs[i]
		if r.Pet.Spec().Train.Loss == pets.LossNone {
			continue // bot: a constant, nothing to train
		}
		trained++
		if r.Loss == model.LossDebiasedBCE.String() || r.Loss == model.LossBackwardCE.String() {
			unbounded[r.Loss] = true
		}
		if r.Steps < minSteps {
			few = append(few, r)
		}
		if ch != nil && r.Pet == pets.None && ch.of(r)-ch.value < nearChanceSEs*ch.se {
			nearChance = append(nearChance, r)
		}
	}
	var notes []string
	if len(few) > 0 {
		least := slices.MinFunc(few, func(a, b *report.Run) int { return int(a.Steps - b.Steps) })
		notes = append(notes, fmt.Sprintf("%d of %s took fewer than %d optimizer steps (fewest: %d, %s): a model that barely trained "+
			"measures the training budget, not the mechanism; train more steps (train.epochs × training rows ÷ train.batch_size: "+
			"raise the epochs or lower the batch size)", len(few), english.Count(trained, "model"), minSteps, least.Steps, runName(least)))
	}
	if len(nearChance) > 0 {
		r := nearChance[0]
		msg := fmt.Sprintf("%d of the clean model's runs score near chance (%s: %s %.4f; chance %.4f ± %.4f on %d test rows, near: "+
			"less than %d SE above it, which a model that learned nothing is 99.87%% of the time)",
			len(nearChance), runName(r), ch.metric, ch.of(r), ch.value, ch.se, ch.rows, nearChanceSEs)
		if etaClean {
			msg += ": the audit's η̂ (audit.eta: clean_model) is then nearly constant, a prior that ignores the features, so E[adv] " +
				"and |MA| describe the mechanism against an attacker who knows only the base rate, not one who models the features; " +
				"its checks (realized attack, canaries) still hold. Train the clean model more, or audit with audit.eta: true " +
				"(synthetic data) or knn"
		} else {
			msg += ": its test metric is no baseline for the mechanisms'"
		}
		notes = append(notes, msg)
	}
	if len(notes) > 0 && len(unbounded) > 0 {
		names := slices.Sorted(maps.Keys(unbounded))
		notes[0] += fmt.Sprintf(" (%s %s unbounded below: a negative training loss is no divergence)",
			strings.Join(names, " and "), map[bool]string{true: "is", false: "are"}[len(names) == 1])
	}
	return notes
}

// runName names a run as the fit lines do: setting, learning rate, trial.
func runName(r *report.Run) string {
	return fmt.Sprintf("%s lr=%g trial %d", r.Setting, r.LR, r.Trial)
}

// trainingNotes are trainingNotes of the session's runs: judged against
// chance on its test labels, η̂ read as audit.eta says.
func (s *Session) trainingNotes(runs []report.Run) []string {
	return trainingNotes(runs, chanceOf(s.test.Label, s.classes()), s.cfg.Audit.Eta == config.EtaCleanModel)
}
