package ops

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
)

// softmaxPrim is the softmax along Axis.
type softmaxPrim struct{ Axis int }

func (p *softmaxPrim) Name() string { return "Softmax" }
func (p *softmaxPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *softmaxPrim) evalCPU(in, out []*array.Array) error {
	return cpu.Softmax(alloc(out[0]), bufOf(in[0]), p.Axis)
}
func (p *softmaxPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) { return metal.Softmax(o, viewOf(in[0]), p.Axis) })
}
func (p *softmaxPrim) Equivalent(o array.Primitive) bool               { return sameParams(p, o) }
func (p *softmaxPrim) OutputShapes(in []*array.Array) ([][]int, error) { return sameShape(in) }

// VJP is y * (g - sum(g * y)) over the axis, from the output y, so it
// never exponentiates.
func (p *softmaxPrim) VJP(_, out, cots []*array.Array, _ []int) []*array.Array {
	return []*array.Array{softmaxJVP(out[0], cots[0], p.Axis)}
}

// JVP is y * (t - sum(t * y)): softmax's Jacobian is symmetric, so it is
// the VJP's formula.
func (p *softmaxPrim) JVP(_, out, tans []*array.Array, _ []int) []*array.Array {
	return []*array.Array{softmaxJVP(out[0], tans[0], p.Axis)}
}

// Vmap takes the softmax of the batch, moved to axis 0, along the axis
// after it.
func (p *softmaxPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	x := batchFront(in[0], axes[0])
	return []*array.Array{node(x.Shape(), x.DType(), &softmaxPrim{Axis: p.Axis + 1}, x)}, []int{0}
}

// softmaxJVP is y * (v - sum(v * y)) along axis: the product of softmax's
// (symmetric) Jacobian at output y with v.
func softmaxJVP(y, v *array.Array, axis int) *array.Array {
	vy := Mul(v, y)
	return Sub(vy, Mul(y, ExpandDims(Sum(vy, axis), axis)))
}

// logSoftmaxPrim is the log of the softmax along Axis.
type logSoftmaxPrim struct{ Axis int }

func (p *logSoftmaxPrim) Name() string { return "LogSoftmax" }
func (p *logSoftmaxPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *logSoftmaxPrim) evalCPU(in, out []*array.Array) error {
	return cpu.LogSoftmax(alloc(out[0]), bufOf(in[0]), p.Axis)
}
func (p *logSoftmaxPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		return metal.LogSoftmax(o, viewOf(in[0]), p.Axis)
	})
}
func (p *logSoftmaxPrim) Equivalent(o array.Primitive) bool               { return sameParams(p, o) }
func (p *logSoftmaxPrim) OutputShapes(in []*array.Array) ([][]int, error) { return sameShape(in) }

// VJP is g - softmax * sum(g), with the softmax exp(y) of the output y,
// which is at most 1.
func (p *logSoftmaxPrim) VJP(_, out, cots []*array.Array, _ []int) []*array.Array {
	g := cots[0]
	return []*array.Array{Sub(g, Mul(Exp(out[0]), ExpandDims(Sum(g, p.Axis), p.Axis)))}
}

// JVP is t - sum(softmax * t), with the softmax exp(y).
func (p *logSoftmaxPrim) JVP(_, out, tans []*array.Array, _ []int) []*array.Array {
	t := tans[0]
	return []*array.Array{Sub(t, ExpandDims(Sum(Mul(Exp(out[0]), t), p.Axis), p.Axis))}
}

// Vmap takes the log-softmax of the batch, moved to axis 0, along the axis
// after it.
func (p *logSoftmaxPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	x := batchFront(in[0], axes[0])
	return []*array.Array{node(x.Shape(), x.DType(), &logSoftmaxPrim{Axis: p.Axis + 1}, x)}, []int{0}
}

// logSumExpPrim is log(sum(exp(x))) along Axis, which it removes.
type logSumExpPrim struct{ Axis int }

