package pets

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// TestMechanismClasses: Params.Classes makes the mechanism value a C-class
// one (its law on C classes, flip probability and name), 0 and 2 are the binary
// mechanism, and a class count outside [2, 64] or a kind without a C-class
// law is refused naming "classes".
func TestMechanismClasses(t *testing.T) {
	m, err := New(Params{Kind: RR, Epsilon: 1, Classes: 10})
	if err != nil {
		t.Fatal(err)
	}
	if m.Classes() != 10 || view(m) == nil || view(m).Classes() != 10 || view(m).Mechanism() != m {
		t.Fatalf("classes %d, multiclass %v", m.Classes(), view(m))
	}
	if got, want := m.FlipProb(), 9/(math.E+9); math.Abs(got-want) > 1e-15 {
		t.Errorf("FlipProb = %v, want 9/(e+9) = %v", got, want)
	}
	if got := m.String(); got != "rr(ε=1, C=10)" {
		t.Errorf("String = %q", got)
	}
	if m.Epsilon() != 1 {
		t.Errorf("Epsilon = %v", m.Epsilon())
	}
	for _, c := range []int{0, 2} {
		b, err := New(Params{Kind: RR, Epsilon: 1, Classes: c})
		if err != nil {
			t.Fatal(err)
		}
		if b.Classes() != 2 || b.FlipProb() != 1/(1+math.E) || b.String() != "rr(ε=1)" {
			t.Errorf("classes %d: C=%d π=%v %q", c, b.Classes(), b.FlipProb(), b)
		}
	}
	for _, p := range []Params{{Kind: RR, Epsilon: 1, Classes: 1}, {Kind: RR, Epsilon: 1, Classes: 65},
		{Kind: LLP, K: 4, Classes: -3}} {
		var pe *ParamError
		if _, err := New(p); !errors.As(err, &pe) || pe.Param != "classes" {
			t.Errorf("%+v: %v, want a ParamError on classes", p, err)
		}
	}
	// A kind registered from outside takes classes when its Spec says so
	// and its law serves them; one that does not is refused C ≥ 3.
	sp := rrScheme{}.Spec()
	sp.Name, sp.Takes.Classes = "binary_only_rr", false
	k, err := Register(fixedScheme{sp})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := New(Params{Kind: k, Epsilon: 1, Classes: 2}); err != nil || b.Classes() != 2 {
		t.Fatalf("binary: %v, %v", b, err)
	}
	_, err = New(Params{Kind: k, Epsilon: 1, Classes: 3})
	var pe *ParamError
	if !errors.As(err, &pe) || pe.Param != "classes" {
		t.Fatalf("C=3 on a binary-only kind: %v", err)
	}
	sp.Name, sp.Takes.Classes = "outside_kary_rr", true
	k, err = Register(delegateScheme{sp, rrScheme{}})
	if err != nil {
		t.Fatalf("a registered kind with a C-class law: %v", err)
	}
	m2, err := New(Params{Kind: k, Epsilon: 1, Classes: 5})
	if err != nil || m2.Classes() != 5 {
		t.Fatalf("C=5 on an outside kind that takes classes: %v, %v", m2, err)
	}
	if err := CheckLaw(m2, 20_000, newRand(3)); err != nil {
		t.Fatal(err)
	}
}

// delegateScheme is a scheme with a given spec and another scheme's law.
type delegateScheme struct {
	sp  Spec
	law Scheme
}

func (s delegateScheme) Spec() Spec                { return s.sp }
func (s delegateScheme) Law(p Params) (Law, error) { return s.law.Law(p) }

// TestMechanismReleaseRRClasses: Mechanism.ReleaseRR on C classes is
// the k-ary law's release through the test view word for word, and at C = 2 Params.Classes changes
// nothing.
func TestMechanismReleaseRRClasses(t *testing.T) {
	labels := make([]uint8, 5000)
	for i := range labels {
		labels[i] = uint8(i % 7)
	}
	m, _ := New(Params{Kind: RR, Epsilon: 1, Classes: 7})
	a, b := make([]uint8, len(labels)), make([]uint8, len(labels))
	releaseRR(m, a, labels, rand.NewPCG(1, 2))
	view(m).ReleaseRR(b, labels, rand.NewPCG(1, 2))
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("row %d: %d vs %d", i, a[i], b[i])
		}
	}
	bin := make([]uint8, len(labels))
	for i := range bin {
		bin[i] = uint8(i % 2)
	}
	m0, _ := New(Params{Kind: RR, Epsilon: 1})
	m2, _ := New(Params{Kind: RR, Epsilon: 1, Classes: 2})
	releaseRR(m0, a, bin, rand.NewPCG(3, 4))
	releaseRR(m2, b, bin, rand.NewPCG(3, 4))
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("C=2, row %d: %d vs %d", i, a[i], b[i])
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("the binary ReleaseBag on 3 classes did not panic")
		}
	}()
	l, _ := New(Params{Kind: LLP, K: 4, Classes: 3})
	l.ReleaseBag(1, 4, rand.NewPCG(1, 1))
}

// TestMulticlassLaplaceComposesAsBinary: the ledger composes an llp_lap
// release through the privacy loss distribution of the one-dimensional
// Laplace mechanism at ε (DPLaplace), also on C ≥ 3 classes, where one
// label's change moves two released counts by 1 each under Laplace noise of
// rate ε/2 (Δ = 2). That composition of two Laplace(ε/2) losses is
// dominated by one Laplace(ε) loss: δ(t) is no larger at any t (checked on
// the pessimistic grid, 2h of slack for the extra rounding), so the
// ledger's Laplace PLD stays an upper bound. The same holds for a person's
// m = 2 rows in one bag (Step.Group: Laplace at 2ε), whose change moves the
// counts by at most 4 in total, split as 1+1+1+1, 2+1+1 or 2+2 (in units
// of the ε/2 loss).
func TestMulticlassLaplaceComposesAsBinary(t *testing.T) {
	const h = 1e-4
	for _, eps := range []float64{0.25, 1, 2, 4, 8} {
		for _, tc := range []struct {
			name  string
			whole float64   // the Laplace ε the ledger composes
			parts []float64 // the coordinates' losses
		}{
			{"one label", eps, []float64{eps / 2, eps / 2}},
			{"two rows 1+1+1+1", 2 * eps, []float64{eps / 2, eps / 2, eps / 2, eps / 2}},
			{"two rows 2+1+1", 2 * eps, []float64{eps, eps / 2, eps / 2}},
			{"two rows 2+2", 2 * eps, []float64{eps, eps}},
		} {
			one := laplacePLD(tc.whole, h)
			split := identityPLD(h)
			for _, e := range tc.parts {
				split = split.compose(laplacePLD(e, h))
			}
			for i := 0; i <= 100; i++ {
				x := -tc.whole + 2*tc.whole*float64(i)/100
				if got, bound := split.delta(x), one.delta(x-2*h); got > bound+1e-12 {
					t.Fatalf("ε=%g %s: δ(%.4g) = %.6g above the ledger's Laplace(%g) δ %.6g", eps, tc.name, x, got, tc.whole, bound)
				}
			}
		}
	}
}
