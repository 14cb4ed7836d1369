package ops

import (
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/internal/opset"
	"github.com/fathom-go/fathom/internal/strided"
)

// The FFT primitives, in the lowest-level form of MLX's FFT primitive:
// a set of axes, the direction, whether the transform is real (RFFT) or
// back to real (IRFFT, with the output length), and a scale that carries
// numpy's norm modes. Most programs call package fft, which adds numpy's
// n/s (crop or zero-pad), default axes and norm names.
//
// Derivatives follow JAX (jax/_src/lax/fft.py) under the complex
// convention of Real, Imag and complex multiplication: the transpose of a
// complex transform is the same transform (the DFT matrix is symmetric),
// that of RFFT the complex transform of the zero-padded cotangent's real
// part, and that of IRFFT the conjugate of the RFFT of the cotangent with
// the non-edge frequencies, which stand for two, doubled.

type fftKind uint8

const (
	fftComplex     fftKind = iota // complex64 to complex64
	fftReal                       // real to the non-negative frequencies of the last axis
	fftRealInverse                // those frequencies back to real
)

var fftNames = [...]string{"FFT", "RFFT", "IRFFT"}

// fftPrim transforms along Axes (normalised, distinct; for the real
// kinds the last is the array's last axis), multiplying by Scale.
type fftPrim struct {
	Kind    fftKind
	Inverse bool // complex kind: exponent sign +
	Axes    []int
	N       int // IRFFT: length of the real last axis
	Scale   float64
}

func (p *fftPrim) Name() string { return fftNames[p.Kind] }

func (p *fftPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}

// host runs the CPU kernel, writing into memory from alloc: the CPU's
// own, or the GPU stream's for the lengths Metal has no kernel for.
func (p *fftPrim) host(alloc outAlloc, in, out []*array.Array) error {
	o, err := alloc(out[0])
	if err != nil {
		return err
	}
	x := bufOf(in[0])
	switch p.Kind {
	case fftReal:
		return cpu.RFFT(o, x, p.Axes, p.Scale)
	case fftRealInverse:
		return cpu.IRFFT(o, x, p.Axes, p.Scale)
	}
	return cpu.FFT(o, x, p.Axes, p.Inverse, p.Scale)
}

func (p *fftPrim) evalCPU(in, out []*array.Array) error { return p.host(cpuAlloc, in, out) }

// evalGPU runs a complex transform whose every length Metal's Stockham
// kernels take (prime factors 2, 3, 5 and 7: metal.FFTSupported) on the
// GPU, one axis at a time, each made the last axis of a transposed view;
// everything else runs the CPU kernel on the host, with no copy (onHost).
func (p *fftPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	if p.Kind != fftComplex || !p.metalLengths(in[0].Shape()) {
		return onHost(s, func(alloc outAlloc) error { return p.host(alloc, in, out) })
	}
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) { return p.metalPlan(o, viewOf(in[0])) })
}

func (p *fftPrim) metalLengths(shape []int) bool {
	for _, k := range p.Axes {
		if !metal.FFTSupported(shape[k]) {
			return false
		}
	}
	return true
}

// metalPlan transforms x into o axis by axis, the array's last axis (when
// transformed) last so that its pass writes o directly, and scales o in
// place when Scale is not 1.
func (p *fftPrim) metalPlan(o, x metal.View) ([]metal.Launch, error) {
	if o.Size() == 0 {
		return nil, nil
	}
	nd := len(o.Shape)
	axes := slices.Clone(p.Axes)
	slices.SortFunc(axes, func(a, b int) int { return a - b })
	var ls []metal.Launch
	cur, inOut := x, false
	for i, k := range axes {
		perm := make([]int, 0, nd)
		for d := range nd {
			if d != k {
				perm = append(perm, d)
			}
		}
		perm = append(perm, k)
		src := permuteView(cur, perm)
		var dst metal.View
		if i == len(axes)-1 && k == nd-1 {
			dst = o
		} else {
			mem, err := metal.Alloc(o.Size() * 8)
			if err != nil {
				return nil, err
			}
			dst = metal.View{Mem: mem, DType: array.Complex64, Shape: src.Shape, Strides: strided.RowMajor(src.Shape)}
		}
		l, err := metal.FFT(dst, src, p.Inverse)
		if err != nil {
			return nil, err
		}
		ls = append(ls, l...)
		inv := make([]int, nd)
		for j, d := range perm {
			inv[d] = j
		}
		cur, inOut = permuteView(dst, inv), dst.Mem == o.Mem
	}
	if !inOut {
		l, err := metal.Copy(o, cur)
		if err != nil {
			return nil, err
		}
		ls = append(ls, l...)
	}
	if p.Scale != 1 {
		mem, err := metal.Alloc(8)
		if err != nil {
			return nil, err
		}
		sv := metal.View{Mem: mem, DType: array.Complex64, Shape: []int{}, Strides: []int{}}
		l, err := metal.Fill(sv, p.Scale)
		if err != nil {
			return nil, err
		}
		ls = append(ls, l...)
		bs := metal.View{Mem: mem, DType: array.Complex64, Shape: o.Shape, Strides: make([]int, nd)}
		l, err = metal.Binary(opset.Mul, o, o, bs)
		if err != nil {
			return nil, err
		}
		ls = append(ls, l...)
	}
	return ls, nil
}

