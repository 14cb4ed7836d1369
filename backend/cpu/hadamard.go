package cpu

import (
	"math/bits"

	"github.com/fathom-go/fathom/array"
)

// HadamardTransform writes scale·H·x for every line x along the last axis
// of in to out (same shape and dtype, a float dtype; out row-major), where
// H is the Sylvester-ordered Hadamard matrix of the line's length, a power
// of two (MLX's hadamard_transform). It is the fast Walsh–Hadamard
// transform: log2(n) passes of butterflies over each line, in place in
// out. float16 and bfloat16 compute in float32 and round once on store.
func HadamardTransform(out, in Buf, scale float64) error {
	const name = "cpu.HadamardTransform"
	if !in.DType.IsFloat() {
		return array.Errorf(name, "dtype %v is not a float dtype", in.DType)
	}
	if out.DType != in.DType || !out.RowMajor() {
		return array.Errorf(name, "output dtype %v (row-major %v), want row-major %v", out.DType, out.RowMajor(), in.DType)
	}
	n := 1
	if len(in.Shape) > 0 {
		n = in.Shape[len(in.Shape)-1]
	}
	if n&(n-1) != 0 {
		return array.Errorf(name, "last axis of shape %v has length %d, not a power of two", in.Shape, n)
	}
	if out.Size() == 0 {
		return nil
	}
	if err := Copy(out, in); err != nil {
		return err
	}
	lines := out.Size() / n
	// Each line costs about n·log2(n) additions; split so that a chunk
	// does at least grain of them.
	chunk := max(1, grain/max(1, n*max(1, bits.Len(uint(n))-1)))
	switch out.DType {
	case array.Float32:
		x := elems[float32](out)[out.Offset:]
		ParallelFor(lines, chunk, func(lo, hi int) {
			for l := lo; l < hi; l++ {
				wht(x[l*n:(l+1)*n], float32(scale))
			}
		})
	case array.Float64:
		x := elems[float64](out)[out.Offset:]
		ParallelFor(lines, chunk, func(lo, hi int) {
			for l := lo; l < hi; l++ {
				wht(x[l*n:(l+1)*n], scale)
			}
		})
	case array.Float16:
		x := elems[array.F16](out)[out.Offset:]
		ParallelFor(lines, chunk, func(lo, hi int) {
			whtHalf(x, n, lo, hi, float32(scale), array.F16.Float32, array.NewF16)
		})
	default:
		x := elems[array.BF16](out)[out.Offset:]
		ParallelFor(lines, chunk, func(lo, hi int) {
			whtHalf(x, n, lo, hi, float32(scale), array.BF16.Float32, array.NewBF16)
		})
	}
	return nil
}

// wht transforms x in place and scales it. The first pass fuses the
// butterflies of span 1 and 2, so a line is read and written log2(n)-1
// times rather than log2(n).
func wht[T float32 | float64](x []T, scale T) {
	n := len(x)
	h := 1
	if n >= 4 {
		for i := 0; i < n; i += 4 {
			a, b, c, d := x[i], x[i+1], x[i+2], x[i+3]
			s0, d0, s1, d1 := a+b, a-b, c+d, c-d
			x[i], x[i+1], x[i+2], x[i+3] = s0+s1, d0+d1, s0-s1, d0-d1
		}
		h = 4
	}
	for ; h < n; h *= 2 {
		for i := 0; i < n; i += 2 * h {
			lo, hi := x[i:i+h], x[i+h:i+2*h]
			for j := range lo {
				a, b := lo[j], hi[j]
				lo[j], hi[j] = a+b, a-b
			}
		}
	}
	if scale != 1 {
		for i := range x {
			x[i] *= scale
		}
	}
}

// whtHalf transforms lines [lo, hi) of 16-bit floats through a float32
// copy of each line.
func whtHalf[H any](x []H, n, lo, hi int, scale float32, widen func(H) float32, narrow func(float32) H) {
	buf := make([]float32, n)
	for l := lo; l < hi; l++ {
		line := x[l*n : (l+1)*n]
		for i, v := range line {
			buf[i] = widen(v)
		}
		wht(buf, scale)
		for i, v := range buf {
			line[i] = narrow(v)
		}
	}
}
