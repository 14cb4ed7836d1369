package ops

import (
	"math"
	"slices"

	"github.com/fathom-go/fathom/internal/strided"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
)

// None stands for an omitted start or stop in a Range, like a missing
// bound in Python's a[:3] or a[::-1].
const None = math.MinInt

// Range selects part of one axis like a Python slice start:stop:step.
// Negative Start and Stop count from the end of the axis, bounds past
// either end are clamped, and None leaves a bound out (the whole axis in
// the direction of Step). Step 0 means 1; a negative Step walks
// backwards.
type Range struct{ Start, Stop, Step int }

// R returns the Range start:stop:step (step defaults to 1). An explicit
// step of 0, or more than one step, panics with *array.Error.
func R(start, stop int, step ...int) Range {
	switch {
	case len(step) > 1:
		array.Panicf("ops.R", "more than one step: %v", step)
	case len(step) == 1 && step[0] == 0:
		array.Panicf("ops.R", "step 0 in range %d:%d:0", start, stop)
	case len(step) == 1:
		return Range{start, stop, step[0]}
	}
	return Range{start, stop, 1}
}

// Whole returns the Range of a whole axis (Python's ":").
func Whole() Range { return Range{None, None, 1} }

// bounds resolves r over an axis of size n as Python's
// slice.indices does: the first index, the (exclusive) stop, the step and
// the number of elements selected. A single element comes back with step
// 1, so equal selections resolve equally.
func (r Range) bounds(n int) (start, stop, step, length int) {
	step = r.Step
	if step == 0 {
		step = 1
	}
	// Python clamps the step the same way, so that -step cannot overflow.
	step = max(step, -math.MaxInt)
	clamp := func(v, dflt int) int {
		switch {
		case v == None:
			return dflt
		case v < 0:
			v += n
			if v < 0 {
				if step < 0 {
					return -1
				}
				return 0
			}
		case v >= n:
			if step < 0 {
				return n - 1
			}
			return n
		}
		return v
	}
	if step > 0 {
		start, stop = clamp(r.Start, 0), clamp(r.Stop, n)
		if start < stop {
			length = (stop-start-1)/step + 1
		}
	} else {
		start, stop = clamp(r.Start, n-1), clamp(r.Stop, -1)
		if stop < start {
			length = (start-stop-1)/(-step) + 1
		}
	}
	if length == 1 {
		// One element needs no step; a huge one would overflow the
		// stride it multiplies.
		stop, step = start+1, 1
	}
	return start, stop, step, length
}

// slicePrim selects Start:Stop:Step along every axis, with the bounds
// resolved against the input's shape: Start is the first index, Stop the
// exclusive end and Step is never 0. Always a view.
type slicePrim struct{ Start, Stop, Step []int }

func (p *slicePrim) Name() string { return "Slice" }
func (p *slicePrim) Eval(s array.Stream, in, out []*array.Array) error {
	if out[0].Size() == 0 {
		// An empty result's start may lie past the end of the memory;
		// nothing is ever read through it.
		out[0].SetData(in[0].Storage(), strided.RowMajor(out[0].Shape()), in[0].Offset())
		return nil
	}
	off, ns := sliceView(p.Start, p.Step, in[0].Strides())
	out[0].SetData(in[0].Storage(), ns, in[0].Offset()+off)
	return nil
}
func (p *slicePrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*slicePrim)
	return ok && equalInts(q.Start, p.Start) && equalInts(q.Stop, p.Stop) && equalInts(q.Step, p.Step)
}

// VJP scatters the cotangent back to the selected positions of a zero
// array of the input's shape.
func (p *slicePrim) VJP(in, _, cots []*array.Array, _ []int) []*array.Array {
	q := &sliceScatterPrim{Shape: in[0].Shape(), Start: p.Start, Stop: p.Stop, Step: p.Step}
	return []*array.Array{node(q.Shape, cots[0].DType(), q, cots[0])}
}

// JVP selects the same part of the tangent.
func (p *slicePrim) JVP(_, out, tans []*array.Array, _ []int) []*array.Array {
	return []*array.Array{node(out[0].Shape(), tans[0].DType(), p, tans[0])}
}

// Vmap puts the batch axis first and takes it whole.
func (p *slicePrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	x := batchFront(in[0], axes[0])
	b := x.Dim(0)
	q := &slicePrim{Start: slices.Insert(slices.Clone(p.Start), 0, 0), Stop: slices.Insert(slices.Clone(p.Stop), 0, b),
		Step: slices.Insert(slices.Clone(p.Step), 0, 1)}
	shape := make([]int, len(q.Start))
	for i := range shape {
		shape[i] = sliceLen(q.Start[i], q.Stop[i], q.Step[i])
	}
	return []*array.Array{node(shape, x.DType(), q, x)}, []int{0}
}

