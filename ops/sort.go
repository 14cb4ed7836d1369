package ops

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
)

// checkSortable rejects nil arrays and the dtypes without an order, and
// returns the normalised axis.
func checkSortable(op string, a *array.Array, axis int) int {
	requireNonNil(op, a)
	if a.DType().IsComplex() {
		array.Panicf(op, "dtype %v has no order", a.DType())
	}
	return normAxis(op, axis, a.Ndim())
}

// SortPrim sorts along an axis.
type SortPrim struct{ Axis int }

func (p *SortPrim) Name() string { return "Sort" }
func (p *SortPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *SortPrim) evalCPU(in, out []*array.Array) error {
	return cpu.Sort(alloc(out[0]), bufOf(in[0]), p.Axis)
}
func (p *SortPrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*SortPrim)
	return ok && q.Axis == p.Axis
}

// VJP sends each sorted element's cotangent back to where the element
// came from: Sort is TakeAlongAxis of ArgSort's permutation, whose
// transpose scatters through the same permutation.
func (p *SortPrim) VJP(in, _, cots []*array.Array, _ []int) []*array.Array {
	return []*array.Array{scatterAdd(ArgSort(in[0], p.Axis), cots[0], p.Axis, in[0].Dim(p.Axis))}
}

// JVP permutes the tangent like the input.
func (p *SortPrim) JVP(in, _, tans []*array.Array, _ []int) []*array.Array {
	return []*array.Array{TakeAlongAxis(tans[0], ArgSort(in[0], p.Axis), p.Axis)}
}

// Vmap sorts along the same axis, shifted past the batch axis.
func (p *SortPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	return []*array.Array{Sort(in[0], sortVmapAxis(p.Axis, axes[0]))}, axes[:1]
}

// sortVmapAxis is the position of axis of an unbatched array once the
// batch axis is inserted at batch.
func sortVmapAxis(axis, batch int) int {
	if batch <= axis {
		return axis + 1
	}
	return axis
}

// Sort returns a sorted ascending along axis. NaNs go last, as in numpy.
// Every real dtype and bool can be sorted; complex64 cannot.
func Sort(a *array.Array, axis int) *array.Array {
	ax := checkSortable("ops.Sort", a, axis)
	return node(a.Shape(), a.DType(), &SortPrim{Axis: ax}, a)
}

// ArgSortPrim returns the positions that sort along an axis.
type ArgSortPrim struct{ Axis int }

func (p *ArgSortPrim) Name() string { return "ArgSort" }
func (p *ArgSortPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *ArgSortPrim) evalCPU(in, out []*array.Array) error {
	return cpu.ArgSort(alloc(out[0]), bufOf(in[0]), p.Axis)
}
func (p *ArgSortPrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*ArgSortPrim)
	return ok && q.Axis == p.Axis
}

// VJP is zero: positions are integers and piecewise constant.
func (p *ArgSortPrim) VJP(_, _, _ []*array.Array, argnums []int) []*array.Array {
	return make([]*array.Array, len(argnums))
}

// JVP is zero.
func (p *ArgSortPrim) JVP(_, _, _ []*array.Array, _ []int) []*array.Array {
	return []*array.Array{nil}
}

// Vmap argsorts along the same axis, shifted past the batch axis.
func (p *ArgSortPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	return []*array.Array{ArgSort(in[0], sortVmapAxis(p.Axis, axes[0]))}, axes[:1]
}

// ArgSort returns the positions (Int32) that sort a along axis. The sort
// is stable (numpy's kind="stable"): equal elements keep their order, and
// NaNs come last.
func ArgSort(a *array.Array, axis int) *array.Array {
	ax := checkSortable("ops.ArgSort", a, axis)
	return node(a.Shape(), array.Int32, &ArgSortPrim{Axis: ax}, a)
}

// TopKPrim selects the k largest elements along an axis.
type TopKPrim struct{ K, Axis int }

func (p *TopKPrim) Name() string { return "TopK" }
func (p *TopKPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *TopKPrim) evalCPU(in, out []*array.Array) error {
	return cpu.TopK(alloc(out[0]), bufOf(in[0]), p.Axis, p.K)
}
func (p *TopKPrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*TopKPrim)
	return ok && q.K == p.K && q.Axis == p.Axis
}

// VJP scatters the cotangent to the positions the k values came from.
func (p *TopKPrim) VJP(in, _, cots []*array.Array, _ []int) []*array.Array {
	return []*array.Array{scatterAdd(p.positions(in[0]), cots[0], p.Axis, in[0].Dim(p.Axis))}
}

// JVP takes the tangent at the positions of the k values.
func (p *TopKPrim) JVP(in, _, tans []*array.Array, _ []int) []*array.Array {
	return []*array.Array{TakeAlongAxis(tans[0], p.positions(in[0]), p.Axis)}
}

// Vmap selects along the same axis, shifted past the batch axis.
func (p *TopKPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	return []*array.Array{TopK(in[0], p.K, sortVmapAxis(p.Axis, axes[0]))}, axes[:1]
}

// positions returns where TopK's values are in a: the last k positions of
// ArgSort's order, largest first. NaNs sort last, so they count as the
// largest here too.
func (p *TopKPrim) positions(a *array.Array) *array.Array {
	n := a.Dim(p.Axis)
	last := SliceAxis(ArgSort(a, p.Axis), p.Axis, R(n-p.K, n))
	return SliceAxis(last, p.Axis, Range{None, None, -1})
}

// TopK returns the k largest elements of a along axis, largest first: the
// result has a's shape with k along axis. NaNs count as larger than every
// number (they are last in Sort's order). k must lie in [0, a's length
// along axis].
func TopK(a *array.Array, k, axis int) *array.Array {
	const op = "ops.TopK"
	ax := checkSortable(op, a, axis)
	sh := a.Shape()
	if k < 0 || k > sh[ax] {
		array.Panicf(op, "k=%d out of range for axis %d of shape %v", k, axis, sh)
	}
	sh[ax] = k
	return node(sh, a.DType(), &TopKPrim{K: k, Axis: ax}, a)
}
