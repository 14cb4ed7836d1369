package linalg

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/ops"
)

// ErrSingular is the kind of the error Eval returns when Inv, Solve,
// SolveTriangular or LUSolve meets a singular matrix (an exactly zero
// pivot, or a zero on a triangle's diagonal): errors.Is(err, ErrSingular)
// tests for it. The error names the operation, the shape and the batch
// index of the matrix.
var ErrSingular = cpu.ErrSingular

// Inv returns the inverse of every square matrix of a ([..., n, n]),
// as numpy.linalg.inv and MLX's inv. float32 and float64 keep their dtype
// (float32 computes in float64 and rounds once); integers and bool
// compute in float32. A singular matrix is an error from Eval wrapping
// ErrSingular, as numpy raises LinAlgError. The derivative is JAX's:
// d(A⁻¹) = -A⁻¹·dA·A⁻¹.
func Inv(a *array.Array) *array.Array { return ops.LinalgInv(a) }

// Solve returns x with a·x = b for every square matrix of a ([..., n, n]),
// as numpy.linalg.solve. A 1-D b of n elements is a vector, and x is then
// [..., n]; any other b is a stack of n×k matrices ([..., n, k]) whose
// batch axes broadcast with a's, and x is [..., n, k]. That is numpy 2's
// rule: numpy 1 also read a b of shape [..., n] as a stack of vectors
// when a has one more axis, which made a b of shape [n, n] with a of
// shape [n, n, n] ambiguous; here it is always a matrix (reshape b to
// [..., n, 1] for a stack of vectors). The dtype is the promotion of a's and b's, as Inv's.
// A singular matrix is an error from Eval wrapping ErrSingular. The
// derivative is JAX's, with respect to both a and b.
func Solve(a, b *array.Array) *array.Array { return ops.LinalgSolve(a, b) }

// SolveTriangular returns x with a·x = b for every square matrix of a,
// reading only its upper triangle (upper) or its lower one, and taking
// its diagonal as ones without reading it when unitDiagonal is set:
// scipy.linalg.solve_triangular(a, b, lower=!upper, unit_diagonal=...),
// jax.scipy.linalg.solve_triangular and MLX's solve_triangular. b follows
// Solve's rule. A zero on the diagonal (when it is read) is an error from
// Eval wrapping ErrSingular, as scipy raises LinAlgError (JAX returns
// infinities). The derivative is JAX's; a's gradient lies on the
// triangle that is read.
func SolveTriangular(a, b *array.Array, upper, unitDiagonal bool) *array.Array {
	return ops.LinalgSolveTriangular(a, b, upper, unitDiagonal)
}

// LU returns the LU factorisation with partial pivoting of every m×n
// matrix of a ([..., m, n]; k = min(m, n)): l is [..., m, k], unit lower
// triangular (trapezoidal when m > k); u is [..., k, n], upper triangular
// (trapezoidal when n > k); p is the row permutation as int32 row indices
// ([..., m]) such that a = l[p]·u, which is MLX's lu and scipy's
// lu(a, p_indices=True). scipy's default permutation matrix P, with
// a = P·l·u, is P[i, p[i]] = 1 (ops.Equal of p against ops.Arange, as
// float). A singular matrix is factored without error. The derivative of
// l and u is JAX's (p has none) and needs u invertible: at a singular
// matrix it is an error from Eval.
func LU(a *array.Array) (p, l, u *array.Array) {
	lu, _, rows := ops.LinalgLUFactor(a)
	m, n := lu.Dim(-2), lu.Dim(-1)
	k := min(m, n)
	l = ops.Add(ops.Tril(ops.SliceAxis(lu, -1, ops.R(0, k)), -1), ops.Eye(m, k, 0, lu.DType()))
	u = ops.Triu(ops.SliceAxis(lu, -2, ops.R(0, k)), 0)
	return rows, l, u
}

