// Package refcase reads the numpy reference cases that the packages'
// testdata/gen_*.py scripts write (the format of ops/testdata/refgen.py):
// a JSON object whose "cases" each name an op, its inputs, its parameters
// and the expected outputs. Floats that JSON cannot hold are written as
// "nan", "inf" and "-inf", complex numbers as [re, im], and integers as
// integers, so that int64 and uint64 extremes survive exactly.
//
// It is for tests only; every reader of those files shares it.
package refcase

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/fathom-go/fathom/array"
)

// Array is an encoded array.
type Array struct {
	DType string            `json:"dtype"`
	Shape []int             `json:"shape"`
	Data  []json.RawMessage `json:"data"`
}

// Case is one reference case.
type Case struct {
	Name     string                     `json:"name"`
	Op       string                     `json:"op"`
	Inputs   []Array                    `json:"inputs"`
	Params   map[string]json.RawMessage `json:"params"`
	Expected []Array                    `json:"expected"`
}

// Load reads the cases of the file at path and fails the test if it has
// none.
func Load(t testing.TB, path string) []Case {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []Case `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(f.Cases) == 0 {
		t.Fatalf("%s has no cases", path)
	}
	return f.Cases
}

// Float decodes one real number: a JSON number, a boolean, or one of the
// strings "nan", "inf" and "-inf".
func Float(t testing.TB, m json.RawMessage) float64 {
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

// DTypeOf returns the array's dtype.
func (r Array) DTypeOf(t testing.TB) array.DType {
	t.Helper()
	return ParseDType(t, r.DType)
}

// ParseDType returns the dtype of the name numpy gives it.
func ParseDType(t testing.TB, name string) array.DType {
	t.Helper()
	for _, d := range array.DTypes() {
		if d.String() == name {
			return d
		}
	}
	t.Fatalf("unknown dtype %q", name)
	return 0
}

// Values returns the data as complex128 (real data has zero imaginary
// parts), which holds every dtype's values exactly but integers beyond
// 2^53 (Ints and Uints read those).
func (r Array) Values(t testing.TB) []complex128 {
	t.Helper()
	out := make([]complex128, len(r.Data))
	for i, m := range r.Data {
		var pair []json.RawMessage
		if json.Unmarshal(m, &pair) == nil && len(pair) == 2 {
			out[i] = complex(Float(t, pair[0]), Float(t, pair[1]))
			continue
		}
		out[i] = complex(Float(t, m), 0)
	}
	return out
}

// Ints returns integer data exactly, such as an int64 extreme, which
// float64 rounds out of range.
func (r Array) Ints(t testing.TB) []int64 {
	return decodeAll[int64](t, r.Data)
}

// Uints returns uint64 data exactly.
func (r Array) Uints(t testing.TB) []uint64 {
	return decodeAll[uint64](t, r.Data)
}

func decodeAll[T any](t testing.TB, data []json.RawMessage) []T {
	t.Helper()
	out := make([]T, len(data))
	for i, m := range data {
		if err := json.Unmarshal(m, &out[i]); err != nil {
			t.Fatalf("bad integer %s: %v", m, err)
		}
	}
	return out
}

// Build returns the array in its own dtype.
func (r Array) Build(t testing.TB) *array.Array {
	t.Helper()
	shape := r.Shape
	if shape == nil {
		shape = []int{}
	}
	v := r.Values(t)
	switch r.DTypeOf(t) {
	case array.Bool:
		return array.FromSlice(MapSlice(v, func(c complex128) bool { return real(c) != 0 }), shape...)
	case array.Uint8:
		return array.FromSlice(MapSlice(v, func(c complex128) uint8 { return uint8(real(c)) }), shape...)
	case array.Int32:
		return array.FromSlice(MapSlice(v, func(c complex128) int32 { return int32(real(c)) }), shape...)
	case array.Int64:
		return array.FromSlice(r.Ints(t), shape...)
	case array.Int8:
		return array.FromSlice(MapSlice(r.Ints(t), func(v int64) int8 { return int8(v) }), shape...)
	case array.Int16:
		return array.FromSlice(MapSlice(r.Ints(t), func(v int64) int16 { return int16(v) }), shape...)
	case array.Uint16:
		return array.FromSlice(MapSlice(r.Ints(t), func(v int64) uint16 { return uint16(v) }), shape...)
	case array.Uint32:
		return array.FromSlice(MapSlice(r.Ints(t), func(v int64) uint32 { return uint32(v) }), shape...)
	case array.Uint64:
		return array.FromSlice(r.Uints(t), shape...)
	case array.Float16:
		return array.FromSlice(MapSlice(v, func(c complex128) array.F16 { return array.NewF16(float32(real(c))) }), shape...)
	case array.BFloat16:
		return array.FromSlice(MapSlice(v, func(c complex128) array.BF16 { return array.NewBF16(float32(real(c))) }), shape...)
	case array.Float32:
		return array.FromSlice(MapSlice(v, func(c complex128) float32 { return float32(real(c)) }), shape...)
	case array.Float64:
		return array.FromSlice(MapSlice(v, func(c complex128) float64 { return real(c) }), shape...)
	case array.Complex64:
		return array.FromSlice(MapSlice(v, func(c complex128) complex64 { return complex64(c) }), shape...)
	}
	t.Fatalf("dtype %s has no reference encoding", r.DType)
	return nil
}

// Param decodes the parameter name into v and reports whether the case
// has it.
func (c Case) Param(t testing.TB, name string, v any) bool {
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

// FloatParam returns the float parameter name, which may be "inf", "-inf"
// or "nan"; 0 if the case has none.
func (c Case) FloatParam(t testing.TB, name string) float64 {
	t.Helper()
	m, ok := c.Params[name]
	if !ok {
		return 0
	}
	return Float(t, m)
}

// MapSlice applies f to each element of s.
func MapSlice[S, D any](s []S, f func(S) D) []D {
	out := make([]D, len(s))
	for i, v := range s {
		out[i] = f(v)
	}
	return out
}