// permuteView returns v with its axes in the order perm.
func permuteView(v metal.View, perm []int) metal.View {
	w := v
	w.Shape, w.Strides = make([]int, len(perm)), make([]int, len(perm))
	for i, d := range perm {
		w.Shape[i], w.Strides[i] = v.Shape[d], v.Strides[d]
	}
	return w
}

// Equivalent reports whether o is the same transform.
func (p *fftPrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*fftPrim)
	return ok && q.Kind == p.Kind && q.Inverse == p.Inverse && slices.Equal(q.Axes, p.Axes) &&
		q.N == p.N && sameFloat(q.Scale, p.Scale)
}

// OutputShapes: the input's shape, with the last axis n/2+1 long after
// RFFT and N long after IRFFT.
func (p *fftPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	return [][]int{p.outShape(in[0].Shape())}, nil
}

func (p *fftPrim) outShape(s []int) []int {
	s = slices.Clone(s)
	switch p.Kind {
	case fftReal:
		s[len(s)-1] = s[len(s)-1]/2 + 1
	case fftRealInverse:
		s[len(s)-1] = p.N
	}
	return s
}

// VJP is the transpose (see the package comment above).
func (p *fftPrim) VJP(inputs, outputs, cots []*array.Array, argnums []int) []*array.Array {
	g := cots[0]
	switch p.Kind {
	case fftReal:
		nd := g.Ndim()
		n := inputs[0].Shape()[nd-1]
		w := make([][2]int, nd)
		w[nd-1][1] = n - g.Shape()[nd-1]
		full := fftNode(&fftPrim{Kind: fftComplex, Axes: p.Axes, Scale: p.Scale}, Pad(AsType(g, array.Complex64), w, 0))
		return []*array.Array{Real(full)}
	case fftRealInverse:
		r := fftNode(&fftPrim{Kind: fftReal, Axes: p.Axes, Scale: p.Scale}, AsType(g, array.Float32))
		return []*array.Array{Conj(Mul(r, hermitianMask(p.N)))}
	}
	return []*array.Array{fftNode(p, AsType(g, array.Complex64))}
}

// hermitianMask weighs the frequencies 0..n/2 of a real signal of length
// n by how many of the n frequencies each stands for: 1 for zero and
// (n even) Nyquist, 2 for the others.
func hermitianMask(n int) *array.Array {
	m := make([]complex64, n/2+1)
	for k := range m {
		m[k] = 2
	}
	m[0] = 1
	if n%2 == 0 {
		m[n/2] = 1
	}
	return array.FromSlice(m)
}

// JVP applies the (linear) transform to the tangent.
func (p *fftPrim) JVP(inputs, outputs, tans []*array.Array, argnums []int) []*array.Array {
	t := tans[0]
	if p.Kind == fftReal {
		t = AsType(t, array.Float32)
	} else {
		t = AsType(t, array.Complex64)
	}
	return []*array.Array{fftNode(p, t)}
}

// Vmap moves the batch axis to the front, past which the transformed
// axes shift by one.
func (p *fftPrim) Vmap(inputs []*array.Array, axes []int) ([]*array.Array, []int) {
	x := batchFront(inputs[0], axes[0])
	if axes[0] < 0 {
		return []*array.Array{fftNode(p, x)}, []int{-1}
	}
	q := *p
	q.Axes = make([]int, len(p.Axes))
	for i, a := range p.Axes {
		q.Axes[i] = a + 1
	}
	return []*array.Array{fftNode(&q, x)}, []int{0}
}

func fftNode(p *fftPrim, x *array.Array) *array.Array {
	shape := p.outShape(x.Shape())
	dt := array.Complex64
	if p.Kind == fftRealInverse {
		dt = array.Float32
	}
	checkedBytes("ops."+p.Name(), shape, dt)
	return node(shape, dt, p, x)
}

