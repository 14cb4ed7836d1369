package ops_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

func idxIntParam(t testing.TB, c refCase, name string) int {
	t.Helper()
	var v int
	if !c.Param(t, name, &v) {
		t.Fatalf("%s: no param %s", c.Name, name)
	}
	return v
}

func idxIntsParam(t testing.TB, c refCase, name string) []int {
	t.Helper()
	var v []int
	if !c.Param(t, name, &v) {
		t.Fatalf("%s: no param %s", c.Name, name)
	}
	return v
}

// idxRunCase applies the case's op (indexing.json) to ins.
func idxRunCase(t testing.TB, c refCase, ins []*array.Array) *array.Array {
	t.Helper()
	switch c.Op {
	case "take":
		return ops.Take(ins[0], ins[1], idxIntParam(t, c, "axis"))
	case "take_along_axis":
		return ops.TakeAlongAxis(ins[0], ins[1], idxIntParam(t, c, "axis"))
	case "put_along_axis":
		return ops.PutAlongAxis(ins[0], ins[1], ins[2], idxIntParam(t, c, "axis"))
	case "sort":
		return ops.Sort(ins[0], idxIntParam(t, c, "axis"))
	case "argsort":
		return ops.ArgSort(ins[0], idxIntParam(t, c, "axis"))
	case "topk":
		return ops.TopK(ins[0], idxIntParam(t, c, "k"), idxIntParam(t, c, "axis"))
	case "matmul":
		return ops.MatMul(ins[0], ins[1])
	case "outer":
		return ops.Outer(ins[0], ins[1])
	case "tensordot":
		return ops.Tensordot(ins[0], ins[1], idxIntsParam(t, c, "axes_a"), idxIntsParam(t, c, "axes_b"))
	}
	t.Fatalf("%s: unknown op %q", c.Name, c.Op)
	return nil
}

func TestIndexingReference(t *testing.T) {
	seen := map[string]int{}
	for _, c := range loadCases(t, "indexing.json") {
		seen[c.Op]++
		for _, lay := range refLayouts {
			name := c.Name + " (" + lay.name + ")"
			ins := make([]*array.Array, len(c.Inputs))
			for i, r := range c.Inputs {
				ins[i] = lay.of(r.Build(t))
			}
			var got *array.Array
			if err := array.Try(func() { got = idxRunCase(t, c, ins) }); err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			checkArray(t, name, got, c.Expected[0])
		}
	}
	for _, op := range []string{"take", "take_along_axis", "put_along_axis", "sort", "argsort", "topk", "matmul", "outer", "tensordot"} {
		if seen[op] == 0 {
			t.Errorf("indexing.json has no %s cases", op)
		}
	}
}

// wantOpError checks that err is an *array.Error of op whose message
// contains every part.
func wantOpError(t *testing.T, name string, err error, op string, parts ...string) {
	t.Helper()
	var e *array.Error
	if !errors.As(err, &e) || e.Op != op {
		t.Errorf("%s: got %v, want an %s *array.Error", name, err, op)
		return
	}
	for _, p := range parts {
		if !strings.Contains(e.Error(), p) {
			t.Errorf("%s: %q does not mention %q", name, e.Error(), p)
		}
	}
}

