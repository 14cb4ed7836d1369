package ops

import (
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
)

// kernelError renames a kernel's *array.Error after the op the caller
// used: an index out of range is only found while the kernel runs, and
// the message should name ops.Take, not cpu.Take.
func kernelError(err error, op string) error {
	if e, ok := err.(*array.Error); ok {
		return &array.Error{Op: op, Msg: e.Msg}
	}
	return err
}

func checkIndices(op string, idx *array.Array) {
	if !idx.DType().IsInteger() {
		array.Panicf(op, "indices have dtype %v; they must have an integer dtype", idx.DType())
	}
}

// takePrim gathers along one axis (numpy's take).
type takePrim struct{ Axis int }

func (p *takePrim) Name() string                                      { return "Take" }
func (p *takePrim) Eval(s array.Stream, in, out []*array.Array) error { return dispatch(p, s, in, out) }
func (p *takePrim) evalCPU(in, out []*array.Array) error {
	return kernelError(cpu.Take(alloc(out[0]), bufOf(in[0]), bufOf(in[1]), p.Axis), "ops.Take")
}
func (p *takePrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	o, err := allocGPU(out[0])
	if err != nil {
		return err
	}
	ls, chk, err := metal.Take(o, viewOf(in[0]), viewOf(in[1]), p.Axis)
	return runChecked(s, "ops.Take", ls, chk, err)
}
func (p *takePrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// OutputShapes puts the indices' new shape in place of Axis of the
// array's.
func (p *takePrim) OutputShapes(in []*array.Array) ([][]int, error) {
	s := in[0].Shape()
	if err := checkAxes("ops.Take", []int{p.Axis}, len(s)); err != nil {
		return nil, err
	}
	out := slices.Concat(s[:p.Axis], in[1].Shape(), s[p.Axis+1:])
	return [][]int{out}, nil
}

// VJP adds the cotangent back into a at the taken positions, so an index
// that repeats collects the cotangent of every use.
func (p *takePrim) VJP(in, _, cots []*array.Array, argnums []int) []*array.Array {
	return indexGradFirst(argnums, func() *array.Array {
		a, idx := in[0], in[1]
		sh := a.Shape()
		line := indexLineShape(sh, p.Axis, idx.Size())
		g := Reshape(cots[0], line...)
		pos := BroadcastTo(Reshape(idx, indexLineShape(indexOnes(len(sh)), p.Axis, idx.Size())...), line...)
		return scatterAdd(pos, g, p.Axis, sh[p.Axis])
	})
}

// JVP takes the tangent at the same positions.
func (p *takePrim) JVP(in, _, tans []*array.Array, argnums []int) []*array.Array {
	return []*array.Array{Take(indexTangent(0, tans, argnums), in[1], p.Axis)}
}

// Vmap takes from every batch member at once. When both the array and
// the indices are batched, each member's indices pick from its own array:
// a TakeAlongAxis with the indices flattened onto the taken axis.
func (p *takePrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	a, idx := in[0], in[1]
	switch {
	case axes[1] < 0:
		return []*array.Array{Take(batchFront(a, axes[0]), idx, p.Axis+1)}, []int{0}
	case axes[0] < 0:
		return []*array.Array{Take(a, idx, p.Axis)}, []int{p.Axis + axes[1]}
	}
	a, idx = batchFront(a, axes[0]), batchFront(idx, axes[1])
	ash, ish := a.Shape(), idx.Shape()
	n := 1
	for _, d := range ish[1:] {
		n *= d
	}
	pos := Reshape(idx, append([]int{ish[0]}, indexLineShape(indexOnes(len(ash)-1), p.Axis, n)...)...)
	out := TakeAlongAxis(a, pos, p.Axis+1)
	shape := append(append(append([]int{}, ash[:p.Axis+1]...), ish[1:]...), ash[p.Axis+2:]...)
	return []*array.Array{Reshape(out, shape...)}, []int{0}
}

// Take returns the elements of a at positions indices along axis
// (numpy's take with an axis): the result has shape a.Shape()[:axis] +
// indices.Shape() + a.Shape()[axis+1:] and a's dtype. indices may have
// any integer dtype; negative indices count from the end of the axis. An
// index out of range is an *array.Error returned when the result is
// evaluated.
func Take(a, indices *array.Array, axis int) *array.Array {
	const op = "ops.Take"
	requireNonNil(op, a, indices)
	checkIndices(op, indices)
	ax := normAxis(op, axis, a.Ndim())
	sh := a.Shape()
	if sh[ax] == 0 && indices.Size() > 0 {
		array.Panicf(op, "cannot take %v indices from axis %d of shape %v, which is empty", indices.Shape(), axis, sh)
	}
	outShape := append(append(append([]int{}, sh[:ax]...), indices.Shape()...), sh[ax+1:]...)
	if _, p := sizeProblem(outShape, a.DType()); p != "" {
		array.Panicf(op, "indices of shape %v taken along axis %d of shape %v give shape %v, which %s", indices.Shape(), axis, sh, outShape, p)
	}
	return node(outShape, a.DType(), &takePrim{Axis: ax}, a, indices)
}

// alongAxisShape checks a and idx for TakeAlongAxis and PutAlongAxis and
// returns the shape their other axes broadcast to, with idx's length
// along axis.
func alongAxisShape(op string, a, idx *array.Array, axis int) []int {
	checkIndices(op, idx)
	if idx.Ndim() != a.Ndim() {
		array.Panicf(op, "indices of shape %v and array of shape %v have different ranks", idx.Shape(), a.Shape())
	}
	as, is := a.Shape(), idx.Shape()
	out := make([]int, len(as))
	for d := range as {
		switch {
		case d == axis:
			out[d] = is[d]
		case as[d] == is[d] || is[d] == 1:
			out[d] = as[d]
		case as[d] == 1:
			out[d] = is[d]
		default:
			array.Panicf(op, "shapes %v and %v do not broadcast outside axis %d", as, is, axis)
		}
	}
	return out
}

// nonEmptyFrom rejects indices whose shape, broadcast with a's other
// axes, has more elements than an int counts, and indexing into an empty
// axis: every index would be out of range, which is knowable at the call.
func nonEmptyFrom(op string, a *array.Array, axis int, shape []int) {
	n, p := elemsProblem(shape)
	if p != "" {
		array.Panicf(op, "indices broadcast with array of shape %v along axis %d to shape %v, which %s", a.Shape(), axis, shape, p)
	}
	if a.Shape()[axis] == 0 && n > 0 {
		array.Panicf(op, "cannot index axis %d of shape %v, which is empty", axis, a.Shape())
	}
}

// takeAlongAxisPrim gathers one element per index along an axis.
type takeAlongAxisPrim struct{ Axis int }

func (p *takeAlongAxisPrim) Name() string { return "TakeAlongAxis" }
func (p *takeAlongAxisPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *takeAlongAxisPrim) evalCPU(in, out []*array.Array) error {
	shape := out[0].Shape()
	ashape := append([]int(nil), shape...)
	ashape[p.Axis] = in[0].Shape()[p.Axis]
	err := cpu.TakeAlongAxis(alloc(out[0]), bcastBufOf(in[0], ashape), bcastBufOf(in[1], shape), p.Axis)
	return kernelError(err, "ops.TakeAlongAxis")
}
func (p *takeAlongAxisPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	shape := out[0].Shape()
	ashape := slices.Clone(shape)
	ashape[p.Axis] = in[0].Shape()[p.Axis]
	o, err := allocGPU(out[0])
	if err != nil {
		return err
	}
	ls, chk, err := metal.TakeAlongAxis(o, bcastViewOf(in[0], ashape), bcastViewOf(in[1], shape), p.Axis)
	return runChecked(s, "ops.TakeAlongAxis", ls, chk, err)
}
func (p *takeAlongAxisPrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// OutputShapes checks the new shapes as TakeAlongAxis does.
func (p *takeAlongAxisPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	var out []int
	err := array.Try(func() { out = alongAxisShape("ops.TakeAlongAxis", in[0], in[1], p.Axis) })
	return [][]int{out}, err
}

// VJP adds the cotangent back into a at the taken positions (repeated
// indices accumulate), then sums it over the axes where a was broadcast.
func (p *takeAlongAxisPrim) VJP(in, _, cots []*array.Array, argnums []int) []*array.Array {
	return indexGradFirst(argnums, func() *array.Array {
		a, g := in[0], cots[0]
		pos := BroadcastTo(in[1], g.Shape()...)
		return sumToShape(scatterAdd(pos, g, p.Axis, a.Dim(p.Axis)), a.Shape())
	})
}

// JVP takes the tangent at the same positions.
func (p *takeAlongAxisPrim) JVP(in, _, tans []*array.Array, argnums []int) []*array.Array {
	return []*array.Array{TakeAlongAxis(indexTangent(0, tans, argnums), in[1], p.Axis)}
}

// Vmap puts the batch axes first; an unbatched operand gets a size-1
// batch axis, which TakeAlongAxis broadcasts.
func (p *takeAlongAxisPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	a, idx := indexBatchFront(in[0], axes[0]), indexBatchFront(in[1], axes[1])
	return []*array.Array{TakeAlongAxis(a, idx, p.Axis+1)}, []int{0}
}

// TakeAlongAxis picks elements of a along axis at the positions in idx
// (numpy's take_along_axis): result[..., i, ...] = a[..., idx[..., i, ...],
// ...]. idx has a's rank and an integer dtype; its other axes broadcast
// with a's. The result has idx's length along axis and a's dtype, so
// TakeAlongAxis(a, ArgSort(a, ax), ax) is Sort(a, ax). Negative indices
// count from the end; one out of range is an *array.Error from Eval.
func TakeAlongAxis(a, idx *array.Array, axis int) *array.Array {
	const op = "ops.TakeAlongAxis"
	requireNonNil(op, a, idx)
	ax := normAxis(op, axis, a.Ndim())
	shape := alongAxisShape(op, a, idx, ax)
	nonEmptyFrom(op, a, ax, shape)
	if p := bytesProblem(shapeSize(shape), a.DType()); p != "" {
		array.Panicf(op, "indices of shape %v along axis %d of shape %v give shape %v, which %s", idx.Shape(), axis, a.Shape(), shape, p)
	}
	return node(shape, a.DType(), &takeAlongAxisPrim{Axis: ax}, a, idx)
}

// putAlongAxisPrim scatters values along an axis into a copy of its
// first input.
type putAlongAxisPrim struct{ Axis int }

func (p *putAlongAxisPrim) Name() string { return "PutAlongAxis" }
func (p *putAlongAxisPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *putAlongAxisPrim) evalCPU(in, out []*array.Array) error {
	shape := out[0].Shape()
	shape[p.Axis] = in[1].Shape()[p.Axis]
	err := cpu.PutAlongAxis(alloc(out[0]), bufOf(in[0]), bcastBufOf(in[1], shape), bcastBufOf(in[2], shape), p.Axis)
	return kernelError(err, "ops.PutAlongAxis")
}
func (p *putAlongAxisPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	shape := out[0].Shape()
	shape[p.Axis] = in[1].Shape()[p.Axis]
	o, err := allocGPU(out[0])
	if err != nil {
		return err
	}
	ls, chk, err := metal.PutAlongAxis(o, viewOf(in[0]), bcastViewOf(in[1], shape), bcastViewOf(in[2], shape), p.Axis)
	return runChecked(s, "ops.PutAlongAxis", ls, chk, err)
}
func (p *putAlongAxisPrim) Equivalent(o array.Primitive) bool               { return sameParams(p, o) }
func (p *putAlongAxisPrim) OutputShapes(in []*array.Array) ([][]int, error) { return sameShape(in) }

// VJP passes the cotangent to a except where values overwrote it, and
// to each value the cotangent of the place it was written to, unless a
// later value along the axis overwrote that place too.
func (p *putAlongAxisPrim) VJP(in, _, cots []*array.Array, argnums []int) []*array.Array {
	a, idx, vals, g := in[0], in[1], in[2], cots[0]
	out := make([]*array.Array, len(argnums))
	for k, j := range argnums {
		switch j {
		case 0:
			out[k] = PutAlongAxis(g, idx, scalarOf(0, g.DType()), p.Axis)
		case 2:
			// The winner of each place is the last position j along the
			// axis that writes it, as the kernel writes in order.
			m := idx.Dim(p.Axis)
			pos := Reshape(Arange(0, float64(m), 1, array.Int32), indexLineShape(indexOnes(a.Ndim()), p.Axis, m)...)
			winner := PutAlongAxis(Full(a.Shape(), -1, array.Int32), idx, pos, p.Axis)
			won := Equal(TakeAlongAxis(winner, idx, p.Axis), pos)
			gv := Where(won, TakeAlongAxis(g, idx, p.Axis), scalarOf(0, g.DType()))
			out[k] = sumToShape(gv, vals.Shape())
		}
	}
	return out
}

// JVP puts the values' tangent into a's tangent; a missing one is zero.
func (p *putAlongAxisPrim) JVP(in, _, tans []*array.Array, argnums []int) []*array.Array {
	ta, tv := indexTangent(0, tans, argnums), indexTangent(2, tans, argnums)
	if ta == nil {
		ta = ZerosLike(in[0])
	}
	if tv == nil {
		tv = scalarOf(0, in[0].DType())
	}
	return []*array.Array{PutAlongAxis(ta, in[1], tv, p.Axis)}
}

// Vmap puts the batch axes first. An unbatched a is broadcast to the
// batch, since every member writes its own copy; unbatched indices get a
// size-1 batch axis; batched values get size-1 axes after the batch axis
// so that their other axes still line up from the right.
func (p *putAlongAxisPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	n := indexBatchSize(in, axes)
	a := in[0]
	if axes[0] < 0 {
		a = BroadcastTo(ExpandDims(a, 0), append([]int{n}, a.Shape()...)...)
	} else {
		a = batchFront(a, axes[0])
	}
	idx := indexBatchFront(in[1], axes[1])
	vals := in[2]
	if axes[2] >= 0 {
		vals = batchFront(vals, axes[2])
		if pad := a.Ndim() - vals.Ndim(); pad > 0 {
			vs := vals.Shape()
			vals = Reshape(vals, append(append([]int{n}, indexOnes(pad)...), vs[1:]...)...)
		}
	}
	return []*array.Array{PutAlongAxis(a, idx, vals, p.Axis+1)}, []int{0}
}

// PutAlongAxis returns a copy of a with values written along axis at the
// positions in idx (numpy's put_along_axis, without modifying a):
// result[..., idx[..., j, ...], ...] = values[..., j, ...]. idx has a's
// rank and an integer dtype, and its other axes are 1 or a's; values
// broadcast to idx's shape (with a's other axes) and are converted to a's
// dtype. Where an index repeats, the later value along axis wins.
// Negative indices count from the end; one out of range is an
// *array.Error from Eval.
func PutAlongAxis(a, idx, values *array.Array, axis int) *array.Array {
	const op = "ops.PutAlongAxis"
	requireNonNil(op, a, idx, values)
	ax := normAxis(op, axis, a.Ndim())
	shape := alongAxisShape(op, a, idx, ax)
	if !equalInts(shape[:ax], a.Shape()[:ax]) || !equalInts(shape[ax+1:], a.Shape()[ax+1:]) {
		array.Panicf(op, "indices of shape %v do not fit array of shape %v outside axis %d", idx.Shape(), a.Shape(), axis)
	}
	if vs := values.Shape(); len(vs) > len(shape) || !equalInts(broadcastOrNil(vs, shape), shape) {
		array.Panicf(op, "values of shape %v do not broadcast to indices' shape %v", vs, shape)
	}
	nonEmptyFrom(op, a, ax, shape)
	return node(a.Shape(), a.DType(), &putAlongAxisPrim{Axis: ax}, a, idx, AsType(values, a.DType()))
}

// broadcastOrNil is the broadcast of shapes a and b, or nil if they do
// not broadcast.
func broadcastOrNil(a, b []int) []int {
	var out []int
	if array.Try(func() { out = BroadcastShapes("", a, b) }) != nil {
		return nil
	}
	return out
}

// scatterAddPrim adds its second input (updates) into zeros along an
// axis at the positions in its first (indices): the transpose of
// TakeAlongAxis, which the derivatives of the gathers and sorts use.
// Repeated positions accumulate. Size is the output's length along Axis.
type scatterAddPrim struct{ Axis, Size int }

func (p *scatterAddPrim) Name() string { return "ScatterAdd" }
func (p *scatterAddPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *scatterAddPrim) evalCPU(in, out []*array.Array) error {
	err := cpu.ScatterAddAlongAxis(alloc(out[0]), bufOf(in[0]), bufOf(in[1]), p.Axis)
	return kernelError(err, "ops.ScatterAdd")
}
func (p *scatterAddPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	o, err := allocGPU(out[0])
	if err != nil {
		return err
	}
	ls, chk, err := metal.ScatterAddAlongAxis(o, viewOf(in[0]), viewOf(in[1]), p.Axis)
	return runChecked(s, "ops.ScatterAdd", ls, chk, err)
}
func (p *scatterAddPrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// VJP gathers the cotangent back at the positions: a scatter-add is
// linear in its updates, and TakeAlongAxis is its transpose.
func (p *scatterAddPrim) VJP(in, _, cots []*array.Array, argnums []int) []*array.Array {
	out := make([]*array.Array, len(argnums))
	for k, j := range argnums {
		if j == 1 {
			out[k] = TakeAlongAxis(cots[0], in[0], p.Axis)
		}
	}
	return out
}

// JVP scatters the updates' tangent the same way.
func (p *scatterAddPrim) JVP(in, _, tans []*array.Array, argnums []int) []*array.Array {
	t := indexTangent(1, tans, argnums)
	if t == nil {
		return []*array.Array{nil}
	}
	return []*array.Array{scatterAdd(in[0], t, p.Axis, p.Size)}
}

// Vmap broadcasts both inputs to the batch, batch axis first, and
// scatters along the shifted axis.
func (p *scatterAddPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	n := indexBatchSize(in, axes)
	x := make([]*array.Array, 2)
	for i := range in {
		if axes[i] < 0 {
			x[i] = BroadcastTo(ExpandDims(in[i], 0), append([]int{n}, in[i].Shape()...)...)
		} else {
			x[i] = batchFront(in[i], axes[i])
		}
	}
	return []*array.Array{scatterAdd(x[0], x[1], p.Axis+1, p.Size)}, []int{0}
}

// scatterAdd returns zeros of upd's shape with length size along axis,
// with upd added at the positions idx along axis. idx has upd's shape.
func scatterAdd(idx, upd *array.Array, axis, size int) *array.Array {
	shape := upd.Shape()
	shape[axis] = size
	return node(shape, upd.DType(), &scatterAddPrim{Axis: axis, Size: size}, idx, upd)
}

// indexGradFirst returns the cotangents for argnums of a primitive that is
// differentiable in its first input only (the others are indices).
func indexGradFirst(argnums []int, grad func() *array.Array) []*array.Array {
	out := make([]*array.Array, len(argnums))
	for k, j := range argnums {
		if j == 0 {
			out[k] = grad()
		}
	}
	return out
}

// indexTangent returns the tangent of input j, or nil if it has none.
func indexTangent(j int, tans []*array.Array, argnums []int) *array.Array {
	for k, a := range argnums {
		if a == j {
			return tans[k]
		}
	}
	return nil
}

// indexBatchSize is the batch size of a Vmap rule's batched inputs.
func indexBatchSize(in []*array.Array, axes []int) int {
	for i, ax := range axes {
		if ax >= 0 {
			return in[i].Dim(ax)
		}
	}
	return 1
}

// indexBatchFront puts x's batch axis first, or gives an unbatched x a
// size-1 one, which the along-axis gathers and scatters broadcast.
func indexBatchFront(x *array.Array, ax int) *array.Array {
	if ax < 0 {
		return ExpandDims(x, 0)
	}
	return batchFront(x, ax)
}

// indexLineShape is shape with its axis replaced by n.
func indexLineShape(shape []int, axis, n int) []int {
	out := append([]int{}, shape...)
	out[axis] = n
	return out
}

// indexOnes returns n ones: a shape of size-1 axes.
func indexOnes(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = 1
	}
	return out
}
