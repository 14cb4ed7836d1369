package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fathom-go/fathom/internal/strided"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/opset"
)

// rdArr is a test input: a strided view over its own storage and the
// logical values of its elements in row-major order.
type rdArr struct {
	layout string
	buf    Buf
	vals   []float64
}

var rdLayouts = []string{"contiguous", "transposed", "stepped", "reversed", "broadcast"}

func rdSize(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// rdMake builds a view of dtype dt and the given logical shape laid out
// as layout says, filled with gen's values (rounded to dt).
func rdMake(dt array.DType, shape []int, layout string, gen func() float64) rdArr {
	nd := len(shape)
	strides := make([]int, nd)
	var storage, off int
	switch layout {
	case "transposed":
		rev := slices.Clone(shape)
		slices.Reverse(rev)
		rs := strided.RowMajor(rev)
		for i := range strides {
			strides[i] = rs[nd-1-i]
		}
		storage = rdSize(shape)
	case "stepped":
		base := make([]int, nd)
		for i, d := range shape {
			base[i] = 2*d + 1
		}
		bs := strided.RowMajor(base)
		for i := range strides {
			strides[i] = 2 * bs[i]
			off += bs[i]
		}
		storage = rdSize(base)
	case "reversed":
		copy(strides, strided.RowMajor(shape))
		for _, i := range slices.Compact([]int{0, nd - 1}) {
			if i >= 0 && i < nd && shape[i] > 0 {
				off += (shape[i] - 1) * strides[i]
				strides[i] = -strides[i]
			}
		}
		storage = rdSize(shape)
	case "broadcast":
		copy(strides, strided.RowMajor(shape))
		storage = rdSize(shape)
		for i, d := range shape {
			if d > 1 {
				strides[i] = 0
				storage /= d
				// the later axes keep their strides; the earlier ones shrink
				for j := 0; j < i; j++ {
					strides[j] /= d
				}
				break
			}
		}
	default:
		copy(strides, strided.RowMajor(shape))
		storage = rdSize(shape)
	}
	data := make([]byte, storage*dt.Size())
	b := Buf{Data: data, DType: dt, Shape: slices.Clone(shape), Strides: strides, Offset: off}
	for i := 0; i < storage; i++ {
		rdSet(b, i, gen())
	}
	stored := rdLoadAll(b)
	a := rdArr{layout: layout, buf: b, vals: make([]float64, 0, rdSize(shape))}
	strided.ForEachOffset(shape, strides, off, func(o int) { a.vals = append(a.vals, stored[o]) })
	return a
}

// rdLoadAll returns all of b's storage as float64s.
func rdLoadAll(b Buf) []float64 {
	n := len(b.Data) / b.DType.Size()
	out := make([]float64, n)
	conv := func(f func(i int) float64) {
		for i := range out {
			out[i] = f(i)
		}
	}
	switch b.DType {
	case array.Float32:
		x := elems[float32](b)
		conv(func(i int) float64 { return float64(x[i]) })
	case array.Float64:
		copy(out, elems[float64](b))
	default:
		conv(func(i int) float64 { return rdGet(b, i) })
	}
	return out
}

func rdSet(b Buf, i int, v float64) {
	switch b.DType {
	case array.Float32:
		elems[float32](b)[i] = float32(v)
	case array.Bool:
		elems[bool](b)[i] = v != 0
	case array.Uint8:
		elems[uint8](b)[i] = uint8(v)
	case array.Int32:
		elems[int32](b)[i] = int32(v)
	case array.Int64:
		elems[int64](b)[i] = int64(v)
	case array.Uint32:
		elems[uint32](b)[i] = uint32(v)
	case array.Float16:
		elems[array.F16](b)[i] = array.NewF16(float32(v))
	case array.BFloat16:
		elems[array.BF16](b)[i] = array.NewBF16(float32(v))
	case array.Float64:
		elems[float64](b)[i] = v
	default:
		elems[complex64](b)[i] = complex(float32(v), 0)
	}
}

func rdGet(b Buf, i int) float64 {
	switch b.DType {
	case array.Bool:
		if elems[bool](b)[i] {
			return 1
		}
		return 0
	case array.Uint8:
		return float64(elems[uint8](b)[i])
	case array.Int32:
		return float64(elems[int32](b)[i])
	case array.Int64:
		return float64(elems[int64](b)[i])
	case array.Uint32:
		return float64(elems[uint32](b)[i])
	case array.Float16:
		return float64(elems[array.F16](b)[i].Float32())
	case array.BFloat16:
		return float64(elems[array.BF16](b)[i].Float32())
	case array.Float32:
		return float64(elems[float32](b)[i])
	case array.Float64:
		return elems[float64](b)[i]
	default:
		return float64(real(elems[complex64](b)[i]))
	}
}

// rdOut returns a row-major output filled with a marker value, so a
// kernel that skips an element is caught.
func rdOut(dt array.DType, shape []int) Buf {
	n := rdSize(shape)
	b := contiguous(make([]byte, n*dt.Size()), dt, slices.Clone(shape))
	for i := range n {
		rdSet(b, i, 77)
	}
	return b
}

func rdValues(b Buf) []float64 {
	stored := rdLoadAll(b)
	out := make([]float64, 0, rdSize(b.Shape))
	strided.ForEachOffset(b.Shape, b.Strides, b.Offset, func(o int) { out = append(out, stored[o]) })
	return out
}

// rdWrap wraps an integer result to dt's range, as the kernels' integer
// arithmetic does.
func rdWrap(dt array.DType, v int64) float64 {
	switch dt {
	case array.Uint8:
		return float64(uint8(v))
	case array.Int32:
		return float64(int32(v))
	}
	return float64(v)
}

// rdFold maps each input element to its output element for a reduction
// over axes and calls f with both flat indices.
func rdFold(shape, axes []int, f func(in, out int)) {
	// The output index is an offset with stride 0 along the folded axes.
	st := make([]int, len(shape))
	s := 1
	for d := len(shape) - 1; d >= 0; d-- {
		if !slices.Contains(axes, d) {
			st[d] = s
			s *= shape[d]
		}
	}
	i := 0
	strided.ForEachOffset(shape, st, 0, func(o int) {
		f(i, o)
		i++
	})
}

func rdKept(shape, axes []int) []int {
	var k []int
	for i, d := range shape {
		if !slices.Contains(axes, i) {
			k = append(k, d)
		}
	}
	return k
}

// rdNaiveReduce is the reference: float64 arithmetic for floats, int64
// wrapped to the dtype for integers, and a bound on the rounding error of
// a float sum (the sum of magnitudes).
func rdNaiveReduce(op opset.ReduceOp, dt array.DType, shape, axes []int, vals []float64) (want, mag []float64) {
	outs := rdSize(rdKept(shape, axes))
	want, mag = make([]float64, outs), make([]float64, outs)
	ints := make([]int64, outs)
	for i := range want {
		switch op {
		case opset.Prod, opset.All:
			want[i], ints[i] = 1, 1
		case opset.Max:
			want[i] = math.Inf(-1)
		case opset.Min:
			want[i] = math.Inf(1)
		}
	}
	isInt := !dt.IsFloat() && dt != array.Complex64
	rdFold(shape, axes, func(i, o int) {
		v := vals[i]
		mag[o] += math.Abs(v)
		switch op {
		case opset.Sum:
			want[o] += v
			ints[o] += int64(v)
		case opset.Prod:
			want[o] *= v
			ints[o] *= int64(v)
		case opset.Max:
			if v > want[o] || v != v {
				want[o] = math.Max(want[o], v)
			}
		case opset.Min:
			if v < want[o] || v != v {
				want[o] = math.Min(want[o], v)
			}
		case opset.All:
			if v == 0 {
				want[o] = 0
			}
		case opset.Any:
			if v != 0 {
				want[o] = 1
			}
		}
	})
	if isInt && (op == opset.Sum || op == opset.Prod) {
		rdt, _ := op.Result(dt)
		for i := range want {
			want[i] = rdWrap(rdt, ints[i])
		}
	}
	return want, mag
}

// rdTol is the allowed error of a float result relative to the sum of
// magnitudes behind it.
func rdTol(dt array.DType) float64 {
	switch dt {
	case array.Float16:
		return 2e-3
	case array.BFloat16:
		return 1.6e-2
	case array.Float32, array.Complex64:
		return 2e-6
	case array.Float64:
		return 1e-13
	}
	return 0
}

func rdClose(got, want, scale, tol float64) bool {
	if math.IsNaN(want) || math.IsNaN(got) {
		return math.IsNaN(want) && math.IsNaN(got)
	}
	if math.IsInf(want, 0) {
		return got == want
	}
	return math.Abs(got-want) <= tol*scale+1e-300
}

func rdCompare(t *testing.T, name string, got, want, mag []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d results, want %d", name, len(got), len(want))
	}
	for i := range want {
		if !rdClose(got[i], want[i], math.Max(mag[i], math.Abs(want[i])), tol) {
			t.Fatalf("%s: element %d = %v, want %v", name, i, got[i], want[i])
		}
	}
}