func TestIndexingBadInput(t *testing.T) {
	x := array.FromSlice([]float32{0, 1, 2, 3, 4, 5}, 2, 3)
	i32 := array.FromSlice([]int32{0, 1})
	i2 := array.FromSlice([]int32{0, 1, 1, 0}, 2, 2)
	f := array.FromSlice([]float32{0, 1})
	c := array.FromSlice([]complex64{1, 2})
	empty := array.FromSlice([]float32{}, 2, 0)
	s := array.Scalar(float32(1))
	for _, tc := range []struct {
		name  string
		op    string
		f     func()
		parts []string
	}{
		{"take float indices", "ops.Take", func() { ops.Take(x, f, 0) }, []string{"float32", "integer"}},
		{"take axis", "ops.Take", func() { ops.Take(x, i32, 2) }, []string{"axis 2"}},
		{"take negative axis", "ops.Take", func() { ops.Take(x, i32, -3) }, []string{"axis -3"}},
		{"take 0-d", "ops.Take", func() { ops.Take(s, i32, 0) }, []string{"axis 0", "0 dimensions"}},
		{"take from empty axis", "ops.Take", func() { ops.Take(empty, i32, 1) }, []string{"[2 0]", "empty"}},
		{"take_along_axis rank", "ops.TakeAlongAxis", func() { ops.TakeAlongAxis(x, i32, 1) }, []string{"[2]", "[2 3]", "ranks"}},
		{"take_along_axis float", "ops.TakeAlongAxis", func() { ops.TakeAlongAxis(x, ops.AsType(i2, array.Float32), 1) }, []string{"float32"}},
		{"take_along_axis axis", "ops.TakeAlongAxis", func() { ops.TakeAlongAxis(x, i2, 2) }, []string{"axis 2"}},
		{"take_along_axis broadcast", "ops.TakeAlongAxis", func() {
			ops.TakeAlongAxis(x, array.FromSlice([]int32{0, 0, 0}, 3, 1), 1)
		}, []string{"[2 3]", "[3 1]"}},
		{"take_along_axis empty axis", "ops.TakeAlongAxis", func() {
			ops.TakeAlongAxis(empty, array.FromSlice([]int32{0, 0}, 2, 1), 1)
		}, []string{"empty"}},
		{"put_along_axis rank", "ops.PutAlongAxis", func() { ops.PutAlongAxis(x, i32, s, 1) }, []string{"ranks"}},
		{"put_along_axis float", "ops.PutAlongAxis", func() { ops.PutAlongAxis(x, ops.AsType(i2, array.Float64), s, 1) }, []string{"float64"}},
		{"put_along_axis index shape", "ops.PutAlongAxis", func() {
			ops.PutAlongAxis(x, array.FromSlice([]int32{0, 0, 0}, 3, 1), s, 1)
		}, []string{"[3 1]", "[2 3]"}},
		{"put_along_axis index wider than array", "ops.PutAlongAxis", func() {
			ops.PutAlongAxis(array.FromSlice([]float32{1, 2, 3}, 1, 3), array.FromSlice([]int32{0, 0}, 2, 1), s, 1)
		}, []string{"[2 1]", "[1 3]"}},
		{"put_along_axis values", "ops.PutAlongAxis", func() {
			ops.PutAlongAxis(x, i2, array.FromSlice([]float32{1, 2, 3}), 1)
		}, []string{"values of shape [3]", "[2 2]"}},
		{"put_along_axis axis", "ops.PutAlongAxis", func() { ops.PutAlongAxis(x, i2, s, -3) }, []string{"axis -3"}},
		{"sort complex", "ops.Sort", func() { ops.Sort(c, 0) }, []string{"complex64"}},
		{"sort axis", "ops.Sort", func() { ops.Sort(x, 2) }, []string{"axis 2"}},
		{"sort 0-d", "ops.Sort", func() { ops.Sort(s, -1) }, []string{"axis -1"}},
		{"argsort complex", "ops.ArgSort", func() { ops.ArgSort(c, 0) }, []string{"complex64"}},
		{"argsort axis", "ops.ArgSort", func() { ops.ArgSort(x, -3) }, []string{"axis -3"}},
		{"topk k too big", "ops.TopK", func() { ops.TopK(x, 4, 1) }, []string{"k=4", "[2 3]"}},
		{"topk k negative", "ops.TopK", func() { ops.TopK(x, -1, 1) }, []string{"k=-1"}},
		{"topk axis", "ops.TopK", func() { ops.TopK(x, 1, 2) }, []string{"axis 2"}},
		{"topk complex", "ops.TopK", func() { ops.TopK(c, 1, 0) }, []string{"complex64"}},
	} {
		wantOpError(t, tc.name, array.Try(tc.f), tc.op, tc.parts...)
	}
}

