package ops

import (
	"math"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/internal/opset"
)

// Unary is the primitive of the elementwise functions of one array; Op
// says which.
type Unary struct{ Op opset.UnaryOp }

// Name returns the operation's name ("Exp").
func (p *Unary) Name() string { return p.Op.String() }

// Eval computes the function on the stream's device.
func (p *Unary) Eval(s array.Stream, in, out []*array.Array) error { return dispatch(p, s, in, out) }

func (p *Unary) evalCPU(in, out []*array.Array) error {
	// in[0] has out[0]'s size, so flatOf never gives it as Repeat.
	if x, ok := flatOf(in[0], out[0].Size()); ok {
		st := array.AllocCPU(out[0].NBytes())
		out[0].SetRowMajorData(st)
		return cpu.UnaryFlat(p.Op, in[0].DType(), out[0].Size(), st.Bytes(), x.Data)
	}
	return cpu.Unary(p.Op, alloc(out[0]), bufOf(in[0]))
}

func (p *Unary) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		return metal.Unary(p.Op, o, viewOf(in[0]))
	})
}

// Equivalent reports whether o is the same function.
func (p *Unary) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// OutputShapes is the input's shape.
func (p *Unary) OutputShapes(in []*array.Array) ([][]int, error) { return sameShape(in) }

// VJP multiplies the cotangent by the derivative (for Real, Imag and
// Angle of complex64, its transpose: see complexPartVJP). Rounding, Sign,
// the predicates and Angle of real numbers are piecewise constant, and
// functions with integer or bool results have no derivative: their
// cotangents are zero (nil).
func (p *Unary) VJP(inputs, outputs, cots []*array.Array, argnums []int) []*array.Array {
	if p.complexToReal(inputs[0]) {
		return []*array.Array{complexPartVJP(p.Op, inputs[0], cots[0])}
	}
	return []*array.Array{p.chain(inputs[0], outputs[0], cots[0])}
}

// JVP multiplies the tangent by the derivative, which is elementwise, so
// the same product as the VJP's.
func (p *Unary) JVP(inputs, outputs, tans []*array.Array, argnums []int) []*array.Array {
	if p.complexToReal(inputs[0]) {
		return []*array.Array{complexPartJVP(p.Op, inputs[0], tans[0])}
	}
	return []*array.Array{p.chain(inputs[0], outputs[0], tans[0])}
}

// complexToReal reports whether p is Real, Imag or Angle of a complex64
// x: maps from complex to real numbers, whose VJP is not the JVP's
// product (see complexPartVJP).
func (p *Unary) complexToReal(x *array.Array) bool {
	switch p.Op {
	case opset.Real, opset.Imag, opset.Angle:
		return x.DType() == array.Complex64
	}
	return false
}

// Vmap applies the function to the whole batch: elementwise, so the batch
// axis stays where it is.
func (p *Unary) Vmap(inputs []*array.Array, axes []int) ([]*array.Array, []int) {
	return []*array.Array{unary(p.Op, inputs[0])}, axes[:1]
}

