package graph_test

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// Rows for the solvers and the LU factorisation. Random entries lie in
// [-1, 1]; the rows add a multiple of the identity (or of a permutation
// matrix, so that LU pivots) to keep the matrices far from singular,
// where finite differences and the derivative both hold. The broadcast
// layout repeats rows, which the shift keeps invertible too.

// shifted returns a + s·P for the n×n permutation matrix P whose row i
// has its one in column perm[i], so that partial pivoting picks rows in
// a known order away from ties.
func shifted(a *array.Array, s float64, perm ...int) *array.Array {
	n := len(perm)
	p := make([]float64, n*n)
	for i, j := range perm {
		p[i*n+j] = s
	}
	return ops.Add(a, array.FromSlice(p, n, n))
}

func eyeShift(a *array.Array, s float64) *array.Array {
	n := a.Dim(-1)
	return ops.Add(a, ops.MulScalar(ops.Eye(n, n, 0, a.DType()), s))
}

var _ = register(
	gradCase{op: "LinalgInv", name: "3x3", args: []arg{ixArg(3, 3)},
		f: func(x ...*array.Array) *array.Array { return ops.LinalgInv(eyeShift(x[0], 4)) }},
	gradCase{op: "LinalgInv", name: "batch, pivoting", args: []arg{ixArg(2, 3, 3)},
		f: func(x ...*array.Array) *array.Array { return ops.LinalgInv(shifted(x[0], 4, 2, 0, 1)) }},

	gradCase{op: "LinalgSolve", name: "vector b", args: []arg{ixArg(3, 3), ixArg(3)},
		f: func(x ...*array.Array) *array.Array { return ops.LinalgSolve(shifted(x[0], 4, 1, 2, 0), x[1]) }},
	gradCase{op: "LinalgSolve", name: "matrix b", args: []arg{ixArg(3, 3), ixArg(3, 2)},
		f: func(x ...*array.Array) *array.Array { return ops.LinalgSolve(eyeShift(x[0], 4), x[1]) }},
	gradCase{op: "LinalgSolve", name: "a broadcast over b's batch", args: []arg{ixArg(3, 3), ixArg(2, 3, 1)},
		f: func(x ...*array.Array) *array.Array { return ops.LinalgSolve(eyeShift(x[0], 4), x[1]) }},
	gradCase{op: "LinalgSolve", name: "b broadcast over a's batch", args: []arg{ixArg(2, 3, 3), ixArg(3, 2)},
		f: func(x ...*array.Array) *array.Array { return ops.LinalgSolve(eyeShift(x[0], 4), x[1]) }},

	gradCase{op: "LinalgSolveTriangular", name: "lower", args: []arg{ixArg(3, 3), ixArg(3, 2)},
		f: func(x ...*array.Array) *array.Array {
			return ops.LinalgSolveTriangular(eyeShift(x[0], 3), x[1], false, false)
		}},
	gradCase{op: "LinalgSolveTriangular", name: "upper vector", args: []arg{ixArg(3, 3), ixArg(3)},
		f: func(x ...*array.Array) *array.Array {
			return ops.LinalgSolveTriangular(eyeShift(x[0], 3), x[1], true, false)
		}},
	gradCase{op: "LinalgSolveTriangular", name: "lower unit diagonal, batch", args: []arg{ixArg(2, 3, 3), ixArg(3, 1)},
		f: func(x ...*array.Array) *array.Array { return ops.LinalgSolveTriangular(x[0], x[1], false, true) }},
	gradCase{op: "LinalgSolveTriangular", name: "upper unit diagonal", args: []arg{ixArg(3, 3), ixArg(2, 3, 2)},
		f: func(x ...*array.Array) *array.Array { return ops.LinalgSolveTriangular(x[0], x[1], true, true) }},

	gradCase{op: "LinalgLUFactor", name: "3x3 pivoting", args: []arg{ixArg(3, 3)},
		f: func(x ...*array.Array) *array.Array {
			lu, _, _ := ops.LinalgLUFactor(shifted(x[0], 4, 2, 0, 1))
			return lu
		}},
	gradCase{op: "LinalgLUFactor", name: "batch", args: []arg{ixArg(2, 3, 3)},
		f: func(x ...*array.Array) *array.Array {
			lu, _, _ := ops.LinalgLUFactor(shifted(x[0], 4, 1, 2, 0))
			return lu
		}},
	gradCase{op: "LinalgLUFactor", name: "wide", args: []arg{ixArg(2, 4)},
		f: func(x ...*array.Array) *array.Array {
			pad := ops.Pad(array.FromSlice([]float64{0, 4, 4, 0}, 2, 2), [][2]int{{0, 0}, {0, 2}}, 0)
			lu, _, _ := ops.LinalgLUFactor(ops.Add(x[0], pad))
			return lu
		}},
	gradCase{op: "LinalgLUFactor", name: "tall", args: []arg{ixArg(4, 2)},
		f: func(x ...*array.Array) *array.Array {
			pad := ops.Pad(array.FromSlice([]float64{0, 4, 4, 0}, 2, 2), [][2]int{{1, 1}, {0, 0}}, 0)
			lu, _, _ := ops.LinalgLUFactor(ops.Add(x[0], pad))
			return lu
		}},

	gradCase{op: "LinalgLUSolve", name: "fixed pivots", args: []arg{ixArg(3, 3), {fixed: array.FromSlice([]int32{2, 2, 2})}, ixArg(3, 2)},
		f: func(x ...*array.Array) *array.Array { return ops.LinalgLUSolve(eyeShift(x[0], 3), x[1], x[2]) }},
	gradCase{op: "LinalgLUSolve", name: "through LUFactor, vector b", args: []arg{ixArg(3, 3), ixArg(3)},
		f: func(x ...*array.Array) *array.Array {
			lu, piv, _ := ops.LinalgLUFactor(shifted(x[0], 4, 1, 2, 0))
			return ops.LinalgLUSolve(lu, piv, x[1])
		}},
)
