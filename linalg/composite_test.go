package linalg_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/internal/refcase"
	"github.com/fathom-go/fathom/linalg"
	"github.com/fathom-go/fathom/ops"
)

// compositeInput builds a case's input in dtype dt (complex inputs stay
// complex64).
func compositeInput(t *testing.T, r refcase.Array, dt array.DType) *array.Array {
	a := r.Build(t)
	if a.DType() != array.Complex64 && a.DType() != dt {
		a = ops.AsType(a, dt)
	}
	return a
}

// floats returns a real reference array's values.
func floats(t *testing.T, r refcase.Array) []float64 {
	v := r.Values(t)
	out := make([]float64, len(v))
	for i, c := range v {
		out[i] = real(c)
	}
	return out
}

// ord reads the ord parameter: null, a string, a number or ±inf.
func ord(t *testing.T, c refcase.Case) any {
	var v any
	c.Param(t, "ord", &v)
	switch o := v.(type) {
	case string:
		switch o {
		case "inf":
			return math.Inf(1)
		case "-inf":
			return math.Inf(-1)
		}
		return o
	case float64:
		return o
	}
	return nil
}

// run calls the function a case of testdata/linalg_l3.json
// (gen_linalg_l3.py, from numpy) names, in dtype dt.
func run(t *testing.T, c refcase.Case, dt array.DType) []*array.Array {
	in := make([]*array.Array, len(c.Inputs))
	for i, x := range c.Inputs {
		in[i] = compositeInput(t, x, dt)
	}
	switch c.Op {
	case "norm", "norm_complex":
		var axes []int
		var keep bool
		c.Param(t, "axes", &axes)
		c.Param(t, "keepdims", &keep)
		return []*array.Array{linalg.Norm(in[0], ord(t, c), axes, keep)}
	case "pinv":
		return []*array.Array{linalg.Pinv(in[0])}
	case "lstsq":
		x, res, rank, s := linalg.Lstsq(in[0], in[1])
		return []*array.Array{x, res, rank, s}
	case "matrix_power":
		var n int
		c.Param(t, "n", &n)
		return []*array.Array{linalg.MatrixPower(in[0], n)}
	case "cross":
		var axis int
		c.Param(t, "axis", &axis)
		return []*array.Array{linalg.Cross(in[0], in[1], axis)}
	}
	t.Fatalf("%s: unknown op %q", c.Name, c.Op)
	return nil
}

