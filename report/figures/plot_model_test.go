package figures

import (
	"errors"
	"math"
	"testing"

	"labelprivacy/report"
	"labelprivacy/report/internal/reporttest"
)

// modelAudits are CheckedAudits with the quickstart's model attack: the
// release's advantage on the members for all but llp_k8, which has only
// E[adv] under the true η (as without the data's η on the training rows).
func modelAudits() []report.Audit {
	as := reporttest.CheckedAudits()
	attack := map[string][3]float64{ // model_adv, SE, release
		"none": {-0.0025, 0.0020, 0.2156}, "rr_eps1": {-0.0071, 0.0024, 0.0416}, "rr_eps4": {0.0002, 0.0023, 0.1965},
		"llp_k8": {-0.0133, 0.0026, math.NaN()}, "llp_geom_k8_eps1": {-0.0096, 0.0026, 0.0184},
	}
	for i := range as {
		v := attack[as[i].Setting]
		as[i].ModelRuns, as[i].ModelRows, as[i].ModelPrior = 1, 10000, "true"
		as[i].ModelAdv, as[i].ModelAdvSE, as[i].ModelReleaseAdv = v[0], v[1], v[2]
	}
	return as
}

// TestModelAttackFigure: one point per setting with a model attack (none
// included: it shows memorization), at (the release's advantage on the same
// rows, or E[adv] under the true η, model_adv) with its 95% bar, and y = x;
// no model attack, no figure.
func TestModelAttackFigure(t *testing.T) {
	as := modelAudits()
	f, err := modelAttackFigure(as)
	if err != nil {
		t.Fatal(err)
	}
	p := f.panels[0]
	pts, diag := map[string]xy{}, false
	for _, s := range p.series {
		if s.name == "y = x" {
			diag = s.pts[0].X == s.pts[0].Y && s.pts[1].X == s.pts[1].Y
			continue
		}
		pts[s.name] = s.pts[0]
		if len(s.yerr) != 1 || !(s.yerr[0] > 0) {
			t.Errorf("%s: bar %v", s.name, s.yerr)
		}
	}
	if !diag || len(pts) != 5 || pts["rr_eps1"] != (xy{0.0416, -0.0071}) || pts["llp_k8"] != (xy{as[3].EAdvTrue, -0.0133}) {
		t.Fatalf("points %v (diagonal %v)", pts, diag)
	}
	render(t, f)
	keepExample(t, f, "model_attack")
	for i := range as {
		as[i].ModelRuns, as[i].ModelAdv = 0, math.NaN()
	}
	if _, err := modelAttackFigure(as); !errors.Is(err, ErrNoData) {
		t.Fatalf("no model attack: err %v", err)
	}
}
