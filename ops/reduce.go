package ops

import (
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/internal/opset"
)

// reducePrim folds its input over Axes (sorted, distinct, non-negative)
// with Op; the result drops those axes.
type reducePrim struct {
	Op   opset.ReduceOp
	Axes []int
}

func (p *reducePrim) Name() string { return p.Op.String() }
func (p *reducePrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *reducePrim) evalCPU(in, out []*array.Array) error {
	return cpu.Reduce(p.Op, alloc(out[0]), bufOf(in[0]), p.Axes)
}
func (p *reducePrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		return metal.Reduce(p.Op, o, viewOf(in[0]), p.Axes)
	})
}
func (p *reducePrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*reducePrim)
	return ok && q.Op == p.Op && equalInts(q.Axes, p.Axes)
}

// Reduction returns the fold and the axes (sorted, distinct,
// non-negative): package compile fuses a reduction row-wise through it.
func (p *reducePrim) Reduction() (opset.ReduceOp, []int) { return p.Op, p.Axes }

// OutputShapes drops Axes from the input's new shape, which must have
// them.
func (p *reducePrim) OutputShapes(in []*array.Array) ([][]int, error) {
	if err := checkAxes("ops."+p.Name(), p.Axes, in[0].Ndim()); err != nil {
		return nil, err
	}
	kept, n := reducedShape(in[0].Shape(), p.Axes)
	if n == 0 && (p.Op == opset.Max || p.Op == opset.Min) {
		return nil, array.Errorf("ops."+p.Name(), "axes %v of shape %v are empty, and %v has no identity", p.Axes, in[0].Shape(), p.Op)
	}
	return [][]int{kept}, nil
}

// VJP broadcasts the cotangent back over the reduced axes: as it is for
// Sum; times the product of the other elements for Prod; split evenly
// among the elements equal to the result for Max and Min (as MLX does), so
// a slice holding a NaN gets NaN. All and Any have zero derivatives.
func (p *reducePrim) VJP(in, out, cots []*array.Array, argnums []int) []*array.Array {
	x, g := in[0], cots[0]
	shape := x.Shape()
	switch p.Op {
	case opset.Sum:
		return []*array.Array{reduceExpand(g, shape, p.Axes)}
	case opset.Prod:
		return []*array.Array{Mul(reduceExpand(g, shape, p.Axes), prodPartials(x, p.Axes))}
	case opset.Max, opset.Min:
		mask, count := reduceTies(x, out[0], p.Axes)
		return []*array.Array{Mul(reduceExpand(Div(g, count), shape, p.Axes), mask)}
	}
	return make([]*array.Array, len(argnums))
}

// JVP reduces the tangent as VJP spreads the cotangent: the sum of the
// tangents for Sum, weighted by the partial products for Prod, their mean
// over the tied extremes for Max and Min; nil for All and Any.
func (p *reducePrim) JVP(in, out, tans []*array.Array, _ []int) []*array.Array {
	x, t := in[0], tans[0]
	switch p.Op {
	case opset.Sum:
		return []*array.Array{reduceOver(opset.Sum, t, p.Axes)}
	case opset.Prod:
		return []*array.Array{reduceOver(opset.Sum, Mul(t, prodPartials(x, p.Axes)), p.Axes)}
	case opset.Max, opset.Min:
		mask, count := reduceTies(x, out[0], p.Axes)
		return []*array.Array{Div(reduceOver(opset.Sum, Mul(t, mask), p.Axes), count)}
	}
	return []*array.Array{nil}
}

// Vmap reduces the batch, moved to axis 0, over the axes shifted past it.
func (p *reducePrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	return []*array.Array{reduceOver(p.Op, batchFront(in[0], axes[0]), reduceShift(p.Axes))}, []int{0}
}

// reduceOver records op over exactly axes. Unlike Sum and the other public
// reductions, no axes leaves x as it is: the batched reduction of a 0-d
// array reduces nothing.
func reduceOver(op opset.ReduceOp, x *array.Array, axes []int) *array.Array {
	dt, _ := op.Result(x.DType())
	shape, _ := reducedShape(x.Shape(), axes)
	return node(shape, dt, &reducePrim{Op: op, Axes: axes}, x)
}

// reduceShift returns axes moved one place on, past a batch axis 0.
func reduceShift(axes []int) []int {
	out := make([]int, len(axes))
	for i, a := range axes {
		out[i] = a + 1
	}
	return out
}

