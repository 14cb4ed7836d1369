package cpu

import (
	"unsafe"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/strided"
)

// The FFT kernels: complex64 transforms of any length, unnormalised and
// multiplied by a scale, along any set of axes. A length whose prime
// factors are below bluesteinFrom runs as Stockham stages of radix 4, 2,
// 3, 5 and the odd primes; other lengths as Bluestein's chirp-z
// convolution through a power-of-two transform; long vectors as the
// four-step split. Transforms along an axis that is not the last run on
// tiles of neighbouring columns, so that the inner loops are unit-stride.
// Real transforms use the half-length complex transform of the even and
// odd samples. fft_test.go checks all of it against gonum's dsp/fourier,
// the project's reference implementation.

// c64s views a complex64 buffer's memory as values.
func c64s(b Buf) []complex64 { return elems[complex64](b) }

// FFT writes into out (complex64, row-major, in's shape) scale times the
// discrete Fourier transform of in along axes: with the exponent's sign
// + when inverse, -, as numpy's fft, otherwise. in may have any layout;
// real dtypes are converted. Every transformed axis must have length at
// least 1 (ops checks).
func FFT(out, in Buf, axes []int, inverse bool, scale float64) error {
	if out.DType != array.Complex64 {
		return array.Errorf("cpu.FFT", "output of dtype %v, want complex64", out.DType)
	}
	if out.Size() == 0 {
		return nil
	}
	x := c64s(out)[:out.Size()]
	// The scale rides on the last pass over x, whose rows or tiles are
	// still in cache, instead of a pass of its own.
	s := float32(scale)
	last := len(axes) - 1
	rest := axes[:last]
	lastScale := s
	if last > 0 {
		lastScale = 1
	}
	if !rowsFrom(x, in, axes[last], inverse, lastScale) {
		if err := Copy(out, in); err != nil {
			return err
		}
		rest = axes
	}
	for i := len(rest) - 1; i >= 0; i-- {
		si := float32(1)
		if i == 0 {
			si = s
		}
		fftAxis(x, out.Shape, rest[i], inverse, si)
	}
	return nil
}

// rowsFrom writes into x scale times the transforms of the rows of in,
// sparing the copy that the transforms in place would need, when in is
// row-major complex64 and axis is its last; it reports whether it did.
func rowsFrom(x []complex64, in Buf, axis int, inverse bool, scale float32) bool {
	nd := len(in.Shape)
	if in.DType != array.Complex64 || !in.RowMajor() || axis != nd-1 {
		return false
	}
	n := in.Shape[nd-1]
	p := planFor(n, inverse)
	src := c64s(in)[in.Offset : in.Offset+len(x)]
	if p.long() {
		for r := range len(x) / n {
			p.transform1(src[r*n:r*n+n], x[r*n:r*n+n], scale)
		}
		return true
	}
	ParallelFor(len(x)/n, max(1, 1<<14/n), func(lo, hi int) {
		b, y := getC64(p.scratchLen(1))
		for r := lo; r < hi; r++ {
			p.transform(src[r*n:r*n+n], x[r*n:r*n+n], y, 1)
			scaleRow(x[r*n:r*n+n], scale)
		}
		c64Pool.put(b)
	})
	return true
}

// fftAxis transforms the row-major complex64 array x of shape along axis
// in place, multiplying by scale.
func fftAxis(x []complex64, shape []int, axis int, inverse bool, scale float32) {
	n := shape[axis]
	if n == 1 {
		scaleC64(x, float64(scale))
		return
	}
	outer, inner := 1, 1
	for i, d := range shape {
		switch {
		case i < axis:
			outer *= d
		case i > axis:
			inner *= d
		}
	}
	p := planFor(n, inverse)
	if inner == 1 {
		if p.long() {
			for o := range outer {
				p.transform1(x[o*n:o*n+n], x[o*n:o*n+n], scale)
			}
			return
		}
		ParallelFor(outer, max(1, 1<<14/n), func(lo, hi int) {
			b, y := getC64(p.scratchLen(1))
			for o := lo; o < hi; o++ {
				p.run(x[o*n:o*n+n], y, 1)
				scaleRow(x[o*n:o*n+n], scale)
			}
			c64Pool.put(b)
		})
		return
	}
	bc := tileCols(n, inner)
	blocks := (inner + bc - 1) / bc
	ParallelFor(outer*blocks, max(1, 1<<14/(n*bc)), func(lo, hi int) {
		pt, tile := getC64(n * bc)
		ps, y := getC64(p.scratchLen(bc))
		for t := lo; t < hi; t++ {
			o, i0 := t/blocks, t%blocks*bc
			w := min(bc, inner-i0)
			base := o*n*inner + i0
			tl := tile[:n*w]
			for j := range n {
				copy(tl[j*w:j*w+w], x[base+j*inner:base+j*inner+w])
			}
			p.run(tl, y, w)
			scaleRow(tl, scale)
			for j := range n {
				copy(x[base+j*inner:base+j*inner+w], tl[j*w:j*w+w])
			}
		}
		c64Pool.put(ps)
		c64Pool.put(pt)
	})
}