// fftAxes checks a's transformed axes: normalised, distinct, in the
// caller's order, each at least 1 long (at least n/2+1 long for the last
// axis of IRFFT, which is checked by the caller).
func fftAxes(op string, a *array.Array, axes []int) []int {
	nd := a.Ndim()
	if len(axes) == 0 {
		array.Panicf(op, "no axes to transform for shape %v", a.Shape())
	}
	out := make([]int, len(axes))
	seen := make([]bool, nd)
	for i, ax := range axes {
		k := normAxis(op, ax, nd)
		if seen[k] {
			array.Panicf(op, "axis %d repeated in %v for shape %v", ax, axes, a.Shape())
		}
		seen[k] = true
		out[i] = k
	}
	for _, k := range out {
		if a.Shape()[k] < 1 {
			array.Panicf(op, "axis %d of shape %v has no elements to transform", k, a.Shape())
		}
	}
	return out
}

// lastAxisLast moves the last of axes to the end of a (a view), as the
// real primitives want, and returns the axes renumbered for the moved
// array.
func lastAxisLast(a *array.Array, axes []int) (*array.Array, []int) {
	nd := a.Ndim()
	last := axes[len(axes)-1]
	if last == nd-1 {
		return a, axes
	}
	moved := make([]int, len(axes))
	for i, k := range axes {
		switch {
		case k == last:
			moved[i] = nd - 1
		case k > last:
			moved[i] = k - 1
		default:
			moved[i] = k
		}
	}
	return MoveAxis(a, last, nd-1), moved
}

// FFT returns scale times the discrete Fourier transform of a along axes
// (distinct, each at least 1 long), as complex64: Σ_j a_j e^(∓2πi·jk/n)
// along each axis, with the sign + when inverse. Real arrays are
// converted to complex64 first (float64 loses its extra precision, as
// in MLX). FFT is the primitive behind package fft, which most programs
// call: fft.FFT, fft.IFFT, fft.FFTN and the rest add numpy's lengths and
// normalisations.
func FFT(a *array.Array, axes []int, inverse bool, scale float64) *array.Array {
	const op = "ops.FFT"
	requireNonNil(op, a)
	ax := fftAxes(op, a, axes)
	return fftNode(&fftPrim{Kind: fftComplex, Inverse: inverse, Axes: ax, Scale: scale}, AsType(a, array.Complex64))
}

// RFFT returns scale times the Fourier transform of the real array a
// along axes, keeping the n/2+1 non-negative frequencies of the last of
// them (of length n), as complex64. a is converted to float32; complex
// arrays are refused (take Real first). The primitive behind fft.RFFT and
// fft.RFFTN.
func RFFT(a *array.Array, axes []int, scale float64) *array.Array {
	const op = "ops.RFFT"
	requireNonNil(op, a)
	if a.DType().IsComplex() {
		array.Panicf(op, "input of dtype %v and shape %v: RFFT takes a real array", a.DType(), a.Shape())
	}
	ax := fftAxes(op, a, axes)
	last := ax[len(ax)-1]
	x, moved := lastAxisLast(AsType(a, array.Float32), ax)
	y := fftNode(&fftPrim{Kind: fftReal, Axes: moved, Scale: scale}, x)
	if last != a.Ndim()-1 {
		y = MoveAxis(y, -1, last)
	}
	return y
}

// IRFFT returns scale times the inverse transform of a along axes, as a
// real float32 array whose last transformed axis has length n: a holds
// the n/2+1 non-negative frequencies of that axis (its length must be
// exactly n/2+1), the negative ones being their conjugates. The
// imaginary parts of the zero and (n even) Nyquist frequencies are
// ignored, as in numpy. Real arrays are converted to complex64. The
// primitive behind fft.IRFFT and fft.IRFFTN.
func IRFFT(a *array.Array, axes []int, n int, scale float64) *array.Array {
	const op = "ops.IRFFT"
	requireNonNil(op, a)
	ax := fftAxes(op, a, axes)
	last := ax[len(ax)-1]
	if n < 1 {
		array.Panicf(op, "output length %d for shape %v: want at least 1", n, a.Shape())
	}
	if h := a.Shape()[last]; h != n/2+1 {
		array.Panicf(op, "axis %d of shape %v has %d frequencies; output length %d needs %d", last, a.Shape(), h, n, n/2+1)
	}
	x, moved := lastAxisLast(AsType(a, array.Complex64), ax)
	y := fftNode(&fftPrim{Kind: fftRealInverse, Axes: moved, N: n, Scale: scale}, x)
	if last != a.Ndim()-1 {
		y = MoveAxis(y, -1, last)
	}
	return y
}
