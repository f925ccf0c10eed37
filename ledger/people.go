package ledger

import (
	"cmp"
	"crypto/hmac"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"os"
	"slices"

	"labelprivacy/pets"
)

// The people file (PeoplePath) holds every person the ledger has seen, in
// history classes, as an append-only log of records after a 12-byte
// header ("LPPEOPLE", uint32 LE version 3; version 2 went with the previous
// ledger format, whose rows lacked the id column and whose snapshots stored
// kinds by registry value: such a ledger is refused at its CSV and key file,
// and this reader still reads a version-2 file that names built-in kinds only):
//
//	byte   type          'S' snapshot, 'R' release, 'A' abort
//	uint64 LE length     of the payload
//	payload
//	[32]   MAC           HMAC-SHA-256 under the ledger key of
//	                     "labelprivacy/people", 0, the previous record's
//	                     MAC (zeros for the first), type and payload
//
// Every record names a CSV row: its number (1-based, the header not
// counted) and the row's whole line, so the file names the ledger's last
// row, and a row whose CSV append a crash prevented is appended from here
// (rolled forward) by the next writer. Payloads (uv: unsigned varint):
//
//	S   uv row, uv len, line            (row 0, empty line: none)
//	    uv H, H × (uv releases, uv n, n × (uv len, kind name, [8] ε bits LE, uv count))
//	    uv C, C × (uv history, uv people)
//	    uv N, N × (uv key delta, uv class)   keys ascending (first delta from 0)
//	R   uv row, uv len, line            the release's row
//	    uv G, G × (uv single, uv g, g × uv size)       charges (0: the first)
//	    uv O, O × (uv class, uv charge, byte mode, uv people)
//	    uv F, F × (uv charge, uv people)               new people
//	    uv E, E × (uv key delta, uv class)             people who change class
//	A   uv row, uv len, line            the abort's row
//
// An R record's ops act in order on the classes (the release's step is its
// row's mechanism and ε): mode 0, every person of the class is covered
// with the charge (its history grows); mode 1, the listed people covered
// with the charge move to a new class (the class's history plus the
// release); mode 2, the class's history grows and its people the release
// does not cover (listed) move to a new class holding the old history. New
// people each get a new class. A release therefore appends a few bytes per
// person who changes class, not a copy of the people: a release of 10M
// people already in one class appends one record of about 500 bytes
// (mostly the row's line). When the people listed since the snapshot
// exceed a quarter of it (or 4,096 records follow it), the file is
// rewritten as one snapshot (temporary file, fsync, rename), merging equal
// histories.
//
// A history's steps name their mechanism as the CSV does, by its name
// (an R record's step is its row's mechanism), never by its place in the
// registry, which depends on the order a process registered kinds in; they
// are ordered by pets.CompareSteps, the same in every process. Version 2
// stored the kind's registry value as one byte: it is read as long as
// every value is a built-in kind's (fixed), and refused otherwise, with
// what to do; a version-2 file takes records as it is and becomes version 3
// at its next snapshot.

const (
	peopleMagic   = "LPPEOPLE"
	peopleVersion = 3
	// peopleVersionIndex is the version whose snapshots store kinds by
	// registry value (readSteps).
	peopleVersionIndex = 2
	peopleHeaderLen    = len(peopleMagic) + 4
	recHeaderLen       = 1 + 8
	macLen             = 32
)

const (
	recSnapshot = 'S'
	recRelease  = 'R'
	recAbort    = 'A'
)

// Op modes of an R record.
const (
	opAll = iota
	opSplitCovered
	opSplitUncovered
)

// Compaction thresholds (variables for tests).
var (
	compactMinListed = 1 << 16
	compactRecords   = 4096
)

type pclass struct {
	hist int32
	size uint64
}

type person struct {
	key   uint64
	class uint32
}

// snapshot locates the persons of an S record for streaming.
type snapshot struct {
	head    []byte // payload bytes before the persons
	persons int64  // file offset of the first person
	end     int64  // end of the payload
	n       uint64
	classes int // classes the snapshot defines
	mac     [macLen]byte
}

