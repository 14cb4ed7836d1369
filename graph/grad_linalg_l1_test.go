package graph_test

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// Rows for the decompositions. Random entries lie in [-1, 1]. Every
// argument has a leading batch axis, which the broadcast layout repeats
// (repeating a matrix's rows instead would make it singular). Routines
// that read one triangle (Cholesky, CholeskyInv, Eigh) get a raw matrix,
// so that the rows check the derivative is zero on the other triangle;
// Cholesky's get a shifted diagonal, which keeps the triangle read
// positive definite. Rows with several outputs return them joined, so
// that every output's cotangent is checked at once; singular vectors and
// eigenvectors are LAPACK's, whose signs are smooth functions of the
// matrix away from ties, as finite differences need.

func init() {
	notOps["LinalgEig"] = "no derivative: the VJP and JVP panic (linalg's TestEigHasNoDerivative)"
	notOps["LinalgEigvals"] = "no derivative: the VJP and JVP panic (linalg's TestEigHasNoDerivative)"
}

// l1Shift returns a + s·I.
func l1Shift(a *array.Array, s float64) *array.Array {
	n := a.Dim(-1)
	return ops.Add(a, ops.MulScalar(ops.Eye(n, n, 0, a.DType()), s))
}

// l1Join flattens and joins xs.
func l1Join(xs ...*array.Array) *array.Array {
	flat := make([]*array.Array, len(xs))
	for i, x := range xs {
		flat[i] = ops.Flatten(x)
	}
	return ops.Concatenate(flat, 0)
}

func l1QR(complete bool) func(x ...*array.Array) *array.Array {
	return func(x ...*array.Array) *array.Array { return l1Join(ops.LinalgQR(x[0], complete)) }
}

func l1SVD(full bool) func(x ...*array.Array) *array.Array {
	return func(x ...*array.Array) *array.Array {
		u, s, vt := ops.LinalgSVD(x[0], full)
		return l1Join(u, s, vt)
	}
}

func l1Eigh(upper bool) func(x ...*array.Array) *array.Array {
	return func(x ...*array.Array) *array.Array {
		w, v := ops.LinalgEigh(x[0], upper)
		return l1Join(w, v)
	}
}

var _ = register(
	gradCase{op: "LinalgCholesky", name: "lower, raw", args: []arg{{shape: []int{2, 3, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.LinalgCholesky(l1Shift(x[0], 4), false) }},
	gradCase{op: "LinalgCholesky", name: "upper, raw", args: []arg{{shape: []int{2, 3, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.LinalgCholesky(l1Shift(x[0], 4), true) }},
	gradCase{op: "LinalgCholesky", name: "of x·xᵀ + I", args: []arg{{shape: []int{2, 4, 4}}},
		f: func(x ...*array.Array) *array.Array {
			return ops.LinalgCholesky(l1Shift(ops.MatMul(x[0], ops.SwapAxes(x[0], -1, -2)), 1), false)
		}},
	gradCase{op: "LinalgCholesky", name: "1x1", args: []arg{{shape: []int{2, 1, 1}, lo: 0.5, hi: 2}},
		f: func(x ...*array.Array) *array.Array { return ops.LinalgCholesky(x[0], true) }},
	gradCase{op: "LinalgCholeskyInv", name: "lower", args: []arg{{shape: []int{2, 3, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.LinalgCholeskyInv(l1Shift(x[0], 3), false) }},
	gradCase{op: "LinalgCholeskyInv", name: "upper", args: []arg{{shape: []int{2, 3, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.LinalgCholeskyInv(l1Shift(x[0], 3), true) }},
	// CholeskyInv(Cholesky(a)) is a⁻¹: the two rules compose
	gradCase{op: "LinalgCholeskyInv", name: "of Cholesky", args: []arg{{shape: []int{2, 3, 3}}},
		f: func(x ...*array.Array) *array.Array {
			return ops.LinalgCholeskyInv(ops.LinalgCholesky(l1Shift(x[0], 4), false), false)
		}},

	gradCase{op: "LinalgQR", name: "tall", args: []arg{{shape: []int{2, 4, 3}}}, f: l1QR(false)},
	gradCase{op: "LinalgQR", name: "square", args: []arg{{shape: []int{2, 3, 3}}}, f: l1QR(false)},
	gradCase{op: "LinalgQR", name: "wide", args: []arg{{shape: []int{2, 3, 5}}}, f: l1QR(false)},
	gradCase{op: "LinalgQR", name: "complete, wide", args: []arg{{shape: []int{2, 2, 4}}}, f: l1QR(true)},

	gradCase{op: "LinalgSVD", name: "thin, tall", args: []arg{{shape: []int{2, 4, 3}}}, f: l1SVD(false)},
	gradCase{op: "LinalgSVD", name: "thin, wide", args: []arg{{shape: []int{2, 3, 4}}}, f: l1SVD(false)},
	gradCase{op: "LinalgSVD", name: "full, square", args: []arg{{shape: []int{2, 3, 3}}}, f: l1SVD(true)},
	gradCase{op: "LinalgSVDVals", name: "tall", args: []arg{{shape: []int{2, 4, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.LinalgSVDVals(x[0]) }},
	gradCase{op: "LinalgSVDVals", name: "wide", args: []arg{{shape: []int{2, 2, 5}}},
		f: func(x ...*array.Array) *array.Array { return ops.LinalgSVDVals(x[0]) }},

	gradCase{op: "LinalgEigh", name: "lower, raw", args: []arg{{shape: []int{2, 3, 3}}}, f: l1Eigh(false)},
	gradCase{op: "LinalgEigh", name: "upper, raw", args: []arg{{shape: []int{2, 3, 3}}}, f: l1Eigh(true)},
	gradCase{op: "LinalgEigh", name: "of x + xᵀ", args: []arg{{shape: []int{2, 4, 4}}},
		f: func(x ...*array.Array) *array.Array {
			return l1Eigh(false)(ops.Add(x[0], ops.SwapAxes(x[0], -1, -2)))
		}},
	gradCase{op: "LinalgEigvalsh", name: "lower, raw", args: []arg{{shape: []int{2, 4, 4}}},
		f: func(x ...*array.Array) *array.Array { return ops.LinalgEigvalsh(x[0], false) }},
	gradCase{op: "LinalgEigvalsh", name: "upper, raw", args: []arg{{shape: []int{2, 3, 3}}},
		f: func(x ...*array.Array) *array.Array { return ops.LinalgEigvalsh(x[0], true) }},
)
