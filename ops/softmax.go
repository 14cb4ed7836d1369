package ops

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
)

// SoftmaxPrim is the softmax along Axis.
type SoftmaxPrim struct{ Axis int }

func (p *SoftmaxPrim) Name() string { return "Softmax" }
func (p *SoftmaxPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *SoftmaxPrim) evalCPU(in, out []*array.Array) error {
	return cpu.Softmax(alloc(out[0]), bufOf(in[0]), p.Axis)
}
func (p *SoftmaxPrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*SoftmaxPrim)
	return ok && *q == *p
}

// LogSoftmaxPrim is the log of the softmax along Axis.
type LogSoftmaxPrim struct{ Axis int }

func (p *LogSoftmaxPrim) Name() string { return "LogSoftmax" }
func (p *LogSoftmaxPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *LogSoftmaxPrim) evalCPU(in, out []*array.Array) error {
	return cpu.LogSoftmax(alloc(out[0]), bufOf(in[0]), p.Axis)
}
func (p *LogSoftmaxPrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*LogSoftmaxPrim)
	return ok && *q == *p
}

// LogSumExpPrim is log(sum(exp(x))) along Axis, which it removes.
type LogSumExpPrim struct{ Axis int }

func (p *LogSumExpPrim) Name() string { return "LogSumExp" }
func (p *LogSumExpPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *LogSumExpPrim) evalCPU(in, out []*array.Array) error {
	return cpu.LogSumExp(alloc(out[0]), bufOf(in[0]), p.Axis)
}
func (p *LogSumExpPrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*LogSumExpPrim)
	return ok && *q == *p
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
	return softmaxLike("ops.Softmax", a, axes, func(axis int) array.Primitive { return &SoftmaxPrim{Axis: axis} })
}

// LogSoftmax returns log(Softmax(a, axes...)) computed without forming the
// softmax: (a - m) - log(sum(exp(a - m))) with m the maximum, or 0 where
// the maximum is not finite (scipy.special.log_softmax), so an all -Inf
// slice gives NaN.
func LogSoftmax(a *array.Array, axes ...int) *array.Array {
	return softmaxLike("ops.LogSoftmax", a, axes, func(axis int) array.Primitive { return &LogSoftmaxPrim{Axis: axis} })
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
	return node(kept, x.DType(), &LogSumExpPrim{Axis: axis}, f)
}
