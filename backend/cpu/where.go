package cpu

import (
	"github.com/fathom-go/fathom/array"
)

// Where computes out = x where cond is true, y elsewhere. cond is Bool, x
// and y have out's dtype, and all three have out's shape, which the caller has checked (broadcast
// operands have zero strides; any may be strided). The selection only
// moves bits, so it runs on the element size alone.
func Where(out, cond, x, y Buf) error {
	if cond.DType != array.Bool {
		return array.Errorf("cpu.Where", "condition has dtype %v, not bool", cond.DType)
	}
	if x.DType != out.DType || y.DType != out.DType {
		return array.Errorf("cpu.Where", "dtypes %v and %v for a result of dtype %v", x.DType, y.DType, out.DType)
	}
	switch out.DType.Size() {
	case 1:
		whereRuns[uint8](out, cond, x, y)
	case 2:
		whereRuns[uint16](out, cond, x, y)
	case 4:
		whereRuns[uint32](out, cond, x, y)
	default:
		whereRuns[uint64](out, cond, x, y)
	}
	return nil
}

func whereRuns[T any](out, cond, x, y Buf) {
	w := newWalker(out.Shape, out.Strides, cond.Strides, x.Strides, y.Strides)
	o, c, a, b := elems[T](out), elems[bool](cond), elems[T](x), elems[T](y)
	st := w.InnerStrides()
	so, sc, sa, sb := st[0], st[1], st[2], st[3]
	base := []int{out.Offset, cond.Offset, x.Offset, y.Offset}
	ParallelFor(w.Size(), grain, func(lo, hi int) {
		w.Runs(lo, hi, base, func(offs []int, n int) {
			po, pc, pa, pb := offs[0], offs[1], offs[2], offs[3]
			if so == 1 && sc == 1 && sa == 1 && sb == 1 {
				d, cc, aa, bb := o[po:po+n], c[pc:pc+n], a[pa:pa+n], b[pb:pb+n]
				for i := range d {
					if cc[i] {
						d[i] = aa[i]
					} else {
						d[i] = bb[i]
					}
				}
				return
			}
			for i := range n {
				if c[pc+i*sc] {
					o[po+i*so] = a[pa+i*sa]
				} else {
					o[po+i*so] = b[pb+i*sb]
				}
			}
		})
	})
}
