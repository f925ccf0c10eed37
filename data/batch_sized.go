package data

import "io"

// pack packs the epoch's unit order into its batches (SizedBags): bags in
// order join the open batch while it has room for their rows (BatchSize)
// and a slot (BagSize); a bag that does not fit opens the next batch, until
// the epoch's batches are all open, after which the bags that do not fit
// are left out of the epoch (DroppedBags, the epoch's count). The order is
// rearranged so that each batch's bags are consecutive, the left-out ones
// last.
func (s *BatchSource) pack() {
	n, u := s.o.BatchSize, s.o.BagSize
	kept := make([]int32, 0, len(s.order))
	var left []int32
	s.packed = append(s.packed[:0], 0)
	rows, slots := 0, 0
	for _, b := range s.order {
		size := int(s.bagStart[b+1] - s.bagStart[b])
		if rows+size > n || slots == u {
			if len(s.packed) == s.batches { // the last batch is full
				left = append(left, b)
				continue
			}
			s.packed = append(s.packed, int32(len(kept)))
			rows, slots = 0, 0
		}
		kept = append(kept, b)
		rows, slots = rows+size, slots+1
	}
	for len(s.packed) <= s.batches {
		s.packed = append(s.packed, int32(len(kept)))
	}
	s.DroppedBags = len(left)
	copy(s.order, append(kept, left...))
}

// nextSized is Next for SizedBags: batch s.pos of the epoch's packing.
func (s *BatchSource) nextSized() (*Batch, error) {
	if s.pos >= s.batches {
		return nil, io.EOF
	}
	units := s.order[s.packed[s.pos]:s.packed[s.pos+1]]
	s.pos++
	b := &s.b
	f := s.feat
	gather := !s.o.IndexOnly
	d, n, u := f.Dim(), s.o.BatchSize, s.o.BagSize
	w := max(s.width, 1)
	b.size(n, d, gather, gather && f.HasSparse())
	b.Target = grow(b.Target, u*w+u+n)
	clear(b.Target)
	alpha, sizes, slot := b.Target[:u*w], b.Target[u*w:u*w+u], b.Target[u*w+u:]
	for i := range slot {
		slot[i] = -1
	}
	r := 0
	var one [1]int32
	put := func(src int) {
		fr := src
		if s.rowOf != nil {
			fr = int(s.rowOf[src])
		}
		b.RowIDs[r] = int32(fr)
		if gather {
			copy(b.X[r*d:(r+1)*d], f.X[fr*d:(fr+1)*d])
			if f.HasSparse() {
				for t, v := range f.Indices[f.Offsets[fr]:f.Offsets[fr+1]] {
					b.Indices[r*b.Width+t] = int32(v)
					b.IndexMask[r*b.Width+t] = 1
				}
			}
		}
		r++
	}
	for k, unit := range units {
		copy(alpha[k*w:(k+1)*w], s.target[int(unit)*w:(int(unit)+1)*w])
		rows := s.unitRows(unit, &one)
		sizes[k] = float32(len(rows))
		for _, src := range rows {
			slot[r] = float32(k)
			put(int(src))
		}
	}
	pad := int(s.bagRows[0]) // any row of a bag
	for r < n {
		put(pad) // padding: in no slot
	}
	if d == 0 || !gather {
		b.X = nil
	}
	if !gather {
		b.Indices, b.IndexMask = nil, nil
	}
	return b, nil
}