func (p *logSumExpPrim) Name() string { return "LogSumExp" }
func (p *logSumExpPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *logSumExpPrim) evalCPU(in, out []*array.Array) error {
	return cpu.LogSumExp(alloc(out[0]), bufOf(in[0]), p.Axis)
}
func (p *logSumExpPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		return metal.LogSumExp(o, viewOf(in[0]), p.Axis)
	})
}
func (p *logSumExpPrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// OutputShapes drops Axis from the input's new shape, which must have it.
func (p *logSumExpPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	if err := checkAxes("ops.LogSumExp", []int{p.Axis}, in[0].Ndim()); err != nil {
		return nil, err
	}
	kept, _ := reducedShape(in[0].Shape(), []int{p.Axis})
	return [][]int{kept}, nil
}

// VJP is g times the softmax exp(x - y), formed from the output y so that
// it cannot overflow.
func (p *logSumExpPrim) VJP(in, out, cots []*array.Array, _ []int) []*array.Array {
	return []*array.Array{Mul(ExpandDims(cots[0], p.Axis), lseSoftmax(in[0], out[0], p.Axis))}
}

// JVP is the sum of t weighted by the softmax exp(x - y).
func (p *logSumExpPrim) JVP(in, out, tans []*array.Array, _ []int) []*array.Array {
	return []*array.Array{Sum(Mul(tans[0], lseSoftmax(in[0], out[0], p.Axis)), p.Axis)}
}

// Vmap reduces the batch, moved to axis 0, along the axis after it.
func (p *logSumExpPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	x := batchFront(in[0], axes[0])
	shape, _ := reducedShape(x.Shape(), []int{p.Axis + 1})
	return []*array.Array{node(shape, x.DType(), &logSumExpPrim{Axis: p.Axis + 1}, x)}, []int{0}
}

// lseSoftmax is the softmax of x along axis, exp(x - y), from y, the
// log-sum-exp of x along it.
func lseSoftmax(x, y *array.Array, axis int) *array.Array {
	return Exp(Sub(x, ExpandDims(y, axis)))
}

// softmaxInput converts a to its float dtype for the softmax family and
// normalises axes (none: all).
func softmaxInput(name string, a *array.Array, axes []int) (*array.Array, []int) {
	requireNonNil(name, a)
	if a.DType() == array.Complex64 {
		array.Panicf(name, "not supported for dtype %v", a.DType())
	}
	ax := normAxes(name, axes, a.Ndim())
	return AsType(a, floatDType(a.DType())), ax
}

// foldAxes returns x with the (sorted) axes moved to the end and merged
// into one, the axis that now holds them, and the permutation applied
// (nil if none was needed). A 0-d x becomes one element along axis 0.
func foldAxes(x *array.Array, axes []int) (*array.Array, int, []int) {
	switch {
	case x.Ndim() == 0:
		return Reshape(x, 1), 0, nil
	case len(axes) == 1:
		return x, axes[0], nil
	}
	var perm []int
	shape := []int{}
	for i, d := range x.Shape() {
		if !containsInt(axes, i) {
			perm = append(perm, i)
			shape = append(shape, d)
		}
	}
	k := len(perm)
	perm = append(perm, axes...)
	_, n := reducedShape(x.Shape(), axes)
	identity := true
	for i, p := range perm {
		identity = identity && i == p
	}
	if identity {
		perm = nil
	} else {
		x = Transpose(x, perm...)
	}
	return Reshape(x, append(shape, n)...), k, perm
}

// unfoldAxes undoes foldAxes on a result of the folded shape: shape is
// the shape the folded input had before merging (after the permutation).
func unfoldAxes(y *array.Array, shape, perm []int) *array.Array {
	y = Reshape(y, shape...)
	if perm == nil {
		return y
	}
	inv := make([]int, len(perm))
	for i, p := range perm {
		inv[p] = i
	}
	return Transpose(y, inv...)
}

func softmaxLike(name string, a *array.Array, axes []int, mk func(axis int) array.Primitive) *array.Array {
	x, ax := softmaxInput(name, a, axes)
	if len(ax) == 1 {
		return node(x.Shape(), x.DType(), mk(ax[0]), x)
	}
	shape := x.Shape()
	f, axis, perm := foldAxes(x, ax)
	if perm != nil {
		shape = Transpose(x, perm...).Shape()
	}
	return unfoldAxes(node(f.Shape(), f.DType(), mk(axis), f), shape, perm)
}

// Softmax returns exp(a) / sum(exp(a)) over axes (none: all), computed
// stably as exp(a - max) / sum(exp(a - max)), in a's float dtype (float32
// for integers and bools). It follows scipy.special.softmax at the edges:
// a slice that is all -Inf, or holds +Inf or NaN, gives NaN. Several axes
// are moved to the end and merged into one (a copy when they are not
// already trailing and contiguous). complex64 is not supported.
func Softmax(a *array.Array, axes ...int) *array.Array {
	return softmaxLike("ops.Softmax", a, axes, func(axis int) array.Primitive { return &softmaxPrim{Axis: axis} })
}

// LogSoftmax returns log(Softmax(a, axes...)) computed without forming the
// softmax: (a - m) - log(sum(exp(a - m))) with m the maximum, or 0 where
// the maximum is not finite (scipy.special.log_softmax), so an all -Inf
// slice gives NaN.
func LogSoftmax(a *array.Array, axes ...int) *array.Array {
	return softmaxLike("ops.LogSoftmax", a, axes, func(axis int) array.Primitive { return &logSoftmaxPrim{Axis: axis} })
}

// LogSumExp returns log(sum(exp(a))) over axes (none: all), without
// overflow: log(sum(exp(a - m))) + m with m the maximum, or 0 where the
// maximum is not finite (scipy.special.logsumexp). So an all -Inf slice
// gives -Inf, a +Inf gives +Inf, a NaN gives NaN, and an empty slice gives
// -Inf (scipy raises). The result is in a's float dtype.
func LogSumExp(a *array.Array, axes ...int) *array.Array {
	const name = "ops.LogSumExp"
	x, ax := softmaxInput(name, a, axes)
	kept, _ := reducedShape(x.Shape(), ax)
	f, axis, _ := foldAxes(x, ax)
	return node(kept, x.DType(), &logSumExpPrim{Axis: axis}, f)
}
