package cpu

import (
	"github.com/fathom-go/fathom/array"
)

// Copy writes in's elements into out, converting the dtype if they
// differ. Both may be strided; in may broadcast (zero strides). The shapes
// are equal (the caller has checked them). Conversions follow numpy's astype: floats to integers
// truncate toward zero, anything to bool is "not zero", complex to real
// keeps the real part.
func Copy(out, in Buf) error {
	if n := out.Size(); n > 0 && n <= grain && out.DType == in.DType && out.RowMajor() && in.RowMajor() {
		// One move, without a walker or ParallelFor, whose set-up would
		// cost more than a copy this small (a collective's 1 KiB block).
		sz := out.DType.Size()
		copy(out.Data[out.Offset*sz:(out.Offset+n)*sz], in.Data[in.Offset*sz:(in.Offset+n)*sz])
		return nil
	}
	w := newWalker(out.Shape, out.Strides, in.Strides)
	if out.DType == in.DType {
		switch out.DType.Size() {
		case 1:
			copyRuns[uint8](w, out, in)
		case 2:
			copyRuns[uint16](w, out, in)
		case 4:
			copyRuns[uint32](w, out, in)
		default:
			copyRuns[uint64](w, out, in)
		}
		return nil
	}
	convertCopy(w, out, in)
	return nil
}

func copyRuns[T any](w *walker, out, in Buf) {
	o, s := elems[T](out), elems[T](in)
	st := w.InnerStrides()
	so, si := st[0], st[1]
	ParallelFor(w.Size(), grain, func(lo, hi int) {
		w.Runs(lo, hi, []int{out.Offset, in.Offset}, func(offs []int, n int) {
			a, b := offs[0], offs[1]
			switch {
			case so == 1 && si == 1:
				copy(o[a:a+n], s[b:b+n])
			case so == 1 && si == 0:
				v := s[b]
				d := o[a : a+n]
				for i := range d {
					d[i] = v
				}
			default:
				for i := 0; i < n; i++ {
					o[a+i*so] = s[b+i*si]
				}
			}
		})
	})
}

// convertRuns copies with a per-element conversion f.
func convertRuns[S, D any](w *walker, out, in Buf, f func(S) D) {
	o, s := elems[D](out), elems[S](in)
	st := w.InnerStrides()
	so, si := st[0], st[1]
	ParallelFor(w.Size(), grain, func(lo, hi int) {
		w.Runs(lo, hi, []int{out.Offset, in.Offset}, func(offs []int, n int) {
			a, b := offs[0], offs[1]
			if so == 1 && si == 1 {
				d, src := o[a:a+n], s[b:b+n]
				for i := range d {
					d[i] = f(src[i])
				}
				return
			}
			for i := 0; i < n; i++ {
				o[a+i*so] = f(s[b+i*si])
			}
		})
	})
}

// numeric is every real Go element type that converts with a plain Go
// conversion.
type numeric interface {
	ewInt | float32 | float64
}

func convertCopy(w *walker, out, in Buf) {
	if f := convertTileFunc(in.DType, out.DType); f != nil {
		o, s := out.Data, in.Data
		osz, isz := out.DType.Size(), in.DType.Size()
		st := w.InnerStrides()
		if st[0] == 1 && st[1] == 1 {
			ParallelFor(w.Size(), grain, func(lo, hi int) {
				w.Runs(lo, hi, []int{out.Offset, in.Offset}, func(offs []int, n int) {
					f(o[offs[0]*osz:(offs[0]+n)*osz], s[offs[1]*isz:(offs[1]+n)*isz])
				})
			})
			return
		}
	}
	switch in.DType {
	case array.Bool:
		if out.DType.IsInteger() {
			// a bool is the byte 0 or 1: read it as a uint8
			convertNumeric[uint8](w, out, Buf{Data: in.Data, DType: array.Uint8, Shape: in.Shape, Strides: in.Strides, Offset: in.Offset})
			return
		}
		convertFrom(w, out, in, func(v bool) float64 {
			if v {
				return 1
			}
			return 0
		})
	case array.Uint8:
		convertNumeric[uint8](w, out, in)
	case array.Int32:
		convertNumeric[int32](w, out, in)
	case array.Int64:
		convertNumeric[int64](w, out, in)
	case array.Int8:
		convertNumeric[int8](w, out, in)
	case array.Int16:
		convertNumeric[int16](w, out, in)
	case array.Uint16:
		convertNumeric[uint16](w, out, in)
	case array.Uint32:
		convertNumeric[uint32](w, out, in)
	case array.Uint64:
		convertNumeric[uint64](w, out, in)
	case array.Float32:
		convertNumeric[float32](w, out, in)
	case array.Float64:
		convertNumeric[float64](w, out, in)
	case array.Float16:
		if out.DType == array.Float32 {
			convertRuns(w, out, in, array.F16.Float32)
			return
		}
		convertFrom(w, out, in, func(v array.F16) float64 { return float64(v.Float32()) })
	case array.BFloat16:
		if out.DType == array.Float32 {
			convertRuns(w, out, in, array.BF16.Float32)
			return
		}
		convertFrom(w, out, in, func(v array.BF16) float64 { return float64(v.Float32()) })
	case array.Complex64:
		if out.DType == array.Bool {
			convertRuns(w, out, in, func(v complex64) bool { return v != 0 })
			return
		}
		convertFrom(w, out, in, func(v complex64) float64 { return float64(real(v)) })
	}
}

