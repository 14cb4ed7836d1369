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
// typed: a float array compares in its own dtype (v rounded to it, as in
// AddScalar). An integer or bool array compares exactly with any v, as
// numpy 2 does: never equal to a fractional v or one outside its dtype's
// range, and without rounding either side to a float (see scalarCompare).
func EqualScalar(a *array.Array, v float64) *array.Array {
	return scalarCompare("ops.EqualScalar", opset.Equal, a, v)
}

// NotEqualScalar returns a != v elementwise as a Bool array, with v weakly
// typed and integers compared exactly as in EqualScalar.
func NotEqualScalar(a *array.Array, v float64) *array.Array {
	return scalarCompare("ops.NotEqualScalar", opset.NotEqual, a, v)
}

// LessScalar returns a < v elementwise as a Bool array, with v weakly
// typed and integers compared exactly as in EqualScalar.
func LessScalar(a *array.Array, v float64) *array.Array {
	return scalarCompare("ops.LessScalar", opset.Less, a, v)
}

// LessEqualScalar returns a <= v elementwise as a Bool array, with v weakly
// typed and integers compared exactly as in EqualScalar.
func LessEqualScalar(a *array.Array, v float64) *array.Array {
	return scalarCompare("ops.LessEqualScalar", opset.LessEqual, a, v)
}

// GreaterScalar returns a > v elementwise as a Bool array, with v weakly
// typed and integers compared exactly as in EqualScalar.
func GreaterScalar(a *array.Array, v float64) *array.Array {
	return scalarCompare("ops.GreaterScalar", opset.Greater, a, v)
}

// GreaterEqualScalar returns a >= v elementwise as a Bool array, with v weakly
// typed and integers compared exactly as in EqualScalar.
func GreaterEqualScalar(a *array.Array, v float64) *array.Array {
	return scalarCompare("ops.GreaterEqualScalar", opset.GreaterEqual, a, v)
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

// HypotScalar returns sqrt(a² + v²) elementwise, with v weakly typed as
// in AddScalar; integer and bool arrays compute in float32 (see Hypot).
func HypotScalar(a *array.Array, v float64) *array.Array {
	return scalarBinary("ops.HypotScalar", opset.Hypot, a, v)
}

// BitwiseAndScalar returns a & v elementwise for an integer or bool array
// and a whole v, weakly typed as in AddScalar: the array's dtype (int32
// for bool arrays). A fractional v, or one outside the dtype's range, is
// an error.
func BitwiseAndScalar(a *array.Array, v float64) *array.Array {
	return scalarBinary("ops.BitwiseAndScalar", opset.BitwiseAnd, a, v)
}

// BitwiseOrScalar returns a | v elementwise, with v as in
// BitwiseAndScalar.
func BitwiseOrScalar(a *array.Array, v float64) *array.Array {
	return scalarBinary("ops.BitwiseOrScalar", opset.BitwiseOr, a, v)
}

// BitwiseXorScalar returns a ^ v elementwise, with v as in
// BitwiseAndScalar.
func BitwiseXorScalar(a *array.Array, v float64) *array.Array {
	return scalarBinary("ops.BitwiseXorScalar", opset.BitwiseXor, a, v)
}

// LeftShiftScalar returns a << v elementwise, with v as in
// BitwiseAndScalar; a count that is negative or at least the dtype's
// width gives 0 (see LeftShift).
func LeftShiftScalar(a *array.Array, v float64) *array.Array {
	return scalarBinary("ops.LeftShiftScalar", opset.LeftShift, a, v)
}

// RightShiftScalar returns a >> v elementwise, with v as in
// BitwiseAndScalar; arithmetic for signed dtypes (see RightShift).
func RightShiftScalar(a *array.Array, v float64) *array.Array {
	return scalarBinary("ops.RightShiftScalar", opset.RightShift, a, v)
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

// scalarCompare records the comparison op of a with the weakly typed v.
// Integer and bool arrays compare exactly: a fractional v becomes the
// whole bound with the same answer (a < 2.5 is a < 3, a <= 2.5 is
// a <= 2, a == 2.5 is false), and a bound outside the dtype's range gives
// the same answer everywhere, so neither side is rounded to float32 and
// no bound is refused for its size. NaN compares in float32 (false but
// for NotEqual).
func scalarCompare(name string, op opset.BinaryOp, a *array.Array, v float64) *array.Array {
	requireNonNil(name, a)
	dt := a.DType()
	if dt.IsInexact() || math.IsNaN(v) {
		return scalarBinary(name, op, a, v)
	}
	w := v
	switch op {
	case opset.Less, opset.GreaterEqual:
		w = math.Ceil(v)
	case opset.LessEqual, opset.Greater:
		w = math.Floor(v)
	case opset.Equal, opset.NotEqual:
		if v != math.Trunc(v) {
			return full(name, a.Shape(), boolOf(op == opset.NotEqual), array.Bool)
		}
	}
	if dt == array.Bool {
		dt = array.Int32
	}
	lo, hi, _ := intRange(dt)
	if a.DType() == array.Bool {
		lo, hi = 0, 2
	}
	// w beyond the range: every element compares the same way
	if above, below := w >= hi, w < lo; above || below {
		var all bool
		switch op {
		case opset.Less, opset.LessEqual:
			all = above
		case opset.Greater, opset.GreaterEqual:
			all = below
		case opset.NotEqual:
			all = true
		}
		return full(name, a.Shape(), boolOf(all), array.Bool)
	}
	return binary(name, op, AsType(a, dt), scalarOf(w, dt))
}

func boolOf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