// values evaluates a as float64.
func values(t *testing.T, a *array.Array) []float64 {
	t.Helper()
	v, err := array.ToSlice[float64](ops.AsType(a, array.Float64))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestCompositesMatchNumpy checks Norm, Pinv, Lstsq, MatrixPower and
// Cross against numpy in float64 and float32: values, shapes and dtypes.
func TestCompositesMatchNumpy(t *testing.T) {
	for _, c := range refcase.Load(t, "testdata/linalg_l3.json") {
		dts := []array.DType{array.Float64, array.Float32}
		if c.Op == "norm_complex" {
			dts = dts[1:]
		}
		for _, dt := range dts {
			// float32 cannot tell the rank-deficient inputs' zero singular
			// values (1e-16 in float64) from rounding: numpy would not either.
			if dt == array.Float32 && strings.Contains(c.Name, "rank2") {
				continue
			}
			t.Run(fmt.Sprintf("%s/%v", c.Name, dt), func(t *testing.T) {
				got := run(t, c, dt)
				if len(got) != len(c.Expected) {
					t.Fatalf("%d results, want %d", len(got), len(c.Expected))
				}
				for i, g := range got {
					want := c.Expected[i]
					if fmt.Sprint(g.Shape()) != fmt.Sprint(want.Shape) {
						t.Fatalf("result %d: shape %v, want %v", i, g.Shape(), want.Shape)
					}
					wantDT := dt
					if want.DType == "int32" {
						wantDT = array.Int32
					}
					if g.DType() != wantDT {
						t.Fatalf("result %d: dtype %v, want %v", i, g.DType(), wantDT)
					}
					compareClose(t, fmt.Sprintf("result %d", i), values(t, g), floats(t, want), dt)
				}
			})
		}
	}
}

func compareClose(t *testing.T, what string, got, want []float64, dt array.DType) {
	t.Helper()
	tol := 1e-10
	if dt == array.Float32 {
		tol = 2e-4
	}
	scale := 0.0
	for _, w := range want {
		if !math.IsInf(w, 0) && !math.IsNaN(w) {
			scale = max(scale, math.Abs(w))
		}
	}
	for j := range want {
		g, w := got[j], want[j]
		switch {
		case math.IsNaN(w) || math.IsInf(w, 0):
			if !(math.IsNaN(w) && math.IsNaN(g)) && g != w {
				t.Fatalf("%s[%d] = %v, want %v", what, j, g, w)
			}
		case math.Abs(g-w) > tol*(1+scale):
			t.Fatalf("%s[%d] = %v, want %v (tolerance %g)", what, j, g, w, tol*(1+scale))
		}
	}
}

// fdCase is a function checked against finite differences: f maps the
// inputs to one array, and the checks differentiate Σ w·f(x) for fixed
// random weights w.
type fdCase struct {
	name   string
	f      func(in ...*array.Array) *array.Array
	shapes [][]int
}

var fdCases = []fdCase{
	{"Norm/vector/nil", func(in ...*array.Array) *array.Array { return linalg.Norm(in[0], nil, []int{-1}, false) }, [][]int{{3, 5}}},
	{"Norm/vector/1", func(in ...*array.Array) *array.Array { return linalg.Norm(in[0], 1, []int{0}, true) }, [][]int{{4, 3}}},
	{"Norm/vector/3", func(in ...*array.Array) *array.Array { return linalg.Norm(in[0], 3.0, nil, false) }, [][]int{{6}}},
	{"Norm/vector/inf", func(in ...*array.Array) *array.Array { return linalg.Norm(in[0], math.Inf(1), nil, false) }, [][]int{{6}}},
	{"Norm/vector/-1", func(in ...*array.Array) *array.Array { return linalg.Norm(in[0], -1, nil, false) }, [][]int{{5}}},
	{"Norm/matrix/fro", func(in ...*array.Array) *array.Array { return linalg.Norm(in[0], "fro", []int{0, 2}, false) }, [][]int{{3, 2, 4}}},
	{"Norm/matrix/1", func(in ...*array.Array) *array.Array { return linalg.Norm(in[0], 1, nil, false) }, [][]int{{3, 4}}},
	{"Norm/matrix/-inf", func(in ...*array.Array) *array.Array { return linalg.Norm(in[0], math.Inf(-1), nil, false) }, [][]int{{3, 4}}},
	{"Norm/matrix/2", func(in ...*array.Array) *array.Array { return linalg.Norm(in[0], 2, nil, false) }, [][]int{{4, 3}}},
	{"Norm/matrix/-2", func(in ...*array.Array) *array.Array { return linalg.Norm(in[0], -2, []int{-1, -2}, false) }, [][]int{{2, 3, 3}}},
	{"Norm/matrix/nuc", func(in ...*array.Array) *array.Array { return linalg.Norm(in[0], "nuc", nil, true) }, [][]int{{3, 4}}},
	{"Pinv/square", func(in ...*array.Array) *array.Array { return linalg.Pinv(in[0]) }, [][]int{{3, 3}}},
	{"Pinv/tall", func(in ...*array.Array) *array.Array { return linalg.Pinv(in[0]) }, [][]int{{2, 4, 3}}},
	{"Lstsq/x", func(in ...*array.Array) *array.Array { x, _, _, _ := linalg.Lstsq(in[0], in[1]); return x }, [][]int{{5, 3}, {5, 2}}},
	{"Lstsq/residuals", func(in ...*array.Array) *array.Array { _, r, _, _ := linalg.Lstsq(in[0], in[1]); return r }, [][]int{{5, 3}, {5}}},
	{"MatrixPower/3", func(in ...*array.Array) *array.Array { return linalg.MatrixPower(in[0], 3) }, [][]int{{3, 3}}},
	{"MatrixPower/-2", func(in ...*array.Array) *array.Array { return linalg.MatrixPower(in[0], -2) }, [][]int{{2, 3, 3}}},
	{"Cross", func(in ...*array.Array) *array.Array { return linalg.Cross(in[0], in[1], 0) }, [][]int{{3, 2}, {3, 1}}},
}

// fdInputs returns random float64 inputs of the shapes, away from the
// kinks of |x| and with square ones shifted towards the identity so that
// inverses are well conditioned.
func fdInputs(r *rand.Rand, shapes [][]int) []*array.Array {
	in := make([]*array.Array, len(shapes))
	for i, s := range shapes {
		n := 1
		for _, d := range s {
			n *= d
		}
		v := make([]float64, n)
		for j := range v {
			x := 0.3 + r.Float64()
			if r.IntN(2) == 0 {
				x = -x
			}
			v[j] = x
		}
		if len(s) >= 2 && s[len(s)-1] == s[len(s)-2] {
			m := s[len(s)-1]
			for b := 0; b < n; b += m * m {
				for k := range m {
					v[b+k*m+k] += 3
				}
			}
		}
		in[i] = array.FromSlice(v, s...)
	}
	return in
}

// TestCompositeGradients checks the derivatives the composites get by
// composition, reverse (Grad) and forward (JVP), against central
// differences in float64.
func TestCompositeGradients(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range fdCases {
		t.Run(c.name, func(t *testing.T) {
			in := fdInputs(r, c.shapes)
			out := c.f(in...)
			w := fdInputs(r, [][]int{out.Shape()})[0]
			loss := func(xs ...*array.Array) *array.Array { return ops.Sum(ops.Mul(c.f(xs...), w)) }
			grads := graph.Grad(loss, argnums(len(in))...)(in...)
			const h = 1e-6
			for i, x := range in {
				xv := values(t, x)
				gv := values(t, grads[i])
				for j := range xv {
					at := func(d float64) float64 {
						p := append([]float64(nil), xv...)
						p[j] += d
						args := append([]*array.Array(nil), in...)
						args[i] = array.FromSlice(p, x.Shape()...)
						return loss(args...).Item()
					}
					fd := (at(h) - at(-h)) / (2 * h)
					if math.Abs(fd-gv[j]) > 1e-5*(1+math.Abs(fd)) {
						t.Fatalf("input %d [%d]: gradient %v, finite differences %v", i, j, gv[j], fd)
					}
				}
			}
			tangents := fdInputs(r, c.shapes)
			_, jvps := graph.JVP(func(xs ...*array.Array) []*array.Array { return []*array.Array{c.f(xs...)} }, in, tangents)
			step := func(d float64) []float64 {
				args := make([]*array.Array, len(in))
				for i := range in {
					args[i] = ops.Add(in[i], ops.MulScalar(tangents[i], d))
				}
				return values(t, c.f(args...))
			}
			plus, minus, jv := step(h), step(-h), values(t, jvps[0])
			for j := range jv {
				fd := (plus[j] - minus[j]) / (2 * h)
				if math.Abs(fd-jv[j]) > 1e-5*(1+math.Abs(fd)) {
					t.Fatalf("JVP [%d] = %v, finite differences %v", j, jv[j], fd)
				}
			}
		})
	}
}

func argnums(n int) []int {
	a := make([]int, n)
	for i := range a {
		a[i] = i
	}
	return a
}

// TestCompositeVmap checks that Vmap through the composites matches a
// loop over the batch.
func TestCompositeVmap(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range fdCases {
		t.Run(c.name, func(t *testing.T) {
			const batch = 2
			in := fdInputs(r, c.shapes)
			batched := make([]*array.Array, len(in))
			for i, x := range in {
				batched[i] = ops.Stack([]*array.Array{x, ops.AddScalar(ops.MulScalar(x, 1.5), 0.25)}, 0)
			}
			f := func(xs ...*array.Array) []*array.Array { return []*array.Array{c.f(xs...)} }
			got := values(t, graph.Vmap(f, nil, nil)(batched...)[0])
			var want []float64
			for b := range batch {
				args := make([]*array.Array, len(in))
				for i, x := range batched {
					args[i] = ops.Squeeze(ops.SliceAxis(x, 0, ops.R(b, b+1)), 0)
				}
				want = append(want, values(t, c.f(args...))...)
			}
			compareClose(t, "vmap", got, want, array.Float64)
		})
	}
}

// TestCompositeBadInput checks that bad arguments panic at the call
// with an *array.Error that names the function and what is wrong.
func TestCompositeBadInput(t *testing.T) {
	v3 := array.FromSlice([]float64{1, 2, 3}, 3)
	m23 := array.FromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	t3 := ops.Zeros([]int{2, 2, 2}, array.Float64)
	cases := []struct {
		name, op, msg string
		f             func()
	}{
		{"nil", "linalg.Norm", "nil array", func() { linalg.Norm(nil, nil, nil, false) }},
		{"string ord", "linalg.Norm", `ord "max"`, func() { linalg.Norm(v3, "max", nil, false) }},
		{"ord type", "linalg.Norm", "ord of type", func() { linalg.Norm(v3, float32(2), nil, false) }},
		{"fro of vector", "linalg.Norm", "matrix norm", func() { linalg.Norm(v3, "fro", nil, false) }},
		{"nuc of vector", "linalg.Norm", "matrix norm", func() { linalg.Norm(m23, "nuc", []int{1}, false) }},
		{"matrix ord 3", "linalg.Norm", "not a matrix norm", func() { linalg.Norm(m23, 3, nil, false) }},
		{"matrix ord 0", "linalg.Norm", "not a matrix norm", func() { linalg.Norm(m23, 0, nil, false) }},
		{"3-D with ord", "linalg.Norm", "must be a vector or a matrix", func() { linalg.Norm(t3, 1, nil, false) }},
		{"axis range", "linalg.Norm", "axis 2 out of range", func() { linalg.Norm(m23, nil, []int{2}, false) }},
		{"same axis", "linalg.Norm", "one axis twice", func() { linalg.Norm(m23, nil, []int{1, -1}, false) }},
		{"three axes", "linalg.Norm", "3 axes", func() { linalg.Norm(t3, nil, []int{0, 1, 2}, false) }},
		{"NaN ord", "linalg.Norm", "NaN", func() { linalg.Norm(v3, math.NaN(), nil, false) }},
		{"pinv vector", "linalg.Pinv", "not a matrix", func() { linalg.Pinv(v3) }},
		{"pinv int", "linalg.Pinv", "dtype int32", func() { linalg.Pinv(ops.AsType(m23, array.Int32)) }},
		{"lstsq rows", "linalg.Lstsq", "b's rows", func() { linalg.Lstsq(m23, v3) }},
		{"lstsq dtype", "linalg.Lstsq", "one dtype", func() { linalg.Lstsq(m23, ops.AsType(v3, array.Float32)) }},
		{"lstsq nil b", "linalg.Lstsq", "nil b", func() { linalg.Lstsq(m23, nil) }},
		{"lstsq empty", "linalg.Lstsq", "is empty", func() {
			linalg.Lstsq(ops.Zeros([]int{0, 3}, array.Float64), ops.Zeros([]int{0}, array.Float64))
		}},
		{"power not square", "linalg.MatrixPower", "not a stack of square", func() { linalg.MatrixPower(m23, 2) }},
		{"power int inverse", "linalg.MatrixPower", "negative power", func() {
			linalg.MatrixPower(ops.AsType(ops.Eye(2, 2, 0, array.Float64), array.Int32), -1)
		}},
		{"cross length", "linalg.Cross", "want 3-vectors", func() { linalg.Cross(m23, m23, 0) }},
		{"cross axis", "linalg.Cross", "out of range", func() { linalg.Cross(v3, v3, 1) }},
		{"cross nil", "linalg.Cross", "nil array", func() { linalg.Cross(v3, nil, 0) }},
	}
	for _, c := range cases {
		err := array.Try(c.f)
		var e *array.Error
		if !errors.As(err, &e) || e.Op != c.op || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("%s: error %v, want %s: ...%s...", c.name, err, c.op, c.msg)
		}
	}
}