// chain returns g times the derivative of y = op(x) at x, elementwise; nil
// where that derivative is zero. Where the derivative is a simple function
// of y (Exp, Tanh, Sigmoid, ...) it reuses y instead of recomputing.
func (p *Unary) chain(x, y, g *array.Array) *array.Array {
	if !y.DType().IsInexact() {
		return nil
	}
	switch p.Op {
	case opset.Neg:
		return Neg(g)
	case opset.Conj:
		return Conj(g)
	case opset.Abs:
		if x.DType() == array.Complex64 {
			// conj(x)/|x|: the convention of Real, Imag and Angle
			// (JAX's), whose real part times a tangent t is the
			// directional derivative Re(conj(x)·t)/|x|. x/|x| (MLX's
			// VJP) gave the JVP along an imaginary tangent the wrong
			// sign.
			return Mul(g, Div(Conj(x), AsType(y, array.Complex64)))
		}
		return Mul(g, Sign(x))
	case opset.Exp:
		return Mul(g, y)
	case opset.Expm1:
		return Mul(g, AddScalar(y, 1))
	case opset.Log:
		return Div(g, x)
	case opset.Log1p:
		return Div(g, AddScalar(x, 1))
	case opset.Log2:
		return Div(g, MulScalar(x, math.Ln2))
	case opset.Log10:
		return Div(g, MulScalar(x, math.Ln10))
	case opset.Sqrt:
		return Div(g, MulScalar(y, 2))
	case opset.Rsqrt:
		// d x^(-1/2) = -x^(-3/2)/2 = -y³/2
		return Mul(g, MulScalar(Mul(Square(y), y), -0.5))
	case opset.Square:
		return Mul(g, MulScalar(x, 2))
	case opset.Reciprocal:
		return Mul(g, Neg(Square(y)))
	case opset.Sin:
		return Mul(g, Cos(x))
	case opset.Cos:
		return Mul(g, Neg(Sin(x)))
	case opset.Tan:
		return Mul(g, AddScalar(Square(y), 1))
	case opset.ArcSin:
		return Mul(g, Rsqrt(oneMinus(Square(x))))
	case opset.ArcCos:
		return Mul(g, Neg(Rsqrt(oneMinus(Square(x)))))
	case opset.ArcTan:
		return Div(g, AddScalar(Square(x), 1))
	case opset.ArcSinh:
		return Mul(g, Rsqrt(AddScalar(Square(x), 1)))
	case opset.ArcCosh:
		return Mul(g, Rsqrt(SubScalar(Square(x), 1)))
	case opset.ArcTanh:
		return Div(g, oneMinus(Square(x)))
	case opset.Sinh:
		return Mul(g, Cosh(x))
	case opset.Cosh:
		return Mul(g, Sinh(x))
	case opset.Tanh:
		return Mul(g, oneMinus(Square(y)))
	case opset.Sigmoid:
		return Mul(g, Mul(y, oneMinus(y)))
	case opset.Erf:
		return Mul(g, MulScalar(Exp(Neg(Square(x))), 2/math.Sqrt(math.Pi)))
	case opset.ErfInv:
		return Mul(g, MulScalar(Exp(Square(y)), math.Sqrt(math.Pi)/2))
	}
	return nil
}

// requireNonNil rejects nil operands, which would otherwise panic with a
// nil dereference.
func requireNonNil(op string, xs ...*array.Array) {
	for i, x := range xs {
		if x == nil {
			array.Panicf(op, "operand %d is nil", i)
		}
	}
}

// unary records op applied to a. Float functions of integer and bool
// arrays compute in float32; LogicalNot reads its operand as Bool.
func unary(op opset.UnaryOp, a *array.Array) *array.Array {
	name := unaryNames[op]
	requireNonNil(name, a)
	dt := a.DType()
	switch {
	case op == opset.LogicalNot:
		dt = array.Bool
	case op.IsFloatFunc():
		dt = floatDType(dt)
	}
	out, ok := op.Result(dt)
	if !ok {
		array.Panicf(name, "not defined for dtype %v", a.DType())
	}
	return node(a.RawShape(), out, &unaryPrims[op], AsType(a, dt))
}

// unaryPrims are the Unary primitives, one per op, shared by every node
// as binaryPrims are, and unaryNames their functions' names, made once
// rather than at every call.
var (
	unaryPrims = func() (ps [opset.NumUnaryOps]Unary) {
		for i := range ps {
			ps[i].Op = opset.UnaryOp(i)
		}
		return ps
	}()
	unaryNames = func() (ns [opset.NumUnaryOps]string) {
		for i := range ns {
			ns[i] = "ops." + opset.UnaryOp(i).String()
		}
		return ns
	}()
)

// Neg returns -a elementwise. Integers wrap (the negation of the most
// negative value is itself, and uint8 wraps modulo 256). Bool arrays are
// rejected, as in numpy: use LogicalNot.
func Neg(a *array.Array) *array.Array { return unary(opset.Neg, a) }

// Abs returns |a| elementwise, in a's dtype; the modulus of a complex64
// array is float32. Bool arrays are returned unchanged.
func Abs(a *array.Array) *array.Array { return unary(opset.Abs, a) }

// Sign returns -1, 0 or 1 by the sign of each element, in a's dtype; NaN
// stays NaN and -0 gives 0. Not defined for complex64.
func Sign(a *array.Array) *array.Array { return unary(opset.Sign, a) }

