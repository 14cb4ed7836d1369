// Package tensortest holds what the tests of the encoding packages share:
// an array's elements as the JSON values the Python reference scripts
// write, and a canonical form of such values to compare them.
package tensortest

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
)

// Elems returns a's elements in row-major order as JSON values, as
// gen_npy.py writes them.
func Elems(t *testing.T, a *array.Array) []string {
	t.Helper()
	var out []string
	add := func(v any) {
		b, _ := json.Marshal(v)
		out = append(out, string(b))
	}
	var err error
	switch a.DType() {
	case array.Bool:
		var v []bool
		v, err = array.ToSlice[bool](a)
		for _, x := range v {
			add(x)
		}
	case array.Uint8:
		var v []uint8
		v, err = array.ToSlice[uint8](a)
		for _, x := range v {
			add(x)
		}
	case array.Int32:
		var v []int32
		v, err = array.ToSlice[int32](a)
		for _, x := range v {
			add(x)
		}
	case array.Int64:
		var v []int64
		v, err = array.ToSlice[int64](a)
		for _, x := range v {
			add(x)
		}
	case array.Int8:
		var v []int8
		v, err = array.ToSlice[int8](a)
		for _, x := range v {
			add(x)
		}
	case array.Int16:
		var v []int16
		v, err = array.ToSlice[int16](a)
		for _, x := range v {
			add(x)
		}
	case array.Uint16:
		var v []uint16
		v, err = array.ToSlice[uint16](a)
		for _, x := range v {
			add(x)
		}
	case array.Uint32:
		var v []uint32
		v, err = array.ToSlice[uint32](a)
		for _, x := range v {
			add(x)
		}
	case array.Uint64:
		var v []uint64
		v, err = array.ToSlice[uint64](a)
		for _, x := range v {
			add(x)
		}
	case array.Float16:
		var v []array.F16
		v, err = array.ToSlice[array.F16](a)
		for _, x := range v {
			add(float64(x.Float32()))
		}
	case array.BFloat16:
		var v []array.BF16
		v, err = array.ToSlice[array.BF16](a)
		for _, x := range v {
			add(float64(x.Float32()))
		}
	case array.Float32:
		var v []float32
		v, err = array.ToSlice[float32](a)
		for _, x := range v {
			add(float64(x))
		}
	case array.Float64:
		var v []float64
		v, err = array.ToSlice[float64](a)
		for _, x := range v {
			add(x)
		}
	case array.Complex64:
		var v []complex64
		v, err = array.ToSlice[complex64](a)
		for _, x := range v {
			add([]float64{float64(real(x)), float64(imag(x))})
		}
	default:
		t.Fatalf("unexpected dtype %v", a.DType())
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Canon re-encodes JSON values so 2.0 and 2, as Python and Go print
// them, compare equal. Integers are kept digit for digit (a uint64 such
// as 18446744073709551615 is not a float64); numbers with a fraction or
// an exponent compare as float64.
func Canon(t *testing.T, vals []json.RawMessage) []string {
	t.Helper()
	out := make([]string, len(vals))
	for i, v := range vals {
		d := json.NewDecoder(bytes.NewReader(v))
		d.UseNumber()
		var x any
		if err := d.Decode(&x); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(canonNumbers(x))
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	return out
}

// canonNumbers replaces the json.Numbers in x that are not integers by
// their float64 values.
func canonNumbers(x any) any {
	switch x := x.(type) {
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			f, _ := x.Float64()
			return f
		}
		return x
	case []any:
		for i := range x {
			x[i] = canonNumbers(x[i])
		}
	}
	return x
}

// Fill returns deterministic values of dt in shape (0-d when shape is
// empty), reaching both ends of each integer type.
func Fill(dt array.DType, shape []int) *array.Array {
	n := 1
	for _, d := range shape {
		n *= d
	}
	f := func(i int) float64 { return float64(i%97)*0.5 - 20 }
	switch dt {
	case array.Bool:
		v := make([]bool, n)
		for i := range v {
			v[i] = i%3 == 1
		}
		return array.FromSlice(v, shape...)
	case array.Uint8:
		return gen(n, shape, func(i int) uint8 { return uint8(i * 7) })
	case array.Int32:
		return gen(n, shape, func(i int) int32 { return int32(i*7919 - 1000) })
	case array.Int64:
		return gen(n, shape, func(i int) int64 { return int64(i)*3_000_000_007 - 5 })
	// The integers below wrap around their range, so they reach both
	// ends of it (and uint64 values beyond 2^63).
	case array.Int8:
		return gen(n, shape, func(i int) int8 { return int8(i*37 - 128) })
	case array.Int16:
		return gen(n, shape, func(i int) int16 { return int16(i*4099 - 32768) })
	case array.Uint16:
		return gen(n, shape, func(i int) uint16 { return uint16(i*40503 + 65535) })
	case array.Uint32:
		return gen(n, shape, func(i int) uint32 { return uint32(i)*2654435761 + 4294967295 })
	case array.Uint64:
		return gen(n, shape, func(i int) uint64 { return uint64(i)*0x9E3779B97F4A7C15 + math.MaxUint64 })
	case array.Float16:
		return gen(n, shape, func(i int) array.F16 { return array.NewF16(float32(f(i))) })
	case array.BFloat16:
		return gen(n, shape, func(i int) array.BF16 { return array.NewBF16(float32(f(i))) })
	case array.Float32:
		return gen(n, shape, func(i int) float32 { return float32(f(i)) })
	case array.Float64:
		return gen(n, shape, func(i int) float64 { return f(i) + 1e-9 })
	case array.Complex64:
		return gen(n, shape, func(i int) complex64 { return complex(float32(f(i)), float32(-i)) })
	}
	panic(dt)
}

func gen[T array.Elem](n int, shape []int, f func(int) T) *array.Array {
	v := make([]T, n)
	for i := range v {
		v[i] = f(i)
	}
	return array.FromSlice(v, shape...)
}
