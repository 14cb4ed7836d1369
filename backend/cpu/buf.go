package cpu

import (
	"unsafe"

	"github.com/fathom-go/fathom/internal/strided"

	"github.com/fathom-go/fathom/array"
)

// Buf is a strided view of raw memory: what every kernel reads and
// writes. Strides and Offset count elements, not bytes. A stride of 0
// repeats an element (broadcasting).
type Buf struct {
	Data    []byte
	DType   array.DType
	Shape   []int
	Strides []int
	Offset  int
}

// Size returns the number of elements in the view.
func (b Buf) Size() int {
	n := 1
	for _, d := range b.Shape {
		n *= d
	}
	return n
}

// RowMajor reports whether the view is row-major contiguous.
func (b Buf) RowMajor() bool {
	s := 1
	for i := len(b.Shape) - 1; i >= 0; i-- {
		if b.Shape[i] == 0 {
			return true
		}
		if b.Shape[i] != 1 && b.Strides[i] != s {
			return false
		}
		s *= b.Shape[i]
	}
	return true
}

// elems returns the whole of b's memory as a slice of T, indexed by
// element offsets. T must be b.DType's Go type.
func elems[T any](b Buf) []T {
	var z T
	n := len(b.Data) / int(unsafe.Sizeof(z))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b.Data))), n)
}

// flat reports whether every buf is a 1-D contiguous run: the fused
// interpreter's tiles, which kernels then take without a walker.
func flat(bufs ...Buf) bool {
	for _, b := range bufs {
		if len(b.Shape) != 1 || (b.Shape[0] > 1 && b.Strides[0] != 1) {
			return false
		}
	}
	return true
}

// repeated reports whether b is one element repeated: a 1-D view of
// stride 0, such as a scalar broadcast over a fused interpreter's tile.
func repeated(b Buf) bool {
	return len(b.Shape) == 1 && b.Strides[0] == 0
}

// Contiguous returns a row-major Buf over data for shape.
func contiguous(data []byte, dt array.DType, shape []int) Buf {
	return Buf{Data: data, DType: dt, Shape: shape, Strides: strided.RowMajor(shape)}
}

// walker visits elements shared by several operands of one shape in
// row-major order, one inner run at a time. Dimensions that are contiguous
// in every operand are merged first, so a contiguous array is a single run.
type walker struct {
	shape   []int   // merged shape
	strides [][]int // per operand, merged
	size    int
}

// newWalker merges the dimensions of shape that every operand's strides
// allow to merge.
func newWalker(shape []int, strides ...[]int) *walker {
	w := &walker{size: 1}
	for _, d := range shape {
		w.size *= d
	}
	var ms []int
	mst := make([][]int, len(strides))
	for i, d := range shape {
		if d == 1 {
			continue
		}
		if len(ms) > 0 {
			last := len(ms) - 1
			merge := true
			for k := range strides {
				if mst[k][last] != strides[k][i]*d {
					merge = false
					break
				}
			}
			if merge {
				ms[last] *= d
				for k := range strides {
					mst[k][last] = strides[k][i]
				}
				continue
			}
		}
		ms = append(ms, d)
		for k := range strides {
			mst[k] = append(mst[k], strides[k][i])
		}
	}
	if len(ms) == 0 {
		ms = []int{1}
		for k := range mst {
			mst[k] = []int{0}
		}
	}
	w.shape, w.strides = ms, mst
	return w
}

// Size returns the number of elements.
func (w *walker) Size() int { return w.size }

// InnerStrides returns each operand's stride along the innermost merged
// dimension: the step within every run.
func (w *walker) InnerStrides() []int {
	out := make([]int, len(w.strides))
	for k := range w.strides {
		out[k] = w.strides[k][len(w.shape)-1]
	}
	return out
}

// Runs calls fn for every run of consecutive elements (in row-major order)
// whose flat index lies in [lo, hi). offs holds each operand's offset of
// the run's first element (base offsets added); n is the run's length. offs
// is reused between calls.
func (w *walker) Runs(lo, hi int, base []int, fn func(offs []int, n int)) {
	if lo >= hi {
		return
	}
	nd := len(w.shape)
	inner := w.shape[nd-1]
	// The cursors live on the stack for the usual ranks and operand
	// counts: Runs is called once per slice by gathers and scatters.
	var idxBuf, offBuf [8]int
	idx, offs := idxBuf[:0], offBuf[:0]
	if nd > len(idxBuf) {
		idx = make([]int, 0, nd)
	}
	if len(w.strides) > len(offBuf) {
		offs = make([]int, 0, len(w.strides))
	}
	idx, offs = idx[:nd], offs[:len(w.strides)]
	rem := lo
	for d := nd - 1; d >= 0; d-- {
		idx[d] = rem % w.shape[d]
		rem /= w.shape[d]
	}
	for k := range offs {
		offs[k] = base[k]
		for d := 0; d < nd; d++ {
			offs[k] += idx[d] * w.strides[k][d]
		}
	}
	pos := lo
	cur := make([]int, len(offs))
	for pos < hi {
		n := min(inner-idx[nd-1], hi-pos)
		copy(cur, offs)
		fn(cur, n)
		pos += n
		if pos >= hi {
			return
		}
		for k := range offs {
			offs[k] += n * w.strides[k][nd-1]
		}
		idx[nd-1] += n
		for d := nd - 1; d > 0 && idx[d] == w.shape[d]; d-- {
			for k := range offs {
				offs[k] -= idx[d] * w.strides[k][d]
				offs[k] += w.strides[k][d-1]
			}
			idx[d] = 0
			idx[d-1]++
		}
	}
}