func rdGen(r *rand.Rand, dt array.DType, op opset.ReduceOp) func() float64 {
	switch {
	case dt == array.Bool:
		return func() float64 { return float64(r.IntN(4) / 3) }
	case op == opset.Prod && dt.IsFloat():
		return func() float64 { return 0.75 + r.Float64()/2 }
	case op == opset.Prod && dt == array.Uint8:
		return func() float64 { return float64(r.IntN(4)) }
	case op == opset.Prod:
		return func() float64 { return float64(r.IntN(5) - 2) }
	case dt == array.Uint8:
		return func() float64 { return float64(r.IntN(256)) }
	case dt.IsFloat():
		return func() float64 { return math.Round(r.Float64()*2000-1000) / 64 }
	}
	return func() float64 { return float64(r.IntN(200) - 100) }
}

// rdAxesSets lists every subset of the axes of an n-dimensional array.
func rdAxesSets(n int) [][]int {
	var out [][]int
	for m := range 1 << n {
		var s []int
		for i := range n {
			if m&(1<<i) != 0 {
				s = append(s, i)
			}
		}
		out = append(out, s)
	}
	return out
}

func rdRunReduce(t *testing.T, r *rand.Rand, op opset.ReduceOp, dt array.DType, shape []int, layouts []string, axesSets [][]int) {
	t.Helper()
	odt, ok := op.Result(dt)
	if !ok {
		return
	}
	for _, layout := range layouts {
		a := rdMake(dt, shape, layout, rdGen(r, dt, op))
		for _, axes := range axesSets {
			name := fmt.Sprintf("%v %v %v %s axes %v", op, dt, shape, layout, axes)
			want, mag := rdNaiveReduce(op, dt, shape, axes, a.vals)
			folded := 1
			for _, d := range axes {
				folded *= shape[d]
			}
			empty := folded == 0 && len(want) > 0 && (op == opset.Max || op == opset.Min)
			out := rdOut(odt, rdKept(shape, axes))
			err := Reduce(op, out, a.buf, axes)
			if empty {
				wantKernelError(t, name, err, "cpu.Reduce", "empty")
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			rdCompare(t, name, rdValues(out), want, mag, rdTol(odt))
		}
	}
}

func TestReduceLayouts(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	shapes := [][]int{{}, {0}, {1}, {7}, {300}, {3, 0, 2}, {4, 5}, {7, 1, 9}, {3, 4, 5}, {2, 3, 4, 5}, {40, 33}, {3, 200}}
	for _, op := range []opset.ReduceOp{opset.Sum, opset.Prod, opset.Max, opset.Min, opset.All, opset.Any} {
		for _, dt := range []array.DType{array.Float32, array.Float64, array.Int32, array.Uint8, array.Bool, array.Float16, array.BFloat16, array.Int64} {
			for _, shape := range shapes {
				layouts := rdLayouts
				if dt != array.Float32 {
					layouts = []string{"contiguous", "stepped"}
				}
				rdRunReduce(t, r, op, dt, shape, layouts, rdAxesSets(len(shape)))
			}
		}
	}
}

// TestReduceLarge covers the parallel paths: a sum of everything split
// into parts, rows, columns (a leading axis), long columns split into
// parts, and a middle axis, with float32 sums checked against float64.
func TestReduceLarge(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		shape   []int
		layouts []string
		axes    [][]int
		more    bool // also max, any and float16
	}{
		{[]int{1 << 20}, []string{"contiguous"}, [][]int{{0}}, false},
		{[]int{1 << 17}, []string{"stepped", "broadcast"}, [][]int{{0}}, false},
		{[]int{200, 700}, []string{"contiguous", "transposed"}, [][]int{{0}, {1}, {0, 1}}, true},
		{[]int{1 << 14, 9}, []string{"contiguous"}, [][]int{{0}, {1}}, true},
		{[]int{2, 1 << 17}, []string{"contiguous"}, [][]int{{1}}, false},
		{[]int{32, 130, 33}, []string{"contiguous", "reversed"}, [][]int{{1}, {0, 2}}, true},
	} {
		rdRunReduce(t, r, opset.Sum, array.Float32, c.shape, c.layouts, c.axes)
		if c.more {
			for _, op := range []opset.ReduceOp{opset.Max, opset.Any} {
				rdRunReduce(t, r, op, array.Float32, c.shape, c.layouts[:1], c.axes)
			}
			rdRunReduce(t, r, opset.Sum, array.Float16, c.shape, c.layouts[:1], c.axes)
		}
	}
}

