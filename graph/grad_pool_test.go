package graph_test

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// Rows for pooling. Random float64 inputs have no ties, so max pool is
// differentiable at them; the broadcast layout repeats values, so the max
// rows are marked ties. The "gradient" and "tangent" rows differentiate
// the pools' derivatives, which are pooling primitives themselves (the
// scatter of MaxPool's VJP, the gather of its JVP, AvgPool's spreading),
// so their own rules and batching are checked too.

func poolArg(s ...int) arg { return arg{shape: append([]int{}, s...)} }

// poolVJP is f's VJP at x with cotangent g.
func poolVJP(f func(*array.Array) *array.Array, x, g *array.Array) *array.Array {
	_, vjps := graph.VJP(func(in ...*array.Array) []*array.Array { return []*array.Array{f(in[0])} },
		[]*array.Array{x}, []*array.Array{g})
	return vjps[0]
}

// poolJVP is f's JVP at x in the direction t.
func poolJVP(f func(*array.Array) *array.Array, x, t *array.Array) *array.Array {
	_, jvps := graph.JVP(func(in ...*array.Array) []*array.Array { return []*array.Array{f(in[0])} },
		[]*array.Array{x}, []*array.Array{t})
	return jvps[0]
}

func maxPool2x3(x *array.Array) *array.Array {
	return ops.MaxPool2D(x, [2]int{2, 3}, [2]int{2, 1}, [2]int{1, 1})
}

func avgPool2x3(x *array.Array) *array.Array {
	return ops.AvgPool2D(x, [2]int{2, 3}, [2]int{2, 1}, [2]int{1, 1})
}

var _ = register(
	gradCase{op: "MaxPool1D", name: "kernel 3, stride 2, padding 1", args: []arg{poolArg(2, 7, 3)}, ties: true,
		f: func(x ...*array.Array) *array.Array { return ops.MaxPool1D(x[0], 3, 2, 1) }},
	gradCase{op: "MaxPool2D", name: "2x2 stride 2", args: []arg{poolArg(2, 4, 6, 2)}, ties: true,
		f: func(x ...*array.Array) *array.Array {
			return ops.MaxPool2D(x[0], [2]int{2, 2}, [2]int{2, 2}, [2]int{})
		}},
	gradCase{op: "MaxPool2D", name: "overlapping, padded", args: []arg{poolArg(2, 5, 4, 3)}, ties: true,
		f: func(x ...*array.Array) *array.Array { return maxPool2x3(x[0]) }},
	gradCase{op: "MaxPool2D", name: "gradient (scatter)", args: []arg{poolArg(2, 5, 4, 3), poolArg(2, 3, 4, 3)}, ties: true,
		f: func(x ...*array.Array) *array.Array { return poolVJP(maxPool2x3, x[0], x[1]) }},
	gradCase{op: "MaxPool2D", name: "tangent (gather)", args: []arg{poolArg(2, 5, 4, 3), poolArg(2, 5, 4, 3)}, ties: true,
		f: func(x ...*array.Array) *array.Array { return poolJVP(maxPool2x3, x[0], x[1]) }},
	gradCase{op: "MaxPool3D", name: "mixed windows", args: []arg{poolArg(1, 4, 3, 4, 2)}, ties: true,
		f: func(x ...*array.Array) *array.Array {
			return ops.MaxPool3D(x[0], [3]int{2, 2, 3}, [3]int{1, 2, 1}, [3]int{1, 0, 1})
		}},

	gradCase{op: "AvgPool1D", name: "kernel 3, stride 2, padding 1", args: []arg{poolArg(2, 7, 3)},
		f: func(x ...*array.Array) *array.Array { return ops.AvgPool1D(x[0], 3, 2, 1) }},
	gradCase{op: "AvgPool2D", name: "2x2 stride 2", args: []arg{poolArg(2, 4, 6, 2)},
		f: func(x ...*array.Array) *array.Array {
			return ops.AvgPool2D(x[0], [2]int{2, 2}, [2]int{2, 2}, [2]int{})
		}},
	gradCase{op: "AvgPool2D", name: "overlapping, padded", args: []arg{poolArg(2, 5, 4, 3)},
		f: func(x ...*array.Array) *array.Array { return avgPool2x3(x[0]) }},
	gradCase{op: "AvgPool2D", name: "gradient", args: []arg{poolArg(2, 3, 4, 3)},
		f: func(x ...*array.Array) *array.Array {
			return poolVJP(avgPool2x3, ops.Zeros([]int{2, 5, 4, 3}, array.Float64), x[0])
		}},
	gradCase{op: "AvgPool3D", name: "mixed windows", args: []arg{poolArg(1, 4, 3, 4, 2)},
		f: func(x ...*array.Array) *array.Array {
			return ops.AvgPool3D(x[0], [3]int{2, 2, 3}, [3]int{1, 2, 1}, [3]int{1, 0, 1})
		}},
)
