package ops

import (
	"math"
	"slices"

	"github.com/fathom-go/fathom/array"
)

// orderLines sorts a over axes (none: all), gathered into one last axis:
// the result has the kept axes' shape, kept, then the n reduced elements
// of each line in ascending order (NaNs last).
func orderLines(op string, a *array.Array, axes []int) (sorted *array.Array, kept []int, n int) {
	requireNonNil(op, a)
	if a.DType().IsComplex() {
		array.Panicf(op, "dtype %v has no order", a.DType())
	}
	ax := normAxes(op, axes, a.Ndim())
	kept, n = reducedShape(a.Shape(), ax)
	perm := make([]int, 0, a.Ndim())
	for i := range a.Ndim() {
		if !containsInt(ax, i) {
			perm = append(perm, i)
		}
	}
	perm = append(perm, ax...)
	lines := Reshape(Transpose(a, perm...), append(slices.Clone(kept), n)...)
	return Sort(lines, -1), kept, n
}

// orderStat returns the i-th smallest element of each of sorted's lines
// (orderLines), in dtype dt.
func orderStat(sorted *array.Array, kept []int, i int, dt array.DType) *array.Array {
	return AsType(Reshape(SliceAxis(sorted, -1, R(i, i+1)), kept...), dt)
}

// nanLines puts NaN in r where a line of sorted holds a NaN, which then
// is its last element.
func nanLines(r, sorted *array.Array, kept []int, n int) *array.Array {
	if !sorted.DType().IsFloat() {
		return r
	}
	return Where(IsNaN(orderStat(sorted, kept, n-1, sorted.DType())), scalarOf(math.NaN(), r.DType()), r)
}

// Median returns the median of a over axes (none: all), numpy's median:
// the middle element of each sorted line, or the mean of the two middle
// ones when the line's length is even. A line that holds a NaN gives NaN,
// and so does an empty one (numpy warns). The result is in a's float
// dtype, float32 for integers and bools (Mean's rule); complex64 is not
// supported. KeepDims(Median, a, axes...) keeps the reduced axes.
//
// Each line is sorted, and the derivative goes to the middle elements
// through Sort's (ties as Sort's).
func Median(a *array.Array, axes ...int) *array.Array {
	const op = "ops.Median"
	sorted, kept, n := orderLines(op, a, axes)
	dt := floatDType(a.DType())
	if n == 0 {
		return Full(kept, math.NaN(), dt)
	}
	w := workDType(dt)
	m := orderStat(sorted, kept, n/2, w)
	if n%2 == 0 {
		m = DivScalar(Add(orderStat(sorted, kept, n/2-1, w), m), 2)
	}
	return AsType(nanLines(m, sorted, kept, n), dt)
}

// Quantile returns the q-th quantile of a over axes (none: all), with
// numpy's default method, "linear": in each sorted line of n elements, the
// value at the fractional position q·(n-1), interpolated between its two
// neighbours as numpy's quantile does (so an infinite neighbour gives
// NaN, as there). q must lie in [0, 1]. A line that holds a NaN gives
// NaN; an empty line is an error (numpy raises). The result is in a's
// float dtype, float32 for integers; integers are converted before they
// are subtracted, so they do not wrap as they do in numpy. Bool and
// complex64 are not supported. KeepDims keeps the reduced axes:
//
//	ops.KeepDims(func(a *array.Array, ax ...int) *array.Array { return ops.Quantile(a, 0.9, ax...) }, a, 1)
//
// The derivative goes to the two neighbours through Sort's (ties as
// Sort's).
func Quantile(a *array.Array, q float64, axes ...int) *array.Array {
	const op = "ops.Quantile"
	requireNonNil(op, a)
	if !(q >= 0 && q <= 1) {
		array.Panicf(op, "q=%v is not in [0, 1] (shape %v)", q, a.Shape())
	}
	if a.DType() == array.Bool {
		array.Panicf(op, "dtype bool has no differences to interpolate (numpy rejects it too)")
	}
	sorted, kept, n := orderLines(op, a, axes)
	if n == 0 {
		array.Panicf(op, "axes %v of shape %v are empty", axes, a.Shape())
	}
	// numpy's virtual index for alpha = beta = 1, rounded as numpy
	// rounds it (the conversion keeps the product from fusing).
	virtual := float64(float64(n)*q) + (1 + q*(1-1-1)) - 1
	lo := int(math.Floor(virtual))
	hi, below := lo+1, float64(lo)
	if virtual >= float64(n-1) {
		lo, hi, below = n-1, n-1, -1
	}
	gamma := virtual - below
	dt := floatDType(a.DType())
	w := workDType(dt)
	x0, x1 := orderStat(sorted, kept, lo, w), orderStat(sorted, kept, hi, w)
	d := Sub(x1, x0)
	var r *array.Array
	if gamma >= 0.5 {
		r = Sub(x1, MulScalar(d, 1-gamma))
	} else {
		r = Add(x0, MulScalar(d, gamma))
	}
	return AsType(nanLines(r, sorted, kept, n), dt)
}
