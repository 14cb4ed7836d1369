package graph_test

import (
	"math/rand/v2"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// Rows for gathers, scatters, sorting and matrix products. Indices are
// fixed int32 arguments with repeats and negative entries, so the
// scatter-adds of the backward passes must accumulate.

// ixIdx is a fixed int32 index argument.
func ixIdx(shape []int, v ...int32) arg {
	return arg{fixed: array.FromSlice(v, shape...)}
}

// ixArg is a differentiable argument of shape s; no s is 0-d (a nil shape
// would make FromSlice build a 1-D array).
func ixArg(s ...int) arg { return arg{shape: append([]int{}, s...)} }

var _ = register(
	gradCase{op: "Take", name: "axis 0 repeats and negatives", args: []arg{ixArg(4, 3), ixIdx([]int{2, 3}, 0, -1, 3, 0, 2, -4)},
		f: func(x ...*array.Array) *array.Array { return ops.Take(x[0], x[1], 0) }},
	gradCase{op: "Take", name: "axis -1 vector", args: []arg{ixArg(2, 5), ixIdx([]int{4}, 4, -1, 0, 2)},
		f: func(x ...*array.Array) *array.Array { return ops.Take(x[0], x[1], -1) }},
	gradCase{op: "Take", name: "0-d index", args: []arg{ixArg(3, 4), {fixed: array.Scalar(int32(-2))}},
		f: func(x ...*array.Array) *array.Array { return ops.Take(x[0], x[1], 1) }},
	gradCase{op: "Take", name: "middle axis of 3-D", args: []arg{ixArg(2, 3, 2), ixIdx([]int{2, 2}, 1, 1, -1, 0)},
		f: func(x ...*array.Array) *array.Array { return ops.Take(x[0], x[1], 1) }},
	gradCase{op: "Take", name: "1-D", args: []arg{ixArg(6), ixIdx([]int{2, 2}, 5, 0, 5, -6)},
		f: func(x ...*array.Array) *array.Array { return ops.Take(x[0], x[1], 0) }},

	gradCase{op: "TakeAlongAxis", name: "axis 1 repeats and negatives", args: []arg{ixArg(3, 4), ixIdx([]int{3, 5}, 0, 0, 3, -1, 1, 2, 2, 2, -4, 0, 3, 1, 1, -2, 0)},
		f: func(x ...*array.Array) *array.Array { return ops.TakeAlongAxis(x[0], x[1], 1) }},
	gradCase{op: "TakeAlongAxis", name: "axis 0 broadcast indices", args: []arg{ixArg(3, 4), ixIdx([]int{2, 1}, -1, 0)},
		f: func(x ...*array.Array) *array.Array { return ops.TakeAlongAxis(x[0], x[1], 0) }},
	gradCase{op: "TakeAlongAxis", name: "broadcast array", args: []arg{ixArg(1, 4), ixIdx([]int{3, 2}, 3, 3, 0, -1, 2, 1)},
		f: func(x ...*array.Array) *array.Array { return ops.TakeAlongAxis(x[0], x[1], -1) }},
	gradCase{op: "TakeAlongAxis", name: "3-D middle axis", args: []arg{ixArg(2, 3, 2), ixIdx([]int{2, 4, 1}, 2, 2, -3, 1, 0, 1, -1, 0)},
		f: func(x ...*array.Array) *array.Array { return ops.TakeAlongAxis(x[0], x[1], 1) }},

	gradCase{op: "PutAlongAxis", name: "axis 1 repeats and negatives", args: []arg{ixArg(3, 4), ixIdx([]int{3, 2}, 1, 1, -1, 0, 2, -2), ixArg(3, 2)},
		f: func(x ...*array.Array) *array.Array { return ops.PutAlongAxis(x[0], x[1], x[2], 1) }},
	gradCase{op: "PutAlongAxis", name: "broadcast values", args: []arg{ixArg(3, 4), ixIdx([]int{3, 2}, 0, 3, -1, -1, 2, 0), ixArg(2)},
		f: func(x ...*array.Array) *array.Array { return ops.PutAlongAxis(x[0], x[1], x[2], -1) }},
	gradCase{op: "PutAlongAxis", name: "axis 0 broadcast indices", args: []arg{ixArg(3, 4), ixIdx([]int{2, 1}, 2, -1), ixArg(2, 4)},
		f: func(x ...*array.Array) *array.Array { return ops.PutAlongAxis(x[0], x[1], x[2], 0) }},
	gradCase{op: "PutAlongAxis", name: "scalar value", args: []arg{ixArg(2, 3), ixIdx([]int{2, 1}, 1, -3), ixArg()},
		f: func(x ...*array.Array) *array.Array { return ops.PutAlongAxis(x[0], x[1], x[2], 1) }},

	// The broadcast layout repeats an input along axis 0, so sorting
	// along axis 0 (or a 1-D input) would sort ties, where finite
	// differences and any gradient disagree: these rows sort other axes,
	// transpose first, or give the 1-D input a leading size-1 axis.
	gradCase{op: "Sort", name: "last axis", args: []arg{ixArg(3, 4)},
		f: func(x ...*array.Array) *array.Array { return ops.Sort(x[0], -1) }},
	gradCase{op: "Sort", name: "middle axis of 3-D", args: []arg{ixArg(2, 4, 3)},
		f: func(x ...*array.Array) *array.Array { return ops.Sort(x[0], 1) }},
	gradCase{op: "Sort", name: "axis 0 of transposed", args: []arg{ixArg(3, 5)},
		f: func(x ...*array.Array) *array.Array { return ops.Sort(ops.Transpose(x[0]), 0) }},
	gradCase{op: "Sort", name: "1-D", args: []arg{ixArg(1, 7)},
		f: func(x ...*array.Array) *array.Array { return ops.Sort(ops.Reshape(x[0], 7), 0) }},

	gradCase{op: "ArgSort", name: "last axis", args: []arg{ixArg(3, 4)}, zero: true,
		f: func(x ...*array.Array) *array.Array { return ops.ArgSort(x[0], -1) }},
	gradCase{op: "ArgSort", name: "gather by argsort", args: []arg{ixArg(3, 4)},
		f: func(x ...*array.Array) *array.Array { return ops.TakeAlongAxis(x[0], ops.ArgSort(x[0], 1), 1) }},

	gradCase{op: "TopK", name: "k=2 last axis", args: []arg{ixArg(3, 5)},
		f: func(x ...*array.Array) *array.Array { return ops.TopK(x[0], 2, -1) }},
	gradCase{op: "TopK", name: "k=n middle axis", args: []arg{ixArg(2, 3, 2)},
		f: func(x ...*array.Array) *array.Array { return ops.TopK(x[0], 3, 1) }},
	gradCase{op: "TopK", name: "k=3 axis 0 of transposed", args: []arg{ixArg(2, 5)},
		f: func(x ...*array.Array) *array.Array { return ops.TopK(ops.Transpose(x[0]), 3, 0) }},
	gradCase{op: "TopK", name: "k=1 1-D", args: []arg{ixArg(1, 6)},
		f: func(x ...*array.Array) *array.Array { return ops.TopK(ops.Reshape(x[0], 6), 1, 0) }},

	gradCase{op: "MatMul", name: "2-D x 2-D", args: []arg{ixArg(2, 3), ixArg(3, 4)},
		f: func(x ...*array.Array) *array.Array { return ops.MatMul(x[0], x[1]) }},
	gradCase{op: "MatMul", name: "1-D x 2-D", args: []arg{ixArg(3), ixArg(3, 4)},
		f: func(x ...*array.Array) *array.Array { return ops.MatMul(x[0], x[1]) }},
	gradCase{op: "MatMul", name: "2-D x 1-D", args: []arg{ixArg(2, 3), ixArg(3)},
		f: func(x ...*array.Array) *array.Array { return ops.MatMul(x[0], x[1]) }},
	gradCase{op: "MatMul", name: "vector dot", args: []arg{ixArg(4), ixArg(4)},
		f: func(x ...*array.Array) *array.Array { return ops.MatMul(x[0], x[1]) }},
	gradCase{op: "MatMul", name: "broadcast batch dims", args: []arg{ixArg(2, 1, 2, 3), ixArg(3, 3, 2)},
		f: func(x ...*array.Array) *array.Array { return ops.MatMul(x[0], x[1]) }},
	gradCase{op: "MatMul", name: "2-D x batched", args: []arg{ixArg(2, 3), ixArg(2, 3, 2)},
		f: func(x ...*array.Array) *array.Array { return ops.MatMul(x[0], x[1]) }},
	gradCase{op: "MatMul", name: "batched x 2-D", args: []arg{ixArg(2, 2, 3), ixArg(3, 2)},
		f: func(x ...*array.Array) *array.Array { return ops.MatMul(x[0], x[1]) }},
	gradCase{op: "MatMul", name: "1-D x batched", args: []arg{ixArg(3), ixArg(2, 3, 2)},
		f: func(x ...*array.Array) *array.Array { return ops.MatMul(x[0], x[1]) }},
	gradCase{op: "MatMul", name: "batched x 1-D", args: []arg{ixArg(2, 2, 3), ixArg(3)},
		f: func(x ...*array.Array) *array.Array { return ops.MatMul(x[0], x[1]) }},
	gradCase{op: "MatMul", name: "size-1 batch x batched", args: []arg{ixArg(1, 2, 3), ixArg(2, 3, 2)},
		f: func(x ...*array.Array) *array.Array { return ops.MatMul(x[0], x[1]) }},

	gradCase{op: "Outer", name: "vectors", args: []arg{ixArg(3), ixArg(4)},
		f: func(x ...*array.Array) *array.Array { return ops.Outer(x[0], x[1]) }},
	gradCase{op: "Outer", name: "flattens", args: []arg{ixArg(2, 2), ixArg(3)},
		f: func(x ...*array.Array) *array.Array { return ops.Outer(x[0], x[1]) }},

	gradCase{op: "Tensordot", name: "two axes", args: []arg{ixArg(2, 3, 4), ixArg(4, 3, 2)},
		f: func(x ...*array.Array) *array.Array { return ops.Tensordot(x[0], x[1], []int{1, 2}, []int{1, 0}) }},
	gradCase{op: "Tensordot", name: "one negative axis", args: []arg{ixArg(3, 2), ixArg(2, 4)},
		f: func(x ...*array.Array) *array.Array { return ops.Tensordot(x[0], x[1], []int{-1}, []int{0}) }},
	gradCase{op: "Tensordot", name: "no axes", args: []arg{ixArg(2, 2), ixArg(3)},
		f: func(x ...*array.Array) *array.Array { return ops.Tensordot(x[0], x[1], nil, nil) }},

	// Second order: a row's function is itself a VJP, so the table checks
	// the derivative and batching rules of the backward passes (the
	// scatter-adds, the masks of PutAlongAxis, the transposed products).
	gradCase{op: "Take", name: "second order", args: []arg{ixFixed(4, 3), ixIdx([]int{2, 3}, 0, -1, 3, 0, 2, -4), ixArg(2, 3, 3)},
		f: func(x ...*array.Array) *array.Array {
			return ixVJP(func(a *array.Array) *array.Array { return ops.Take(a, x[1], 0) }, x[0], x[2])
		}},
	gradCase{op: "TakeAlongAxis", name: "second order", args: []arg{ixArg(1, 4), ixIdx([]int{3, 2}, 3, 3, 0, -1, 2, 1), ixArg(3, 2)},
		f: func(x ...*array.Array) *array.Array {
			return ixVJP(func(a *array.Array) *array.Array { return ops.TakeAlongAxis(a, x[1], 1) }, x[0], x[2])
		}},
	gradCase{op: "PutAlongAxis", name: "second order, values", args: []arg{ixFixed(3, 4), ixIdx([]int{3, 2}, 1, 1, -1, 0, 2, -2), ixArg(3, 2), ixArg(3, 4)},
		f: func(x ...*array.Array) *array.Array {
			return ixVJP(func(v *array.Array) *array.Array { return ops.PutAlongAxis(x[0], x[1], v, 1) }, x[2], x[3])
		}},
	gradCase{op: "PutAlongAxis", name: "second order, array", args: []arg{ixArg(3, 4), ixIdx([]int{2, 1}, 2, -1), ixFixed(2, 4), ixArg(3, 4)},
		f: func(x ...*array.Array) *array.Array {
			return ixVJP(func(a *array.Array) *array.Array { return ops.PutAlongAxis(a, x[1], x[2], 0) }, x[0], x[3])
		}},
	gradCase{op: "Sort", name: "second order", args: []arg{ixArg(3, 4), ixArg(3, 4)},
		f: func(x ...*array.Array) *array.Array {
			return ixVJP(func(a *array.Array) *array.Array { return ops.Sort(a, 1) }, x[0], x[1])
		}},
	gradCase{op: "TopK", name: "second order", args: []arg{ixArg(2, 5), ixArg(2, 3)},
		f: func(x ...*array.Array) *array.Array {
			return ixVJP(func(a *array.Array) *array.Array { return ops.TopK(a, 3, -1) }, x[0], x[1])
		}},
	gradCase{op: "MatMul", name: "second order", args: []arg{ixArg(2, 3), ixArg(3, 4), ixArg(2, 4)},
		f: func(x ...*array.Array) *array.Array {
			return ixVJP(func(b *array.Array) *array.Array { return ops.MatMul(x[0], b) }, x[1], x[2])
		}},
	gradCase{op: "MatMul", name: "second order, batched x 2-D", args: []arg{ixArg(2, 2, 3), ixArg(3, 2), ixArg(2, 2, 2)},
		f: func(x ...*array.Array) *array.Array {
			return ixVJP(func(b *array.Array) *array.Array { return ops.MatMul(x[0], b) }, x[1], x[2])
		}},
	gradCase{op: "MatMul", name: "second order, broadcast batch dims", args: []arg{ixArg(2, 1, 2, 3), ixArg(3, 3, 2), ixArg(2, 3, 2, 2)},
		f: func(x ...*array.Array) *array.Array {
			return ixVJP(func(a *array.Array) *array.Array { return ops.MatMul(a, x[1]) }, x[0], x[2])
		}},
	gradCase{op: "MatMul", name: "second order, 1-D x 2-D", args: []arg{ixArg(3), ixArg(3, 4), ixArg(4)},
		f: func(x ...*array.Array) *array.Array {
			return ixVJP(func(b *array.Array) *array.Array { return ops.MatMul(x[0], b) }, x[1], x[2])
		}},
)

// ixFixed is a fixed float64 argument: the primal of a row that
// differentiates a VJP with respect to its cotangent.
func ixFixed(shape ...int) arg {
	v := make([]float64, size(shape))
	for i := range v {
		v[i] = float64(i%5) - 1.5
	}
	return arg{fixed: array.FromSlice(v, shape...)}
}

// ixVJP is f's VJP at x with cotangent cot.
func ixVJP(f func(*array.Array) *array.Array, x, cot *array.Array) *array.Array {
	_, g := graph.VJP(func(xs ...*array.Array) []*array.Array { return []*array.Array{f(xs[0])} },
		[]*array.Array{x}, []*array.Array{cot})
	return g[0]
}

// ixFn adapts a one-output function to graph.Fn.
func ixFn(f func(x ...*array.Array) *array.Array) graph.Fn {
	return func(x ...*array.Array) []*array.Array { return []*array.Array{f(x...)} }
}

// ixRand is a float64 array of shape with values in [-1, 1).
func ixRand(r *rand.Rand, shape ...int) *array.Array {
	return array.FromSlice(randValues(r, size(shape), 0, 0), shape...)
}

// TestIndexingVmapBatchedIndices checks the batching rules with batched
// indices, which the table cannot reach (its index arguments are fixed),
// and matmuls whose first operand is the unbatched one.
func TestIndexingVmapBatchedIndices(t *testing.T) {
	r := rand.New(rand.NewPCG(seedOf("indexing vmap"), 1))
	const no = graph.NoAxis
	idx := array.FromSlice([]int32{0, -1, 2, 2, 1, -3, 0, 0, 1, -2, 2, 1}, 3, 4) // batch 3, 4 indices each into size 3
	idxT := array.FromSlice([]int32{2, -1, 0, 1, 0, 0, -3, 2, 1, 1, 1, 0}, 4, 3) // batch on the last axis
	take := ixFn(func(x ...*array.Array) *array.Array { return ops.Take(x[0], x[1], 1) })
	along := ixFn(func(x ...*array.Array) *array.Array { return ops.TakeAlongAxis(x[0], x[1], 1) })
	put := ixFn(func(x ...*array.Array) *array.Array { return ops.PutAlongAxis(x[0], x[1], x[2], 1) })
	for _, c := range []struct {
		what string
		f    graph.Fn
		axes []int
		in   []*array.Array
	}{
		{"Take, indices batched", take, []int{no, 0}, []*array.Array{ixRand(r, 2, 3), idx}},
		{"Take, indices batched on their last axis", take, []int{no, 1}, []*array.Array{ixRand(r, 2, 3), idxT}},
		{"Take, both batched", take, []int{2, 0}, []*array.Array{ixRand(r, 2, 3, 3), idx}},
		{"Take, both batched, 0-d indices", take, []int{0, 0}, []*array.Array{ixRand(r, 3, 2, 3), array.FromSlice([]int32{2, -1, 0})}},
		{"Take, both batched, 2-D indices", take, []int{0, 1}, []*array.Array{ixRand(r, 3, 2, 3, 2), ops.Reshape(idxT, 2, 3, 2)}},
		{"TakeAlongAxis, indices batched", along, []int{no, 0}, []*array.Array{ixRand(r, 2, 3), ops.Reshape(idx, 3, 2, 2)}},
		{"TakeAlongAxis, both batched", along, []int{1, 2}, []*array.Array{ixRand(r, 2, 3, 3), ops.Reshape(idxT, 2, 2, 3)}},
		{"PutAlongAxis, indices batched", put, []int{no, 0, no}, []*array.Array{ixRand(r, 2, 3), ops.Reshape(idx, 3, 2, 2), ixRand(r, 2, 2)}},
		{"PutAlongAxis, values batched", put, []int{no, no, 1}, []*array.Array{ixRand(r, 2, 3), array.FromSlice([]int32{1, 1, -1, 0}, 2, 2), ixRand(r, 2, 3)}},
		{"PutAlongAxis, all batched", put, []int{0, 0, 0}, []*array.Array{ixRand(r, 3, 2, 3), ops.Reshape(idx, 3, 2, 2), ixRand(r, 3, 2, 2)}},
		{"gradient of Take, indices batched",
			ixFn(func(x ...*array.Array) *array.Array {
				return ixVJP(func(a *array.Array) *array.Array { return ops.Take(a, x[1], 1) }, x[0], x[2])
			}),
			[]int{no, 0, no}, []*array.Array{ixRand(r, 2, 3), idx, ixRand(r, 2, 4)}},
		{"gradient of TakeAlongAxis, indices and cotangent batched",
			ixFn(func(x ...*array.Array) *array.Array {
				return ixVJP(func(a *array.Array) *array.Array { return ops.TakeAlongAxis(a, x[1], 1) }, x[0], x[2])
			}),
			[]int{no, 1, 0}, []*array.Array{ixRand(r, 2, 3), ops.Reshape(idxT, 2, 3, 2), ixRand(r, 3, 2, 2)}},
		{"MatMul, 1-D unbatched x batched", ixFn(func(x ...*array.Array) *array.Array { return ops.MatMul(x[0], x[1]) }),
			[]int{no, 0}, []*array.Array{ixRand(r, 3), ixRand(r, 2, 3, 2)}},
		{"MatMul, stack unbatched x batched matrix", ixFn(func(x ...*array.Array) *array.Array { return ops.MatMul(x[0], x[1]) }),
			[]int{no, 2}, []*array.Array{ixRand(r, 2, 2, 3), ixRand(r, 3, 4, 2)}},
		{"MatMul, batched vector x unbatched vector", ixFn(func(x ...*array.Array) *array.Array { return ops.MatMul(x[0], x[1]) }),
			[]int{1, no}, []*array.Array{ixRand(r, 3, 2), ixRand(r, 3)}},
		{"MatMul, batched vector x batched stack", ixFn(func(x ...*array.Array) *array.Array { return ops.MatMul(x[0], x[1]) }),
			[]int{0, 3}, []*array.Array{ixRand(r, 2, 3), ixRand(r, 2, 3, 4, 2)}},
	} {
		checkVmapLoop(t, c.what, c.f, c.axes, []int{0}, c.in...)
	}
}

// TestIndexingGradValues checks values the table cannot reach: repeated
// indices counted exactly, half-precision accumulation, other dtypes,
// empty arrays and the last-write-wins rule of PutAlongAxis.
func TestIndexingGradValues(t *testing.T) {
	idx := array.FromSlice([]int32{0, -1, 4, 0, 0})
	for _, dt := range []array.DType{array.Float32, array.Float16, array.BFloat16, array.Float64} {
		a := ops.AsType(ops.Arange(0, 5, 1, array.Float64), dt)
		_, g := graph.VJP(ixFn(func(x ...*array.Array) *array.Array { return ops.Take(x[0], idx, 0) }),
			[]*array.Array{a}, []*array.Array{ops.FullLike(ops.Take(a, idx, 0), 0.5)})
		arraytest.AssertClose(t, arrayOf(dt, []int{5}, []float64{1.5, 0, 0, 0, 1}), g[0], tol12, "Take of repeated indices, "+dt.String())
	}

	a := ops.Reshape(ops.Arange(0, 8, 1, array.Float32), 2, 4)
	pidx := array.FromSlice([]int32{1, 1, -3, 3, 0, 3}, 2, 3)
	cot := ops.Reshape(ops.Arange(1, 9, 1, array.Float32), 2, 4)
	_, g := graph.VJP(ixFn(func(x ...*array.Array) *array.Array { return ops.PutAlongAxis(x[0], pidx, x[1], 1) }),
		[]*array.Array{a, ops.Ones([]int{2, 3}, array.Float32)}, []*array.Array{cot})
	arraytest.AssertClose(t, arrayOf(array.Float32, []int{2, 4}, []float64{1, 0, 3, 4, 0, 6, 7, 0}), g[0], tol12, "PutAlongAxis, array")
	// Row 0 writes place 1 three times (the last write wins); row 1
	// writes place 3 twice.
	arraytest.AssertClose(t, arrayOf(array.Float32, []int{2, 3}, []float64{0, 0, 2, 0, 5, 8}), g[1], tol12, "PutAlongAxis, values")

	// float32 values put into a float64 array: the gradient comes back as
	// float32.
	_, g = graph.VJP(ixFn(func(x ...*array.Array) *array.Array { return ops.PutAlongAxis(x[0], pidx, x[1], 1) }),
		[]*array.Array{ops.AsType(a, array.Float64), ops.Ones([]int{2, 3}, array.Float32)}, []*array.Array{ops.AsType(cot, array.Float64)})
	arraytest.AssertClose(t, arrayOf(array.Float32, []int{2, 3}, []float64{0, 0, 2, 0, 5, 8}), g[1], tol12, "PutAlongAxis, cast values")

	empty := []struct {
		what  string
		f     func(x ...*array.Array) *array.Array
		in    []*array.Array
		shape [][]int
	}{
		{"Take of no indices", func(x ...*array.Array) *array.Array { return ops.Take(x[0], array.FromSlice([]int32{}), 1) },
			[]*array.Array{ops.Ones([]int{2, 3}, array.Float64)}, [][]int{{2, 3}}},
		{"Take from an empty array", func(x ...*array.Array) *array.Array { return ops.Take(x[0], array.FromSlice([]int32{1, -1}), 1) },
			[]*array.Array{ops.Ones([]int{0, 3}, array.Float64)}, [][]int{{0, 3}}},
		{"TopK with k=0", func(x ...*array.Array) *array.Array { return ops.TopK(x[0], 0, 1) },
			[]*array.Array{ops.Ones([]int{2, 3}, array.Float64)}, [][]int{{2, 3}}},
		{"Sort of an empty axis", func(x ...*array.Array) *array.Array { return ops.Sort(x[0], 0) },
			[]*array.Array{ops.Ones([]int{0, 3}, array.Float64)}, [][]int{{0, 3}}},
		{"MatMul with an empty inner axis", func(x ...*array.Array) *array.Array { return ops.MatMul(x[0], x[1]) },
			[]*array.Array{ops.Ones([]int{2, 2, 0}, array.Float64), ops.Ones([]int{0, 3}, array.Float64)}, [][]int{{2, 2, 0}, {0, 3}}},
		{"MatMul with an empty batch", func(x ...*array.Array) *array.Array { return ops.MatMul(x[0], x[1]) },
			[]*array.Array{ops.Ones([]int{0, 2, 3}, array.Float64), ops.Ones([]int{3}, array.Float64)}, [][]int{{0, 2, 3}, {3}}},
	}
	for _, c := range empty {
		out := c.f(c.in...)
		_, g := graph.VJP(ixFn(c.f), c.in, []*array.Array{ops.OnesLike(out)})
		for i, gi := range g {
			arraytest.AssertClose(t, arrayOf(array.Float64, c.shape[i], make([]float64, size(c.shape[i]))), gi, tol12, c.what)
		}
		tans := make([]*array.Array, len(c.in))
		for i, x := range c.in {
			tans[i] = ops.OnesLike(x)
		}
		_, j := graph.JVP(ixFn(c.f), c.in, tans)
		arraytest.AssertClose(t, arrayOf(array.Float64, out.Shape(), make([]float64, out.Size())), j[0], tol12, c.what+" (JVP)")
	}

	// Mixed dtypes promote forward; each gradient comes back in its
	// operand's dtype.
	x32 := ops.Reshape(ops.Arange(0, 6, 1, array.Float32), 2, 3)
	w64 := ops.Reshape(ops.Arange(0, 3, 1, array.Float64), 3, 1)
	_, g = graph.VJP(ixFn(func(x ...*array.Array) *array.Array { return ops.MatMul(x[0], x[1]) }),
		[]*array.Array{x32, w64}, []*array.Array{ops.Ones([]int{2, 1}, array.Float64)})
	arraytest.AssertClose(t, arrayOf(array.Float32, []int{2, 3}, []float64{0, 1, 2, 0, 1, 2}), g[0], tol12, "MatMul, float32 operand")
	arraytest.AssertClose(t, arrayOf(array.Float64, []int{3, 1}, []float64{3, 5, 7}), g[1], tol12, "MatMul, float64 operand")
}