// TestReduceStridedOutput writes results through a strided, offset view
// and checks that the elements in between are left alone.
func TestReduceStridedOutput(t *testing.T) {
	in := rdMake(array.Float32, []int{4, 5}, "contiguous", func() float64 { return 1 })
	for _, c := range []struct {
		axes []int
		n    int
	}{{[]int{1}, 4}, {[]int{0}, 5}} {
		out := rdOut(array.Float32, []int{3 * c.n})
		out.Shape, out.Strides, out.Offset = []int{c.n}, []int{-3}, 3*c.n-2
		if err := Reduce(opset.Sum, out, in.buf, c.axes); err != nil {
			t.Fatal(err)
		}
		for i, v := range elems[float32](out) {
			want := float32(77)
			if i%3 == 1 {
				want = float32(20 / c.n)
			}
			if v != want {
				t.Errorf("axes %v: storage element %d = %v, want %v", c.axes, i, v, want)
			}
		}
	}
}

// TestReduceSumAccuracy sums a million copies of 0.1 in float32: a
// running float32 sum drifts by about 1%, pairwise summation stays within
// a few ulps.
func TestReduceSumAccuracy(t *testing.T) {
	const n = 1 << 20
	x := make([]float32, n)
	for i := range x {
		x[i] = 0.1
	}
	in := viewOf(x, array.Float32, []int{n}, nil, 0)
	for _, shape := range [][]int{{n}, {n / 8, 8}} {
		in.Shape, in.Strides = shape, strided.RowMajor(shape)
		out := rdOut(array.Float32, shape[1:])
		if err := Reduce(opset.Sum, out, in, []int{0}); err != nil {
			t.Fatal(err)
		}
		want := float64(float32(0.1)) * float64(shape[0])
		for i, got := range rdValues(out) {
			if math.Abs(got-want) > 1e-6*want {
				t.Errorf("shape %v: sum %d = %v, want %v", shape, i, got, want)
			}
		}
	}
}

