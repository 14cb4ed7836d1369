package ops_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/internal/opset"
	"github.com/fathom-go/fathom/ops"
)

// reductions maps the reference files' op names to fathom's reductions
// over axes.
var reductions = map[string]ops.ReduceFunc{
	"sum": ops.Sum, "prod": ops.Prod, "max": ops.Max, "min": ops.Min, "all": ops.All, "any": ops.Any,
	"mean": ops.Mean, "var": ops.Var, "std": ops.Std, "logsumexp": ops.LogSumExp,
}

var scans = map[string]func(*array.Array, int, bool, bool) *array.Array{
	"cumsum": ops.CumSum, "cumprod": ops.CumProd, "cummax": ops.CumMax, "cummin": ops.CumMin,
}

// runReduceCase applies case c's op to x.
func runReduceCase(t *testing.T, c refCase, x *array.Array) *array.Array {
	t.Helper()
	var axes []int
	c.Param(t, "axes", &axes)
	var keep bool
	c.Param(t, "keepdims", &keep)
	var axis int
	c.Param(t, "axis", &axis)
	if f, ok := reductions[c.Op]; ok {
		var ddof int
		if c.Param(t, "ddof", &ddof) {
			if c.Op == "var" {
				f = func(a *array.Array, axes ...int) *array.Array { return ops.VarDDOF(a, ddof, axes...) }
			} else {
				f = func(a *array.Array, axes ...int) *array.Array { return ops.StdDDOF(a, ddof, axes...) }
			}
		}
		if keep {
			return ops.KeepDims(f, x, axes...)
		}
		return f(x, axes...)
	}
	if f, ok := scans[c.Op]; ok {
		var reverse, inclusive bool
		c.Param(t, "reverse", &reverse)
		c.Param(t, "inclusive", &inclusive)
		return f(x, axis, reverse, inclusive)
	}
	switch c.Op {
	case "softmax":
		return ops.Softmax(x, axes...)
	case "log_softmax":
		return ops.LogSoftmax(x, axes...)
	case "argmax":
		return ops.ArgMax(x, axis)
	case "argmin":
		return ops.ArgMin(x, axis)
	}
	t.Fatalf("%s: unknown op %q", c.Name, c.Op)
	return nil
}

// reduceLayoutDTypes are the dtypes whose cases also run in the other
// layouts (all of them for float32, those of two or more dimensions for
// the rest): between them they cover every way a kernel reads its input
// (directly, or converted from float16, bool or complex).
var reduceLayoutDTypes = map[string]bool{"float32": true, "float16": true, "bool": true, "int32": true, "complex64": true}

func TestReduceReference(t *testing.T) {
	cases := loadCases(t, "reduce.json")
	for _, l := range refLayouts {
		t.Run(l.name, func(t *testing.T) {
			for _, c := range cases {
				in := c.Inputs[0]
				if l.name != "contiguous" && !(in.DType == "float32" || reduceLayoutDTypes[in.DType] && len(in.Shape) >= 2) {
					continue
				}
				var got *array.Array
				if err := array.Try(func() { got = runReduceCase(t, c, l.of(in.Build(t))) }); err != nil {
					t.Errorf("%s: %v", c.Name, err)
					continue
				}
				checkArray(t, c.Name, got, c.Expected[0])
			}
		})
	}
}

