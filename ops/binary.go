package ops

import (
	"math"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/internal/opset"
)

// Binary is the primitive of the elementwise functions of two arrays; Op
// says which. Its inputs have one dtype and broadcast to the output's
// shape; the kernel reads them through zero strides, without a
// BroadcastTo node.
type Binary struct{ Op opset.BinaryOp }

// Name returns the operation's name ("Add").
func (p *Binary) Name() string { return p.Op.String() }

// Eval computes the function on the stream's device.
func (p *Binary) Eval(s array.Stream, in, out []*array.Array) error { return dispatch(p, s, in, out) }

func (p *Binary) evalCPU(in, out []*array.Array) error {
	if a, b, ok := flatPair(in[0], in[1], out[0].Size()); ok {
		st := array.AllocCPU(out[0].NBytes())
		out[0].SetRowMajorData(st)
		return cpu.BinaryFlat(p.Op, in[0].DType(), out[0].Size(), st.Bytes(), a, b)
	}
	shape := out[0].Shape()
	return cpu.Binary(p.Op, alloc(out[0]), bcastBufOf(in[0], shape), bcastBufOf(in[1], shape))
}

func (p *Binary) evalGPU(s array.Stream, in, out []*array.Array) error {
	shape := out[0].Shape()
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		return metal.Binary(p.Op, o, bcastViewOf(in[0], shape), bcastViewOf(in[1], shape))
	})
}

// Equivalent reports whether o is the same function.
func (p *Binary) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// OutputShapes broadcasts the inputs' new shapes.
func (p *Binary) OutputShapes(in []*array.Array) ([][]int, error) {
	return broadcastShape("ops."+p.Name(), in)
}

// VJP multiplies the cotangent by each requested operand's partial
// derivative and sums it back to that operand's shape. Comparisons,
// logical functions, FloorDivide and integer results are piecewise
// constant: zero (nil).
func (p *Binary) VJP(inputs, outputs, cots []*array.Array, argnums []int) []*array.Array {
	res := make([]*array.Array, len(argnums))
	for k, i := range argnums {
		if g := p.chain(i, inputs[0], inputs[1], outputs[0], cots[0]); g != nil {
			res[k] = sumToShape(g, inputs[i].Shape())
		}
	}
	return res
}

// JVP sums each operand's tangent times its partial derivative (the same
// elementwise products as the VJP's), broadcast to the output's shape.
func (p *Binary) JVP(inputs, outputs, tans []*array.Array, argnums []int) []*array.Array {
	var t *array.Array
	for k, i := range argnums {
		t = addTangents(t, p.chain(i, inputs[0], inputs[1], outputs[0], tans[k]))
	}
	return []*array.Array{toShape(t, outputs[0].Shape())}
}

// Vmap applies the function to the whole batch, the operands' batch axes
// aligned at the front.
func (p *Binary) Vmap(inputs []*array.Array, axes []int) ([]*array.Array, []int) {
	return elementwiseVmap(inputs, axes, func(in []*array.Array) *array.Array {
		return binary("ops."+p.Op.String(), p.Op, in[0], in[1])
	})
}

