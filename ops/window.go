package ops

import (
	"math"

	"github.com/fathom-go/fathom/array"
)

// Hanning returns the Hann window of m points (numpy's hanning):
// 0.5 + 0.5·cos(πn/(m-1)) for n = 1-m, 3-m, ..., m-1. m = 1 gives [1],
// m <= 0 an empty array. The dtype is float32 unless dt names another
// float dtype; the values are computed in float64 and rounded to dt
// (through float32 for float16 and bfloat16).
func Hanning(m int, dt ...array.DType) *array.Array {
	return window("ops.Hanning", m, dt, func(n, d float64) float64 { return 0.5 + 0.5*math.Cos(math.Pi*n/d) })
}

// Hamming returns the Hamming window of m points (numpy's hamming):
// 0.54 + 0.46·cos(πn/(m-1)), with Hanning's n, sizes and dtypes.
func Hamming(m int, dt ...array.DType) *array.Array {
	return window("ops.Hamming", m, dt, func(n, d float64) float64 { return 0.54 + 0.46*math.Cos(math.Pi*n/d) })
}

// Blackman returns the Blackman window of m points (numpy's blackman):
// 0.42 + 0.5·cos(πn/(m-1)) + 0.08·cos(2πn/(m-1)), with Hanning's n, sizes
// and dtypes.
func Blackman(m int, dt ...array.DType) *array.Array {
	return window("ops.Blackman", m, dt, func(n, d float64) float64 {
		return 0.42 + 0.5*math.Cos(math.Pi*n/d) + 0.08*math.Cos(2*math.Pi*n/d)
	})
}

// Bartlett returns the triangular Bartlett window of m points (numpy's
// bartlett): 1 - |n|/(m-1), with Hanning's n, sizes and dtypes.
func Bartlett(m int, dt ...array.DType) *array.Array {
	return window("ops.Bartlett", m, dt, func(n, d float64) float64 {
		if n <= 0 {
			return 1 + n/d
		}
		return 1 - n/d
	})
}

// window evaluates f(n, m-1) for numpy's n, in numpy's order of
// operations. Windows are short and
// built once, so they are computed here and become constants rather than
// nodes; that also keeps float64 arithmetic off the GPU.
func window(op string, m int, dts []array.DType, f func(n, d float64) float64) *array.Array {
	dt := array.Float32
	switch {
	case len(dts) > 1:
		array.Panicf(op, "more than one dtype: %v", dts)
	case len(dts) == 1:
		dt = dts[0]
	}
	if !dt.IsFloat() {
		array.Panicf(op, "dtype %v is not a float dtype", dt)
	}
	m = max(m, 0)
	checkedBytes(op, []int{m}, dt)
	v := make([]float64, m)
	for i := range v {
		if m == 1 {
			v[i] = 1
			continue
		}
		v[i] = f(float64(1-m+2*i), float64(m-1))
	}
	return fromFloat64s(v, dt)
}

// fromFloat64s builds a 1-D array of float dtype dt from v, rounding each
// value to float32 and, for the 16-bit dtypes, from there to dt, as the
// array package's converters take float32.
func fromFloat64s(v []float64, dt array.DType) *array.Array {
	switch dt {
	case array.Float64:
		return array.FromSlice(v)
	case array.Float16:
		return array.FromSlice(mapFloats(v, func(x float64) array.F16 { return array.NewF16(float32(x)) }))
	case array.BFloat16:
		return array.FromSlice(mapFloats(v, func(x float64) array.BF16 { return array.NewBF16(float32(x)) }))
	}
	return array.FromSlice(mapFloats(v, func(x float64) float32 { return float32(x) }))
}

func mapFloats[T any](v []float64, f func(float64) T) []T {
	out := make([]T, len(v))
	for i, x := range v {
		out[i] = f(x)
	}
	return out
}