// TestReduceBroadcastInput checks that reducing a broadcast view (zero
// strides) gives what reducing its materialised copy gives.
func TestReduceBroadcastInput(t *testing.T) {
	x := array.FromSlice([]float32{1.5, -2, 3.25}, 3, 1)
	b := ops.BroadcastTo(x, 2, 3, 4)
	c := ops.Copy(b)
	for name, f := range map[string]func(*array.Array) *array.Array{
		"sum all":     func(a *array.Array) *array.Array { return ops.Sum(a) },
		"sum 0 2":     func(a *array.Array) *array.Array { return ops.Sum(a, 0, 2) },
		"max 2":       func(a *array.Array) *array.Array { return ops.Max(a, 2) },
		"argmin 1":    func(a *array.Array) *array.Array { return ops.ArgMin(a, 1) },
		"cumsum 2":    func(a *array.Array) *array.Array { return ops.CumSum(a, 2, false, true) },
		"cumprod 0":   func(a *array.Array) *array.Array { return ops.CumProd(a, 0, true, false) },
		"softmax 1":   func(a *array.Array) *array.Array { return ops.Softmax(a, 1) },
		"logsumexp 2": func(a *array.Array) *array.Array { return ops.LogSumExp(a, -1, 0) },
		"var 1":       func(a *array.Array) *array.Array { return ops.Var(a, 1) },
	} {
		arraytest.AssertClose(t, f(c), f(b), arraytest.Tol{Rtol: 1e-6, Atol: 1e-6}, name)
	}
}

func TestReduceDTypes(t *testing.T) {
	b := array.FromSlice([]bool{true, false, true})
	i8 := array.FromSlice([]uint8{1, 2})
	c := array.FromSlice([]complex64{1, 2i})
	h := array.FromSlice([]array.F16{array.NewF16(1)})
	for _, tc := range []struct {
		name string
		got  *array.Array
		want array.DType
	}{
		{"sum bool", ops.Sum(b), array.Int32},
		{"prod bool", ops.Prod(b), array.Int32},
		{"max bool", ops.Max(b), array.Bool},
		{"sum uint8", ops.Sum(i8), array.Uint32}, // MLX's rule (numpy: uint64)
		{"prod uint8", ops.Prod(i8), array.Uint32},
		{"sum int8", ops.Sum(array.FromSlice([]int8{1})), array.Int32},
		{"prod int16", ops.Prod(array.FromSlice([]int16{1})), array.Int32},
		{"sum uint16", ops.Sum(array.FromSlice([]uint16{1})), array.Uint32},
		{"sum uint32", ops.Sum(array.FromSlice([]uint32{1})), array.Uint32},
		{"sum uint64", ops.Sum(array.FromSlice([]uint64{1})), array.Uint64},
		{"cumsum int8", ops.CumSum(array.FromSlice([]int8{1}), 0, false, true), array.Int8},
		{"max uint16", ops.Max(array.FromSlice([]uint16{1})), array.Uint16},
		{"mean int16", ops.Mean(array.FromSlice([]int16{1})), array.Float32},
		{"mean uint8", ops.Mean(i8), array.Float32},
		{"mean bool", ops.Mean(b), array.Float32},
		{"var complex64", ops.Var(c), array.Float32},
		{"mean complex64", ops.Mean(c), array.Complex64},
		{"any complex64", ops.Any(c), array.Bool},
		{"std float16", ops.Std(h), array.Float16},
		{"softmax uint8", ops.Softmax(i8), array.Float32},
		{"logsumexp bool", ops.LogSumExp(b), array.Float32},
		{"argmax bool", ops.ArgMax(b, 0), array.Int32},
		{"cumsum bool", ops.CumSum(b, 0, false, true), array.Int32},
		{"cummax bool", ops.CumMax(b, 0, false, true), array.Bool},
		{"cumsum uint8", ops.CumSum(i8, 0, false, true), array.Uint8},
	} {
		if tc.got.DType() != tc.want {
			t.Errorf("%s: dtype %v, want %v", tc.name, tc.got.DType(), tc.want)
		}
	}
}