// chain returns g times the partial derivative of y = op(a, b) with
// respect to operand i, elementwise with broadcasting; nil where it is
// zero.
func (p *Binary) chain(i int, a, b, y, g *array.Array) *array.Array {
	if !y.DType().IsInexact() {
		return nil
	}
	switch p.Op {
	case opset.Add:
		return g
	case opset.Sub:
		if i == 0 {
			return g
		}
		return Neg(g)
	case opset.Mul:
		if i == 0 {
			return Mul(g, b)
		}
		return Mul(g, a)
	case opset.Div:
		if i == 0 {
			return Div(g, b)
		}
		return Neg(Mul(g, Div(y, b)))
	case opset.Remainder:
		if i == 0 {
			return g
		}
		return Neg(Mul(g, FloorDivide(a, b)))
	case opset.Pow:
		zero := scalarOf(0, y.DType())
		if i == 0 {
			// b·a^(b-1), taken as 0 where b is 0 so that 0^0 has
			// derivative 0 rather than 0·∞
			return Mul(g, Where(Equal(b, zero), zero, Mul(b, Pow(a, SubScalar(b, 1)))))
		}
		// y·log(a), taken as 0 where a is 0 (there y is 0 or 1 and the
		// one-sided limit is 0 for b > 0), as JAX does
		isZero := Equal(a, zero)
		return Mul(g, Mul(y, Log(Where(isZero, scalarOf(1, y.DType()), a))))
	case opset.Maximum:
		return Mul(g, tieWeight(i == 0, a, b, y.DType()))
	case opset.Minimum:
		return Mul(g, tieWeight(i == 1, a, b, y.DType()))
	case opset.LogAddExp:
		// e^a/(e^a+e^b) = e^(a-y), which cannot overflow
		if i == 0 {
			return Mul(g, Exp(Sub(a, y)))
		}
		return Mul(g, Exp(Sub(b, y)))
	case opset.ArcTan2:
		r2 := Add(Square(a), Square(b))
		if i == 0 {
			return Mul(g, Div(b, r2))
		}
		return Neg(Mul(g, Div(a, r2)))
	case opset.Hypot:
		// a/y and b/y, taken as 0 where y is 0 (the subgradient JAX uses)
		zero := scalarOf(0, y.DType())
		x := a
		if i == 1 {
			x = b
		}
		return Mul(g, Where(Equal(y, zero), zero, Div(x, y)))
	}
	return nil
}

// tieWeight is the share of Maximum's derivative that goes to the larger
// operand, a if first else b: 1 where it is strictly larger, 1/2 where the
// two tie (as MLX and JAX split it), 0 elsewhere. Minimum calls it with
// the roles swapped.
func tieWeight(first bool, a, b *array.Array, dt array.DType) *array.Array {
	win := Greater(a, b)
	if !first {
		win = Less(a, b)
	}
	return Add(AsType(win, dt), MulScalar(AsType(Equal(a, b), dt), 0.5))
}

// binaryDType is the dtype op computes in for operands of dtypes a and b:
// the promoted dtype, made inexact for the float functions, Bool for the
// logical ones, and Int32 for integer arithmetic on two bools.
func binaryDType(name string, op opset.BinaryOp, a, b array.DType) array.DType {
	dt := array.Promote(a, b)
	switch op {
	case opset.Div, opset.LogAddExp, opset.ArcTan2, opset.Hypot:
		dt = floatDType(dt)
	case opset.LogicalAnd, opset.LogicalOr:
		dt = array.Bool
	case opset.FloorDivide, opset.Remainder, opset.Pow, opset.LeftShift, opset.RightShift:
		if dt == array.Bool {
			dt = array.Int32
		}
	}
	if _, ok := op.Result(dt); !ok {
		if a == b {
			array.Panicf(name, "not defined for dtype %v", a)
		}
		array.Panicf(name, "not defined for dtypes %v and %v (promoted to %v)", a, b, dt)
	}
	return dt
}

// binary records op applied to a and b, broadcast together.
func binary(name string, op opset.BinaryOp, a, b *array.Array) *array.Array {
	requireNonNil(name, a, b)
	shape := broadcastPair(name, a, b)
	dt := binaryDType(name, op, a.DType(), b.DType())
	out, _ := op.Result(dt)
	return node(shape, out, &binaryPrims[op], AsType(a, dt), AsType(b, dt))
}

// binaryPrims are the Binary primitives, one per op, shared by every node
// (a primitive never changes): one allocation fewer per operation.
var binaryPrims = func() (ps [opset.NumBinaryOps]Binary) {
	for i := range ps {
		ps[i].Op = opset.BinaryOp(i)
	}
	return ps
}()

// broadcastPair is BroadcastShapes of a's and b's shapes, without copying
// them where one is the answer: equal shapes, or a 0-d operand.
func broadcastPair(name string, a, b *array.Array) []int {
	as, bs := a.RawShape(), b.RawShape()
	switch {
	case len(bs) == 0 || equalInts(as, bs):
		return as
	case len(as) == 0:
		return bs
	}
	return BroadcastShapes(name, as, bs)
}

