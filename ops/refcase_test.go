package ops_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
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
// parts), which holds every dtype's values exactly but int64s beyond 2^53
// (ints reads those).
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
		return array.FromSlice(r.ints(t), shape...)
	case array.Int8:
		return array.FromSlice(mapSlice(r.ints(t), func(v int64) int8 { return int8(v) }), shape...)
	case array.Int16:
		return array.FromSlice(mapSlice(r.ints(t), func(v int64) int16 { return int16(v) }), shape...)
	case array.Uint16:
		return array.FromSlice(mapSlice(r.ints(t), func(v int64) uint16 { return uint16(v) }), shape...)
	case array.Uint32:
		return array.FromSlice(mapSlice(r.ints(t), func(v int64) uint32 { return uint32(v) }), shape...)
	case array.Uint64:
		return array.FromSlice(r.uints(t), shape...)
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

// ints returns integer data exactly, such as the identity of an int64
// minimum, 2^63-1, which float64 rounds out of range.
func (r refArray) ints(t testing.TB) []int64 {
	t.Helper()
	out := make([]int64, len(r.Data))
	for i, m := range r.Data {
		if err := json.Unmarshal(m, &out[i]); err != nil {
			t.Fatalf("bad integer %s: %v", m, err)
		}
	}
	return out
}

// uints returns uint64 data exactly.
func (r refArray) uints(t testing.TB) []uint64 {
	t.Helper()
	out := make([]uint64, len(r.Data))
	for i, m := range r.Data {
		if err := json.Unmarshal(m, &out[i]); err != nil {
			t.Fatalf("bad integer %s: %v", m, err)
		}
	}
	return out
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

// checkArray compares got with the reference: dtype, shape and values
// within arraytest.DefaultTol of the dtype, NaNs matching NaNs.
func checkArray(t testing.TB, name string, got *array.Array, want refArray) {
	t.Helper()
	w := want.array(t)
	tol := arraytest.DefaultTol(w.DType())
	if w.DType() == array.BFloat16 && got.DType() == array.BFloat16 {
		// numpy has no bfloat16: the reference holds float32 results,
		// which are compared unrounded with got's values, widened exactly.
		w, got = refArray{DType: "float32", Shape: want.Shape, Data: want.Data}.array(t), widenBF16(t, got)
	}
	arraytest.AssertClose(t, w, got, tol, name)
}

// widenBF16 returns a bfloat16 array's values as float32, without an op.
func widenBF16(t testing.TB, a *array.Array) *array.Array {
	t.Helper()
	s, err := array.ToSlice[array.BF16](a)
	if err != nil {
		t.Fatal(err)
	}
	return array.FromSlice(mapSlice(s, array.BF16.Float32), a.Shape()...)
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
