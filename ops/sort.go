package ops

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
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

// sortPrim sorts along an axis.
type sortPrim struct{ Axis int }

func (p *sortPrim) Name() string                                      { return "Sort" }
func (p *sortPrim) Eval(s array.Stream, in, out []*array.Array) error { return dispatch(p, s, in, out) }
func (p *sortPrim) evalCPU(in, out []*array.Array) error {
	return cpu.Sort(alloc(out[0]), bufOf(in[0]), p.Axis)
}
func (p *sortPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) { return metal.Sort(o, viewOf(in[0]), p.Axis) })
}
func (p *sortPrim) Equivalent(o array.Primitive) bool               { return sameParams(p, o) }
func (p *sortPrim) OutputShapes(in []*array.Array) ([][]int, error) { return sameShape(in) }

// VJP sends each sorted element's cotangent back to where the element
// came from: Sort is TakeAlongAxis of ArgSort's permutation, whose
// transpose scatters through the same permutation.
func (p *sortPrim) VJP(in, _, cots []*array.Array, _ []int) []*array.Array {
	return []*array.Array{scatterAdd(ArgSort(in[0], p.Axis), cots[0], p.Axis, in[0].Dim(p.Axis))}
}

// JVP permutes the tangent like the input.
func (p *sortPrim) JVP(in, _, tans []*array.Array, _ []int) []*array.Array {
	return []*array.Array{TakeAlongAxis(tans[0], ArgSort(in[0], p.Axis), p.Axis)}
}

// Vmap sorts along the same axis, shifted past the batch axis.
func (p *sortPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
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
	return node(a.Shape(), a.DType(), &sortPrim{Axis: ax}, a)
}

// argSortPrim returns the positions that sort along an axis.
type argSortPrim struct{ Axis int }

func (p *argSortPrim) Name() string { return "ArgSort" }
func (p *argSortPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *argSortPrim) evalCPU(in, out []*array.Array) error {
	return cpu.ArgSort(alloc(out[0]), bufOf(in[0]), p.Axis)
}
func (p *argSortPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) { return metal.ArgSort(o, viewOf(in[0]), p.Axis) })
}
func (p *argSortPrim) Equivalent(o array.Primitive) bool               { return sameParams(p, o) }
func (p *argSortPrim) OutputShapes(in []*array.Array) ([][]int, error) { return sameShape(in) }

// VJP is zero: positions are integers and piecewise constant.
func (p *argSortPrim) VJP(_, _, _ []*array.Array, argnums []int) []*array.Array {
	return make([]*array.Array, len(argnums))
}

// JVP is zero.
func (p *argSortPrim) JVP(_, _, _ []*array.Array, _ []int) []*array.Array {
	return []*array.Array{nil}
}

// Vmap argsorts along the same axis, shifted past the batch axis.
func (p *argSortPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	return []*array.Array{ArgSort(in[0], sortVmapAxis(p.Axis, axes[0]))}, axes[:1]
}

// ArgSort returns the positions (Int32) that sort a along axis. The sort
// is stable (numpy's kind="stable"): equal elements keep their order, and
// NaNs come last.
func ArgSort(a *array.Array, axis int) *array.Array {
	ax := checkSortable("ops.ArgSort", a, axis)
	return node(a.Shape(), array.Int32, &argSortPrim{Axis: ax}, a)
}

// topKPrim selects the k largest elements along an axis.
type topKPrim struct{ K, Axis int }

func (p *topKPrim) Name() string                                      { return "TopK" }
func (p *topKPrim) Eval(s array.Stream, in, out []*array.Array) error { return dispatch(p, s, in, out) }
func (p *topKPrim) evalCPU(in, out []*array.Array) error {
	return cpu.TopK(alloc(out[0]), bufOf(in[0]), p.Axis, p.K)
}
func (p *topKPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		return metal.TopK(o, viewOf(in[0]), p.Axis, p.K)
	})
}
func (p *topKPrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// OutputShapes puts K along Axis of the input's new shape, which must
// have at least K there.
func (p *topKPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	s := in[0].Shape()
	if err := checkAxes("ops.TopK", []int{p.Axis}, len(s)); err != nil {
		return nil, err
	}
	if p.K > s[p.Axis] {
		return nil, array.Errorf("ops.TopK", "k=%d for axis %d of shape %v", p.K, p.Axis, s)
	}
	s[p.Axis] = p.K
	return [][]int{s}, nil
}

// VJP scatters the cotangent to the positions the k values came from.
func (p *topKPrim) VJP(in, _, cots []*array.Array, _ []int) []*array.Array {
	return []*array.Array{scatterAdd(p.positions(in[0]), cots[0], p.Axis, in[0].Dim(p.Axis))}
}

// JVP takes the tangent at the positions of the k values.
func (p *topKPrim) JVP(in, _, tans []*array.Array, _ []int) []*array.Array {
	return []*array.Array{TakeAlongAxis(tans[0], p.positions(in[0]), p.Axis)}
}

// Vmap selects along the same axis, shifted past the batch axis.
func (p *topKPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	return []*array.Array{TopK(in[0], p.K, sortVmapAxis(p.Axis, axes[0]))}, axes[:1]
}

// positions returns where TopK's values are in a: the last k positions of
// ArgSort's order, largest first. NaNs sort last, so they count as the
// largest here too.
func (p *topKPrim) positions(a *array.Array) *array.Array {
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
	return node(sh, a.DType(), &topKPrim{K: k, Axis: ax}, a)
}
