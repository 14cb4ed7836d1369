package ops

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
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

// TakePrim gathers along one axis (numpy's take).
type TakePrim struct{ Axis int }

func (p *TakePrim) Name() string { return "Take" }
func (p *TakePrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *TakePrim) evalCPU(in, out []*array.Array) error {
	return kernelError(cpu.Take(alloc(out[0]), bufOf(in[0]), bufOf(in[1]), p.Axis), "ops.Take")
}
func (p *TakePrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*TakePrim)
	return ok && q.Axis == p.Axis
}

// Take returns the elements of a at positions indices along axis
// (numpy's take with an axis): the result has shape a.Shape()[:axis] +
// indices.Shape() + a.Shape()[axis+1:] and a's dtype. indices may have
// any integer dtype; negative indices count from the end of the axis. An
// index out of range is an *array.Error returned when the result is
// evaluated.
func Take(a, indices *array.Array, axis int) *array.Array {
	const op = "ops.Take"
	checkIndices(op, indices)
	ax := normAxis(op, axis, a.Ndim())
	sh := a.Shape()
	if sh[ax] == 0 && indices.Size() > 0 {
		array.Panicf(op, "cannot take %v indices from axis %d of shape %v, which is empty", indices.Shape(), axis, sh)
	}
	outShape := append(append(append([]int{}, sh[:ax]...), indices.Shape()...), sh[ax+1:]...)
	return node(outShape, a.DType(), &TakePrim{Axis: ax}, a, indices)
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

// nonEmptyFrom rejects indexing into an empty axis: every index would be
// out of range, which is knowable at the call.
func nonEmptyFrom(op string, a *array.Array, axis int, shape []int) {
	n := 1
	for _, d := range shape {
		n *= d
	}
	if a.Shape()[axis] == 0 && n > 0 {
		array.Panicf(op, "cannot index axis %d of shape %v, which is empty", axis, a.Shape())
	}
}

// TakeAlongAxisPrim gathers one element per index along an axis.
type TakeAlongAxisPrim struct{ Axis int }

func (p *TakeAlongAxisPrim) Name() string { return "TakeAlongAxis" }
func (p *TakeAlongAxisPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *TakeAlongAxisPrim) evalCPU(in, out []*array.Array) error {
	shape := out[0].Shape()
	ashape := append([]int(nil), shape...)
	ashape[p.Axis] = in[0].Shape()[p.Axis]
	err := cpu.TakeAlongAxis(alloc(out[0]), bcastBufOf(in[0], ashape), bcastBufOf(in[1], shape), p.Axis)
	return kernelError(err, "ops.TakeAlongAxis")
}
func (p *TakeAlongAxisPrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*TakeAlongAxisPrim)
	return ok && q.Axis == p.Axis
}

// TakeAlongAxis picks elements of a along axis at the positions in idx
// (numpy's take_along_axis): result[..., i, ...] = a[..., idx[..., i, ...],
// ...]. idx has a's rank and an integer dtype; its other axes broadcast
// with a's. The result has idx's length along axis and a's dtype, so
// TakeAlongAxis(a, ArgSort(a, ax), ax) is Sort(a, ax). Negative indices
// count from the end; one out of range is an *array.Error from Eval.
func TakeAlongAxis(a, idx *array.Array, axis int) *array.Array {
	const op = "ops.TakeAlongAxis"
	ax := normAxis(op, axis, a.Ndim())
	shape := alongAxisShape(op, a, idx, ax)
	nonEmptyFrom(op, a, ax, shape)
	return node(shape, a.DType(), &TakeAlongAxisPrim{Axis: ax}, a, idx)
}

// PutAlongAxisPrim scatters values along an axis into a copy of its
// first input.
type PutAlongAxisPrim struct{ Axis int }

func (p *PutAlongAxisPrim) Name() string { return "PutAlongAxis" }
func (p *PutAlongAxisPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *PutAlongAxisPrim) evalCPU(in, out []*array.Array) error {
	shape := out[0].Shape()
	shape[p.Axis] = in[1].Shape()[p.Axis]
	err := cpu.PutAlongAxis(alloc(out[0]), bufOf(in[0]), bcastBufOf(in[1], shape), bcastBufOf(in[2], shape), p.Axis)
	return kernelError(err, "ops.PutAlongAxis")
}
func (p *PutAlongAxisPrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*PutAlongAxisPrim)
	return ok && q.Axis == p.Axis
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
	ax := normAxis(op, axis, a.Ndim())
	shape := alongAxisShape(op, a, idx, ax)
	if !equalInts(shape[:ax], a.Shape()[:ax]) || !equalInts(shape[ax+1:], a.Shape()[ax+1:]) {
		array.Panicf(op, "indices of shape %v do not fit array of shape %v outside axis %d", idx.Shape(), a.Shape(), axis)
	}
	if vs := values.Shape(); len(vs) > len(shape) || !equalInts(broadcastOrNil(vs, shape), shape) {
		array.Panicf(op, "values of shape %v do not broadcast to indices' shape %v", vs, shape)
	}
	nonEmptyFrom(op, a, ax, shape)
	return node(a.Shape(), a.DType(), &PutAlongAxisPrim{Axis: ax}, a, idx, AsType(values, a.DType()))
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
