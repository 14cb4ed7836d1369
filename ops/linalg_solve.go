package ops

import (
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
)

// The solvers and the LU factorisation: the primitives behind package
// linalg's Inv, Solve, SolveTriangular, LU, LUFactor, LUSolve, Det and
// SlogDet. Most programs call package linalg. They run gonum's LAPACK on
// the host, on the GPU stream too (onHost), as MLX runs its linear
// algebra. The last two axes are the matrix; the leading ones are a batch
// that broadcasts between operands.

// linalgDType is the dtype op computes operands of dtypes dts in: their
// promotion when it is float32 or float64, float32 for integers and bool
// (as MLX converts them); float16, bfloat16 and complex64 are refused,
// since gonum's LAPACK has no kernels for them.
func linalgDType(op string, dts ...array.DType) array.DType {
	out := dts[0]
	for _, dt := range dts[1:] {
		out = array.Promote(out, dt)
	}
	switch {
	case out == array.Float32 || out == array.Float64:
		return out
	case !out.IsInexact():
		return array.Float32
	}
	array.Panicf(op, "dtype %v is not supported (float32 and float64 are; integers and bool compute in float32)", out)
	return 0
}

// matrixArg checks that a is a stack of matrices, square if asked, and
// returns its last two axes.
func matrixArg(op, what string, a *array.Array, square bool) (m, n int) {
	if a.Ndim() < 2 {
		array.Panicf(op, "%s of shape %v is not a matrix (it needs at least 2 dimensions)", what, a.Shape())
	}
	s := a.Shape()
	m, n = s[len(s)-2], s[len(s)-1]
	if square && m != n {
		array.Panicf(op, "%s of shape %v is not square", what, s)
	}
	return m, n
}

// rhsArg checks b, the right-hand side of a system whose matrices a have
// shape [..., n, n], and returns b as a stack of matrices, the batch
// shape of the result and whether b was a vector. Only a 1-D b is a
// vector (numpy 2's rule); any other b is a stack of n×k matrices. numpy
// 1 also read a b of shape [..., n] as vectors when a had one more axis,
// which let one shape mean two things.
func rhsArg(op string, a, b *array.Array) (bm *array.Array, batch []int, vector bool) {
	as := a.Shape()
	n := as[len(as)-1]
	if b.Ndim() == 1 {
		if b.Dim(0) != n {
			array.Panicf(op, "b of shape %v does not match a of shape %v: b needs %d elements", b.Shape(), as, n)
		}
		return Reshape(b, n, 1), slices.Clone(as[:len(as)-2]), true
	}
	if b.Ndim() < 1 {
		array.Panicf(op, "b is 0-d: it must be a vector of %d elements or a stack of matrices with %d rows", n, n)
	}
	bs := b.Shape()
	if bs[len(bs)-2] != n {
		array.Panicf(op, "b of shape %v does not match a of shape %v: b needs %d rows (a 1-D b is a vector; any other b is a stack of matrices)", bs, as, n)
	}
	batch = BroadcastShapes(op, as[:len(as)-2], bs[:len(bs)-2])
	return b, batch, false
}

// mT swaps the last two axes: the transpose of every matrix.
func mT(a *array.Array) *array.Array { return SwapAxes(a, -1, -2) }

// withRows returns batch + [r, c].
func withRows(batch []int, r, c int) []int {
	return append(slices.Clone(batch), r, c)
}

// allocAll gives every output its memory.
func allocAll(alloc outAlloc, out []*array.Array) ([]cpu.Buf, error) {
	bufs := make([]cpu.Buf, len(out))
	for i, o := range out {
		b, err := alloc(o)
		if err != nil {
			return nil, err
		}
		bufs[i] = b
	}
	return bufs, nil
}

// batchOf is a's shape without its last inner axes.
func batchOf(a *array.Array, inner int) []int { return a.Shape()[:a.Ndim()-inner] }

// ---- Inv ----

// invPrim inverts every matrix of a stack.
type invPrim struct{}