// TestIndexOutOfRangeAtEval checks that an index found out of range only
// when the kernel runs comes back from Eval as an *array.Error naming
// the op, the index and the axis size.
func TestIndexOutOfRangeAtEval(t *testing.T) {
	x := array.FromSlice([]float32{0, 1, 2, 3, 4, 5}, 2, 3)
	for _, tc := range []struct {
		name  string
		op    string
		f     func() *array.Array
		parts []string
	}{
		{"take", "ops.Take", func() *array.Array { return ops.Take(x, array.FromSlice([]int32{0, 3}), 1) },
			[]string{"index 3", "axis 1", "size 3"}},
		{"take negative", "ops.Take", func() *array.Array { return ops.Take(x, array.FromSlice([]int64{-3}), 0) },
			[]string{"index -3", "axis 0", "size 2"}},
		{"take_along_axis", "ops.TakeAlongAxis", func() *array.Array {
			return ops.TakeAlongAxis(x, array.FromSlice([]uint8{0, 7}, 2, 1), 1)
		}, []string{"index 7", "size 3"}},
		{"put_along_axis", "ops.PutAlongAxis", func() *array.Array {
			return ops.PutAlongAxis(x, array.FromSlice([]int32{-4, 0}, 2, 1), array.Scalar(float32(9)), 1)
		}, []string{"index -4", "size 3"}},
	} {
		var out *array.Array
		if err := array.Try(func() { out = tc.f() }); err != nil {
			t.Errorf("%s: the call failed: %v", tc.name, err)
			continue
		}
		wantOpError(t, tc.name, out.Eval(), tc.op, tc.parts...)
	}
}

func TestIndexingEquivalent(t *testing.T) {
	for _, tc := range []struct {
		a, b array.Primitive
		want bool
	}{
		{&ops.TakePrim{Axis: 1}, &ops.TakePrim{Axis: 1}, true},
		{&ops.TakePrim{Axis: 1}, &ops.TakePrim{Axis: 0}, false},
		{&ops.TakePrim{Axis: 1}, &ops.TakeAlongAxisPrim{Axis: 1}, false},
		{&ops.TakeAlongAxisPrim{Axis: 0}, &ops.TakeAlongAxisPrim{Axis: 0}, true},
		{&ops.TakeAlongAxisPrim{Axis: 0}, &ops.TakeAlongAxisPrim{Axis: 1}, false},
		{&ops.PutAlongAxisPrim{Axis: 2}, &ops.PutAlongAxisPrim{Axis: 2}, true},
		{&ops.PutAlongAxisPrim{Axis: 2}, &ops.PutAlongAxisPrim{Axis: 1}, false},
		{&ops.SortPrim{Axis: 0}, &ops.SortPrim{Axis: 0}, true},
		{&ops.SortPrim{Axis: 0}, &ops.ArgSortPrim{Axis: 0}, false},
		{&ops.ArgSortPrim{Axis: 1}, &ops.ArgSortPrim{Axis: 1}, true},
		{&ops.ArgSortPrim{Axis: 1}, &ops.ArgSortPrim{Axis: 0}, false},
		{&ops.TopKPrim{K: 2, Axis: 1}, &ops.TopKPrim{K: 2, Axis: 1}, true},
		{&ops.TopKPrim{K: 2, Axis: 1}, &ops.TopKPrim{K: 3, Axis: 1}, false},
		{&ops.TopKPrim{K: 2, Axis: 1}, &ops.TopKPrim{K: 2, Axis: 0}, false},
		{&ops.MatMulPrim{}, &ops.MatMulPrim{}, true},
		{&ops.MatMulPrim{}, &ops.SortPrim{}, false},
	} {
		if got := tc.a.(array.Equivalence).Equivalent(tc.b); got != tc.want {
			t.Errorf("%T%+v.Equivalent(%T%+v) = %v, want %v", tc.a, tc.a, tc.b, tc.b, got, tc.want)
		}
	}
}

// TestSortByArgSort checks the documented identity TakeAlongAxis(a,
// ArgSort(a)) == Sort(a) on a larger array, which also runs the kernels
// over many lines in parallel.
func TestSortByArgSort(t *testing.T) {
	const rows, cols = 300, 257
	v := make([]float32, rows*cols)
	for i := range v {
		v[i] = float32((i*7919)%1000) / 8
	}
	a := array.FromSlice(v, rows, cols)
	for _, axis := range []int{0, 1} {
		got, err := array.ToSlice[float32](ops.TakeAlongAxis(a, ops.ArgSort(a, axis), axis))
		if err != nil {
			t.Fatal(err)
		}
		want, err := array.ToSlice[float32](ops.Sort(a, axis))
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("axis %d: element %d = %v, want %v", axis, i, got[i], want[i])
			}
		}
		top, err := array.ToSlice[float32](ops.TopK(a, 1, axis))
		if err != nil {
			t.Fatal(err)
		}
		mx := ops.Take(ops.Sort(a, axis), array.Scalar(int32(-1)), axis)
		last, err := array.ToSlice[float32](mx)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(top) != fmt.Sprint(last) {
			t.Errorf("axis %d: TopK(1) differs from the last sorted element", axis)
		}
	}
}
