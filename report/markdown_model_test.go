package report

import (
	"math"
	"strings"
	"testing"
)

// report.md's model-attack section: absent without a model attack; with
// one, a row per setting holding the model attack, the release's bracket,
// E[adv] under the model's prior (eadv_true when the audit used η̂) and
// both canary bounds.
func TestWriteModelAttacks(t *testing.T) {
	var b strings.Builder
	none := fullAudit()
	none.ModelRuns, none.ModelCanaries = 0, 0
	writeModelAttacks(&b, []Audit{none})
	if b.Len() != 0 {
		t.Fatalf("a section without a model attack:\n%s", b.String())
	}
	a := fullAudit() // EtaSource clean_model, ModelPrior true: E[adv] is eadv_true
	c := fullAudit()
	c.Setting, c.ModelCanaries, c.EpsLowerModel, c.ModelReleaseAdv = "llp_k16", 0, math.NaN(), math.NaN()
	writeModelAttacks(&b, []Audit{a, c})
	out := b.String()
	for _, want := range []string{"## Attacks on the trained models", "1000 of its own training rows", "500 rows carry fair coins",
		"| `llp_k8` | ∞ | 0.004 | 0.002 | -0.001 | 0.0021 | 0.019 | 0.0175 | 0.0187 | 1.700 | 0.200 |",
		"| `llp_k16` | ∞ | 0.004 | 0.002 | -0.001 | 0.0021 | — | 0.0175 | 0.0187 | 1.700 | — |"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}
