//go:build fathom_mslharness

package ops_test

import (
	"math/cmplx"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// TestFFTGPUMatchesCPU runs the FFT primitives on the GPU stream (the MSL
// harness here) and on the CPU. Complex transforms of lengths with prime
// factors 2, 3, 5 and 7 go through metal.FFT axis by axis (one pass, the
// four-step split above 2048, a non-last axis through a transposed view,
// a scale after); a length with another factor, and the real transforms,
// run the CPU kernel on the host (onHost).
func TestFFTGPUMatchesCPU(t *testing.T) {
	cplx := func(seed int, shape ...int) *array.Array {
		n := 1
		for _, d := range shape {
			n *= d
		}
		re, im := harnessData(n, seed), harnessData(n, seed+1)
		v := make([]complex64, n)
		for i := range v {
			v[i] = complex(re[i], im[i])
		}
		return array.FromSlice(v, shape...)
	}
	cases := []struct {
		name string
		f    func() *array.Array
	}{
		{"last axis 360", func() *array.Array { return ops.FFT(cplx(1, 3, 360), []int{1}, false, 1) }},
		{"inverse scaled, axis 0", func() *array.Array { return ops.FFT(cplx(2, 49, 5), []int{0}, true, 1.0/49) }},
		{"two axes", func() *array.Array { return ops.FFT(cplx(3, 4, 12, 10), []int{2, 1}, false, 1) }},
		{"transposed input", func() *array.Array {
			return ops.FFT(ops.Transpose(cplx(4, 16, 6)), []int{1}, false, 1)
		}},
		{"four-step 4096", func() *array.Array { return ops.FFT(cplx(5, 2, 4096), []int{1}, false, 1) }},
		{"length 11 on the host", func() *array.Array { return ops.FFT(cplx(6, 3, 11), []int{1}, false, 1) }},
		{"RFFT on the host", func() *array.Array { return ops.RFFT(ops.Real(cplx(7, 5, 24)), []int{0, 1}, 1) }},
		{"IRFFT on the host", func() *array.Array { return ops.IRFFT(cplx(8, 6, 7), []int{1}, 12, 1.0/12) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cpuOut, gpuOut := onBoth(t, c.f)
			want, err := array.ToSlice[complex64](ops.AsType(cpuOut, array.Complex64))
			if err != nil {
				t.Fatal(err)
			}
			got, err := array.ToSlice[complex64](ops.AsType(gpuOut, array.Complex64))
			if err != nil {
				t.Fatal(err)
			}
			var norm float64
			for _, w := range want {
				norm = max(norm, cmplx.Abs(complex128(w)))
			}
			for i := range want {
				if d := cmplx.Abs(complex128(got[i] - want[i])); d > 1e-5*norm {
					t.Fatalf("element %d: GPU %v, CPU %v", i, got[i], want[i])
				}
			}
		})
	}
}
