package graph_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// Rows for the shape operations and views. Split and SplitAt return
// several arrays; their rows join the parts back in another order, or
// weigh them differently, so that a cotangent sent to the wrong part
// shows up.

var _ = register(
	gradCase{op: "Reshape", name: "infer", args: []arg{{shape: []int{2, 3, 4}}},
		f: func(x ...*array.Array) *array.Array { return ops.Reshape(x[0], 4, -1) }},
	gradCase{op: "Reshape", name: "regroup", args: []arg{{shape: []int{2, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.Reshape(x[0], 3, 1, 2) }},
	gradCase{op: "Reshape", name: "scalar", args: []arg{{shape: []int{}}},
		f: func(x ...*array.Array) *array.Array { return ops.Reshape(x[0], 1, 1) }},
	gradCase{op: "Flatten", args: []arg{{shape: []int{2, 3, 2}}},
		f: func(x ...*array.Array) *array.Array { return ops.Flatten(x[0]) }},

	gradCase{op: "Transpose", name: "reverse", args: []arg{{shape: []int{2, 3, 4}}},
		f: func(x ...*array.Array) *array.Array { return ops.Transpose(x[0]) }},
	gradCase{op: "Transpose", name: "negative axes", args: []arg{{shape: []int{2, 3, 4}}},
		f: func(x ...*array.Array) *array.Array { return ops.Transpose(x[0], 1, -1, 0) }},
	gradCase{op: "SwapAxes", args: []arg{{shape: []int{2, 3, 4}}},
		f: func(x ...*array.Array) *array.Array { return ops.SwapAxes(x[0], 0, -1) }},
	gradCase{op: "MoveAxis", name: "last to front", args: []arg{{shape: []int{2, 3, 4}}},
		f: func(x ...*array.Array) *array.Array { return ops.MoveAxis(x[0], -1, 0) }},
	gradCase{op: "MoveAxis", name: "front to last", args: []arg{{shape: []int{2, 3, 4}}},
		f: func(x ...*array.Array) *array.Array { return ops.MoveAxis(x[0], 0, 2) }},

	gradCase{op: "BroadcastTo", name: "new leading axis", args: []arg{{shape: []int{3, 1}}},
		f: func(x ...*array.Array) *array.Array { return ops.BroadcastTo(x[0], 2, 3, 4) }},
	gradCase{op: "BroadcastTo", name: "inner axis", args: []arg{{shape: []int{2, 1, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.BroadcastTo(x[0], 2, 4, 3) }},
	gradCase{op: "BroadcastTo", name: "scalar", args: []arg{{shape: []int{}}},
		f: func(x ...*array.Array) *array.Array { return ops.BroadcastTo(x[0], 2, 3) }},
	gradCase{op: "ExpandDims", args: []arg{{shape: []int{2, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.ExpandDims(x[0], 0, -1) }},
	gradCase{op: "Squeeze", name: "all", args: []arg{{shape: []int{2, 1, 3, 1}}},
		f: func(x ...*array.Array) *array.Array { return ops.Squeeze(x[0]) }},
	gradCase{op: "Squeeze", name: "negative axis", args: []arg{{shape: []int{2, 1, 3, 1}}},
		f: func(x ...*array.Array) *array.Array { return ops.Squeeze(x[0], -1) }},

	gradCase{op: "Slice", name: "start and step", args: []arg{{shape: []int{4, 5}}},
		f: func(x ...*array.Array) *array.Array {
			return ops.Slice(x[0], ops.R(1, ops.None), ops.R(ops.None, ops.None, 2))
		}},
	gradCase{op: "Slice", name: "negative steps", args: []arg{{shape: []int{4, 5}}},
		f: func(x ...*array.Array) *array.Array {
			return ops.Slice(x[0], ops.R(ops.None, ops.None, -1), ops.R(4, 0, -2))
		}},
	gradCase{op: "Slice", name: "negative bounds and clamping", args: []arg{{shape: []int{2, 3, 4}}},
		f: func(x ...*array.Array) *array.Array {
			return ops.Slice(x[0], ops.Whole(), ops.R(-2, 10), ops.R(3, -10, -3))
		}},
	gradCase{op: "Slice", name: "one element", args: []arg{{shape: []int{3, 4}}},
		f: func(x ...*array.Array) *array.Array { return ops.Slice(x[0], ops.R(1, 2), ops.R(-1, -2, -1)) }},
	// Slice's VJP scatters into zeros; differentiating it checks the
	// scatter's own rules, which second derivatives go through.
	gradCase{op: "Slice", name: "its VJP", args: []arg{{shape: []int{2, 2}}},
		f: func(x ...*array.Array) *array.Array {
			slice := func(y ...*array.Array) []*array.Array {
				return []*array.Array{ops.Slice(y[0], ops.R(1, ops.None), ops.R(ops.None, 0, -2))}
			}
			_, g := graph.VJP(slice, []*array.Array{ops.Zeros([]int{3, 4}, array.Float64)}, x)
			return g[0]
		}},
	gradCase{op: "SliceAxis", args: []arg{{shape: []int{3, 4}}},
		f: func(x ...*array.Array) *array.Array { return ops.SliceAxis(x[0], -1, ops.R(1, 3)) }},

	gradCase{op: "Concatenate", name: "three inputs, negative axis",
		args: []arg{{shape: []int{2, 3}}, {shape: []int{2, 1}}, {shape: []int{2, 2}}},
		f:    func(x ...*array.Array) *array.Array { return ops.Concatenate(x, -1) }},
	gradCase{op: "Concatenate", name: "axis 0", args: []arg{{shape: []int{1, 3}}, {shape: []int{2, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.Concatenate(x, 0) }},
	gradCase{op: "Concatenate", name: "with a constant",
		args: []arg{{shape: []int{2, 2}}, {fixed: array.FromSlice([]float64{7, 8}, 2, 1)}},
		f:    func(x ...*array.Array) *array.Array { return ops.Concatenate([]*array.Array{x[1], x[0]}, 1) }},
	gradCase{op: "Stack", name: "axis 1", args: []arg{{shape: []int{2, 3}}, {shape: []int{2, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.Stack(x, 1) }},
	gradCase{op: "Stack", name: "three inputs, negative axis",
		args: []arg{{shape: []int{2, 2}}, {shape: []int{2, 2}}, {shape: []int{2, 2}}},
		f:    func(x ...*array.Array) *array.Array { return ops.Stack(x, -1) }},

	gradCase{op: "Split", name: "rejoined", args: []arg{{shape: []int{6, 2}}},
		f: func(x ...*array.Array) *array.Array {
			p := ops.Split(x[0], 3, 0)
			return ops.Concatenate([]*array.Array{p[2], p[0], p[1]}, 0)
		}},
	gradCase{op: "Split", name: "weighted, negative axis", args: []arg{{shape: []int{2, 6}}},
		f: func(x ...*array.Array) *array.Array {
			p := ops.Split(x[0], 3, -1)
			return ops.Add(ops.Add(p[0], ops.MulScalar(p[1], -2)), ops.Mul(p[2], p[0]))
		}},
	gradCase{op: "SplitAt", name: "negative axis", args: []arg{{shape: []int{2, 5}}},
		f: func(x ...*array.Array) *array.Array {
			p := ops.SplitAt(x[0], []int{1, 3}, -1)
			return ops.Concatenate([]*array.Array{p[2], p[0], p[1]}, -1)
		}},
	gradCase{op: "SplitAt", name: "negative index, empty part", args: []arg{{shape: []int{5, 2}}},
		f: func(x ...*array.Array) *array.Array {
			p := ops.SplitAt(x[0], []int{-2, 1}, 0)
			return ops.Concatenate([]*array.Array{p[2], p[1], p[0]}, 0)
		}},

	gradCase{op: "Tile", name: "same rank", args: []arg{{shape: []int{2, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.Tile(x[0], 2, 1) }},
	gradCase{op: "Tile", name: "more reps than axes", args: []arg{{shape: []int{3, 2}}},
		f: func(x ...*array.Array) *array.Array { return ops.Tile(x[0], 2, 1, 2) }},
	gradCase{op: "Repeat", name: "negative axis", args: []arg{{shape: []int{2, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.Repeat(x[0], 2, -1) }},
	gradCase{op: "Repeat", name: "axis 0", args: []arg{{shape: []int{2, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.Repeat(x[0], 3, 0) }},
	gradCase{op: "Pad", name: "two axes", args: []arg{{shape: []int{2, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.Pad(x[0], [][2]int{{1, 0}, {2, 1}}, 0.5) }},
	gradCase{op: "Pad", name: "three axes, one unpadded", args: []arg{{shape: []int{2, 2, 3}}},
		f: func(x ...*array.Array) *array.Array {
			return ops.Pad(x[0], [][2]int{{0, 1}, {0, 0}, {1, 1}}, -1)
		}},
)

// Rows of the shape operations added with MLX's wider op set. Those that
// return several arrays weigh the parts differently before joining them.
var _ = register(
	gradCase{op: "Roll", name: "one axis", args: []arg{{shape: []int{2, 5}}},
		f: func(x ...*array.Array) *array.Array { return ops.Roll(x[0], 2, -1) }},
	gradCase{op: "Roll", name: "flattened, negative shift", args: []arg{{shape: []int{2, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.Roll(x[0], -4) }},
	gradCase{op: "Flip", name: "one axis", args: []arg{{shape: []int{2, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.Flip(x[0], 1) }},
	gradCase{op: "Flip", name: "every axis", args: []arg{{shape: []int{2, 3, 2}}},
		f: func(x ...*array.Array) *array.Array { return ops.Flip(x[0]) }},
	gradCase{op: "Meshgrid", name: "xy, dense", args: []arg{{shape: []int{3}}, {shape: []int{2}}},
		f: func(x ...*array.Array) *array.Array {
			g := ops.Meshgrid([]*array.Array{x[0], x[1]}, "xy", false)
			return ops.Add(ops.Mul(g[0], g[1]), g[0])
		}},
	gradCase{op: "Meshgrid", name: "ij, sparse", args: []arg{{shape: []int{3}}, {shape: []int{2}}},
		f: func(x ...*array.Array) *array.Array {
			g := ops.Meshgrid([]*array.Array{x[0], x[1]}, "ij", true)
			return ops.Mul(g[0], ops.Exp(g[1]))
		}},
	gradCase{op: "BroadcastArrays", args: []arg{{shape: []int{2, 1}}, {shape: []int{3}}},
		f: func(x ...*array.Array) *array.Array {
			b := ops.BroadcastArrays(x[0], x[1])
			return ops.Sub(ops.MulScalar(b[0], 3), b[1])
		}},
	gradCase{op: "Unflatten", name: "inferred", args: []arg{{shape: []int{2, 6}}},
		f: func(x ...*array.Array) *array.Array { return ops.Unflatten(x[0], -1, 3, -1) }},
	gradCase{op: "Unstack", name: "axis 1, weighted", args: []arg{{shape: []int{2, 3}}},
		f: func(x ...*array.Array) *array.Array {
			p := ops.Unstack(x[0], 1)
			return ops.Add(ops.Add(p[0], ops.MulScalar(p[1], 2)), ops.Sin(p[2]))
		}},
	gradCase{op: "AtLeast1D", name: "0-d", args: []arg{{shape: []int{}}},
		f: func(x ...*array.Array) *array.Array { return ops.AtLeast1D(x[0]) }},
	gradCase{op: "AtLeast2D", name: "1-d", args: []arg{{shape: []int{3}}},
		f: func(x ...*array.Array) *array.Array { return ops.AtLeast2D(x[0]) }},
	gradCase{op: "AtLeast3D", name: "2-d", args: []arg{{shape: []int{2, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.AtLeast3D(x[0]) }},
	gradCase{op: "View", name: "float64 as int64", zero: true, args: []arg{{shape: []int{2, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.View(x[0], array.Int64) }},
	gradCase{op: "AsStrided", name: "overlapping windows", args: []arg{{shape: []int{2, 4}}},
		f: func(x ...*array.Array) *array.Array { return ops.AsStrided(x[0], []int{3, 3}, []int{2, 1}, 1) }},
	gradCase{op: "AsStrided", name: "reversed, broadcast", args: []arg{{shape: []int{5}}},
		f: func(x ...*array.Array) *array.Array { return ops.AsStrided(x[0], []int{2, 3}, []int{0, -2}, 4) }},
	gradCase{op: "PadMode", name: "reflect", args: []arg{{shape: []int{2, 4}}},
		f: func(x ...*array.Array) *array.Array { return ops.PadMode(x[0], [][2]int{{1, 0}, {2, 3}}, "reflect") }},
	gradCase{op: "PadMode", name: "edge", args: []arg{{shape: []int{2, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.PadMode(x[0], [][2]int{{0, 2}, {1, 1}}, "edge") }},
	gradCase{op: "PadMode", name: "symmetric", args: []arg{{shape: []int{3, 2}}},
		f: func(x ...*array.Array) *array.Array { return ops.PadMode(x[0], [][2]int{{2, 1}, {1, 0}}, "symmetric") }},
	gradCase{op: "PadMode", name: "wrap, wider than the axis", args: []arg{{shape: []int{2, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.PadMode(x[0], [][2]int{{3, 0}, {4, 5}}, "wrap") }},
	gradCase{op: "PadMode", name: "reflect, wider than the axis", args: []arg{{shape: []int{3}}},
		f: func(x ...*array.Array) *array.Array { return ops.PadMode(x[0], [][2]int{{5, 7}}, "reflect") }},
	gradCase{op: "RollAxes", name: "a shift per axis", args: []arg{{shape: []int{3, 4}}},
		f: func(x ...*array.Array) *array.Array { return ops.RollAxes(x[0], []int{1, -3}, []int{0, -1}) }},
	gradCase{op: "RollAxes", name: "flattened, shifts added", args: []arg{{shape: []int{2, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.RollAxes(x[0], []int{2, 3}, nil) }},
	gradCase{op: "HadamardTransform", name: "default scale", args: []arg{{shape: []int{3, 8}}},
		f: func(x ...*array.Array) *array.Array { return ops.HadamardTransform(x[0]) }},
	gradCase{op: "HadamardTransform", name: "scale, weighted", args: []arg{{shape: []int{2, 2, 4}}},
		f: func(x ...*array.Array) *array.Array { return ops.Sin(ops.HadamardTransform(x[0], -1.5)) }},
	gradCase{op: "HadamardTransform", name: "0-d", args: []arg{{shape: []int{}}},
		f: func(x ...*array.Array) *array.Array { return ops.HadamardTransform(x[0], 3) }},
)

// vjpOf returns f's output and its VJP at x with cotangent cot.
func vjpOf(f func(x *array.Array) *array.Array, x, cot *array.Array) (*array.Array, *array.Array) {
	outs, g := graph.VJP(func(xs ...*array.Array) []*array.Array { return []*array.Array{f(xs[0])} },
		[]*array.Array{x}, []*array.Array{cot})
	return outs[0], g[0]
}

// wantArray fails unless got holds exactly want, of dtype T, in shape.
func wantArray[T int32 | float32 | float64](t *testing.T, what string, got *array.Array, shape []int, want []T) {
	t.Helper()
	if d := cmp.Diff(array.FromSlice(want, shape...), got, arraytest.Approx(0, 0)); d != "" {
		t.Fatalf("%s (-want +got):\n%s", what, d)
	}
}

// TestShapeGradEdges checks shape-op derivatives the table cannot reach:
// empty selections and arrays, other dtypes, integer inputs, a batch of
// one.
func TestShapeGradEdges(t *testing.T) {
	x := ops.Arange(0, 12, 1, array.Float64)
	x34 := ops.Reshape(x, 3, 4)

	_, g := vjpOf(func(a *array.Array) *array.Array { return ops.Slice(a, ops.R(2, 1)) },
		x34, ops.Zeros([]int{0, 4}, array.Float64))
	wantArray(t, "empty selection", g, []int{3, 4}, make([]float64, 12))

	_, g = vjpOf(func(a *array.Array) *array.Array { return ops.Slice(a, ops.Whole(), ops.R(ops.None, ops.None, -2)) },
		ops.Zeros([]int{0, 3}, array.Float64), ops.Zeros([]int{0, 2}, array.Float64))
	wantArray(t, "empty array", g, []int{0, 3}, []float64{})

	_, g = vjpOf(func(a *array.Array) *array.Array { return ops.Slice(a, ops.R(ops.None, ops.None, -2)) },
		ops.Arange(0, 4, 1, array.Float32), array.FromSlice([]float32{10, 20}, 2))
	wantArray(t, "float32 negative step", g, []int{4}, []float32{0, 20, 0, 10})

	k := array.FromSlice([]int32{7, 8}, 2)
	out, g := vjpOf(func(a *array.Array) *array.Array { return ops.Concatenate([]*array.Array{k, a}, 0) },
		array.FromSlice([]float32{1, 2}, 2), array.FromSlice([]float32{1, 2, 3, 4}, 4))
	wantArray(t, "Concatenate with an int32 input, output", out, []int{4}, []float32{7, 8, 1, 2})
	wantArray(t, "Concatenate with an int32 input, VJP", g, []int{2}, []float32{3, 4})
	_, jv := graph.JVP(func(xs ...*array.Array) []*array.Array {
		return []*array.Array{ops.Concatenate([]*array.Array{k, xs[0]}, 0)}
	}, []*array.Array{array.FromSlice([]float32{1, 2}, 2)}, []*array.Array{array.FromSlice([]float32{5, 6}, 2)})
	wantArray(t, "Concatenate with an int32 input, JVP", jv[0], []int{4}, []float32{0, 0, 5, 6})

	got := graph.Vmap(func(xs ...*array.Array) []*array.Array {
		return []*array.Array{ops.Slice(xs[0], ops.R(ops.None, ops.None, -1), ops.R(1, 3))}
	}, nil, nil)(ops.Reshape(x, 1, 3, 4))[0]
	wantArray(t, "Vmap over a batch of one", got, []int{1, 3, 2}, []float64{9, 10, 5, 6, 1, 2})
}