// TestReduceLargeMatchesFloat64 sums and softmaxes arrays large enough to
// be split over cores and checks float32 results against float64 ones.
func TestReduceLargeMatchesFloat64(t *testing.T) {
	const rows, cols = 300, 1001
	x64 := make([]float64, rows*cols)
	for i := range x64 {
		x64[i] = math.Sin(float64(i)) * 3
	}
	x32 := make([]float32, len(x64))
	for i, v := range x64 {
		x32[i] = float32(v)
		x64[i] = float64(x32[i])
	}
	a32 := array.FromSlice(x32, rows, cols)
	a64 := array.FromSlice(x64, rows, cols)
	for _, f := range []struct {
		name string
		f    func(*array.Array) *array.Array
		tol  float64
	}{
		{"sum", func(a *array.Array) *array.Array { return ops.Sum(a) }, 1e-4},
		{"sum 0", func(a *array.Array) *array.Array { return ops.Sum(a, 0) }, 1e-5},
		{"sum 1", func(a *array.Array) *array.Array { return ops.Sum(a, 1) }, 1e-5},
		{"mean 0", func(a *array.Array) *array.Array { return ops.Mean(ops.Transpose(a), 1) }, 1e-6},
		{"std 1", func(a *array.Array) *array.Array { return ops.Std(a, 1) }, 1e-6},
		{"softmax 0", func(a *array.Array) *array.Array { return ops.Softmax(a, 0) }, 1e-7},
		{"logsoftmax", func(a *array.Array) *array.Array { return ops.LogSoftmax(a) }, 1e-5},
		{"logsumexp 1", func(a *array.Array) *array.Array { return ops.LogSumExp(a, 1) }, 1e-5},
		{"cumsum 0", func(a *array.Array) *array.Array { return ops.CumSum(a, 0, true, false) }, 1e-4},
	} {
		// float32 widens to float64 exactly
		got := ops.AsType(f.f(a32), array.Float64)
		if !arraytest.AssertClose(t, f.f(a64), got, arraytest.Tol{Rtol: f.tol, Atol: f.tol}, f.name) {
			return
		}
	}
}

func TestKeepDims(t *testing.T) {
	x := array.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	for _, c := range []struct {
		axes  []int
		shape []int
	}{{nil, []int{1, 1}}, {[]int{0}, []int{1, 3}}, {[]int{-1}, []int{2, 1}}, {[]int{1, 0}, []int{1, 1}}} {
		got := ops.KeepDims(ops.Sum, x, c.axes...)
		if !slices.Equal(got.Shape(), c.shape) {
			t.Errorf("KeepDims(Sum, %v): shape %v, want %v", c.axes, got.Shape(), c.shape)
		}
	}
	// centring rows through KeepDims is the point of it
	d, err := array.ToSlice[float32](ops.Sub(x, ops.KeepDims(ops.Mean, x, 1)))
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range []float32{-1, 0, 1, -1, 0, 1} {
		if d[i] != w {
			t.Errorf("x - mean(x, 1): element %d = %v, want %v", i, d[i], w)
		}
	}
}

func TestReducePrimitives(t *testing.T) {
	for _, c := range []struct {
		p, same, other array.Primitive
		name           string
	}{
		{&ops.ReducePrim{Op: opset.Sum, Axes: []int{0, 2}}, &ops.ReducePrim{Op: opset.Sum, Axes: []int{0, 2}}, &ops.ReducePrim{Op: opset.Sum, Axes: []int{0}}, "Sum"},
		{&ops.ReducePrim{Op: opset.All}, &ops.ReducePrim{Op: opset.All}, &ops.ReducePrim{Op: opset.Any}, "All"},
		{&ops.ArgReducePrim{Op: opset.ArgMin, Axis: 1}, &ops.ArgReducePrim{Op: opset.ArgMin, Axis: 1}, &ops.ArgReducePrim{Op: opset.ArgMax, Axis: 1}, "ArgMin"},
		{&ops.ScanPrim{Op: opset.CumMax, Axis: 1, Reverse: true}, &ops.ScanPrim{Op: opset.CumMax, Axis: 1, Reverse: true}, &ops.ScanPrim{Op: opset.CumMax, Axis: 1, Inclusive: true}, "CumMax"},
		{&ops.SoftmaxPrim{Axis: 1}, &ops.SoftmaxPrim{Axis: 1}, &ops.LogSoftmaxPrim{Axis: 1}, "Softmax"},
		{&ops.LogSoftmaxPrim{Axis: 0}, &ops.LogSoftmaxPrim{Axis: 0}, &ops.LogSoftmaxPrim{Axis: 1}, "LogSoftmax"},
		{&ops.LogSumExpPrim{Axis: 2}, &ops.LogSumExpPrim{Axis: 2}, &ops.LogSumExpPrim{Axis: 0}, "LogSumExp"},
	} {
		eq := c.p.(array.Equivalence)
		if c.p.Name() != c.name || !eq.Equivalent(c.same) || eq.Equivalent(c.other) {
			t.Errorf("%T: name %q, equivalent to same %v, to other %v", c.p, c.p.Name(), eq.Equivalent(c.same), eq.Equivalent(c.other))
		}
	}
}