// Exp returns e^a elementwise. Integer and bool arrays compute in float32.
func Exp(a *array.Array) *array.Array { return unary(opset.Exp, a) }

// Expm1 returns e^a - 1 elementwise, accurate for small a. Integer and
// bool arrays compute in float32.
func Expm1(a *array.Array) *array.Array { return unary(opset.Expm1, a) }

// Log returns the natural logarithm of a elementwise (NaN below 0, -Inf at
// 0). Integer and bool arrays compute in float32.
func Log(a *array.Array) *array.Array { return unary(opset.Log, a) }

// Log1p returns log(1 + a) elementwise, accurate for small a. Integer and
// bool arrays compute in float32.
func Log1p(a *array.Array) *array.Array { return unary(opset.Log1p, a) }

// Log2 returns the base-2 logarithm of a elementwise. Integer and bool
// arrays compute in float32.
func Log2(a *array.Array) *array.Array { return unary(opset.Log2, a) }

// Log10 returns the base-10 logarithm of a elementwise. Integer and bool
// arrays compute in float32; complex64 is not supported.
func Log10(a *array.Array) *array.Array { return unary(opset.Log10, a) }

// Sqrt returns the square root of a elementwise (NaN below 0; the
// principal root for complex64). Integer and bool arrays compute in
// float32.
func Sqrt(a *array.Array) *array.Array { return unary(opset.Sqrt, a) }

// Rsqrt returns 1/sqrt(a) elementwise. Integer and bool arrays compute in
// float32.
func Rsqrt(a *array.Array) *array.Array { return unary(opset.Rsqrt, a) }

// Square returns a*a elementwise, in a's dtype (integers wrap).
func Square(a *array.Array) *array.Array { return unary(opset.Square, a) }

// Reciprocal returns 1/a elementwise. Integer and bool arrays compute in
// float32 (numpy would divide integers).
func Reciprocal(a *array.Array) *array.Array { return unary(opset.Reciprocal, a) }

// Sin returns the sine of a (radians) elementwise. Integer and bool arrays
// compute in float32.
func Sin(a *array.Array) *array.Array { return unary(opset.Sin, a) }

// Cos returns the cosine of a (radians) elementwise. Integer and bool
// arrays compute in float32.
func Cos(a *array.Array) *array.Array { return unary(opset.Cos, a) }

// Tan returns the tangent of a (radians) elementwise. Integer and bool
// arrays compute in float32.
func Tan(a *array.Array) *array.Array { return unary(opset.Tan, a) }

// ArcSin returns the inverse sine of a elementwise (NaN outside [-1, 1]).
// Integer and bool arrays compute in float32; complex64 is not supported.
func ArcSin(a *array.Array) *array.Array { return unary(opset.ArcSin, a) }

// ArcCos returns the inverse cosine of a elementwise (NaN outside
// [-1, 1]). Integer and bool arrays compute in float32; complex64 is not
// supported.
func ArcCos(a *array.Array) *array.Array { return unary(opset.ArcCos, a) }

// ArcTan returns the inverse tangent of a elementwise. Integer and bool
// arrays compute in float32; complex64 is not supported.
func ArcTan(a *array.Array) *array.Array { return unary(opset.ArcTan, a) }

// ArcSinh returns the inverse hyperbolic sine of a elementwise. Integer
// and bool arrays compute in float32; complex64 is not supported.
func ArcSinh(a *array.Array) *array.Array { return unary(opset.ArcSinh, a) }

// ArcCosh returns the inverse hyperbolic cosine of a elementwise: NaN below
// 1. Integer and bool arrays compute in float32; complex64 is not
// supported.
func ArcCosh(a *array.Array) *array.Array { return unary(opset.ArcCosh, a) }

// ArcTanh returns the inverse hyperbolic tangent of a elementwise: ±Inf at
// ±1, NaN outside [-1, 1]. Integer and bool arrays compute in float32;
// complex64 is not supported.
func ArcTanh(a *array.Array) *array.Array { return unary(opset.ArcTanh, a) }

// Sinh returns the hyperbolic sine of a elementwise. Integer and bool
// arrays compute in float32.
func Sinh(a *array.Array) *array.Array { return unary(opset.Sinh, a) }

