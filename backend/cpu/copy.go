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
	uint8 | int32 | int64 | float32 | float64
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
// conversions for numeric targets.
func convertNumeric[S numeric](w *walker, out, in Buf) {
	switch out.DType {
	case array.Uint8:
		convertRuns(w, out, in, func(v S) uint8 { return uint8(toInt64(v)) })
	case array.Int32:
		convertRuns(w, out, in, func(v S) int32 { return int32(toInt64(v)) })
	case array.Int64:
		convertRuns(w, out, in, toInt64[S])
	case array.Float32:
		convertRuns(w, out, in, func(v S) float32 { return float32(v) })
	case array.Float64:
		convertRuns(w, out, in, func(v S) float64 { return float64(v) })
	case array.Float16:
		convertRuns(w, out, in, func(v S) array.F16 { return array.NewF16(float32(v)) })
	case array.BFloat16:
		convertRuns(w, out, in, func(v S) array.BF16 { return array.NewBF16(float32(v)) })
	default:
		convertFrom(w, out, in, func(v S) float64 { return float64(v) })
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

// convertFrom converts through float64, for the less common pairs.
func convertFrom[S any](w *walker, out, in Buf, get func(S) float64) {
	switch out.DType {
	case array.Bool:
		convertRuns(w, out, in, func(v S) bool { return get(v) != 0 })
	case array.Uint8:
		convertRuns(w, out, in, func(v S) uint8 { return uint8(toInt64(get(v))) })
	case array.Int32:
		convertRuns(w, out, in, func(v S) int32 { return int32(toInt64(get(v))) })
	case array.Int64:
		convertRuns(w, out, in, func(v S) int64 { return toInt64(get(v)) })
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
