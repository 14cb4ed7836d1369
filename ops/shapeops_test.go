package ops_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/refcase"
	"github.com/fathom-go/fathom/ops"
)

// shapeOpsWant lists the ops that shapeops.json must have cases for.
var shapeOpsWant = []string{"Roll", "RollAxes", "Flip", "Meshgrid", "BroadcastArrays", "Unflatten", "Unstack",
	"AtLeast1D", "AtLeast2D", "AtLeast3D", "View", "AsStrided", "HadamardTransform", "PadMode", "Hanning",
	"Hamming", "Blackman", "Bartlett", "LinspaceNoEndpoint", "Identity"}

// runShapeOpsCase applies a case of shapeops.json to ins.
func runShapeOpsCase(t testing.TB, c refCase, ins []*array.Array) []*array.Array {
	t.Helper()
	one := func(a *array.Array) []*array.Array { return []*array.Array{a} }
	var x *array.Array
	if len(ins) > 0 {
		x = ins[0]
	}
	ints := func(name string) []int {
		var v []int
		c.Param(t, name, &v)
		return v
	}
	dtype := func() []array.DType {
		var s string
		if !c.Param(t, "dtype", &s) {
			return nil
		}
		return []array.DType{refcase.ParseDType(t, s)}
	}
	switch c.Op {
	case "Roll":
		return one(ops.Roll(x, shapeIntParam(t, c, "shift"), ints("axes")...))
	case "RollAxes":
		return one(ops.RollAxes(x, ints("shifts"), ints("axes")))
	case "Flip":
		return one(ops.Flip(x, ints("axes")...))
	case "Meshgrid":
		var indexing string
		var sparse bool
		c.Param(t, "indexing", &indexing)
		c.Param(t, "sparse", &sparse)
		return ops.Meshgrid(ins, indexing, sparse)
	case "BroadcastArrays":
		return ops.BroadcastArrays(ins...)
	case "Unflatten":
		return one(ops.Unflatten(x, shapeIntParam(t, c, "axis"), ints("shape")...))
	case "Unstack":
		return ops.Unstack(x, shapeIntParam(t, c, "axis"))
	case "AtLeast1D":
		return one(ops.AtLeast1D(x))
	case "AtLeast2D":
		return one(ops.AtLeast2D(x))
	case "AtLeast3D":
		return one(ops.AtLeast3D(x))
	case "View":
		return one(ops.View(x, dtype()[0]))
	case "AsStrided":
		return one(ops.AsStrided(x, ints("shape"), ints("strides"), shapeIntParam(t, c, "offset")))
	case "HadamardTransform":
		var scale []float64
		if m, ok := c.Params["scale"]; ok {
			scale = append(scale, refcase.Float(t, m))
		}
		return one(ops.HadamardTransform(x, scale...))
	case "PadMode":
		var widths [][2]int
		var mode string
		c.Param(t, "widths", &widths)
		c.Param(t, "mode", &mode)
		return one(ops.PadMode(x, widths, mode))
	case "Hanning":
		return one(ops.Hanning(shapeIntParam(t, c, "m"), dtype()...))
	case "Hamming":
		return one(ops.Hamming(shapeIntParam(t, c, "m"), dtype()...))
	case "Blackman":
		return one(ops.Blackman(shapeIntParam(t, c, "m"), dtype()...))
	case "Bartlett":
		return one(ops.Bartlett(shapeIntParam(t, c, "m"), dtype()...))
	case "LinspaceNoEndpoint":
		return one(ops.LinspaceNoEndpoint(refcase.Float(t, c.Params["start"]), refcase.Float(t, c.Params["stop"]),
			shapeIntParam(t, c, "n"), dtype()[0]))
	case "Identity":
		return one(ops.Identity(shapeIntParam(t, c, "n"), dtype()[0]))
	}
	t.Fatalf("%s: unknown op %q", c.Name, c.Op)
	return nil
}

