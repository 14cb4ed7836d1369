package ops_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/cmplx"
	"os"
	"path/filepath"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// refArray is an array in the numpy reference files (testdata/gen_*.py).
type refArray struct {
	DType string            `json:"dtype"`
	Shape []int             `json:"shape"`
	Data  []json.RawMessage `json:"data"`
}

// refCase is one numpy reference case.
type refCase struct {
	Name     string                     `json:"name"`
	Op       string                     `json:"op"`
	Inputs   []refArray                 `json:"inputs"`
	Params   map[string]json.RawMessage `json:"params"`
	Expected []refArray                 `json:"expected"`
}

// loadCases reads testdata/<file>.
func loadCases(t testing.TB, file string) []refCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []refCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(f.Cases) == 0 {
		t.Fatalf("%s has no cases", file)
	}
	return f.Cases
}

func parseDType(t testing.TB, name string) array.DType {
	t.Helper()
	for _, d := range array.DTypes() {
		if d.String() == name {
			return d
		}
	}
	t.Fatalf("unknown dtype %q", name)
	return 0
}

func refFloat(t testing.TB, m json.RawMessage) float64 {
	t.Helper()
	var s string
	if json.Unmarshal(m, &s) == nil {
		switch s {
		case "nan":
			return math.NaN()
		case "inf":
			return math.Inf(1)
		case "-inf":
			return math.Inf(-1)
		}
		t.Fatalf("bad number %q", s)
	}
	var b bool
	if json.Unmarshal(m, &b) == nil {
		if b {
			return 1
		}
		return 0
	}
	var f float64
	if err := json.Unmarshal(m, &f); err != nil {
		t.Fatalf("bad number %s: %v", m, err)
	}
	return f
}

// values returns the data as complex128 (real data has zero imaginary
// parts), which holds every dtype's values exactly except int64 beyond
// 2^53, which the reference files avoid.
func (r refArray) values(t testing.TB) []complex128 {
	t.Helper()
	out := make([]complex128, len(r.Data))
	for i, m := range r.Data {
		var pair []json.RawMessage
		if json.Unmarshal(m, &pair) == nil && len(pair) == 2 {
			out[i] = complex(refFloat(t, pair[0]), refFloat(t, pair[1]))
			continue
		}
		out[i] = complex(refFloat(t, m), 0)
	}
	return out
}

// array builds the reference array as a fathom array.
func (r refArray) array(t testing.TB) *array.Array {
	t.Helper()
	v := r.values(t)
	shape := r.Shape
	if shape == nil {
		shape = []int{}
	}
	switch parseDType(t, r.DType) {
	case array.Bool:
		return array.FromSlice(mapSlice(v, func(c complex128) bool { return real(c) != 0 }), shape...)
	case array.Uint8:
		return array.FromSlice(mapSlice(v, func(c complex128) uint8 { return uint8(real(c)) }), shape...)
	case array.Int32:
		return array.FromSlice(mapSlice(v, func(c complex128) int32 { return int32(real(c)) }), shape...)
	case array.Int64:
		return array.FromSlice(mapSlice(v, func(c complex128) int64 { return int64(real(c)) }), shape...)
	case array.Float16:
		return array.FromSlice(mapSlice(v, func(c complex128) array.F16 { return array.NewF16(float32(real(c))) }), shape...)
	case array.BFloat16:
		return array.FromSlice(mapSlice(v, func(c complex128) array.BF16 { return array.NewBF16(float32(real(c))) }), shape...)
	case array.Float32:
		return array.FromSlice(mapSlice(v, func(c complex128) float32 { return float32(real(c)) }), shape...)
	case array.Float64:
		return array.FromSlice(mapSlice(v, func(c complex128) float64 { return real(c) }), shape...)
	default:
		return array.FromSlice(mapSlice(v, func(c complex128) complex64 { return complex64(c) }), shape...)
	}
}

func mapSlice[S, D any](s []S, f func(S) D) []D {
	out := make([]D, len(s))
	for i, v := range s {
		out[i] = f(v)
	}
	return out
}

// param decodes params[name] into v.
func (c refCase) param(t testing.TB, name string, v any) bool {
	t.Helper()
	m, ok := c.Params[name]
	if !ok {
		return false
	}
	if err := json.Unmarshal(m, v); err != nil {
		t.Fatalf("%s: param %s: %v", c.Name, name, err)
	}
	return true
}

// tolerance returns the relative and absolute tolerance for dtype dt.
func tolerance(dt array.DType) (rtol, atol float64) {
	switch dt {
	case array.Float16:
		return 2e-3, 1e-3
	case array.BFloat16:
		return 1.6e-2, 1e-2
	case array.Float32, array.Complex64:
		return 2e-5, 1e-6
	case array.Float64:
		return 1e-12, 1e-13
	}
	return 0, 0
}

