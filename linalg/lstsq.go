package linalg

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// Pinv returns the Moore–Penrose pseudo-inverse of a, [..., M, N] →
// [..., N, M], from the thin SVD: singular values at or below
// max(M, N)·ε·σ_max (ε the dtype's machine epsilon) count as zero, the
// tolerance of numpy's rtol=None and of the array API; numpy's own
// default (rcond=1e-15) keeps values that float32 cannot resolve. The
// SVD runs on the CPU stream; the derivative follows through it, so it
// exists where the singular values are distinct and a has full rank.
// a must be float32 or float64 with at least two dimensions.
func Pinv(a *array.Array) *array.Array {
	const op = "linalg.Pinv"
	compositeMatrix(op, a)
	s := a.Shape()
	m, n := s[len(s)-2], s[len(s)-1]
	if m == 0 || n == 0 {
		return ops.Zeros(append(s[:len(s)-2:len(s)-2], n, m), a.DType())
	}
	u, sv, vt := ops.LinalgSVD(a, false)
	sinv := invertAbove(sv, svdCutoff(sv, m, n))
	return ops.MatMul(ops.SwapAxes(vt, -1, -2), ops.Mul(ops.ExpandDims(sinv, -1), ops.SwapAxes(u, -1, -2)))
}

// Lstsq returns the least-squares solution x of a·x = b, as
// numpy.linalg.lstsq does (the minimum-norm solution when a is rank
// deficient or wide), with the residual sums of squares, the rank of a
// and its singular values. a is [..., M, N]; b is [..., M, K], or a
// vector [M] (only a one-dimensional b is a vector, as in numpy 2's
// solve), and the batch axes broadcast. The results are
//
//	x          [..., N, K] ([..., N] for a vector b)
//	residuals  [..., K] ([...]): Σᵢ |b − a·x|²ᵢ over each column of b
//	rank       [...] int32: the singular values above the cutoff
//	s          [..., min(M, N)]: a's singular values, descending
//
// numpy returns residuals only where a has full column rank and M > N,
// and an empty array otherwise; a lazy array needs its shape before its
// values, so the residuals here are always the sums (near 0 where the
// system is solved exactly). Singular values at or below
// max(M, N)·ε·σ_max count as zero (numpy's rcond=None). The solution
// goes through the thin SVD, on the CPU stream, and its derivative
// through the SVD's (distinct singular values, full rank). a and b must
// be float32 or float64, of one dtype, and a's matrices must not be empty
// (M, N > 0; an empty batch is fine).
func Lstsq(a, b *array.Array) (x, residuals, rank, s *array.Array) {
	const op = "linalg.Lstsq"
	compositeMatrix(op, a)
	if b == nil {
		array.Panicf(op, "nil b")
	}
	if b.DType() != a.DType() {
		array.Panicf(op, "a has dtype %v and b %v: want one dtype", a.DType(), b.DType())
	}
	as := a.Shape()
	m, n := as[len(as)-2], as[len(as)-1]
	vector := b.Ndim() == 1
	bm := b
	if vector {
		bm = ops.ExpandDims(b, -1)
	}
	bs := bm.Shape()
	if bm.Ndim() < 2 || bs[len(bs)-2] != m {
		array.Panicf(op, "a of shape %v and b of shape %v: b's rows must match a's %d", as, b.Shape(), m)
	}
	if m == 0 || n == 0 {
		array.Panicf(op, "a of shape %v is empty", as)
	}
	u, sv, vt := ops.LinalgSVD(a, false)
	tol := svdCutoff(sv, m, n)
	sinv := invertAbove(sv, tol)
	ub := ops.MatMul(ops.SwapAxes(u, -1, -2), bm)
	x = ops.MatMul(ops.SwapAxes(vt, -1, -2), ops.Mul(ops.ExpandDims(sinv, -1), ub))
	r := ops.Sub(bm, ops.MatMul(a, x))
	residuals = ops.Sum(ops.Square(r), -2)
	rank = ops.Sum(ops.AsType(ops.Greater(sv, tol), array.Int32), -1)
	if vector {
		x, residuals = ops.Squeeze(x, -1), ops.Squeeze(residuals, -1)
	}
	return x, residuals, rank, sv
}

// svdCutoff is the singular value at or below which s's values count as
// zero, [..., 1]: max(m, n)·ε·max(s).
func svdCutoff(s *array.Array, m, n int) *array.Array {
	eps := 0x1p-52
	if s.DType() == array.Float32 {
		eps = 0x1p-23
	}
	return ops.MulScalar(ops.KeepDims(ops.Max, s, -1), float64(max(m, n))*eps)
}

// invertAbove returns 1/s where s > tol and 0 elsewhere. The division
// sees 1 where s is cut, so no infinity reaches the derivative.
func invertAbove(s, tol *array.Array) *array.Array {
	keep := ops.Greater(s, tol)
	one := ops.OnesLike(s)
	return ops.Where(keep, ops.Reciprocal(ops.Where(keep, s, one)), ops.ZerosLike(s))
}

// compositeMatrix panics unless a is a float32 or float64 stack of matrices.
func compositeMatrix(op string, a *array.Array) {
	if a == nil {
		array.Panicf(op, "nil array")
	}
	if a.Ndim() < 2 {
		array.Panicf(op, "a of shape %v is not a matrix: want [..., M, N]", a.Shape())
	}
	if dt := a.DType(); dt != array.Float32 && dt != array.Float64 {
		array.Panicf(op, "a of shape %v has dtype %v: want float32 or float64", a.Shape(), dt)
	}
}
