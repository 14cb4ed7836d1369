package arraytest

import (
	"math"
	"reflect"
	"slices"

	"github.com/google/go-cmp/cmp"

	"github.com/fathom-go/fathom/array"
)

// Approx returns a cmp option that compares *array.Array values by dtype,
// shape and elements, elements matching within Tol{rtol, atol}; with rtol
// and atol zero it compares exactly. A NaN matches nothing, as in Go,
// unless EquateNaNs is given too. Arrays are evaluated; one that fails to
// evaluate matches nothing and its error shows in the diff.
//
// Where two arrays differ in dtype or shape, the diff shows those alone.
// Where only elements differ, it shows them, with a few that match around
// them, as a map from index to value; values are printed exactly, so a
// float32 0.1 reads 0.10000000149011612.
//
// Approx applies to *array.Array values wherever cmp meets them: in
// slices, maps and struct fields too. A nil array matches only a nil one.
func Approx(rtol, atol float64) cmp.Option {
	t := Tol{Rtol: rtol, Atol: atol}
	// The filters see both arrays, so they pick the form each pair is
	// shown in. Arrays that match without treating NaNs specially (the
	// common case in a passing test) are compared in one loop, and cmp
	// never walks their elements one by one, which costs microseconds
	// each.
	match := func(x, y *array.Array) bool { return x != nil && y != nil && t.match(x, y) }
	elementsDiffer := func(x, y *array.Array) bool {
		return x != nil && y != nil && sameHeader(x, y) && !t.match(x, y)
	}
	headersDiffer := func(x, y *array.Array) bool { return x != nil && y != nil && !sameHeader(x, y) }
	return cmp.Options{
		cmp.FilterValues(match, cmp.Comparer(func(_, _ *array.Array) bool { return true })),
		cmp.FilterValues(elementsDiffer, cmp.Transformer("arraytest.Values", transform)),
		cmp.FilterValues(headersDiffer, cmp.Transformer("arraytest.Header", toHeader)),
		cmp.FilterValues(func(x, y number) bool { return !bothNaN(x, y) },
			cmp.Comparer(func(x, y number) bool { return t.closeFloat(float64(x), float64(y), false) })),
		cmp.Comparer(func(x, y integer) bool { return t.closeInt(int64(x), int64(y)) }),
		cmp.Comparer(func(_, _ evalError) bool { return false }),
	}
}

// EquateNaNs returns a cmp option under which Approx matches a NaN with a
// NaN (in each part of a complex value). It changes how Approx compares
// elements and does nothing alone: for exact comparison with NaNs equal,
// give it with Approx(0, 0).
func EquateNaNs() cmp.Option {
	return cmp.FilterValues(bothNaN, cmp.Comparer(func(_, _ number) bool { return true }))
}

func bothNaN(x, y number) bool { return math.IsNaN(float64(x)) && math.IsNaN(float64(y)) }

func sameHeader(x, y *array.Array) bool {
	return x.DType() == y.DType() && slices.Equal(x.Shape(), y.Shape())
}

// match reports whether x and y have one dtype and shape and their
// elements match within t, NaNs differing.
func (t Tol) match(x, y *array.Array) bool {
	if !sameHeader(x, y) {
		return false
	}
	ex, errx := read(x)
	ey, erry := read(y)
	if errx != nil || erry != nil {
		return false
	}
	for i := range ex.size() {
		if !ex.close(ey, i, t, false) {
			return false
		}
	}
	return true
}

// values is an array as cmp sees it under Approx. Elements maps an index
// ([n]int for an n-dimensional array) to a value, so that cmp pairs
// elements by position (a slice would let its edit-script diff align
// shifted runs of equal values instead), or holds why the array did not
// evaluate.
type values struct {
	DType    string
	Shape    []int
	Elements any
}

// header is an array as cmp sees it under Approx when its dtype or shape
// differs from the other's: elements that do not pair up are left out.
type header struct {
	DType string
	Shape []int
}

type (
	number    float64 // floats, compared by Approx
	integer   int64   // integers, compared by Approx; booleans stay bool, compared exactly
	cnumber   struct{ Re, Im number }
	evalError struct{ Err string } // never matches
)

func toHeader(a *array.Array) header {
	return header{DType: a.DType().String(), Shape: a.Shape()}
}

func transform(a *array.Array) values {
	v := values{DType: a.DType().String(), Shape: a.Shape()}
	e, err := read(a)
	if err != nil {
		v.Elements = evalError{err.Error()}
		return v
	}
	var typ reflect.Type
	var elem func(i int) any
	switch {
	case e.dtype == array.Bool:
		typ, elem = reflect.TypeFor[bool](), func(i int) any { return e.bools[i] }
	case e.dtype.IsInteger():
		typ, elem = reflect.TypeFor[integer](), func(i int) any { return integer(e.ints[i]) }
	case e.dtype.IsComplex():
		typ, elem = reflect.TypeFor[cnumber](), func(i int) any { return cnumber{number(e.re[i]), number(e.im[i])} }
	default:
		typ, elem = reflect.TypeFor[number](), func(i int) any { return number(e.re[i]) }
	}
	key := reflect.ArrayOf(len(e.shape), reflect.TypeFor[int]())
	m := reflect.MakeMapWithSize(reflect.MapOf(key, typ), e.size())
	for i := range e.size() {
		k := reflect.New(key).Elem()
		for d, x := range index(e.shape, i) {
			k.Index(d).SetInt(int64(x))
		}
		m.SetMapIndex(k, reflect.ValueOf(elem(i)))
	}
	v.Elements = m.Interface()
	return v
}
