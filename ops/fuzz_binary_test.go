package ops_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// fuzzBytes hands out the fuzzer's bytes one at a time, then zeros.
type fuzzBytes []byte

func (b *fuzzBytes) next() byte {
	if len(*b) == 0 {
		return 0
	}
	v := (*b)[0]
	*b = (*b)[1:]
	return v
}

// naiveBroadcast is numpy's rule written out; ok is false when the shapes
// do not broadcast.
func naiveBroadcast(a, b []int) (out []int, ok bool) {
	n := max(len(a), len(b))
	out = make([]int, n)
	for i := range n {
		da, db := 1, 1
		if j := i - (n - len(a)); j >= 0 {
			da = a[j]
		}
		if j := i - (n - len(b)); j >= 0 {
			db = b[j]
		}
		switch {
		case da == db || db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, false
		}
	}
	return out, true
}

// sourceIndex maps a multi-index of the broadcast result to the flat
// row-major index of an operand of shape s.
func sourceIndex(idx, s []int) int {
	off := len(idx) - len(s)
	flat := 0
	for i, d := range s {
		k := idx[off+i]
		if d == 1 {
			k = 0
		}
		flat = flat*d + k
	}
	return flat
}

type fuzzOp struct {
	name string
	f    func(a, b *array.Array) *array.Array
	ref  func(x, y float64, isInt bool) float64
}

var fuzzOps = []fuzzOp{
	{"Add", ops.Add, func(x, y float64, isInt bool) float64 {
		if isInt {
			return float64(int32(x) + int32(y))
		}
		return float64(float32(x) + float32(y))
	}},
	{"Mul", ops.Mul, func(x, y float64, isInt bool) float64 {
		if isInt {
			return float64(int32(x) * int32(y))
		}
		return float64(float32(x) * float32(y))
	}},
	{"Maximum", ops.Maximum, func(x, y float64, _ bool) float64 {
		if math.IsNaN(x) || math.IsNaN(y) {
			return math.NaN()
		}
		return math.Max(x, y)
	}},
	{"Less", ops.Less, func(x, y float64, _ bool) float64 {
		if x < y {
			return 1
		}
		return 0
	}},
}

// fuzzValues returns n values of an operand: small integers, quarters
// and, for floats, the odd NaN or infinity.
func fuzzValues(r *fuzzBytes, n int, isFloat bool) []float64 {
	v := make([]float64, n)
	for i := range v {
		b := r.next()
		switch {
		case isFloat && b == 0x7f:
			v[i] = math.NaN()
		case isFloat && b == 0x80:
			v[i] = math.Inf(-1)
		case isFloat:
			v[i] = float64(int8(b)) / 4
		default:
			v[i] = float64(int8(b))
		}
	}
	return v
}

func fuzzArray(v []float64, shape []int, isFloat bool) *array.Array {
	if isFloat {
		s := make([]float32, len(v))
		for i, x := range v {
			s[i] = float32(x)
		}
		return array.FromSlice(s, shape...)
	}
	s := make([]int32, len(v))
	for i, x := range v {
		s[i] = int32(x)
	}
	return array.FromSlice(s, shape...)
}

func resultValues(t *testing.T, a *array.Array) []float64 {
	t.Helper()
	switch a.DType() {
	case array.Float32:
		s, err := array.ToSlice[float32](a)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float64, len(s))
		for i, x := range s {
			out[i] = float64(x)
		}
		return out
	case array.Int32:
		s, err := array.ToSlice[int32](a)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float64, len(s))
		for i, x := range s {
			out[i] = float64(x)
		}
		return out
	case array.Bool:
		s, err := array.ToSlice[bool](a)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float64, len(s))
		for i, x := range s {
			if x {
				out[i] = 1
			}
		}
		return out
	}
	t.Fatalf("unexpected result dtype %v", a.DType())
	return nil
}