// flatPair returns the bytes of a and b for cpu.BinaryFlat when both are
// row-major runs of n elements or single elements, as most operands of
// elementwise ops are. An operand of n elements that broadcasts to the
// output's shape has that shape, so row-major means in the output's
// order.
func flatPair(a, b *array.Array, n int) (fa, fb cpu.Flat, ok bool) {
	if fa, ok = flatOf(a, n); !ok {
		return fa, fb, false
	}
	fb, ok = flatOf(b, n)
	return fa, fb, ok
}

// flatOf returns a's elements as a cpu.Flat of n elements, if it is a
// row-major run of n or a single element to repeat.
func flatOf(a *array.Array, n int) (cpu.Flat, bool) {
	if n == 0 {
		return cpu.Flat{}, true
	}
	k := a.Size()
	if k != n && k != 1 || k == n && !a.RowMajor() {
		return cpu.Flat{}, false
	}
	es := a.DType().Size()
	b := a.Storage().Bytes()[a.Offset()*es:]
	if k == n {
		return cpu.Flat{Data: b[:n*es]}, true
	}
	return cpu.Flat{Data: b[:es], Repeat: true}, true
}

// Add returns a + b elementwise, broadcasting a and b together (numpy's
// rule) in their promoted dtype. Integers wrap; for bools Add is "or".
func Add(a, b *array.Array) *array.Array { return binary("ops.Add", opset.Add, a, b) }

// Sub returns a - b elementwise, broadcasting, in the promoted dtype.
// Integers wrap. Two bool arrays are rejected, as in numpy.
func Sub(a, b *array.Array) *array.Array { return binary("ops.Sub", opset.Sub, a, b) }

// Mul returns a * b elementwise, broadcasting, in the promoted dtype.
// Integers wrap; for bools Mul is "and".
func Mul(a, b *array.Array) *array.Array { return binary("ops.Mul", opset.Mul, a, b) }

// Div returns a / b elementwise, broadcasting. Integer and bool operands
// divide in float32 (true division, as in numpy and MLX).
func Div(a, b *array.Array) *array.Array { return binary("ops.Div", opset.Div, a, b) }

// FloorDivide returns floor(a / b) elementwise, broadcasting, in the
// promoted dtype (Int32 for two bools). As in numpy, integer results are
// floored (-7 // 2 is -4); an integer division by zero gives 0 (numpy
// warns and gives 0). Not defined for complex64.
func FloorDivide(a, b *array.Array) *array.Array {
	return binary("ops.FloorDivide", opset.FloorDivide, a, b)
}

// Remainder returns a - b*floor(a/b) elementwise, broadcasting: the
// result has the sign of b, as in numpy (and Python's %). An integer
// remainder by zero gives 0; a float one gives NaN. Not defined for
// complex64.
func Remainder(a, b *array.Array) *array.Array {
	return binary("ops.Remainder", opset.Remainder, a, b)
}

// Pow returns a raised to b elementwise, broadcasting, in the promoted
// dtype (Int32 for two bools). Integers use repeated squaring and wrap. A
// negative integer exponent in an array gives the real power truncated
// toward zero: 1 for the base 1, ±1 for -1, 0 otherwise (MLX's answer).
// numpy raises "Integers to negative integer powers are not allowed"
// instead; fathom cannot, since the exponents are known only when the
// lazy graph runs and the GPU kernels have no way to report a value
// error. PowScalar, whose exponent is known at the call, does raise.
func Pow(a, b *array.Array) *array.Array { return binary("ops.Pow", opset.Pow, a, b) }

// Maximum returns the larger of a and b elementwise, broadcasting; NaN if
// either is NaN (numpy's maximum). Not defined for complex64.
func Maximum(a, b *array.Array) *array.Array {
	return binary("ops.Maximum", opset.Maximum, a, b)
}

// Minimum returns the smaller of a and b elementwise, broadcasting; NaN if
// either is NaN (numpy's minimum). Not defined for complex64.
func Minimum(a, b *array.Array) *array.Array {
	return binary("ops.Minimum", opset.Minimum, a, b)
}

// Equal returns a == b elementwise as a Bool array, comparing in the
// promoted dtype. NaN equals nothing.
func Equal(a, b *array.Array) *array.Array { return binary("ops.Equal", opset.Equal, a, b) }

// NotEqual returns a != b elementwise as a Bool array, comparing in the
// promoted dtype. NaN differs from everything.
func NotEqual(a, b *array.Array) *array.Array {
	return binary("ops.NotEqual", opset.NotEqual, a, b)
}

