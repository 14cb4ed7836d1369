package linalg

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// MatrixPower returns a raised to the integer power n, a·a·…·a, for a
// stack of square matrices [..., M, M] (numpy.linalg.matrix_power). n = 0
// gives the identity (in a's dtype, whatever a holds); n < 0 inverts a
// first (Inv, on the CPU stream, so a must be float32 or float64 and a
// singular a is Inv's error from Eval). Positive powers take
// O(log n) products by repeated squaring and work for every dtype MatMul
// takes.
func MatrixPower(a *array.Array, n int) *array.Array {
	const op = "linalg.MatrixPower"
	if a == nil {
		array.Panicf(op, "nil array")
	}
	s := a.Shape()
	if len(s) < 2 || s[len(s)-1] != s[len(s)-2] {
		array.Panicf(op, "a of shape %v is not a stack of square matrices", s)
	}
	if n == 0 {
		m := s[len(s)-1]
		return ops.BroadcastTo(ops.Eye(m, m, 0, a.DType()), s...)
	}
	if n < 0 {
		if dt := a.DType(); dt != array.Float32 && dt != array.Float64 {
			array.Panicf(op, "a of shape %v and dtype %v to the power %d: a negative power needs float32 or float64", s, dt, n)
		}
		a = ops.LinalgInv(a)
		n = -n
	}
	var r *array.Array
	for base := a; ; {
		if n&1 == 1 {
			if r == nil {
				r = base
			} else {
				r = ops.MatMul(r, base)
			}
		}
		n >>= 1
		if n == 0 {
			return r
		}
		base = ops.MatMul(base, base)
	}
}

// Cross returns the cross product of 3-vectors along axis of a and b
// (numpy.cross with axis, MLX's linalg.cross). a and b broadcast against
// each other first, and axis (negative from the end) names an axis of
// the broadcast shape, which must have length 3 there; the result has
// that shape and the promoted dtype.
func Cross(a, b *array.Array, axis int) *array.Array {
	const op = "linalg.Cross"
	if a == nil || b == nil {
		array.Panicf(op, "nil array")
	}
	ab := ops.BroadcastArrays(a, b)
	a, b = ab[0], ab[1]
	s := a.Shape()
	nd := len(s)
	if axis < -nd || axis >= nd {
		array.Panicf(op, "axis %d out of range for the broadcast shape %v", axis, s)
	}
	if axis < 0 {
		axis += nd
	}
	if s[axis] != 3 {
		array.Panicf(op, "axis %d of the broadcast shape %v has length %d: want 3-vectors", axis, s, s[axis])
	}
	at := func(x *array.Array, i int) *array.Array { return ops.SliceAxis(x, axis, ops.R(i, i+1)) }
	a0, a1, a2 := at(a, 0), at(a, 1), at(a, 2)
	b0, b1, b2 := at(b, 0), at(b, 1), at(b, 2)
	return ops.Concatenate([]*array.Array{
		ops.Sub(ops.Mul(a1, b2), ops.Mul(a2, b1)),
		ops.Sub(ops.Mul(a2, b0), ops.Mul(a0, b2)),
		ops.Sub(ops.Mul(a0, b1), ops.Mul(a1, b0)),
	}, axis)
}
