package ledger

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"labelprivacy/internal/par"
	"labelprivacy/pets"
)

// Release describes a release about to be published. The caller fills it
// (person keys with the ledger's Keys) and calls Ledger.Record before a
// byte of the release file is written, and Ledger.Abort if writing it then
// fails.
type Release struct {
	ID       string   // unique release id (e.g. 128 random bits in hex); no control characters
	Input    string   // the labelled file released (for the reader); no control characters
	Labels   string   // Keys.Labels of the released label column
	Identity Identity // the rule People were computed by; one per ledger
	IDColumn IDColumn // rule ByID: the id column (name and type); one per ledger
	// People holds the person key (PersonHasher) of each release row, in
	// any order: a person with m rows is charged for each of them. Record
	// and Plan sort it in place (a caller releasing one set of people many
	// times passes the same slice: sorting a sorted slice costs one scan).
	People []uint64
	// Draws, when not nil, holds for each release row (aligned with People,
	// before sorting) the noise draw it was released through, in
	// non-decreasing order: the bag of an LLP release, whose rows share one
	// proportion. A person's rows in one draw are charged as one group
	// (pets.Step.Group: m·ε), rows in different draws as independent
	// releases. Nil: every row is its own draw (rr, rr_prior, bot).
	Draws    []int64
	KeyCheck string          // Keys.Check of the key People and Labels were computed with
	Mech     *pets.Mechanism // the mechanism applied
	Noise    pets.Noise      // how its randomness was drawn
	Seed     string          // decimal uint64 seed for the seeded kinds, "" for NoiseSecure
	Path     string          // release file path; no control characters
	SHA256   string          // hex SHA-256 (64 lowercase digits) of the release file's bytes
}

// release rebuilds the Release a row records (for validation; Mech is
// rebuilt from the row's kind, k and ε where they form a valid mechanism,
// pets.PrivacyParams: of the same privacy for a kind of more parameters).
func (e Row) release() Release {
	m, err := pets.New(pets.PrivacyParams(e.Mechanism, e.K, e.Epsilon))
	if err == nil && m.Epsilon() != e.Epsilon && !(math.IsInf(m.Epsilon(), 1) && math.IsInf(e.Epsilon, 1)) {
		m = nil
	}
	return Release{ID: e.ID, Input: e.Input, Labels: e.Labels, Identity: e.Identity, IDColumn: e.IDColumn, Mech: m, Noise: e.Noise,
		Seed: e.Seed, Path: e.Path, SHA256: e.SHA256}
}

// validate checks a Release about to be recorded; errors are *ParamError
// naming "release.<field>".
func (r *Release) validate() error {
	if err := r.validateFields(); err != nil {
		return err
	}
	bad := func(field, msg string) error { return &ParamError{Param: "release." + field, Msg: msg} }
	switch {
	case len(r.People) == 0:
		return bad("people", "no person keys: a release covers at least one row")
	case r.Draws != nil && len(r.Draws) != len(r.People):
		return bad("draws", fmt.Sprintf("%d draws for %d rows", len(r.Draws), len(r.People)))
	case r.Draws != nil && !slices.IsSorted(r.Draws):
		return bad("draws", "not in non-decreasing order (rows of one draw must be contiguous)")
	case len(r.KeyCheck) != 32 || !isHex(r.KeyCheck):
		return bad("key_check", fmt.Sprintf("%q is not a Keys.Check", r.KeyCheck))
	}
	return nil
}

// validateFields checks the fields a ledger row stores.
func (r Release) validateFields() error {
	bad := func(field, msg string) error { return &ParamError{Param: "release." + field, Msg: msg} }
	switch {
	case r.ID == "" || hasControl(r.ID) || len(r.ID) > 1<<12:
		return bad("id", fmt.Sprintf("%q: must be non-empty, without control characters", r.ID))
	case hasControl(r.Input):
		return bad("input", fmt.Sprintf("%q has control characters", r.Input))
	case !strings.HasPrefix(r.Labels, "hmac-sha256:") || len(r.Labels) != 12+64 || !isHex(r.Labels[12:]):
		return bad("labels", fmt.Sprintf("%q is not a Keys.Labels digest (hmac-sha256: and 64 lowercase hex digits)", r.Labels))
	case !r.Identity.Valid():
		return bad("identity", fmt.Sprintf("%q is not one of %q, %q, %q", r.Identity, ByID, ByFeatures, ByStandardizedFeatures))
	case r.IDColumn.valid(r.Identity) != nil:
		return bad("id_column", r.IDColumn.valid(r.Identity).Error())
	case r.Mech == nil:
		return bad("mech", "nil mechanism (or mechanism, k and epsilon that do not form one)")
	case !r.Noise.Valid():
		return bad("noise", fmt.Sprintf("%q is not one of %q, %q, %q", r.Noise, pets.NoiseSecure, pets.NoiseSeeded, pets.NoiseSimulation))
	case r.Noise == pets.NoiseSecure && r.Seed != "":
		return bad("seed", "a secure release has no seed")
	case r.Noise != pets.NoiseSecure && !isSeed(r.Seed):
		return bad("seed", fmt.Sprintf("%q is not a decimal uint64 (required for %s noise)", r.Seed, r.Noise))
	case r.Path == "" || hasControl(r.Path):
		return bad("path", fmt.Sprintf("%q: must be non-empty, without control characters", r.Path))
	case len(r.SHA256) != 64 || !isHex(r.SHA256):
		return bad("sha256", fmt.Sprintf("%q is not 64 lowercase hex digits", r.SHA256))
	}
	return nil
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(c rune) bool { return c < 0x20 || c == 0x7f })
}