func TestReduceNaN(t *testing.T) {
	nan := math.NaN()
	for _, vals := range [][]float64{{1, nan, 3}, {nan, 1, 2}, {1, 2, nan}, {math.Inf(-1), nan}} {
		for _, dt := range []array.DType{array.Float32, array.Float64, array.Float16} {
			i := 0
			a := rdMake(dt, []int{len(vals)}, "contiguous", func() float64 { i++; return vals[i-1] })
			for _, op := range []opset.ReduceOp{opset.Max, opset.Min, opset.Sum, opset.Prod} {
				out := rdOut(dt, nil)
				if err := Reduce(op, out, a.buf, []int{0}); err != nil {
					t.Fatal(err)
				}
				if got := rdValues(out)[0]; !math.IsNaN(got) {
					t.Errorf("%v of %v %v = %v, want NaN", op, dt, vals, got)
				}
			}
			out := rdOut(array.Bool, nil)
			if err := Reduce(opset.All, out, a.buf, []int{0}); err != nil || rdValues(out)[0] != 1 {
				t.Errorf("all of %v %v = %v (%v), want true: NaN is not zero", dt, vals, rdValues(out), err)
			}
		}
	}
}

func TestReduceNegativeZeroIsFalse(t *testing.T) {
	for _, dt := range []array.DType{array.Float16, array.BFloat16, array.Float32, array.Float64} {
		a := rdMake(dt, []int{3}, "contiguous", func() float64 { return math.Copysign(0, -1) })
		out := rdOut(array.Bool, nil)
		if err := Reduce(opset.Any, out, a.buf, []int{0}); err != nil || rdValues(out)[0] != 0 {
			t.Errorf("any(-0) in %v = %v (%v), want false", dt, rdValues(out), err)
		}
	}
}

func TestReduceIntegersWrap(t *testing.T) {
	for _, c := range []struct {
		dt   array.DType
		vals []float64
		op   opset.ReduceOp
		want float64
	}{
		// uint8 accumulates in uint32 (MLX's rule), so it does not wrap at 256
		{array.Uint8, []float64{200, 100}, opset.Sum, 300},
		{array.Uint8, []float64{16, 17}, opset.Prod, 272},
		{array.Int32, []float64{math.MaxInt32, 1}, opset.Sum, math.MinInt32},
		{array.Int32, []float64{65536, 65536}, opset.Prod, 0},
		{array.Int64, []float64{1 << 62, 1 << 62}, opset.Sum, math.MinInt64},
	} {
		i := 0
		a := rdMake(c.dt, []int{len(c.vals)}, "contiguous", func() float64 { i++; return c.vals[i-1] })
		rt, _ := c.op.Result(c.dt)
		out := rdOut(rt, nil)
		if err := Reduce(c.op, out, a.buf, []int{0}); err != nil || rdValues(out)[0] != c.want {
			t.Errorf("%v of %v %v = %v (%v), want %v", c.op, c.dt, c.vals, rdValues(out), err, c.want)
		}
	}
}

