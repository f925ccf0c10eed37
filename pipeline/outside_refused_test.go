package pipeline

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"labelprivacy/pets"
)

// TestOutsideKindRefused: a kind that one of the program's servers cannot
// serve is refused at pets.Register, by that server and with its sentence,
// and never registered (every server is linked into this test binary).
func TestOutsideKindRefused(t *testing.T) {
	base := pets.RR.Spec() // a kind every server serves
	for i, tc := range []struct {
		name   string
		edit   func(*pets.Spec)
		server string
		says   string
	}{
		{"a per-bag loss on labels", func(s *pets.Spec) { s.Train = pets.Train{Loss: pets.LossProportion, Target: pets.TargetLabelRR} },
			"pipeline", "only a release per bag"},
		{"soft targets of plain labels", func(s *pets.Spec) { s.Train = pets.Train{Loss: pets.LossBCE, Target: pets.TargetSoft} },
			"pipeline", "soft targets are built from"},
		{"a bag target of counts", func(s *pets.Spec) {
			s.Release, s.Train = pets.ReleaseCounts, pets.Train{Loss: pets.LossBCE, Target: pets.TargetAlphaDebiased}
		}, "release package", "alpha_debiased"},
		{"an informative release at ε = 0", func(s *pets.Spec) {
			s.Privacy, s.Takes.Epsilon = pets.Silent, false
		}, "audit", "Silent"},
		{"a marker the figures lack", func(s *pets.Spec) { s.Look.Marker = pets.MarkerTriangle + 1 }, "report's figures", "marker 7"},
		{"a '|' in the display name", func(s *pets.Spec) { s.Look.Name = "RR|2" }, "report", "report.md's tables"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := base
			sp.Name = fmt.Sprintf("refused_%d", i)
			tc.edit(&sp)
			n := len(pets.Kinds())
			_, err := pets.Register(specScheme{sp})
			var ue *pets.UnsupportedError
			if !errors.As(err, &ue) || !errors.Is(err, pets.ErrUnsupported) || ue.Server != tc.server || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("Register: %v, want the %s's refusal saying %q", err, tc.server, tc.says)
			}
			if !strings.Contains(err.Error(), `mechanism "`+sp.Name+`" cannot be registered: the `+tc.server+" does not serve it: ") {
				t.Fatalf("the sentence %q does not name the kind and the server", err)
			}
			if len(pets.Kinds()) != n {
				t.Fatal("a refused kind was registered")
			}
		})
	}
}

// specScheme is a kind of the given spec with rr's law.
type specScheme struct{ sp pets.Spec }

func (s specScheme) Spec() pets.Spec { return s.sp }
func (specScheme) Law(p pets.Params) (pets.Law, error) {
	p.Kind = pets.RR
	return pets.RR.Scheme().Law(p)
}
