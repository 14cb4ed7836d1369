package ops_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/refcase"
	"github.com/fathom-go/fathom/ops"
)

// selectOps are the ops of select.json (gen_select.py).
var selectOps = []string{"Partition", "ArgPartition", "SearchSorted", "CountNonzero", "Diff", "Median", "Quantile", "LogCumSumExp"}

// TestSelectReference checks selection, order statistics and
// LogCumSumExp against numpy on every layout of their inputs.
func TestSelectReference(t *testing.T) {
	runSelectCases(t, func(refCase) bool { return true })
}

// runSelectCases runs the cases of select.json that keep accepts on the
// default device, and checks that every op had one.
func runSelectCases(t *testing.T, keep func(refCase) bool) {
	seen := map[string]bool{}
	for _, c := range loadCases(t, "select.json") {
		if !slices.Contains(selectOps, c.Op) {
			t.Fatalf("%s: unknown op %q", c.Name, c.Op)
		}
		if !keep(c) {
			continue
		}
		seen[c.Op] = true
		base := make([]*array.Array, len(c.Inputs))
		for i, r := range c.Inputs {
			base[i] = r.Build(t)
		}
		for _, l := range refLayouts {
			in := make([]*array.Array, len(base))
			for i, x := range base {
				in[i] = l.of(x)
			}
			name := c.Name + " " + l.name
			got := runSelect(t, c, in)
			if d := array.DefaultDevice(); got.Stream().Device != d {
				t.Fatalf("%s: ran on %v, not the default device %v", name, got.Stream().Device, d)
			}
			switch c.Op {
			case "Partition", "ArgPartition":
				checkPartition(t, name, c, base[0], got)
			default:
				checkArray(t, name, got, c.Expected[0])
			}
		}
	}
	for _, op := range selectOps {
		if !seen[op] {
			t.Errorf("no reference case for %s", op)
		}
	}
}

func runSelect(t *testing.T, c refCase, in []*array.Array) *array.Array {
	t.Helper()
	ints := func(name string) int {
		var v int
		if !c.Param(t, name, &v) {
			t.Fatalf("%s: no param %s", c.Name, name)
		}
		return v
	}
	flag := func(name string) bool {
		var v bool
		if !c.Param(t, name, &v) {
			t.Fatalf("%s: no param %s", c.Name, name)
		}
		return v
	}
	var axes []int
	c.Param(t, "axes", &axes)
	switch c.Op {
	case "Partition":
		return ops.Partition(in[0], ints("kth"), ints("axis"))
	case "ArgPartition":
		return ops.ArgPartition(in[0], ints("kth"), ints("axis"))
	case "SearchSorted":
		var side string
		c.Param(t, "side", &side)
		return ops.SearchSorted(in[0], in[1], side)
	case "CountNonzero":
		return ops.CountNonzero(in[0], axes...)
	case "Diff":
		return ops.Diff(in[0], ints("n"), ints("axis"))
	case "Median":
		return ops.Median(in[0], axes...)
	case "Quantile":
		var q float64
		c.Param(t, "q", &q)
		return ops.Quantile(in[0], q, axes...)
	default:
		return ops.LogCumSumExp(in[0], ints("axis"), flag("reverse"), flag("inclusive"))
	}
}

// linesOf returns a's values as float64, one slice per line along axis.
// It reads them without an op, so that it works on any device.
func linesOf(t *testing.T, a *array.Array, axis int) [][]float64 {
	t.Helper()
	v := float64s(t, a)
	shape := a.Shape()
	n, inner := shape[axis], 1
	for _, d := range shape[axis+1:] {
		inner *= d
	}
	var out [][]float64
	for i := 0; n > 0 && i < len(v); i += n * inner {
		for j := range inner {
			line := make([]float64, n)
			for k := range line {
				line[k] = v[i+k*inner+j]
			}
			out = append(out, line)
		}
	}
	return out
}

