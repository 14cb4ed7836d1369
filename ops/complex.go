package ops

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/opset"
)

// Real returns the real part of a complex64 array as float32. A real
// array is returned as it is (numpy and MLX).
func Real(a *array.Array) *array.Array {
	requireNonNil("ops.Real", a)
	if a.DType() != array.Complex64 {
		return a
	}
	return unary(opset.Real, a)
}

// Imag returns the imaginary part of a complex64 array as float32. For a
// real array it is zeros of a's shape and dtype (numpy and MLX).
func Imag(a *array.Array) *array.Array {
	requireNonNil("ops.Imag", a)
	if a.DType() != array.Complex64 {
		return ZerosLike(a)
	}
	return unary(opset.Imag, a)
}

// Conj returns the complex conjugate of a complex64 array. A real array
// is returned as it is (numpy and MLX).
func Conj(a *array.Array) *array.Array {
	requireNonNil("ops.Conj", a)
	if a.DType() != array.Complex64 {
		return a
	}
	return unary(opset.Conj, a)
}

// Angle returns the argument atan2(imag, real) of each element, as
// numpy's angle: float32 for complex64, in [-π, π] (-π only for a
// negative real part with imaginary part -0). A real element's argument
// is 0, or π for negative values and -0, NaN for NaN; real floats keep
// their dtype and integer and bool arrays give float32.
//
// Its derivative at a complex z follows the convention of Real, Imag and
// complex multiplication (JAX's): the cotangent g of the angle becomes
// -i·g·conj(z)/|z|², NaN at z = 0. A real argument's derivative is 0.
func Angle(a *array.Array) *array.Array {
	requireNonNil("ops.Angle", a)
	return unary(opset.Angle, AsType(a, floatDType(a.DType())))
}

// complexPartVJP is the cotangent, complex64, of the input z of Real,
// Imag or Angle for the cotangent g of their real result: the transpose
// of the JVP under the pairing Re(Σ t·c) that complex multiplication's
// rule g·b assumes (JAX's): complex(g, 0) for Real, complex(0, -g) for
// Imag, -i·g·conj(z)/|z|² for Angle.
func complexPartVJP(op opset.UnaryOp, z, g *array.Array) *array.Array {
	gc := AsType(g, array.Complex64)
	switch op {
	case opset.Real:
		return gc
	case opset.Imag:
		return Mul(gc, minusI())
	}
	return Mul(gc, Div(Mul(Conj(z), minusI()), AsType(Square(Abs(z)), array.Complex64)))
}

// complexPartJVP is the tangent of Real, Imag or Angle for the complex64
// tangent t of their input z: Re(t), Im(t), Im(conj(z)·t)/|z|².
func complexPartJVP(op opset.UnaryOp, z, t *array.Array) *array.Array {
	switch op {
	case opset.Real:
		return Real(t)
	case opset.Imag:
		return Imag(t)
	}
	return Div(Imag(Mul(Conj(z), t)), Square(Abs(z)))
}

func minusI() *array.Array { return array.Scalar(complex64(complex(0, -1))) }
