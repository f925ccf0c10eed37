package sgemm

// panel is one A panel (mr rows) or B panel (nr columns) of a block, where
// the kernel reads it: A(i, k) = data[off + i·rs + k·ks], B(k, j) =
// data[off + k·ks + j]. Panels of the same src (0: the operand read in
// place, 1: packed) lie a fixed distance apart, so a kernel can take two
// of them at once. n is how many of its rows (columns) are real; the rest
// are zero padding.
type panel struct {
	data   []float32
	off    int
	rs, ks int
	src    int
	n      int
}

// macro multiplies A[ic:ic+mb, pc:pc+kb] by the packed block b
// (kb×nb) into C[ic:ic+mb, jc:jc+nb], adding to C when acc, else
// overwriting it. A is read in place when its rows are contiguous (the
// kernel takes A's strides and reads a panel's six rows as six streams);
// otherwise (A with contiguous columns reads a new cache line per k: it is
// faster packed), and for a last panel of fewer than six rows, it is packed
// into w.a first.
//
// B is the packed block bp, or with directB, B read in place (whole
// 16-column panels) and bp the packed last panel when nb is not a multiple
// of 16.
//
// The kernel's tile covers rp A panels and cp B panels (kern.tile); two
// neighbouring B panels go to the kernel together when they live in the
// same place (both in place, or both packed), else one at a time. For each
// B panel (pair) one kernel call walks the strip of every whole A panel
// (pair) of the block and stores straight into C, or into w.strip first
// when B has columns past nb or C a column stride; a last A panel of fewer
// than six rows goes through tileAt.
func macro(kern Kernel, w *work, a, b Strided, bp []float32, directB bool, c Strided, ic, mb, jc, nb, pc, kb int, acc bool) {
	direct := a.Col == 1
	full := mb / mr * mr // rows in whole panels
	switch {
	case !direct:
		w.a = grow(w.a, kb*padded(mb, mr))
		packA(kern, w.a, a, ic, mb, pc, kb)
	case full < mb:
		w.a = grow(w.a, kb*mr)
		packA(kern, w.a, a, ic+full, mb-full, pc, kb)
	}
	// The whole A panels: the first at ad, the next apan elements on.
	ad, ars, aks, apan := w.a, 1, mr, mr*kb
	if direct {
		ad, ars, aks, apan = a.Data[ic*a.Row+pc*a.Col:], a.Row, a.Col, mr*a.Row
	}
	aPanel := func(ir int) panel {
		if ir < full {
			return panel{ad, ir / mr * apan, ars, aks, 0, mr}
		}
		off := full * kb // the last, partial panel, packed
		if direct {
			off = 0
		}
		return panel{w.a, off, 1, mr, 1, mb - full}
	}
	bPanel := func(jr int) panel {
		cols := min(nr, nb-jr)
		switch {
		case !directB:
			return panel{bp, jr * kb, 0, nr, 1, cols}
		case cols == nr:
			return panel{b.Data, pc*b.Row + jc + jr, 0, b.Row, 0, nr}
		}
		return panel{bp, 0, 0, nr, 1, cols}
	}
	rp, cp := kern.tile()
	var as, bs [2]panel
	for jr := 0; jr < nb; {
		bs[0] = bPanel(jr)
		nbp := 1
		if cp == 2 && jr+nr < nb {
			if bs[1] = bPanel(jr + nr); bs[1].src == bs[0].src {
				nbp = 2
			}
		}
		j0, tc := jc+jr, nbp*nr
		cols := min(tc, nb-jr)
		b0 := bs[0]
		bv, bpan := b0.data[b0.off:], bs[nbp-1].off-b0.off
		// Strips of rp-panel tiles, then (rp = 2) one 6-row tile: straight
		// into C when every column is real and C's rows are contiguous,
		// else into w.strip and from there into C.
		for i, r := 0, rp; i < full; r = 1 {
			tiles := (full - i) / (r * mr)
			if tiles == 0 {
				continue
			}
			rows := tiles * r * mr
			if cols == tc && c.Col == 1 {
				off := (ic+i)*c.Row + j0
				kernel(kern, kb, ad[i/mr*apan:], ars, aks, apan, r, bv, b0.ks, bpan, nbp,
					c.Data[off:off+(rows-1)*c.Row+tc], c.Row, tiles, acc)
			} else {
				w.strip = grow(w.strip, rows*tc)
				kernel(kern, kb, ad[i/mr*apan:], ars, aks, apan, r, bv, b0.ks, bpan, nbp, w.strip, tc, tiles, false)
				storeRows(c, w.strip, tc, ic+i, j0, rows, cols, acc)
			}
			i += rows
		}
		if full < mb {
			as[0] = aPanel(full)
			tileAt(kern, w, as[:1], bs[:nbp], c, ic+full, j0, kb, acc)
		}
		jr += tc
	}
}

// tileAt runs the kernel on one A panel as[0] (rows from i0) and the B
// panels bs (columns from j0, one or two) into w.tile, and stores (or, with
// acc, adds) the real rows and columns into C.
func tileAt(kern Kernel, w *work, as, bs []panel, c Strided, i0, j0, kb int, acc bool) {
	a0, b0 := as[0], bs[0]
	tc := len(bs) * nr
	bpan := bs[len(bs)-1].off - b0.off
	kernel(kern, kb, a0.data[a0.off:], a0.rs, a0.ks, 0, 1, b0.data[b0.off:], b0.ks, bpan, len(bs), w.tile[:mr*tc], tc, 1, false)
	storeRows(c, w.tile[:], tc, i0, j0, a0.n, tc-nr+bs[len(bs)-1].n, acc)
}

// storeRows stores (or, with acc, adds) rows×cols of t (rows ld apart) into
// C from (i0, j0).
func storeRows(c Strided, t []float32, ld, i0, j0, rows, cols int, acc bool) {
	off := i0*c.Row + j0*c.Col
	for i := range rows {
		row := c.Data[off+i*c.Row:]
		t := t[i*ld : i*ld+cols]
		switch {
		case c.Col == 1 && acc:
			row = row[:cols]
			for j, v := range t {
				row[j] += v
			}
		case c.Col == 1:
			copy(row[:cols], t)
		case acc:
			for j, v := range t {
				row[j*c.Col] += v
			}
		default:
			for j, v := range t {
				row[j*c.Col] = v
			}
		}
	}
}
