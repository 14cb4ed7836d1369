package ops

import (
	"slices"

	"github.com/fathom-go/fathom/internal/strided"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
)

// matShape is numpy.matmul's view of an operand's shape: a 1-D first
// operand [K] is the row [1, K], a 1-D second operand [K] the column
// [K, 1].
func matShape(shape []int, first bool) []int {
	if len(shape) != 1 {
		return shape
	}
	if first {
		return []int{1, shape[0]}
	}
	return []int{shape[0], 1}
}

// matBatch returns the broadcast batch shape of two matmul operand
// shapes (already at least 2-D), or nil if they do not broadcast.
func matBatch(am, bm []int) []int {
	return broadcastOrNil(am[:len(am)-2], bm[:len(bm)-2])
}

// matMulPrim is numpy's matmul: a matrix product over the last two axes,
// batched over the others.
type matMulPrim struct{}

func (p *matMulPrim) Name() string { return "MatMul" }
func (p *matMulPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *matMulPrim) evalCPU(in, out []*array.Array) error {
	am, bm := matShape(in[0].Shape(), true), matShape(in[1].Shape(), false)
	batch := matBatch(am, bm)
	o := alloc(out[0])
	// out holds batch+[M, N] in row-major order whether or not the 1-D
	// operands' axes were dropped from its shape.
	o.Shape = append(append([]int{}, batch...), am[len(am)-2], bm[len(bm)-1])
	o.Strides = strided.RowMajor(o.Shape)
	return cpu.MatMul(o, matBuf(in[0], true, batch), matBuf(in[1], false, batch))
}
func (p *matMulPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	am, bm := matShape(in[0].Shape(), true), matShape(in[1].Shape(), false)
	batch := matBatch(am, bm)
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		o.Shape = append(slices.Clone(batch), am[len(am)-2], bm[len(bm)-1])
		o.Strides = strided.RowMajor(o.Shape)
		return metal.MatMul(o, toView(matBuf(in[0], true, batch), in[0].Storage()), toView(matBuf(in[1], false, batch), in[1].Storage()))
	})
}
func (p *matMulPrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// OutputShapes multiplies the inputs' new shapes, which must still be
// matrices (or stacks of them) that fit.
func (p *matMulPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	as, bs := in[0].Shape(), in[1].Shape()
	if len(as) < 2 || len(bs) < 2 {
		return nil, array.Errorf("ops.MatMul", "shapes %v and %v: the traced operands were matrices", as, bs)
	}
	if as[len(as)-1] != bs[len(bs)-2] {
		return nil, array.Errorf("ops.MatMul", "shapes %v and %v: inner dimensions %d and %d differ", as, bs, as[len(as)-1], bs[len(bs)-2])
	}
	batch := matBatch(as, bs)
	if batch == nil {
		return nil, array.Errorf("ops.MatMul", "shapes %v and %v: batch dimensions do not broadcast", as, bs)
	}
	return [][]int{append(batch, as[len(as)-2], bs[len(bs)-1])}, nil
}

// VJP multiplies the cotangent by the other operand transposed, on the
// matrix views of 1-D operands, and sums the batch axes an operand was
// broadcast along.
func (p *matMulPrim) VJP(in, _, cots []*array.Array, argnums []int) []*array.Array {
	a, b := in[0], in[1]
	am, bm := matShape(a.Shape(), true), matShape(b.Shape(), false)
	batch := matBatch(am, bm)
	m, k, n := am[len(am)-2], am[len(am)-1], bm[len(bm)-1]
	g := Reshape(cots[0], append(append([]int{}, batch...), m, n)...)
	am2, bm2 := Reshape(a, am...), Reshape(b, bm...)
	out := make([]*array.Array, len(argnums))
	for i, j := range argnums {
		if j == 0 {
			out[i] = Reshape(sumToShape(MatMul(g, matT(bm2)), am), a.Shape()...)
			continue
		}
		if len(bm) == 2 && len(batch) > 0 && equalInts(am[:len(am)-2], batch) {
			// A matrix b against a stack: one product over the stacked
			// rows instead of a product per matrix and a sum.
			rows := m
			for _, d := range batch {
				rows *= d
			}
			out[i] = Reshape(MatMul(matT(Reshape(am2, rows, k)), Reshape(g, rows, n)), b.Shape()...)
			continue
		}
		if len(am) == 2 && isTransposed(b) {
			// b is a transposed matrix (a linear layer's weight): its
			// gradient is made in the weight's own layout, so the
			// transpose's gradient hands the weight a contiguous array
			// rather than a strided view every later use must gather.
			out[i] = matT(MatMul(matT(g), am2))
			continue
		}
		out[i] = Reshape(sumToShape(MatMul(matT(am2), g), bm), b.Shape()...)
	}
	return out
}

// isTransposed reports whether x is a matrix made by Transpose, pending
// or evaluated into a column-major view.
func isTransposed(x *array.Array) bool {
	if x.Ndim() != 2 {
		return false
	}
	if _, ok := x.Primitive().(*transposePrim); ok {
		return true
	}
	st, sh := x.Strides(), x.Shape()
	return len(st) == 2 && st[0] == 1 && st[1] == sh[0] && sh[0] > 1 && sh[1] > 1
}

// JVP is the product rule: ta·b + a·tb.
func (p *matMulPrim) JVP(in, _, tans []*array.Array, argnums []int) []*array.Array {
	var out *array.Array
	for i, j := range argnums {
		var t *array.Array
		if j == 0 {
			t = MatMul(tans[i], in[1])
		} else {
			t = MatMul(in[0], tans[i])
		}
		if out == nil {
			out = t
		} else {
			out = Add(out, t)
		}
	}
	return []*array.Array{out}
}

// Vmap puts the batch axis first and lines the operands' batch axes up
// from the right, so the vmapped batch becomes one more matmul batch axis.
// A 1-D operand is first made the matrix matmul makes of it, and the axis
// that adds is dropped from the result.
func (p *matMulPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	x := make([]*array.Array, 2)
	ax := make([]int, 2)
	var vec [2]bool
	for i := range in {
		x[i], ax[i] = batchFront(in[i], axes[i]), -1
		s := x[i].Shape()
		rank := len(s)
		if axes[i] >= 0 {
			ax[i] = 0
			rank--
		}
		if vec[i] = rank == 1; vec[i] {
			if i == 0 {
				s = append(s[:len(s)-1], 1, s[len(s)-1])
			} else {
				s = append(s, 1)
			}
			x[i] = Reshape(x[i], s...)
		}
	}
	x = alignBatched(x, ax)
	out := MatMul(x[0], x[1])
	var drop []int
	if vec[0] {
		drop = append(drop, -2)
	}
	if vec[1] {
		drop = append(drop, -1)
	}
	if len(drop) > 0 {
		out = Squeeze(out, drop...)
	}
	return []*array.Array{out}, []int{0}
}

// matT swaps the last two axes: the transpose of every matrix in a stack.
func matT(x *array.Array) *array.Array { return SwapAxes(x, -1, -2) }

// matBuf returns x's view as a stack of matrices broadcast to batch: a
// 1-D operand gains its size-1 axis (stride 0), and batch axes that x
// lacks or has as size 1 repeat with stride 0.
func matBuf(x *array.Array, first bool, batch []int) cpu.Buf {
	b := bufOf(x)
	if len(b.Shape) == 1 {
		if first {
			b.Shape, b.Strides = []int{1, b.Shape[0]}, []int{0, b.Strides[0]}
		} else {
			b.Shape, b.Strides = []int{b.Shape[0], 1}, []int{b.Strides[0], 0}
		}
	}
	nd := len(b.Shape)
	shape := append(append([]int{}, batch...), b.Shape[nd-2:]...)
	strides := make([]int, len(shape))
	copy(strides[len(shape)-2:], b.Strides[nd-2:])
	off := len(batch) - (nd - 2)
	for i := 0; i < nd-2; i++ {
		if b.Shape[i] != 1 {
			strides[off+i] = b.Strides[i]
		}
	}
	b.Shape, b.Strides = shape, strides
	return b
}

// MatMul is the matrix product of a and b with numpy.matmul's rules: 2-D
// operands multiply as matrices; operands with more axes are stacks of
// matrices in their last two axes, and the other (batch) axes broadcast;
// a 1-D a is a row vector and a 1-D b a column vector, whose added axis
// is removed from the result. The dtypes promote. float32 and float64 run
// on gonum's BLAS, which reads transposed views in place.
func MatMul(a, b *array.Array) *array.Array {
	const op = "ops.MatMul"
	requireNonNil(op, a, b)
	as, bs := a.Shape(), b.Shape()
	if len(as) == 0 || len(bs) == 0 {
		array.Panicf(op, "shapes %v and %v: operands must have at least one dimension", as, bs)
	}
	am, bm := matShape(as, true), matShape(bs, false)
	if ka, kb := am[len(am)-1], bm[len(bm)-2]; ka != kb {
		array.Panicf(op, "shapes %v and %v: inner dimensions %d and %d differ", as, bs, ka, kb)
	}
	batch := matBatch(am, bm)
	if batch == nil {
		array.Panicf(op, "shapes %v and %v: batch dimensions %v and %v do not broadcast", as, bs, am[:len(am)-2], bm[:len(bm)-2])
	}
	shape := batch
	if len(as) > 1 {
		shape = append(shape, am[len(am)-2])
	}
	if len(bs) > 1 {
		shape = append(shape, bm[len(bm)-1])
	}
	dt := array.Promote(a.DType(), b.DType())
	if _, p := sizeProblem(shape, dt); p != "" {
		array.Panicf(op, "shapes %v and %v give shape %v, which %s", as, bs, shape, p)
	}
	return node(shape, dt, &matMulPrim{}, AsType(a, dt), AsType(b, dt))
}

// Outer returns the outer product of a and b, both flattened (numpy's
// outer): result[i, j] = a[i] * b[j], of shape [a.Size(), b.Size()].
func Outer(a, b *array.Array) *array.Array {
	const op = "ops.Outer"
	requireNonNil(op, a, b)
	shape := []int{a.Size(), b.Size()}
	if _, p := sizeProblem(shape, array.Promote(a.DType(), b.DType())); p != "" {
		array.Panicf(op, "shapes %v and %v give shape %v, which %s", a.Shape(), b.Shape(), shape, p)
	}
	return MatMul(Reshape(a, a.Size(), 1), Reshape(b, 1, b.Size()))
}

// tensordotAxes normalises axes of an operand of ndim dimensions, keeping
// their order and rejecting repeats.
func tensordotAxes(op string, axes []int, shape []int) []int {
	out := make([]int, len(axes))
	seen := make([]bool, len(shape))
	for i, ax := range axes {
		a := ax
		if a < 0 {
			a += len(shape)
		}
		if a < 0 || a >= len(shape) {
			array.Panicf(op, "axis %d out of range for shape %v", ax, shape)
		}
		if seen[a] {
			array.Panicf(op, "axis %d repeated in %v for shape %v", ax, axes, shape)
		}
		seen[a] = true
		out[i] = a
	}
	return out
}

// Tensordot sums the products of a's and b's elements over the axes
// axesA of a and axesB of b, paired in order (numpy's tensordot with
// explicit axes). The result's axes are a's remaining axes followed by
// b's. It is a MatMul of a and b transposed and reshaped into matrices.
func Tensordot(a, b *array.Array, axesA, axesB []int) *array.Array {
	const op = "ops.Tensordot"
	requireNonNil(op, a, b)
	as, bs := a.Shape(), b.Shape()
	if len(axesA) != len(axesB) {
		array.Panicf(op, "%d axes %v of shape %v and %d axes %v of shape %v do not pair up", len(axesA), axesA, as, len(axesB), axesB, bs)
	}
	ca, cb := tensordotAxes(op, axesA, as), tensordotAxes(op, axesB, bs)
	contracted := make([]int, len(ca))
	for i := range ca {
		if as[ca[i]] != bs[cb[i]] {
			array.Panicf(op, "axis %d of shape %v (%d) and axis %d of shape %v (%d) differ", axesA[i], as, as[ca[i]], axesB[i], bs, bs[cb[i]])
		}
		contracted[i] = as[ca[i]]
	}
	freeA, shapeA, m := freeAxes(as, ca)
	freeB, shapeB, n := freeAxes(bs, cb)
	shape := append(slices.Clone(shapeA), shapeB...)
	if _, p := sizeProblem(shape, array.Promote(a.DType(), b.DType())); p != "" {
		array.Panicf(op, "shapes %v and %v contracted over axes %v and %v give shape %v, which %s", as, bs, axesA, axesB, shape, p)
	}
	// An operand's size fits in an int, but the product over some of its
	// axes need not when another of its axes is 0. Then the operand is
	// empty, and so is the result (k overflowing needs a 0 among the free
	// axes of both; n, a 0 among a's axes, as the result's shape passed),
	// and 0 stands in for the product, as elemsProblem's count.
	k, _ := elemsProblem(contracted)
	if _, p := elemsProblem(shapeA); p != "" {
		m = 0
	}
	if _, p := elemsProblem(shapeB); p != "" {
		n = 0
	}
	at := Reshape(Transpose(a, append(freeA, ca...)...), m, k)
	bt := Reshape(Transpose(b, append(cb, freeB...)...), k, n)
	return Reshape(MatMul(at, bt), shape...)
}

// freeAxes returns the axes of shape not in contracted, their sizes and
// the product of the sizes.
func freeAxes(shape, contracted []int) (axes, sizes []int, n int) {
	in := make([]bool, len(shape))
	for _, a := range contracted {
		in[a] = true
	}
	n = 1
	axes, sizes = []int{}, []int{}
	for a, d := range shape {
		if !in[a] {
			axes = append(axes, a)
			sizes = append(sizes, d)
			n *= d
		}
	}
	return axes, sizes, n
}