// reduceExpand broadcasts g, the result of a reduction of an array of
// shape over axes, back to shape.
func reduceExpand(g *array.Array, shape, axes []int) *array.Array {
	keep := slices.Clone(shape)
	for _, a := range axes {
		keep[a] = 1
	}
	return BroadcastTo(Reshape(g, keep...), shape...)
}

// reduceTies returns where x attains y, its maximum or minimum over axes,
// as 0 or 1 in x's dtype, and the number of such elements for each result.
func reduceTies(x, y *array.Array, axes []int) (mask, count *array.Array) {
	mask = AsType(Equal(x, reduceExpand(y, x.Shape(), axes)), x.DType())
	return mask, reduceOver(opset.Sum, mask, axes)
}

// prodPartials returns, for each element of x, the product of the other
// elements folded with it over axes: the product of the exclusive running
// products from either side, so that zeros need no division (MLX's rule).
func prodPartials(x *array.Array, axes []int) *array.Array {
	f, axis, perm := foldAxes(x, axes)
	d := Mul(CumProd(f, axis, false, false), CumProd(f, axis, true, false))
	shape := x.Shape()
	if perm != nil {
		for i, a := range perm {
			shape[i] = x.Dim(a)
		}
	}
	return unfoldAxes(d, shape, perm)
}

// ReduceFunc is the signature of the reductions over axes (Sum, Mean,
// Max, ...), which KeepDims wraps.
type ReduceFunc func(a *array.Array, axes ...int) *array.Array

