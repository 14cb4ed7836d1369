package cpu

import "math"

// One decimation-in-frequency Stockham stage over s interleaved sequences
// of length ncur = r·m: for p < m, q < s and k < r,
//
//	y[q + s·(r·p + k)] = ω_ncur^(p·k) · Σ_j x[q + s·(p + j·m)] ω_r^(j·k).
//
// The next stage sees s·r sequences of length m, and after the last one
// the result is in natural order (the "autosort" that spares a
// bit-reversal pass). With s > 1 the inner loop runs over q with the
// twiddles fixed; with s = 1 it runs over p.
func stockhamStage(st *fftStage, x, y []complex64, s int) {
	switch st.r {
	case 4:
		stage4(st, x, y, s)
	case 2:
		stage2(st, x, y, s)
	case 3:
		stage3(st, x, y, s)
	case 5:
		stage5(st, x, y, s)
	default:
		stageOdd(st, x, y, s)
	}
}

// cmul is a complex product in float32: Go widens complex64 operands of
// * to float64 and rounds back, which costs six conversions a product.
func cmul(a, b complex64) complex64 {
	ar, ai, br, bi := real(a), imag(a), real(b), imag(b)
	return complex(ar*br-ai*bi, ar*bi+ai*br)
}

// rmul multiplies z by the real c.
func rmul(z complex64, c float32) complex64 { return complex(real(z)*c, imag(z)*c) }

// mulI returns i·z, or -i·z when neg.
func mulI(z complex64, neg bool) complex64 {
	if neg {
		return complex(imag(z), -real(z))
	}
	return complex(-imag(z), real(z))
}

// The re-slicings to len(x0) and the fixed-size windows of tw and y are
// there to let the compiler drop the bounds checks of the inner loops.

func stage2(st *fftStage, x, y []complex64, s int) {
	m, tw := st.m, st.tw
	sm := s * m
	if s == 1 {
		x0 := x[:m]
		x1, tw := x[m : 2*m][:len(x0)], tw[:len(x0)]
		for p := range x0 {
			a0, a1 := x0[p], x1[p]
			o := y[2*p:][:2]
			o[0] = a0 + a1
			o[1] = cmul(a0-a1, tw[p])
		}
		return
	}
	for p := range m {
		w := tw[p]
		x0 := x[s*p : s*p+s]
		x1 := x[s*p+sm:][:len(x0)]
		y0, y1 := y[2*s*p:][:len(x0)], y[2*s*p+s:][:len(x0)]
		for q := range x0 {
			a0, a1 := x0[q], x1[q]
			y0[q] = a0 + a1
			y1[q] = cmul(a0-a1, w)
		}
	}
}

func stage4(st *fftStage, x, y []complex64, s int) {
	m, tw, fwd := st.m, st.tw, !st.inv
	sm := s * m
	if s == 1 {
		x0 := x[:m]
		x1, x2, x3 := x[m:][:len(x0)], x[2*m:][:len(x0)], x[3*m:][:len(x0)]
		for p := range x0 {
			a0, a1, a2, a3 := x0[p], x1[p], x2[p], x3[p]
			t0, t1 := a0+a2, a0-a2
			t2, t3 := a1+a3, mulI(a1-a3, fwd)
			w := tw[3*p:][:3]
			o := y[4*p:][:4]
			o[0] = t0 + t2
			o[1] = cmul(t1+t3, w[0])
			o[2] = cmul(t0-t2, w[1])
			o[3] = cmul(t1-t3, w[2])
		}
		return
	}
	for p := range m {
		w := tw[3*p:][:3]
		w1, w2, w3 := w[0], w[1], w[2]
		i := s * p
		x0 := x[i : i+s]
		x1, x2, x3 := x[i+sm:][:len(x0)], x[i+2*sm:][:len(x0)], x[i+3*sm:][:len(x0)]
		o := 4 * s * p
		y0, y1, y2, y3 := y[o:][:len(x0)], y[o+s:][:len(x0)], y[o+2*s:][:len(x0)], y[o+3*s:][:len(x0)]
		if p == 0 {
			for q := range x0 {
				a0, a1, a2, a3 := x0[q], x1[q], x2[q], x3[q]
				t0, t1 := a0+a2, a0-a2
				t2, t3 := a1+a3, mulI(a1-a3, fwd)
				y0[q] = t0 + t2
				y1[q] = t1 + t3
				y2[q] = t0 - t2
				y3[q] = t1 - t3
			}
			continue
		}
		for q := range x0 {
			a0, a1, a2, a3 := x0[q], x1[q], x2[q], x3[q]
			t0, t1 := a0+a2, a0-a2
			t2, t3 := a1+a3, mulI(a1-a3, fwd)
			y0[q] = t0 + t2
			y1[q] = cmul(t1+t3, w1)
			y2[q] = cmul(t0-t2, w2)
			y3[q] = cmul(t1-t3, w3)
		}
	}
}