// Cosh returns the hyperbolic cosine of a elementwise. Integer and bool
// arrays compute in float32.
func Cosh(a *array.Array) *array.Array { return unary(opset.Cosh, a) }

// Tanh returns the hyperbolic tangent of a elementwise. Integer and bool
// arrays compute in float32.
func Tanh(a *array.Array) *array.Array { return unary(opset.Tanh, a) }

// Sigmoid returns 1/(1 + e^-a) elementwise. Integer and bool arrays
// compute in float32; complex64 is not supported.
func Sigmoid(a *array.Array) *array.Array { return unary(opset.Sigmoid, a) }

// Erf returns the error function of a elementwise. Integer and bool arrays
// compute in float32; complex64 is not supported.
func Erf(a *array.Array) *array.Array { return unary(opset.Erf, a) }

// ErfInv returns the inverse error function of a elementwise: ±Inf at ±1,
// NaN outside [-1, 1]. Integer and bool arrays compute in float32;
// complex64 is not supported.
func ErfInv(a *array.Array) *array.Array { return unary(opset.ErfInv, a) }

// Floor returns the largest integer not above each element, in a's dtype
// (integer and bool arrays are returned unchanged in value). Not defined
// for complex64.
func Floor(a *array.Array) *array.Array { return unary(opset.Floor, a) }

// Ceil returns the smallest integer not below each element, in a's dtype
// (integer and bool arrays are returned unchanged in value). Not defined
// for complex64.
func Ceil(a *array.Array) *array.Array { return unary(opset.Ceil, a) }

// Round returns the nearest integer to each element, halves to even as in
// numpy (0.5 gives 0, 1.5 gives 2), in a's dtype. Not defined for
// complex64.
func Round(a *array.Array) *array.Array { return unary(opset.Round, a) }

// Trunc returns the integer part of each element, rounding towards zero
// (numpy's trunc), in a's dtype; integer and bool arrays are returned
// unchanged in value. Not defined for complex64.
func Trunc(a *array.Array) *array.Array { return unary(opset.Trunc, a) }

// Invert returns the bitwise not of a elementwise (numpy's invert, ~a):
// for integers ^a (-a-1 for signed ones), for bools the logical not.
// Float and complex64 arrays are rejected.
func Invert(a *array.Array) *array.Array { return unary(opset.Invert, a) }

// LogicalNot returns a == 0 elementwise as a Bool array.
func LogicalNot(a *array.Array) *array.Array { return unary(opset.LogicalNot, a) }

// IsNaN reports elementwise whether a is NaN (for complex64, either part),
// as a Bool array; false everywhere for integer and bool arrays.
func IsNaN(a *array.Array) *array.Array { return unary(opset.IsNaN, a) }

// IsInf reports elementwise whether a is +Inf or -Inf (for complex64,
// either part), as a Bool array; false everywhere for integer and bool
// arrays.
func IsInf(a *array.Array) *array.Array { return unary(opset.IsInf, a) }

// IsFinite reports elementwise whether a is neither NaN nor ±Inf (for
// complex64, both parts), as a Bool array; true everywhere for integer and
// bool arrays. It is LogicalNot(IsNaN(a) || IsInf(a)), which compile fuses
// into one kernel.
func IsFinite(a *array.Array) *array.Array {
	requireNonNil("ops.IsFinite", a)
	return LogicalNot(LogicalOr(IsNaN(a), IsInf(a)))
}

// IsPosInf reports elementwise whether a is +Inf, as a Bool array; false
// everywhere for integer and bool arrays. Not defined for complex64, as in
// numpy.
func IsPosInf(a *array.Array) *array.Array { return signedInf("ops.IsPosInf", a, 1) }

// IsNegInf reports elementwise whether a is -Inf, as a Bool array; false
// everywhere for integer and bool arrays. Not defined for complex64, as in
// numpy.
func IsNegInf(a *array.Array) *array.Array { return signedInf("ops.IsNegInf", a, -1) }

func signedInf(name string, a *array.Array, sign float64) *array.Array {
	requireNonNil(name, a)
	if a.DType() == array.Complex64 {
		array.Panicf(name, "not defined for dtype %v", a.DType())
	}
	if !a.DType().IsInexact() {
		return IsInf(a)
	}
	return EqualScalar(a, math.Inf(int(sign)))
}

