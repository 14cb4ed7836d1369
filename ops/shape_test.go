package ops_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/refcase"
	"github.com/fathom-go/fathom/ops"
)

// refRange decodes a [start, stop, step] triple whose nulls are omitted
// bounds.
func refRange(t testing.TB, m json.RawMessage) ops.Range {
	t.Helper()
	var v [3]*int
	if err := json.Unmarshal(m, &v); err != nil {
		t.Fatalf("bad range %s: %v", m, err)
	}
	r := ops.Range{Start: ops.None, Stop: ops.None, Step: 1}
	if v[0] != nil {
		r.Start = *v[0]
	}
	if v[1] != nil {
		r.Stop = *v[1]
	}
	if v[2] != nil {
		r.Step = *v[2]
	}
	return r
}

func shapeIntParam(t testing.TB, c refCase, name string) int {
	t.Helper()
	var v int
	if !c.Param(t, name, &v) {
		t.Fatalf("%s: missing param %s", c.Name, name)
	}
	return v
}

func shapeIntsParam(t testing.TB, c refCase, name string) []int {
	t.Helper()
	var v []int
	if !c.Param(t, name, &v) {
		t.Fatalf("%s: missing param %s", c.Name, name)
	}
	return v
}

// runShapeCase applies the case's op to ins.
func runShapeCase(t testing.TB, c refCase, ins []*array.Array) []*array.Array {
	t.Helper()
	one := func(a *array.Array) []*array.Array { return []*array.Array{a} }
	x := ins[0]
	switch c.Op {
	case "reshape":
		return one(ops.Reshape(x, shapeIntsParam(t, c, "shape")...))
	case "flatten":
		return one(ops.Flatten(x))
	case "transpose":
		var axes []int
		c.Param(t, "axes", &axes)
		return one(ops.Transpose(x, axes...))
	case "swapaxes":
		return one(ops.SwapAxes(x, shapeIntParam(t, c, "i"), shapeIntParam(t, c, "j")))
	case "moveaxis":
		return one(ops.MoveAxis(x, shapeIntParam(t, c, "src"), shapeIntParam(t, c, "dst")))
	case "broadcast_to":
		return one(ops.BroadcastTo(x, shapeIntsParam(t, c, "shape")...))
	case "expand_dims":
		return one(ops.ExpandDims(x, shapeIntsParam(t, c, "axes")...))
	case "squeeze":
		var axes []int
		c.Param(t, "axes", &axes)
		return one(ops.Squeeze(x, axes...))
	case "slice":
		var raw []json.RawMessage
		c.Param(t, "ranges", &raw)
		rs := make([]ops.Range, len(raw))
		for i, m := range raw {
			rs[i] = refRange(t, m)
		}
		return one(ops.Slice(x, rs...))
	case "slice_axis":
		return one(ops.SliceAxis(x, shapeIntParam(t, c, "axis"), refRange(t, c.Params["range"])))
	case "concatenate":
		return one(ops.Concatenate(ins, shapeIntParam(t, c, "axis")))
	case "stack":
		return one(ops.Stack(ins, shapeIntParam(t, c, "axis")))
	case "split":
		return ops.Split(x, shapeIntParam(t, c, "n"), shapeIntParam(t, c, "axis"))
	case "split_at":
		return ops.SplitAt(x, shapeIntsParam(t, c, "indices"), shapeIntParam(t, c, "axis"))
	case "tile":
		return one(ops.Tile(x, shapeIntsParam(t, c, "reps")...))
	case "repeat":
		return one(ops.Repeat(x, shapeIntParam(t, c, "repeats"), shapeIntParam(t, c, "axis")))
	case "pad":
		var widths [][2]int
		c.Param(t, "widths", &widths)
		return one(ops.Pad(x, widths, refcase.Float(t, c.Params["value"])))
	}
	t.Fatalf("%s: unknown op %q", c.Name, c.Op)
	return nil
}

func TestShapeReference(t *testing.T) {
	for _, c := range loadCases(t, "shape.json") {
		for _, lay := range refLayouts[:3] {
			name := c.Name + " (" + lay.name + ")"
			ins := make([]*array.Array, len(c.Inputs))
			for i, r := range c.Inputs {
				ins[i] = lay.of(r.Build(t))
			}
			var got []*array.Array
			if err := array.Try(func() { got = runShapeCase(t, c, ins) }); err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if len(got) != len(c.Expected) {
				t.Errorf("%s: %d results, want %d", name, len(got), len(c.Expected))
				continue
			}
			for i, want := range c.Expected {
				checkArray(t, fmt.Sprintf("%s result %d", name, i), got[i], want)
			}
		}
	}
}