func (p *invPrim) Name() string { return "LinalgInv" }
func (p *invPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *invPrim) evalCPU(in, out []*array.Array) error { return evalHostCPU(p, in, out) }
func (p *invPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return evalHostGPU(p, s, in, out)
}
func (p *invPrim) host(alloc outAlloc, in, out []*array.Array) error {
	o, err := alloc(out[0])
	if err != nil {
		return err
	}
	return cpu.Inv(o, bufOf(in[0]))
}
func (p *invPrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// OutputShapes keeps the shape, which must be a stack of square matrices.
func (p *invPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	return [][]int{in[0].Shape()}, array.Try(func() { matrixArg("ops.LinalgInv", "a", in[0], true) })
}

// VJP is -Yᵀ·Ḡ·Yᵀ for Y = A⁻¹ (JAX's rule through dY = -Y·dA·Y).
func (p *invPrim) VJP(_, out, cots []*array.Array, _ []int) []*array.Array {
	yt := mT(out[0])
	return []*array.Array{Neg(MatMul(MatMul(yt, cots[0]), yt))}
}

// JVP is -Y·dA·Y.
func (p *invPrim) JVP(_, out, tans []*array.Array, _ []int) []*array.Array {
	return []*array.Array{Neg(MatMul(MatMul(out[0], tans[0]), out[0]))}
}

// Vmap inverts the batch as more leading axes.
func (p *invPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	return []*array.Array{LinalgInv(batchFront(in[0], axes[0]))}, []int{0}
}

// LinalgInv returns the inverse of every square matrix of a ([..., n, n])
// (LAPACK's getrf, then getrs on the identity, as numpy's inv): the
// primitive behind linalg.Inv, which most programs call. A singular
// matrix (an exactly zero pivot) is an error from Eval wrapping
// cpu.ErrSingular; integers and bool compute in float32.
func LinalgInv(a *array.Array) *array.Array {
	const op = "ops.LinalgInv"
	requireNonNil(op, a)
	matrixArg(op, "a", a, true)
	dt := linalgDType(op, a.DType())
	return node(a.Shape(), dt, &invPrim{}, AsType(a, dt))
}

// ---- Solve ----

// solvePrim solves a·x = b for stacks of square a and matrices b, their
// batch axes broadcasting.
type solvePrim struct{}

func (p *solvePrim) Name() string { return "LinalgSolve" }
func (p *solvePrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *solvePrim) evalCPU(in, out []*array.Array) error { return evalHostCPU(p, in, out) }
func (p *solvePrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return evalHostGPU(p, s, in, out)
}
func (p *solvePrim) host(alloc outAlloc, in, out []*array.Array) error {
	o, err := alloc(out[0])
	if err != nil {
		return err
	}
	a, b := systemBufs(in, out[0])
	return cpu.Solve(o, a, b)
}
func (p *solvePrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// systemBufs returns the views of a system's a and b broadcast to the
// batch of its solution x.
func systemBufs(in []*array.Array, x *array.Array) (a, b cpu.Buf) {
	batch := batchOf(x, 2)
	n := in[0].Dim(-1)
	return bcastBufOf(in[0], withRows(batch, n, n)), bcastBufOf(in[1], withRows(batch, n, x.Dim(-1)))
}

// OutputShapes is b's matrices over the broadcast batch.
func (p *solvePrim) OutputShapes(in []*array.Array) ([][]int, error) {
	return systemShape("ops.LinalgSolve", in)
}

func systemShape(op string, in []*array.Array) ([][]int, error) {
	var shape []int
	err := array.Try(func() {
		matrixArg(op, "a", in[0], true)
		matrixArg(op, "b", in[1], false)
		_, batch, _ := rhsArg(op, in[0], in[1])
		shape = withRows(batch, in[1].Dim(-2), in[1].Dim(-1))
	})
	return [][]int{shape}, err
}

// VJP is B̄ = A⁻ᵀ·Ḡ and Ā = -B̄·Xᵀ, each summed over the batch axes its
// operand was broadcast along.
func (p *solvePrim) VJP(in, out, cots []*array.Array, argnums []int) []*array.Array {
	gb := solveMatrices(mT(in[0]), cots[0])
	res := make([]*array.Array, len(argnums))
	for i, k := range argnums {
		if k == 0 {
			res[i] = sumToShape(Neg(MatMul(gb, mT(out[0]))), in[0].Shape())
		} else {
			res[i] = sumToShape(gb, in[1].Shape())
		}
	}
	return res
}

// JVP is A⁻¹·(dB - dA·X).
func (p *solvePrim) JVP(in, out, tans []*array.Array, argnums []int) []*array.Array {
	var rhs *array.Array
	for i, k := range argnums {
		t := tans[i]
		if k == 0 {
			t = Neg(MatMul(t, out[0]))
		}
		rhs = addTangents(rhs, t)
	}
	return []*array.Array{solveMatrices(in[0], BroadcastTo(rhs, out[0].Shape()...))}
}

// Vmap solves with the batch axes in front, lined up so that they
// broadcast with the other operand's batch.
func (p *solvePrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	x := alignBatched(in, axes)
	return []*array.Array{solveMatrices(x[0], x[1])}, []int{0}
}

// solveMatrices solves a·x = b for a stack of matrices b.
func solveMatrices(a, b *array.Array) *array.Array {
	_, batch, _ := rhsArg("ops.LinalgSolve", a, b)
	dt := linalgDType("ops.LinalgSolve", a.DType(), b.DType())
	return node(withRows(batch, b.Dim(-2), b.Dim(-1)), dt, &solvePrim{}, AsType(a, dt), AsType(b, dt))
}

// LinalgSolve returns x with a·x = b for every square matrix of a
// ([..., n, n]) (LAPACK's getrf and getrs): the primitive behind
// linalg.Solve, which most programs call. b is a vector of n elements
// when it is 1-D and a stack of n×k matrices ([..., n, k]) otherwise
// (numpy 2's rule; numpy 1 also took b of shape [..., n] as vectors
// when a has one more axis); the batch axes broadcast. x has b's
// form. A singular matrix is an error from Eval wrapping cpu.ErrSingular;
// the dtype is the promotion of a's and b's, with integers and bool
// computed in float32.
func LinalgSolve(a, b *array.Array) *array.Array {
	const op = "ops.LinalgSolve"
	requireNonNil(op, a, b)
	matrixArg(op, "a", a, true)
	bm, _, vector := rhsArg(op, a, b)
	x := solveMatrices(a, bm)
	if vector {
		return Squeeze(x, -1)
	}
	return x
}

// ---- SolveTriangular ----

// solveTriPrim solves a·x = b reading one triangle of a.
type solveTriPrim struct{ Upper, Unit bool }

func (p *solveTriPrim) Name() string { return "LinalgSolveTriangular" }
func (p *solveTriPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *solveTriPrim) evalCPU(in, out []*array.Array) error { return evalHostCPU(p, in, out) }
func (p *solveTriPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return evalHostGPU(p, s, in, out)
}
func (p *solveTriPrim) host(alloc outAlloc, in, out []*array.Array) error {
	o, err := alloc(out[0])
	if err != nil {
		return err
	}
	a, b := systemBufs(in, out[0])
	return cpu.SolveTriangular(o, a, b, p.Upper, p.Unit)
}
func (p *solveTriPrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// OutputShapes is b's matrices over the broadcast batch.
func (p *solveTriPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	return systemShape("ops.LinalgSolveTriangular", in)
}

// triangle keeps the part of a that the solve reads: its triangle, less
// the diagonal when that is taken as ones.
func (p *solveTriPrim) triangle(a *array.Array) *array.Array {
	switch {
	case p.Upper && p.Unit:
		return Triu(a, 1)
	case p.Upper:
		return Triu(a, 0)
	case p.Unit:
		return Tril(a, -1)
	}
	return Tril(a, 0)
}

// VJP is JAX's transpose rule: B̄ solves Aᵀ·B̄ = Ḡ (the other triangle
// of Aᵀ), and Ā = -B̄·Xᵀ on the triangle the solve read.
func (p *solveTriPrim) VJP(in, out, cots []*array.Array, argnums []int) []*array.Array {
	gb := solveTri(mT(in[0]), cots[0], !p.Upper, p.Unit)
	res := make([]*array.Array, len(argnums))
	for i, k := range argnums {
		if k == 0 {
			res[i] = sumToShape(p.triangle(Neg(MatMul(gb, mT(out[0])))), in[0].Shape())
		} else {
			res[i] = sumToShape(gb, in[1].Shape())
		}
	}
	return res
}

// JVP is A⁻¹·(dB - tri(dA)·X).
func (p *solveTriPrim) JVP(in, out, tans []*array.Array, argnums []int) []*array.Array {
	var rhs *array.Array
	for i, k := range argnums {
		t := tans[i]
		if k == 0 {
			t = Neg(MatMul(p.triangle(t), out[0]))
		}
		rhs = addTangents(rhs, t)
	}
	return []*array.Array{solveTri(in[0], BroadcastTo(rhs, out[0].Shape()...), p.Upper, p.Unit)}
}

// Vmap solves with the batch axes in front, lined up so that they
// broadcast with the other operand's batch.
func (p *solveTriPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	x := alignBatched(in, axes)
	return []*array.Array{solveTri(x[0], x[1], p.Upper, p.Unit)}, []int{0}
}

// solveTri solves a·x = b on one triangle of a for a stack of matrices b.
func solveTri(a, b *array.Array, upper, unit bool) *array.Array {
	const op = "ops.LinalgSolveTriangular"
	_, batch, _ := rhsArg(op, a, b)
	dt := linalgDType(op, a.DType(), b.DType())
	return node(withRows(batch, b.Dim(-2), b.Dim(-1)), dt, &solveTriPrim{Upper: upper, Unit: unit}, AsType(a, dt), AsType(b, dt))
}

// LinalgSolveTriangular returns x with a·x = b for every square matrix of
// a ([..., n, n]), reading only its upper or lower triangle, and with
// unitDiagonal taking the diagonal as ones without reading it (LAPACK's
// trtrs; scipy's and JAX's solve_triangular with lower = !upper, MLX's
// solve_triangular): the primitive behind linalg.SolveTriangular, which
// most programs call. b follows LinalgSolve's rule. A zero on a diagonal
// that is read is an error from Eval wrapping cpu.ErrSingular (scipy
// raises LinAlgError there; JAX returns infinities).
func LinalgSolveTriangular(a, b *array.Array, upper, unitDiagonal bool) *array.Array {
	const op = "ops.LinalgSolveTriangular"
	requireNonNil(op, a, b)
	matrixArg(op, "a", a, true)
	bm, _, vector := rhsArg(op, a, b)
	x := solveTri(a, bm, upper, unitDiagonal)
	if vector {
		return Squeeze(x, -1)
	}
	return x
}

// ---- LU ----

// luPrim factors every matrix of a stack: outputs the packed LU, LAPACK's
// pivots and the row indices p with a = L[p]·U.
type luPrim struct{}

func (p *luPrim) Name() string { return "LinalgLUFactor" }
func (p *luPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *luPrim) evalCPU(in, out []*array.Array) error { return evalHostCPU(p, in, out) }
func (p *luPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return evalHostGPU(p, s, in, out)
}
func (p *luPrim) host(alloc outAlloc, in, out []*array.Array) error {
	o, err := allocAll(alloc, out)
	if err != nil {
		return err
	}
	return cpu.LUFactor(o[0], o[1], o[2], bufOf(in[0]))
}
func (p *luPrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// OutputShapes is a's shape, then the batch with min(m, n) pivots and m
// row indices.
func (p *luPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	var shapes [][]int
	err := array.Try(func() {
		m, n := matrixArg("ops.LinalgLUFactor", "a", in[0], false)
		shapes = luShapes(in[0].Shape(), m, n)
	})
	return shapes, err
}

func luShapes(shape []int, m, n int) [][]int {
	batch := shape[:len(shape)-2]
	return [][]int{slices.Clone(shape), append(slices.Clone(batch), min(m, n)), append(slices.Clone(batch), m)}
}

// luParts returns the square factors of a packed LU of m×n matrices: L,
// m×m with a unit diagonal, and U, n×n, the rows of the packed U padded
// below with the identity's (JAX's lu_jvp_rule pads them the same way).
func luParts(lu *array.Array) (l, u *array.Array) {
	m, n := lu.Dim(-2), lu.Dim(-1)
	k := min(m, n)
	nd := lu.Ndim()
	widths := make([][2]int, nd)
	l = Tril(SliceAxis(lu, -1, R(0, k)), -1)
	if m > k {
		widths[nd-1] = [2]int{0, m - k}
		l = Pad(l, widths, 0)
	}
	l = Add(l, Eye(m, m, 0, lu.DType()))
	u = Triu(SliceAxis(lu, -2, R(0, k)), 0)
	if n > k {
		widths[nd-1] = [2]int{}
		widths[nd-2] = [2]int{0, n - k}
		u = Pad(u, widths, 0)
		u = Add(u, Pad(Eye(n-k, n-k, 0, lu.DType()), [][2]int{{k, 0}, {k, 0}}, 0))
	}
	return l, u
}

// rowsMatrix is the permutation matrix P of row indices p (one-hot rows:
// P[i, p[i]] = 1), so that a = P·L·U.
func rowsMatrix(p *array.Array, dt array.DType) *array.Array {
	m := p.Dim(-1)
	return AsType(Equal(ExpandDims(p, -1), Arange(0, float64(m), 1, array.Int32)), dt)
}

// luTangent is JAX's lu_jvp_rule: with X = Pᵀ·dA and M = L⁻¹·X·U⁻¹,
// dLU = L·tril(M, -1) + triu(M)·U, in the packed layout.
func luTangent(lu, rows, da *array.Array) *array.Array {
	l, u := luParts(lu)
	x := MatMul(mT(rowsMatrix(rows, lu.DType())), da)
	m := solveTri(l, x, false, true)
	m = mT(solveTri(mT(u), mT(m), false, false))
	return Add(MatMul(l, Tril(m, -1)), MatMul(Triu(m, 0), u))
}

// luCotangent is the transpose of luTangent: M̄ = tril(Lᵀ·Ḡ, -1) +
// triu(Ḡ·Uᵀ), X̄ = L⁻ᵀ·M̄·U⁻ᵀ, Ā = P·X̄.
func luCotangent(lu, rows, g *array.Array) *array.Array {
	l, u := luParts(lu)
	gm := Add(Tril(MatMul(mT(l), g), -1), Triu(MatMul(g, mT(u)), 0))
	gx := solveTri(mT(l), gm, true, true)
	gx = mT(solveTri(u, mT(gx), true, false))
	return MatMul(rowsMatrix(rows, lu.DType()), gx)
}

// VJP is the transpose of JAX's LU tangent; the pivots and row indices
// are integers, without derivative. Like JAX's, it needs U to be
// invertible: a singular matrix's gradient is an error from Eval.
func (p *luPrim) VJP(_, out, cots []*array.Array, _ []int) []*array.Array {
	return []*array.Array{luCotangent(out[0], out[2], cots[0])}
}

// JVP is JAX's lu_jvp_rule.
func (p *luPrim) JVP(_, out, tans []*array.Array, _ []int) []*array.Array {
	return []*array.Array{luTangent(out[0], out[2], tans[0]), nil, nil}
}

// Vmap factors the batch as more leading axes.
func (p *luPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	lu, piv, rows := LinalgLUFactor(batchFront(in[0], axes[0]))
	return []*array.Array{lu, piv, rows}, []int{0, 0, 0}
}

// LinalgLUFactor returns the LU factorisation with partial pivoting of
// every m×n matrix of a ([..., m, n]) (LAPACK's getrf; JAX's
// lax.linalg.lu): the primitive behind linalg.LU and linalg.LUFactor,
// which most programs call. lu packs L (unit lower triangular, m×min(m, n),
// its diagonal not stored) below the diagonal and U (min(m, n)×n) on and
// above it; pivots (int32, [..., min(m, n)]) are LAPACK's row
// interchanges, 0-based (scipy's and MLX's lu_factor); rows (int32,
// [..., m]) are the permutation as row indices, with a = L[rows]·U (MLX's
// and scipy's lu with p_indices). A singular matrix is factored without
// error (U has a zero on its diagonal). The derivative is JAX's (through
// lu; pivots and rows have none) and needs U invertible.
func LinalgLUFactor(a *array.Array) (lu, pivots, rows *array.Array) {
	const op = "ops.LinalgLUFactor"
	requireNonNil(op, a)
	m, n := matrixArg(op, "a", a, false)
	dt := linalgDType(op, a.DType())
	s := luShapes(a.Shape(), m, n)
	outs := array.NewMulti(stream(), s, []array.DType{dt, array.Int32, array.Int32}, &luPrim{}, AsType(a, dt))
	return outs[0], outs[1], outs[2]
}

// luOrderPrim turns LAPACK's pivots of square factors into the order of
// rows they give: as many rows as pivots.
type luOrderPrim struct{}

func (p *luOrderPrim) Name() string { return "LinalgLUOrder" }
func (p *luOrderPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *luOrderPrim) evalCPU(in, out []*array.Array) error { return evalHostCPU(p, in, out) }
func (p *luOrderPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return evalHostGPU(p, s, in, out)
}
func (p *luOrderPrim) host(alloc outAlloc, in, out []*array.Array) error {
	o, err := alloc(out[0])
	if err != nil {
		return err
	}
	return cpu.LUOrder(o, bufOf(in[0]))
}
func (p *luOrderPrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// OutputShapes keeps the pivots' shape.
func (p *luOrderPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	if in[0].Ndim() < 1 {
		return nil, array.Errorf("ops.LinalgLUSolve", "pivots are 0-d")
	}
	return [][]int{in[0].Shape()}, nil
}

// VJP is zero: the order is integers.
func (p *luOrderPrim) VJP(_, _, _ []*array.Array, argnums []int) []*array.Array {
	return make([]*array.Array, len(argnums))
}

// JVP is zero.
func (p *luOrderPrim) JVP(_, _, _ []*array.Array, _ []int) []*array.Array {
	return []*array.Array{nil}
}

// Vmap orders the batch as more leading axes.
func (p *luOrderPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	x := batchFront(in[0], axes[0])
	return []*array.Array{node(x.Shape(), array.Int32, &luOrderPrim{}, x)}, []int{0}
}

// LinalgLUSolve returns x with a·x = b from a's LU factorisation lu
// ([..., n, n]) and pivots ([..., n], int32) as LinalgLUFactor returns
// them (scipy's lu_solve, MLX's lu_solve; LAPACK's getrs): the primitive
// behind linalg.LUSolve, which most programs call. b follows LinalgSolve's
// rule; the batch axes of lu, pivots and b broadcast. It applies the
// pivots to b's rows and solves with the two triangles of lu, so its
// derivative is theirs (with respect to lu and b). A pivot outside
// [0, n) is an error from Eval, and so is a zero on U's diagonal
// (wrapping cpu.ErrSingular).
func LinalgLUSolve(lu, pivots, b *array.Array) *array.Array {
	const op = "ops.LinalgLUSolve"
	requireNonNil(op, lu, pivots, b)
	_, n := matrixArg(op, "lu", lu, true)
	if pivots.Ndim() < 1 || pivots.Dim(-1) != n {
		array.Panicf(op, "pivots of shape %v do not match lu of shape %v: they need %d per matrix", pivots.Shape(), lu.Shape(), n)
	}
	if pivots.DType() != array.Int32 {
		array.Panicf(op, "pivots of dtype %v: want int32", pivots.DType())
	}
	bm, _, vector := rhsArg(op, lu, b)
	BroadcastShapes(op, batchOf(lu, 2), batchOf(pivots, 1), batchOf(bm, 2))
	order := node(pivots.Shape(), array.Int32, &luOrderPrim{}, pivots)
	idx := ExpandDims(order, -1)
	for idx.Ndim() < bm.Ndim() {
		idx = ExpandDims(idx, 0)
	}
	for bm.Ndim() < idx.Ndim() {
		bm = ExpandDims(bm, 0)
	}
	pb := TakeAlongAxis(bm, idx, -2)
	x := solveTri(lu, solveTri(lu, pb, false, true), true, false)
	if vector {
		return Squeeze(x, -1)
	}
	return x
}
