package cpu

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
