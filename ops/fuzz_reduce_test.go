package ops_test

import (
	"errors"
	"math"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// fuzzReduceInput decodes a fuzz input: byte 0 gives the rank (0 to 4),
// the next rank bytes the dimensions (0 to 4), the next one a bit mask of
// axes (none set: reduce everything), the next one the ArgMax axis and
// whether to read the array transposed; the rest are the elements, small
// multiples of 1/4 (so float32 sums are exact) with 0x7f standing for NaN.
func fuzzReduceInput(b []byte) (x []float32, shape, axes []int, argAxis int, transposed bool) {
	next := func() int {
		if len(b) == 0 {
			return 0
		}
		v := int(b[0])
		b = b[1:]
		return v
	}
	rank := next() % 5
	shape = make([]int, rank)
	for i := range shape {
		shape[i] = next() % 5
	}
	mask := next()
	for i := range rank {
		if mask&(1<<i) != 0 {
			axes = append(axes, i)
		}
	}
	flags := next()
	argAxis = flags % max(rank, 1)
	transposed = flags&0x80 != 0
	n := 1
	for _, d := range shape {
		n *= d
	}
	x = make([]float32, n)
	for i := range x {
		v := next()
		if v == 0x7f {
			x[i] = float32(math.NaN())
		} else {
			x[i] = float32(int8(v)) / 4
		}
	}
	return x, shape, axes, argAxis, transposed
}

// fuzzFold visits the elements of a row-major array of shape, calling f
// with each element's flat index and the flat index of its result when
// the axes in fold are reduced away.
func fuzzFold(shape []int, fold []bool, f func(i, o int)) {
	n := 1
	for _, d := range shape {
		n *= d
	}
	idx := make([]int, len(shape))
	for i := range n {
		o := 0
		for d := range shape {
			if !fold[d] {
				o = o*shape[d] + idx[d]
			}
		}
		f(i, o)
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
	}
}

// FuzzReduce checks Sum, Max and ArgMax on random shapes, axes and layouts
// against a naive reference. Bad inputs must panic with *array.Error, and
// nothing else may panic.
func FuzzReduce(f *testing.F) {
	f.Add([]byte{2, 3, 4, 1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	f.Add([]byte{3, 2, 3, 4, 5, 0x81, 0x7f, 1, 2, 0x80, 0xff, 3})
	f.Add([]byte{0, 0, 0, 9})
	f.Add([]byte{1, 0, 1, 0})
	f.Add([]byte{2, 0, 3, 1, 1})
	f.Add([]byte{4, 2, 1, 3, 2, 0x0f, 0x83, 5, 0x7f, 9, 200, 7, 7, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{3, 4, 4, 4, 0x06, 0x02, 10, 20, 30, 0x7f})
	f.Fuzz(func(t *testing.T, b []byte) {
		data, shape, axes, argAxis, transposed := fuzzReduceInput(b)
		a := array.FromSlice(data, shape...)
		if transposed {
			// the same values read through reversed strides
			a = ops.Transpose(ops.Copy(ops.Transpose(a)))
		}
		fold := make([]bool, len(shape))
		for _, ax := range axes {
			fold[ax] = true
		}
		if len(axes) == 0 {
			for i := range fold {
				fold[i] = true
			}
		}
		outs, folded := 1, 1
		for i, d := range shape {
			if fold[i] {
				folded *= d
			} else {
				outs *= d
			}
		}
		sum := make([]float64, outs)
		mx := make([]float64, outs)
		for i := range mx {
			mx[i] = math.Inf(-1)
		}
		fuzzFold(shape, fold, func(i, o int) {
			v := float64(data[i])
			sum[o] += v
			if v > mx[o] || v != v {
				mx[o] = math.Max(mx[o], v)
			}
		})
		check := func(name string, got *array.Array, want []float64) {
			g, err := array.ToSlice[float32](got)
			if err != nil {
				t.Fatalf("%s of %v over %v: %v", name, shape, axes, err)
			}
			if len(g) != len(want) {
				t.Fatalf("%s of %v over %v: %d results, want %d", name, shape, axes, len(g), len(want))
			}
			for i, w := range want {
				if float64(g[i]) != w && !(math.IsNaN(w) && g[i] != g[i]) {
					t.Fatalf("%s of %v over %v: element %d = %v, want %v", name, shape, axes, i, g[i], w)
				}
			}
		}
		check("Sum", ops.Sum(a, axes...), sum)
		err := array.Try(func() { check("Max", ops.Max(a, axes...), mx) })
		if folded == 0 && outs > 0 {
			var e *array.Error
			if !errors.As(err, &e) || e.Op != "ops.Max" {
				t.Fatalf("Max of %v over empty axes %v: got %v, want an ops.Max *array.Error", shape, axes, err)
			}
		} else if err != nil {
			t.Fatalf("Max of %v over %v: %v", shape, axes, err)
		}
		if len(shape) == 0 {
			return
		}
		var am *array.Array
		err = array.Try(func() { am = ops.ArgMax(a, argAxis) })
		n := shape[argAxis]
		kept := 1
		for i, d := range shape {
			if i != argAxis {
				kept *= d
			}
		}
		if n == 0 && kept > 0 {
			var e *array.Error
			if !errors.As(err, &e) || e.Op != "ops.ArgMax" {
				t.Fatalf("ArgMax of %v along empty axis %d: got %v, want an ops.ArgMax *array.Error", shape, argAxis, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("ArgMax of %v along %d: %v", shape, argAxis, err)
		}
		got, err := array.ToSlice[int32](am)
		if err != nil {
			t.Fatal(err)
		}
		inner := 1
		for _, d := range shape[argAxis+1:] {
			inner *= d
		}
		for o, g := range got {
			base := o/inner*n*inner + o%inner
			best := 0
			for k := 1; k < n; k++ {
				v, bv := data[base+k*inner], data[base+best*inner]
				if bv != bv {
					break
				}
				if v > bv || v != v {
					best = k
				}
			}
			if int(g) != best {
				t.Fatalf("ArgMax of %v along %d: result %d = %d, want %d", shape, argAxis, o, g, best)
			}
		}
	})
}
