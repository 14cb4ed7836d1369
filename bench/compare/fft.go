package main

import (
	"math"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/fft"
	"github.com/fathom-go/fathom/ops"
)

// fftTasks are issue 21's FFT speed rows, against numpy's pocketfft
// (which computes complex64 input in complex128) and PyTorch's CPU FFT;
// workloads.py's build_fft builds the same shapes. Flops are 5·N·log2(N)
// per complex transform of N points and half that per real one.
func fftTasks() []task {
	cplx := func(seed uint64, shape ...int) *array.Array {
		re, im := randF32(seed, shape...), randF32(seed+100, shape...)
		z := ops.Add(ops.AsType(re, array.Complex64), ops.Mul(ops.AsType(im, array.Complex64), array.Scalar(complex64(1i))))
		eval(z)
		return z
	}
	fl := func(batch, n float64) float64 { return 5 * batch * n * math.Log2(n) }
	return []task{
		{name: "fft/1M", flops: fl(1, 1<<20), setup: func() func() {
			x := cplx(1, 1<<20)
			return func() { eval(fft.FFT(x, 0, -1, fft.Backward)) }
		}},
		{name: "rfft/4M", flops: fl(1, 1<<22) / 2, setup: func() func() {
			x := randF32(2, 1<<22)
			eval(x)
			return func() { eval(fft.RFFT(x, 0, -1, fft.Backward)) }
		}},
		{name: "fft2/64x512x512", flops: fl(64, 512*512), setup: func() func() {
			x := cplx(3, 64, 512, 512)
			return func() { eval(fft.FFT2(x, nil, nil, fft.Backward)) }
		}},
	}
}
