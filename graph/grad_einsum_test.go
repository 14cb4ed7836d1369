package graph_test

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// Rows for Einsum and the matrix-structure ops. Einsum's derivatives come
// from the ops it is built of (Diagonal, Sum, Transpose, Reshape,
// MatMul), so its rows cover each way it uses them: a plain and a batched
// product, transposed operands, diagonals and traces, ellipses that
// broadcast, a label summed in one operand and a four-operand chain.

func init() {
	notOps["Tri"] = "creation from numbers: no array input"
	notOps["EinsumPath"] = "plans a contraction from shapes: no array result"
}

func einsum(s string) func(x ...*array.Array) *array.Array {
	return func(x ...*array.Array) *array.Array { return ops.Einsum(s, x...) }
}

var _ = register(
	gradCase{op: "Einsum", name: "matmul", args: []arg{{shape: []int{2, 3}}, {shape: []int{3, 4}}}, f: einsum("ij,jk->ik")},
	gradCase{op: "Einsum", name: "batched matmul", args: []arg{{shape: []int{2, 2, 3}}, {shape: []int{2, 3, 2}}},
		f: einsum("bij,bjk->bik")},
	gradCase{op: "Einsum", name: "transposed operands, permuted output",
		args: []arg{{shape: []int{3, 2}}, {shape: []int{4, 3}}}, f: einsum("ji,kj->ki")},
	gradCase{op: "Einsum", name: "diagonal", args: []arg{{shape: []int{3, 3}}}, f: einsum("ii->i")},
	gradCase{op: "Einsum", name: "trace", args: []arg{{shape: []int{3, 3}}}, f: einsum("ii")},
	gradCase{op: "Einsum", name: "partial trace with a product", args: []arg{{shape: []int{2, 2, 3}}, {shape: []int{3, 2}}},
		f: einsum("iij,jk->k")},
	gradCase{op: "Einsum", name: "ellipsis broadcast", args: []arg{{shape: []int{2, 1, 2, 3}}, {shape: []int{3, 3, 2}}},
		f: einsum("...ij,...jk->...ik")},
	gradCase{op: "Einsum", name: "label summed in one operand", args: []arg{{shape: []int{2, 3}}, {shape: []int{2, 4}}},
		f: einsum("ij,ik->k")},
	gradCase{op: "Einsum", name: "outer product", args: []arg{{shape: []int{3}}, {shape: []int{2}}}, f: einsum("i,j")},
	gradCase{op: "Einsum", name: "scalar operand", args: []arg{{}, {shape: []int{2, 3}}}, f: einsum(",ij->ji")},
	gradCase{op: "Einsum", name: "four-operand chain",
		args: []arg{{shape: []int{2, 3}}, {shape: []int{3, 4}}, {shape: []int{4, 2}}, {shape: []int{2, 3}}},
		f:    einsum("ij,jk,kl,lm->im")},

	gradCase{op: "Diagonal", name: "offset above", args: []arg{{shape: []int{3, 4}}},
		f: func(x ...*array.Array) *array.Array { return ops.Diagonal(x[0], 1, 0, 1) }},
	gradCase{op: "Diagonal", name: "offset below, axes reversed", args: []arg{{shape: []int{2, 3, 4}}},
		f: func(x ...*array.Array) *array.Array { return ops.Diagonal(x[0], -1, 2, 0) }},
	gradCase{op: "Diagonal", name: "empty", args: []arg{{shape: []int{2, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.Diagonal(x[0], 5, 0, 1) }},
	// Diagonal's VJP builds a matrix through Pad and Where; differentiating
	// it checks the rules that second derivatives go through.
	gradCase{op: "Diagonal", name: "its VJP", args: []arg{{shape: []int{2, 2}}},
		f: func(x ...*array.Array) *array.Array {
			d := func(y ...*array.Array) []*array.Array { return []*array.Array{ops.Diagonal(y[0], -1, 1, 2)} }
			_, g := graph.VJP(d, []*array.Array{ops.Zeros([]int{2, 3, 3}, array.Float64)}, x)
			return g[0]
		}},
	gradCase{op: "Diag", name: "build", args: []arg{{shape: []int{3}}},
		f: func(x ...*array.Array) *array.Array { return ops.Diag(x[0], -1) }},
	gradCase{op: "Diag", name: "extract", args: []arg{{shape: []int{3, 4}}},
		f: func(x ...*array.Array) *array.Array { return ops.Diag(x[0], 1) }},
	gradCase{op: "Trace", name: "batched", args: []arg{{shape: []int{2, 3, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.Trace(x[0], 0, -2, -1) }},
	gradCase{op: "Trace", name: "offset", args: []arg{{shape: []int{3, 4}}},
		f: func(x ...*array.Array) *array.Array { return ops.Trace(x[0], -1, 1, 0) }},
	gradCase{op: "Tril", name: "batched", args: []arg{{shape: []int{2, 3, 4}}},
		f: func(x ...*array.Array) *array.Array { return ops.Tril(x[0], 0) }},
	gradCase{op: "Tril", name: "1-D", args: []arg{{shape: []int{3}}},
		f: func(x ...*array.Array) *array.Array { return ops.Tril(x[0], -1) }},
	gradCase{op: "Triu", args: []arg{{shape: []int{4, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.Triu(x[0], 1) }},
	gradCase{op: "Kron", name: "matrices", args: []arg{{shape: []int{2, 2}}, {shape: []int{2, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.Kron(x[0], x[1]) }},
	gradCase{op: "Kron", name: "ranks differ", args: []arg{{shape: []int{3}}, {shape: []int{2, 2}}},
		f: func(x ...*array.Array) *array.Array { return ops.Kron(x[0], x[1]) }},
	gradCase{op: "Inner", args: []arg{{shape: []int{2, 3}}, {shape: []int{4, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.Inner(x[0], x[1]) }},
	gradCase{op: "Inner", name: "scalar", args: []arg{{}, {shape: []int{2, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.Inner(x[0], x[1]) }},
	gradCase{op: "VecDot", name: "broadcast", args: []arg{{shape: []int{2, 1, 3}}, {shape: []int{4, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.VecDot(x[0], x[1], -1) }},
	gradCase{op: "VecDot", name: "axis 0", args: []arg{{shape: []int{3, 2}}, {shape: []int{3, 2}}},
		f: func(x ...*array.Array) *array.Array { return ops.VecDot(x[0], x[1], 0) }},
	gradCase{op: "AddMM", args: []arg{{shape: []int{4}}, {shape: []int{2, 3}}, {shape: []int{3, 4}}},
		f: func(x ...*array.Array) *array.Array { return ops.AddMM(x[0], x[1], x[2], 2, -0.5) }},
	gradCase{op: "AddMM", name: "beta 0", args: []arg{{shape: []int{2, 2}}, {shape: []int{2, 2, 3}}, {shape: []int{3, 2}}},
		f: func(x ...*array.Array) *array.Array { return ops.AddMM(x[0], x[1], x[2], 1, 0) }},
)
