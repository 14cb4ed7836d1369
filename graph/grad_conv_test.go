package graph_test

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// Rows for the convolutions. Their VJPs are convolutions themselves,
// with negative padding where the forward stride or padding leaves
// input unread, so the rows cover strides that do not divide the input,
// per-side padding, both dilations, groups, depthwise, a mirrored
// kernel, and second derivatives (the VJP differentiated again; the
// weight's cotangent is its own primitive, linear in the input and in the
// output's cotangent, whose derivatives the last rows reach through a
// cotangent computed from the arguments).

func conv2(stride, padding, dilation [2]int, groups int) func(x ...*array.Array) *array.Array {
	return func(x ...*array.Array) *array.Array { return ops.Conv2D(x[0], x[1], stride, padding, dilation, groups) }
}

var _ = register(
	gradCase{op: "Conv1D", name: "stride 2 padding 1", args: []arg{{shape: []int{2, 6, 2}}, {shape: []int{3, 3, 2}}},
		f: func(x ...*array.Array) *array.Array { return ops.Conv1D(x[0], x[1], 2, 1, 1, 1) }},
	gradCase{op: "Conv1D", name: "dilation 2 groups 2", args: []arg{{shape: []int{1, 7, 4}}, {shape: []int{2, 2, 2}}},
		f: func(x ...*array.Array) *array.Array { return ops.Conv1D(x[0], x[1], 1, 0, 2, 2) }},
	gradCase{op: "Conv2D", name: "3x3 padding 1", args: []arg{{shape: []int{2, 4, 3, 2}}, {shape: []int{3, 3, 3, 2}}},
		f: conv2([2]int{1, 1}, [2]int{1, 1}, [2]int{1, 1}, 1)},
	gradCase{op: "Conv2D", name: "stride 2 leaves input unread", args: []arg{{shape: []int{1, 6, 5, 2}}, {shape: []int{2, 2, 3, 2}}},
		f: conv2([2]int{3, 2}, [2]int{0, 1}, [2]int{1, 1}, 1)},
	gradCase{op: "Conv2D", name: "dilation and groups", args: []arg{{shape: []int{1, 5, 5, 4}}, {shape: []int{4, 2, 2, 2}}},
		f: conv2([2]int{1, 2}, [2]int{1, 0}, [2]int{2, 1}, 2)},
	gradCase{op: "Conv2D", name: "depthwise", args: []arg{{shape: []int{2, 4, 4, 3}}, {shape: []int{3, 3, 3, 1}}},
		f: conv2([2]int{1, 1}, [2]int{1, 1}, [2]int{1, 1}, 3)},
	gradCase{op: "Conv3D", args: []arg{{shape: []int{1, 3, 4, 3, 2}}, {shape: []int{2, 2, 2, 2, 2}}},
		f: func(x ...*array.Array) *array.Array {
			return ops.Conv3D(x[0], x[1], [3]int{1, 2, 1}, [3]int{1, 0, 1}, [3]int{1, 1, 2}, 1)
		}},
	gradCase{op: "ConvGeneral", name: "per-side padding, input dilation, flip", args: []arg{{shape: []int{2, 4, 3, 2}}, {shape: []int{4, 2, 2, 1}}},
		f: func(x ...*array.Array) *array.Array {
			return ops.ConvGeneral(x[0], x[1], []int{2, 1}, []int{2, 0}, []int{0, 1}, []int{1, 2}, []int{2, 1}, 2, true)
		}},
	gradCase{op: "ConvGeneral", name: "1-D defaults", args: []arg{{shape: []int{2, 5, 3}}, {shape: []int{2, 2, 3}}},
		f: func(x ...*array.Array) *array.Array {
			return ops.ConvGeneral(x[0], x[1], nil, nil, nil, nil, nil, 1, false)
		}},
	gradCase{op: "ConvGeneral", name: "its VJP", args: []arg{{shape: []int{1, 5, 2}}, {shape: []int{2, 3, 2}}},
		f: func(x ...*array.Array) *array.Array {
			f := func(y ...*array.Array) []*array.Array {
				return []*array.Array{ops.ConvGeneral(y[0], y[1], []int{2}, []int{1}, []int{0}, []int{1}, []int{1}, 1, false)}
			}
			cot := ops.Reshape(ops.Arange(0, 4, 1, array.Float64), 1, 2, 2)
			_, g := graph.VJP(f, x, []*array.Array{cot})
			return ops.Add(ops.Sum(g[0]), ops.Sum(ops.Square(g[1])))
		}},
	gradCase{op: "ConvGeneral", name: "its weight gradient, with a cotangent that depends on x and w", args: []arg{{shape: []int{2, 5, 4, 4}}, {shape: []int{4, 2, 2, 2}}},
		f: func(x ...*array.Array) *array.Array {
			conv := func(y ...*array.Array) []*array.Array {
				return []*array.Array{ops.ConvGeneral(y[0], y[1], []int{2, 1}, []int{1, 0}, []int{0, 1}, []int{1, 2}, []int{1, 1}, 2, true)}
			}
			cot := ops.Sin(conv(x...)[0])
			_, g := graph.VJP(conv, x, []*array.Array{cot})
			return ops.Sum(ops.Square(g[1]))
		}},
	gradCase{op: "ConvGeneral", name: "its weight gradient, depthwise with input dilation", args: []arg{{shape: []int{1, 4, 3, 3}}, {shape: []int{3, 2, 2, 1}}},
		f: func(x ...*array.Array) *array.Array {
			conv := func(y ...*array.Array) []*array.Array {
				return []*array.Array{ops.ConvGeneral(y[0], y[1], []int{1, 2}, []int{1, 1}, []int{0, 1}, nil, []int{2, 1}, 3, false)}
			}
			cot := ops.Sin(conv(x...)[0])
			_, g := graph.VJP(conv, x, []*array.Array{cot})
			return ops.Sum(ops.Square(g[1]))
		}},
	gradCase{op: "ConvTranspose1D", args: []arg{{shape: []int{2, 4, 2}}, {shape: []int{3, 3, 2}}},
		f: func(x ...*array.Array) *array.Array { return ops.ConvTranspose1D(x[0], x[1], 2, 1, 1, 1, 1) }},
	gradCase{op: "ConvTranspose2D", args: []arg{{shape: []int{1, 3, 3, 4}}, {shape: []int{2, 2, 3, 2}}},
		f: func(x ...*array.Array) *array.Array {
			return ops.ConvTranspose2D(x[0], x[1], [2]int{2, 1}, [2]int{0, 1}, [2]int{1, 2}, [2]int{1, 0}, 2)
		}},
	gradCase{op: "ConvTranspose3D", args: []arg{{shape: []int{1, 2, 2, 3, 2}}, {shape: []int{2, 2, 2, 2, 2}}},
		f: func(x ...*array.Array) *array.Array {
			return ops.ConvTranspose3D(x[0], x[1], [3]int{2, 1, 1}, [3]int{0, 0, 1}, [3]int{1, 1, 1}, [3]int{0, 0, 0}, 1)
		}},
)