// Less returns a < b elementwise as a Bool array. Not defined for
// complex64.
func Less(a, b *array.Array) *array.Array { return binary("ops.Less", opset.Less, a, b) }

// LessEqual returns a <= b elementwise as a Bool array. Not defined for
// complex64.
func LessEqual(a, b *array.Array) *array.Array {
	return binary("ops.LessEqual", opset.LessEqual, a, b)
}

// Greater returns a > b elementwise as a Bool array. Not defined for
// complex64.
func Greater(a, b *array.Array) *array.Array {
	return binary("ops.Greater", opset.Greater, a, b)
}

// GreaterEqual returns a >= b elementwise as a Bool array. Not defined
// for complex64.
func GreaterEqual(a, b *array.Array) *array.Array {
	return binary("ops.GreaterEqual", opset.GreaterEqual, a, b)
}

// LogicalAnd returns a && b elementwise as a Bool array; operands are read
// as Bool (non-zero is true).
func LogicalAnd(a, b *array.Array) *array.Array {
	return binary("ops.LogicalAnd", opset.LogicalAnd, a, b)
}

// LogicalOr returns a || b elementwise as a Bool array; operands are read
// as Bool (non-zero is true).
func LogicalOr(a, b *array.Array) *array.Array {
	return binary("ops.LogicalOr", opset.LogicalOr, a, b)
}

// LogAddExp returns log(e^a + e^b) elementwise, broadcasting, without
// overflowing for large operands. Integer and bool operands compute in
// float32.
func LogAddExp(a, b *array.Array) *array.Array {
	return binary("ops.LogAddExp", opset.LogAddExp, a, b)
}

// ArcTan2 returns the angle in (-π, π] of the point (b, a) elementwise
// (numpy's arctan2(a, b)), broadcasting. Integer and bool operands compute
// in float32.
func ArcTan2(a, b *array.Array) *array.Array {
	return binary("ops.ArcTan2", opset.ArcTan2, a, b)
}

// LogicalXor returns a != b elementwise as a Bool array, broadcasting;
// operands are read as Bool (non-zero is true).
func LogicalXor(a, b *array.Array) *array.Array {
	requireNonNil("ops.LogicalXor", a, b)
	BroadcastShapes("ops.LogicalXor", a.Shape(), b.Shape())
	return NotEqual(AsType(a, array.Bool), AsType(b, array.Bool))
}

// DivMod returns FloorDivide(a, b) and Remainder(a, b), numpy's divmod:
// floored quotient and a remainder with the sign of b, so that
// q*b + r == a.
func DivMod(a, b *array.Array) (q, r *array.Array) {
	requireNonNil("ops.DivMod", a, b)
	BroadcastShapes("ops.DivMod", a.Shape(), b.Shape())
	binaryDType("ops.DivMod", opset.FloorDivide, a.DType(), b.DType())
	return FloorDivide(a, b), Remainder(a, b)
}

// Clip limits a to [lo, hi] elementwise, broadcasting all three, as
// numpy's clip: Minimum(Maximum(a, lo), hi) in the promoted dtype, so
// where lo > hi the result is hi, and NaN in any operand gives NaN. A nil
// bound leaves that side open; both nil is an error, as in numpy. See
// ClipScalar for Go-number bounds.
func Clip(a, lo, hi *array.Array) *array.Array {
	const name = "ops.Clip"
	requireNonNil(name, a)
	if lo == nil && hi == nil {
		array.Panicf(name, "both bounds are nil")
	}
	shape, dt := a.Shape(), a.DType()
	for _, b := range []*array.Array{lo, hi} {
		if b != nil {
			shape = BroadcastShapes(name, shape, b.Shape())
			dt = binaryDType(name, opset.Maximum, dt, b.DType())
		}
	}
	if lo != nil {
		a = Maximum(a, lo)
	}
	if hi != nil {
		a = Minimum(a, hi)
	}
	// Maximum and Minimum broadcast a to every operand's shape already;
	// shape and dt were worked out so that bad operands name Clip.
	return a
}