// people is a people file read: its classes and histories, the persons
// listed since the snapshot (overlay), and where the snapshot's persons
// are.
type people struct {
	path     string
	f        *os.File
	size     int64
	end      int64 // end of the last complete record
	h        *histories
	classes  []pclass
	overlay  []person // ascending keys, the latest class of each
	listed   int      // people listed by R records since the snapshot
	base     *snapshot
	records  int // records after the snapshot
	lastMAC  [macLen]byte
	lastRow  int
	lastLine []byte
	version  uint32 // the file's format version (peopleVersion, or peopleVersionIndex)
}

func peopleErr(path, format string, args ...any) error {
	return &Error{Path: path, Msg: "people file: " + fmt.Sprintf(format, args...)}
}

func (p *people) Close() {
	if p != nil && p.f != nil {
		p.f.Close()
	}
}

// persons is the number of people in the file.
func (p *people) persons() uint64 {
	var n uint64
	for _, c := range p.classes {
		n += c.size
	}
	return n
}

// recordMAC starts the MAC of a record of type typ after prev.
func recordMAC(k *Keys, prev [macLen]byte, typ byte) hash.Hash {
	m := k.mac()
	m.Write([]byte("labelprivacy/people\x00"))
	m.Write(prev[:])
	m.Write([]byte{typ})
	return m
}

// newPeopleHeader is the first bytes of every people file written.
func newPeopleHeader() []byte { return peopleHeader(peopleVersion) }

// peopleHeader is the header of a people file of the given version.
func peopleHeader(version uint32) []byte {
	return binary.LittleEndian.AppendUint32([]byte(peopleMagic), version)
}