// shapeOpsCheck runs c on every layout of its inputs (one run when it
// has none) and compares each result's dtype, shape and values with
// numpy's. A case with a bcast param broadcasts its input first.
func shapeOpsCheck(t *testing.T, c refCase) {
	t.Helper()
	var bcast []int
	c.Param(t, "bcast", &bcast)
	layouts := refLayouts
	if len(c.Inputs) == 0 {
		layouts = refLayouts[:1]
	}
	for _, lay := range layouts {
		name := c.Name + " (" + lay.name + ")"
		ins := make([]*array.Array, len(c.Inputs))
		for i, r := range c.Inputs {
			ins[i] = lay.of(r.Build(t))
			if bcast != nil {
				ins[i] = ops.BroadcastTo(ins[i], bcast...)
			}
		}
		var got []*array.Array
		if err := array.Try(func() { got = runShapeOpsCase(t, c, ins) }); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(got) != len(c.Expected) {
			t.Errorf("%s: %d results, want %d", name, len(got), len(c.Expected))
			continue
		}
		for i, want := range c.Expected {
			if g, w := got[i].DType().String(), want.DType; g != w {
				t.Errorf("%s result %d: dtype %s, want %s", name, i, g, w)
				continue
			}
			checkArray(t, fmt.Sprintf("%s result %d", name, i), got[i], want)
		}
	}
}

// TestShapeOpsReference checks the shape, view, window and creation ops
// and HadamardTransform against numpy (gen_shapeops.py) on every layout
// of their inputs: contiguous, column-major, reversed, stepped, and
// broadcast where a case says so.
func TestShapeOpsReference(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range loadCases(t, "shapeops.json") {
		seen[c.Op] = true
		t.Run(c.Op, func(t *testing.T) { shapeOpsCheck(t, c) })
	}
	for _, op := range shapeOpsWant {
		if !seen[op] {
			t.Errorf("no reference case for %s", op)
		}
	}
}