// arrayValues evaluates a and returns its elements as complex128.
func arrayValues(a *array.Array) ([]complex128, error) {
	conv := func(n int, at func(i int) complex128) []complex128 {
		out := make([]complex128, n)
		for i := range out {
			out[i] = at(i)
		}
		return out
	}
	switch a.DType() {
	case array.Bool:
		s, err := array.ToSlice[bool](a)
		return conv(len(s), func(i int) complex128 {
			if s[i] {
				return 1
			}
			return 0
		}), err
	case array.Uint8:
		s, err := array.ToSlice[uint8](a)
		return conv(len(s), func(i int) complex128 { return complex(float64(s[i]), 0) }), err
	case array.Int32:
		s, err := array.ToSlice[int32](a)
		return conv(len(s), func(i int) complex128 { return complex(float64(s[i]), 0) }), err
	case array.Int64:
		s, err := array.ToSlice[int64](a)
		return conv(len(s), func(i int) complex128 { return complex(float64(s[i]), 0) }), err
	case array.Float16:
		s, err := array.ToSlice[array.F16](a)
		return conv(len(s), func(i int) complex128 { return complex(float64(s[i].Float32()), 0) }), err
	case array.BFloat16:
		s, err := array.ToSlice[array.BF16](a)
		return conv(len(s), func(i int) complex128 { return complex(float64(s[i].Float32()), 0) }), err
	case array.Float32:
		s, err := array.ToSlice[float32](a)
		return conv(len(s), func(i int) complex128 { return complex(float64(s[i]), 0) }), err
	case array.Float64:
		s, err := array.ToSlice[float64](a)
		return conv(len(s), func(i int) complex128 { return complex(s[i], 0) }), err
	default:
		s, err := array.ToSlice[complex64](a)
		return conv(len(s), func(i int) complex128 { return complex128(s[i]) }), err
	}
}

// checkArray compares got with the reference: dtype, shape and values
// within the dtype's tolerance. NaNs must match NaNs; infinities must
// match exactly.
func checkArray(t testing.TB, name string, got *array.Array, want refArray) {
	t.Helper()
	if err := compareArray(t, got, want, 1); err != nil {
		t.Errorf("%s: %v", name, err)
	}
}

// compareArray is checkArray's comparison; scale multiplies the dtype's
// tolerances.
func compareArray(t testing.TB, got *array.Array, want refArray, scale float64) error {
	t.Helper()
	wdt := parseDType(t, want.DType)
	if got.DType() != wdt {
		return fmt.Errorf("dtype %v, want %v", got.DType(), wdt)
	}
	wshape := want.Shape
	if wshape == nil {
		wshape = []int{}
	}
	if !equalShape(got.Shape(), wshape) {
		return fmt.Errorf("shape %v, want %v", got.Shape(), wshape)
	}
	g, err := arrayValues(got)
	if err != nil {
		return err
	}
	w := want.values(t)
	rtol, atol := tolerance(wdt)
	rtol, atol = rtol*scale, atol*scale
	bad := 0
	var first string
	for i := range w {
		if !closeEnough(g[i], w[i], rtol, atol) {
			if bad == 0 {
				first = fmt.Sprintf("element %d: got %v, want %v", i, g[i], w[i])
			}
			bad++
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d elements differ; first: %s", bad, len(w), first)
	}
	return nil
}

func closeEnough(g, w complex128, rtol, atol float64) bool {
	if cmplx.IsNaN(w) {
		return cmplx.IsNaN(g)
	}
	for _, p := range [][2]float64{{real(g), real(w)}, {imag(g), imag(w)}} {
		gv, wv := p[0], p[1]
		if math.IsInf(wv, 0) || math.IsNaN(wv) {
			if gv != wv && !(math.IsNaN(gv) && math.IsNaN(wv)) {
				return false
			}
			continue
		}
		if math.IsNaN(gv) || math.Abs(gv-wv) > atol+rtol*math.Abs(wv) {
			return false
		}
	}
	return true
}

func equalShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// refLayouts give the same values in different memory layouts, so the
// reference cases also run on column-major, reversed (negative strides)
// and stepped (stride 2 along the first axis) inputs.
var refLayouts = []struct {
	name string
	of   func(x *array.Array) *array.Array
}{
	{"contiguous", func(x *array.Array) *array.Array { return x }},
	{"transposed", func(x *array.Array) *array.Array {
		if x.Ndim() < 2 {
			return x
		}
		return ops.Transpose(ops.Copy(ops.Transpose(x)))
	}},
	{"reversed", func(x *array.Array) *array.Array {
		rv := make([]ops.Range, x.Ndim())
		for i := range rv {
			rv[i] = ops.R(ops.None, ops.None, -1)
		}
		return ops.Slice(ops.Copy(ops.Slice(x, rv...)), rv...)
	}},
	{"stepped", func(x *array.Array) *array.Array {
		if x.Ndim() == 0 {
			return x
		}
		return ops.SliceAxis(ops.Repeat(x, 2, 0), 0, ops.R(ops.None, ops.None, 2))
	}},
}