// openPeople reads a people file's records (all but the snapshot's
// persons, which walk streams and verifies). (nil, nil) if it does not
// exist. write opens it for appending.
func openPeople(path string, k *Keys, write bool) (*people, error) {
	flag := os.O_RDONLY
	if write {
		flag = os.O_RDWR
	}
	f, err := os.OpenFile(path, flag, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	p := &people{path: path, f: f, h: newHistories()}
	if err := p.read(k); err != nil {
		f.Close()
		return nil, err
	}
	return p, nil
}

// read reads the people file's header and records (the snapshot's
// index, then each R or A record checked against its MAC chain) and
// builds the overlay of the people listed since the snapshot. A record
// cut short by a crash ends the file; any other damage is an error.
func (p *people) read(k *Keys) error {
	if err := p.readHeader(); err != nil {
		return err
	}
	var listed []listedPerson
	pos := int64(peopleHeaderLen)
	p.end = pos
	for seq := uint64(0); pos < p.size; seq++ {
		typ, start, end, mac, ok, err := p.recordAt(pos)
		if err != nil {
			return err
		}
		if !ok {
			break // a record cut short by a crash: ignored
		}
		switch typ {
		case recSnapshot:
			if pos != int64(peopleHeaderLen) {
				return peopleErr(p.path, "a snapshot after the first record (damaged)")
			}
			if err := p.readSnapshot(start, end); err != nil {
				return err
			}
			p.base.mac = mac
		case recRelease, recAbort:
			ps, err := p.readRecord(k, typ, seq, start, end, mac)
			if err != nil {
				return err
			}
			for _, x := range ps {
				listed = append(listed, listedPerson{x.key, seq, x.class})
			}
		default:
			return peopleErr(p.path, "record %d has type %d (damaged)", seq+1, typ)
		}
		p.lastMAC = mac
		pos = end + macLen
		p.end = pos
	}
	p.setOverlay(listed)
	return nil
}

// readHeader checks the people file's mode (no access for others), magic
// and version, and sets p.size (bytes) and p.version.
func (p *people) readHeader() error {
	st, err := p.f.Stat()
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if err := checkMode(p.path, st, 0o007, "people file", "o-rwx"); err != nil {
		return err
	}
	p.size = st.Size()
	var head [peopleHeaderLen]byte
	if _, err := p.f.ReadAt(head[:], 0); err != nil || string(head[:8]) != peopleMagic {
		return peopleErr(p.path, "not a people file of a privacy ledger")
	}
	p.version = binary.LittleEndian.Uint32(head[8:])
	if v := p.version; v != peopleVersion && v != peopleVersionIndex {
		return peopleErr(p.path, "version %d, want %d (a people file of an earlier format: move the ledger aside)", v, peopleVersion)
	}
	return nil
}

// recordAt reads the header and MAC of the record at byte pos: its type,
// its payload's bytes [start, end) and its MAC; ok is false for a record
// cut short (its header or payload past the file's end).
func (p *people) recordAt(pos int64) (typ byte, start, end int64, mac [macLen]byte, ok bool, err error) {
	var rh [recHeaderLen]byte
	if _, err := p.f.ReadAt(rh[:], pos); err != nil {
		return 0, 0, 0, mac, false, nil
	}
	typ, n := rh[0], binary.LittleEndian.Uint64(rh[1:])
	start = pos + recHeaderLen
	if n > uint64(p.size) || start+int64(n)+macLen > p.size {
		return 0, 0, 0, mac, false, nil
	}
	end = start + int64(n)
	if _, err := p.f.ReadAt(mac[:], end); err != nil {
		return 0, 0, 0, mac, false, fmt.Errorf("ledger: read %s: %w", p.path, err)
	}
	return typ, start, end, mac, true, nil
}

// readRecord reads record seq, an R or A record of type typ whose payload
// is [start, end): it checks its MAC (chained from the last record's),
// its row, and for a release the people it lists (returned, and counted
// in p.listed).
func (p *people) readRecord(k *Keys, typ byte, seq uint64, start, end int64, mac [macLen]byte) ([]person, error) {
	payload := make([]byte, end-start)
	if _, err := p.f.ReadAt(payload, start); err != nil {
		return nil, fmt.Errorf("ledger: read %s: %w", p.path, err)
	}
	m := recordMAC(k, p.lastMAC, typ)
	m.Write(payload)
	if !hmac.Equal(m.Sum(nil), mac[:]) {
		return nil, peopleErr(p.path, "record %d (for ledger row %d) fails its MAC: the file was altered, damaged, "+
			"or recorded with another key", seq+1, p.lastRow+1)
	}
	d := &dec{b: payload}
	if err := p.readRow(d, typ); err != nil {
		return nil, err
	}
	var listed []person
	if typ == recRelease {
		var err error
		if listed, err = p.replay(d); err != nil {
			return nil, err
		}
		p.listed += len(listed)
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = errors.New("trailing bytes")
	}
	if d.err != nil {
		return nil, peopleErr(p.path, "record %d: %v (damaged)", seq+1, d.err)
	}
	p.records++
	return listed, nil
}

// listedPerson is a person listed by release record seq, with its class.
type listedPerson struct {
	key, seq uint64
	class    uint32
}

// setOverlay sets p.overlay from the people listed since the snapshot:
// ascending keys, each with the class of the last record listing it.
func (p *people) setOverlay(listed []listedPerson) {
	slices.SortFunc(listed, func(a, b listedPerson) int {
		if c := cmp.Compare(a.key, b.key); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	for i, x := range listed {
		if i+1 < len(listed) && listed[i+1].key == x.key {
			continue // a later record moved this person again
		}
		p.overlay = append(p.overlay, person{x.key, x.class})
	}
}

// readRow reads the row a record names; it must be the next row.
func (p *people) readRow(d *dec, typ byte) error {
	row := d.uv()
	line := d.bytes(d.uv())
	if d.err != nil {
		return peopleErr(p.path, "record for ledger row %d: %v (damaged)", p.lastRow+1, d.err)
	}
	if typ == recSnapshot && row == 0 && len(line) == 0 {
		return nil
	}
	if typ != recSnapshot && row != uint64(p.lastRow)+1 || row > 1<<40 {
		return peopleErr(p.path, "a record names ledger row %d after row %d (damaged)", row, p.lastRow)
	}
	e, err := parseLine(line)
	if err != nil {
		return peopleErr(p.path, "the row of record for ledger row %d: %v", row, err)
	}
	if want := map[byte]Status{recRelease: StatusReleased, recAbort: StatusAborted}[typ]; typ != recSnapshot && e.Status != want {
		return peopleErr(p.path, "ledger row %d is %s in a %c record", row, e.Status, typ)
	}
	p.lastRow, p.lastLine = int(row), line
	return nil
}

// readSnapshot reads an S record's head: row, histories, classes.
func (p *people) readSnapshot(start, end int64) error {
	r := &byteReader{src: io.NewSectionReader(p.f, start, end-start), buf: make([]byte, 0, 1<<16)}
	fail := func(err error) error { return peopleErr(p.path, "snapshot: %v (damaged or truncated)", err) }
	d := &streamDec{r: r}
	row := d.uv()
	n := d.uv()
	if d.err == nil && n > 1<<20 {
		return fail(errors.New("row line too long"))
	}
	line := make([]byte, n)
	if d.err == nil {
		_, d.err = io.ReadFull(r, line)
	}
	if d.err != nil {
		return fail(d.err)
	}
	lb := (&dec{}).appendRow(row, line)
	if err := p.readRow(&dec{b: lb}, recSnapshot); err != nil {
		return err
	}
	nh := d.uv()
	if d.err == nil && nh > uint64(end-start) {
		return fail(errors.New("history count"))
	}
	ids := make([]int32, nh)
	for i := range nh {
		releases := d.uv()
		ns := d.uv()
		if d.err == nil && ns > 1<<16 {
			return fail(errors.New("step count"))
		}
		steps := make([]stepCount, 0, ns)
		for range ns {
			kind, err := p.readKind(d)
			if err != nil {
				return err
			}
			bits := d.u64()
			cnt := d.uv()
			s := pets.Step{Kind: kind, Epsilon: math.Float64frombits(bits)}
			if d.err == nil && (!(s.Epsilon >= 0) || cnt == 0 || cnt > 1<<31) {
				return fail(fmt.Errorf("history %d: invalid step", i))
			}
			steps = append(steps, stepCount{s, int(cnt)})
		}
		if d.err != nil {
			return fail(d.err)
		}
		if releases > 1<<31 || !slices.IsSortedFunc(steps, compareStepCounts) {
			return fail(fmt.Errorf("history %d out of order", i))
		}
		ids[i] = p.h.intern(int(releases), steps)
	}
	nc := d.uv()
	if d.err == nil && nc > uint64(end-start) {
		return fail(errors.New("class count"))
	}
	for range nc {
		h, size := d.uv(), d.uv()
		if d.err == nil && h >= nh {
			return fail(fmt.Errorf("class history %d of %d", h, nh))
		}
		if d.err != nil {
			return fail(d.err)
		}
		p.classes = append(p.classes, pclass{ids[h], size})
	}
	np := d.uv()
	if d.err != nil {
		return fail(d.err)
	}
	consumed := r.consumed
	head := make([]byte, consumed)
	if _, err := p.f.ReadAt(head, start); err != nil {
		return fail(err)
	}
	p.base = &snapshot{head: head, persons: start + consumed, end: end, n: np, classes: len(p.classes)}
	return nil
}

// readKind reads the mechanism of a snapshot step: its name (version 3),
// or (version 2) its registry value, which only a built-in kind's value
// names the same in every process.
func (p *people) readKind(d *streamDec) (pets.Kind, error) {
	if p.version == peopleVersionIndex {
		v := d.byte1()
		k := pets.Kind(v)
		if d.err == nil && !k.Builtin() {
			return 0, peopleErr(p.path, "version %d stores mechanism kinds by their place in the registry, and its "+
				"snapshot names kind %d, which is no built-in kind: the program that wrote it registered it from outside, "+
				"and another order of registration makes it another kind. It cannot be read correctly: move the ledger aside "+
				"(its CSV, %s, keeps every row, by mechanism name) and start a new one, or open it with the version that wrote it",
				peopleVersionIndex, v, File)
		}
		return k, nil
	}
	n := d.uv()
	if d.err == nil && n > 64 {
		d.err = errors.New("kind name too long")
	}
	name := make([]byte, n)
	if d.err == nil {
		_, d.err = io.ReadFull(d.r, name)
	}
	if d.err != nil {
		return 0, nil
	}
	k, err := pets.ParseKind(string(name))
	if err != nil {
		return 0, peopleErr(p.path, "a history names mechanism %q, which this program has not registered: "+
			"register it (pets.Register) before opening the ledger", name)
	}
	return k, nil
}

// replay applies an R record's ops to the classes and returns the people
// it lists (new classes).
func (p *people) replay(d *dec) ([]person, error) {
	e, err := parseLine(p.lastLine)
	if err != nil {
		return nil, err
	}
	s := pets.Step{Kind: e.Mechanism, Epsilon: e.Epsilon}
	ng := d.uv()
	if d.err == nil && ng > uint64(len(d.b)) {
		d.err = errors.New("charge count")
	}
	var chs []charge
	for range ng {
		var ch charge
		single, g := d.uv(), d.uv()
		if d.err == nil && (g > uint64(len(d.b)) || single > math.MaxUint32) {
			d.err = errors.New("charge")
		}
		ch.single = uint32(single)
		for range g {
			v := d.uv()
			if d.err == nil && (v < 2 || v > math.MaxUint32) {
				d.err = errors.New("charge group")
			}
			ch.groups = append(ch.groups, uint32(v))
		}
		if d.err == nil && ch.single == 0 && len(ch.groups) == 0 {
			d.err = errors.New("empty charge")
		}
		chs = append(chs, ch)
	}
	ops := d.uv()
	if d.err == nil && ops > uint64(len(d.b)) {
		d.err = errors.New("op count")
	}
	for range ops {
		c, ci, mode, n := d.uv(), d.uv(), d.byte1(), d.uv()
		if d.err != nil {
			break
		}
		if c >= uint64(len(p.classes)) || ci >= uint64(len(chs)) || mode > opSplitUncovered || n > p.classes[c].size {
			d.err = fmt.Errorf("op on class %d (of %d), charge %d, mode %d, %d people", c, len(p.classes), ci, mode, n)
			break
		}
		cl := &p.classes[c]
		grown := p.h.add(cl.hist, s, chs[ci])
		switch mode {
		case opAll:
			cl.hist = grown
		case opSplitCovered:
			cl.size -= n
			p.classes = append(p.classes, pclass{grown, n})
		case opSplitUncovered:
			old := cl.hist
			cl.hist, cl.size = grown, cl.size-n
			p.classes = append(p.classes, pclass{old, n})
		}
	}
	nf := d.uv()
	if d.err == nil && nf > uint64(len(d.b)) {
		d.err = errors.New("new-people count")
	}
	for range nf {
		ci, n := d.uv(), d.uv()
		if d.err == nil && ci >= uint64(len(chs)) {
			d.err = errors.New("new people's charge")
		}
		if d.err != nil {
			break
		}
		p.classes = append(p.classes, pclass{p.h.add(0, s, chs[ci]), n})
	}
	ne := d.uv()
	if d.err == nil && ne > uint64(len(d.b)) {
		d.err = errors.New("listed count")
	}
	var out []person
	var key uint64
	for i := range ne {
		delta, c := d.uv(), d.uv()
		if d.err != nil {
			break
		}
		if (i > 0 && delta == 0) || key+delta < key || c >= uint64(len(p.classes)) {
			d.err = fmt.Errorf("listed person %d out of order or of class %d (of %d)", i, c, len(p.classes))
			break
		}
		key += delta
		out = append(out, person{key, uint32(c)})
	}
	return out, d.err
}
