package linalg

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/ops"
)

// The kinds of the errors Eval returns when a decomposition fails, for
// errors.Is. Each error names the operation, the shape and the batch
// index of the matrix.
var (
	// ErrNotPositiveDefinite: Cholesky of a matrix that is not positive
	// definite (numpy raises LinAlgError; JAX returns NaN).
	ErrNotPositiveDefinite = cpu.ErrNotPositiveDefinite
	// ErrNoConvergence: SVD, SVDVals, Eigh, Eig or their value forms did
	// not converge; for SVD and SVDVals that includes a matrix holding a
	// NaN or an infinity (numpy raises "SVD did not converge").
	ErrNoConvergence = cpu.ErrNoConvergence
	// ErrNotFinite: Eig or Eigvals of a matrix holding a NaN or an
	// infinity (numpy raises "Array must not contain infs or NaNs").
	ErrNotFinite = cpu.ErrNotFinite
)

// Triangle names the triangle of a symmetric matrix that Eigh and
// Eigvalsh read.
type Triangle int

const (
	// Lower reads the lower triangle and the diagonal (the default, as
	// numpy's and MLX's UPLO="L").
	Lower Triangle = iota
	// Upper reads the upper triangle and the diagonal (UPLO="U").
	Upper
)

// decompUpper reads the optional triangle of Eigh and Eigvalsh.
func decompUpper(op string, tri []Triangle) bool {
	switch {
	case len(tri) == 0:
		return false
	case len(tri) > 1:
		array.Panicf(op, "%d triangles given, want at most one", len(tri))
	case tri[0] != Lower && tri[0] != Upper:
		array.Panicf(op, "triangle %d, want linalg.Lower or linalg.Upper", int(tri[0]))
	}
	return tri[0] == Upper
}

// Cholesky returns the Cholesky factor of every symmetric positive
// definite matrix of a ([..., n, n]): lower triangular L with a = L·Lᵀ,
// or, when upper, upper triangular U with a = Uᵀ·U, as
// numpy.linalg.cholesky and MLX's cholesky(a, upper). Only that triangle
// of a is read (numpy reads the lower one; JAX symmetrizes a first); the
// other triangle of the result is zero.
//
// A matrix that is not positive definite is an error from Eval wrapping
// ErrNotPositiveDefinite, as numpy raises LinAlgError; a NaN or an
// infinity in the triangle read gives NaN in the factor's triangle. float32
// and float64 keep their dtype (float32 computes in float64 and rounds
// once); integers and bool compute in float32. The derivative is JAX's
// (cholesky_jvp_rule); the gradient lies on the triangle read.
func Cholesky(a *array.Array, upper bool) *array.Array { return ops.LinalgCholesky(a, upper) }

// CholeskyInv returns the inverse of the matrix whose Cholesky factor is
// each matrix of l ([..., n, n]): (L·Lᵀ)⁻¹, or (Uᵀ·U)⁻¹ when upper, as
// MLX's cholesky_inv and scipy's cho_solve against the identity. Only
// that triangle of l is read. It is cheaper and more accurate than
// Inv(a) when the factor is at hand. A zero on the factor's diagonal is
// an error from Eval wrapping ErrSingular; a NaN or an infinity gives
// NaN. Its derivative is that of (L·Lᵀ)⁻¹, on the triangle read.
func CholeskyInv(l *array.Array, upper bool) *array.Array { return ops.LinalgCholeskyInv(l, upper) }

// QR returns the reduced QR decomposition a = q·r of every matrix of a
// ([..., m, n], k = min(m, n)): q [..., m, k] with orthonormal columns
// and r [..., k, n] upper triangular, as numpy.linalg.qr(a) (mode
// "reduced") and MLX's qr. Signs are LAPACK's: r's diagonal may be
// negative, as numpy's. A NaN or an infinity gives NaN. The derivative is
// JAX's (qr_jvp_rule), extended to m < n, and needs r's first k columns
// invertible.
func QR(a *array.Array) (q, r *array.Array) { return ops.LinalgQR(a, false) }

// QRComplete returns the complete QR decomposition of every matrix of a
// ([..., m, n]): q square [..., m, m] and r [..., m, n], as
// numpy.linalg.qr(a, mode="complete"). When m > n the last m-n columns of
// q are an orthonormal basis of the complement of a's columns, which is
// not unique: differentiating through them panics with *array.Error (as
// JAX's NotImplementedError); differentiating r alone, or any m ≤ n, is
// QR's derivative.
func QRComplete(a *array.Array) (q, r *array.Array) { return ops.LinalgQR(a, true) }

