package ops_test

import (
	"math"
	"slices"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

func shapeIota(n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(i)
	}
	return s
}

// TestViewsShareStorage checks that the view ops evaluate to new strides
// over their input's memory rather than a copy.
func TestViewsShareStorage(t *testing.T) {
	x := array.FromSlice(shapeIota(24), 2, 3, 4)
	row := array.FromSlice(shapeIota(4), 4)
	col := array.FromSlice(shapeIota(3), 1, 3, 1)
	tests := []struct {
		name    string
		in      *array.Array
		view    func(a *array.Array) *array.Array
		strides []int
		offset  int
		want    []float32
	}{
		{"transpose", x, func(a *array.Array) *array.Array { return ops.Transpose(a) }, []int{1, 4, 12}, 0, nil},
		{"transpose axes", x, func(a *array.Array) *array.Array { return ops.Transpose(a, 1, -1, 0) }, []int{4, 1, 12}, 0, nil},
		{"swapaxes", x, func(a *array.Array) *array.Array { return ops.SwapAxes(a, 0, -1) }, []int{1, 4, 12}, 0, nil},
		{"moveaxis", x, func(a *array.Array) *array.Array { return ops.MoveAxis(a, 0, -1) }, []int{4, 1, 12}, 0, nil},
		{"slice", x, func(a *array.Array) *array.Array {
			return ops.Slice(a, ops.R(1, 2), ops.R(0, 3, 2), ops.R(1, ops.None))
		},
			[]int{12, 8, 1}, 13, []float32{13, 14, 15, 21, 22, 23}},
		{"slice negative step", x, func(a *array.Array) *array.Array {
			return ops.Slice(a, ops.Whole(), ops.R(ops.None, ops.None, -1), ops.R(-1, 0, -2))
		},
			[]int{12, -4, -2}, 11, []float32{11, 9, 7, 5, 3, 1, 23, 21, 19, 17, 15, 13}},
		{"slice huge negative step", x, func(a *array.Array) *array.Array { return ops.Slice(a, ops.R(ops.None, ops.None, math.MinInt)) },
			[]int{12, 4, 1}, 12, shapeIota(24)[12:]},
		{"slice axis", x, func(a *array.Array) *array.Array { return ops.SliceAxis(a, -1, ops.R(3, ops.None)) }, []int{12, 4, 1}, 3, nil},
		{"broadcast", row, func(a *array.Array) *array.Array { return ops.BroadcastTo(a, 2, 3, 4) }, []int{0, 0, 1}, 0, nil},
		{"broadcast size-1 axes", col, func(a *array.Array) *array.Array { return ops.BroadcastTo(a, 2, 3, 5) }, []int{0, 1, 0}, 0, nil},
		{"expand dims", x, func(a *array.Array) *array.Array { return ops.ExpandDims(a, 0, -1) }, nil, 0, nil},
		{"expand dims of transpose", x, func(a *array.Array) *array.Array { return ops.ExpandDims(ops.Transpose(a), 1) }, nil, 0, nil},
		{"squeeze", col, func(a *array.Array) *array.Array { return ops.Squeeze(a) }, []int{1}, 0, nil},
		{"squeeze of strided", x, func(a *array.Array) *array.Array {
			return ops.Squeeze(ops.Slice(a, ops.R(1, 2), ops.Whole(), ops.R(ops.None, ops.None, -3)), 0)
		}, []int{4, -3}, 15, []float32{15, 12, 19, 16, 23, 20}},
		{"reshape contiguous", x, func(a *array.Array) *array.Array { return ops.Reshape(a, 4, -1) }, []int{6, 1}, 0, nil},
		{"flatten", x, ops.Flatten, []int{1}, 0, nil},
		{"reshape splits a strided axis", x, func(a *array.Array) *array.Array {
			return ops.Reshape(ops.Slice(a, ops.Whole(), ops.Whole(), ops.R(0, 4, 2)), 3, 2, 2)
		}, []int{8, 4, 2}, 0, []float32{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22}},
		{"reshape merges contiguous axes of a slice", x, func(a *array.Array) *array.Array {
			return ops.Reshape(ops.Slice(a, ops.Whole(), ops.R(1, 3)), 2, 8)
		}, []int{12, 1}, 4, []float32{4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19, 20, 21, 22, 23}},
		{"reshape of broadcast", row, func(a *array.Array) *array.Array {
			return ops.Reshape(ops.BroadcastTo(a, 3, 4), 3, 2, 2)
		}, []int{0, 2, 1}, 0, nil},
		{"reshape of all-broadcast", array.Scalar(float32(7)), func(a *array.Array) *array.Array {
			return ops.Reshape(ops.BroadcastTo(a, 3, 4), 12)
		}, []int{0}, 0, []float32{7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7}},
	}
	for _, tc := range tests {
		v := tc.view(tc.in)
		if err := v.Eval(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if v.Storage() != tc.in.Storage() {
			t.Errorf("%s: result does not share its input's storage", tc.name)
		}
		if tc.strides != nil && (!slices.Equal(v.Strides(), tc.strides) || v.Offset() != tc.offset) {
			t.Errorf("%s: strides %v offset %d, want %v offset %d", tc.name, v.Strides(), v.Offset(), tc.strides, tc.offset)
		}
		if tc.want != nil {
			got, err := array.ToSlice[float32](v)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s: values %v, want %v", tc.name, got, tc.want)
			}
		}
	}
}

// TestSplitPartsAreViews checks that Split and SplitAt slice rather than
// copy.
func TestSplitPartsAreViews(t *testing.T) {
	x := array.FromSlice(shapeIota(24), 4, 6)
	parts := append(ops.Split(x, 3, 1), ops.SplitAt(x, []int{1, 3}, 0)...)
	if err := array.Eval(parts...); err != nil {
		t.Fatal(err)
	}
	for i, p := range parts {
		if p.Storage() != x.Storage() {
			t.Errorf("part %d does not share the input's storage", i)
		}
	}
}