// sign is -1 for a forward stage and +1 for an inverse one: the sign of
// the exponent.
func (st *fftStage) sign() float64 {
	if st.inv {
		return 1
	}
	return -1
}

func stage3(st *fftStage, x, y []complex64, s int) {
	m, tw := st.m, st.tw
	sm := s * m
	c := float32(st.sign() * math.Sqrt(3) / 2)
	bfly := func(a0, a1, a2 complex64) (complex64, complex64, complex64) {
		t1 := a1 + a2
		t2 := a0 - rmul(t1, 0.5)
		v := rmul(a1-a2, c)
		iv := complex(-imag(v), real(v))
		return a0 + t1, t2 + iv, t2 - iv
	}
	for p := range m {
		w1, w2 := tw[2*p], tw[2*p+1]
		i := s * p
		x0, x1, x2 := x[i:i+s], x[i+sm:i+sm+s], x[i+2*sm:i+2*sm+s]
		o := 3 * s * p
		y0, y1, y2 := y[o:o+s], y[o+s:o+2*s], y[o+2*s:o+3*s]
		for q := range x0 {
			b0, b1, b2 := bfly(x0[q], x1[q], x2[q])
			y0[q], y1[q], y2[q] = b0, cmul(b1, w1), cmul(b2, w2)
		}
	}
}

func stage5(st *fftStage, x, y []complex64, s int) {
	m, tw := st.m, st.tw
	sm := s * m
	sg := st.sign()
	c1, c2 := float32(math.Cos(2*math.Pi/5)), float32(math.Cos(4*math.Pi/5))
	s1, s2 := float32(sg*math.Sin(2*math.Pi/5)), float32(sg*math.Sin(4*math.Pi/5))
	for p := range m {
		w := tw[4*p : 4*p+4]
		i := s * p
		x0, x1, x2, x3, x4 := x[i:i+s], x[i+sm:i+sm+s], x[i+2*sm:i+2*sm+s], x[i+3*sm:i+3*sm+s], x[i+4*sm:i+4*sm+s]
		o := 5 * s * p
		y0, y1, y2, y3, y4 := y[o:o+s], y[o+s:o+2*s], y[o+2*s:o+3*s], y[o+3*s:o+4*s], y[o+4*s:o+5*s]
		for q := range x0 {
			a0 := x0[q]
			b1, b2 := x1[q]+x4[q], x2[q]+x3[q]
			d1, d2 := x1[q]-x4[q], x2[q]-x3[q]
			r1 := a0 + rmul(b1, c1) + rmul(b2, c2)
			r2 := a0 + rmul(b1, c2) + rmul(b2, c1)
			i1 := rmul(d1, s1) + rmul(d2, s2)
			i2 := rmul(d1, s2) - rmul(d2, s1)
			j1 := complex(-imag(i1), real(i1))
			j2 := complex(-imag(i2), real(i2))
			y0[q] = a0 + b1 + b2
			y1[q] = cmul(r1+j1, w[0])
			y2[q] = cmul(r2+j2, w[1])
			y3[q] = cmul(r2-j2, w[2])
			y4[q] = cmul(r1-j1, w[3])
		}
	}
}

// stageOdd is the direct O(r²) butterfly of any radix, for the primes
// from 7 to bluesteinFrom.
func stageOdd(st *fftStage, x, y []complex64, s int) {
	r, m, tw, roots := st.r, st.m, st.tw, st.roots
	sm := s * m
	a := make([]complex64, r)
	for p := range m {
		w := tw[p*(r-1) : p*(r-1)+r-1]
		for q := range s {
			i := q + s*p
			for j := range a {
				a[j] = x[i+j*sm]
			}
			o := q + s*r*p
			var sum complex64
			for _, v := range a {
				sum += v
			}
			y[o] = sum
			for k := 1; k < r; k++ {
				var acc complex64
				e := 0
				for _, v := range a {
					acc += cmul(v, roots[e])
					e += k
					if e >= r {
						e -= r
					}
				}
				y[o+s*k] = cmul(acc, w[k-1])
			}
		}
	}
}