// scaleRow multiplies x, a row in one core's cache, by s.
func scaleRow(x []complex64, s float32) {
	if s == 1 {
		return
	}
	for i := range x {
		x[i] = rmul(x[i], s)
	}
}

func scaleC64(x []complex64, scale float64) {
	if scale == 1 {
		return
	}
	s := float32(scale)
	ParallelFor(len(x), grain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x[i] = rmul(x[i], s)
		}
	})
}

func scaleF32(x []float32, scale float64) {
	if scale == 1 {
		return
	}
	s := float32(scale)
	ParallelFor(len(x), grain, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x[i] *= s
		}
	})
}

// RFFT writes into out (complex64, row-major) scale times the transform
// of the real array in along axes, of which only the non-negative
// frequencies of the last are kept: out's shape is in's with that axis
// n/2+1 long. The last of axes must be in's last axis. in is float32 (or
// another real dtype, converted) of any layout.
func RFFT(out, in Buf, axes []int, scale float64) error {
	nd := len(in.Shape)
	if out.DType != array.Complex64 || len(axes) == 0 || axes[len(axes)-1] != nd-1 {
		return array.Errorf("cpu.RFFT", "output %v, axes %v of %d dimensions: want complex64 and the last axis transformed last", out.DType, axes, nd)
	}
	if out.Size() == 0 {
		return nil
	}
	n := in.Shape[nd-1]
	rows := in.Size() / n
	xs, release := realRows(in)
	defer release()
	h1 := n/2 + 1
	y := c64s(out)[:rows*h1]
	if n%2 == 0 && n >= 2 {
		rp := realPlanFor(n, false)
		rowFFTs(rows, n/2, rp.half, func(r int) []complex64 {
			row := y[r*h1 : r*h1+h1]
			copy(row[:n/2], unsafe.Slice((*complex64)(unsafe.Pointer(&xs[r*n])), n/2))
			return row[:n/2]
		}, func(r int) { r2cCombine(y[r*h1:r*h1+h1], &rp.tw, scale) })
	} else {
		p := planFor(n, false)
		s := float32(scale)
		ParallelFor(rows, max(1, 1<<14/n), func(lo, hi int) {
			pw, w := getC64(n)
			ps, scratch := getC64(p.scratchLen(1))
			for r := lo; r < hi; r++ {
				for j, v := range xs[r*n : r*n+n] {
					w[j] = complex(v, 0)
				}
				p.run(w, scratch, 1)
				row := y[r*h1 : r*h1+h1]
				for k := range row {
					row[k] = rmul(w[k], s)
				}
			}
			c64Pool.put(ps)
			c64Pool.put(pw)
		})
	}
	shape := out.Shape
	for i := len(axes) - 2; i >= 0; i-- {
		fftAxis(y, shape, axes[i], false, 1)
	}
	return nil
}

// rowFFTs transforms rows vectors of length n with plan p: get(r) fills
// vector r (in memory it owns) and returns it, done(r) finishes it. Many
// short rows are shared among the cores; a long one is split inside run1.
func rowFFTs(rows, n int, p *fftPlan, get func(r int) []complex64, done func(r int)) {
	if p.long() {
		for r := range rows {
			p.run1(get(r))
			done(r)
		}
		return
	}
	ParallelFor(rows, max(1, 1<<14/max(n, 1)), func(lo, hi int) {
		b, y := getC64(p.scratchLen(1))
		for r := lo; r < hi; r++ {
			p.run(get(r), y, 1)
			done(r)
		}
		c64Pool.put(b)
	})
}

// realRows returns in's values as contiguous float32 rows, in's own
// memory when it already is that.
func realRows(in Buf) ([]float32, func()) {
	n := in.Size()
	if in.DType == array.Float32 && in.RowMajor() {
		return elems[float32](in)[in.Offset : in.Offset+n], func() {}
	}
	b := pool32.get(n)
	dst := Buf{Data: unsafe.Slice((*byte)(unsafe.Pointer(&(*b)[0])), 4*n), DType: array.Float32, Shape: in.Shape, Strides: strided.RowMajor(in.Shape)}
	if err := Copy(dst, in); err != nil {
		panic(err) // real to float32: cannot fail
	}
	return (*b)[:n], func() { pool32.put(b) }
}