func TestReduceBadInput(t *testing.T) {
	x := array.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	empty := ops.Zeros([]int{0, 3}, array.Float32)
	c := array.FromSlice([]complex64{1, 2})
	s := array.Scalar(float32(2))
	for _, tc := range []struct {
		name  string
		f     func()
		op    string
		parts []string
	}{
		{"sum axis out of range", func() { ops.Sum(x, 2) }, "ops.Sum", []string{"axis 2", "2 dimensions"}},
		{"sum negative axis out of range", func() { ops.Sum(x, -3) }, "ops.Sum", []string{"axis -3"}},
		{"sum repeated axis", func() { ops.Sum(x, 1, -1) }, "ops.Sum", []string{"repeated"}},
		{"sum of 0-d over axis 0", func() { ops.Sum(s, 0) }, "ops.Sum", []string{"axis 0", "0 dimensions"}},
		{"max of empty axis", func() { ops.Max(empty, 0) }, "ops.Max", []string{"[0 3]", "empty"}},
		{"min of empty", func() { ops.Min(empty) }, "ops.Min", []string{"empty"}},
		{"max of empty axis, empty result", func() { ops.Max(ops.Zeros([]int{0, 0}, array.Float32), -1) }, "ops.Max", []string{"[0 0]", "empty"}},
		{"min of empty axis, empty result", func() { ops.Min(ops.Zeros([]int{3, 0, 0}, array.Int32), 1, 2) }, "ops.Min", []string{"[3 0 0]", "empty"}},
		{"argmax of empty axis, empty result", func() { ops.ArgMax(ops.Zeros([]int{0, 0}, array.Float32), 1) }, "ops.ArgMax", []string{"[0 0]", "empty"}},
		{"max of complex", func() { ops.Max(c) }, "ops.Max", []string{"complex64"}},
		{"nil sum", func() { ops.Sum(nil) }, "ops.Sum", []string{"nil"}},
		{"mean axis", func() { ops.Mean(x, 5) }, "ops.Mean", []string{"axis 5"}},
		{"var axis", func() { ops.Var(x, 0, 0) }, "ops.Var", []string{"repeated"}},
		{"vardof axis", func() { ops.VarDDOF(x, 1, 3) }, "ops.VarDDOF", []string{"axis 3"}},
		{"std axis", func() { ops.Std(x, 9) }, "ops.Std", []string{"axis 9"}},
		{"stdddof nil", func() { ops.StdDDOF(nil, 1) }, "ops.StdDDOF", []string{"nil"}},
		{"all axis", func() { ops.All(x, 2) }, "ops.All", []string{"axis 2"}},
		{"argmax axis", func() { ops.ArgMax(x, 2) }, "ops.ArgMax", []string{"axis 2"}},
		{"argmax 0-d", func() { ops.ArgMax(s, 0) }, "ops.ArgMax", []string{"axis 0"}},
		{"argmin empty axis", func() { ops.ArgMin(empty, 0) }, "ops.ArgMin", []string{"[0 3]", "empty"}},
		{"argmax complex", func() { ops.ArgMax(c, 0) }, "ops.ArgMax", []string{"complex64"}},
		{"cumsum axis", func() { ops.CumSum(x, -3, false, true) }, "ops.CumSum", []string{"axis -3"}},
		{"cummax complex", func() { ops.CumMax(c, 0, false, true) }, "ops.CumMax", []string{"complex64"}},
		{"cumprod nil", func() { ops.CumProd(nil, 0, false, true) }, "ops.CumProd", []string{"nil"}},
		{"softmax axis", func() { ops.Softmax(x, 0, 2) }, "ops.Softmax", []string{"axis 2"}},
		{"softmax complex", func() { ops.Softmax(c) }, "ops.Softmax", []string{"complex64"}},
		{"logsoftmax repeated", func() { ops.LogSoftmax(x, 0, -2) }, "ops.LogSoftmax", []string{"repeated"}},
		{"logsumexp axis", func() { ops.LogSumExp(x, 3) }, "ops.LogSumExp", []string{"axis 3"}},
		{"keepdims nil f", func() { ops.KeepDims(nil, x) }, "ops.KeepDims", []string{"nil"}},
		{"keepdims axis", func() { ops.KeepDims(ops.Sum, x, 4) }, "ops.KeepDims", []string{"axis 4"}},
		{"keepdims not a reduction", func() { ops.KeepDims(func(a *array.Array, _ ...int) *array.Array { return a }, x, 0) },
			"ops.KeepDims", []string{"[2 3]", "[3]"}},
	} {
		err := array.Try(tc.f)
		var e *array.Error
		if !errors.As(err, &e) || e.Op != tc.op {
			t.Errorf("%s: got %v, want a %s *array.Error", tc.name, err, tc.op)
			continue
		}
		for _, p := range tc.parts {
			if !strings.Contains(e.Error(), p) {
				t.Errorf("%s: %q does not mention %q", tc.name, e.Error(), p)
			}
		}
	}
}