// IsClose reports elementwise whether a and b are equal within
// atol + rtol·|b|, broadcasting, as numpy's isclose: infinities are close
// only to themselves, NaN is close to NaN only with equalNaN. Integer and
// bool operands compare in float32 (numpy: float64). numpy's defaults are
// rtol 1e-5, atol 1e-8. Not defined for complex64.
func IsClose(a, b *array.Array, rtol, atol float64, equalNaN bool) *array.Array {
	const name = "ops.IsClose"
	requireNonNil(name, a, b)
	BroadcastShapes(name, a.Shape(), b.Shape())
	dt := floatDType(array.Promote(a.DType(), b.DType()))
	if dt == array.Complex64 {
		array.Panicf(name, "not defined for dtype %v", dt)
	}
	if rtol < 0 || atol < 0 || math.IsNaN(rtol) || math.IsNaN(atol) {
		array.Panicf(name, "tolerances must be non-negative (rtol %v, atol %v)", rtol, atol)
	}
	x, y := AsType(a, dt), AsType(b, dt)
	tol := AddScalar(MulScalar(Abs(y), rtol), atol)
	close := LogicalAnd(LessEqual(Abs(Sub(x, y)), tol), IsFinite(y))
	close = LogicalOr(close, Equal(x, y))
	if equalNaN {
		close = LogicalOr(close, LogicalAnd(IsNaN(x), IsNaN(y)))
	}
	return close
}

// AllClose reports whether every element of IsClose(a, b, ...) is true,
// as a 0-d Bool array.
func AllClose(a, b *array.Array, rtol, atol float64, equalNaN bool) *array.Array {
	return All(IsClose(a, b, rtol, atol, equalNaN))
}

// ArrayEqual reports whether a and b have the same shape and equal
// elements, as a 0-d Bool array (numpy's array_equal: no broadcasting,
// arrays of different shapes are simply unequal). NaN equals NaN only with
// equalNaN.
func ArrayEqual(a, b *array.Array, equalNaN bool) *array.Array {
	requireNonNil("ops.ArrayEqual", a, b)
	if !equalInts(a.Shape(), b.Shape()) {
		return scalarOf(0, array.Bool)
	}
	eq := Equal(a, b)
	if equalNaN {
		eq = LogicalOr(eq, LogicalAnd(IsNaN(a), IsNaN(b)))
	}
	return All(eq)
}

// Hypot returns sqrt(a² + b²) elementwise, broadcasting, without
// overflowing or underflowing in the squares (numpy's hypot): +Inf if
// either is ±Inf, even with a NaN. Integer and bool operands compute in
// float32; complex64 is not supported.
func Hypot(a, b *array.Array) *array.Array { return binary("ops.Hypot", opset.Hypot, a, b) }

// BitwiseAnd returns a & b elementwise, broadcasting, in the promoted
// dtype: integers and bools only (for bools it is LogicalAnd).
func BitwiseAnd(a, b *array.Array) *array.Array {
	return binary("ops.BitwiseAnd", opset.BitwiseAnd, a, b)
}

// BitwiseOr returns a | b elementwise, broadcasting, in the promoted
// dtype: integers and bools only.
func BitwiseOr(a, b *array.Array) *array.Array {
	return binary("ops.BitwiseOr", opset.BitwiseOr, a, b)
}

// BitwiseXor returns a ^ b elementwise, broadcasting, in the promoted
// dtype: integers and bools only.
func BitwiseXor(a, b *array.Array) *array.Array {
	return binary("ops.BitwiseXor", opset.BitwiseXor, a, b)
}

// LeftShift returns a << b elementwise, broadcasting, in the promoted
// integer dtype (Int32 for two bools); bits shifted out are lost. As in
// numpy, a count that is negative or at least the dtype's width in bits
// gives 0 (C and Metal leave those undefined).
func LeftShift(a, b *array.Array) *array.Array {
	return binary("ops.LeftShift", opset.LeftShift, a, b)
}

// RightShift returns a >> b elementwise, broadcasting, in the promoted
// integer dtype (Int32 for two bools): arithmetic for signed dtypes, so
// the sign is kept. As in numpy, a count that is negative or at least the
// dtype's width in bits gives 0, or -1 for a negative a.
func RightShift(a, b *array.Array) *array.Array {
	return binary("ops.RightShift", opset.RightShift, a, b)
}
