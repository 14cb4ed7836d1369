package graph_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// Rows for the FFT primitives. They compute in complex64, so a finite
// difference of step h around values of size |x| carries float32's
// rounding as a relative error of about 6e-8·|x|/h: at the table's
// h = 1e-6 and |x| ~ 1 that is a few per cent, far above its 1e-4. The
// rows therefore draw their arguments within ±1e-7 (the transforms are
// linear, so the point does not change the derivative) and multiply the
// result by fftGain, which brings values to O(1) for the Vmap and layout
// checks; the relative error of the differences falls to ~1e-7.
// TestFFTWrongRulesFail shows that these checks still tell the rules
// apart from their plausible mistakes.

const fftGain = 1e6

// tiny is an argument of the FFT rows.
func tiny(s ...int) arg { return arg{shape: s, lo: -1e-7, hi: 1e-7} }

// cplx builds re + i·im as complex64.
func cplx(re, im *array.Array) *array.Array {
	return ops.Add(ops.AsType(re, array.Complex64), ops.Mul(ops.AsType(im, array.Complex64), array.Scalar(complex64(1i))))
}

// parts gives a complex result's real and imaginary parts (stacked on a
// new first axis), in float64, times fftGain.
func parts(z *array.Array) *array.Array {
	return ops.MulScalar(ops.AsType(ops.Stack([]*array.Array{ops.Real(z), ops.Imag(z)}, 0), array.Float64), fftGain)
}

func realOut(x *array.Array) *array.Array {
	return ops.MulScalar(ops.AsType(x, array.Float64), fftGain)
}

var _ = register(
	gradCase{op: "FFT", name: "axis 1", args: []arg{tiny(3, 8), tiny(3, 8)},
		f: func(xs ...*array.Array) *array.Array { return parts(ops.FFT(cplx(xs[0], xs[1]), []int{1}, false, 1)) }},
	gradCase{op: "FFT", name: "inverse, two axes, scaled", args: []arg{tiny(4, 6), tiny(4, 6)},
		f: func(xs ...*array.Array) *array.Array {
			return parts(ops.FFT(cplx(xs[0], xs[1]), []int{1, 0}, true, 1.0/24))
		}},
	gradCase{op: "FFT", name: "real input, axis 0 of 3", args: []arg{tiny(5, 3, 2)},
		f: func(xs ...*array.Array) *array.Array { return parts(ops.FFT(xs[0], []int{0}, false, 0.5)) }},
	// complex input: a real one's structural zeros (the imaginary part
	// at frequency 0) come out of Bluestein's chirps as float32 noise of
	// fftGain's size, which no absolute tolerance would pass
	gradCase{op: "FFT", name: "Bluestein length 67", args: []arg{tiny(67), tiny(67)},
		f: func(xs ...*array.Array) *array.Array { return parts(ops.FFT(cplx(xs[0], xs[1]), []int{0}, false, 1)) }},
	gradCase{op: "RFFT", name: "even, last axis", args: []arg{tiny(3, 10)},
		f: func(xs ...*array.Array) *array.Array { return parts(ops.RFFT(xs[0], []int{1}, 1)) }},
	gradCase{op: "RFFT", name: "odd, two axes", args: []arg{tiny(3, 7)},
		f: func(xs ...*array.Array) *array.Array { return parts(ops.RFFT(xs[0], []int{0, 1}, 1.0/21)) }},
	gradCase{op: "RFFT", name: "real axis 0", args: []arg{tiny(6, 4)},
		f: func(xs ...*array.Array) *array.Array { return parts(ops.RFFT(xs[0], []int{1, 0}, 1)) }},
	gradCase{op: "IRFFT", name: "even n", args: []arg{tiny(3, 5), tiny(3, 5)},
		f: func(xs ...*array.Array) *array.Array {
			return realOut(ops.IRFFT(cplx(xs[0], xs[1]), []int{1}, 8, 1.0/8))
		}},
	gradCase{op: "IRFFT", name: "odd n, two axes", args: []arg{tiny(3, 5), tiny(3, 5)},
		f: func(xs ...*array.Array) *array.Array {
			return realOut(ops.IRFFT(cplx(xs[0], xs[1]), []int{0, 1}, 9, 1))
		}},
	gradCase{op: "IRFFT", name: "real axis 0", args: []arg{tiny(4, 3), tiny(4, 3)},
		f: func(xs ...*array.Array) *array.Array {
			return realOut(ops.IRFFT(cplx(xs[0], xs[1]), []int{1, 0}, 6, 1))
		}},
)