func TestReduceComplex(t *testing.T) {
	x := []complex64{1 + 2i, 3 - 1i, -2 + 0.5i, 0.5 + 1i}
	in := viewOf(x, array.Complex64, []int{2, 2}, nil, 0)
	for _, c := range []struct {
		op   opset.ReduceOp
		axes []int
		want []complex64
	}{
		{opset.Sum, []int{0, 1}, []complex64{2.5 + 2.5i}},
		{opset.Sum, []int{0}, []complex64{-1 + 2.5i, 3.5 + 0i}},
		{opset.Prod, []int{1}, []complex64{(1 + 2i) * (3 - 1i), (-2 + 0.5i) * (0.5 + 1i)}},
	} {
		out := rdOut(array.Complex64, rdKept([]int{2, 2}, c.axes))
		if err := Reduce(c.op, out, in, c.axes); err != nil {
			t.Fatal(err)
		}
		if got := elems[complex64](out); !slices.Equal(got, c.want) {
			t.Errorf("%v over %v = %v, want %v", c.op, c.axes, got, c.want)
		}
	}
	out := rdOut(array.Complex64, nil)
	wantKernelError(t, "max of complex", Reduce(opset.Max, out, in, []int{0, 1}), "cpu.Reduce", "complex64")
}

func TestReduceBad(t *testing.T) {
	in := rdMake(array.Float32, []int{2, 3}, "contiguous", func() float64 { return 1 })
	for _, c := range []struct {
		name string
		out  Buf
		axes []int
		op   opset.ReduceOp
		msg  string
	}{
		{"wrong dtype", rdOut(array.Float64, []int{2}), []int{1}, opset.Sum, "float64"},
		{"bad op", rdOut(array.Float32, []int{2}), []int{1}, opset.ReduceOp(9), "ReduceOp(9)"},
	} {
		wantKernelError(t, c.name, Reduce(c.op, c.out, in.buf, c.axes), "cpu.Reduce", c.msg)
	}
}

// rdNaiveLines calls f with the logical values of every line along axis
// (in the order of the remaining axes) and their flat indices.
func rdNaiveLines(shape []int, axis int, vals []float64, f func(line []float64, idx []int)) {
	outer := rdSize(shape[:axis])
	inner := rdSize(shape[axis+1:])
	n := shape[axis]
	for o := range outer {
		for i := range inner {
			line, idx := make([]float64, n), make([]int, n)
			for t := range n {
				idx[t] = (o*n+t)*inner + i
				line[t] = vals[idx[t]]
			}
			f(line, idx)
		}
	}
}

var rdLineShapes = []struct {
	shape []int
	axis  int
}{
	{[]int{7}, 0}, {[]int{1}, 0}, {[]int{5, 9}, 0}, {[]int{5, 9}, 1}, {[]int{4, 0, 3}, 0}, {[]int{4, 0, 3}, 1},
	{[]int{3, 4, 20}, 1}, {[]int{3, 40, 20}, 0}, {[]int{2, 3, 4, 5}, 2}, {[]int{50, 3}, 0},
}

// rdBigLineShapes are large enough to be split over cores, in panels and
// in lines; they run for float32 only.
var rdBigLineShapes = []struct {
	shape []int
	axis  int
}{{[]int{100, 2100}, 0}, {[]int{2100, 100}, 1}, {[]int{1 << 15, 4}, 1}, {[]int{2000, 3}, 0}}

// rdLineCases lists shape, axis, dtype and layouts for the kernels that
// work along one axis; big says the case is one of rdBigLineShapes, which
// callers may test less exhaustively.
func rdLineCases(dts []array.DType, f func(shape []int, axis int, dt array.DType, layouts []string, big bool)) {
	for _, c := range rdLineShapes {
		for _, dt := range dts {
			layouts := rdLayouts
			if dt != array.Float32 {
				layouts = []string{"contiguous", "reversed"}
			}
			f(c.shape, c.axis, dt, layouts, false)
		}
	}
	for _, c := range rdBigLineShapes {
		f(c.shape, c.axis, array.Float32, []string{"contiguous"}, true)
	}
}