// convertNumeric converts from a plain numeric type, with direct Go
// conversions for numeric targets: integers to integers wrap (numpy's
// astype), floats to integers go through floatToInt.
func convertNumeric[S numeric](w *walker, out, in Buf) {
	switch out.DType {
	case array.Uint8:
		convertToInt[S, uint8](w, out, in)
	case array.Int32:
		convertToInt[S, int32](w, out, in)
	case array.Int64:
		convertToInt[S, int64](w, out, in)
	case array.Int8:
		convertToInt[S, int8](w, out, in)
	case array.Int16:
		convertToInt[S, int16](w, out, in)
	case array.Uint16:
		convertToInt[S, uint16](w, out, in)
	case array.Uint32:
		convertToInt[S, uint32](w, out, in)
	case array.Uint64:
		convertToInt[S, uint64](w, out, in)
	case array.Float32:
		convertRuns(w, out, in, func(v S) float32 { return float32(v) })
	case array.Float64:
		convertRuns(w, out, in, func(v S) float64 { return float64(v) })
	case array.Float16:
		convertRuns(w, out, in, func(v S) array.F16 { return array.NewF16(float32(v)) })
	case array.BFloat16:
		convertRuns(w, out, in, func(v S) array.BF16 { return array.NewBF16(float32(v)) })
	case array.Bool:
		convertRuns(w, out, in, func(v S) bool { return v != 0 })
	default: // complex64
		convertRuns(w, out, in, func(v S) complex64 { return complex(float32(v), 0) })
	}
}

// convertToInt converts to the integer type D: from an integer type by
// Go's conversion (which wraps, as numpy's astype does), from a float
// by floatToInt.
func convertToInt[S numeric, D ewInt](w *walker, out, in Buf) {
	switch any(*new(S)).(type) {
	case float32, float64:
		convertRuns(w, out, in, func(v S) D { return floatToInt[D](float64(v)) })
	default:
		convertRuns(w, out, in, func(v S) D { return D(v) })
	}
}

// toInt64 truncates toward zero; NaN and out-of-range floats give 0
// rather than Go's implementation-defined result.
func toInt64[S numeric](v S) int64 {
	f := float64(v)
	if f != f || f >= 9.223372036854775807e18 || f < -9.223372036854775808e18 {
		return 0
	}
	return int64(v)
}

// floatToInt converts a float to the integer type D as numpy does on
// amd64 and arm64 for values in range: truncation toward zero. Values
// outside D's range but inside int64's wrap (they are truncated to int64
// first: -1.0 gives 255 as uint8, as numpy on amd64); uint64 takes
// [2^63, 2^64) exactly; NaN and values beyond int64 (and, for uint64,
// beyond 2^64) give 0, where numpy's result is platform-defined.
func floatToInt[D ewInt](f float64) D {
	if _, ok := any(D(0)).(uint64); ok && f >= 9.223372036854775807e18 && f < 1.8446744073709551616e19 {
		return D(uint64(f))
	}
	return D(toInt64(f))
}

// convertFrom converts through float64, for the less common pairs.
func convertFrom[S any](w *walker, out, in Buf, get func(S) float64) {
	switch out.DType {
	case array.Bool:
		convertRuns(w, out, in, func(v S) bool { return get(v) != 0 })
	case array.Uint8:
		convertRuns(w, out, in, func(v S) uint8 { return floatToInt[uint8](get(v)) })
	case array.Int32:
		convertRuns(w, out, in, func(v S) int32 { return floatToInt[int32](get(v)) })
	case array.Int64:
		convertRuns(w, out, in, func(v S) int64 { return toInt64(get(v)) })
	case array.Int8:
		convertRuns(w, out, in, func(v S) int8 { return floatToInt[int8](get(v)) })
	case array.Int16:
		convertRuns(w, out, in, func(v S) int16 { return floatToInt[int16](get(v)) })
	case array.Uint16:
		convertRuns(w, out, in, func(v S) uint16 { return floatToInt[uint16](get(v)) })
	case array.Uint32:
		convertRuns(w, out, in, func(v S) uint32 { return floatToInt[uint32](get(v)) })
	case array.Uint64:
		convertRuns(w, out, in, func(v S) uint64 { return floatToInt[uint64](get(v)) })
	case array.Float16:
		convertRuns(w, out, in, func(v S) array.F16 { return array.NewF16(float32(get(v))) })
	case array.BFloat16:
		convertRuns(w, out, in, func(v S) array.BF16 { return array.NewBF16(float32(get(v))) })
	case array.Float32:
		convertRuns(w, out, in, func(v S) float32 { return float32(get(v)) })
	case array.Float64:
		convertRuns(w, out, in, get)
	case array.Complex64:
		convertRuns(w, out, in, func(v S) complex64 { return complex(float32(get(v)), 0) })
	}
}