// sliceLen is the number of elements that resolved bounds select.
func sliceLen(start, stop, step int) int {
	switch {
	case step > 0 && start < stop:
		return (stop-start-1)/step + 1
	case step < 0 && stop < start:
		return (start-stop-1)/(-step) + 1
	}
	return 0
}

// sliceView returns where a slice with these starts and steps lies in an
// array with strides st: the offset of its first element and its
// strides. Slice is that view of its input; the CPU and GPU slice
// scatters copy their input into that view of the output.
func sliceView(start, step, st []int) (off int, strides []int) {
	strides = make([]int, len(st))
	for i, s := range st {
		off += start[i] * s
		strides[i] = s * step[i]
	}
	return off, strides
}

// sliceScatterPrim is the transpose of slicePrim: it places its input at
// the positions Start:Stop:Step select in an array of Shape, and zeros
// everywhere else. Slice's derivative uses it.
type sliceScatterPrim struct{ Shape, Start, Stop, Step []int }

func (p *sliceScatterPrim) Name() string { return "SliceScatter" }
func (p *sliceScatterPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *sliceScatterPrim) evalCPU(in, out []*array.Array) error {
	o := alloc(out[0])
	if o.Size() == 0 {
		return nil
	}
	if err := cpu.Copy(o, bcastBufOf(array.Scalar(0.0), o.Shape)); err != nil {
		return err
	}
	if in[0].Size() == 0 {
		// An empty selection's start may lie past the end of the output.
		return nil
	}
	sub := o
	sub.Shape = in[0].Shape()
	off, strides := sliceView(p.Start, p.Step, o.Strides)
	sub.Offset += off
	sub.Strides = strides
	return cpu.Copy(sub, bufOf(in[0]))
}

func (p *sliceScatterPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		return fillThenCopy(o, 0, in[0], func(o metal.View) metal.View {
			sub := o
			sub.Shape = in[0].Shape()
			off, strides := sliceView(p.Start, p.Step, o.Strides)
			sub.Offset += off
			sub.Strides = strides
			return sub
		})
	})
}

func (p *sliceScatterPrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*sliceScatterPrim)
	return ok && equalInts(q.Shape, p.Shape) && equalInts(q.Start, p.Start) && equalInts(q.Stop, p.Stop) &&
		equalInts(q.Step, p.Step)
}

// VJP selects the scattered positions of the cotangent.
func (p *sliceScatterPrim) VJP(in, _, cots []*array.Array, _ []int) []*array.Array {
	q := &slicePrim{Start: p.Start, Stop: p.Stop, Step: p.Step}
	return []*array.Array{node(in[0].Shape(), cots[0].DType(), q, cots[0])}
}

// JVP scatters the tangent the same way.
func (p *sliceScatterPrim) JVP(_, _, tans []*array.Array, _ []int) []*array.Array {
	return []*array.Array{node(p.Shape, tans[0].DType(), p, tans[0])}
}

// Vmap puts the batch axis first and scatters along it whole.
func (p *sliceScatterPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	x := batchFront(in[0], axes[0])
	b := x.Dim(0)
	q := &sliceScatterPrim{Shape: slices.Insert(slices.Clone(p.Shape), 0, b),
		Start: slices.Insert(slices.Clone(p.Start), 0, 0), Stop: slices.Insert(slices.Clone(p.Stop), 0, b),
		Step: slices.Insert(slices.Clone(p.Step), 0, 1)}
	return []*array.Array{node(q.Shape, x.DType(), q, x)}, []int{0}
}

// Slice returns a view of part of a: ranges[i] selects along axis i, and
// axes past the last range are taken whole. Ranges follow numpy's basic
// slicing: negative bounds count from the end, out-of-range bounds are
// clamped, negative steps reverse, and an empty selection gives an empty
// axis.
func Slice(a *array.Array, ranges ...Range) *array.Array {
	requireNonNil("ops.Slice", a)
	sh := a.Shape()
	if len(ranges) > len(sh) {
		array.Panicf("ops.Slice", "%d ranges for shape %v", len(ranges), sh)
	}
	nd := len(sh)
	p := &slicePrim{Start: make([]int, nd), Stop: make([]int, nd), Step: make([]int, nd)}
	ns := make([]int, nd)
	whole := true
	for i, n := range sh {
		r := Whole()
		if i < len(ranges) {
			r = ranges[i]
		}
		p.Start[i], p.Stop[i], p.Step[i], ns[i] = r.bounds(n)
		whole = whole && p.Start[i] == 0 && p.Step[i] == 1 && ns[i] == n
	}
	if whole {
		return a
	}
	return node(ns, a.DType(), p, a)
}

// SliceAxis returns a view of a with r selecting along axis and every
// other axis whole.
func SliceAxis(a *array.Array, axis int, r Range) *array.Array {
	requireNonNil("ops.SliceAxis", a)
	ax := normAxis("ops.SliceAxis", axis, a.Ndim())
	rs := make([]Range, ax+1)
	for i := range ax {
		rs[i] = Whole()
	}
	rs[ax] = r
	return Slice(a, rs...)
}