// TestShapeOpsViews checks that the ops documented as views share their
// input's memory, and that Roll and PadMode, which copy, do not.
func TestShapeOpsViews(t *testing.T) {
	x := ops.Reshape(ops.Arange(0, 24, 1, array.Float32), 2, 3, 4)
	if err := x.Eval(); err != nil {
		t.Fatal(err)
	}
	views := map[string]*array.Array{
		"Flip":                           ops.Flip(x, 1),
		"Unflatten":                      ops.Unflatten(x, -1, 2, 2),
		"Unflatten of a transposed view": ops.Unflatten(ops.Transpose(x), 0, 2, 2),
		"AsStrided of a reversed view":   ops.AsStrided(ops.Flip(ops.Flatten(x)), []int{2, 2}, []int{3, 1}, 4),
		"Unstack":                        ops.Unstack(x, 1)[2],
		"AtLeast3D":                      ops.AtLeast3D(ops.Flatten(x)),
		"View":                           ops.View(x, array.Int32),
		"AsStrided":                      ops.AsStrided(x, []int{3, 3}, []int{5, 1}, 2),
		"BroadcastArrays":                ops.BroadcastArrays(x, ops.Zeros([]int{4}, array.Float32))[0],
		"Meshgrid":                       ops.Meshgrid([]*array.Array{ops.Flatten(x), ops.Zeros([]int{2}, array.Float32)}, "ij", false)[0],
	}
	for name, v := range views {
		if err := v.Eval(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if v.Storage() != x.Storage() {
			t.Errorf("%s copied its input", name)
		}
	}
	for name, v := range map[string]*array.Array{"Roll": ops.Roll(x, 1, 0), "PadMode": ops.PadMode(x, [][2]int{{0, 0}, {1, 0}, {0, 0}}, "edge")} {
		if err := v.Eval(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if v.Storage() == x.Storage() {
			t.Errorf("%s shares its input's memory", name)
		}
	}
}

// TestHadamardTransformLong checks lines longer than the GPU kernel
// takes, and the transform's two properties: with the default scale it
// is its own inverse, and it equals the Sylvester matrix product built
// here.
func TestHadamardTransformLong(t *testing.T) {
	for _, n := range []int{1, 2, 1 << 13, 1 << 14} {
		data := make([]float64, 2*n)
		for i := range data {
			data[i] = float64((i*37)%101-50) / 50
		}
		x := array.FromSlice(data, 2, n)
		y := ops.HadamardTransform(x)
		back, err := array.ToSlice[float64](ops.HadamardTransform(y))
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range back {
			if math.Abs(v-data[i]) > 1e-12 {
				t.Fatalf("n=%d: H(H(x))[%d] = %v, want %v", n, i, v, data[i])
			}
		}
		got, _ := array.ToSlice[float64](y)
		// Element i of H·x is Σ_j (-1)^popcount(i&j) x_j: check a few.
		for _, i := range []int{0, min(1, n-1), n / 3, n - 1} {
			for line := range 2 {
				want := 0.0
				for j := range n {
					s := 1.0
					if popcount(i&j)%2 == 1 {
						s = -1
					}
					want += s * data[line*n+j]
				}
				want /= math.Sqrt(float64(n))
				if g := got[line*n+i]; math.Abs(g-want) > 1e-9 {
					t.Fatalf("n=%d: line %d element %d is %v, want %v", n, line, i, g, want)
				}
			}
		}
	}
}

func popcount(v int) int {
	c := 0
	for ; v != 0; v &= v - 1 {
		c++
	}
	return c
}

// TestShapeOpsBadInput checks that bad arguments are an *array.Error
// naming the op and the shapes, raised at the call.
func TestShapeOpsBadInput(t *testing.T) {
	x := ops.Zeros([]int{2, 3}, array.Float32)
	s := array.Scalar(float32(1))
	v := ops.Zeros([]int{6}, array.Float32)
	empty := ops.Zeros([]int{0, 3}, array.Float32)
	wantOpErrors(t, []opError{
		{"roll axis", func() { ops.Roll(x, 1, 2) }, "ops.Roll", []string{"axis 2", "[2 3]"}},
		{"roll negative axis", func() { ops.Roll(x, 1, 0, -3) }, "ops.Roll", []string{"axis -3", "[2 3]"}},
		{"roll 0-d axis", func() { ops.Roll(s, 1, 0) }, "ops.Roll", []string{"axis 0", "[]"}},
		{"roll_axes no shifts", func() { ops.RollAxes(x, nil, []int{0}) }, "ops.RollAxes", []string{"no shifts", "[2 3]"}},
		{"roll_axes mismatch", func() { ops.RollAxes(x, []int{1, 2}, []int{0, 1, 1}) }, "ops.RollAxes", []string{"2 shifts", "3 axes", "[2 3]"}},
		{"roll_axes axis", func() { ops.RollAxes(x, []int{1, 2}, []int{0, 5}) }, "ops.RollAxes", []string{"axis 5", "[2 3]"}},
		{"flip axis", func() { ops.Flip(x, 2) }, "ops.Flip", []string{"axis 2", "[2 3]"}},
		{"flip repeated", func() { ops.Flip(x, 1, -1) }, "ops.Flip", []string{"repeated", "[2 3]"}},
		{"flip 0-d axis", func() { ops.Flip(s, 0) }, "ops.Flip", []string{"axis 0", "[]"}},
		{"meshgrid indexing", func() { ops.Meshgrid([]*array.Array{v}, "yx", false) }, "ops.Meshgrid", []string{`"yx"`}},
		{"meshgrid nil", func() { ops.Meshgrid([]*array.Array{v, nil}, "xy", false) }, "ops.Meshgrid", []string{"array 1 is nil"}},
		{"broadcast_arrays", func() { ops.BroadcastArrays(x, v) }, "ops.BroadcastArrays", []string{"[2 3] and [6]"}},
		{"broadcast_arrays nil", func() { ops.BroadcastArrays(x, nil) }, "ops.BroadcastArrays", []string{"array 1 is nil"}},
		{"unflatten mismatch", func() { ops.Unflatten(x, 1, 2, 2) }, "ops.Unflatten", []string{"[2 3]", "[2 2]", "size 3"}},
		{"unflatten infer", func() { ops.Unflatten(x, -1, 2, -1) }, "ops.Unflatten", []string{"[2 3]", "[2 -1]"}},
		{"unflatten two -1", func() { ops.Unflatten(x, 1, -1, -1) }, "ops.Unflatten", []string{"more than one -1", "[2 3]"}},
		{"unflatten negative", func() { ops.Unflatten(x, 1, -3, -1) }, "ops.Unflatten", []string{"negative", "[-3 -1]"}},
		{"unflatten infer with 0", func() { ops.Unflatten(empty, 0, 0, -1) }, "ops.Unflatten", []string{"[0 3]", "[0 -1]"}},
		{"unflatten no shape", func() { ops.Unflatten(x, 0) }, "ops.Unflatten", []string{"no shape", "[2 3]"}},
		{"unflatten axis", func() { ops.Unflatten(x, 2, 3) }, "ops.Unflatten", []string{"axis 2", "[2 3]"}},
		{"unflatten overflow", func() { ops.Unflatten(x, 1, math.MaxInt/2, 4) }, "ops.Unflatten", []string{"too many"}},
		{"unstack 0-d", func() { ops.Unstack(s, 0) }, "ops.Unstack", []string{"0-d", "[]"}},
		{"unstack axis", func() { ops.Unstack(x, -3) }, "ops.Unstack", []string{"axis -3", "[2 3]"}},
		{"view sizes", func() { ops.View(x, array.Float64) }, "ops.View", []string{"float32", "float64", "[2 3]", "sizes differ"}},
		{"view as bool", func() { ops.View(ops.Zeros([]int{2}, array.Uint8), array.Bool) }, "ops.View", []string{"bool", "[2]"}},
		{"view invalid", func() { ops.View(x, array.DType(200)) }, "ops.View", []string{"invalid dtype"}},
		{"as_strided lengths", func() { ops.AsStrided(x, []int{2, 2}, []int{1}, 0) }, "ops.AsStrided", []string{"[2 2]", "[1]"}},
		{"as_strided past the end", func() { ops.AsStrided(x, []int{2, 3}, []int{3, 1}, 1) }, "ops.AsStrided", []string{"outside the 6 elements", "[2 3]"}},
		{"as_strided before the start", func() { ops.AsStrided(x, []int{3}, []int{-1}, 1) }, "ops.AsStrided", []string{"outside", "[2 3]"}},
		{"as_strided offset", func() { ops.AsStrided(x, []int{1}, []int{1}, 6) }, "ops.AsStrided", []string{"offset 6", "[2 3]"}},
		{"as_strided negative offset", func() { ops.AsStrided(x, []int{}, []int{}, -1) }, "ops.AsStrided", []string{"offset -1"}},
		{"as_strided huge stride", func() { ops.AsStrided(x, []int{3, 2}, []int{math.MaxInt, math.MaxInt}, 0) }, "ops.AsStrided", []string{"outside"}},
		{"as_strided min stride", func() { ops.AsStrided(x, []int{2}, []int{math.MinInt}, 5) }, "ops.AsStrided", []string{"outside"}},
		{"as_strided of empty", func() { ops.AsStrided(empty, []int{1}, []int{0}, 0) }, "ops.AsStrided", []string{"outside the 0 elements", "[0 3]"}},
		{"as_strided negative shape", func() { ops.AsStrided(x, []int{-1}, []int{1}, 0) }, "ops.AsStrided", []string{"[-1]"}},
		{"hadamard length", func() { ops.HadamardTransform(x) }, "ops.HadamardTransform", []string{"[2 3]", "length 3", "power of two"}},
		{"hadamard empty axis", func() { ops.HadamardTransform(ops.Zeros([]int{4, 0}, array.Float32)) }, "ops.HadamardTransform", []string{"[4 0]", "power of two"}},
		{"hadamard complex", func() { ops.HadamardTransform(ops.Zeros([]int{4}, array.Complex64)) }, "ops.HadamardTransform", []string{"complex64", "[4]"}},
		{"hadamard two scales", func() { ops.HadamardTransform(v, 1, 2) }, "ops.HadamardTransform", []string{"more than one scale"}},
		{"pad mode unknown", func() { ops.PadMode(x, [][2]int{{1, 1}, {1, 1}}, "mean") }, "ops.PadMode", []string{`"mean"`, "[2 3]"}},
		{"pad mode widths", func() { ops.PadMode(x, [][2]int{{1, 1}}, "edge") }, "ops.PadMode", []string{"1 pad widths", "[2 3]"}},
		{"pad mode negative", func() { ops.PadMode(x, [][2]int{{1, 1}, {-1, 0}}, "reflect") }, "ops.PadMode", []string{"negative", "[2 3]"}},
		{"pad mode empty axis", func() { ops.PadMode(empty, [][2]int{{1, 0}, {0, 0}}, "reflect") }, "ops.PadMode", []string{"axis 0", "[0 3]", "empty"}},
		{"pad mode overflow", func() { ops.PadMode(x, [][2]int{{math.MaxInt, 0}, {0, 0}}, "wrap") }, "ops.PadMode", []string{"too many"}},
		{"pad mode constant names PadMode", func() { ops.PadMode(x, [][2]int{{-1, 0}, {0, 0}}, "constant") }, "ops.PadMode", []string{"negative"}},
		{"hanning dtype", func() { ops.Hanning(4, array.Int32) }, "ops.Hanning", []string{"int32"}},
		{"hamming dtypes", func() { ops.Hamming(4, array.Float32, array.Float64) }, "ops.Hamming", []string{"more than one dtype"}},
		{"blackman complex", func() { ops.Blackman(4, array.Complex64) }, "ops.Blackman", []string{"complex64"}},
		{"bartlett huge", func() { ops.Bartlett(math.MaxInt, array.Float64) }, "ops.Bartlett", []string{"bytes"}},
		{"linspace negative", func() { ops.LinspaceNoEndpoint(0, 1, -1, array.Float32) }, "ops.LinspaceNoEndpoint", []string{"negative", "-1"}},
		{"linspace dtype", func() { ops.LinspaceNoEndpoint(0, 1, 3, array.DType(99)) }, "ops.LinspaceNoEndpoint", []string{"invalid dtype"}},
		{"identity negative", func() { ops.Identity(-2, array.Float32) }, "ops.Identity", []string{"negative", "-2"}},
		{"identity huge", func() { ops.Identity(math.MaxInt/4, array.Float32) }, "ops.Identity", []string{"too many"}},
		{"identity dtype", func() { ops.Identity(2, array.DType(99)) }, "ops.Identity", []string{"invalid dtype"}},
	})
}

// TestShapeOpsNil passes nil arrays: each op must panic with an
// *array.Error naming it.
func TestShapeOpsNil(t *testing.T) {
	var n *array.Array
	for op, f := range map[string]func(){
		"ops.Roll":              func() { ops.Roll(n, 1) },
		"ops.RollAxes":          func() { ops.RollAxes(n, []int{1}, nil) },
		"ops.Flip":              func() { ops.Flip(n) },
		"ops.Unflatten":         func() { ops.Unflatten(n, 0, 1) },
		"ops.Unstack":           func() { ops.Unstack(n, 0) },
		"ops.AtLeast1D":         func() { ops.AtLeast1D(n) },
		"ops.AtLeast2D":         func() { ops.AtLeast2D(n) },
		"ops.AtLeast3D":         func() { ops.AtLeast3D(n) },
		"ops.View":              func() { ops.View(n, array.Int32) },
		"ops.AsStrided":         func() { ops.AsStrided(n, nil, nil, 0) },
		"ops.HadamardTransform": func() { ops.HadamardTransform(n) },
		"ops.PadMode":           func() { ops.PadMode(n, nil, "edge") },
	} {
		var e *array.Error
		if err := array.Try(f); !errors.As(err, &e) || e.Op != op {
			t.Errorf("%s(nil): %v, want an *array.Error from %s", op, err, op)
		}
	}
}

// TestHadamardTransformEquivalent checks the primitive's parameters in
// common-subexpression elimination: the same scale merges, another does
// not.
func TestHadamardTransformEquivalent(t *testing.T) {
	type equiv interface{ Equivalent(array.Primitive) bool }
	x := ops.Zeros([]int{8}, array.Float32)
	a, b, c := ops.HadamardTransform(x, 0.5), ops.HadamardTransform(x, 0.5), ops.HadamardTransform(x)
	if !a.Primitive().(equiv).Equivalent(b.Primitive()) {
		t.Error("two transforms with scale 0.5 are not equivalent")
	}
	if a.Primitive().(equiv).Equivalent(c.Primitive()) {
		t.Error("scale 0.5 is equivalent to the default 1/√8")
	}
}
