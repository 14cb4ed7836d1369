package nn

import (
	"math"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// Fn makes a function of one array a Layer, so activations sit in a
// Sequential: nn.Fn(nn.ReLU), or nn.Fn(func(x *array.Array) *array.Array
// { return nn.LeakyReLU(x, 0.2) }).
type Fn func(x *array.Array) *array.Array

// Forward applies f to x.
func (f Fn) Forward(x *array.Array) *array.Array {
	if f == nil {
		array.Panicf("nn.Fn", "nil function")
	}
	return f(x)
}

func act(op string, x *array.Array) {
	checkIn(op, x)
	if !x.DType().IsFloat() {
		array.Panicf(op, "input shape %v of dtype %v: want a float dtype", x.Shape(), x.DType())
	}
}

// ReLU is max(x, 0).
func ReLU(x *array.Array) *array.Array {
	act("nn.ReLU", x)
	return ops.MaximumScalar(x, 0)
}

// LeakyReLU is x for x > 0 and slope·x otherwise (PyTorch's default slope
// is 0.01).
func LeakyReLU(x *array.Array, slope float64) *array.Array {
	act("nn.LeakyReLU", x)
	return ops.Where(ops.GreaterScalar(x, 0), x, ops.MulScalar(x, slope))
}

// ELU is x for x > 0 and alpha·(exp(x)-1) otherwise.
func ELU(x *array.Array, alpha float64) *array.Array {
	act("nn.ELU", x)
	// exp of the clamped x: the branch Where drops must stay finite, or
	// its zero cotangent times an infinite derivative makes a NaN
	neg := ops.MulScalar(ops.Expm1(ops.MinimumScalar(x, 0)), alpha)
	return ops.Where(ops.GreaterScalar(x, 0), x, neg)
}

// GELU is x·Φ(x), Φ the standard normal distribution function (the exact
// form; PyTorch's gelu with approximate="none").
func GELU(x *array.Array) *array.Array {
	act("nn.GELU", x)
	phi := ops.MulScalar(ops.AddScalar(ops.Erf(ops.MulScalar(x, 1/math.Sqrt2)), 1), 0.5)
	return ops.Mul(x, phi)
}

// GELUTanh is the tanh approximation of GELU,
// x/2·(1+tanh(sqrt(2/π)·(x+0.044715·x³))) (PyTorch's approximate="tanh").
func GELUTanh(x *array.Array) *array.Array {
	act("nn.GELUTanh", x)
	inner := ops.MulScalar(ops.Add(x, ops.MulScalar(ops.Mul(ops.Square(x), x), 0.044715)), math.Sqrt(2/math.Pi))
	return ops.Mul(ops.MulScalar(x, 0.5), ops.AddScalar(ops.Tanh(inner), 1))
}

// SiLU is x·sigmoid(x) (swish).
func SiLU(x *array.Array) *array.Array {
	act("nn.SiLU", x)
	return ops.Mul(x, ops.Sigmoid(x))
}

// Softplus is log(1+exp(x)), computed without overflow.
func Softplus(x *array.Array) *array.Array {
	act("nn.Softplus", x)
	return ops.LogAddExpScalar(x, 0)
}

// Mish is x·tanh(softplus(x)).
func Mish(x *array.Array) *array.Array {
	act("nn.Mish", x)
	return ops.Mul(x, ops.Tanh(Softplus(x)))
}

// Sigmoid is 1/(1+exp(-x)).
func Sigmoid(x *array.Array) *array.Array {
	act("nn.Sigmoid", x)
	return ops.Sigmoid(x)
}

// Tanh is the hyperbolic tangent.
func Tanh(x *array.Array) *array.Array {
	act("nn.Tanh", x)
	return ops.Tanh(x)
}

// Softmax is exp(x)/sum(exp(x)) along axis (negative counts from the end).
func Softmax(x *array.Array, axis int) *array.Array {
	act("nn.Softmax", x)
	return ops.Softmax(x, axis)
}

// LogSoftmax is x - logsumexp(x) along axis.
func LogSoftmax(x *array.Array, axis int) *array.Array {
	act("nn.LogSoftmax", x)
	return ops.LogSoftmax(x, axis)
}
