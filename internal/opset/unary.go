package opset

import (
	"strconv"

	"github.com/fathom-go/fathom/array"
)

// UnaryOp names an elementwise function of one operand.
type UnaryOp uint8

// The unary operations, then their count.
const (
	Neg        UnaryOp = iota // -x (integers wrap)
	Abs                       // |x|; the modulus (float32) of a complex64
	Sign                      // -1, 0 or 1; NaN for NaN
	Exp                       // e^x
	Expm1                     // e^x - 1, accurate near 0
	Log                       // natural logarithm
	Log1p                     // log(1 + x), accurate near 0
	Log2                      // base-2 logarithm
	Log10                     // base-10 logarithm
	Sqrt                      // square root
	Rsqrt                     // 1 / sqrt(x)
	Square                    // x * x
	Reciprocal                // 1 / x
	Sin                       // sine
	Cos                       // cosine
	Tan                       // tangent
	ArcSin                    // inverse sine
	ArcCos                    // inverse cosine
	ArcTan                    // inverse tangent
	ArcSinh                   // inverse hyperbolic sine
	ArcCosh                   // inverse hyperbolic cosine (NaN below 1)
	ArcTanh                   // inverse hyperbolic tangent (±Inf at ±1)
	Sinh                      // hyperbolic sine
	Cosh                      // hyperbolic cosine
	Tanh                      // hyperbolic tangent
	Sigmoid                   // 1 / (1 + e^-x)
	Erf                       // error function
	ErfInv                    // inverse error function
	Floor                     // largest integer <= x
	Ceil                      // smallest integer >= x
	Round                     // nearest integer, halves to even (numpy)
	Trunc                     // the integer part, towards zero
	Invert                    // bitwise not (integers); logical not (bools)
	Conj                      // complex conjugate (complex64 only)
	Real                      // real part (complex64 to float32)
	Imag                      // imaginary part (complex64 to float32)
	Angle                     // argument atan2(im, re): complex64 to float32; 0 or π for real floats
	LogicalNot                // x == 0, as Bool
	IsNaN                     // x is NaN (either part of a complex), as Bool
	IsInf                     // x is ±Inf (either part of a complex), as Bool

	NumUnaryOps // not an operation: the number of them
)

var unaryNames = [NumUnaryOps]string{
	"Neg", "Abs", "Sign", "Exp", "Expm1", "Log", "Log1p", "Log2", "Log10", "Sqrt", "Rsqrt", "Square", "Reciprocal",
	"Sin", "Cos", "Tan", "ArcSin", "ArcCos", "ArcTan", "ArcSinh", "ArcCosh", "ArcTanh",
	"Sinh", "Cosh", "Tanh", "Sigmoid", "Erf", "ErfInv",
	"Floor", "Ceil", "Round", "Trunc", "Invert", "Conj", "Real", "Imag", "Angle", "LogicalNot", "IsNaN", "IsInf",
}

// String returns the operation's name ("Exp").
func (op UnaryOp) String() string {
	if op < NumUnaryOps {
		return unaryNames[op]
	}
	return "UnaryOp(" + strconv.Itoa(int(op)) + ")"
}

// IsFloatFunc reports whether op is a function defined only on inexact
// values (Exp, Sin, Reciprocal, ...): callers convert integer and bool
// operands to a float type first.
func (op UnaryOp) IsFloatFunc() bool {
	return op >= Exp && op <= ErfInv && op != Square
}

// Result returns the dtype of op applied to an operand of dtype dt, and
// whether op is defined for dt. Integers and bools take Neg (integers
// only), Abs, Sign, Square, Floor, Ceil, Round and Trunc, which keep the dtype,
// and the predicates, which give Bool. Complex64 takes Neg, Square,
// Reciprocal, Sqrt, Rsqrt, Exp, Log, Log2, the trigonometric and
// hyperbolic functions (not their inverses), Abs (giving Float32) and the
// predicates. Invert takes integers and bools only. Conj, Real and Imag
// take complex64 only (package ops returns real operands themselves or
// their zeros), Real and Imag giving Float32; Angle takes the floats and
// complex64 (giving Float32).
func (op UnaryOp) Result(dt array.DType) (array.DType, bool) {
	if op >= NumUnaryOps || !dt.Valid() {
		return 0, false
	}
	switch op {
	case LogicalNot, IsNaN, IsInf:
		return array.Bool, true
	}
	switch op {
	case Invert:
		if dt == array.Bool || dt.IsInteger() {
			return dt, true
		}
		return 0, false
	case Conj:
		return dt, dt == array.Complex64
	case Real, Imag:
		return array.Float32, dt == array.Complex64
	case Angle:
		if dt == array.Complex64 {
			return array.Float32, true
		}
		return dt, dt.IsFloat()
	}
	switch {
	case dt.IsFloat():
		return dt, true
	case dt == array.Complex64:
		switch op {
		case Abs:
			return array.Float32, true
		case Neg, Square, Reciprocal, Sqrt, Rsqrt, Exp, Log, Log2, Sin, Cos, Tan, Sinh, Cosh, Tanh:
			return dt, true
		}
		return 0, false
	case op == Neg && dt == array.Bool:
		return 0, false
	}
	switch op {
	case Neg, Abs, Sign, Square, Floor, Ceil, Round, Trunc:
		return dt, true
	}
	return 0, false
}

// Supported reports whether device d has op's kernel for dt: Result
// accepts dt, d has dt (HasDType), and, on the GPU, dt is not complex64
// for the trigonometric and hyperbolic functions, which Metal's complex
// kernels lack.
func (op UnaryOp) Supported(d array.DeviceType, dt array.DType) bool {
	if _, ok := op.Result(dt); !ok || !HasDType(d, dt) {
		return false
	}
	if d == array.DeviceGPU && dt == array.Complex64 {
		switch op {
		case Sin, Cos, Tan, Sinh, Cosh, Tanh:
			return false
		}
	}
	return true
}
