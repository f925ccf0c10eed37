package pets

import (
	"errors"
	"strings"
	"testing"
)

func TestKindStringParseRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		kind Kind
	}{
		{"none", None}, {"bot", Bot}, {"rr", RR}, {"llp", LLP}, {"llp_lap", LLPLap}, {"llp_geom", LLPGeom}, {"rr_prior", RRPrior},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.kind.String(); got != tc.name {
				t.Fatalf("String() = %q, want %q", got, tc.name)
			}
			for _, in := range []string{tc.name, strings.ToUpper(tc.name), " " + tc.name + "\n"} {
				k, err := ParseKind(in)
				if err != nil || k != tc.kind {
					t.Fatalf("ParseKind(%q) = %v, %v; want %v", in, k, err, tc.kind)
				}
			}
			b, err := tc.kind.MarshalText()
			if err != nil || string(b) != tc.name {
				t.Fatalf("MarshalText = %q, %v", b, err)
			}
			var k Kind
			if err := k.UnmarshalText(b); err != nil || k != tc.kind {
				t.Fatalf("UnmarshalText(%q) = %v, %v", b, k, err)
			}
		})
	}
	if len(Kinds()) < len(tests) {
		t.Fatalf("Kinds() has %d entries, want at least the %d built-in ones", len(Kinds()), len(tests))
	}
}

func TestParseKindError(t *testing.T) {
	for _, bad := range []string{"", "gauss", "llp-geom", "rr2"} {
		t.Run("bad_"+bad, func(t *testing.T) {
			_, err := ParseKind(bad)
			if !errors.Is(err, ErrInvalidParam) {
				t.Fatalf("ParseKind(%q) error %v does not wrap ErrInvalidParam", bad, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, `"`+bad+`"`) {
				t.Errorf("error %q does not name the bad value", msg)
			}
			for _, k := range Kinds() {
				if !strings.Contains(msg, k.String()) {
					t.Errorf("error %q does not list %q", msg, k)
				}
			}
		})
	}
	if _, err := Kind(200).MarshalText(); !errors.Is(err, ErrInvalidParam) {
		t.Errorf("MarshalText of invalid kind: %v", err)
	}
	if s := Kind(200).String(); s != "Kind(200)" {
		t.Errorf("invalid kind String() = %q", s)
	}
}

func TestKindPredicates(t *testing.T) {
	tests := []struct {
		kind                    Kind
		isLLP, needsEps, needsK bool
	}{
		{None, false, false, false},
		{Bot, false, false, false},
		{RR, false, true, false},
		{LLP, true, false, true},
		{LLPLap, true, true, true},
		{LLPGeom, true, true, true},
		{RRPrior, false, true, false},
		{LaplaceValue, false, true, false},
		{RRBins, false, true, false},
		{ValueBags, true, true, true},
		{ValuePrior, false, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.kind.String(), func(t *testing.T) {
			if got := tc.kind.IsLLP(); got != tc.isLLP {
				t.Errorf("IsLLP = %v", got)
			}
			if got := tc.kind.NeedsEpsilon(); got != tc.needsEps {
				t.Errorf("NeedsEpsilon = %v", got)
			}
			if got := tc.kind.NeedsK(); got != tc.needsK {
				t.Errorf("NeedsK = %v", got)
			}
		})
	}
}