// TestFFTWrongRulesFail computes, for IRFFT and FFT rows, the finite
// difference VJP as the table does, and checks that the rules' plausible
// mistakes (IRFFT without the doubling mask, without the conjugate; the
// FFT transposed as the inverse transform, the adjoint) miss it by far
// more than the table's tolerance, while the rule in ops meets it.
func TestFFTWrongRulesFail(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 3))
	re := array.FromSlice(randValues(r, 15, -1e-7, 1e-7), 3, 5)
	im := array.FromSlice(randValues(r, 15, -1e-7, 1e-7), 3, 5)
	g := array.FromSlice(randValues(r, 24, 0, 0), 3, 8)
	irfft := func(xs ...*array.Array) []*array.Array {
		return []*array.Array{realOut(ops.IRFFT(cplx(xs[0], xs[1]), []int{1}, 8, 1.0/8))}
	}
	_, vjps := graph.VJP(irfft, []*array.Array{re, im}, []*array.Array{g})
	fd := fdOf(t, irfft, []*array.Array{re, im}, g)
	// The cotangent of z = re + i·im is c; re's is Re c and im's -Im c
	// (the convention of complex multiplication).
	split := func(c *array.Array) []*array.Array {
		return []*array.Array{ops.AsType(ops.Real(c), array.Float64), ops.AsType(ops.Neg(ops.Imag(c)), array.Float64)}
	}
	rf := ops.MulScalar(ops.RFFT(ops.AsType(g, array.Float32), []int{1}, 1.0/8), fftGain)
	mask := array.FromSlice([]complex64{1, 2, 2, 2, 1})
	wrong := map[string][]*array.Array{
		"no mask":      split(ops.Conj(rf)),
		"no conjugate": split(ops.Mul(rf, mask)),
	}
	assertMatches(t, "IRFFT rule", vjps, fd, true)
	for name, w := range wrong {
		assertMatches(t, "IRFFT "+name, w, fd, false)
	}

	fftf := func(xs ...*array.Array) []*array.Array {
		return []*array.Array{parts(ops.FFT(cplx(xs[0], xs[1]), []int{1}, false, 1))}
	}
	x0 := array.FromSlice(randValues(r, 24, -1e-7, 1e-7), 3, 8)
	x1 := array.FromSlice(randValues(r, 24, -1e-7, 1e-7), 3, 8)
	gc := array.FromSlice(randValues(r, 48, 0, 0), 2, 3, 8)
	_, vjps = graph.VJP(fftf, []*array.Array{x0, x1}, []*array.Array{gc})
	fd = fdOf(t, fftf, []*array.Array{x0, x1}, gc)
	assertMatches(t, "FFT rule", vjps, fd, true)
	// the cotangent of parts' complex input, then the adjoint instead of
	// the transpose
	cz := ops.MulScalar(cplx(ops.Squeeze(ops.SliceAxis(gc, 0, ops.R(0, 1)), 0), ops.Neg(ops.Squeeze(ops.SliceAxis(gc, 0, ops.R(1, 2)), 0))), fftGain)
	assertMatches(t, "FFT transposed as its inverse", split(ops.FFT(cz, []int{1}, true, 1)), fd, false)
}

// fdOf is the table's central-difference VJP of f at xs for cotangent g.
func fdOf(t *testing.T, f graph.Fn, xs []*array.Array, g *array.Array) [][]float64 {
	gv := values(t, g)
	vals := make([][]float64, len(xs))
	for i, x := range xs {
		vals[i] = values(t, x)
	}
	phi := func() float64 {
		in := make([]*array.Array, len(xs))
		for i, x := range xs {
			in[i] = array.FromSlice(vals[i], x.Shape()...)
		}
		y := values(t, f(in...)[0])
		s := 0.0
		for i := range y {
			s += gv[i] * y[i]
		}
		return s
	}
	out := make([][]float64, len(xs))
	for i := range vals {
		out[i] = make([]float64, len(vals[i]))
		for j := range vals[i] {
			v := vals[i][j]
			vals[i][j] = v + fdStep
			hi := phi()
			vals[i][j] = v - fdStep
			lo := phi()
			vals[i][j] = v
			out[i][j] = (hi - lo) / (2 * fdStep)
		}
	}
	return out
}

// assertMatches checks got against fd with the table's tolerance (rtol
// 1e-4, atol 1e-5): want says whether it should pass.
func assertMatches(t *testing.T, what string, got []*array.Array, fd [][]float64, want bool) {
	t.Helper()
	ok := true
	worst := 0.0
	for i, g := range got {
		for j, v := range values(t, g) {
			d := math.Abs(v - fd[i][j])
			worst = max(worst, d/(1e-5+1e-4*math.Abs(fd[i][j])))
			if d > 1e-5+1e-4*math.Abs(fd[i][j]) {
				ok = false
			}
		}
	}
	if ok != want {
		t.Errorf("%s: matches the finite differences = %v (worst error %.3g tolerances), want %v", what, ok, worst, want)
	}
}
