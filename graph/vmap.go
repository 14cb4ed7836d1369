package graph

import (
	"math"

	"github.com/fathom-go/fathom/internal/tracing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// NoAxis in Vmap's inAxes marks an argument that is not batched: every
// call of the function sees it whole.
const NoAxis = math.MinInt

// Vmap returns f vectorised over a batch axis: inAxes[i] is the axis of
// argument i that holds the batch (NoAxis: none), outAxes[j] where the
// batch goes in output j. A nil inAxes or outAxes means axis 0 for all.
// The batched arguments must agree on the batch size.
//
// Vmap traces f once on stand-ins without the batch axis, then replays
// the trace with each primitive's batching rule, so f runs on the whole
// batch at once. A primitive without a rule is an *array.Error naming it.
func Vmap(f Fn, inAxes, outAxes []int) Fn {
	if f == nil {
		array.Panicf("graph.Vmap", "nil function")
	}
	return func(in ...*array.Array) []*array.Array {
		axes := inAxes
		if axes == nil {
			axes = make([]int, len(in))
		}
		if len(axes) != len(in) {
			array.Panicf("graph.Vmap", "%d in axes for %d arguments", len(axes), len(in))
		}
		size := -1
		stand := make([]*array.Array, len(in))
		var traced []*array.Array
		env := make(map[*array.Array]batched)
		for i, x := range in {
			if x == nil {
				array.Panicf("graph.Vmap", "argument %d is nil", i)
			}
			if axes[i] == NoAxis {
				stand[i] = x
				continue
			}
			ax := axes[i]
			if ax < 0 {
				ax += x.Ndim()
			}
			if ax < 0 || ax >= x.Ndim() {
				array.Panicf("graph.Vmap", "in axis %d out of range for argument %d of shape %v", axes[i], i, x.Shape())
			}
			if size >= 0 && x.Dim(ax) != size {
				array.Panicf("graph.Vmap", "argument %d has batch size %d along axis %d, others %d", i, x.Dim(ax), ax, size)
			}
			size = x.Dim(ax)
			shape := x.Shape()
			shape = append(shape[:ax:ax], shape[ax+1:]...)
			stand[i] = array.NewPlaceholder(x.Stream(), shape, x.DType())
			traced = append(traced, stand[i])
			env[stand[i]] = batched{x, ax}
		}
		if size < 0 {
			array.Panicf("graph.Vmap", "no argument is batched")
		}
		tracing.Begin()
		outs := func() []*array.Array {
			defer tracing.End()
			return callFn("graph.Vmap", f, stand)
		}()
		oaxes := outAxes
		if oaxes == nil {
			oaxes = make([]int, len(outs))
		}
		if len(oaxes) != len(outs) {
			array.Panicf("graph.Vmap", "%d out axes for %d outputs", len(oaxes), len(outs))
		}
		tape := NewTape(traced, outs)
		for _, n := range tape.Nodes {
			ins := make([]*array.Array, len(n.Inputs))
			inAx := make([]int, len(n.Inputs))
			moved, any := false, false
			for j, a := range n.Inputs {
				ins[j], inAx[j] = a, -1
				if b, ok := env[a]; ok {
					ins[j], moved = b.a, true
					if b.axis >= 0 {
						inAx[j], any = b.axis, true
					}
				}
			}
			if !moved {
				continue
			}
			if !any {
				// inputs that a rule left unbatched: the same for every
				// example, but not the traced arrays, so apply the
				// primitive again as it is
				shapes := make([][]int, len(n.Outputs))
				dts := make([]array.DType, len(n.Outputs))
				for j, o := range n.Outputs {
					shapes[j], dts[j] = o.Shape(), o.DType()
				}
				res := array.NewMulti(n.Outputs[0].Stream(), shapes, dts, n.Primitive, ins...)
				for j, o := range n.Outputs {
					env[o] = batched{res[j], -1}
				}
				continue
			}
			rule, ok := n.Primitive.(array.VmapRule)
			if !ok {
				array.Panicf("graph.Vmap", "%s has no batching rule", n.Primitive.Name())
			}
			res, rax := rule.Vmap(ins, inAx)
			for j, o := range n.Outputs {
				env[o] = batched{res[j], rax[j]}
			}
		}
		results := make([]*array.Array, len(outs))
		for i, o := range outs {
			b, ok := env[o]
			if !ok {
				b = batched{o, -1}
			}
			nd := o.Ndim() + 1
			ax := oaxes[i]
			if ax < 0 {
				ax += nd
			}
			if ax < 0 || ax >= nd {
				array.Panicf("graph.Vmap", "out axis %d out of range for output %d of shape %v", oaxes[i], i, o.Shape())
			}
			if b.axis < 0 {
				// the same for every example
				shape := o.Shape()
				shape = append(shape[:ax:ax], append([]int{size}, shape[ax:]...)...)
				results[i] = ops.BroadcastTo(ops.ExpandDims(b.a, ax), shape...)
				continue
			}
			results[i] = ops.MoveAxis(b.a, b.axis, ax)
		}
		return results
	}
}

// batched is an array of the vectorised computation with its batch axis.
type batched struct {
	a    *array.Array
	axis int
}
