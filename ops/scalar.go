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
func PowScalar(a *array.Array, v float64) *array.Array {
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