func TestNumberOfElements(t *testing.T) {
	x := ops.Zeros([]int{2, 3, 4}, array.Float32)
	for _, tc := range []struct {
		name string
		got  *array.Array
		want float64
		dt   array.DType
	}{
		{"all", ops.NumberOfElements(x, array.Int32), 24, array.Int32},
		{"axes 0 and -1", ops.NumberOfElements(x, array.Float32, 0, -1), 8, array.Float32},
		{"one axis, int64", ops.NumberOfElements(x, array.Int64, 1), 3, array.Int64},
		{"empty axis", ops.NumberOfElements(ops.Zeros([]int{0, 5}, array.Int8), array.Uint32, 0), 0, array.Uint32},
		{"0-d", ops.NumberOfElements(array.Scalar(float64(7)), array.Int32), 1, array.Int32},
	} {
		if tc.got.DType() != tc.dt || tc.got.Ndim() != 0 {
			t.Errorf("%s: %v of shape %v, want a 0-d %v", tc.name, tc.got.DType(), tc.got.Shape(), tc.dt)
			continue
		}
		if v := tc.got.Item(); v != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, v, tc.want)
		}
	}
	for _, tc := range []struct {
		name  string
		f     func()
		parts []string
	}{
		{"bool dtype", func() { ops.NumberOfElements(x, array.Bool) }, []string{"bool"}},
		{"complex dtype", func() { ops.NumberOfElements(x, array.Complex64) }, []string{"complex64"}},
		{"axis", func() { ops.NumberOfElements(x, array.Int32, 3) }, []string{"axis 3"}},
		{"nil", func() { ops.NumberOfElements(nil, array.Int32) }, []string{"nil"}},
	} {
		err := array.Try(tc.f)
		var e *array.Error
		if !errors.As(err, &e) || e.Op != "ops.NumberOfElements" {
			t.Errorf("%s: got %v, want an ops.NumberOfElements *array.Error", tc.name, err)
			continue
		}
		for _, p := range tc.parts {
			if !strings.Contains(e.Error(), p) {
				t.Errorf("%s: %q does not mention %q", tc.name, e.Error(), p)
			}
		}
	}
}
