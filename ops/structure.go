package ops

import (
	"math"
	"slices"

	"github.com/fathom-go/fathom/internal/strided"

	"github.com/fathom-go/fathom/array"
)

// diagLen is the length of the offset diagonal of an n1×n2 matrix:
// positive offsets lie above the main diagonal, negative ones below, and
// a diagonal that misses the matrix is empty.
func diagLen(n1, n2, offset int) int {
	if offset >= 0 {
		if offset >= n2 {
			return 0
		}
		return min(n1, n2-offset)
	}
	if offset <= -n1 {
		return 0
	}
	return min(n1+offset, n2)
}

// diagonalShape is the shape of the diagonal of shape over the distinct,
// normalised axes axis1 and axis2: the other axes in order, then the
// diagonal.
func diagonalShape(shape []int, offset, axis1, axis2 int) []int {
	out := make([]int, 0, len(shape)-1)
	for i, d := range shape {
		if i != axis1 && i != axis2 {
			out = append(out, d)
		}
	}
	return append(out, diagLen(shape[axis1], shape[axis2], offset))
}

// diagonalPrim selects the Offset diagonal of the (normalised, distinct)
// axes Axis1 and Axis2 as a last axis, as numpy's diagonal. Always a view:
// the diagonal's stride is the sum of the two axes' strides, so no
// backend needs a kernel for it.
type diagonalPrim struct{ Offset, Axis1, Axis2 int }