// isSeed reports whether s is a canonical decimal uint64.
func isSeed(s string) bool {
	v, err := strconv.ParseUint(s, 10, 64)
	return err == nil && strconv.FormatUint(v, 10) == s
}

// charge is what one release costs one person: single draws holding one
// of its rows, and the sizes (≥ 2, ascending) of draws holding several.
// charge{1, nil} is the common case: one row.
type charge struct {
	single uint32
	groups []uint32
}

// String is a canonical name of the charge (for interning).
func (c charge) String() string {
	var b strings.Builder
	b.WriteString(strconv.FormatUint(uint64(c.single), 10))
	for _, g := range c.groups {
		b.WriteByte('+')
		b.WriteString(strconv.FormatUint(uint64(g), 10))
	}
	return b.String()
}

// steps adds the steps of the charge through a release of step s to m.
func (c charge) steps(s pets.Step, m map[pets.Step]int) {
	if c.single > 0 {
		m[s] += int(c.single)
	}
	for _, g := range c.groups {
		m[s.Group(int(g))]++
	}
}

// covered is a release's people: distinct keys ascending, each with its
// charge.
type covered struct {
	keys    []uint64
	charge  []int32  // index into charges for each key; nil: all charges[0]
	charges []charge // charges[0] is one row
	rows    int
}

func (c *covered) chargeOf(i int) int32 {
	if c.charge == nil {
		return 0
	}
	return c.charge[i]
}

// coveredBy turns a release's rows into its people and their charges. It
// sorts r.People in place.
func coveredBy(r *Release) *covered {
	c := &covered{charges: []charge{{single: 1}}, rows: len(r.People)}
	index := map[string]int32{"1": 0}
	intern := func(ch charge) int32 {
		k := ch.String()
		i, ok := index[k]
		if !ok {
			i = int32(len(c.charges))
			index[k] = i
			c.charges = append(c.charges, ch)
		}
		return i
	}
	var keys []uint64
	if r.Draws == nil {
		keys = sortKeys(r.People)
	} else {
		keys = sortKeys(slices.Clone(r.People))
	}
	if !hasDup(keys) {
		c.keys = keys
		return c
	}
	// Several rows of some people: count them, by draw when draws are given.
	// With draws, keys is this function's copy, compacted in place (8 bytes
	// a row less at a KDD12-size release); without, it is the caller's
	// People, which a caller may pass again: distinct is a new slice.
	var distinct []uint64
	if r.Draws != nil {
		distinct = keys[:0]
	} else {
		distinct = make([]uint64, 0, len(keys))
	}
	var dups []uint64
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j] == keys[i] {
			j++
		}
		if j-i > 1 {
			dups = append(dups, keys[i])
		}
		distinct = append(distinct, keys[i]) // at most at i: never over a key not yet read
		i = j
	}
	c.keys = distinct
	c.charge = make([]int32, len(distinct))
	if r.Draws == nil {
		at := 0
		for i, k := range distinct {
			n := 0
			for at < len(keys) && keys[at] == k {
				at++
				n++
			}
			if n > 1 {
				c.charge[i] = intern(charge{single: uint32(n)})
			}
		}
		return c
	}
	type rowDraw struct {
		key  uint64
		draw int64
	}
	var pairs []rowDraw
	for i, k := range r.People {
		if _, ok := slices.BinarySearch(dups, k); ok {
			pairs = append(pairs, rowDraw{k, r.Draws[i]})
		}
	}
	slices.SortFunc(pairs, func(a, b rowDraw) int {
		if c := cmp.Compare(a.key, b.key); c != 0 {
			return c
		}
		return cmp.Compare(a.draw, b.draw)
	})
	for i := 0; i < len(pairs); {
		key := pairs[i].key
		var ch charge
		for i < len(pairs) && pairs[i].key == key {
			j := i + 1
			for j < len(pairs) && pairs[j].key == key && pairs[j].draw == pairs[i].draw {
				j++
			}
			if j-i == 1 {
				ch.single++
			} else {
				ch.groups = append(ch.groups, uint32(j-i))
			}
			i = j
		}
		slices.Sort(ch.groups)
		at, _ := slices.BinarySearch(distinct, key)
		c.charge[at] = intern(ch)
	}
	return c
}

func hasDup(sorted []uint64) bool {
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return true
		}
	}
	return false
}

// sortKeys sorts keys in place and returns them: an in-place distribution
// on the top byte (American flag sort), then each of the 256 buckets
// sorted on its own, on every core (10M keys: about 0.3 s on 2 cores
// against 0.8 s for slices.Sort). A sorted input costs one scan.
func sortKeys(keys []uint64) []uint64 {
	if slices.IsSorted(keys) {
		return keys
	}
	if len(keys) < 1<<16 {
		slices.Sort(keys)
		return keys
	}
	var start, next [257]int
	for _, k := range keys {
		start[k>>56+1]++
	}
	for b := 1; b <= 256; b++ {
		start[b] += start[b-1]
	}
	copy(next[:], start[:])
	for b := range 256 {
		for i := next[b]; i < start[b+1]; i = next[b] {
			k := keys[i]
			for d := int(k >> 56); d != b; d = int(k >> 56) { // cycle k home
				keys[next[d]], k = k, keys[next[d]]
				next[d]++
			}
			keys[i] = k
			next[b]++
		}
	}
	par.Each(256, 0, func(_, b int) { slices.Sort(keys[start[b]:start[b+1]]) })
	return keys
}