// FuzzBroadcastBinary decodes two operand shapes of rank <= 4 with dims
// 0..4 (each operand dropping leading axes and turning random axes to
// size 1, sometimes with a dim that cannot broadcast), their dtypes
// (float32, int32 or one of each) and values, and checks Add, Mul,
// Maximum and Less against a reference with explicit broadcasting index
// math; shapes that do not broadcast must give *array.Error.
func FuzzBroadcastBinary(f *testing.F) {
	f.Add([]byte{2, 2, 3, 0, 1, 1, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}) // [2 3] with a row
	f.Add([]byte{2, 4, 2, 0, 2, 2, 3, 1, 0, 9, 8, 0x7f, 6, 5, 4, 3, 2})         // column
	f.Add([]byte{3, 2, 3, 4, 0, 0, 0, 3, 3, 3, 1, 1, 0x80, 1, 1, 1})            // both sides size 1
	f.Add([]byte{0, 0, 0, 0, 0, 5, 7})                                          // 0-d
	f.Add([]byte{2, 0, 3, 0, 1, 1, 1, 1, 1})                                    // empty
	f.Add([]byte{4, 4, 3, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 4, 5})         // rank 4
	f.Add([]byte{2, 3, 2, 0, 3, 1, 0, 1, 8, 0, 2, 3})                           // mismatch
	f.Add([]byte{1, 4, 4, 1, 0, 1, 200, 100, 50, 25, 127, 128, 129})            // mixed dtypes
	f.Fuzz(func(t *testing.T, data []byte) {
		r := fuzzBytes(data)
		nd := int(r.next() % 5)
		out := make([]int, nd)
		for i := range out {
			out[i] = int(r.next() % 5)
		}
		operandShape := func() []int {
			s := slices.Clone(out[int(r.next())%(nd+1):])
			for i := range s {
				if r.next()%3 == 0 {
					s[i] = 1
				}
			}
			return s
		}
		sa, sb := operandShape(), operandShape()
		if mode := r.next(); mode%4 == 0 && len(sa) > 0 {
			sa[int(mode/4)%len(sa)] = int(r.next() % 5)
		}
		kinds := r.next() % 3
		aFloat, bFloat := kinds == 0, kinds != 1
		na, nb := 1, 1
		for _, d := range sa {
			na *= d
		}
		for _, d := range sb {
			nb *= d
		}
		va, vb := fuzzValues(&r, na, aFloat), fuzzValues(&r, nb, bFloat)
		a, b := fuzzArray(va, sa, aFloat), fuzzArray(vb, sb, bFloat)
		isInt := !aFloat && !bFloat
		shape, ok := naiveBroadcast(sa, sb)
		for _, op := range fuzzOps {
			var got *array.Array
			err := array.Try(func() { got = op.f(a, b) })
			if !ok {
				var ae *array.Error
				if !errors.As(err, &ae) || !strings.Contains(err.Error(), "ops."+op.name+": shapes") {
					t.Fatalf("%s(%v, %v): error %v, want a broadcast *array.Error", op.name, sa, sb, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s(%v, %v): %v", op.name, sa, sb, err)
			}
			if !slices.Equal(got.Shape(), shape) {
				t.Fatalf("%s(%v, %v) has shape %v, want %v", op.name, sa, sb, got.Shape(), shape)
			}
			vals := resultValues(t, got)
			idx := make([]int, len(shape))
			for i, g := range vals {
				rem := i
				for d := len(shape) - 1; d >= 0; d-- {
					idx[d] = rem % shape[d]
					rem /= shape[d]
				}
				x, y := va[sourceIndex(idx, sa)], vb[sourceIndex(idx, sb)]
				want := op.ref(x, y, isInt)
				if g != want && !(math.IsNaN(g) && math.IsNaN(want)) {
					t.Fatalf("%s(%v, %v) at %v: %v, %v gives %v, want %v", op.name, sa, sb, idx, x, y, g, want)
				}
			}
		}
	})
}