// float64s returns a's values converted to float64.
func float64s(t *testing.T, a *array.Array) []float64 {
	t.Helper()
	conv := func(s any, err error) []float64 {
		if err != nil {
			t.Fatal(err)
		}
		switch s := s.(type) {
		case []bool:
			return refcase.MapSlice(s, func(b bool) float64 { return map[bool]float64{false: 0, true: 1}[b] })
		case []array.F16:
			return refcase.MapSlice(s, func(x array.F16) float64 { return float64(x.Float32()) })
		case []array.BF16:
			return refcase.MapSlice(s, func(x array.BF16) float64 { return float64(x.Float32()) })
		case []float32:
			return refcase.MapSlice(s, func(x float32) float64 { return float64(x) })
		case []float64:
			return s
		case []int32:
			return refcase.MapSlice(s, func(x int32) float64 { return float64(x) })
		case []int64:
			return refcase.MapSlice(s, func(x int64) float64 { return float64(x) })
		case []uint8:
			return refcase.MapSlice(s, func(x uint8) float64 { return float64(x) })
		case []int8:
			return refcase.MapSlice(s, func(x int8) float64 { return float64(x) })
		case []int16:
			return refcase.MapSlice(s, func(x int16) float64 { return float64(x) })
		case []uint16:
			return refcase.MapSlice(s, func(x uint16) float64 { return float64(x) })
		case []uint32:
			return refcase.MapSlice(s, func(x uint32) float64 { return float64(x) })
		case []uint64:
			return refcase.MapSlice(s, func(x uint64) float64 { return float64(x) })
		}
		t.Fatalf("no float64 view of %T", s)
		return nil
	}
	switch a.DType() {
	case array.Bool:
		return conv(array.ToSlice[bool](a))
	case array.Float16:
		return conv(array.ToSlice[array.F16](a))
	case array.BFloat16:
		return conv(array.ToSlice[array.BF16](a))
	case array.Float32:
		return conv(array.ToSlice[float32](a))
	case array.Float64:
		return conv(array.ToSlice[float64](a))
	case array.Int32:
		return conv(array.ToSlice[int32](a))
	case array.Int64:
		return conv(array.ToSlice[int64](a))
	case array.Uint8:
		return conv(array.ToSlice[uint8](a))
	case array.Int8:
		return conv(array.ToSlice[int8](a))
	case array.Int16:
		return conv(array.ToSlice[int16](a))
	case array.Uint16:
		return conv(array.ToSlice[uint16](a))
	case array.Uint32:
		return conv(array.ToSlice[uint32](a))
	case array.Uint64:
		return conv(array.ToSlice[uint64](a))
	}
	t.Fatalf("no float64 view of %v", a.DType())
	return nil
}

// less is Sort's order: NaN after every number.
func less(a, b float64) bool { return a < b || (!math.IsNaN(a) && math.IsNaN(b)) }

func sameValue(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }

// checkPartition checks a Partition or ArgPartition result: its shape,
// that each line holds the input line's elements, that the kth element
// is numpy's, and that no element before it is larger and none after it
// smaller. Only that much of the order is defined.
func checkPartition(t *testing.T, name string, c refCase, in, got *array.Array) {
	t.Helper()
	var kth, axis int
	c.Param(t, "kth", &kth)
	c.Param(t, "axis", &axis)
	if axis < 0 {
		axis += in.Ndim()
	}
	if !slices.Equal(got.Shape(), in.Shape()) {
		t.Fatalf("%s: shape %v, want %v", name, got.Shape(), in.Shape())
	}
	want := c.Expected[0].Build(t)
	vals := got
	if c.Op == "ArgPartition" {
		if got.DType() != array.Int32 {
			t.Fatalf("%s: dtype %v, want int32", name, got.DType())
		}
		for i, line := range linesOf(t, got, axis) {
			s := slices.Clone(line)
			slices.Sort(s)
			for j, v := range s {
				if v != float64(j) {
					t.Fatalf("%s: line %d positions %v are not a permutation", name, i, line)
				}
			}
		}
		vals = ops.TakeAlongAxis(in, got, axis)
		want = ops.TakeAlongAxis(in, want, axis)
	} else if got.DType() != in.DType() {
		t.Fatalf("%s: dtype %v, want %v", name, got.DType(), in.DType())
	}
	gl, wl, il := linesOf(t, vals, axis), linesOf(t, want, axis), linesOf(t, in, axis)
	for i := range gl {
		g := gl[i]
		k := kth
		if k < 0 {
			k += len(g)
		}
		if !sameValue(g[k], wl[i][k]) {
			t.Fatalf("%s: line %d has %v at kth=%d, numpy %v", name, i, g[k], kth, wl[i][k])
		}
		for j, v := range g {
			if j < k && less(g[k], v) || j > k && less(v, g[k]) {
				t.Fatalf("%s: line %d = %v is not partitioned around position %d", name, i, g, k)
			}
		}
		gs, is := slices.Clone(g), slices.Clone(il[i])
		slices.SortFunc(gs, cmpNaNLast)
		slices.SortFunc(is, cmpNaNLast)
		if !slices.EqualFunc(gs, is, sameValue) {
			t.Fatalf("%s: line %d holds %v, the input %v", name, i, g, il[i])
		}
	}
}