// TestMatrixPowerSingular checks that a negative power of a singular
// matrix is Inv's error from Eval, not a panic or a wrong answer.
func TestMatrixPowerSingular(t *testing.T) {
	a := array.FromSlice([]float64{1, 2, 2, 4}, 2, 2)
	if err := linalg.MatrixPower(a, -1).Eval(); err == nil {
		t.Fatal("inverse power of a singular matrix evaluated without an error")
	}
}

// TestMatrixPowerIntegers checks positive powers of an integer matrix,
// exact, and the identity for n = 0 whatever a holds.
func TestMatrixPowerIntegers(t *testing.T) {
	a := array.FromSlice([]int32{1, 1, 1, 0}, 2, 2)
	got, err := array.ToSlice[int32](linalg.MatrixPower(a, 10))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[89 55 55 34]" {
		t.Fatalf("Fibonacci matrix to the 10th: %v, want [89 55 55 34]", got)
	}
	nan := array.FromSlice([]float64{math.NaN(), 1, 2, 3}, 2, 2)
	if got := values(t, linalg.MatrixPower(nan, 0)); fmt.Sprint(got) != "[1 0 0 1]" {
		t.Fatalf("a NaN matrix to the 0th: %v, want the identity", got)
	}
}

// TestNormDTypes checks the result dtypes: integers as float32, float16
// kept (the singular-value orders computed in float32), complex64's
// modulus as float32.
func TestNormDTypes(t *testing.T) {
	cases := []struct {
		name string
		got  *array.Array
		dt   array.DType
		want float64
	}{
		{"int32", linalg.Norm(array.FromSlice([]int32{3, -4}), nil, nil, false), array.Float32, 5},
		{"bool", linalg.Norm(array.FromSlice([]bool{true, false, true}), 0, nil, false), array.Float32, 2},
		{"float16 fro", linalg.Norm(ops.AsType(array.FromSlice([]float32{3, 0, 0, 4}, 2, 2), array.Float16), "fro", nil, false), array.Float16, 5},
		{"float16 2", linalg.Norm(ops.AsType(array.FromSlice([]float32{3, 0, 0, 4}, 2, 2), array.Float16), 2, nil, false), array.Float16, 4},
		{"complex64", linalg.Norm(array.FromSlice([]complex64{3 + 4i, 0}), 1, nil, false), array.Float32, 5},
		{"complex64 matrix inf", linalg.Norm(array.FromSlice([]complex64{3 + 4i, 1, 0, 1i}, 2, 2), math.Inf(1), nil, false), array.Float32, 6},
	}
	for _, c := range cases {
		if c.got.DType() != c.dt {
			t.Errorf("%s: dtype %v, want %v", c.name, c.got.DType(), c.dt)
		}
		if v := c.got.Item(); v != c.want {
			t.Errorf("%s: %v, want %v", c.name, v, c.want)
		}
	}
}

