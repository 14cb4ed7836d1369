package metal

import (
	"encoding/binary"
	"math"
	"sync/atomic"

	"github.com/fathom-go/fathom/array"
)

// View is an operand of a plan: a strided window on device memory, the
// Metal side's counterpart of cpu.Buf. Strides and Offset count elements;
// a stride of 0 broadcasts, a negative stride walks backwards.
type View struct {
	Mem     Memory
	DType   array.DType
	Shape   []int
	Strides []int
	Offset  int
}

// Size returns the number of elements of v.
func (v View) Size() int {
	n := 1
	for _, d := range v.Shape {
		n *= d
	}
	return n
}

// span returns the lowest and one past the highest element offset that v
// reaches; an empty view reaches nothing.
func (v View) span() (lo, hi int) {
	lo, hi = v.Offset, v.Offset+1
	for i, d := range v.Shape {
		if d == 0 {
			return v.Offset, v.Offset
		}
		if s := v.Strides[i] * (d - 1); s < 0 {
			lo += s
		} else {
			hi += s
		}
	}
	return lo, hi
}

// checkDType reports whether the GPU kernels handle dt.
func checkDType(op string, dt array.DType) error {
	switch {
	case dt == array.Float64:
		return array.Errorf(op, "float64 is not supported on the GPU (Metal has no double)")
	case !dt.Valid():
		return array.Errorf(op, "invalid dtype %v", dt)
	}
	return nil
}

// check validates v as operand `what` of op: a supported dtype, strides
// for every dimension, and every element it reaches inside its memory (an
// out-of-bounds GPU access corrupts memory silently).
func (v View) check(op, what string) error {
	if err := checkDType(op, v.DType); err != nil {
		return err
	}
	if len(v.Strides) != len(v.Shape) {
		return array.Errorf(op, "%s: %d strides for shape %v", what, len(v.Strides), v.Shape)
	}
	for _, d := range v.Shape {
		if d < 0 {
			return array.Errorf(op, "%s: negative dimension in shape %v", what, v.Shape)
		}
	}
	lo, hi := v.span()
	if lo == hi {
		return nil
	}
	if v.Mem == nil {
		return array.Errorf(op, "%s: no memory", what)
	}
	if n := len(v.Mem.Bytes()) / v.DType.Size(); lo < 0 || hi > n {
		return array.Errorf(op, "%s: view (shape %v, strides %v, offset %d) reaches elements [%d, %d) of a %d-element buffer",
			what, v.Shape, v.Strides, v.Offset, lo, hi, n)
	}
	return nil
}

// layout is the iteration space shared by a kernel's operands, with
// dimensions of size 1 dropped and neighbours merged where every operand
// allows it (like backend/cpu's walker): a contiguous operand set becomes one
// dimension, and strided kernels do less index arithmetic.
type layout struct {
	shape   []int
	strides [][]int // per operand
}

func collapse(shape []int, views ...View) layout {
	l := layout{strides: make([][]int, len(views))}
	for i, d := range shape {
		if d == 1 {
			continue
		}
		if last := len(l.shape) - 1; last >= 0 {
			merge := true
			for k, v := range views {
				if l.strides[k][last] != v.Strides[i]*d {
					merge = false
					break
				}
			}
			if merge {
				l.shape[last] *= d
				for k, v := range views {
					l.strides[k][last] = v.Strides[i]
				}
				continue
			}
		}
		l.shape = append(l.shape, d)
		for k, v := range views {
			l.strides[k] = append(l.strides[k], v.Strides[i])
		}
	}
	if len(l.shape) == 0 {
		// One element: any stride will do, and 1 picks the contiguous
		// variants.
		l.shape = []int{1}
		for k := range l.strides {
			l.strides[k] = []int{1}
		}
	}
	return l
}

// flat reports whether the layout is one dimension in which operand k has
// stride s.
func (l layout) flat(k, s int) bool { return len(l.shape) == 1 && l.strides[k][0] == s }

// maxGridDim is the largest grid dimension a plan uses: Metal's grid sizes
// are 32-bit. Tests lower it to exercise the 2-D grids of large arrays.
var maxGridDim atomic.Int64

func init() { maxGridDim.Store(math.MaxUint32) }

// groupSize is the threadgroup size of the elementwise kernels.
const groupSize = 256

// contigGrid returns the grid of a contiguous kernel over n elements: one
// dimension, or two with the kernel bounds-checking its linear index.
func contigGrid(n int) (grid, group [3]int) {
	m := int(min(maxGridDim.Load(), math.MaxInt))
	if n <= m {
		return [3]int{n, 1, 1}, [3]int{min(n, groupSize), 1, 1}
	}
	return [3]int{m, (n + m - 1) / m, 1}, [3]int{groupSize, 1, 1}
}

// stridedGrid returns the grid of a strided kernel over the collapsed
// shape (see strided_offset in common.h).
func stridedGrid(op string, shape []int) (grid, group [3]int, err error) {
	nd := len(shape)
	grid = [3]int{shape[nd-1], 1, 1}
	if nd > 1 {
		grid[1] = shape[nd-2]
	}
	for _, d := range shape[:max(0, nd-2)] {
		grid[2] *= d
	}
	for _, g := range grid {
		if int64(g) > maxGridDim.Load() {
			return grid, group, array.Errorf(op, "strided iteration space %v exceeds the GPU's grid limit", shape)
		}
	}
	gx := min(grid[0], groupSize)
	group = [3]int{gx, min(grid[1], groupSize/gx), 1}
	return grid, group, nil
}

// stridedArgs returns the buffer arguments and the strided layout
// parameters (see strided_offset in common.h) of views over l: each buffer
// is bound at the lowest element its view reaches, and the parameters give
// the offset of the view's first element from there.
func stridedArgs(l layout, views []View, writes int) ([]bufArg, []int64) {
	nd := len(l.shape)
	p := make([]int64, 0, 1+nd+len(views)*(nd+1))
	p = append(p, int64(nd))
	for _, d := range l.shape {
		p = append(p, int64(d))
	}
	args := make([]bufArg, len(views))
	for k, v := range views {
		lo, _ := v.span()
		args[k] = bufArg{Mem: v.Mem, Offset: lo * v.DType.Size(), Write: k >= len(views)-writes}
		p = append(p, int64(v.Offset-lo))
		for _, s := range l.strides[k] {
			p = append(p, int64(s))
		}
	}
	return args, p
}

// contigArgs binds each view at its first element; the last `writes`
// views are written.
func contigArgs(views []View, writes int) []bufArg {
	args := make([]bufArg, len(views))
	for k, v := range views {
		args[k] = bufArg{Mem: v.Mem, Offset: v.Offset * v.DType.Size(), Write: k >= len(views)-writes}
	}
	return args
}

// packParams encodes kernel parameters as the little-endian longs the
// kernels read through `constant long* p`.
func packParams(p []int64) []byte {
	b := make([]byte, 8*len(p))
	for i, v := range p {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
	}
	return b
}
