package fft_test

import (
	"fmt"
	"math"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/fft"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// show prints a's values rounded to 4 decimals (float32 leaves rounding
// noise where numbers should be zero), as complex numbers if a is
// complex.
func show(a *array.Array) {
	r := func(v float32) float64 { return math.Round(float64(v)*1e4)/1e4 + 0 }
	if a.DType() == array.Complex64 {
		v, err := array.ToSlice[complex64](a)
		if err != nil {
			panic(err)
		}
		out := make([]complex128, len(v))
		for i, c := range v {
			out[i] = complex(r(real(c)), r(imag(c)))
		}
		fmt.Println(a.Shape(), out)
		return
	}
	v, err := array.ToSlice[float32](a)
	if err != nil {
		panic(err)
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = r(x)
	}
	fmt.Println(a.Shape(), out)
}

func ExampleFFT() {
	x := array.FromSlice([]float32{1, 2, 3, 4}, 4)
	show(fft.FFT(x, 0, -1, fft.Backward))
	// zero-padded to 8 points, normalised to a unitary transform
	y := fft.FFT(x, 8, -1, fft.Ortho)
	fmt.Println(y.Shape(), y.DType())
	// Output:
	// [4] [(10+0i) (-2+2i) (-2+0i) (-2-2i)]
	// [8] complex64
}

func ExampleRFFT() {
	x := array.FromSlice([]float32{0, 1, 0, -1, 0, 1, 0, -1}, 8)
	spec := fft.RFFT(x, 0, -1, fft.Backward) // frequencies 0..4 of 8 points
	show(fft.RFFTFreq(8, 1))
	show(ops.Abs(spec))
	// 0 is numpy's None: 2·(5-1) = 8 points; an odd length must be given
	show(fft.IRFFT(spec, 0, -1, fft.Backward))
	// Output:
	// [5] [0 0.125 0.25 0.375 0.5]
	// [5] [0 0 4 0 0]
	// [8] [0 1 0 -1 0 1 0 -1]
}

func ExampleFFT2() {
	img := array.FromSlice([]float32{1, 1, 1, 1, 1, 1}, 2, 3)
	show(fft.FFT2(img, nil, nil, fft.Forward)) // the mean at frequency (0, 0)
	// Output:
	// [2 3] [(1+0i) (0+0i) (0+0i) (0+0i) (0+0i) (0+0i)]
}

func ExampleFFTShift() {
	f := fft.FFTFreq(5, 0.1)
	show(f)
	show(fft.FFTShift(f))
	// Output:
	// [5] [0 2 4 -4 -2]
	// [5] [-4 -2 0 2 4]
}

// The gradient of the spectrum's energy: by Parseval, Σ|FFT(x)|² =
// n·Σx², whose gradient is 2n·x.
func Example_gradient() {
	energy := func(in ...*array.Array) *array.Array {
		return ops.Sum(ops.Square(ops.Abs(fft.FFT(in[0], 0, -1, fft.Backward))))
	}
	show(graph.Grad(energy)(array.FromSlice([]float32{1, -2, 0.5}, 3))[0])
	// Output:
	// [3] [6 -12 3]
}