// LUFactor returns the LU factorisation of every m×n matrix of a packed
// as LAPACK's getrf leaves it, with its pivots: scipy.linalg.lu_factor
// and MLX's lu_factor. lu ([..., m, n]) holds L's strictly lower part
// (its unit diagonal is not stored) and U on and above the diagonal;
// pivots (int32, [..., min(m, n)]) are 0-based row interchanges: row i
// was swapped with row pivots[i], in order. LUSolve takes both. A
// singular matrix is factored without error (U has a zero on its
// diagonal; scipy warns there). The derivative of lu is JAX's.
func LUFactor(a *array.Array) (lu, pivots *array.Array) {
	lu, pivots, _ = ops.LinalgLUFactor(a)
	return lu, pivots
}

// LUSolve returns x with a·x = b from LUFactor's lu ([..., n, n]) and
// pivots of a: scipy.linalg.lu_solve((lu, pivots), b) and MLX's
// lu_solve. b follows Solve's rule; the batch axes of lu, pivots and b
// broadcast. A zero on U's diagonal is an error from Eval wrapping
// ErrSingular, and so is a pivot outside [0, n). The derivative with
// respect to lu and b is that of the two triangular solves it is made of.
func LUSolve(lu, pivots, b *array.Array) *array.Array { return ops.LinalgLUSolve(lu, pivots, b) }

// luDiagonal factors a stack of square matrices and returns U's diagonal
// ([..., n]) and the sign of the permutation (+1 or -1, a's dtype), from
// which the determinant follows.
func luDiagonal(op string, a *array.Array) (diag, sign *array.Array) {
	if a == nil {
		array.Panicf(op, "nil array")
	}
	s := a.Shape()
	if len(s) < 2 || s[len(s)-1] != s[len(s)-2] {
		array.Panicf(op, "a of shape %v is not a stack of square matrices", s)
	}
	lu, piv, _ := ops.LinalgLUFactor(a)
	n := s[len(s)-1]
	swaps := ops.Sum(ops.NotEqual(piv, ops.Arange(0, float64(n), 1, array.Int32)), -1)
	odd := ops.AsType(ops.RemainderScalar(swaps, 2), lu.DType())
	return ops.Diagonal(lu, 0, -2, -1), ops.AddScalar(ops.MulScalar(odd, -2), 1)
}

// Det returns the determinant of every square matrix of a ([..., n, n];
// the result is [...]), as numpy.linalg.det: the product of U's diagonal
// from the LU factorisation, signed by the permutation. A singular matrix
// gives 0 (or a tiny number, from rounding, as numpy's does), not an
// error; a 0×0 matrix gives 1. Large matrices overflow: SlogDet does not.
// The derivative is that of the factorisation (JAX's, det·tr(a⁻¹·da)), and
// at a singular matrix it is an error from Eval.
func Det(a *array.Array) *array.Array {
	diag, sign := luDiagonal("linalg.Det", a)
	return ops.Mul(sign, ops.Prod(diag, -1))
}

// SlogDet returns the sign and the natural logarithm of the absolute value
// of the determinant of every square matrix of a (numpy.linalg.slogdet),
// which do not overflow where Det does: det = sign·exp(logabsdet). For a
// singular matrix sign is 0 and logabsdet -Inf, numpy's values, not an
// error. A NaN in a makes logabsdet NaN; sign is that of the factor's
// other diagonal entries, as numpy's, which counts NaN as positive. The derivative of logabsdet is
// JAX's, tr(a⁻¹·da) (sign has none), and at a singular matrix it is an
// error from Eval.
func SlogDet(a *array.Array) (sign, logabsdet *array.Array) {
	diag, s := luDiagonal("linalg.SlogDet", a)
	// numpy counts a NaN on the diagonal as positive: only the
	// logarithm is NaN.
	signs := ops.Where(ops.IsNaN(diag), ops.OnesLike(diag), ops.Sign(diag))
	prod := ops.Prod(signs, -1)
	// numpy's sign of a singular matrix is 0, not the -0 an odd
	// permutation would make of it.
	sign = ops.Where(ops.EqualScalar(prod, 0), ops.ZerosLike(prod), ops.Mul(s, prod))
	logabsdet = ops.Sum(ops.Log(ops.Abs(diag)), -1)
	return sign, logabsdet
}