// reducedShape returns shape without the (normalised) axes, and the
// number of elements folded into each result.
func reducedShape(shape, axes []int) (kept []int, n int) {
	n = 1
	kept = []int{}
	for i, d := range shape {
		if containsInt(axes, i) {
			n *= d
			continue
		}
		kept = append(kept, d)
	}
	return kept, n
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func shapeSize(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// reduce records op over axes (none: all) of a.
func reduce(name string, op opset.ReduceOp, a *array.Array, axes []int) *array.Array {
	requireNonNil(name, a)
	ax := normAxes(name, axes, a.Ndim())
	dt, ok := op.Result(a.DType())
	if !ok {
		array.Panicf(name, "not supported for dtype %v", a.DType())
	}
	shape, n := reducedShape(a.Shape(), ax)
	if n == 0 && (op == opset.Max || op == opset.Min) {
		array.Panicf(name, "axes %v of shape %v are empty, and %v has no identity", ax, a.Shape(), op)
	}
	return node(shape, dt, &reducePrim{Op: op, Axes: ax}, a)
}

// Sum returns the sum of a's elements over axes (none: all). Bool sums
// are int32; integers keep their dtype and wrap on overflow (MLX);
// float16 and bfloat16 accumulate in float32. The sum of nothing is 0.
func Sum(a *array.Array, axes ...int) *array.Array { return reduce("ops.Sum", opset.Sum, a, axes) }

// Prod returns the product of a's elements over axes (none: all), with
// Sum's dtypes. The product of nothing is 1.
func Prod(a *array.Array, axes ...int) *array.Array {
	return reduce("ops.Prod", opset.Prod, a, axes)
}

// Max returns the largest of a's elements over axes (none: all); NaN if
// any of them is NaN (numpy's max). An empty axis is an error, as max has
// no identity; complex64 is not supported.
func Max(a *array.Array, axes ...int) *array.Array { return reduce("ops.Max", opset.Max, a, axes) }

// Min returns the smallest of a's elements over axes (none: all), like
// Max.
func Min(a *array.Array, axes ...int) *array.Array { return reduce("ops.Min", opset.Min, a, axes) }

// All reports, as bool, whether every element over axes (none: all) is
// nonzero; NaN counts as nonzero. All of nothing is true (numpy's all).
func All(a *array.Array, axes ...int) *array.Array {
	return reduce("ops.All", opset.All, a, axes)
}

// Any reports, as bool, whether some element over axes (none: all) is
// nonzero. Any of nothing is false.
func Any(a *array.Array, axes ...int) *array.Array { return reduce("ops.Any", opset.Any, a, axes) }

// Mean returns the mean over axes (none: all) in a's float dtype (float32
// for integers and bools, as in MLX): the sum divided by the number of
// elements. float16 and bfloat16 sum and divide in float32, so a large sum
// does not overflow. The mean of nothing is NaN (numpy).
func Mean(a *array.Array, axes ...int) *array.Array {
	const name = "ops.Mean"
	requireNonNil(name, a)
	ax := normAxes(name, axes, a.Ndim())
	dt := floatDType(a.DType())
	x := AsType(a, workDType(dt))
	return AsType(Div(Sum(x, ax...), count(x, ax, 0)), dt)
}

// NumberOfElements returns the number of elements of a over axes (none:
// all), the product of their sizes, as a 0-d array of dtype dt (MLX's
// number_of_elements). Unlike a.Size() it is an operation, counted when
// the graph runs, so a shapeless compiled function gets each call's
// count. dt must be an integer or float dtype.
func NumberOfElements(a *array.Array, dt array.DType, axes ...int) *array.Array {
	const name = "ops.NumberOfElements"
	requireNonNil(name, a)
	if !dt.IsInteger() && !dt.IsFloat() {
		array.Panicf(name, "dtype %v is not an integer or float dtype", dt)
	}
	ax := normAxes(name, axes, a.Ndim())
	return node([]int{}, dt, &countPrim{Axes: ax, DType: dt}, a)
}

// countPrim gives the number of elements of its input over Axes, less
// DDOF and at least 0, as a 0-d array of DType: the divisor of Mean and
// Var. It reads its input's shape when it runs, not when the graph is
// built, so a shapeless compiled trace divides by the right count for
// every shape.
type countPrim struct {
	Axes  []int
	DDOF  int
	DType array.DType
}

func count(x *array.Array, axes []int, ddof int) *array.Array {
	return node([]int{}, x.DType(), &countPrim{Axes: axes, DDOF: ddof, DType: x.DType()}, x)
}

func (p *countPrim) Name() string { return "Count" }

// Eval writes the count; it needs no kernel on any device.
func (p *countPrim) Eval(_ array.Stream, in, out []*array.Array) error {
	_, n := reducedShape(in[0].Shape(), p.Axes)
	v := scalarOf(float64(max(n-p.DDOF, 0)), p.DType)
	if err := v.Eval(); err != nil {
		return err
	}
	out[0].SetData(v.Storage(), []int{}, 0)
	return nil
}

func (p *countPrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*countPrim)
	return ok && equalInts(q.Axes, p.Axes) && q.DDOF == p.DDOF && q.DType == p.DType
}

// Counted returns the axes the count is over and the degrees of freedom
// it subtracts: package compile fuses a count row-wise through it.
func (p *countPrim) Counted() (axes []int, ddof int) { return p.Axes, p.DDOF }

// VJP: a count does not depend on its input's values.
func (p *countPrim) VJP(_, _, _ []*array.Array, argnums []int) []*array.Array {
	return make([]*array.Array, len(argnums))
}

// JVP: a count does not depend on its input's values.
func (p *countPrim) JVP(_, _, _ []*array.Array, _ []int) []*array.Array { return []*array.Array{nil} }

// Vmap counts over the same axes of one batch element: the count is the
// same for all, so the result is unbatched.
func (p *countPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	return []*array.Array{node([]int{}, p.DType, &countPrim{Axes: reduceShift(p.Axes), DDOF: p.DDOF, DType: p.DType}, batchFront(in[0], axes[0]))}, []int{-1}
}

// OutputShapes: a count is 0-d.
func (p *countPrim) OutputShapes([]*array.Array) ([][]int, error) { return [][]int{{}}, nil }

// workDType is the dtype float computations of dtype dt run in: float16
// and bfloat16 widen to float32.
func workDType(dt array.DType) array.DType {
	if dt == array.Float16 || dt == array.BFloat16 {
		return array.Float32
	}
	return dt
}

// Var returns the variance over axes (none: all): the mean squared
// deviation from the mean. See VarDDOF.
func Var(a *array.Array, axes ...int) *array.Array { return varDDOF("ops.Var", a, 0, axes) }

// VarDDOF returns the variance over axes (none: all) with ddof delta
// degrees of freedom, numpy's var(a, ddof=ddof): the sum of squared
// deviations from the mean divided by n - ddof. It is computed in two
// passes (mean, then deviations), in a's float dtype; the variance of
// complex64 is float32, of |x - mean|². When n - ddof <= 0 the result is
// NaN or +Inf, as in numpy.
func VarDDOF(a *array.Array, ddof int, axes ...int) *array.Array {
	return varDDOF("ops.VarDDOF", a, ddof, axes)
}

func varDDOF(name string, a *array.Array, ddof int, axes []int) *array.Array {
	requireNonNil(name, a)
	ax := normAxes(name, axes, a.Ndim())
	dt := floatDType(a.DType())
	x := AsType(a, workDType(dt))
	d := Sub(x, expandDims(Mean(x, ax...), ax))
	if dt == array.Complex64 {
		d, dt = Abs(d), array.Float32
	}
	w := d
	if dt == array.Float32 && d.DType() != dt {
		w = AsType(d, dt)
	}
	v := Div(Sum(Square(w), ax...), count(w, ax, ddof))
	return AsType(v, dt)
}

// Std returns the standard deviation over axes (none: all), the square
// root of Var.
func Std(a *array.Array, axes ...int) *array.Array { return Sqrt(varDDOF("ops.Std", a, 0, axes)) }

// StdDDOF returns the square root of VarDDOF(a, ddof, axes...).
func StdDDOF(a *array.Array, ddof int, axes ...int) *array.Array {
	return Sqrt(varDDOF("ops.StdDDOF", a, ddof, axes))
}

// KeepDims applies the reduction f to a over axes (none: all) and keeps
// the reduced axes in the result as axes of size 1, so it broadcasts
// against a (numpy's keepdims=True):
//
//	ops.Sub(a, ops.KeepDims(ops.Mean, a, 1))
func KeepDims(f ReduceFunc, a *array.Array, axes ...int) *array.Array {
	const name = "ops.KeepDims"
	requireNonNil(name, a)
	if f == nil {
		array.Panicf(name, "nil reduction")
	}
	ax := normAxes(name, axes, a.Ndim())
	r := f(a, axes...)
	kept, _ := reducedShape(a.Shape(), ax)
	if !equalInts(r.Shape(), kept) {
		array.Panicf(name, "the reduction of shape %v over axes %v has shape %v, not %v", a.Shape(), ax, r.Shape(), kept)
	}
	return expandDims(r, ax)
}

// argReducePrim finds the index of the largest (ArgMax) or smallest
// (ArgMin) element along Axis.
type argReducePrim struct {
	Op   opset.ArgOp
	Axis int
}

func (p *argReducePrim) Name() string { return p.Op.String() }
func (p *argReducePrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *argReducePrim) evalCPU(in, out []*array.Array) error {
	return cpu.ArgReduce(p.Op, alloc(out[0]), bufOf(in[0]), p.Axis)
}
func (p *argReducePrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		return metal.ArgReduce(p.Op, o, viewOf(in[0]), p.Axis)
	})
}
func (p *argReducePrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// OutputShapes drops Axis from the input's new shape, which must have it.
func (p *argReducePrim) OutputShapes(in []*array.Array) ([][]int, error) {
	if err := checkAxes("ops."+p.Name(), []int{p.Axis}, in[0].Ndim()); err != nil {
		return nil, err
	}
	kept, n := reducedShape(in[0].Shape(), []int{p.Axis})
	if n == 0 {
		return nil, array.Errorf("ops."+p.Name(), "axis %d of shape %v is empty", p.Axis, in[0].Shape())
	}
	return [][]int{kept}, nil
}

// ArgMax returns the int32 index along axis of the largest element of
// each line of a; ties go to the first, and a NaN wins (the first NaN),
// as in numpy. The result has a's shape without axis. An empty axis is an
// error; complex64 is not supported.
func ArgMax(a *array.Array, axis int) *array.Array {
	return argReduce("ops.ArgMax", opset.ArgMax, a, axis)
}

// ArgMin returns the int32 index along axis of the smallest element of
// each line of a, like ArgMax.
func ArgMin(a *array.Array, axis int) *array.Array {
	return argReduce("ops.ArgMin", opset.ArgMin, a, axis)
}

// VJP is zero: indices are piecewise constant.
func (p *argReducePrim) VJP(_, _, _ []*array.Array, argnums []int) []*array.Array {
	return make([]*array.Array, len(argnums))
}

// JVP is zero: indices are piecewise constant.
func (p *argReducePrim) JVP(_, _, _ []*array.Array, _ []int) []*array.Array {
	return []*array.Array{nil}
}

// Vmap searches the batch, moved to axis 0, along the axis after it.
func (p *argReducePrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	x := batchFront(in[0], axes[0])
	shape, _ := reducedShape(x.Shape(), []int{p.Axis + 1})
	return []*array.Array{node(shape, array.Int32, &argReducePrim{Op: p.Op, Axis: p.Axis + 1}, x)}, []int{0}
}

func argReduce(name string, op opset.ArgOp, a *array.Array, axis int) *array.Array {
	requireNonNil(name, a)
	if a.DType() == array.Complex64 {
		array.Panicf(name, "not supported for dtype %v", a.DType())
	}
	ax := normAxis(name, axis, a.Ndim())
	shape, n := reducedShape(a.Shape(), []int{ax})
	if n == 0 {
		array.Panicf(name, "axis %d of shape %v is empty", axis, a.Shape())
	}
	return node(shape, array.Int32, &argReducePrim{Op: op, Axis: ax}, a)
}
