package ledger

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"labelprivacy/pets"
)

// Two kinds registered from outside, in the order LEDGER_KIND_ORDER says
// ("ab" unless set): a process of order "ba" gives them each other's
// registry values, so a people file that stored values would compose one
// as the other. ledger_a composes as randomized response (DPRR),
// ledger_b as Laplace (DPLaplace), so the two differ in every total.
var kindA, kindB = func() (pets.Kind, pets.Kind) {
	a := outsideScheme{pets.Spec{Name: "ledger_a", Takes: pets.Takes{Epsilon: true}, Privacy: pets.DPRR,
		Release: pets.ReleaseLabels, Train: pets.Train{Loss: pets.LossFlipped, Target: pets.TargetLabelRR},
		Look: pets.Look{Name: "A"}}, pets.RR}
	b := outsideScheme{pets.Spec{Name: "ledger_b", Takes: pets.Takes{K: true, Epsilon: true}, Privacy: pets.DPLaplace,
		Release: pets.ReleaseBags, Train: pets.Train{Loss: pets.LossProportion, Target: pets.TargetAlpha},
		Look: pets.Look{Name: "B"}}, pets.LLPLap}
	order := []outsideScheme{a, b}
	if os.Getenv("LEDGER_KIND_ORDER") == "ba" {
		order = []outsideScheme{b, a}
	}
	for _, s := range order {
		if _, err := pets.Register(s); err != nil {
			panic(err)
		}
	}
	ka, _ := pets.ParseKind("ledger_a")
	kb, _ := pets.ParseKind("ledger_b")
	return ka, kb
}()

// outsideScheme is a kind of the given spec with a built-in kind's law.
type outsideScheme struct {
	sp  pets.Spec
	law pets.Kind
}

func (s outsideScheme) Spec() pets.Spec { return s.sp }
func (s outsideScheme) Law(p pets.Params) (pets.Law, error) {
	p.Kind = s.law
	return s.law.Scheme().Law(p)
}

