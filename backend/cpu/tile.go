package cpu

import "github.com/fathom-go/fathom/array"

// GatherRange copies the elements of src whose row-major flat index lies
// in [lo, hi) into dst, contiguously, in that order. w must be
// NewWalker(src.Shape, src.Strides); callers reuse one walker for the
// many ranges of one array (the fused interpreter's tiles).
func GatherRange(w *Walker, dst []byte, src Buf, lo, hi int) {
	switch src.DType.Size() {
	case 1:
		gatherRange[uint8](w, dst, src, lo, hi)
	case 2:
		gatherRange[uint16](w, dst, src, lo, hi)
	case 4:
		gatherRange[uint32](w, dst, src, lo, hi)
	default:
		gatherRange[uint64](w, dst, src, lo, hi)
	}
}

func gatherRange[T any](w *Walker, dst []byte, src Buf, lo, hi int) {
	d := Elems[T](Buf{Data: dst})
	s := Elems[T](src)
	st := w.InnerStrides()[0]
	i := 0
	w.Runs(lo, hi, []int{src.Offset}, func(offs []int, n int) {
		o := offs[0]
		switch st {
		case 1:
			copy(d[i:i+n], s[o:o+n])
		case 0:
			v := s[o]
			for j := range n {
				d[i+j] = v
			}
		default:
			for j := range n {
				d[i+j] = s[o+j*st]
			}
		}
		i += n
	})
}

// UnaryTileFunc returns op's kernel over contiguous runs of dtype dt,
// for float32 and float64 functions whose result keeps the dtype, or nil.
// The fused interpreter calls it on each tile directly, without the shape
// checks and dispatch of Unary, which cost more than a small tile's
// arithmetic.
func UnaryTileFunc(op UnaryOp, dt array.DType) func(dst, src []byte) {
	if out, ok := UnaryResult(op, dt); !ok || out != dt {
		return nil
	}
	switch dt {
	case array.Float32:
		k := floatKernel[float32](op)
		return func(d, s []byte) { k(asSlice[float32](d), asSlice[float32](s)) }
	case array.Float64:
		k := floatKernel[float64](op)
		return func(d, s []byte) { k(asSlice[float64](d), asSlice[float64](s)) }
	}
	return nil
}

// BinaryTileFunc returns the kernel of an arithmetic op (Add, Sub, Mul,
// Div, Maximum, Minimum) over contiguous float32 or float64 runs, or nil;
// see UnaryTileFunc.
func BinaryTileFunc(op BinaryOp, dt array.DType) func(dst, a, b []byte) {
	switch op {
	case Add, Sub, Mul, Div, Maximum, Minimum:
	default:
		return nil
	}
	switch dt {
	case array.Float32:
		k := arithKernel[float32](op).vv
		return func(d, a, b []byte) { k(asSlice[float32](d), asSlice[float32](a), asSlice[float32](b)) }
	case array.Float64:
		k := arithKernel[float64](op).vv
		return func(d, a, b []byte) { k(asSlice[float64](d), asSlice[float64](a), asSlice[float64](b)) }
	}
	return nil
}

// asSlice views b as a slice of T.
func asSlice[T any](b []byte) []T {
	return Elems[T](Buf{Data: b})
}