func cmpNaNLast(a, b float64) int {
	switch {
	case less(a, b):
		return -1
	case less(b, a):
		return 1
	}
	return 0
}

// TestMedianKeepDims checks that KeepDims keeps Median's reduced axes.
func TestMedianKeepDims(t *testing.T) {
	a := array.FromSlice([]float32{3, 1, 2, 9, 7, 8, 4, 7}, 2, 2, 2)
	m := ops.KeepDims(ops.Median, a, 0, 2)
	if !slices.Equal(m.Shape(), []int{1, 2, 1}) {
		t.Fatalf("shape %v, want [1 2 1]", m.Shape())
	}
	got, err := array.ToSlice[float32](m)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{5, 5.5}; !slices.Equal(got, want) {
		t.Errorf("KeepDims(Median, axes 0 2) = %v, want %v", got, want)
	}
}

// TestSearchSortedMatchesBinarySearch compares SearchSorted on a long
// sorted array with ties against slices.BinarySearch-style counting.
func TestSearchSortedMatchesBinarySearch(t *testing.T) {
	a := make([]float32, 1000)
	for i := range a {
		a[i] = float32(i / 3)
	}
	v := []float32{-1, 0, 0.5, 1, 100, 333, 332.5, 334, float32(math.Inf(1))}
	for _, side := range []string{"left", "right"} {
		got, err := array.ToSlice[int32](ops.SearchSorted(array.FromSlice(a), array.FromSlice(v), side))
		if err != nil {
			t.Fatal(err)
		}
		for i, x := range v {
			want := 0
			for _, y := range a {
				if y < x || side == "right" && y == x {
					want++
				}
			}
			if int(got[i]) != want {
				t.Errorf("side %s: position of %v is %d, want %d", side, x, got[i], want)
			}
		}
	}
}