// TestCompositesBatched checks batched and empty inputs against the
// matrices one at a time: a batch of a with a b that broadcasts, and
// zero-size batches and matrices.
func TestCompositesBatched(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	in := fdInputs(r, [][]int{{2, 5, 3}, {5, 2}})
	a, b := in[0], in[1]
	x, res, rank, s := linalg.Lstsq(a, b)
	p := linalg.Pinv(a)
	for i := range 2 {
		ai := ops.Squeeze(ops.SliceAxis(a, 0, ops.R(i, i+1)), 0)
		xi, resi, ranki, si := linalg.Lstsq(ai, b)
		at := func(v *array.Array) *array.Array { return ops.Squeeze(ops.SliceAxis(v, 0, ops.R(i, i+1)), 0) }
		compareClose(t, "x", values(t, at(x)), values(t, xi), array.Float64)
		compareClose(t, "residuals", values(t, at(res)), values(t, resi), array.Float64)
		compareClose(t, "rank", values(t, at(rank)), values(t, ranki), array.Float64)
		compareClose(t, "s", values(t, at(s)), values(t, si), array.Float64)
		compareClose(t, "pinv", values(t, at(p)), values(t, linalg.Pinv(ai)), array.Float64)
	}
	empty := []struct {
		name  string
		got   *array.Array
		shape string
	}{
		{"norm of an empty batch", linalg.Norm(ops.Zeros([]int{0, 3, 3}, array.Float64), "fro", []int{1, 2}, false), "[0]"},
		{"pinv of an empty batch", linalg.Pinv(ops.Zeros([]int{0, 3, 2}, array.Float64)), "[0 2 3]"},
		{"pinv of an empty matrix", linalg.Pinv(ops.Zeros([]int{2, 0, 3}, array.Float32)), "[2 3 0]"},
		{"power of an empty batch", linalg.MatrixPower(ops.Zeros([]int{0, 2, 2}, array.Float64), 3), "[0 2 2]"},
		{"inverse power of an empty batch", linalg.MatrixPower(ops.Zeros([]int{0, 2, 2}, array.Float64), -1), "[0 2 2]"},
		{"cross of an empty batch", linalg.Cross(ops.Zeros([]int{0, 3}, array.Float64), ops.Zeros([]int{3}, array.Float64), -1), "[0 3]"},
	}
	for _, c := range empty {
		if err := c.got.Eval(); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if fmt.Sprint(c.got.Shape()) != c.shape {
			t.Errorf("%s: shape %v, want %s", c.name, c.got.Shape(), c.shape)
		}
	}
}
