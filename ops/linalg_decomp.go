package ops

import (
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
)

// The decompositions: the primitives behind package linalg's Cholesky,
// CholeskyInv, QR, SVD, Eigh and Eig and their value-only forms. Most
// programs call package linalg. They run gonum's LAPACK on the host, on
// the GPU stream too (onHost), as MLX runs its linear algebra. The last
// two axes are the matrix, the leading ones a batch.
//
// The derivatives are JAX's (jax/_src/lax/linalg.py): each JVP rule is
// JAX's, and each VJP its transpose, both built of ops so that they can
// be differentiated again. A routine that reads one triangle of a
// symmetric matrix (Cholesky, Eigh) is differentiated as the function it
// computes: of that triangle, the other's derivative being zero.

// decompArg checks a is a stack of matrices (square if asked) of a dtype
// LAPACK serves and returns a in the dtype it computes in, with its last
// two axes.
func decompArg(op string, a *array.Array, square bool) (x *array.Array, m, n int) {
	requireNonNil(op, a)
	m, n = matrixArg(op, "a", a, square)
	dt := linalgDType(op, a.DType())
	return AsType(a, dt), m, n
}

// decompShape is shape with its last axes replaced by tail.
func decompShape(shape []int, inner int, tail ...int) []int {
	return append(slices.Clone(shape[:len(shape)-inner]), tail...)
}

// decompSymTangent is the symmetric matrix that a change t of a's triangle
// (lower, or upper) makes of the matrix a routine reading that triangle
// sees.
func decompSymTangent(t *array.Array, upper bool) *array.Array {
	if upper {
		return Add(Triu(t, 0), mT(Triu(t, 1)))
	}
	return Add(Tril(t, 0), mT(Tril(t, -1)))
}

// decompSymCotangent is decompSymTangent's transpose: the cotangent of the triangle
// read, given that of the symmetric matrix built from it.
func decompSymCotangent(g *array.Array, upper bool) *array.Array {
	if upper {
		return Add(Triu(g, 0), Triu(mT(g), 1))
	}
	return Add(Tril(g, 0), Tril(mT(g), -1))
}

// decompEye is the identity of sq's shape ([..., n, n]) and dtype. It is
// built from sq, not by Eye, so that a shapeless trace of a derivative
// replays at other batch sizes.
func decompEye(sq *array.Array) *array.Array { return Tril(Triu(OnesLike(sq), 0), 0) }

// decompDiagMatrix is the matrix with v ([..., k]) on its diagonal, of
// sq's shape ([..., k, k]).
func decompDiagMatrix(v, sq *array.Array) *array.Array { return Mul(decompEye(sq), ExpandDims(v, -1)) }

// decompScaleCols scales the columns of x by v ([..., k] against [..., r, k]):
// x·diag(v).
func decompScaleCols(x, v *array.Array) *array.Array { return Mul(x, ExpandDims(v, -2)) }

// decompDiag is the diagonal of every matrix of x.
func decompDiag(x *array.Array) *array.Array { return Diagonal(x, 0, -2, -1) }

// decompGaps is F with F[i,j] = 1/(d[j]-d[i]) off the diagonal and 0 on
// it, for d [..., k] (JAX's Fmat, built so that the diagonal holds no
// infinity).
func decompGaps(d *array.Array) *array.Array {
	diff := Sub(ExpandDims(d, -2), ExpandDims(d, -1))
	eye := decompEye(diff)
	return Sub(Reciprocal(Add(diff, eye)), eye)
}

// decompSolveRight returns x·t⁻¹ for triangular t (upper or lower).
func decompSolveRight(x, t *array.Array, upper bool) *array.Array {
	return mT(LinalgSolveTriangular(mT(t), mT(x), !upper, false))
}

// decompVmap moves the batch axis of a primitive's one input to the front
// and runs f on it; every output is batched on axis 0.
func decompVmap(in []*array.Array, axes []int, f func(x *array.Array) []*array.Array) ([]*array.Array, []int) {
	outs := f(batchFront(in[0], axes[0]))
	return outs, make([]int, len(outs))
}

// decompZeroCot reports whether c is the zero cotangent graph.VJP gives
// an output that nothing used: a pending ZerosLike or Zeros.
func decompZeroCot(c *array.Array) bool {
	switch p := c.Primitive().(type) {
	case *fullLikePrim:
		return p.Value == 0
	case *fullPrim:
		return p.Value == 0
	}
	return false
}

// ---- Cholesky ----

// choleskyPrim factors symmetric positive definite matrices.
type choleskyPrim struct{ Upper bool }