func (p *diagonalPrim) Name() string { return "Diagonal" }
func (p *diagonalPrim) Eval(_ array.Stream, in, out []*array.Array) error {
	if out[0].Size() == 0 {
		// An empty diagonal's start may lie past the end of the memory;
		// nothing is ever read through it.
		out[0].SetData(in[0].Storage(), strided.RowMajor(out[0].Shape()), in[0].Offset())
		return nil
	}
	st := in[0].Strides()
	ns := make([]int, 0, len(st)-1)
	for i, s := range st {
		if i != p.Axis1 && i != p.Axis2 {
			ns = append(ns, s)
		}
	}
	ns = append(ns, st[p.Axis1]+st[p.Axis2])
	off := in[0].Offset()
	if p.Offset >= 0 {
		off += p.Offset * st[p.Axis2]
	} else {
		off -= p.Offset * st[p.Axis1]
	}
	out[0].SetData(in[0].Storage(), ns, off)
	return nil
}
func (p *diagonalPrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// OutputShapes takes the diagonal of the input's new shape, which must
// still have both axes.
func (p *diagonalPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	s := in[0].Shape()
	if err := checkAxes("ops.Diagonal", []int{p.Axis1, p.Axis2}, len(s)); err != nil {
		return nil, err
	}
	return [][]int{diagonalShape(s, p.Offset, p.Axis1, p.Axis2)}, nil
}

// VJP places the cotangent on the same diagonal of zeros.
func (p *diagonalPrim) VJP(in, _, cots []*array.Array, _ []int) []*array.Array {
	return []*array.Array{diagScatter(cots[0], in[0].Shape(), p.Offset, p.Axis1, p.Axis2)}
}

// JVP takes the same diagonal of the tangent.
func (p *diagonalPrim) JVP(_, _, tans []*array.Array, _ []int) []*array.Array {
	return []*array.Array{diagonal(tans[0], p.Offset, p.Axis1, p.Axis2)}
}

// Vmap puts the batch axis first, past which both axes shift.
func (p *diagonalPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	return []*array.Array{diagonal(batchFront(in[0], axes[0]), p.Offset, p.Axis1+1, p.Axis2+1)}, []int{0}
}

// diagonal records the diagonal with checked, normalised axes.
func diagonal(a *array.Array, offset, axis1, axis2 int) *array.Array {
	p := &diagonalPrim{Offset: offset, Axis1: axis1, Axis2: axis2}
	return node(diagonalShape(a.Shape(), offset, axis1, axis2), a.DType(), p, a)
}

// diagScatter is Diagonal's transpose: an array of shape whose offset
// diagonal over axis1 and axis2 holds g (of Diagonal's result shape) and
// whose other elements are zero. It selects g, padded to the length of the
// axis that indexes it, with Eye's mask, so that its own derivatives are
// those of Pad and Where.
func diagScatter(g *array.Array, shape []int, offset, axis1, axis2 int) *array.Array {
	n1, n2 := shape[axis1], shape[axis2]
	nd := len(shape)
	l := g.Dim(g.Ndim() - 1)
	widths := make([][2]int, g.Ndim())
	var spread *array.Array
	if offset >= 0 {
		widths[len(widths)-1][1] = n1 - l
		spread = ExpandDims(Pad(g, widths, 0), -1)
	} else {
		widths[len(widths)-1][1] = n2 - l
		spread = ExpandDims(Pad(g, widths, 0), -2)
	}
	k := max(min(offset, n2), -n1)
	full := Where(Eye(n1, n2, k, array.Bool), spread, scalarOf(0, g.DType()))
	perm := make([]int, nd)
	j := 0
	for i := range perm {
		switch i {
		case axis1:
			perm[i] = nd - 2
		case axis2:
			perm[i] = nd - 1
		default:
			perm[i] = j
			j++
		}
	}
	return Transpose(full, perm...)
}

// diagAxes checks and normalises Diagonal's and Trace's axes for a.
func diagAxes(op string, a *array.Array, axis1, axis2 int) (int, int) {
	if a.Ndim() < 2 {
		array.Panicf(op, "shape %v: needs at least 2 dimensions", a.Shape())
	}
	ax1, ax2 := normAxis(op, axis1, a.Ndim()), normAxis(op, axis2, a.Ndim())
	if ax1 == ax2 {
		array.Panicf(op, "axis1 %d and axis2 %d are the same axis of shape %v", axis1, axis2, a.Shape())
	}
	return ax1, ax2
}

// Diagonal returns a view of the offset diagonal of a over axes axis1 and
// axis2, as numpy's diagonal: the result has a's other axes in order, then
// the diagonal as its last axis. A positive offset takes a diagonal above
// the main one (element [i, i+offset]), a negative one below; a diagonal
// that misses the matrix is empty.
func Diagonal(a *array.Array, offset, axis1, axis2 int) *array.Array {
	const op = "ops.Diagonal"
	requireNonNil(op, a)
	ax1, ax2 := diagAxes(op, a, axis1, axis2)
	return diagonal(a, offset, ax1, ax2)
}

// Diag extracts or builds a diagonal, as numpy's diag: of a 2-D a it is
// the k-th diagonal (Diagonal(a, k, 0, 1)); a 1-D a of length n becomes
// the square matrix of size n+|k| with a on its k-th diagonal and zeros
// elsewhere.
func Diag(a *array.Array, k int) *array.Array {
	const op = "ops.Diag"
	requireNonNil(op, a)
	switch a.Ndim() {
	case 1:
		ak := k
		if ak < 0 {
			ak = -ak
		}
		n := a.Dim(0)
		if k == math.MinInt || ak > math.MaxInt-n {
			array.Panicf(op, "shape %v with k %d: the matrix's size overflows", a.Shape(), k)
		}
		n += ak
		checkedBytes(op, []int{n, n}, a.DType())
		return diagScatter(a, []int{n, n}, k, 0, 1)
	case 2:
		return diagonal(a, k, 0, 1)
	}
	array.Panicf(op, "shape %v: the input must be 1-D or 2-D", a.Shape())
	return nil
}

// Trace returns the sum of the offset diagonal of a over axes axis1 and
// axis2 (numpy's trace): Sum(Diagonal(a, offset, axis1, axis2), -1), with
// Sum's dtype rule (bool and narrow integers widen to 32 bits). An empty
// diagonal sums to zero.
func Trace(a *array.Array, offset, axis1, axis2 int) *array.Array {
	const op = "ops.Trace"
	requireNonNil(op, a)
	ax1, ax2 := diagAxes(op, a, axis1, axis2)
	return Sum(diagonal(a, offset, ax1, ax2), -1)
}

// triMask is the n×m boolean mask of Tri: true where j <= i+k.
func triMask(n, m, k int) *array.Array {
	// Beyond these bounds the mask is all true or all false, and i+k
	// stays in range of the index dtype.
	k = max(min(k, m), -n-1)
	dt := array.Int32
	if n+m+2 > math.MaxInt32 {
		dt = array.Int64
	}
	rows := AddScalar(Reshape(Arange(0, float64(n), 1, dt), n, 1), float64(k))
	cols := Reshape(Arange(0, float64(m), 1, dt), 1, m)
	return LessEqual(cols, rows)
}

// Tri returns the n×m array of dtype dt with ones at and below the k-th
// diagonal and zeros above it (numpy's tri): element [i, j] is 1 where
// j <= i+k. k = 0 is the main diagonal, positive k lies above it.
func Tri(n, m, k int, dt array.DType) *array.Array {
	const op = "ops.Tri"
	checkCreateDType(op, dt)
	checkedBytes(op, []int{n, m}, dt)
	return AsType(triMask(n, m, k), dt)
}

// triPart keeps a's elements where the mask of its last two axes (or, for
// a 1-D a, of the square matrix whose rows are a, as numpy) is keep.
func triPart(op string, a *array.Array, k int, lower bool) *array.Array {
	requireNonNil(op, a)
	s := a.Shape()
	if len(s) == 0 {
		array.Panicf(op, "shape %v: needs at least 1 dimension", s)
	}
	n, m := s[len(s)-1], s[len(s)-1]
	if len(s) > 1 {
		n = s[len(s)-2]
		checkedBytes(op, s, a.DType())
	} else {
		checkedBytes(op, []int{n, m}, a.DType())
	}
	zero := scalarOf(0, a.DType())
	if lower {
		return Where(triMask(n, m, k), a, zero)
	}
	if k == math.MinInt {
		return Where(triMask(n, m, k), zero, a)
	}
	return Where(triMask(n, m, k-1), zero, a)
}

// Tril returns a with the elements above the k-th diagonal of its last two
// axes set to zero (numpy's tril); it is batched over the leading axes. A
// 1-D a of length n is the n×n matrix whose rows are a.
func Tril(a *array.Array, k int) *array.Array { return triPart("ops.Tril", a, k, true) }

// Triu returns a with the elements below the k-th diagonal of its last two
// axes set to zero (numpy's triu); otherwise as Tril.
func Triu(a *array.Array, k int) *array.Array { return triPart("ops.Triu", a, k, false) }

// Kron returns the Kronecker product of a and b (numpy's kron): the
// operands get leading size-1 axes up to the same rank, and along each
// axis the result has size a's times b's, with block i of a's elements
// holding a[i]·b. The dtypes promote.
func Kron(a, b *array.Array) *array.Array {
	const op = "ops.Kron"
	requireNonNil(op, a, b)
	as, bs := a.Shape(), b.Shape()
	nd := max(len(as), len(bs))
	pa := slices.Concat(indexOnes(nd-len(as)), as)
	pb := slices.Concat(indexOnes(nd-len(bs)), bs)
	ia, ib := make([]int, 0, 2*nd), make([]int, 0, 2*nd)
	shape := make([]int, nd)
	for i := range nd {
		ia = append(ia, pa[i], 1)
		ib = append(ib, 1, pb[i])
		if pa[i] != 0 && pb[i] > math.MaxInt/pa[i] {
			array.Panicf(op, "shapes %v and %v: axis %d of the result overflows", as, bs, i)
		}
		shape[i] = pa[i] * pb[i]
	}
	if _, p := sizeProblem(shape, array.Promote(a.DType(), b.DType())); p != "" {
		array.Panicf(op, "shapes %v and %v give shape %v, which %s", as, bs, shape, p)
	}
	return Reshape(Mul(Reshape(a, ia...), Reshape(b, ib...)), shape...)
}

// Inner returns the inner product of a and b over their last axes, as
// numpy's inner: the result's shape is a's leading axes followed by b's.
// A 0-d operand multiplies the other. The dtypes promote; complex values
// are not conjugated.
func Inner(a, b *array.Array) *array.Array {
	const op = "ops.Inner"
	requireNonNil(op, a, b)
	as, bs := a.Shape(), b.Shape()
	if len(as) == 0 || len(bs) == 0 {
		return Mul(a, b)
	}
	if as[len(as)-1] != bs[len(bs)-1] {
		array.Panicf(op, "shapes %v and %v: last dimensions %d and %d differ", as, bs, as[len(as)-1], bs[len(bs)-1])
	}
	return Tensordot(a, b, []int{-1}, []int{-1})
}

// VecDot returns the dot product of vectors along axis, as numpy 2's
// vecdot: a and b broadcast together, axis counts in the broadcast shape,
// and the result is the sum over it of conj(a)·b (complex a is
// conjugated). The dtypes promote. It is one batched MatMul of rows by
// columns, so no broadcast product is built.
func VecDot(a, b *array.Array, axis int) *array.Array {
	const op = "ops.VecDot"
	requireNonNil(op, a, b)
	as, bs := a.Shape(), b.Shape()
	shape := BroadcastShapes(op, as, bs)
	if len(shape) == 0 {
		array.Panicf(op, "shapes %v and %v: needs at least 1 dimension", as, bs)
	}
	ax := normAxis(op, axis, len(shape))
	n := shape[ax]
	x := Reshape(a, slices.Concat(indexOnes(len(shape)-len(as)), as)...)
	y := Reshape(b, slices.Concat(indexOnes(len(shape)-len(bs)), bs)...)
	vec := func(v *array.Array) *array.Array {
		v = MoveAxis(v, ax, -1)
		if s := v.Shape(); s[len(s)-1] != n {
			s[len(s)-1] = n
			v = BroadcastTo(v, s...)
		}
		return v
	}
	dt := array.Promote(a.DType(), b.DType())
	x, y = Conj(AsType(vec(x), dt)), vec(y)
	return Squeeze(MatMul(ExpandDims(x, -2), ExpandDims(y, -1)), -2, -1)
}

// AddMM returns alpha·(a @ b) + beta·c, as MLX's addmm: a @ b is MatMul's
// product and c broadcasts to its shape. beta = 0 leaves c unread (BLAS's
// convention: NaNs in c do not propagate), though its shape is still
// checked. The dtypes of a, b and c promote and must be inexact.
func AddMM(c, a, b *array.Array, alpha, beta float64) *array.Array {
	const op = "ops.AddMM"
	requireNonNil(op, c, a, b)
	dt := array.Promote(array.Promote(a.DType(), b.DType()), c.DType())
	if !dt.IsInexact() {
		array.Panicf(op, "shapes %v, %v and %v: dtypes %v, %v and %v promote to %v, not a float or complex dtype", c.Shape(), a.Shape(), b.Shape(), c.DType(), a.DType(), b.DType(), dt)
	}
	p := MatMul(AsType(a, dt), AsType(b, dt))
	if !equalInts(broadcastOrNil(c.Shape(), p.Shape()), p.Shape()) {
		array.Panicf(op, "shape %v of c does not broadcast to the product's shape %v (of %v @ %v)", c.Shape(), p.Shape(), a.Shape(), b.Shape())
	}
	if alpha != 1 {
		p = MulScalar(p, alpha)
	}
	if beta == 0 {
		return p
	}
	cc := AsType(c, dt)
	if beta != 1 {
		cc = MulScalar(cc, beta)
	}
	return Add(p, cc)
}
