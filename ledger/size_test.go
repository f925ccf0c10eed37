package ledger

import (
	"os"
	"strconv"
	"testing"

	"labelprivacy/pets"
)

// The people file is not rewritten for each release. 100,000 people: the
// first release writes a snapshot (about 7 bytes a person); each release
// covering all of them again appends one small record; an LLP release in
// bags of 64 that drops 37 people appends about 10 bytes for each of
// them; a release of half the people lists only the half that moves.
// When the people listed since the snapshot pass a quarter of it, the
// file is rewritten as one snapshot with equal histories merged.
func TestPeopleFileAppends(t *testing.T) {
	if testing.Short() {
		t.Skip("100k people")
	}
	l := newTestLedger(t, Options{})
	const n = 100_000
	pp := PeoplePath(l.Path())
	size := func() int64 {
		st, err := os.Stat(pp)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	ids := span(0, n)
	rr := pets.Params{Kind: pets.RR, Epsilon: 0.5}
	people := l.people(ids...) // one slice for every release, sorted once (a session's shared copy)
	rel := func(id string, keys []uint64, p pets.Params) Release {
		r := l.rel(id, nil, p)
		r.People = keys
		return r
	}
	if _, err := l.Record(rel("0", people, rr)); err != nil {
		t.Fatal(err)
	}
	first := size()
	if first > 9*n {
		t.Fatalf("people file %d bytes for %d people", first, n)
	}
	for i := 1; i <= 3; i++ {
		before := size()
		if _, err := l.Record(rel(strconv.Itoa(i), people, rr)); err != nil {
			t.Fatal(err)
		}
		if grown := size() - before; grown <= 0 || grown > 1000 {
			t.Fatalf("release %d of everyone again grew the people file by %d bytes", i, grown)
		}
	}
	before := size()
	geom := pets.Params{Kind: pets.LLPGeom, K: 64, Epsilon: 0.5}
	kept := n / 64 * 64 // 100,000 = 1562·64 + 32: 32 people dropped
	if _, err := l.Record(l.bagged("llp", ids[:kept], geom, 64)); err != nil {
		t.Fatal(err)
	}
	if grown := size() - before; grown > 1000+16*int64(n-kept) {
		t.Fatalf("an LLP release dropping %d people grew the people file by %d bytes", n-kept, grown)
	}
	before = size()
	e, err := l.Record(l.rel("half", span(0, n/2), rr))
	if err != nil {
		t.Fatal(err)
	}
	if grown := size() - before; grown > 12*n/2+1000 {
		t.Fatalf("a release of half the people grew the people file by %d bytes", grown)
	}
	if e.Releases != 6 || e.PeopleAtWorst != n/2-(n-kept) && e.PeopleAtWorst != n/2 {
		t.Fatalf("%+v", e)
	}
	st, err := l.State(0)
	if err != nil || st.People != n || len(st.Classes) != 3 {
		t.Fatalf("%d people in %d classes (%v)", st.People, len(st.Classes), err)
	}
	// The other half: every class is covered whole or not at all, so
	// nothing is listed.
	before = size()
	if _, err := l.Record(l.rel("other half", span(n/2, n), rr)); err != nil {
		t.Fatal(err)
	}
	if grown := size() - before; grown > 1000 {
		t.Fatalf("the other half grew the people file by %d bytes", grown)
	}
	// Every third person: the people listed since the snapshot pass a
	// quarter of it, and the file is rewritten whole, no bigger than a
	// snapshot, the two halves (equal histories) merged.
	var third []int
	for i := 0; i < n; i += 3 {
		third = append(third, i)
	}
	if _, err := l.Record(l.rel("third", third, rr)); err != nil {
		t.Fatal(err)
	}
	if s := size(); s > first+1000 {
		t.Fatalf("after compaction the people file has %d bytes, the first snapshot %d", s, first)
	}
	p, err := openPeople(pp, l.keys, false)
	if err != nil {
		t.Fatal(err)
	}
	if p.records != 0 || len(p.classes) != 4 {
		t.Fatalf("after compaction: %d records after the snapshot, %d classes (%v)", p.records, len(p.classes), err)
	}
	p.Close()
	st2, err := l.State(0)
	if err != nil || st2.People != n || len(st2.Classes) != 4 {
		t.Fatalf("after compaction: %d people in %d classes (%v)", st2.People, len(st2.Classes), err)
	}
}
