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
// neighbouring panels go to the kernel together when they live in the same
// place (both in place, or both packed), else one at a time.
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
	aPanel := func(ir int) panel {
		rows := min(mr, mb-ir)
		switch {
		case !direct:
			return panel{w.a, ir * kb, 1, mr, 1, rows}
		case ir < full:
			return panel{a.Data, (ic+ir)*a.Row + pc*a.Col, a.Row, a.Col, 0, mr}
		}
		return panel{w.a, 0, 1, mr, 1, rows}
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
	for jr := 0; jr < nb; jr += cp * nr {
		nbp := 1
		bs[0] = bPanel(jr)
		if cp == 2 && jr+nr < nb {
			bs[1], nbp = bPanel(jr+nr), 2
		}
		for ir := 0; ir < mb; ir += rp * mr {
			nap := 1
			as[0] = aPanel(ir)
			if rp == 2 && ir+mr < mb {
				as[1], nap = aPanel(ir+mr), 2
			}
			for ai := 0; ai < nap; {
				na := 1
				if ai == 0 && nap == 2 && as[0].src == as[1].src {
					na = 2
				}
				for bi := 0; bi < nbp; {
					nbb := 1
					if bi == 0 && nbp == 2 && bs[0].src == bs[1].src {
						nbb = 2
					}
					tileAt(kern, w, as[ai:ai+na], bs[bi:bi+nbb], c, ic+ir+ai*mr, jc+jr+bi*nr, kb, acc)
					bi += nbb
				}
				ai += na
			}
		}
	}
}

// tileAt runs the kernel on A panels as (rows from i0) and B panels bs
// (columns from j0), one or two of each, and stores (or, with acc, adds)
// the real rows and columns into C: directly when the whole tile is real
// and C's rows are contiguous, else through w.tile.
func tileAt(kern Kernel, w *work, as, bs []panel, c Strided, i0, j0, kb int, acc bool) {
	a0, b0 := as[0], bs[0]
	tr, tc := len(as)*mr, len(bs)*nr
	rows, cols := tr-mr+as[len(as)-1].n, tc-nr+bs[len(bs)-1].n
	apan, bpan := as[len(as)-1].off-a0.off, bs[len(bs)-1].off-b0.off
	a, bv := a0.data[a0.off:], b0.data[b0.off:]
	off := i0*c.Row + j0*c.Col
	if rows == tr && cols == tc && c.Col == 1 {
		kernel(kern, kb, a, a0.rs, a0.ks, apan, len(as), bv, b0.ks, bpan, len(bs), c.Data[off:off+(tr-1)*c.Row+tc], c.Row, acc)
		return
	}
	kernel(kern, kb, a, a0.rs, a0.ks, apan, len(as), bv, b0.ks, bpan, len(bs), w.tile[:tr*tc], tc, false)
	for i := range rows {
		row := c.Data[off+i*c.Row:]
		t := w.tile[i*tc : i*tc+cols]
		if acc {
			for j, v := range t {
				row[j*c.Col] += v
			}
		} else {
			for j, v := range t {
				row[j*c.Col] = v
			}
		}
	}
}