func TestShapeBadInput(t *testing.T) {
	x := array.FromSlice([]float32{0, 1, 2, 3, 4, 5}, 2, 3)
	y := array.FromSlice(make([]float32, 9), 3, 3)
	row := array.FromSlice([]float32{0, 1, 2}, 1, 3)
	m := array.FromSlice(make([]int32, 24), 4, 6)
	empty := array.FromSlice([]float32{}, 0, 3)
	s := array.Scalar(float32(1))
	wantOpErrors(t, []opError{
		{"transpose repeated axis", func() { ops.Transpose(x, 0, 0) }, "ops.Transpose", []string{"[0 0]", "[2 3]"}},
		{"transpose too few axes", func() { ops.Transpose(x, 0) }, "ops.Transpose", []string{"[0]", "[2 3]"}},
		{"transpose axis out of range", func() { ops.Transpose(x, 0, 2) }, "ops.Transpose", []string{"[0 2]", "[2 3]"}},
		{"transpose negative out of range", func() { ops.Transpose(x, -3, 0) }, "ops.Transpose", []string{"[-3 0]"}},
		{"reshape count mismatch", func() { ops.Reshape(x, 4, 2) }, "ops.Reshape", []string{"[2 3]", "[4 2]"}},
		{"reshape two -1", func() { ops.Reshape(x, -1, -1) }, "ops.Reshape", []string{"more than one -1", "[-1 -1]"}},
		{"reshape -1 does not divide", func() { ops.Reshape(x, -1, 4) }, "ops.Reshape", []string{"[2 3]", "[-1 4]"}},
		{"reshape negative", func() { ops.Reshape(x, -2, -3) }, "ops.Reshape", []string{"negative", "[-2 -3]"}},
		{"reshape empty with -1 and 0", func() { ops.Reshape(empty, 0, -1) }, "ops.Reshape", []string{"[0 3]", "[0 -1]"}},
		{"reshape overflow", func() { ops.Reshape(x, math.MaxInt/2, 4) }, "ops.Reshape", []string{"too many"}},
		{"broadcast incompatible", func() { ops.BroadcastTo(x, 3, 3) }, "ops.BroadcastTo", []string{"[2 3]", "[3 3]"}},
		{"broadcast fewer dims", func() { ops.BroadcastTo(x, 3) }, "ops.BroadcastTo", []string{"[2 3]", "[3]"}},
		{"broadcast negative", func() { ops.BroadcastTo(row, -1, 3) }, "ops.BroadcastTo", []string{"negative", "[-1 3]"}},
		{"expand axis out of range", func() { ops.ExpandDims(x, 3) }, "ops.ExpandDims", []string{"axis 3", "[2 3]"}},
		{"expand axis repeated", func() { ops.ExpandDims(x, 0, -4) }, "ops.ExpandDims", []string{"repeated", "[0 -4]"}},
		{"squeeze non-1 axis", func() { ops.Squeeze(row, 1) }, "ops.Squeeze", []string{"axis 1 of size 3", "[1 3]"}},
		{"squeeze axis out of range", func() { ops.Squeeze(row, 2) }, "ops.Squeeze", []string{"axis 2"}},
		{"swapaxes out of range", func() { ops.SwapAxes(x, 0, 2) }, "ops.SwapAxes", []string{"axis 2"}},
		{"moveaxis out of range", func() { ops.MoveAxis(x, -3, 0) }, "ops.MoveAxis", []string{"axis -3"}},
		{"slice too many ranges", func() { ops.Slice(x, ops.Whole(), ops.Whole(), ops.Whole()) }, "ops.Slice", []string{"3 ranges", "[2 3]"}},
		{"slice of 0-d", func() { ops.Slice(s, ops.Whole()) }, "ops.Slice", []string{"1 ranges", "[]"}},
		{"range step 0", func() { ops.R(0, 5, 0) }, "ops.R", []string{"step 0"}},
		{"range two steps", func() { ops.R(0, 5, 1, 2) }, "ops.R", []string{"more than one step"}},
		{"slice axis out of range", func() { ops.SliceAxis(x, 2, ops.Whole()) }, "ops.SliceAxis", []string{"axis 2"}},
		{"split not divisible", func() { ops.Split(m, 4, 1) }, "ops.Split", []string{"[4 6]", "4 equal parts"}},
		{"split zero parts", func() { ops.Split(m, 0, 0) }, "ops.Split", []string{"0 parts"}},
		{"split axis out of range", func() { ops.Split(m, 2, 2) }, "ops.Split", []string{"axis 2"}},
		{"split 0-d", func() { ops.Split(s, 1, 0) }, "ops.Split", []string{"axis 0"}},
		{"split_at axis out of range", func() { ops.SplitAt(m, []int{1}, -3) }, "ops.SplitAt", []string{"axis -3"}},
		{"concatenate shape mismatch", func() { ops.Concatenate([]*array.Array{x, y}, 1) }, "ops.Concatenate", []string{"[2 3] and [3 3]", "axis 1"}},
		{"concatenate ndim mismatch", func() { ops.Concatenate([]*array.Array{x, ops.Flatten(x)}, 0) }, "ops.Concatenate", []string{"[2 3] and [6]"}},
		{"concatenate 0-d", func() { ops.Concatenate([]*array.Array{s, s}, 0) }, "ops.Concatenate", []string{"0-d"}},
		{"concatenate none", func() { ops.Concatenate(nil, 0) }, "ops.Concatenate", []string{"no arrays"}},
		{"concatenate nil", func() { ops.Concatenate([]*array.Array{x, nil}, 0) }, "ops.Concatenate", []string{"array 1 is nil"}},
		{"concatenate axis out of range", func() { ops.Concatenate([]*array.Array{x, x}, 2) }, "ops.Concatenate", []string{"axis 2"}},
		{"stack shape mismatch", func() { ops.Stack([]*array.Array{x, y}, 0) }, "ops.Stack", []string{"[2 3] and [3 3]"}},
		{"stack axis out of range", func() { ops.Stack([]*array.Array{x, x}, 3) }, "ops.Stack", []string{"axis 3"}},
		{"stack none", func() { ops.Stack(nil, 0) }, "ops.Stack", []string{"no arrays"}},
		{"tile negative", func() { ops.Tile(x, 2, -1) }, "ops.Tile", []string{"[2 -1]"}},
		{"tile overflow", func() { ops.Tile(x, math.MaxInt/2, 1) }, "ops.Tile", []string{"too many"}},
		{"tile overflow on empty", func() { ops.Tile(empty, 1, math.MaxInt/2) }, "ops.Tile", []string{"too many"}},
		{"repeat negative", func() { ops.Repeat(x, -1, 0) }, "ops.Repeat", []string{"-1"}},
		{"repeat axis out of range", func() { ops.Repeat(x, 2, 2) }, "ops.Repeat", []string{"axis 2"}},
		{"repeat 0-d", func() { ops.Repeat(s, 2, 0) }, "ops.Repeat", []string{"axis 0"}},
		{"repeat overflow", func() { ops.Repeat(empty, math.MaxInt/2, 1) }, "ops.Repeat", []string{"too many"}},
		{"pad widths wrong length", func() { ops.Pad(x, [][2]int{{1, 1}}, 0) }, "ops.Pad", []string{"1 pad widths", "[2 3]"}},
		{"pad negative width", func() { ops.Pad(x, [][2]int{{1, 1}, {0, -1}}, 0) }, "ops.Pad", []string{"negative", "[2 3]"}},
		{"pad overflow", func() { ops.Pad(x, [][2]int{{math.MaxInt, 0}, {0, 0}}, 0) }, "ops.Pad", []string{"too many"}},
	})
}

