package fft

import (
	"math"
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// Norm is numpy's norm argument: which direction of a transform pair is
// divided by the number of points N.
type Norm uint8

const (
	// Backward (numpy's default, "backward") leaves the forward
	// transform unscaled and divides the inverse by N.
	Backward Norm = iota
	// Ortho ("ortho") divides both directions by √N, which makes them
	// unitary.
	Ortho
	// Forward ("forward") divides the forward transform by N and leaves
	// the inverse unscaled.
	Forward
)

// String returns numpy's name of the mode.
func (m Norm) String() string {
	switch m {
	case Backward:
		return "backward"
	case Ortho:
		return "ortho"
	case Forward:
		return "forward"
	}
	return "Norm(" + itoa(int(m)) + ")"
}

func itoa(v int) string {
	if v < 0 {
		return "-" + itoa(-v)
	}
	if v < 10 {
		return string(rune('0' + v))
	}
	return itoa(v/10) + string(rune('0'+v%10))
}

// scale is the factor a transform over npts points applies in mode m.
func (m Norm) scale(op string, npts int, inverse bool) float64 {
	switch {
	case m == Ortho:
		return 1 / math.Sqrt(float64(npts))
	case m == Backward && inverse, m == Forward && !inverse:
		return 1 / float64(npts)
	case m == Backward, m == Forward:
		return 1
	}
	array.Panicf(op, "norm %v: want fft.Backward, fft.Ortho or fft.Forward", m)
	return 0
}

// plan is a transform's axes (normalised, in the caller's order) and the
// length of each, checked.
type plan struct {
	axes, lens []int
}

// plan1 resolves FFT's (n, axis) for a: n = 0 takes the axis's length.
func plan1(op string, a *array.Array, n, axis int) plan {
	if a == nil {
		array.Panicf(op, "nil array")
	}
	nd := a.Ndim()
	k := axis
	if k < 0 {
		k += nd
	}
	if k < 0 || k >= nd {
		array.Panicf(op, "axis %d out of range for shape %v", axis, a.Shape())
	}
	if n < 0 {
		array.Panicf(op, "n = %d for shape %v: want n ≥ 1, or 0 for the axis's length", n, a.Shape())
	}
	if n == 0 {
		n = a.Shape()[k]
	}
	return plan{axes: []int{k}, lens: []int{n}}
}

// planN resolves FFTN's (s, axes) as numpy does: no axes means the last
// len(s) axes, or every axis when s is nil too; no s means the axes'
// lengths; an entry 0 of s takes its axis's length.
func planN(op string, a *array.Array, s, axes []int) plan {
	if a == nil {
		array.Panicf(op, "nil array")
	}
	nd := a.Ndim()
	shape := a.Shape()
	if axes == nil {
		k := nd
		if s != nil {
			k = len(s)
			if k > nd {
				array.Panicf(op, "s %v has more entries than shape %v has axes", s, shape)
			}
		}
		for i := nd - k; i < nd; i++ {
			axes = append(axes, i)
		}
	}
	if s != nil && len(s) != len(axes) {
		array.Panicf(op, "s %v and axes %v differ in length (shape %v)", s, axes, shape)
	}
	p := plan{axes: make([]int, len(axes)), lens: make([]int, len(axes))}
	seen := make([]bool, nd)
	for i, ax := range axes {
		k := ax
		if k < 0 {
			k += nd
		}
		if k < 0 || k >= nd {
			array.Panicf(op, "axis %d out of range for shape %v", ax, shape)
		}
		if seen[k] {
			array.Panicf(op, "axis %d repeated in %v for shape %v", ax, axes, shape)
		}
		seen[k] = true
		p.axes[i] = k
		p.lens[i] = shape[k]
		if s != nil {
			if s[i] < 0 {
				array.Panicf(op, "s %v for shape %v: want lengths ≥ 1, or 0 for an axis's length", s, shape)
			}
			if s[i] > 0 {
				p.lens[i] = s[i]
			}
		}
	}
	if len(p.axes) == 0 {
		array.Panicf(op, "no axes to transform for shape %v", shape)
	}
	return p
}

// points is the number of points N of the transform.
func (p plan) points() int {
	n := 1
	for _, l := range p.lens {
		n *= l
	}
	return n
}

func (p plan) check(op string, a *array.Array) {
	for i, l := range p.lens {
		if l < 1 {
			array.Panicf(op, "axis %d of shape %v gives %d points to transform: want at least 1", p.axes[i], a.Shape(), l)
		}
	}
}

// resize crops a along axis to n elements or pads it with zeros to n, as
// numpy's n and s do.
func resize(a *array.Array, axis, n int) *array.Array {
	have := a.Shape()[axis]
	switch {
	case n < have:
		return ops.SliceAxis(a, axis, ops.R(0, n))
	case n > have:
		w := make([][2]int, a.Ndim())
		w[axis][1] = n - have
		return ops.Pad(a, w, 0)
	}
	return a
}

func complexFFT(op string, a *array.Array, p plan, inverse bool, norm Norm) *array.Array {
	p.check(op, a)
	sc := norm.scale(op, p.points(), inverse)
	for i, k := range p.axes {
		a = resize(a, k, p.lens[i])
	}
	return ops.FFT(a, p.axes, inverse, sc)
}

func realFFT(op string, a *array.Array, p plan, norm Norm) *array.Array {
	p.check(op, a)
	if a.DType().IsComplex() {
		array.Panicf(op, "input of dtype %v and shape %v: a real transform takes a real array", a.DType(), a.Shape())
	}
	sc := norm.scale(op, p.points(), false)
	for i, k := range p.axes {
		a = resize(a, k, p.lens[i])
	}
	return ops.RFFT(a, p.axes, sc)
}

// inverseRealFFT: the last axis's length is the real output's; its input
// is cropped or padded to len/2+1 frequencies.
func inverseRealFFT(op string, a *array.Array, p plan, norm Norm) *array.Array {
	p.check(op, a)
	sc := norm.scale(op, p.points(), true)
	last := len(p.axes) - 1
	for i, k := range p.axes {
		l := p.lens[i]
		if i == last {
			l = l/2 + 1
		}
		a = resize(a, k, l)
	}
	return ops.IRFFT(a, p.axes, p.lens[last], sc)
}

// irfftDefault sets the output length of the last axis to 2·(m-1) for an
// input of m frequencies when the caller gave none.
func irfftDefault(op string, a *array.Array, p plan, given bool) plan {
	if given {
		return p
	}
	last := len(p.axes) - 1
	m := a.Shape()[p.axes[last]]
	p.lens = slices.Clone(p.lens)
	p.lens[last] = 2 * (m - 1)
	if p.lens[last] < 1 {
		array.Panicf(op, "axis %d of shape %v has %d frequencies: the default output length 2·(m-1) is %d; give n", p.axes[last], a.Shape(), m, p.lens[last])
	}
	return p
}

// FFT is numpy's fft.fft: the discrete Fourier transform of a along axis
// (negative counts from the end), of n points (0: the axis's length; a
// longer or shorter axis is zero-padded or cropped), as complex64.
func FFT(a *array.Array, n, axis int, norm Norm) *array.Array {
	const op = "fft.FFT"
	return complexFFT(op, a, plan1(op, a, n, axis), false, norm)
}

// IFFT is numpy's fft.ifft, the inverse of FFT: Σ_k a_k e^(2πi·jk/n)
// divided by n under Backward.
func IFFT(a *array.Array, n, axis int, norm Norm) *array.Array {
	const op = "fft.IFFT"
	return complexFFT(op, a, plan1(op, a, n, axis), true, norm)
}

// RFFT is numpy's fft.rfft: the transform of the real array a (float32;
// other real dtypes are converted) along axis, keeping the n/2+1
// non-negative frequencies.
func RFFT(a *array.Array, n, axis int, norm Norm) *array.Array {
	const op = "fft.RFFT"
	return realFFT(op, a, plan1(op, a, n, axis), norm)
}

// IRFFT is numpy's fft.irfft: the real (float32) signal of n points whose
// non-negative frequencies a holds along axis; n = 0 means 2·(m-1) for m
// frequencies. a is cropped or zero-padded to n/2+1 frequencies.
func IRFFT(a *array.Array, n, axis int, norm Norm) *array.Array {
	const op = "fft.IRFFT"
	p := plan1(op, a, n, axis)
	return inverseRealFFT(op, a, irfftDefault(op, a, p, n != 0), norm)
}

// FFT2 is numpy's fft.fft2: FFTN over axes, by default the last two.
func FFT2(a *array.Array, s, axes []int, norm Norm) *array.Array {
	const op = "fft.FFT2"
	return complexFFT(op, a, planN(op, a, s, axes2(axes)), false, norm)
}

// IFFT2 is numpy's fft.ifft2: IFFTN over axes, by default the last two.
func IFFT2(a *array.Array, s, axes []int, norm Norm) *array.Array {
	const op = "fft.IFFT2"
	return complexFFT(op, a, planN(op, a, s, axes2(axes)), true, norm)
}

// RFFT2 is numpy's fft.rfft2: RFFTN over axes, by default the last two.
func RFFT2(a *array.Array, s, axes []int, norm Norm) *array.Array {
	const op = "fft.RFFT2"
	return realFFT(op, a, planN(op, a, s, axes2(axes)), norm)
}

// IRFFT2 is numpy's fft.irfft2: IRFFTN over axes, by default the last
// two.
func IRFFT2(a *array.Array, s, axes []int, norm Norm) *array.Array {
	const op = "fft.IRFFT2"
	p := planN(op, a, s, axes2(axes))
	return inverseRealFFT(op, a, irfftDefault(op, a, p, s != nil && s[len(s)-1] != 0), norm)
}

func axes2(axes []int) []int {
	if axes == nil {
		return []int{-2, -1}
	}
	return axes
}

// FFTN is numpy's fft.fftn: the transform over several axes, with
// lengths s (nil: the axes' lengths; an entry 0: that axis's length).
// With axes nil it transforms the last len(s) axes, or every axis when s
// is nil too.
func FFTN(a *array.Array, s, axes []int, norm Norm) *array.Array {
	const op = "fft.FFTN"
	return complexFFT(op, a, planN(op, a, s, axes), false, norm)
}

// IFFTN is numpy's fft.ifftn, the inverse of FFTN.
func IFFTN(a *array.Array, s, axes []int, norm Norm) *array.Array {
	const op = "fft.IFFTN"
	return complexFFT(op, a, planN(op, a, s, axes), true, norm)
}

// RFFTN is numpy's fft.rfftn: FFTN of a real array keeping the
// non-negative frequencies of the last of axes.
func RFFTN(a *array.Array, s, axes []int, norm Norm) *array.Array {
	const op = "fft.RFFTN"
	return realFFT(op, a, planN(op, a, s, axes), norm)
}

// IRFFTN is numpy's fft.irfftn, the inverse of RFFTN: s gives the real
// output's lengths (by default the other axes' lengths and 2·(m-1) for
// the last).
func IRFFTN(a *array.Array, s, axes []int, norm Norm) *array.Array {
	const op = "fft.IRFFTN"
	p := planN(op, a, s, axes)
	return inverseRealFFT(op, a, irfftDefault(op, a, p, s != nil && s[len(s)-1] != 0), norm)
}

// FFTFreq is numpy's fft.fftfreq: the frequencies of an n-point
// transform with sample spacing d, [0, 1, ..., n/2-1 (or (n-1)/2), -n/2,
// ..., -1]/(d·n), as float32.
func FFTFreq(n int, d float64) *array.Array {
	if n < 1 {
		array.Panicf("fft.FFTFreq", "n = %d: want at least 1", n)
	}
	v := make([]float32, n)
	for i := range v {
		k := i
		if i >= (n+1)/2 {
			k = i - n
		}
		v[i] = float32(float64(k) / (d * float64(n)))
	}
	return array.FromSlice(v)
}

// RFFTFreq is numpy's fft.rfftfreq: the n/2+1 non-negative frequencies of
// an n-point real transform with sample spacing d, as float32.
func RFFTFreq(n int, d float64) *array.Array {
	if n < 1 {
		array.Panicf("fft.RFFTFreq", "n = %d: want at least 1", n)
	}
	v := make([]float32, n/2+1)
	for i := range v {
		v[i] = float32(float64(i) / (d * float64(n)))
	}
	return array.FromSlice(v)
}

// FFTShift is numpy's fft.fftshift: rolls the zero frequency to the
// centre of each of axes (every axis when none are given).
func FFTShift(a *array.Array, axes ...int) *array.Array {
	return shift("fft.FFTShift", a, axes, false)
}

// IFFTShift is numpy's fft.ifftshift, the inverse of FFTShift.
func IFFTShift(a *array.Array, axes ...int) *array.Array {
	return shift("fft.IFFTShift", a, axes, true)
}

func shift(op string, a *array.Array, axes []int, inverse bool) *array.Array {
	if a == nil {
		array.Panicf(op, "nil array")
	}
	if len(axes) == 0 {
		for i := range a.Ndim() {
			axes = append(axes, i)
		}
	}
	if len(axes) == 0 {
		return a
	}
	shifts := make([]int, len(axes))
	for i, ax := range axes {
		k := ax
		if k < 0 {
			k += a.Ndim()
		}
		if k < 0 || k >= a.Ndim() {
			array.Panicf(op, "axis %d out of range for shape %v", ax, a.Shape())
		}
		n := a.Shape()[k]
		shifts[i] = n / 2
		if inverse {
			shifts[i] = -(n / 2)
		}
	}
	return ops.RollAxes(a, shifts, axes)
}
