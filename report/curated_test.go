package report

import (
	"math"
	"testing"

	"labelprivacy/pets"
)

// Runs recorded before bag rules existed are random bags; the summary row
// carries its runs' rule.
func TestBagsOf(t *testing.T) {
	for _, tc := range []struct {
		r    Run
		want string
	}{
		{Run{Pet: pets.LLP}, "random"}, {Run{Pet: pets.LLPGeom, Bags: "sorted:x1"}, "sorted:x1"},
		{Run{Pet: pets.RR}, ""}, {Run{Pet: pets.RRPrior}, ""},
	} {
		if got := BagsOf(tc.r); got != tc.want {
			t.Errorf("BagsOf(%v, %q) = %q, want %q", tc.r.Pet, tc.r.Bags, got, tc.want)
		}
	}
	s, err := Summarize([]Run{{RunID: "a", Setting: "llp_k8_key-g", Pet: pets.LLP, K: 8, LabelDPEpsilon: math.Inf(1), LR: 0.1, TestAUC: 0.8, Bags: "key:g"}}, nil, Options{})
	if err != nil || s.Rows[0].Bags != "key:g" {
		t.Fatalf("summary bags %+v, %v", s, err)
	}
}