// TestReshapeCopiesWhenLayoutForbidsView checks the copying path of
// Reshape: merging the axes of a transposed array needs new memory, laid
// out row-major, holding the transpose's elements.
func TestReshapeCopiesWhenLayoutForbidsView(t *testing.T) {
	x := array.FromSlice(shapeIota(6), 2, 3)
	tests := []struct {
		name string
		f    func() *array.Array
		want []float32
	}{
		{"transposed", func() *array.Array { return ops.Reshape(ops.Transpose(x), 6) }, []float32{0, 3, 1, 4, 2, 5}},
		{"transposed split", func() *array.Array { return ops.Reshape(ops.Transpose(x), 2, 3) }, []float32{0, 3, 1, 4, 2, 5}},
		{"reversed", func() *array.Array { return ops.Flatten(ops.Slice(x, ops.Whole(), ops.R(ops.None, ops.None, -1))) }, []float32{2, 1, 0, 5, 4, 3}},
		{"broadcast", func() *array.Array { return ops.Reshape(ops.BroadcastTo(ops.Reshape(x, 2, 1, 3), 2, 2, 3), 4, 3) },
			[]float32{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}},
	}
	for _, tc := range tests {
		r := tc.f()
		if err := r.Eval(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.Storage() == x.Storage() {
			t.Errorf("%s: shares its input's storage, want a copy", tc.name)
		}
		if !r.RowMajor() || r.Offset() != 0 {
			t.Errorf("%s: strides %v offset %d, want row-major", tc.name, r.Strides(), r.Offset())
		}
		got, err := array.ToSlice[float32](r)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: values %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestShapeNoOpsReturnInput checks that ops which change nothing return
// their input instead of adding a node.
func TestShapeNoOpsReturnInput(t *testing.T) {
	x := array.FromSlice(shapeIota(6), 2, 3)
	for name, f := range map[string]func() *array.Array{
		"reshape":      func() *array.Array { return ops.Reshape(x, 2, -1) },
		"transpose":    func() *array.Array { return ops.Transpose(x, 0, 1) },
		"swapaxes":     func() *array.Array { return ops.SwapAxes(x, 1, -1) },
		"broadcast":    func() *array.Array { return ops.BroadcastTo(x, 2, 3) },
		"expand none":  func() *array.Array { return ops.ExpandDims(x) },
		"squeeze none": func() *array.Array { return ops.Squeeze(x) },
		"slice whole":  func() *array.Array { return ops.Slice(x, ops.R(0, 10), ops.R(-5, ops.None)) },
		"concatenate":  func() *array.Array { return ops.Concatenate([]*array.Array{x}, 1) },
		"tile ones":    func() *array.Array { return ops.Tile(x, 1) },
		"repeat once":  func() *array.Array { return ops.Repeat(x, 1, 0) },
		"pad zero":     func() *array.Array { return ops.Pad(x, [][2]int{{0, 0}, {0, 0}}, 1) },
	} {
		if got := f(); got != x {
			t.Errorf("%s: returned a new array", name)
		}
	}
}

func TestShapePrimitivesEquivalent(t *testing.T) {
	tests := []struct {
		a, b array.Primitive
		want bool
	}{
		{&ops.ReshapePrim{Shape: []int{2, 3}}, &ops.ReshapePrim{Shape: []int{2, 3}}, true},
		{&ops.ReshapePrim{Shape: []int{2, 3}}, &ops.ReshapePrim{Shape: []int{3, 2}}, false},
		{&ops.ReshapePrim{Shape: []int{6}}, &ops.BroadcastPrim{Shape: []int{6}}, false},
		{&ops.TransposePrim{Axes: []int{1, 0}}, &ops.TransposePrim{Axes: []int{1, 0}}, true},
		{&ops.TransposePrim{Axes: []int{1, 0, 2}}, &ops.TransposePrim{Axes: []int{1, 2, 0}}, false},
		{&ops.BroadcastPrim{Shape: []int{4, 3}}, &ops.BroadcastPrim{Shape: []int{4, 3}}, true},
		{&ops.SlicePrim{Start: []int{1}, Stop: []int{3}, Step: []int{1}}, &ops.SlicePrim{Start: []int{1}, Stop: []int{3}, Step: []int{1}}, true},
		{&ops.SlicePrim{Start: []int{1}, Stop: []int{3}, Step: []int{1}}, &ops.SlicePrim{Start: []int{1}, Stop: []int{4}, Step: []int{1}}, false},
		{&ops.ConcatenatePrim{Axis: 1}, &ops.ConcatenatePrim{Axis: 1}, true},
		{&ops.ConcatenatePrim{Axis: 1}, &ops.ConcatenatePrim{Axis: 0}, false},
		{&ops.PadPrim{Widths: [][2]int{{1, 2}}, Value: 0}, &ops.PadPrim{Widths: [][2]int{{1, 2}}, Value: 0}, true},
		{&ops.PadPrim{Widths: [][2]int{{1, 2}}, Value: 0}, &ops.PadPrim{Widths: [][2]int{{2, 1}}, Value: 0}, false},
		{&ops.PadPrim{Widths: [][2]int{{1, 2}}, Value: 0}, &ops.PadPrim{Widths: [][2]int{{1, 2}}, Value: 1}, false},
	}
	for i, tc := range tests {
		if got := tc.a.(array.Equivalence).Equivalent(tc.b); got != tc.want {
			t.Errorf("case %d: %s.Equivalent(%s) = %v, want %v", i, tc.a.Name(), tc.b.Name(), got, tc.want)
		}
	}
}