// recordMixed records releases through ledger_a, ledger_b and rr into l,
// with a snapshot written after the third (compactMinListed lowered), and
// returns the ledger's state described (describeState).
func recordMixed(t *testing.T, l *testLedger) string {
	t.Helper()
	defer func(v int) { compactMinListed = v }(compactMinListed)
	compactMinListed = 50
	for i, r := range []struct {
		ids []int
		p   pets.Params
	}{
		{span(0, 40), pets.Params{Kind: kindA, Epsilon: 1}},
		{span(20, 60), pets.Params{Kind: kindB, K: 4, Epsilon: 0.5}},
		{span(0, 60), pets.Params{Kind: kindA, Epsilon: 1}},
		{span(10, 30), pets.Params{Kind: pets.RR, Epsilon: 2}},
		{span(30, 70), pets.Params{Kind: kindB, K: 4, Epsilon: 0.5}},
	} {
		if _, err := l.Record(l.rel(strconv.Itoa(i), r.ids, r.p)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(PeoplePath(l.Path()))
	if err != nil || b[peopleHeaderLen] != recSnapshot {
		t.Fatalf("no snapshot in the people file (%v)", err)
	}
	return describeState(t, l.Ledger)
}

// describeState writes a ledger's state in words: per class its people,
// releases, steps by mechanism name and the bits of its totals.
func describeState(t *testing.T, l *Ledger) string {
	t.Helper()
	s, err := l.State(0)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range s.Classes {
		fmt.Fprintf(&b, "%d people, %d releases:", c.People, c.Releases)
		for _, st := range c.Steps {
			fmt.Fprintf(&b, " %s(%g)", st.Kind, st.Epsilon)
		}
		fmt.Fprintf(&b, " total %x basic %x pld %x\n", math.Float64bits(c.Comp.Total), math.Float64bits(c.Comp.Basic), math.Float64bits(c.Comp.PLD))
	}
	return b.String()
}

// TestPeopleLogOtherRegistrationOrder: a people file written by a process
// that registered two outside kinds in one order is read, by a process
// that registered them in the other (this test binary re-executed as
// TestPeopleLogChild with LEDGER_KIND_ORDER=ba), as the same histories of
// the same mechanisms with the same totals, to the bit.
func TestPeopleLogOtherRegistrationOrder(t *testing.T) {
	if os.Getenv("LEDGER_KIND_ORDER") != "" {
		t.Skip("the parent of TestPeopleLogChild")
	}
	l := newTestLedger(t, Options{})
	want := recordMixed(t, l)
	if !strings.Contains(want, "ledger_a(1)") || !strings.Contains(want, "ledger_b(0.5)") || !strings.Contains(want, "rr(2)") {
		t.Fatalf("the histories lack the mechanisms recorded:\n%s", want)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPeopleLogChild$", "-test.v")
	cmd.Env = append(os.Environ(), "LEDGER_KIND_ORDER=ba", "LEDGER_READ="+l.Path())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	got, _, ok := bytes.Cut(out, []byte("=== END"))
	_, got, ok2 := bytes.Cut(got, []byte("=== STATE\n"))
	if !ok || !ok2 {
		t.Fatalf("child printed no state:\n%s", out)
	}
	if string(got) != want {
		t.Fatalf("read with the other registration order:\n%s\nwritten:\n%s", got, want)
	}
}

// TestPeopleLogChild is the child of TestPeopleLogOtherRegistrationOrder
// (skipped otherwise): it checks its registration order and prints the
// state of the ledger it is given.
func TestPeopleLogChild(t *testing.T) {
	path := os.Getenv("LEDGER_READ")
	if path == "" {
		t.Skip("child process of TestPeopleLogOtherRegistrationOrder")
	}
	if kindB >= kindA {
		t.Fatalf("registration order ba gave ledger_a %d, ledger_b %d", kindA, kindB)
	}
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("=== STATE\n%s=== END\n", describeState(t, l))
}

// TestPeopleLogVersion2: a people file of version 2 (kinds stored by
// registry value) is read as it was written when it names built-in kinds
// only, and refused, saying what to do, when it names a kind registered
// from outside, whose value another process may give another kind.
func TestPeopleLogVersion2(t *testing.T) {
	defer func(v uint32) { snapshotVersion = v }(snapshotVersion)
	builtin := func(version uint32) (*testLedger, error) {
		snapshotVersion = version
		l := newTestLedger(t, Options{})
		defer func(v int) { compactMinListed = v }(compactMinListed)
		compactMinListed = 50
		for i, r := range []struct {
			ids []int
			p   pets.Params
		}{
			{span(0, 40), pets.Params{Kind: pets.RR, Epsilon: 1}},
			{span(20, 60), pets.Params{Kind: pets.LLPLap, K: 4, Epsilon: 0.5}},
			{span(0, 60), pets.Params{Kind: pets.LLPGeom, K: 4, Epsilon: 1}},
			{span(10, 30), pets.Params{Kind: pets.RR, Epsilon: 2}},
		} {
			if _, err := l.Record(l.rel(strconv.Itoa(i), r.ids, r.p)); err != nil {
				return nil, err
			}
		}
		return l, nil
	}
	l3, err := builtin(peopleVersion)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := builtin(peopleVersionIndex)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(PeoplePath(l2.Path()))
	if !bytes.HasPrefix(b, peopleHeader(peopleVersionIndex)) || b[peopleHeaderLen] != recSnapshot {
		t.Fatal("no version-2 file with a snapshot was written")
	}
	if got, want := describeState(t, l2.Ledger), describeState(t, l3.Ledger); got != want {
		t.Fatalf("version 2 read as\n%s\nversion 3:\n%s", got, want)
	}

	snapshotVersion = peopleVersionIndex
	l := newTestLedger(t, Options{})
	defer func(v int) { compactMinListed = v }(compactMinListed)
	compactMinListed = 50
	var err2 error
	for i, ids := range [][]int{span(0, 40), span(20, 60), span(0, 60), span(5, 60)} {
		if _, err2 = l.Record(l.rel(strconv.Itoa(i), ids, pets.Params{Kind: kindA, Epsilon: 1})); err2 != nil {
			break
		}
	}
	if err2 == nil {
		_, err2 = l.State(0)
	}
	if err2 == nil || !strings.Contains(err2.Error(), "cannot be read correctly") || !strings.Contains(err2.Error(), "move the ledger aside") ||
		!strings.Contains(err2.Error(), filepath.Base(PeoplePath(l.Path()))) {
		t.Fatalf("a version-2 file naming an outside kind: %v", err2)
	}
}
