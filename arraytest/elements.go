package arraytest

import (
	"strconv"

	"github.com/fathom-go/fathom/array"
)

// elements holds an evaluated array's values in row-major order, in the
// widest Go type of its dtype's family, so one comparison serves every
// dtype: float16 and bfloat16 widen exactly to float64, and int64 keeps
// the integers that float64 would round.
type elements struct {
	dtype array.DType
	shape []int
	bools []bool    // Bool
	ints  []int64   // the integer dtypes (uint64 as its bits)
	re    []float64 // floats, and the real parts of complex values
	im    []float64 // the imaginary parts of complex values
}

func read(a *array.Array) (elements, error) {
	e := elements{dtype: a.DType(), shape: a.Shape()}
	var err error
	switch e.dtype {
	case array.Bool:
		e.bools, err = array.ToSlice[bool](a)
	case array.Uint8:
		e.ints, err = widen[uint8](a, func(v uint8) int64 { return int64(v) })
	case array.Int32:
		e.ints, err = widen[int32](a, func(v int32) int64 { return int64(v) })
	case array.Int64:
		e.ints, err = array.ToSlice[int64](a)
	case array.Int8:
		e.ints, err = widen[int8](a, func(v int8) int64 { return int64(v) })
	case array.Int16:
		e.ints, err = widen[int16](a, func(v int16) int64 { return int64(v) })
	case array.Uint16:
		e.ints, err = widen[uint16](a, func(v uint16) int64 { return int64(v) })
	case array.Uint32:
		e.ints, err = widen[uint32](a, func(v uint32) int64 { return int64(v) })
	case array.Uint64:
		// the bits, which compare exactly (values beyond 2^63 read negative)
		e.ints, err = widen[uint64](a, func(v uint64) int64 { return int64(v) })
	case array.Float16:
		e.re, err = widen[array.F16](a, func(v array.F16) float64 { return float64(v.Float32()) })
	case array.BFloat16:
		e.re, err = widen[array.BF16](a, func(v array.BF16) float64 { return float64(v.Float32()) })
	case array.Float32:
		e.re, err = widen[float32](a, func(v float32) float64 { return float64(v) })
	case array.Float64:
		e.re, err = array.ToSlice[float64](a)
	case array.Complex64:
		var c []complex64
		if c, err = array.ToSlice[complex64](a); err == nil {
			e.re, e.im = make([]float64, len(c)), make([]float64, len(c))
			for i, v := range c {
				e.re[i], e.im[i] = float64(real(v)), float64(imag(v))
			}
		}
	}
	return e, err
}

func widen[T array.Elem, W any](a *array.Array, f func(T) W) ([]W, error) {
	s, err := array.ToSlice[T](a)
	if err != nil {
		return nil, err
	}
	out := make([]W, len(s))
	for i, v := range s {
		out[i] = f(v)
	}
	return out, nil
}

func (e elements) size() int {
	return max(len(e.bools), len(e.ints), len(e.re))
}

// close reports whether element i of e and of f, of one dtype, match
// within t; nans says whether a NaN matches a NaN.
func (e elements) close(f elements, i int, t Tol, nans bool) bool {
	switch {
	case e.dtype == array.Bool:
		return e.bools[i] == f.bools[i]
	case e.dtype.IsInteger():
		return t.closeInt(e.ints[i], f.ints[i])
	case e.dtype.IsComplex():
		return t.closeFloat(e.re[i], f.re[i], nans) && t.closeFloat(e.im[i], f.im[i], nans)
	}
	return t.closeFloat(e.re[i], f.re[i], nans)
}

// format writes element i as the dtype prints it: float32 values (and the
// 16-bit floats, which widen to float32 exactly) in the fewest digits that
// read back as the same float32, not as their float64 expansions.
func (e elements) format(i int) string {
	bits := 32
	if e.dtype == array.Float64 {
		bits = 64
	}
	switch {
	case e.dtype == array.Bool:
		return strconv.FormatBool(e.bools[i])
	case e.dtype == array.Uint64:
		return strconv.FormatUint(uint64(e.ints[i]), 10)
	case e.dtype.IsInteger():
		return strconv.FormatInt(e.ints[i], 10)
	case e.dtype.IsComplex():
		return strconv.FormatComplex(complex(e.re[i], e.im[i]), 'g', -1, 2*bits)
	}
	return strconv.FormatFloat(e.re[i], 'g', -1, bits)
}

// index returns the position of the element at row-major offset flat.
func index(shape []int, flat int) []int {
	idx := make([]int, len(shape))
	for k := len(shape) - 1; k >= 0; k-- {
		if shape[k] > 0 {
			idx[k] = flat % shape[k]
			flat /= shape[k]
		}
	}
	return idx
}