// r2cCombine turns the half-length transform Z (row[:h], h = n/2) of
// z_j = x_2j + i·x_2j+1 into X_0..X_h in place: with E_k = (Z_k +
// conj Z_(h-k))/2 and O_k = -i(Z_k - conj Z_(h-k))/2 the transforms of
// the even and odd samples, X_k = E_k + ω^k O_k and X_(h-k) = conj(E_k -
// ω^k O_k).
func r2cCombine(row []complex64, tw *twoLevel, scale float64) {
	h := len(row) - 1
	s := float32(scale)
	z0 := row[0]
	row[0] = complex((real(z0)+imag(z0))*s, 0)
	row[h] = complex((real(z0)-imag(z0))*s, 0)
	hs := 0.5 * s
	for k := 1; k <= h/2; k++ {
		zk, zc := row[k], row[h-k]
		zc = complex(real(zc), -imag(zc))
		e := rmul(zk+zc, hs)
		d := rmul(zk-zc, hs)
		o := cmul(complex(imag(d), -real(d)), tw.at(k))
		a, b := e+o, e-o
		row[k] = a
		row[h-k] = complex(real(b), -imag(b))
	}
}

// IRFFT writes into out (float32, row-major) scale times the inverse
// transform along axes of the Hermitian array in (complex64, any layout),
// whose last axis holds the n/2+1 non-negative frequencies of out's last
// axis, of length n. The imaginary parts of the zero and (even n)
// Nyquist frequencies are ignored, as numpy's irfft does.
func IRFFT(out, in Buf, axes []int, scale float64) error {
	nd := len(in.Shape)
	if out.DType != array.Float32 || in.DType != array.Complex64 || len(axes) == 0 || axes[len(axes)-1] != nd-1 {
		return array.Errorf("cpu.IRFFT", "input %v, output %v, axes %v of %d dimensions: want complex64 to float32 and the last axis transformed last", in.DType, out.DType, axes, nd)
	}
	if out.Size() == 0 {
		return nil
	}
	n := out.Shape[nd-1]
	h1 := in.Shape[nd-1]
	rows := out.Size() / n
	pb, y := getC64(in.Size())
	defer c64Pool.put(pb)
	if err := Copy(Buf{Data: unsafe.Slice((*byte)(unsafe.Pointer(&y[0])), 8*len(y)), DType: array.Complex64, Shape: in.Shape, Strides: strided.RowMajor(in.Shape)}, in); err != nil {
		return err
	}
	for i := len(axes) - 2; i >= 0; i-- {
		fftAxis(y, in.Shape, axes[i], true, 1)
	}
	xs := elems[float32](out)[:rows*n]
	if n%2 == 0 {
		rp := realPlanFor(n, true)
		rowFFTs(rows, n/2, rp.half, func(r int) []complex64 {
			z := unsafe.Slice((*complex64)(unsafe.Pointer(&xs[r*n])), n/2)
			c2rSplit(z, y[r*h1:r*h1+h1], &rp.tw, scale)
			return z
		}, func(int) {})
		return nil
	}
	p := planFor(n, true)
	ParallelFor(rows, max(1, 1<<14/n), func(lo, hi int) {
		pw, w := getC64(n)
		ps, scratch := getC64(p.scratchLen(1))
		for r := lo; r < hi; r++ {
			row := y[r*h1 : r*h1+h1]
			w[0] = complex(real(row[0]), 0)
			for k := 1; k <= n/2; k++ {
				w[k] = row[k]
				w[n-k] = complex(real(row[k]), -imag(row[k]))
			}
			p.run(w, scratch, 1)
			dst := xs[r*n : r*n+n]
			for j := range dst {
				dst[j] = real(w[j]) * float32(scale)
			}
		}
		c64Pool.put(ps)
		c64Pool.put(pw)
	})
	return nil
}

// c2rSplit writes into z (h values, h = n/2) scale times Y_k = P_k +
// i·ω^-k·Q_k with P_k = X_k + conj X_(h-k) and Q_k = X_k - conj X_(h-k),
// whose inverse half-length transform interleaves the even and odd
// samples of the real result (Y_(h-k) = conj(P_k - i·ω^-k·Q_k)). X_0 and
// X_h count as real.
func c2rSplit(z, x []complex64, tw *twoLevel, scale float64) {
	h := len(z)
	s := float32(scale)
	r0, rh := real(x[0]), real(x[h])
	z[0] = complex((r0+rh)*s, (r0-rh)*s)
	for k := 1; k <= h/2; k++ {
		xk, xc := x[k], x[h-k]
		xc = complex(real(xc), -imag(xc))
		p, q := xk+xc, cmul(xk-xc, tw.at(k))
		iq := complex(-imag(q), real(q))
		z[k] = rmul(p+iq, s)
		b := p - iq
		z[h-k] = rmul(complex(real(b), -imag(b)), s)
	}
}
