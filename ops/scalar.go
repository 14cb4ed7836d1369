package ops

import (
	"math"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/opset"
)

// scalarBinary records op applied to a and the weakly typed scalar v: v
// takes a's dtype (see scalarDType), so an int32 array plus 2 stays int32
// while plus 2.5 gives float32.
func scalarBinary(name string, op opset.BinaryOp, a *array.Array, v float64) *array.Array {
	requireNonNil(name, a)
	dt := scalarDType(a.DType(), v)
	if lo, hi, ok := intRange(dt); ok && (v < lo || v >= hi) {
		array.Panicf(name, "%v does not fit dtype %v", v, dt)
	}
	return binary(name, op, AsType(a, dt), scalarOf(v, dt))
}

// intRange returns the range [lo, hi) of an integer dtype as float64.
func intRange(dt array.DType) (lo, hi float64, ok bool) {
	switch dt {
	case array.Uint8:
		return 0, 256, true
	case array.Int32:
		return math.MinInt32, -math.MinInt32, true
	case array.Int64:
		return math.MinInt64, -math.MinInt64, true
	case array.Int8:
		return math.MinInt8, 1 << 7, true
	case array.Int16:
		return math.MinInt16, 1 << 15, true
	case array.Uint16:
		return 0, 1 << 16, true
	case array.Uint32:
		return 0, 1 << 32, true
	case array.Uint64:
		return 0, 1 << 64, true
	}
	return 0, 0, false
}

// AddScalar returns a + v elementwise. v is weakly typed: the result keeps
// a's dtype unless v has a fraction and a is an integer or bool array,
// which gives float32 (bool arrays with a whole v give int32). A whole v
// that does not fit an integer dtype is an error.
func AddScalar(a *array.Array, v float64) *array.Array {
	return scalarBinary("ops.AddScalar", opset.Add, a, v)
}

// SubScalar returns a - v elementwise, with v weakly typed as in
// AddScalar.
func SubScalar(a *array.Array, v float64) *array.Array {
	return scalarBinary("ops.SubScalar", opset.Sub, a, v)
}

// MulScalar returns a * v elementwise, with v weakly typed as in
// AddScalar.
func MulScalar(a *array.Array, v float64) *array.Array {
	return scalarBinary("ops.MulScalar", opset.Mul, a, v)
}

// DivScalar returns a / v elementwise, with v weakly typed as in
// AddScalar; integer and bool arrays divide in float32, as in Div.
func DivScalar(a *array.Array, v float64) *array.Array {
	return scalarBinary("ops.DivScalar", opset.Div, a, v)
}

// PowScalar returns a raised to v elementwise, with v weakly typed as in
// AddScalar: an integer array to a whole power stays integer (see Pow).
// A negative whole v with an integer or bool array is an error, as in
// numpy.
func PowScalar(a *array.Array, v float64) *array.Array {
	if v < 0 && a != nil && !scalarDType(a.DType(), v).IsInexact() {
		array.Panicf("ops.PowScalar", "integers to negative integer powers are not allowed (dtype %v, exponent %v), as in numpy: use a float array", a.DType(), v)
	}
	return scalarBinary("ops.PowScalar", opset.Pow, a, v)
}

// MaximumScalar returns the larger of a and v elementwise (NaN where
// either is NaN), with v weakly typed as in AddScalar.
func MaximumScalar(a *array.Array, v float64) *array.Array {
	return scalarBinary("ops.MaximumScalar", opset.Maximum, a, v)
}

// MinimumScalar returns the smaller of a and v elementwise (NaN where
// either is NaN), with v weakly typed as in AddScalar.
func MinimumScalar(a *array.Array, v float64) *array.Array {
	return scalarBinary("ops.MinimumScalar", opset.Minimum, a, v)
}

// FloorDivideScalar returns floor(a / v) elementwise, with v weakly typed
// as in AddScalar (see FloorDivide).
func FloorDivideScalar(a *array.Array, v float64) *array.Array {
	return scalarBinary("ops.FloorDivideScalar", opset.FloorDivide, a, v)
}

// RemainderScalar returns a - v*floor(a/v) elementwise, with v weakly
// typed as in AddScalar (see Remainder).
func RemainderScalar(a *array.Array, v float64) *array.Array {
	return scalarBinary("ops.RemainderScalar", opset.Remainder, a, v)
}

// EqualScalar returns a == v elementwise as a Bool array, with v weakly
// typed as in AddScalar: a float32 array compares in float32, an integer
// array with a whole v in its own dtype, and with a fractional v in
// float32. A whole v outside an integer dtype's range is an error.
func EqualScalar(a *array.Array, v float64) *array.Array {
	return scalarBinary("ops.EqualScalar", opset.Equal, a, v)
}

// NotEqualScalar returns a != v elementwise as a Bool array, with v weakly
// typed as in EqualScalar.
func NotEqualScalar(a *array.Array, v float64) *array.Array {
	return scalarBinary("ops.NotEqualScalar", opset.NotEqual, a, v)
}

// LessScalar returns a < v elementwise as a Bool array, with v weakly
// typed as in EqualScalar.
func LessScalar(a *array.Array, v float64) *array.Array {
	return scalarBinary("ops.LessScalar", opset.Less, a, v)
}

// LessEqualScalar returns a <= v elementwise as a Bool array, with v
// weakly typed as in EqualScalar.
func LessEqualScalar(a *array.Array, v float64) *array.Array {
	return scalarBinary("ops.LessEqualScalar", opset.LessEqual, a, v)
}

// GreaterScalar returns a > v elementwise as a Bool array, with v weakly
// typed as in EqualScalar.
func GreaterScalar(a *array.Array, v float64) *array.Array {
	return scalarBinary("ops.GreaterScalar", opset.Greater, a, v)
}

// GreaterEqualScalar returns a >= v elementwise as a Bool array, with v
// weakly typed as in EqualScalar.
func GreaterEqualScalar(a *array.Array, v float64) *array.Array {
	return scalarBinary("ops.GreaterEqualScalar", opset.GreaterEqual, a, v)
}

// LogAddExpScalar returns log(e^a + e^v) elementwise, with v weakly typed
// as in AddScalar; integer and bool arrays compute in float32.
func LogAddExpScalar(a *array.Array, v float64) *array.Array {
	return scalarBinary("ops.LogAddExpScalar", opset.LogAddExp, a, v)
}

// ArcTan2Scalar returns the angle of the point (v, a) elementwise
// (numpy's arctan2(a, v)), with v weakly typed as in AddScalar.
func ArcTan2Scalar(a *array.Array, v float64) *array.Array {
	return scalarBinary("ops.ArcTan2Scalar", opset.ArcTan2, a, v)
}

// ClipScalar limits a to [lo, hi] elementwise, as numpy's clip with scalar
// bounds: Minimum(Maximum(a, lo), hi), so lo > hi gives hi everywhere and
// NaN stays NaN. lo = -Inf or hi = +Inf leaves that side open (for
// integer arrays too, whose dtype is kept); the bounds are otherwise
// weakly typed as in AddScalar.
func ClipScalar(a *array.Array, lo, hi float64) *array.Array {
	const name = "ops.ClipScalar"
	requireNonNil(name, a)
	if math.IsNaN(lo) || math.IsNaN(hi) {
		array.Panicf(name, "NaN bound (lo %v, hi %v)", lo, hi)
	}
	if !math.IsInf(lo, -1) {
		a = MaximumScalar(a, lo)
	}
	if !math.IsInf(hi, 1) {
		a = MinimumScalar(a, hi)
	}
	return a
}
