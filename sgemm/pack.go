package sgemm

// packA and packB copy with the assembly helpers (SSE2/AVX moves) when
// kern is an assembly kernel: every amd64 CPU that runs one has them.

// packA copies A[ic:ic+mb, pc:pc+kb] into dst as panels of mr rows:
// dst[r·kb + k·mr + i] = A(ic+r+i, pc+k) for panel start r, zero past mb.
func packA(kern Kernel, dst []float32, a Strided, ic, mb, pc, kb int) {
	for r := 0; r < mb; r += mr {
		rows := min(mr, mb-r)
		p := dst[r*kb : (r+mr)*kb]
		base := (ic+r)*a.Row + pc*a.Col
		switch {
		case rows == mr && a.Col == 1:
			// Rows contiguous in k (row-major A): six read streams, one
			// sequential write.
			s0 := a.Data[base : base+kb]
			s1 := a.Data[base+a.Row : base+a.Row+kb]
			s2 := a.Data[base+2*a.Row : base+2*a.Row+kb]
			s3 := a.Data[base+3*a.Row : base+3*a.Row+kb]
			s4 := a.Data[base+4*a.Row : base+4*a.Row+kb]
			s5 := a.Data[base+5*a.Row : base+5*a.Row+kb]
			for k := range kb {
				d := (*[mr]float32)(p[k*mr : k*mr+mr])
				d[0], d[1], d[2], d[3], d[4], d[5] = s0[k], s1[k], s2[k], s3[k], s4[k], s5[k]
			}
		case rows == mr && a.Row == 1:
			// Columns contiguous in m (Aᵀ row-major): six at a time.
			last := base + (kb-1)*a.Col
			_, _ = p[kb*mr-1], a.Data[last+mr-1] // bounds of the assembly copy
			if kern != KernelGo {
				copyRows6(&p[0], &a.Data[base], a.Col, kb)
				break
			}
			for k := range kb {
				o := base + k*a.Col
				s, d := a.Data[o:o+mr], p[k*mr:k*mr+mr]
				d[0], d[1], d[2], d[3], d[4], d[5] = s[0], s[1], s[2], s[3], s[4], s[5]
			}
		default:
			for k := range kb {
				d := p[k*mr : k*mr+mr]
				o := base + k*a.Col
				for i := range rows {
					d[i] = a.Data[o+i*a.Row]
				}
				clear(d[rows:])
			}
		}
	}
}

// packB copies B[pc:pc+kb, jc:jc+nb] into dst as panels of nr columns:
// dst[j·kb + k·nr + jj] = B(pc+k, jc+j+jj) for panel start j, zero past nb.
func packB(kern Kernel, dst []float32, b Strided, pc, kb, jc, nb int) {
	for j := 0; j < nb; j += nr {
		cols := min(nr, nb-j)
		p := dst[j*kb : (j+nr)*kb]
		base := pc*b.Row + (jc+j)*b.Col
		switch {
		case b.Col == 1 && cols == nr:
			// Rows contiguous in n (row-major B): sixteen at a time.
			last := base + (kb-1)*b.Row
			_, _ = p[kb*nr-1], b.Data[last+nr-1] // bounds of the assembly copy
			if kern != KernelGo {
				copyRows16(&p[0], &b.Data[base], b.Row, kb)
				break
			}
			for k := range kb {
				o := base + k*b.Row
				copy(p[k*nr:k*nr+nr], b.Data[o:o+nr])
			}
		case b.Col == 1:
			for k := range kb {
				o := base + k*b.Row
				d := p[k*nr : k*nr+nr]
				copy(d, b.Data[o:o+cols])
				clear(d[cols:])
			}
		case b.Row == 1 && cols == nr:
			// Columns contiguous in k (Bᵀ row-major): sixteen read streams,
			// one sequential write.
			var s [nr][]float32
			for jj := range s {
				s[jj] = b.Data[base+jj*b.Col : base+jj*b.Col+kb]
			}
			for k := range kb {
				d := (*[nr]float32)(p[k*nr : k*nr+nr])
				for jj := range d {
					d[jj] = s[jj][k]
				}
			}
		default:
			for k := range kb {
				d := p[k*nr : k*nr+nr]
				o := base + k*b.Row
				for jj := range cols {
					d[jj] = b.Data[o+jj*b.Col]
				}
				clear(d[cols:])
			}
		}
	}
}