// Degrees converts angles from radians to degrees elementwise (a·180/π).
// Integer and bool arrays compute in float32; complex64 is not supported.
func Degrees(a *array.Array) *array.Array { return angleScale("ops.Degrees", a, 180/math.Pi) }

// Radians converts angles from degrees to radians elementwise (a·π/180).
// Integer and bool arrays compute in float32; complex64 is not supported.
func Radians(a *array.Array) *array.Array { return angleScale("ops.Radians", a, math.Pi/180) }

func angleScale(name string, a *array.Array, f float64) *array.Array {
	requireNonNil(name, a)
	if a.DType() == array.Complex64 {
		array.Panicf(name, "not defined for dtype %v", a.DType())
	}
	return MulScalar(AsType(a, floatDType(a.DType())), f)
}

// RoundDecimals rounds a to the given number of decimals, halves to even,
// as numpy's round(a, decimals): a·10^d is rounded and divided by 10^d
// (for negative d, a/10^-d is rounded and multiplied back), in a's dtype,
// so float results carry that dtype's representation error exactly as
// numpy's do. Integer arrays are unchanged for d >= 0 and round exactly,
// halves to even, to a multiple of 10^-d otherwise (0 when 10^-d exceeds
// the dtype's range). Round keeps its one-argument signature for its
// callers; RoundDecimals(a, 0) is Round(a). Not defined for complex64.
func RoundDecimals(a *array.Array, decimals int) *array.Array {
	const name = "ops.RoundDecimals"
	requireNonNil(name, a)
	dt := a.DType()
	if dt == array.Complex64 {
		array.Panicf(name, "not defined for dtype %v", dt)
	}
	switch {
	case decimals == 0 || (!dt.IsInexact() && decimals > 0):
		return Round(a)
	case dt.IsInexact() && decimals > 0:
		f := math.Pow(10, float64(decimals))
		return DivScalar(Round(MulScalar(a, f)), f)
	case dt.IsInexact():
		f := math.Pow(10, float64(-decimals))
		return MulScalar(Round(DivScalar(a, f)), f)
	}
	p := math.Pow(10, float64(-decimals))
	if _, hi, _ := intRange(dt); p >= hi {
		return ZerosLike(a)
	}
	q := FloorDivideScalar(a, p)
	r := Sub(a, MulScalar(q, p))
	// round up when r > p - r, or on a tie when q is odd: halves to even
	// without forming 2r, which could overflow
	half := Neg(SubScalar(r, p))
	up := LogicalOr(Greater(r, half), LogicalAnd(Equal(r, half), NotEqualScalar(RemainderScalar(q, 2), 0)))
	return MulScalar(Add(q, AsType(up, dt)), p)
}

// NanToNum replaces NaN by nan, +Inf by posinf and -Inf by neginf
// elementwise, as numpy's nan_to_num. posinf = +Inf and neginf = -Inf (a
// replacement that would change nothing) stand for numpy's defaults, the
// largest and the most negative finite value of a's dtype. The
// replacements take a's dtype (weakly typed); integer and bool arrays are
// returned unchanged. Not defined for complex64.
func NanToNum(a *array.Array, nan, posinf, neginf float64) *array.Array {
	const name = "ops.NanToNum"
	requireNonNil(name, a)
	dt := a.DType()
	if dt == array.Complex64 {
		array.Panicf(name, "not defined for dtype %v", dt)
	}
	if !dt.IsInexact() {
		return a
	}
	top := maxFinite(dt)
	if math.IsInf(posinf, 1) {
		posinf = top
	}
	if math.IsInf(neginf, -1) {
		neginf = -top
	}
	out := Where(IsNaN(a), scalarOf(nan, dt), a)
	out = Where(EqualScalar(a, math.Inf(1)), scalarOf(posinf, dt), out)
	return Where(EqualScalar(a, math.Inf(-1)), scalarOf(neginf, dt), out)
}

// maxFinite is the largest finite value of a float dtype.
func maxFinite(dt array.DType) float64 {
	switch dt {
	case array.Float16:
		return 65504
	case array.BFloat16:
		return 0x1.fep127
	case array.Float32:
		return math.MaxFloat32
	}
	return math.MaxFloat64
}
