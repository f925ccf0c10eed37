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
	return p
}

// The registry test: every registered kind answers everything the program
// asks of it, so that no caller meets a missing case at run time. Its law
// has the shape its release says, binary labels, channels that are
// probability laws and samplers that follow them (each frequency within 6
// binomial SE of 20,000 draws: false failure < 1e-8 per check).
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
			r := newRand(5)
			if sp.Release.PerBag() {
				b := m.BagLaw()
				if b == nil || m.ExampleLaw() != nil {
					t.Fatal("a per-bag kind without a BagLaw")
				}
				for range 1000 {
					a := m.ReleaseBag(3, 4, r)
					if b.SumNoise().Discrete() && (a < 0 || a > 1 || a*4 != math.Round(a*4)) {
						t.Fatalf("released α = %v for a discrete sum law", a)
					}
				}
				return
			}
			ex := m.ExampleLaw()
			if ex == nil || m.BagLaw() != nil {
				t.Fatal("a per-example kind without an ExampleLaw")
			}
			chs := ex.Channels()
			for ci, ch := range chs {
				if ch.C != 2 || len(ch.P) != ch.Z*ch.C {
					t.Fatalf("channel %d: C = %d, Z = %d, %d probabilities", ci, ch.C, ch.Z, len(ch.P))
				}
				for y := range uint8(2) {
					sum := 0.0
					for z := range ch.Z {
						sum += ch.Prob(uint8(z), y)
					}
					if math.Abs(sum-1) > 1e-12 {
						t.Fatalf("channel %d: Σ_z P(z | %d) = %v", ci, y, sum)
					}
				}
			}
			// The sampler follows the channel of each prior.
			for _, p := range []float64{0.5, 0.97, 0.03} {
				ci := ex.ChannelOf(p)
				var prior []float64
				if sp.Release.WithPrior() {
					prior = make([]float64, 20_000)
					for i := range prior {
						prior[i] = p
					}
				} else if ci != 0 {
					t.Fatalf("ChannelOf(%v) = %d for a kind without a prior", p, ci)
				}
				ch := chs[ci]
				for y := range uint8(2) {
					labels := make([]uint8, 20_000)
					for i := range labels {
						labels[i] = y
					}
					dst := make([]uint8, len(labels))
					ex.Release(dst, labels, prior, r)
					for z := range ch.Z {
						got := 0
						for _, v := range dst {
							if int(v) == z {
								got++
							}
						}
						want := ch.Prob(uint8(z), y)
						if se := math.Sqrt(want*(1-want)/20_000) + 1e-9; math.Abs(float64(got)/20_000-want) > 6*se {
							t.Fatalf("prior %v, y = %d: P(z = %d) = %v, channel says %v", p, y, z, float64(got)/20_000, want)
						}
					}
				}
			}
		})
	}
}

// Register refuses a spec the rest of the program could not serve.
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
		{"bags trained per example", func(s *Spec) { s.Name, s.Release, s.Takes.K = "x4", ReleaseBags, true }},
		{"soft target without a prior", func(s *Spec) { s.Name, s.Train = "x5", Train{Loss: LossBCE, Target: TargetSoft} }},
		{"unknown family", func(s *Spec) { s.Name, s.Look.Family = "x6", "nobody" }},
		{"marker out of range", func(s *Spec) { s.Name, s.Look.Marker = "x7", MarkerTriangle+1 }},
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
