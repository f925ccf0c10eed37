package ledger

import (
	"crypto/hmac"
	"encoding/binary"
	"hash"
	"io"
	"math"
)

// walk visits every person of the file and every key of c (nil: none) in
// ascending key order: class is the person's class (−1 for a key the file
// lacks), ch the key's charge in c (−1 when c does not cover it). It
// verifies the snapshot's MAC and that each class holds as many people as
// it says; on error nothing visited may be trusted.
func (p *people) walk(k *Keys, c *covered, visit func(key uint64, class int32, ch int32)) error {
	counts := make([]uint64, len(p.classes))
	var it *baseIter
	var mac hash.Hash
	if p.base != nil {
		mac = recordMAC(k, [macLen]byte{}, recSnapshot)
		mac.Write(p.base.head)
		it = &baseIter{p: p, left: p.base.n, first: true,
			br: &byteReader{src: io.TeeReader(io.NewSectionReader(p.f, p.base.persons, p.base.end-p.base.persons), mac),
				buf: make([]byte, 0, 1<<16)}}
		if err := it.refill(); err != nil {
			return err
		}
	}
	ov, ci := 0, 0
	var keys []uint64
	if c != nil {
		keys = c.keys
	}
	for {
		haveBase := it != nil && it.i < len(it.keys)
		if !haveBase && ov == len(p.overlay) && ci == len(keys) {
			break
		}
		cur := uint64(math.MaxUint64)
		if haveBase {
			cur = it.keys[it.i]
		}
		if ov < len(p.overlay) && p.overlay[ov].key < cur {
			cur = p.overlay[ov].key
		}
		if ci < len(keys) && keys[ci] < cur {
			cur = keys[ci]
		}
		class := int32(-1)
		if haveBase && it.keys[it.i] == cur {
			class = int32(it.cls[it.i])
			it.i++
			if it.i == len(it.keys) {
				if err := it.refill(); err != nil {
					return err
				}
			}
		}
		if ov < len(p.overlay) && p.overlay[ov].key == cur {
			class = int32(p.overlay[ov].class)
			ov++
		}
		ch := int32(-1)
		if ci < len(keys) && keys[ci] == cur {
			ch = c.chargeOf(ci)
			ci++
		}
		if class >= 0 {
			counts[class]++
		}
		visit(cur, class, ch)
	}
	if it != nil {
		if _, err := it.br.ReadByte(); err != io.EOF {
			return peopleErr(p.path, "data after the snapshot's last person (damaged)")
		}
		if !hmac.Equal(mac.Sum(nil), p.base.mac[:]) {
			return peopleErr(p.path, "the snapshot fails its MAC: the file was altered, damaged, or recorded with another key")
		}
	}
	for i, cl := range p.classes {
		if counts[i] != cl.size {
			return peopleErr(p.path, "class %d holds %d people, its record says %d (damaged)", i, counts[i], cl.size)
		}
	}
	return nil
}

// baseIter decodes a snapshot's persons a block at a time.
type baseIter struct {
	p     *people
	br    *byteReader
	left  uint64
	key   uint64
	first bool
	keys  []uint64
	cls   []uint32
	i     int
}

// refill decodes the next block of persons (none after the last).
func (it *baseIter) refill() error {
	const block = 4096
	it.keys, it.cls, it.i = it.keys[:0], it.cls[:0], 0
	nc := uint64(it.p.base.classes)
	br := it.br
	for it.left > 0 && len(it.keys) < block {
		br.fill(2 * binary.MaxVarintLen64)
		d, n := binary.Uvarint(br.buf[br.pos:])
		if n <= 0 {
			return peopleErr(it.p.path, "snapshot person: truncated or damaged")
		}
		cl, m := binary.Uvarint(br.buf[br.pos+n:])
		if m <= 0 {
			return peopleErr(it.p.path, "snapshot person: truncated or damaged")
		}
		br.pos += n + m
		br.consumed += int64(n + m)
		if (!it.first && d == 0) || it.key+d < it.key {
			return peopleErr(it.p.path, "snapshot person keys not strictly increasing (damaged)")
		}
		if cl >= nc {
			return peopleErr(it.p.path, "snapshot person of class %d of %d (damaged)", cl, nc)
		}
		it.first = false
		it.key += d
		it.keys = append(it.keys, it.key)
		it.cls = append(it.cls, uint32(cl))
		it.left--
	}
	return nil
}