// SVD returns the singular value decomposition a = u·diag(s)·vt of every
// matrix of a ([..., m, n], k = min(m, n)) with full matrices, as
// numpy.linalg.svd(a) (full_matrices=True) and MLX's svd: u [..., m, m],
// s [..., k] descending, vt [..., n, n]. Signs are LAPACK's.
//
// A matrix holding a NaN or an infinity, or on which the iteration does
// not converge, is an error from Eval wrapping ErrNoConvergence, as numpy
// raises "SVD did not converge" (JAX returns NaN). The derivative is
// JAX's (svd_jvp_rule): that of s always, that of the singular vectors
// where the singular values are distinct and nonzero. For a non-square
// a, the vectors beyond k are not unique and have no derivative: a
// gradient through u or vt panics with *array.Error, as does any JVP;
// use SVDThin, or SVDVals for the values.
func SVD(a *array.Array) (u, s, vt *array.Array) { return ops.LinalgSVD(a, true) }

// SVDThin returns the thin singular value decomposition of every matrix
// of a, as numpy.linalg.svd(a, full_matrices=False): u [..., m, k],
// s [..., k], vt [..., k, n]. Errors and derivatives as SVD's, with the
// vectors' derivative defined for every shape.
func SVDThin(a *array.Array) (u, s, vt *array.Array) { return ops.LinalgSVD(a, false) }

// SVDVals returns the singular values of every matrix of a ([..., m, n]):
// [..., min(m, n)], descending, as numpy.linalg.svd(a, compute_uv=False),
// MLX's svd(a, compute_uv=False) and numpy.linalg.svdvals. Errors as
// SVD's; the derivative U·diag(s̄)·Vᵀ is defined wherever the values are
// distinct.
func SVDVals(a *array.Array) *array.Array { return ops.LinalgSVDVals(a) }

// Eigh returns the eigenvalues w ([..., n], ascending) and orthonormal
// eigenvectors (the columns of v, [..., n, n]) of every symmetric matrix
// of a ([..., n, n]), as numpy.linalg.eigh and MLX's eigh. Only the lower
// triangle is read, or the upper with linalg.Upper: Eigh(a, Upper) is
// numpy's eigh(a, UPLO="U"). Signs of the vectors are LAPACK's.
//
// A NaN or an infinity in the triangle read gives NaN, as numpy; an
// iteration that does not converge is an error from Eval wrapping
// ErrNoConvergence. The derivative is JAX's (eigh_jvp_rule), on the
// triangle read: that of w always, that of v where the eigenvalues are
// distinct.
func Eigh(a *array.Array, tri ...Triangle) (w, v *array.Array) {
	return ops.LinalgEigh(a, decompUpper("linalg.Eigh", tri))
}

// Eigvalsh returns the eigenvalues of every symmetric matrix of a
// ([..., n], ascending), as numpy.linalg.eigvalsh and MLX's eigvalsh,
// reading the lower triangle or, with linalg.Upper, the upper. NaNs,
// errors and derivative as Eigh's values.
func Eigvalsh(a *array.Array, tri ...Triangle) *array.Array {
	return ops.LinalgEigvalsh(a, decompUpper("linalg.Eigvalsh", tri))
}

// Eig returns the eigenvalues w ([..., n]) and right eigenvectors (the
// columns of v, [..., n, n], each of unit norm with its largest component
// real) of every square matrix of a, as numpy.linalg.eig and MLX's eig.
// Both are complex64 whatever a's dtype, as MLX's (fathom has no
// complex128, so float64 input is rounded there). The order is LAPACK's,
// as numpy's: not sorted, with a complex conjugate pair adjacent, the one
// with the positive imaginary part first.
//
// A NaN or an infinity is an error from Eval wrapping ErrNotFinite (numpy
// raises); an iteration that does not converge one wrapping
// ErrNoConvergence. Eig has no derivative: a VJP or JVP through it
// panics with *array.Error (for a symmetric matrix use Eigh).
func Eig(a *array.Array) (w, v *array.Array) { return ops.LinalgEig(a) }

// Eigvals returns the eigenvalues of every square matrix of a
// ([..., n], complex64), as numpy.linalg.eigvals and MLX's eigvals;
// otherwise as Eig.
func Eigvals(a *array.Array) *array.Array { return ops.LinalgEigvals(a) }
