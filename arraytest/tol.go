package arraytest

import (
	"math"

	"github.com/fathom-go/fathom/array"
)

// Tol is a tolerance: values x and y match when
//
//	|x - y| <= Atol + Rtol*min(|x|, |y|)
//
// The smaller magnitude, rather than the expected value's as in numpy's
// allclose, makes the rule symmetric, which cmp requires of a comparison;
// the two differ by a factor of at most 1+Rtol. Equal values always match
// (infinities included), a NaN never matches a number, and complex values
// match when their real parts match and their imaginary parts match, so a
// large real part cannot hide an error in a small imaginary one.
// Integers are compared as int64, so the rule holds beyond the integers
// float64 holds exactly.
type Tol struct {
	Rtol, Atol float64
}

// DefaultTol returns the tolerance AssertClose uses for dtype dt when given
// the zero Tol: what fathom's own tests allow one operation against numpy,
// a few units in the last place of dt plus an absolute term for results
// near zero. Integers and booleans compare exactly.
func DefaultTol(dt array.DType) Tol {
	switch dt {
	case array.Float16:
		return Tol{Rtol: 2e-3, Atol: 1e-3}
	case array.BFloat16:
		return Tol{Rtol: 1.6e-2, Atol: 1e-2}
	case array.Float32, array.Complex64:
		return Tol{Rtol: 2e-5, Atol: 1e-6}
	case array.Float64:
		return Tol{Rtol: 1e-12, Atol: 1e-13}
	}
	return Tol{}
}

func (t Tol) closeFloat(x, y float64, nans bool) bool {
	switch {
	case x == y:
		return true
	case math.IsNaN(x) || math.IsNaN(y):
		return nans && math.IsNaN(x) && math.IsNaN(y)
	case math.IsInf(x, 0) || math.IsInf(y, 0):
		return false
	}
	return math.Abs(x-y) <= t.Atol+t.Rtol*min(math.Abs(x), math.Abs(y))
}

func (t Tol) closeInt(x, y int64) bool {
	if x == y {
		return true
	}
	// The difference of two int64s can overflow int64 but not uint64.
	d := uint64(x) - uint64(y)
	if y > x {
		d = uint64(y) - uint64(x)
	}
	return float64(d) <= t.Atol+t.Rtol*min(math.Abs(float64(x)), math.Abs(float64(y)))
}
