package pets

import (
	"errors"
	"math"
	"testing"
)

// validParams returns parameters every kind k accepts.
func validParams(k Kind) Params {
	p := Params{Kind: k}
	if k.Spec().Takes.K {
		p.K = 4
	}
	if k.Spec().Takes.Epsilon {
		p.Epsilon = 1
	}
	if k.OfValues() {
		p.Values = testGrid
	}
	if k.Spec().Takes.Source { // binary conversions, two reports: a state space larger than the classes
		p.TriggerData, p.Windows, p.Reports = 1, 1, 2
	}
	if k.Spec().Takes.Shares {
		p.CountShare = 1
	}
	return p
}

// validParamsFor is validParams for labels of c classes.
func validParamsFor(k Kind, c int) Params {
	p := validParams(k)
	p.Classes = c
	if k.Spec().Takes.Source {
		p.TriggerData = c - 1
	}
	return p
}

// testGrid is the grid the registry test releases values on.
var testGrid = Grid{Max: 10, Step: 0.5}

// The registry test: every registered kind answers everything the program
// asks of it, so that no caller meets a missing case at run time: its law
// on two classes (and five, when it takes classes) passes CheckLaw (each
// release frequency within 6 binomial SE of 20,000 draws: false failure
// < 2e-9 per frequency).
func TestRegistryEveryKind(t *testing.T) {
	for _, k := range Kinds() {
		t.Run(k.String(), func(t *testing.T) {
			sp := k.Spec()
			if got, err := ParseKind(sp.Name); err != nil || got != k {
				t.Fatalf("ParseKind(%q) = %v, %v", sp.Name, got, err)
			}
			if sp.Look.Name == "" || !k.Family().Valid() {
				t.Fatalf("look %+v", sp.Look)
			}
			if (sp.Privacy == DPRR || sp.Privacy == DPLaplace) != sp.Takes.Epsilon {
				t.Fatalf("privacy %v with Takes %+v", sp.Privacy, sp.Takes)
			}
			m, err := New(validParams(k))
			if err != nil {
				t.Fatal(err)
			}
			switch eps := m.Epsilon(); sp.Privacy {
			case NotDP:
				if !math.IsInf(eps, 1) {
					t.Fatalf("ε = %v for a kind that is not DP", eps)
				}
			case Silent:
				if eps != 0 {
					t.Fatalf("ε = %v for a silent kind", eps)
				}
			default:
				if eps != 1 {
					t.Fatalf("ε = %v, configured 1", eps)
				}
			}
			// On values, when it takes them: its ValueLaw.
			if sp.Takes.Values {
				p := validParams(k)
				p.Values = testGrid
				m, err := New(p)
				if err != nil {
					t.Fatal(err)
				}
				if err := CheckValueLaw(m, 20_000, newRand(5)); err != nil {
					t.Fatal(err)
				}
			}
			if !sp.Takes.Classes {
				return
			}
			// Its law on two classes and, when it takes them, on five.
			cs := []int{2}
			if sp.Takes.Classes {
				cs = append(cs, 5)
			}
			for _, c := range cs {
				m, err := New(validParamsFor(k, c))
				if err != nil {
					t.Fatal(err)
				}
				if err := CheckLaw(m, 20_000, newRand(5)); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// Register refuses a spec that is not consistent in itself (what the
// servers refuse is tested with them: TestServeRefuses, and the
// pipeline's TestOutsideKindRefused).
func TestRegisterRefuses(t *testing.T) {
	good := rrScheme{}.Spec()
	for _, tc := range []struct {
		name string
		edit func(*Spec)
	}{
		{"taken name", func(s *Spec) {}},
		{"bad name", func(s *Spec) { s.Name = "Bad Name" }},
		{"no display name", func(s *Spec) { s.Name, s.Look.Name = "x1", "" }},
		{"bag size without bags", func(s *Spec) { s.Name, s.Takes.K = "x2", true }},
		{"ε without DP", func(s *Spec) { s.Name, s.Privacy = "x3", NotDP }},
		{"bags without a bag size", func(s *Spec) { s.Name, s.Release = "x4", ReleaseBags }},
		{"unknown family", func(s *Spec) { s.Name, s.Look.Family = "x6", "nobody" }},
		{"release out of range", func(s *Spec) { s.Name, s.Release = "x7", ReleaseHistogram+1 }},
		{"values release without values", func(s *Spec) { s.Name, s.Release = "x8", ReleaseValues }},
		{"optional ε without ε", func(s *Spec) { s.Name, s.Takes.OptionalEpsilon, s.Takes.Epsilon, s.Privacy = "x9", true, false, Silent }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := good
			tc.edit(&sp)
			n := len(Kinds())
			if _, err := Register(fixedScheme{sp}); !errors.Is(err, ErrInvalidParam) {
				t.Fatalf("Register: %v", err)
			}
			if len(Kinds()) != n {
				t.Fatal("a refused kind was registered")
			}
		})
	}
}

// fixedScheme is a scheme with a given spec and rr's law.
type fixedScheme struct{ sp Spec }

func (s fixedScheme) Spec() Spec              { return s.sp }
func (fixedScheme) Law(p Params) (Law, error) { return newFlipLaw(p.Epsilon), nil }

// A server's refusal keeps a kind out, with the server's sentence; Serve
// checks the kinds registered before it.
func TestServeRefuses(t *testing.T) {
	Serve("test server", func(sp Spec) error {
		if sp.Name == "refused_by_test" {
			return errors.New("it cannot serve a kind of that name")
		}
		return nil
	})
	sp := rrScheme{}.Spec()
	sp.Name = "refused_by_test"
	n := len(Kinds())
	_, err := Register(fixedScheme{sp})
	var ue *UnsupportedError
	if !errors.As(err, &ue) || !errors.Is(err, ErrUnsupported) || ue.Server != "test server" || len(Kinds()) != n {
		t.Fatalf("Register: %v (%d kinds, %d before)", err, len(Kinds()), n)
	}
	if want := `pets: mechanism "refused_by_test" cannot be registered: the test server does not serve it: it cannot serve a kind of that name`; err.Error() != want {
		t.Fatalf("Register: %q, want %q", err, want)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("Serve accepted a server that refuses a built-in kind")
			}
		}()
		Serve("picky", func(sp Spec) error {
			if sp.Name == "rr" {
				return errors.New("no rr")
			}
			return nil
		})
	}()
}
