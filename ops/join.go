package ops

import (
	"math"
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
)

// concatenatePrim joins its inputs along Axis, converting each to the
// output's dtype.
type concatenatePrim struct{ Axis int }

func (p *concatenatePrim) Name() string { return "Concatenate" }
func (p *concatenatePrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *concatenatePrim) evalCPU(in, out []*array.Array) error {
	o := alloc(out[0])
	pos := 0
	for _, x := range in {
		if x.Size() > 0 {
			sub := o
			sub.Shape = x.Shape()
			sub.Offset = pos * o.Strides[p.Axis]
			if err := cpu.Copy(sub, bufOf(x)); err != nil {
				return err
			}
		}
		pos += x.Shape()[p.Axis]
	}
	return nil
}
func (p *concatenatePrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		var ls []metal.Launch
		pos := 0
		for _, x := range in {
			if x.Size() > 0 {
				sub := o
				sub.Shape = x.Shape()
				sub.Offset = pos * o.Strides[p.Axis]
				l, err := metal.Copy(sub, viewOf(x))
				if err != nil {
					return nil, err
				}
				ls = append(ls, l...)
			}
			pos += x.Shape()[p.Axis]
		}
		return ls, nil
	})
}
func (p *concatenatePrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// OutputShapes joins the inputs' new shapes, which must agree off Axis.
func (p *concatenatePrim) OutputShapes(in []*array.Array) ([][]int, error) {
	out := in[0].Shape()
	if err := checkAxes("ops.Concatenate", []int{p.Axis}, len(out)); err != nil {
		return nil, err
	}
	for _, x := range in[1:] {
		s := x.Shape()
		if len(s) != len(out) {
			return nil, array.Errorf("ops.Concatenate", "shapes %v and %v have different ranks", out, s)
		}
		for d := range s {
			if d != p.Axis && s[d] != out[d] {
				return nil, array.Errorf("ops.Concatenate", "shapes %v and %v differ off axis %d", out, s, p.Axis)
			}
		}
		out[p.Axis] += s[p.Axis]
	}
	return [][]int{out}, nil
}

// VJP gives each input its stretch of the cotangent along Axis, in the
// input's dtype; integer and bool inputs have none.
func (p *concatenatePrim) VJP(in, _, cots []*array.Array, argnums []int) []*array.Array {
	starts := make([]int, len(in)+1)
	for i, x := range in {
		starts[i+1] = starts[i] + x.Dim(p.Axis)
	}
	out := make([]*array.Array, len(argnums))
	for k, j := range argnums {
		if in[j].DType().IsInexact() {
			g := SliceAxis(cots[0], p.Axis, R(starts[j], starts[j+1]))
			out[k] = AsType(g, in[j].DType())
		}
	}
	return out
}

// JVP concatenates the tangents, with zeros for inputs that have none.
func (p *concatenatePrim) JVP(in, out, tans []*array.Array, argnums []int) []*array.Array {
	dt := out[0].DType()
	parts := make([]*array.Array, len(in))
	for i, x := range in {
		parts[i] = Zeros(x.Shape(), dt)
	}
	for k, j := range argnums {
		parts[j] = AsType(tans[k], dt)
	}
	return []*array.Array{Concatenate(parts, p.Axis)}
}

// Vmap puts every batch axis first and repeats the unbatched inputs
// along a new leading axis, so all of them join along Axis+1.
func (p *concatenatePrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	b := 0
	for i, x := range in {
		if axes[i] >= 0 {
			b = x.Dim(axes[i])
		}
	}
	parts := make([]*array.Array, len(in))
	for i, x := range in {
		if axes[i] >= 0 {
			parts[i] = batchFront(x, axes[i])
			continue
		}
		parts[i] = BroadcastTo(ExpandDims(x, 0), append([]int{b}, x.Shape()...)...)
	}
	return []*array.Array{Concatenate(parts, p.Axis+1)}, []int{0}
}

// checkJoinInputs rejects an empty list or a nil array among xs.
func checkJoinInputs(op string, xs []*array.Array) {
	if len(xs) == 0 {
		array.Panicf(op, "no arrays")
	}
	for i, x := range xs {
		if x == nil {
			array.Panicf(op, "array %d is nil", i)
		}
	}
}

// Concatenate joins arrays along an existing axis. They must have the
// same number of dimensions (at least one) and equal sizes on every other
// axis; the result has the promoted dtype of all of them.
func Concatenate(xs []*array.Array, axis int) *array.Array {
	const op = "ops.Concatenate"
	checkJoinInputs(op, xs)
	shape := xs[0].Shape()
	nd := len(shape)
	if nd == 0 {
		array.Panicf(op, "0-d arrays cannot be concatenated")
	}
	ax := normAxis(op, axis, nd)
	dt := xs[0].DType()
	for _, x := range xs[1:] {
		sh := x.Shape()
		ok := len(sh) == nd
		for i := 0; ok && i < nd; i++ {
			ok = i == ax || sh[i] == shape[i]
		}
		if !ok {
			array.Panicf(op, "shapes %v do not match except along axis %d", shapesText(joinShapes(xs)), axis)
		}
		if shape[ax] > math.MaxInt-sh[ax] {
			array.Panicf(op, "shapes %v concatenate to too many elements", shapesText(joinShapes(xs)))
		}
		shape[ax] += sh[ax]
		dt = array.Promote(dt, x.DType())
	}
	if _, p := sizeProblem(shape, dt); p != "" {
		array.Panicf(op, "shapes %v concatenate to shape %v, which %s", shapesText(joinShapes(xs)), shape, p)
	}
	if len(xs) == 1 {
		return xs[0]
	}
	return node(shape, dt, &concatenatePrim{Axis: ax}, xs...)
}

func joinShapes(xs []*array.Array) [][]int {
	out := make([][]int, len(xs))
	for i, x := range xs {
		out[i] = x.Shape()
	}
	return out
}

// Stack joins arrays of one shape along a new axis, which indexes the
// result (so it may be Ndim()).
func Stack(xs []*array.Array, axis int) *array.Array {
	const op = "ops.Stack"
	checkJoinInputs(op, xs)
	shape := xs[0].Shape()
	for _, x := range xs[1:] {
		if !equalInts(x.Shape(), shape) {
			array.Panicf(op, "shapes %v differ", shapesText(joinShapes(xs)))
		}
	}
	ax := normAxis(op, axis, len(shape)+1)
	// Concatenate would check the result too, but name itself.
	dt := xs[0].DType()
	for _, x := range xs[1:] {
		dt = array.Promote(dt, x.DType())
	}
	out := slices.Insert(slices.Clone(shape), ax, len(xs))
	if _, p := sizeProblem(out, dt); p != "" {
		array.Panicf(op, "%d arrays of shape %v stack to shape %v, which %s", len(xs), shape, out, p)
	}
	ex := make([]*array.Array, len(xs))
	for i, x := range xs {
		ex[i] = ExpandDims(x, ax)
	}
	return Concatenate(ex, ax)
}

// Split divides a along axis into n parts of equal size, which must
// divide the axis. The parts are views.
func Split(a *array.Array, n, axis int) []*array.Array {
	requireNonNil("ops.Split", a)
	const op = "ops.Split"
	ax := normAxis(op, axis, a.Ndim())
	d := a.Shape()[ax]
	if n <= 0 {
		array.Panicf(op, "cannot split into %d parts", n)
	}
	if d%n != 0 {
		array.Panicf(op, "axis %d of shape %v (size %d) does not split into %d equal parts", axis, a.Shape(), d, n)
	}
	k := d / n
	out := make([]*array.Array, n)
	for i := range out {
		out[i] = SliceAxis(a, ax, R(i*k, (i+1)*k))
	}
	return out
}

// SplitAt divides a along axis before each of indices, giving
// len(indices)+1 views: a[:i0], a[i0:i1], ..., a[ik:]. Indices follow
// slice bounds, as in numpy's split: negative ones count from the end,
// they are clamped to the axis, and a part whose end comes before its
// start is empty.
func SplitAt(a *array.Array, indices []int, axis int) []*array.Array {
	requireNonNil("ops.SplitAt", a)
	ax := normAxis("ops.SplitAt", axis, a.Ndim())
	out := make([]*array.Array, len(indices)+1)
	prev := 0
	for i, idx := range indices {
		out[i] = SliceAxis(a, ax, R(prev, idx))
		prev = idx
	}
	out[len(indices)] = SliceAxis(a, ax, Range{prev, None, 1})
	return out
}