// opError is a call that must panic with an *array.Error from op whose
// message mentions every string of want.
type opError struct {
	name string
	f    func()
	op   string
	want []string // substrings of the message
}

func wantOpErrors(t *testing.T, tests []opError) {
	t.Helper()
	for _, tc := range tests {
		err := array.Try(tc.f)
		var e *array.Error
		if !errors.As(err, &e) {
			t.Errorf("%s: got %v, want *array.Error", tc.name, err)
			continue
		}
		if e.Op != tc.op {
			t.Errorf("%s: op %q, want %q (%v)", tc.name, e.Op, tc.op, e)
		}
		for _, w := range tc.want {
			if !strings.Contains(e.Msg, w) {
				t.Errorf("%s: message %q does not mention %q", tc.name, e.Msg, w)
			}
		}
	}
}

// TestShapeLarge runs the copying shape ops above cpu.Grain, where the
// copies split across goroutines, against values computed here.
func TestShapeLarge(t *testing.T) {
	const r, c = 300, 500
	data := make([]float32, r*c)
	for i := range data {
		data[i] = float32(i)
	}
	x := array.FromSlice(data, r, c)

	xt, err := array.ToSlice[float32](ops.Reshape(ops.Transpose(x), -1))
	if err != nil {
		t.Fatal(err)
	}
	for j := range c {
		for i := range r {
			if got, want := xt[j*r+i], data[i*c+j]; got != want {
				t.Fatalf("reshaped transpose [%d]: %v, want %v", j*r+i, got, want)
			}
		}
	}

	cat, err := array.ToSlice[float32](ops.Concatenate([]*array.Array{x, ops.Slice(x, ops.R(ops.None, ops.None, -1))}, 1))
	if err != nil {
		t.Fatal(err)
	}
	for i := range r {
		for j := range 2 * c {
			want := data[i*c+j%c]
			if j >= c {
				want = data[(r-1-i)*c+j-c]
			}
			if got := cat[i*2*c+j]; got != want {
				t.Fatalf("concatenate [%d %d]: %v, want %v", i, j, got, want)
			}
		}
	}

	pad, err := array.ToSlice[float32](ops.Pad(x, [][2]int{{1, 2}, {3, 0}}, -1))
	if err != nil {
		t.Fatal(err)
	}
	const pr, pc = r + 3, c + 3
	for i := range pr {
		for j := range pc {
			want := float32(-1)
			if i >= 1 && i < r+1 && j >= 3 {
				want = data[(i-1)*c+j-3]
			}
			if got := pad[i*pc+j]; got != want {
				t.Fatalf("pad [%d %d]: %v, want %v", i, j, got, want)
			}
		}
	}
}
