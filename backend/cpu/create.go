package cpu

import "github.com/fathom-go/fathom/array"

// Arange fills out, in row-major order, with start + i*step computed in
// float64 and converted to out's dtype once (floats to integers truncate
// toward zero, as in Copy).
func Arange(out Buf, start, step float64) error {
	switch out.DType {
	case array.Bool:
		arangeRuns(out, start, step, func(v float64) bool { return v != 0 })
	case array.Uint8:
		arangeRuns(out, start, step, func(v float64) uint8 { return uint8(toInt64(v)) })
	case array.Int32:
		arangeRuns(out, start, step, func(v float64) int32 { return int32(toInt64(v)) })
	case array.Int64:
		arangeRuns(out, start, step, toInt64[float64])
	case array.Int8:
		arangeRuns(out, start, step, floatToInt[int8])
	case array.Int16:
		arangeRuns(out, start, step, floatToInt[int16])
	case array.Uint16:
		arangeRuns(out, start, step, floatToInt[uint16])
	case array.Uint32:
		arangeRuns(out, start, step, floatToInt[uint32])
	case array.Uint64:
		arangeRuns(out, start, step, floatToInt[uint64])
	case array.Float16:
		arangeRuns(out, start, step, func(v float64) array.F16 { return array.NewF16(float32(v)) })
	case array.BFloat16:
		arangeRuns(out, start, step, func(v float64) array.BF16 { return array.NewBF16(float32(v)) })
	case array.Float32:
		arangeRuns(out, start, step, func(v float64) float32 { return float32(v) })
	case array.Float64:
		arangeRuns(out, start, step, func(v float64) float64 { return v })
	case array.Complex64:
		arangeRuns(out, start, step, func(v float64) complex64 { return complex(float32(v), 0) })
	default:
		return array.Errorf("cpu.Arange", "invalid dtype %v", out.DType)
	}
	return nil
}

func arangeRuns[T any](out Buf, start, step float64, conv func(float64) T) {
	w := newWalker(out.Shape, out.Strides)
	o := elems[T](out)
	so := w.InnerStrides()[0]
	ParallelFor(w.Size(), grain, func(lo, hi int) {
		i := lo
		w.Runs(lo, hi, []int{out.Offset}, func(offs []int, n int) {
			p := offs[0]
			for j := range n {
				o[p+j*so] = conv(start + float64(i+j)*step)
			}
			i += n
		})
	})
}

// Eye fills the 2-D out with ones on diagonal k (k > 0 above the main
// diagonal, k < 0 below) and zeros elsewhere.
func Eye(out Buf, k int) error {
	switch out.DType {
	case array.Bool:
		eyeFill(out, k, true)
	case array.Uint8:
		eyeFill(out, k, uint8(1))
	case array.Int32:
		eyeFill(out, k, int32(1))
	case array.Int64:
		eyeFill(out, k, int64(1))
	case array.Int8:
		eyeFill(out, k, int8(1))
	case array.Int16:
		eyeFill(out, k, int16(1))
	case array.Uint16:
		eyeFill(out, k, uint16(1))
	case array.Uint32:
		eyeFill(out, k, uint32(1))
	case array.Uint64:
		eyeFill(out, k, uint64(1))
	case array.Float16:
		eyeFill(out, k, array.NewF16(1))
	case array.BFloat16:
		eyeFill(out, k, array.NewBF16(1))
	case array.Float32:
		eyeFill(out, k, float32(1))
	case array.Float64:
		eyeFill(out, k, float64(1))
	case array.Complex64:
		eyeFill(out, k, complex64(1))
	default:
		return array.Errorf("cpu.Eye", "invalid dtype %v", out.DType)
	}
	return nil
}

func eyeFill[T any](out Buf, k int, one T) {
	n, m := out.Shape[0], out.Shape[1]
	if n == 0 || m == 0 {
		return
	}
	o := elems[T](out)
	s0, s1 := out.Strides[0], out.Strides[1]
	var zero T
	ParallelFor(n, max(1, grain/m), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := out.Offset + i*s0
			for j := range m {
				o[row+j*s1] = zero
			}
			// k >= -i && k < m-i rather than 0 <= i+k < m: i+k may overflow
			if k >= -i && k < m-i {
				o[row+(i+k)*s1] = one
			}
		}
	})
}