// TestSelectBadInput checks that bad arguments are an *array.Error naming
// the op and the shapes or values, raised at the call.
func TestSelectBadInput(t *testing.T) {
	m := func(s ...int) *array.Array { return ops.Zeros(s, array.Float32) }
	c64 := ops.Zeros([]int{3}, array.Complex64)
	for _, c := range []struct {
		op, want string
		f        func()
	}{
		{"ops.Partition", "kth=3 out of range for axis 0 of shape [3 2]", func() { ops.Partition(m(3, 2), 3, 0) }},
		{"ops.Partition", "kth=-3 out of range for axis -1 of shape [3 2]", func() { ops.Partition(m(3, 2), -3, -1) }},
		{"ops.Partition", "kth=0 out of range for axis 0 of shape [0]", func() { ops.Partition(m(0), 0, 0) }},
		{"ops.Partition", "axis 2 out of range for 2 dimensions", func() { ops.Partition(m(3, 2), 0, 2) }},
		{"ops.Partition", "axis -1 out of range for 0 dimensions", func() { ops.Partition(m(), 0, -1) }},
		{"ops.Partition", "dtype complex64 has no order", func() { ops.Partition(c64, 0, 0) }},
		{"ops.ArgPartition", "kth=5 out of range", func() { ops.ArgPartition(m(4), 5, 0) }},
		{"ops.ArgPartition", "nil", func() { ops.ArgPartition(nil, 0, 0) }},
		{"ops.SearchSorted", "a of shape [2 2] is not 1-D", func() { ops.SearchSorted(m(2, 2), m(3), "left") }},
		{"ops.SearchSorted", "a of shape [] is not 1-D", func() { ops.SearchSorted(m(), m(3), "left") }},
		{"ops.SearchSorted", `side "middle" is not "left" or "right"`, func() { ops.SearchSorted(m(2), m(3), "middle") }},
		{"ops.SearchSorted", "dtype complex64 has no order (a float32, v complex64)", func() { ops.SearchSorted(m(2), c64, "left") }},
		{"ops.SearchSorted", "nil", func() { ops.SearchSorted(m(2), nil, "left") }},
		{"ops.CountNonzero", "axis 2 out of range for 2 dimensions", func() { ops.CountNonzero(m(2, 2), 2) }},
		{"ops.CountNonzero", "axis -1 repeated in [1 -1]", func() { ops.CountNonzero(m(2, 2), 1, -1) }},
		{"ops.Diff", "a of shape [] is 0-d", func() { ops.Diff(m(), 1, 0) }},
		{"ops.Diff", "order n=-1 is negative (shape [3])", func() { ops.Diff(m(3), -1, 0) }},
		{"ops.Diff", "axis -2 out of range for 1 dimensions", func() { ops.Diff(m(3), 1, -2) }},
		{"ops.Median", "dtype complex64 has no order", func() { ops.Median(c64) }},
		{"ops.Median", "axis 1 out of range for 1 dimensions", func() { ops.Median(m(3), 1) }},
		{"ops.Quantile", "q=1.5 is not in [0, 1] (shape [3])", func() { ops.Quantile(m(3), 1.5) }},
		{"ops.Quantile", "q=NaN is not in [0, 1]", func() { ops.Quantile(m(3), math.NaN()) }},
		{"ops.Quantile", "q=-0.1 is not in [0, 1]", func() { ops.Quantile(m(3), -0.1) }},
		{"ops.Quantile", "axes [1] of shape [2 0] are empty", func() { ops.Quantile(m(2, 0), 0.5, 1) }},
		{"ops.Quantile", "dtype bool has no differences", func() { ops.Quantile(ops.Zeros([]int{3}, array.Bool), 0.5) }},
		{"ops.Quantile", "dtype complex64 has no order", func() { ops.Quantile(c64, 0.5) }},
		{"ops.LogCumSumExp", "not supported for dtype complex64", func() { ops.LogCumSumExp(c64, 0, false, true) }},
		{"ops.LogCumSumExp", "axis 1 out of range for 1 dimensions", func() { ops.LogCumSumExp(m(3), 1, false, true) }},
		{"ops.Partition", "nil", func() { ops.Partition(nil, 0, 0) }},
		{"ops.SearchSorted", "nil", func() { ops.SearchSorted(nil, m(3), "left") }},
		{"ops.CountNonzero", "nil", func() { ops.CountNonzero(nil) }},
		{"ops.Diff", "nil", func() { ops.Diff(nil, 1, 0) }},
		{"ops.Median", "nil", func() { ops.Median(nil) }},
		{"ops.Quantile", "nil", func() { ops.Quantile(nil, 0.5) }},
		{"ops.LogCumSumExp", "nil", func() { ops.LogCumSumExp(nil, 0, false, true) }},
	} {
		err := array.Try(c.f)
		var ae *array.Error
		if !errors.As(err, &ae) {
			t.Errorf("%s (%s): got %v, want an *array.Error", c.op, c.want, err)
			continue
		}
		if !strings.Contains(err.Error(), c.op) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q, want one naming %s with %q", c.op, err, c.op, c.want)
		}
	}
}