func TestArgReduce(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	dts := []array.DType{array.Float32, array.Float64, array.Int32, array.Uint8, array.Bool, array.Float16, array.Int64}
	rdLineCases(dts, func(shape []int, axis int, dt array.DType, layouts []string, big bool) {
		for _, layout := range layouts {
			// few distinct values, so ties are common
			a := rdMake(dt, shape, layout, func() float64 { return float64(r.IntN(7)) })
			for _, op := range []opset.ArgOp{opset.ArgMax, opset.ArgMin} {
				name := fmt.Sprintf("%v %v %v axis %d %s", op, dt, shape, axis, layout)
				var want []float64
				rdNaiveLines(shape, axis, a.vals, func(line []float64, _ []int) {
					want = append(want, float64(argNaive(line, op == opset.ArgMax)))
				})
				kept := slices.Delete(slices.Clone(shape), axis, axis+1)
				out := rdOut(array.Int32, kept)
				err := ArgReduce(op, out, a.buf, axis)
				if shape[axis] == 0 && rdSize(kept) > 0 {
					wantKernelError(t, name, err, "cpu.ArgReduce", "empty")
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				rdCompare(t, name, rdValues(out), want, make([]float64, len(want)), 0)
			}
		}
	})
}

func TestArgReduceNaN(t *testing.T) {
	nan := math.NaN()
	// Lines along axis 0 of a 3×n matrix (the panel path) and along the
	// last axis (one line at a time).
	lines := [][]float64{{1, nan, 5}, {nan, 9, nan}, {3, 2, nan}, {4, 4, 1}}
	wantMax := []float64{1, 0, 2, 0}
	wantMin := []float64{1, 0, 2, 2}
	for _, dt := range []array.DType{array.Float32, array.Float64, array.BFloat16} {
		for _, byRows := range []bool{true, false} {
			shape, axis := []int{len(lines), 3}, 1
			at := func(i int) float64 { return lines[i/3][i%3] }
			if byRows {
				// transpose: 3 rows of len(lines) columns, repeated to pass the panel width
				const reps = 4
				shape, axis = []int{3, len(lines) * reps}, 0
				at = func(i int) float64 { return lines[(i%shape[1])%len(lines)][i/shape[1]] }
			}
			i := 0
			a := rdMake(dt, shape, "contiguous", func() float64 { i++; return at(i - 1) })
			kept := []int{shape[1-axis]}
			for _, c := range []struct {
				op   opset.ArgOp
				want []float64
			}{{opset.ArgMax, wantMax}, {opset.ArgMin, wantMin}} {
				out := rdOut(array.Int32, kept)
				if err := ArgReduce(c.op, out, a.buf, axis); err != nil {
					t.Fatal(err)
				}
				got := rdValues(out)
				for j, g := range got {
					if g != c.want[j%len(lines)] {
						t.Errorf("%v %v byRows=%v: line %d = %v, want %v", c.op, dt, byRows, j, g, c.want[j%len(lines)])
					}
				}
			}
		}
	}
}

func TestArgReduceBad(t *testing.T) {
	in := rdMake(array.Float32, []int{2, 3}, "contiguous", func() float64 { return 1 })
	wantKernelError(t, "dtype", ArgReduce(opset.ArgMax, rdOut(array.Int64, []int{2}), in.buf, 1), "cpu.ArgReduce", "int32")
	c := rdMake(array.Complex64, []int{2}, "contiguous", func() float64 { return 1 })
	wantKernelError(t, "complex", ArgReduce(opset.ArgMin, rdOut(array.Int32, nil), c.buf, 0), "cpu.ArgReduce", "complex64")
}

func rdScanIdentity(op opset.ScanOp, dt array.DType) float64 {
	switch op {
	case opset.CumProd:
		return 1
	case opset.CumMax:
		switch dt {
		case array.Bool, array.Uint8:
			return 0
		case array.Int32:
			return math.MinInt32
		case array.Int64:
			return math.MinInt64
		}
		return math.Inf(-1)
	case opset.CumMin:
		switch dt {
		case array.Bool:
			return 1
		case array.Uint8:
			return 255
		case array.Int32:
			return math.MaxInt32
		case array.Int64:
			return math.MaxInt64
		}
		return math.Inf(1)
	}
	return 0
}

func TestScan(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	dts := []array.DType{array.Float32, array.Float64, array.Int32, array.Uint8, array.Bool, array.BFloat16, array.Int64}
	rdLineCases(dts, func(shape []int, axis int, dt array.DType, layouts []string, big bool) {
		ops, modes := []opset.ScanOp{opset.CumSum, opset.CumProd, opset.CumMax, opset.CumMin}, [][2]bool{{false, true}, {true, true}, {false, false}, {true, false}}
		if dt != array.Float32 {
			// the modes are handled the same way for every dtype
			modes = [][2]bool{{false, true}, {true, false}}
		}
		if big {
			ops, modes = []opset.ScanOp{opset.CumSum, opset.CumMax}, [][2]bool{{false, true}, {true, false}}
		}
		for _, op := range ops {
			odt, _ := op.Result(dt)
			gen := rdGen(r, dt, opset.Sum)
			switch {
			case op == opset.CumProd && dt.IsFloat():
				// near 1, so running products of 2000 stay in float32's range
				gen = func() float64 { return 0.97 + r.Float64()*0.06 }
			case op == opset.CumProd:
				gen = rdGen(r, dt, opset.Prod)
			}
			for _, layout := range layouts {
				a := rdMake(dt, shape, layout, gen)
				for _, mode := range modes {
					reverse, inclusive := mode[0], mode[1]
					name := fmt.Sprintf("%v %v %v axis %d %s reverse=%v inclusive=%v", op, dt, shape, axis, layout, reverse, inclusive)
					want := make([]float64, len(a.vals))
					mag := make([]float64, len(a.vals))
					rdNaiveLines(shape, axis, a.vals, func(line []float64, idx []int) {
						acc, iacc, m := rdScanIdentity(op, odt), int64(rdScanIdentity(op, odt)), 0.0
						for s := range line {
							t := s
							if reverse {
								t = len(line) - 1 - s
							}
							if !inclusive {
								want[idx[t]], mag[idx[t]] = acc, m
								if odt.IsInteger() && op <= opset.CumProd {
									want[idx[t]] = rdWrap(odt, iacc)
								}
							}
							v := line[t]
							m += math.Abs(v)
							switch op {
							case opset.CumSum:
								acc += v
								iacc += int64(v)
							case opset.CumProd:
								acc *= v
								iacc *= int64(v)
							case opset.CumMax:
								if v > acc || v != v {
									acc = v
								}
							case opset.CumMin:
								if v < acc || v != v {
									acc = v
								}
							}
							if inclusive {
								want[idx[t]], mag[idx[t]] = acc, m
								if odt.IsInteger() && op <= opset.CumProd {
									want[idx[t]] = rdWrap(odt, iacc)
								}
							}
						}
					})
					out := rdOut(odt, shape)
					if err := Scan(op, out, a.buf, axis, reverse, inclusive); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					tol := rdTol(odt)
					if op == opset.CumProd {
						tol *= float64(shape[axis])
					}
					rdCompare(t, name, rdValues(out), want, mag, tol)
				}
			}
		}
	})
}

func TestScanBad(t *testing.T) {
	b := rdMake(array.Bool, []int{2}, "contiguous", func() float64 { return 1 })
	wantKernelError(t, "dtype", Scan(opset.CumSum, rdOut(array.Bool, []int{2}), b.buf, 0, false, true), "cpu.Scan", "int32")
	c := rdMake(array.Complex64, []int{2}, "contiguous", func() float64 { return 1 })
	wantKernelError(t, "complex", Scan(opset.CumMax, rdOut(array.Complex64, []int{2}), c.buf, 0, false, true), "cpu.Scan", "complex64")
}

// rdNaiveSoftmax applies scipy's formulas to one line in float64.
func rdNaiveSoftmax(kind smKind, line []float64) []float64 {
	m := math.Inf(-1)
	for _, v := range line {
		if v > m || v != v {
			m = math.Max(m, v)
		}
	}
	if kind != smSoftmax && (math.IsInf(m, 0) || math.IsNaN(m)) {
		m = 0
	}
	s := 0.0
	for _, v := range line {
		s += math.Exp(v - m)
	}
	out := make([]float64, len(line))
	switch kind {
	case smLogSumExp:
		return []float64{math.Log(s) + m}
	case smSoftmax:
		for i, v := range line {
			out[i] = math.Exp(v-m) / s
		}
	default:
		for i, v := range line {
			out[i] = (v - m) - math.Log(s)
		}
	}
	return out
}

func TestSoftmaxFamily(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	inf := math.Inf(1)
	specials := []float64{inf, -inf, math.NaN(), 1000, -1000, 88, 89}
	kernels := map[smKind]func(out, in Buf, axis int) error{smSoftmax: Softmax, smLogSoftmax: LogSoftmax, smLogSumExp: LogSumExp}
	dts := []array.DType{array.Float32, array.Float64, array.Float16, array.BFloat16}
	rdLineCases(dts, func(shape []int, axis int, dt array.DType, layouts []string, big bool) {
		for _, layout := range layouts {
			a := rdMake(dt, shape, layout, func() float64 {
				if r.IntN(50) == 0 {
					return specials[r.IntN(len(specials))]
				}
				return r.Float64()*20 - 10
			})
			for kind := smSoftmax; kind <= smLogSumExp; kind++ {
				name := fmt.Sprintf("kind %d %v %v axis %d %s", kind, dt, shape, axis, layout)
				oshape := shape
				want := make([]float64, len(a.vals))
				if kind == smLogSumExp {
					oshape = slices.Delete(slices.Clone(shape), axis, axis+1)
					want = want[:0]
				}
				rdNaiveLines(shape, axis, a.vals, func(line []float64, idx []int) {
					res := rdNaiveSoftmax(kind, line)
					if kind == smLogSumExp {
						want = append(want, res[0])
						return
					}
					for i, v := range res {
						want[idx[i]] = v
					}
				})
				out := rdOut(dt, oshape)
				if err := kernels[kind](out, a.buf, axis); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				mag := make([]float64, len(want))
				for i, w := range want {
					mag[i] = math.Max(math.Abs(w), 1)
				}
				rdCompare(t, name, rdValues(out), want, mag, 4*rdTol(dt))
			}
		}
	})
}

func TestSoftmaxStable(t *testing.T) {
	inf := math.Inf(1)
	nan := math.NaN()
	for _, c := range []struct {
		x           []float64
		soft, logsm []float64
		lse         float64
	}{
		{[]float64{1000, 1000}, []float64{0.5, 0.5}, []float64{-math.Ln2, -math.Ln2}, 1000 + math.Ln2},
		{[]float64{-1000, -1000}, []float64{0.5, 0.5}, []float64{-math.Ln2, -math.Ln2}, -1000 + math.Ln2},
		{[]float64{-inf, 0}, []float64{0, 1}, []float64{-inf, 0}, 0},
		{[]float64{-inf, -inf}, []float64{nan, nan}, []float64{nan, nan}, -inf},
		{[]float64{inf, 0}, []float64{nan, nan}, []float64{nan, -inf}, inf},
		{[]float64{nan, 0}, []float64{nan, nan}, []float64{nan, nan}, nan},
	} {
		for _, dt := range []array.DType{array.Float32, array.Float64, array.Float16} {
			i := 0
			a := rdMake(dt, []int{len(c.x)}, "contiguous", func() float64 { i++; return c.x[i-1] })
			for _, k := range []struct {
				f    func(out, in Buf, axis int) error
				want []float64
				drop bool
			}{{Softmax, c.soft, false}, {LogSoftmax, c.logsm, false}, {LogSumExp, []float64{c.lse}, true}} {
				shape := []int{len(c.x)}
				if k.drop {
					shape = nil
				}
				out := rdOut(dt, shape)
				if err := k.f(out, a.buf, 0); err != nil {
					t.Fatal(err)
				}
				got := rdValues(out)
				if dt == array.Float16 && k.drop && !math.IsInf(c.lse, 0) && math.Abs(c.lse) > 100 {
					continue // 1000.69 is not a float16
				}
				for j := range got {
					if !rdClose(got[j], k.want[j], 1, 2e-3) {
						t.Errorf("%v %v: element %d = %v, want %v", dt, c.x, j, got[j], k.want[j])
					}
				}
			}
		}
	}
}

func TestSoftmaxBad(t *testing.T) {
	in := rdMake(array.Int32, []int{2, 3}, "contiguous", func() float64 { return 1 })
	wantKernelError(t, "int", Softmax(rdOut(array.Int32, []int{2, 3}), in.buf, 1), "cpu.Softmax", "int32")
	f := rdMake(array.Float32, []int{2, 3}, "contiguous", func() float64 { return 1 })
	wantKernelError(t, "dtype", LogSoftmax(rdOut(array.Float64, []int{2, 3}), f.buf, 1), "cpu.LogSoftmax", "float64")
}

func TestSmExp32(t *testing.T) {
	maxULP := 0.0
	for x := float32(-104); x < 88.7; x += 0.0137 {
		want := math.Exp(float64(x))
		got := float64(smExp32(x))
		ulp := float64(math.Nextafter32(float32(want), float32(math.Inf(1))) - float32(want))
		if ulp == 0 {
			continue
		}
		maxULP = math.Max(maxULP, math.Abs(got-want)/ulp)
	}
	if maxULP > 0.503 {
		t.Errorf("smExp32 is off by up to %.3f ulp", maxULP)
	}
	for _, c := range [][2]float32{{0, 1}, {-200, 0}, {89, float32(math.Inf(1))}, {1e30, float32(math.Inf(1))}, {float32(math.Inf(1)), float32(math.Inf(1))}, {float32(math.Inf(-1)), 0}} {
		if got := smExp32(c[0]); got != c[1] {
			t.Errorf("smExp32(%v) = %v, want %v", c[0], got, c[1])
		}
	}
	if got := smExp32(float32(math.NaN())); got == got {
		t.Errorf("smExp32(NaN) = %v", got)
	}
}

func rdBenchSum(b *testing.B, shape []int, axes []int) {
	n := rdSize(shape)
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i%1000) / 1000
	}
	in := viewOf(x, array.Float32, shape, nil, 0)
	out := rdOut(array.Float32, rdKept(shape, axes))
	b.SetBytes(int64(4 * n))
	for b.Loop() {
		if err := Reduce(opset.Sum, out, in, axes); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReduceSumAll16M(b *testing.B)   { rdBenchSum(b, []int{1 << 24}, []int{0}) }
func BenchmarkReduceSumRows4K(b *testing.B)   { rdBenchSum(b, []int{4096, 4096}, []int{1}) }
func BenchmarkReduceSumCols4K(b *testing.B)   { rdBenchSum(b, []int{4096, 4096}, []int{0}) }
func BenchmarkReduceSumThinCols(b *testing.B) { rdBenchSum(b, []int{1 << 20, 8}, []int{0}) }