func (p *choleskyPrim) Name() string { return "LinalgCholesky" }
func (p *choleskyPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *choleskyPrim) evalCPU(in, out []*array.Array) error { return evalHostCPU(p, in, out) }
func (p *choleskyPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return evalHostGPU(p, s, in, out)
}
func (p *choleskyPrim) host(alloc outAlloc, in, out []*array.Array) error {
	o, err := alloc(out[0])
	if err != nil {
		return err
	}
	return cpu.Cholesky(o, bufOf(in[0]), p.Upper)
}
func (p *choleskyPrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// OutputShapes keeps the shape, which must be a stack of square matrices.
func (p *choleskyPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	return [][]int{in[0].Shape()}, array.Try(func() { matrixArg("ops.LinalgCholesky", "a", in[0], true) })
}

// lower is the lower factor L (a = L·Lᵀ) of the output.
func (p *choleskyPrim) lower(out *array.Array) *array.Array {
	if p.Upper {
		return mT(out)
	}
	return out
}

// choleskyPhi keeps the strict lower triangle of x and half its
// diagonal: the mean of tril(x) and tril(x, -1).
func choleskyPhi(x *array.Array) *array.Array {
	return MulScalar(Add(Tril(x, 0), Tril(x, -1)), 0.5)
}

// JVP is JAX's cholesky_jvp_rule: dL = L·Φ(L⁻¹·dΣ·L⁻ᵀ) for the symmetric
// change dΣ of the triangle read.
func (p *choleskyPrim) JVP(_, out, tans []*array.Array, _ []int) []*array.Array {
	l := p.lower(out[0])
	s := decompSymTangent(tans[0], p.Upper)
	x := LinalgSolveTriangular(l, mT(LinalgSolveTriangular(l, s, false, false)), false, false)
	dl := MatMul(l, choleskyPhi(x))
	if p.Upper {
		dl = mT(dl)
	}
	return []*array.Array{dl}
}

// VJP transposes the JVP: Σ̄ = L⁻ᵀ·Φ(Lᵀ·L̄)·L⁻¹, taken back to the
// triangle read.
func (p *choleskyPrim) VJP(_, out, cots []*array.Array, _ []int) []*array.Array {
	l, g := p.lower(out[0]), cots[0]
	if p.Upper {
		g = mT(g)
	}
	z := LinalgSolveTriangular(mT(l), choleskyPhi(MatMul(mT(l), g)), true, false)
	sigma := decompSolveRight(z, l, false)
	return []*array.Array{decompSymCotangent(sigma, p.Upper)}
}

// Vmap factors the batch as one more leading axis.
func (p *choleskyPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	return decompVmap(in, axes, func(x *array.Array) []*array.Array {
		return []*array.Array{LinalgCholesky(x, p.Upper)}
	})
}

// LinalgCholesky returns the Cholesky factor of every symmetric positive
// definite matrix of a ([..., n, n]): lower triangular L with a = L·Lᵀ,
// or, when upper, upper triangular U with a = Uᵀ·U (LAPACK's potrf). It
// reads only that triangle of a; the other triangle of the result is
// zero. It is the primitive behind linalg.Cholesky, which most programs
// call. A matrix that is not positive definite is an error from Eval
// wrapping cpu.ErrNotPositiveDefinite; a NaN or an infinity in the
// triangle read gives NaN. Integers and bool compute in float32.
func LinalgCholesky(a *array.Array, upper bool) *array.Array {
	x, _, _ := decompArg("ops.LinalgCholesky", a, true)
	return node(x.Shape(), x.DType(), &choleskyPrim{Upper: upper}, x)
}

// ---- CholeskyInv ----

// choleskyInvPrim inverts a matrix from its Cholesky factor.
type choleskyInvPrim struct{ Upper bool }

func (p *choleskyInvPrim) Name() string { return "LinalgCholeskyInv" }
func (p *choleskyInvPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *choleskyInvPrim) evalCPU(in, out []*array.Array) error { return evalHostCPU(p, in, out) }
func (p *choleskyInvPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return evalHostGPU(p, s, in, out)
}
func (p *choleskyInvPrim) host(alloc outAlloc, in, out []*array.Array) error {
	o, err := alloc(out[0])
	if err != nil {
		return err
	}
	return cpu.CholeskyInv(o, bufOf(in[0]), p.Upper)
}
func (p *choleskyInvPrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// OutputShapes keeps the shape, which must be a stack of square matrices.
func (p *choleskyInvPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	return [][]int{in[0].Shape()}, array.Try(func() { matrixArg("ops.LinalgCholeskyInv", "l", in[0], true) })
}

// triangle keeps the part of the factor that is read.
func (p *choleskyInvPrim) triangle(x *array.Array) *array.Array {
	if p.Upper {
		return Triu(x, 0)
	}
	return Tril(x, 0)
}

// JVP is -Y·dA·Y for Y = A⁻¹ and dA = dL·Lᵀ + L·dLᵀ (dUᵀ·U + Uᵀ·dU).
func (p *choleskyInvPrim) JVP(in, out, tans []*array.Array, _ []int) []*array.Array {
	l, dl := p.triangle(in[0]), p.triangle(tans[0])
	da := MatMul(dl, mT(l))
	if p.Upper {
		da = MatMul(mT(dl), l)
	}
	da = Add(da, mT(da))
	y := out[0]
	return []*array.Array{Neg(MatMul(MatMul(y, da), y))}
}

// VJP: Ā = -Y·Ȳ·Y, then L̄ = (Ā + Āᵀ)·L (Ū = U·(Ā + Āᵀ)) on the
// triangle read.
func (p *choleskyInvPrim) VJP(in, out, cots []*array.Array, _ []int) []*array.Array {
	l, y := p.triangle(in[0]), out[0]
	ga := Neg(MatMul(MatMul(y, cots[0]), y))
	ga = Add(ga, mT(ga))
	if p.Upper {
		return []*array.Array{p.triangle(MatMul(l, ga))}
	}
	return []*array.Array{p.triangle(MatMul(ga, l))}
}

// Vmap inverts the batch as one more leading axis.
func (p *choleskyInvPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	return decompVmap(in, axes, func(x *array.Array) []*array.Array {
		return []*array.Array{LinalgCholeskyInv(x, p.Upper)}
	})
}

// LinalgCholeskyInv returns the inverse of the matrix whose Cholesky
// factor is each matrix of l ([..., n, n]): (L·Lᵀ)⁻¹, or (Uᵀ·U)⁻¹ when
// upper (LAPACK's potri; MLX's cholesky_inv). It reads only that triangle
// of l. It is the primitive behind linalg.CholeskyInv, which most
// programs call. A zero on the factor's diagonal is an error from Eval
// wrapping cpu.ErrSingular; a NaN or an infinity gives NaN.
func LinalgCholeskyInv(l *array.Array, upper bool) *array.Array {
	x, _, _ := decompArg("ops.LinalgCholeskyInv", l, true)
	return node(x.Shape(), x.DType(), &choleskyInvPrim{Upper: upper}, x)
}

// ---- QR ----

// qrPrim factors a = q·r, reduced or complete.
type qrPrim struct{ Complete bool }

func (p *qrPrim) Name() string { return "LinalgQR" }
func (p *qrPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *qrPrim) evalCPU(in, out []*array.Array) error { return evalHostCPU(p, in, out) }
func (p *qrPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return evalHostGPU(p, s, in, out)
}
func (p *qrPrim) host(alloc outAlloc, in, out []*array.Array) error {
	o, err := allocAll(alloc, out)
	if err != nil {
		return err
	}
	return cpu.QR(o[0], o[1], bufOf(in[0]))
}
func (p *qrPrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// OutputShapes is q [..., m, c] and r [..., c, n], c = min(m, n) or m.
func (p *qrPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	var shapes [][]int
	err := array.Try(func() {
		m, n := matrixArg("ops.LinalgQR", "a", in[0], false)
		shapes = qrShapes(in[0].Shape(), m, n, p.Complete)
	})
	return shapes, err
}

func qrShapes(shape []int, m, n int, complete bool) [][]int {
	c := min(m, n)
	if complete {
		c = m
	}
	return [][]int{decompShape(shape, 2, m, c), decompShape(shape, 2, c, n)}
}

// checkDerivative panics unless the derivative of this QR is defined:
// the last m-n columns of a complete Q of a tall matrix are any basis of
// the orthogonal complement, with no derivative.
func (p *qrPrim) checkDerivative(a *array.Array) {
	if m, n := a.Dim(-2), a.Dim(-1); p.Complete && m > n {
		array.Panicf("linalg.QRComplete", "no derivative for a of shape %v: the last %d columns of the complete Q of a matrix with more rows than columns are not unique; differentiate linalg.QR (the reduced form)", a.Shape(), m-n)
	}
}

// JVP is JAX's qr_jvp_rule for m ≥ n. For m < n, a = [X Y] with X square
// gives q·[Rx Ry] = [X Y]: X's rule gives dQ and dRx, and dRy = dQᵀ·Y +
// Qᵀ·dY.
func (p *qrPrim) JVP(in, out, tans []*array.Array, _ []int) []*array.Array {
	p.checkDerivative(in[0])
	a, q, r, da := in[0], out[0], out[1], tans[0]
	m, n := a.Dim(-2), a.Dim(-1)
	if m >= n {
		dq, dr := qrTangent(q, r, da)
		return []*array.Array{dq, dr}
	}
	rx := SliceAxis(r, -1, R(0, m))
	dq, drx := qrTangent(q, rx, SliceAxis(da, -1, R(0, m)))
	y, dy := SliceAxis(a, -1, R(m, n)), SliceAxis(da, -1, R(m, n))
	dry := Add(MatMul(mT(dq), y), MatMul(mT(q), dy))
	return []*array.Array{dq, Concatenate([]*array.Array{drx, dry}, -1)}
}

// qrTangent is the rule for q [m, n], r [n, n] with m ≥ n: B = dA·R⁻¹,
// C = Qᵀ·B, Ω = tril(C, -1) - tril(C, -1)ᵀ; dQ = Q·(Ω - C) + B and
// dR = (C - Ω)·R.
func qrTangent(q, r, da *array.Array) (dq, dr *array.Array) {
	b := decompSolveRight(da, r, true)
	c := MatMul(mT(q), b)
	low := Tril(c, -1)
	omega := Sub(low, mT(low))
	dq = Add(MatMul(q, Sub(omega, c)), b)
	dr = MatMul(Sub(c, omega), r)
	return dq, dr
}

// qrCotangent is qrTangent's transpose: with M = Qᵀ·Q̄ - R̄·Rᵀ,
// Ā = (Q̄ + Q·(tril(M - Mᵀ, -1) - M))·R⁻ᵀ.
func qrCotangent(q, r, gq, gr *array.Array) *array.Array {
	mm := Sub(MatMul(mT(q), gq), MatMul(gr, mT(r)))
	gc := Sub(Tril(Sub(mm, mT(mm)), -1), mm)
	gb := Add(gq, MatMul(q, gc))
	return mT(LinalgSolveTriangular(r, mT(gb), true, false))
}

// VJP transposes the JVP.
func (p *qrPrim) VJP(in, out, cots []*array.Array, _ []int) []*array.Array {
	a, q, r, gq, gr := in[0], out[0], out[1], cots[0], cots[1]
	m, n := a.Dim(-2), a.Dim(-1)
	if p.Complete && m > n {
		if !decompZeroCot(gq) {
			p.checkDerivative(a)
		}
		// r's zero rows and q's free columns carry nothing
		q, r = SliceAxis(q, -1, R(0, n)), SliceAxis(r, -2, R(0, n))
		gq, gr = ZerosLike(q), SliceAxis(gr, -2, R(0, n))
	}
	if m >= n {
		return []*array.Array{qrCotangent(q, r, gq, gr)}
	}
	rx, grx, gry := SliceAxis(r, -1, R(0, m)), SliceAxis(gr, -1, R(0, m)), SliceAxis(gr, -1, R(m, n))
	y := SliceAxis(a, -1, R(m, n))
	gx := qrCotangent(q, rx, Add(gq, MatMul(y, mT(gry))), grx)
	return []*array.Array{Concatenate([]*array.Array{gx, MatMul(q, gry)}, -1)}
}

// Vmap factors the batch as one more leading axis.
func (p *qrPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	return decompVmap(in, axes, func(x *array.Array) []*array.Array {
		q, r := LinalgQR(x, p.Complete)
		return []*array.Array{q, r}
	})
}

// LinalgQR returns the QR decomposition a = q·r of every matrix of a
// ([..., m, n]) by Householder reflections (LAPACK's geqrf and orgqr):
// q has orthonormal columns and r is upper triangular. With k = min(m,
// n), the reduced form (numpy's mode="reduced", MLX's qr) has q
// [..., m, k] and r [..., k, n]; the complete form (numpy's
// mode="complete") has q square, [..., m, m], and r [..., m, n]. Signs
// are LAPACK's (r's diagonal may be negative), as numpy's. It is the
// primitive behind linalg.QR and linalg.QRComplete, which most programs
// call. A NaN or an infinity gives NaN. Integers and bool compute in
// float32.
//
// Its derivatives are JAX's, extended to m < n; the complete form of a
// matrix with more rows than columns has none (a VJP that needs one
// panics with *array.Error).
func LinalgQR(a *array.Array, complete bool) (q, r *array.Array) {
	x, m, n := decompArg("ops.LinalgQR", a, false)
	shapes := qrShapes(x.Shape(), m, n, complete)
	for _, s := range shapes {
		checkedBytes("ops.LinalgQR", s, x.DType())
	}
	outs := array.NewMulti(stream(), shapes, []array.DType{x.DType(), x.DType()}, &qrPrim{Complete: complete}, x)
	return outs[0], outs[1]
}

// ---- SVD ----

// svdPrim computes the singular value decomposition, full or thin.
type svdPrim struct{ Full bool }

func (p *svdPrim) Name() string { return "LinalgSVD" }
func (p *svdPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *svdPrim) evalCPU(in, out []*array.Array) error { return evalHostCPU(p, in, out) }
func (p *svdPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return evalHostGPU(p, s, in, out)
}
func (p *svdPrim) host(alloc outAlloc, in, out []*array.Array) error {
	o, err := allocAll(alloc, out)
	if err != nil {
		return err
	}
	return cpu.SVD(o[0], o[1], o[2], bufOf(in[0]))
}
func (p *svdPrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// OutputShapes is u, s and vt.
func (p *svdPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	var shapes [][]int
	err := array.Try(func() {
		m, n := matrixArg("ops.LinalgSVD", "a", in[0], false)
		shapes = svdShapes(in[0].Shape(), m, n, p.Full)
	})
	return shapes, err
}

func svdShapes(shape []int, m, n int, full bool) [][]int {
	k := min(m, n)
	uc, vr := k, k
	if full {
		uc, vr = m, n
	}
	return [][]int{decompShape(shape, 2, m, uc), decompShape(shape, 2, k), decompShape(shape, 2, vr, n)}
}

// free reports whether the full form has singular vectors beyond the
// k = min(m, n) the values determine, which have no derivative.
func (p *svdPrim) free(a *array.Array) bool { return p.Full && a.Dim(-2) != a.Dim(-1) }

func svdNoDerivative(a *array.Array) {
	array.Panicf("linalg.SVD", "no derivative for a of shape %v: the full U and Vᵀ of a non-square matrix hold %d singular vectors beyond min(m, n) that are not unique; differentiate linalg.SVDThin or linalg.SVDVals", a.Shape(), max(a.Dim(-2), a.Dim(-1))-min(a.Dim(-2), a.Dim(-1)))
}

// thin returns the outputs cut to the thin form.
func (p *svdPrim) thin(a *array.Array, u, vt *array.Array) (*array.Array, *array.Array) {
	k := min(a.Dim(-2), a.Dim(-1))
	return SliceAxis(u, -1, R(0, k)), SliceAxis(vt, -2, R(0, k))
}

// JVP is JAX's svd_jvp_rule for real matrices.
func (p *svdPrim) JVP(in, out, tans []*array.Array, _ []int) []*array.Array {
	if p.free(in[0]) {
		svdNoDerivative(in[0])
	}
	u, s, vt, da := out[0], out[1], out[2], tans[0]
	m, n := in[0].Dim(-2), in[0].Dim(-1)
	v := mT(vt)
	ds := MatMul(MatMul(mT(u), da), v)
	f := svdGaps(s)
	sRow := ExpandDims(s, -2)
	sCol := ExpandDims(s, -1)
	dss, sds := Mul(ds, sRow), Mul(sCol, ds)
	du := MatMul(u, Mul(f, Add(dss, mT(dss))))
	dv := MatMul(v, Mul(f, Add(sds, mT(sds))))
	sInv := svdInv(s)
	if m > n {
		dav := MatMul(da, v)
		du = Add(du, decompScaleCols(Sub(dav, MatMul(u, MatMul(mT(u), dav))), sInv))
	}
	if n > m {
		dau := MatMul(mT(da), u)
		dv = Add(dv, decompScaleCols(Sub(dau, MatMul(v, MatMul(vt, dau))), sInv))
	}
	return []*array.Array{du, decompDiag(ds), mT(dv)}
}

// svdGaps is F with F[i,j] = 1/(s[j]² - s[i]²) off the diagonal, 0 on it.
func svdGaps(s *array.Array) *array.Array { return decompGaps(Square(s)) }

// svdInv is 1/s with 0 for a zero singular value (JAX's s_inv).
func svdInv(s *array.Array) *array.Array {
	zero := AsType(EqualScalar(s, 0), s.DType())
	return Sub(Reciprocal(Add(s, zero)), zero)
}

// VJP transposes the JVP: with J = F∘(Uᵀ·Ū) and K = F∘(Vᵀ·V̄),
// Ā = U·(diag(s̄) + (J + Jᵀ)·diag(s) + diag(s)·(K + Kᵀ))·Vᵀ, plus
// (I - U·Uᵀ)·Ū·diag(1/s)·Vᵀ when m > n or U·diag(1/s)·V̄ᵀ·(I - V·Vᵀ)
// when n > m.
func (p *svdPrim) VJP(in, out, cots []*array.Array, _ []int) []*array.Array {
	a := in[0]
	u, s, vt := out[0], out[1], out[2]
	gu, gs, gvt := cots[0], cots[1], cots[2]
	if p.free(a) {
		if !decompZeroCot(gu) || !decompZeroCot(gvt) {
			svdNoDerivative(a)
		}
		u, vt = p.thin(a, u, vt)
		gu, gvt = ZerosLike(u), ZerosLike(vt)
	}
	m, n := a.Dim(-2), a.Dim(-1)
	v, gv := mT(vt), mT(gvt)
	f := svdGaps(s)
	j := Mul(f, MatMul(mT(u), gu))
	k := Mul(f, MatMul(mT(v), gv))
	sRow, sCol := ExpandDims(s, -2), ExpandDims(s, -1)
	core := Add(Add(Mul(Add(j, mT(j)), sRow), Mul(sCol, Add(k, mT(k)))), decompDiagMatrix(gs, f))
	ga := MatMul(MatMul(u, core), vt)
	sInv := svdInv(s)
	if m > n {
		perp := Sub(gu, MatMul(u, MatMul(mT(u), gu)))
		ga = Add(ga, MatMul(decompScaleCols(perp, sInv), vt))
	}
	if n > m {
		perp := Sub(gv, MatMul(v, MatMul(vt, gv)))
		ga = Add(ga, MatMul(decompScaleCols(u, sInv), mT(perp)))
	}
	return []*array.Array{ga}
}

// Vmap decomposes the batch as one more leading axis.
func (p *svdPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	return decompVmap(in, axes, func(x *array.Array) []*array.Array {
		u, s, vt := LinalgSVD(x, p.Full)
		return []*array.Array{u, s, vt}
	})
}

// LinalgSVD returns the singular value decomposition a = u·diag(s)·vt of
// every matrix of a ([..., m, n]) (LAPACK's gesvd): s [..., k], k =
// min(m, n), holds the singular values in descending order; with full
// (numpy's default full_matrices=True, MLX's svd) u is [..., m, m] and vt
// [..., n, n], otherwise (the thin form) u is [..., m, k] and vt
// [..., k, n]. Signs are LAPACK's. It is the primitive behind linalg.SVD
// and linalg.SVDThin, which most programs call. A matrix with a NaN or an
// infinity, or on which the iteration does not converge, is an error from
// Eval wrapping cpu.ErrNoConvergence (numpy raises "SVD did not
// converge"). Integers and bool compute in float32.
//
// Its derivatives are JAX's: the singular vectors' need distinct nonzero
// singular values. The full form of a non-square matrix has derivatives
// only through s (a VJP that needs more panics with *array.Error, as does
// any JVP of it).
func LinalgSVD(a *array.Array, full bool) (u, s, vt *array.Array) {
	x, m, n := decompArg("ops.LinalgSVD", a, false)
	shapes := svdShapes(x.Shape(), m, n, full)
	for _, sh := range shapes {
		checkedBytes("ops.LinalgSVD", sh, x.DType())
	}
	dt := x.DType()
	outs := array.NewMulti(stream(), shapes, []array.DType{dt, dt, dt}, &svdPrim{Full: full}, x)
	return outs[0], outs[1], outs[2]
}

// svdValsPrim computes singular values alone.
type svdValsPrim struct{}

func (p *svdValsPrim) Name() string { return "LinalgSVDVals" }
func (p *svdValsPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *svdValsPrim) evalCPU(in, out []*array.Array) error { return evalHostCPU(p, in, out) }
func (p *svdValsPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return evalHostGPU(p, s, in, out)
}
func (p *svdValsPrim) host(alloc outAlloc, in, out []*array.Array) error {
	o, err := alloc(out[0])
	if err != nil {
		return err
	}
	return cpu.SVDVals(o, bufOf(in[0]))
}
func (p *svdValsPrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// OutputShapes is the batch with min(m, n) values.
func (p *svdValsPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	var shapes [][]int
	err := array.Try(func() {
		m, n := matrixArg("ops.LinalgSVDVals", "a", in[0], false)
		shapes = [][]int{decompShape(in[0].Shape(), 2, min(m, n))}
	})
	return shapes, err
}

// JVP is ds = diag(Uᵀ·dA·V), from the thin vectors.
func (p *svdValsPrim) JVP(in, _, tans []*array.Array, _ []int) []*array.Array {
	u, _, vt := LinalgSVD(in[0], false)
	return []*array.Array{decompDiag(MatMul(MatMul(mT(u), tans[0]), mT(vt)))}
}

// VJP is U·diag(s̄)·Vᵀ.
func (p *svdValsPrim) VJP(in, _, cots []*array.Array, _ []int) []*array.Array {
	u, _, vt := LinalgSVD(in[0], false)
	return []*array.Array{MatMul(decompScaleCols(u, cots[0]), vt)}
}

// Vmap decomposes the batch as one more leading axis.
func (p *svdValsPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	return decompVmap(in, axes, func(x *array.Array) []*array.Array { return []*array.Array{LinalgSVDVals(x)} })
}

// LinalgSVDVals returns the singular values of every matrix of a
// ([..., m, n]): [..., min(m, n)], descending (numpy's svd with
// compute_uv=False, MLX's svd with compute_uv=False). It is the primitive
// behind linalg.SVDVals, which most programs call. Errors as LinalgSVD.
// Its derivative is defined wherever the values are distinct.
func LinalgSVDVals(a *array.Array) *array.Array {
	x, m, n := decompArg("ops.LinalgSVDVals", a, false)
	return node(decompShape(x.Shape(), 2, min(m, n)), x.DType(), &svdValsPrim{}, x)
}

// ---- Eigh ----

// eighPrim solves the symmetric eigenproblem from one triangle.
type eighPrim struct{ Upper bool }

func (p *eighPrim) Name() string { return "LinalgEigh" }
func (p *eighPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *eighPrim) evalCPU(in, out []*array.Array) error { return evalHostCPU(p, in, out) }
func (p *eighPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return evalHostGPU(p, s, in, out)
}
func (p *eighPrim) host(alloc outAlloc, in, out []*array.Array) error {
	o, err := allocAll(alloc, out)
	if err != nil {
		return err
	}
	return cpu.Eigh(o[0], o[1], bufOf(in[0]), p.Upper)
}
func (p *eighPrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// OutputShapes is w [..., n] and v [..., n, n].
func (p *eighPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	var shapes [][]int
	err := array.Try(func() {
		_, n := matrixArg("ops.LinalgEigh", "a", in[0], true)
		shapes = [][]int{decompShape(in[0].Shape(), 2, n), in[0].Shape()}
	})
	return shapes, err
}

// JVP is JAX's eigh_jvp_rule: with P = Vᵀ·dΣ·V for the symmetric change
// dΣ of the triangle read, dw = diag(P) and dV = V·(F∘P).
func (p *eighPrim) JVP(_, out, tans []*array.Array, _ []int) []*array.Array {
	w, v := out[0], out[1]
	pm := MatMul(MatMul(mT(v), decompSymTangent(tans[0], p.Upper)), v)
	return []*array.Array{decompDiag(pm), MatMul(v, Mul(decompGaps(w), pm))}
}

// VJP transposes the JVP: Σ̄ = V·(diag(w̄) + F∘(Vᵀ·V̄))·Vᵀ, taken back to
// the triangle read.
func (p *eighPrim) VJP(_, out, cots []*array.Array, _ []int) []*array.Array {
	w, v := out[0], out[1]
	f := decompGaps(w)
	inner := Add(Mul(f, MatMul(mT(v), cots[1])), decompDiagMatrix(cots[0], f))
	return []*array.Array{decompSymCotangent(MatMul(MatMul(v, inner), mT(v)), p.Upper)}
}

// Vmap solves the batch as one more leading axis.
func (p *eighPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	return decompVmap(in, axes, func(x *array.Array) []*array.Array {
		w, v := LinalgEigh(x, p.Upper)
		return []*array.Array{w, v}
	})
}

// LinalgEigh returns the eigenvalues w ([..., n], ascending) and
// eigenvectors (the columns of v, [..., n, n], orthonormal) of every
// symmetric matrix of a ([..., n, n]) (LAPACK's syev), reading only its
// lower triangle, or the upper when upper (numpy's and MLX's UPLO). Signs
// of the vectors are LAPACK's. It is the primitive behind linalg.Eigh,
// which most programs call. A NaN or an infinity in the triangle read
// gives NaN, as numpy; an iteration that does not converge is an error
// from Eval wrapping cpu.ErrNoConvergence. Integers and bool compute in
// float32. The eigenvectors' derivatives need distinct eigenvalues.
func LinalgEigh(a *array.Array, upper bool) (w, v *array.Array) {
	x, _, n := decompArg("ops.LinalgEigh", a, true)
	dt := x.DType()
	outs := array.NewMulti(stream(), [][]int{decompShape(x.Shape(), 2, n), x.Shape()}, []array.DType{dt, dt}, &eighPrim{Upper: upper}, x)
	return outs[0], outs[1]
}

// eigvalshPrim computes symmetric eigenvalues alone.
type eigvalshPrim struct{ Upper bool }

func (p *eigvalshPrim) Name() string { return "LinalgEigvalsh" }
func (p *eigvalshPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *eigvalshPrim) evalCPU(in, out []*array.Array) error { return evalHostCPU(p, in, out) }
func (p *eigvalshPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return evalHostGPU(p, s, in, out)
}
func (p *eigvalshPrim) host(alloc outAlloc, in, out []*array.Array) error {
	o, err := alloc(out[0])
	if err != nil {
		return err
	}
	return cpu.Eigvalsh(o, bufOf(in[0]), p.Upper)
}
func (p *eigvalshPrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// OutputShapes is the batch with n values.
func (p *eigvalshPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	var shapes [][]int
	err := array.Try(func() {
		_, n := matrixArg("ops.LinalgEigvalsh", "a", in[0], true)
		shapes = [][]int{decompShape(in[0].Shape(), 2, n)}
	})
	return shapes, err
}

// JVP is dw = diag(Vᵀ·dΣ·V).
func (p *eigvalshPrim) JVP(in, _, tans []*array.Array, _ []int) []*array.Array {
	_, v := LinalgEigh(in[0], p.Upper)
	return []*array.Array{decompDiag(MatMul(MatMul(mT(v), decompSymTangent(tans[0], p.Upper)), v))}
}

// VJP is V·diag(w̄)·Vᵀ on the triangle read.
func (p *eigvalshPrim) VJP(in, _, cots []*array.Array, _ []int) []*array.Array {
	_, v := LinalgEigh(in[0], p.Upper)
	return []*array.Array{decompSymCotangent(MatMul(decompScaleCols(v, cots[0]), mT(v)), p.Upper)}
}

// Vmap solves the batch as one more leading axis.
func (p *eigvalshPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	return decompVmap(in, axes, func(x *array.Array) []*array.Array {
		return []*array.Array{LinalgEigvalsh(x, p.Upper)}
	})
}

// LinalgEigvalsh returns the eigenvalues of every symmetric matrix of a
// ([..., n], ascending), reading its lower triangle, or the upper when
// upper: the primitive behind linalg.Eigvalsh, which most programs call.
// NaNs and errors as LinalgEigh; its derivative is defined wherever the
// eigenvalues are distinct, and is the limit where they repeat.
func LinalgEigvalsh(a *array.Array, upper bool) *array.Array {
	x, _, n := decompArg("ops.LinalgEigvalsh", a, true)
	return node(decompShape(x.Shape(), 2, n), x.DType(), &eigvalshPrim{Upper: upper}, x)
}

// ---- Eig ----

// eigPrim solves the general eigenproblem; Vectors says whether it
// returns the eigenvectors too.
type eigPrim struct{ Vectors bool }

func (p *eigPrim) Name() string {
	if p.Vectors {
		return "LinalgEig"
	}
	return "LinalgEigvals"
}
func (p *eigPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *eigPrim) evalCPU(in, out []*array.Array) error { return evalHostCPU(p, in, out) }
func (p *eigPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return evalHostGPU(p, s, in, out)
}
func (p *eigPrim) host(alloc outAlloc, in, out []*array.Array) error {
	o, err := allocAll(alloc, out)
	if err != nil {
		return err
	}
	if p.Vectors {
		return cpu.Eig(o[0], o[1], bufOf(in[0]))
	}
	return cpu.Eigvals(o[0], bufOf(in[0]))
}
func (p *eigPrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// OutputShapes is w [..., n] and, with the vectors, v [..., n, n].
func (p *eigPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	var shapes [][]int
	err := array.Try(func() {
		_, n := matrixArg("ops."+p.Name(), "a", in[0], true)
		shapes = p.shapes(in[0].Shape(), n)
	})
	return shapes, err
}

func (p *eigPrim) shapes(shape []int, n int) [][]int {
	if p.Vectors {
		return [][]int{decompShape(shape, 2, n), slices.Clone(shape)}
	}
	return [][]int{decompShape(shape, 2, n)}
}

// noDerivative panics: the general eigenproblem's derivatives (complex,
// through the left eigenvectors) are not implemented.
func (p *eigPrim) noDerivative() {
	op := "linalg.Eig"
	if !p.Vectors {
		op = "linalg.Eigvals"
	}
	array.Panicf(op, "has no derivative in fathom (the general eigenproblem's is not implemented); for a symmetric matrix use linalg.Eigh")
}

// JVP panics with *array.Error: there is no derivative.
func (p *eigPrim) JVP(_, _, _ []*array.Array, _ []int) []*array.Array {
	p.noDerivative()
	return nil
}

// VJP panics with *array.Error: there is no derivative.
func (p *eigPrim) VJP(_, _, _ []*array.Array, _ []int) []*array.Array {
	p.noDerivative()
	return nil
}

// Vmap solves the batch as one more leading axis.
func (p *eigPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	return decompVmap(in, axes, func(x *array.Array) []*array.Array { return eigNode(x, p.Vectors) })
}

func eigNode(x *array.Array, vectors bool) []*array.Array {
	p := &eigPrim{Vectors: vectors}
	shapes := p.shapes(x.Shape(), x.Dim(-1))
	dts := []array.DType{array.Complex64, array.Complex64}[:len(shapes)]
	return array.NewMulti(stream(), shapes, dts, p, x)
}

// LinalgEig returns the eigenvalues w ([..., n]) and right eigenvectors
// (the columns of v, [..., n, n], each of unit norm with its largest
// component real) of every square matrix of a (LAPACK's geev), both
// complex64 whatever a's dtype (as MLX's eig; fathom has no complex128,
// so float64 input loses precision there). The order is LAPACK's, not
// sorted: a complex conjugate pair is adjacent, the one with the positive
// imaginary part first. It is the primitive behind linalg.Eig, which
// most programs call. A NaN or an infinity is an error from Eval
// wrapping cpu.ErrNotFinite (numpy raises); an iteration that does not
// converge one wrapping cpu.ErrNoConvergence. It has no derivative: a
// VJP or JVP through it panics with *array.Error.
func LinalgEig(a *array.Array) (w, v *array.Array) {
	x, _, _ := decompArg("ops.LinalgEig", a, true)
	checkedBytes("ops.LinalgEig", x.Shape(), array.Complex64)
	outs := eigNode(x, true)
	return outs[0], outs[1]
}

// LinalgEigvals returns the eigenvalues of every square matrix of a
// ([..., n], complex64), as LinalgEig without the vectors: the primitive
// behind linalg.Eigvals, which most programs call.
func LinalgEigvals(a *array.Array) *array.Array {
	x, _, _ := decompArg("ops.LinalgEigvals", a, true)
	return eigNode(x, false)[0]
}
