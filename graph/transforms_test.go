package graph_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// This file checks the transforms themselves (argument handling, zero and
// accumulated gradients, nesting) on functions whose derivatives have
// closed forms; fd_test.go checks the rules of the operations.

// wantError runs f and fails unless it panics with an *array.Error for op
// whose message contains every one of parts.
func wantError(t *testing.T, f func(), op string, parts ...string) {
	t.Helper()
	err := array.Try(f)
	var e *array.Error
	if !errors.As(err, &e) {
		t.Fatalf("got error %v, want an *array.Error from %s", err, op)
	}
	if e.Op != op {
		t.Fatalf("error %q is from %s, want %s", e, e.Op, op)
	}
	for _, p := range parts {
		if !strings.Contains(e.Msg, p) {
			t.Fatalf("error %q does not mention %q", e, p)
		}
	}
}

// near fails unless got and want agree elementwise within tol of the
// larger of 1 and |want|: arraytest's split of tol between Atol and Rtol
// allows no more than that.
func near(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if d := cmp.Diff(array.FromSlice(want), array.FromSlice(got), arraytest.Approx(tol/2, tol/2)); d != "" {
		t.Fatalf("%s (-want +got):\n%s", what, d)
	}
}

// tol12 is near's tolerance of 1e-12, split as near splits it, for
// arraytest.AssertClose.
var tol12 = arraytest.Tol{Rtol: 5e-13, Atol: 5e-13}

// arrayOf returns the array of dtype dt and the given shape that holds v
// (small values, exact in every dtype the tests use).
func arrayOf(dt array.DType, shape []int, v []float64) *array.Array {
	switch dt {
	case array.Float32:
		return array.FromSlice(mapF(v, func(x float64) float32 { return float32(x) }), shape...)
	case array.Float16:
		return array.FromSlice(mapF(v, func(x float64) array.F16 { return array.NewF16(float32(x)) }), shape...)
	case array.BFloat16:
		return array.FromSlice(mapF(v, func(x float64) array.BF16 { return array.NewBF16(float32(x)) }), shape...)
	case array.Int32:
		return array.FromSlice(mapF(v, func(x float64) int32 { return int32(x) }), shape...)
	}
	return array.FromSlice(v, shape...)
}

// mapF applies f to every element.
func mapF[T any](x []float64, f func(float64) T) []T {
	out := make([]T, len(x))
	for i, v := range x {
		out[i] = f(v)
	}
	return out
}

func vec(v ...float64) *array.Array { return array.FromSlice(v) }

func cube(x *array.Array) *array.Array { return ops.Mul(x, ops.Mul(x, x)) }

func sumCube(in ...*array.Array) *array.Array { return ops.Sum(cube(in[0])) }

func TestGradArgnums(t *testing.T) {
	// f(x, y, z) = sum(x*y) + 2*sum(z)
	f := func(in ...*array.Array) *array.Array {
		return ops.Add(ops.Sum(ops.Mul(in[0], in[1])), ops.MulScalar(ops.Sum(in[2]), 2))
	}
	x, y, z := vec(1, 2, 3), vec(4, 5, 6), vec(7, 8)

	g := graph.Grad(f)(x, y, z)
	if len(g) != 1 {
		t.Fatalf("no argnums: %d gradients, want 1", len(g))
	}
	arraytest.AssertClose(t, arrayOf(array.Float64, []int{3}, []float64{4, 5, 6}), g[0], tol12, "default argnum 0")

	g = graph.Grad(f, 2, 0, 1)(x, y, z)
	if len(g) != 3 {
		t.Fatalf("argnums 2 0 1: %d gradients, want 3", len(g))
	}
	arraytest.AssertClose(t, arrayOf(array.Float64, []int{2}, []float64{2, 2}), g[0], tol12, "d/dz")
	arraytest.AssertClose(t, arrayOf(array.Float64, []int{3}, []float64{4, 5, 6}), g[1], tol12, "d/dx")
	arraytest.AssertClose(t, arrayOf(array.Float64, []int{3}, []float64{1, 2, 3}), g[2], tol12, "d/dy")

	v, g := graph.ValueAndGrad(f, 1)(x, y, z)
	arraytest.AssertClose(t, arrayOf(array.Float64, []int{}, []float64{4 + 10 + 18 + 30}), v, tol12, "value")
	arraytest.AssertClose(t, arrayOf(array.Float64, []int{3}, []float64{1, 2, 3}), g[0], tol12, "ValueAndGrad d/dy")
}

func TestGradBadArguments(t *testing.T) {
	f := func(in ...*array.Array) *array.Array { return ops.Sum(ops.Mul(in[0], in[1])) }
	x := vec(1, 2)
	wantError(t, func() { graph.Grad(f, 2)(x, x) }, "graph.Grad", "argnum 2", "2 arguments")
	wantError(t, func() { graph.Grad(f, -1)(x, x) }, "graph.Grad", "argnum -1")
	wantError(t, func() { graph.ValueAndGrad(f, 0, 5)(x, x) }, "graph.Grad", "argnum 5")
	wantError(t, func() { graph.Grad(f, 1, 1)(x, x) }, "graph.Grad", "argnum 1", "more than once")
	wantError(t, func() { graph.Grad(f, 0)() }, "graph.Grad", "argnum 0", "0 arguments")
	wantError(t, func() { graph.Grad(f, 1)(x, nil) }, "graph.Grad", "argument 1 is nil")

	vector := func(in ...*array.Array) *array.Array { return ops.Mul(in[0], in[0]) }
	wantError(t, func() { graph.Grad(vector)(vec(1, 2, 3)) }, "graph.Grad", "scalar", "[3]")
	matrix := func(in ...*array.Array) *array.Array { return ops.Reshape(in[0], 1, 1) }
	wantError(t, func() { graph.ValueAndGrad(matrix)(vec(1)) }, "graph.Grad", "scalar", "[1 1]")
	wantError(t, func() { graph.Grad(func(...*array.Array) *array.Array { return nil })(x) }, "graph.Grad", "nil")

	// a failed call leaves no transform open: later evaluations detach
	y := ops.Exp(vec(1))
	if err := y.Eval(); err != nil {
		t.Fatal(err)
	}
	if y.Primitive() != nil {
		t.Fatal("a transform that panicked left tracing switched on")
	}
}

func TestGradUnusedArguments(t *testing.T) {
	// y (float32) and n (int32) do not reach the output
	f := func(in ...*array.Array) *array.Array { return ops.Sum(ops.Mul(in[0], in[0])) }
	x := vec(1, -2)
	y := array.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	n := array.FromSlice([]int32{1, 2, 3})
	g := graph.Grad(f, 0, 1, 2)(x, y, n)
	arraytest.AssertClose(t, arrayOf(array.Float64, []int{2}, []float64{2, -4}), g[0], tol12, "used")
	arraytest.AssertClose(t, arrayOf(array.Float32, []int{2, 3}, make([]float64, 6)), g[1], tol12, "unused float32")
	arraytest.AssertClose(t, arrayOf(array.Int32, []int{3}, make([]float64, 3)), g[2], tol12, "unused int32")

	// a constant function: every gradient is zero
	c := func(...*array.Array) *array.Array { return array.Scalar(3.0) }
	v, g := graph.ValueAndGrad(c)(array.FromSlice([]float32{1, 2}))
	arraytest.AssertClose(t, arrayOf(array.Float64, []int{}, []float64{3}), v, tol12, "constant value")
	arraytest.AssertClose(t, arrayOf(array.Float32, []int{2}, []float64{0, 0}), g[0], tol12, "constant gradient")

	// the output is the input itself
	id := func(in ...*array.Array) *array.Array { return in[0] }
	arraytest.AssertClose(t, arrayOf(array.Float64, []int{}, []float64{1}), graph.Grad(id)(array.Scalar(2.5))[0], tol12, "identity")
}

func TestGradAccumulatesReuse(t *testing.T) {
	xs := []float64{0.5, -1, 2}
	x := vec(xs...)
	// x reaches the output along four paths: x*x (twice), exp(x), x
	f := func(in ...*array.Array) *array.Array {
		x := in[0]
		return ops.Sum(ops.Add(ops.Add(ops.Mul(x, x), ops.Exp(x)), x))
	}
	near(t, "x*x + exp(x) + x", values(t, graph.Grad(f)(x)[0]), mapF(xs, func(v float64) float64 { return 2*v + math.Exp(v) + 1 }), 1e-12)

	// the same argument passed twice is two arguments
	h := func(in ...*array.Array) *array.Array { return ops.Sum(ops.Mul(in[0], in[1])) }
	g := graph.Grad(h, 0, 1)(x, x)
	near(t, "first of f(x, x)", values(t, g[0]), xs, 0)
	near(t, "second of f(x, x)", values(t, g[1]), xs, 0)

	// several outputs that share an intermediate: VJP sums their cotangents
	m := func(in ...*array.Array) []*array.Array {
		e := ops.Exp(in[0])
		return []*array.Array{e, ops.Sum(e)}
	}
	_, vjps := graph.VJP(m, []*array.Array{x}, []*array.Array{vec(1, 2, 3), array.Scalar(10.0)})
	near(t, "two outputs", values(t, vjps[0]), []float64{11 * math.Exp(0.5), 12 * math.Exp(-1), 13 * math.Exp(2)}, 1e-12)
}

func TestStopGradient(t *testing.T) {
	xs := []float64{1, 2, -3}
	// d/dx sum(x * stop(x)) = stop(x) = x, not 2x
	f := func(in ...*array.Array) *array.Array { return ops.Sum(ops.Mul(in[0], ops.StopGradient(in[0]))) }
	v, g := graph.ValueAndGrad(f)(vec(xs...))
	near(t, "value", values(t, v), []float64{14}, 0)
	near(t, "gradient", values(t, g[0]), xs, 0)

	// everything behind a StopGradient is constant
	cut := func(in ...*array.Array) *array.Array { return ops.Sum(ops.StopGradient(ops.Exp(in[0]))) }
	near(t, "cut", values(t, graph.Grad(cut)(vec(xs...))[0]), []float64{0, 0, 0}, 0)
	_, jvps := graph.JVP(func(in ...*array.Array) []*array.Array { return []*array.Array{ops.StopGradient(ops.Exp(in[0]))} },
		[]*array.Array{vec(xs...)}, []*array.Array{vec(1, 1, 1)})
	near(t, "cut JVP", values(t, jvps[0]), []float64{0, 0, 0}, 0)
}

func TestGradIntegerInputs(t *testing.T) {
	// n is an int32 input that does reach the output (cast to float64)
	f := func(in ...*array.Array) *array.Array {
		return ops.Sum(ops.Mul(ops.AsType(in[0], array.Float64), in[1]))
	}
	n := array.FromSlice([]int32{2, -1, 5})
	x := vec(0.5, 1.5, 2.5)
	g := graph.Grad(f, 0, 1)(n, x)
	arraytest.AssertClose(t, arrayOf(array.Int32, []int{3}, []float64{0, 0, 0}), g[0], tol12, "d/dn")
	arraytest.AssertClose(t, arrayOf(array.Float64, []int{3}, []float64{2, -1, 5}), g[1], tol12, "d/dx")

	// JVP gives an integer output a zero tangent
	_, jvps := graph.JVP(func(in ...*array.Array) []*array.Array {
		return []*array.Array{ops.AsType(in[0], array.Int32), ops.Mul(in[0], in[0])}
	}, []*array.Array{x}, []*array.Array{vec(1, 1, 1)})
	arraytest.AssertClose(t, arrayOf(array.Int32, []int{3}, []float64{0, 0, 0}), jvps[0], tol12, "integer output tangent")
	arraytest.AssertClose(t, arrayOf(array.Float64, []int{3}, []float64{1, 3, 5}), jvps[1], tol12, "float output tangent")
}

// TestJVPOfComparison checks MLX's rule: a comparison's tangent is zero in
// the input tangent's dtype, not Bool, alone or beside a float output.
func TestJVPOfComparison(t *testing.T) {
	x := array.FromSlice([]float32{1, -2, 3})
	for _, tc := range []struct {
		name string
		f    func(a *array.Array) *array.Array
	}{
		{"Greater", func(a *array.Array) *array.Array { return ops.Greater(a, ops.ZerosLike(a)) }},
		{"Equal", func(a *array.Array) *array.Array { return ops.Equal(a, a) }},
		{"LessScalar", func(a *array.Array) *array.Array { return ops.LessScalar(a, 0) }},
		{"IsNaN", ops.IsNaN},
	} {
		_, jvps := graph.JVP(func(in ...*array.Array) []*array.Array {
			return []*array.Array{tc.f(in[0]), ops.Mul(in[0], in[0])}
		}, []*array.Array{x}, []*array.Array{array.FromSlice([]float32{1, 1, 1})})
		arraytest.AssertClose(t, arrayOf(array.Float32, []int{3}, []float64{0, 0, 0}), jvps[0], tol12, tc.name+" tangent")
		arraytest.AssertClose(t, arrayOf(array.Float32, []int{3}, []float64{2, -4, 6}), jvps[1], tol12, tc.name+" beside a float output")
	}
}

func TestGradKeepsDType(t *testing.T) {
	f := func(in ...*array.Array) *array.Array { return ops.Sum(ops.Mul(in[0], in[1])) }
	x := array.FromSlice([]float32{1, 2})
	y := array.FromSlice([]float64{3, 4})
	g := graph.Grad(f, 0, 1)(x, y)
	arraytest.AssertClose(t, arrayOf(array.Float32, []int{2}, []float64{3, 4}), g[0], tol12, "float32 argument promoted to float64")
	arraytest.AssertClose(t, arrayOf(array.Float64, []int{2}, []float64{1, 2}), g[1], tol12, "float64 argument")
}

func TestSecondOrder(t *testing.T) {
	xs := []float64{-1.5, -0.3, 0, 0.7, 2}
	x := vec(xs...)
	d2 := func(f func(in ...*array.Array) *array.Array) *array.Array {
		return graph.Grad(func(in ...*array.Array) *array.Array { return ops.Sum(graph.Grad(f)(in[0])[0]) })(x)[0]
	}
	near(t, "d2/dx2 sum(x^3)", values(t, d2(sumCube)), mapF(xs, func(v float64) float64 { return 6 * v }), 1e-12)

	sumTanh := func(in ...*array.Array) *array.Array { return ops.Sum(ops.Tanh(in[0])) }
	near(t, "d2/dx2 sum(tanh x)", values(t, d2(sumTanh)), mapF(xs, func(v float64) float64 {
		th := math.Tanh(v)
		return -2 * th * (1 - th*th)
	}), 1e-12)
}

func TestSecondOrderSoftmaxCrossEntropy(t *testing.T) {
	// loss(z) = -sum(y * log_softmax(z)) with sum(y) = 1 has gradient p - y
	// and Hessian diag(p) - p p^T, p = softmax(z)
	zs := []float64{0.3, -1.2, 2, 0.5}
	ys := []float64{0.1, 0.2, 0.6, 0.1}
	vs := []float64{1, -2, 0.5, 3}
	y := vec(ys...)
	loss := func(in ...*array.Array) *array.Array {
		return ops.Neg(ops.Sum(ops.Mul(y, ops.LogSoftmax(in[0], -1))))
	}
	p := make([]float64, len(zs))
	den := 0.0
	for i, z := range zs {
		p[i] = math.Exp(z)
		den += p[i]
	}
	pv := 0.0
	for i := range p {
		p[i] /= den
		pv += p[i] * vs[i]
	}
	grad, hv := make([]float64, len(p)), make([]float64, len(p))
	for i := range p {
		grad[i] = p[i] - ys[i]
		hv[i] = p[i]*vs[i] - p[i]*pv
	}
	z, v := vec(zs...), vec(vs...)
	near(t, "gradient", values(t, graph.Grad(loss)(z)[0]), grad, 1e-12)

	// reverse over reverse: the gradient of <grad loss(z), v>
	gv := func(in ...*array.Array) *array.Array { return ops.Sum(ops.Mul(graph.Grad(loss)(in[0])[0], v)) }
	near(t, "Hessian-vector product (reverse over reverse)", values(t, graph.Grad(gv)(z)[0]), hv, 1e-12)

	// forward over reverse
	_, jvps := graph.JVP(graph.Grad(loss), []*array.Array{z}, []*array.Array{v})
	near(t, "Hessian-vector product (forward over reverse)", values(t, jvps[0]), hv, 1e-12)
}

func TestThirdOrder(t *testing.T) {
	// d3/dx3 sum(x^4) = 24x; d3/dx3 sum(sin x) = -cos x
	xs := []float64{-1, 0.25, 1.5}
	x := vec(xs...)
	d := func(f func(in ...*array.Array) *array.Array) func(in ...*array.Array) *array.Array {
		return func(in ...*array.Array) *array.Array { return ops.Sum(graph.Grad(f)(in[0])[0]) }
	}
	quartic := func(in ...*array.Array) *array.Array { return ops.Sum(ops.Mul(in[0], cube(in[0]))) }
	near(t, "d3/dx3 sum(x^4)", values(t, graph.Grad(d(d(quartic)))(x)[0]), mapF(xs, func(v float64) float64 { return 24 * v }), 1e-12)
	sin := func(in ...*array.Array) *array.Array { return ops.Sum(ops.Sin(in[0])) }
	near(t, "d3/dx3 sum(sin x)", values(t, graph.Grad(d(d(sin)))(x)[0]), mapF(xs, func(v float64) float64 { return -math.Cos(v) }), 1e-12)
}

func TestHessianVectorProduct(t *testing.T) {
	// f(x) = 0.5 x^T A x with A symmetric: grad = A x, Hessian = A
	as := []float64{
		4, 1, -2,
		1, 3, 0.5,
		-2, 0.5, 5,
	}
	a := array.FromSlice(as, 3, 3)
	f := func(in ...*array.Array) *array.Array {
		return ops.MulScalar(ops.Sum(ops.Mul(in[0], ops.MatMul(a, in[0]))), 0.5)
	}
	x := vec(1, -1, 2)
	vs := []float64{0.5, 2, -1}
	av := []float64{4*0.5 + 1*2 - 2*-1, 1*0.5 + 3*2 + 0.5*-1, -2*0.5 + 0.5*2 + 5*-1}

	// jvp of vjp
	vjp := func(in ...*array.Array) []*array.Array {
		_, g := graph.VJP(func(in ...*array.Array) []*array.Array { return []*array.Array{f(in...)} },
			in, []*array.Array{array.Scalar(1.0)})
		return g
	}
	_, hv := graph.JVP(vjp, []*array.Array{x}, []*array.Array{vec(vs...)})
	near(t, "JVP of VJP", values(t, hv[0]), av, 1e-12)

	// vjp of jvp: the gradient of the directional derivative
	jv := func(in ...*array.Array) []*array.Array {
		_, d := graph.JVP(func(in ...*array.Array) []*array.Array { return []*array.Array{f(in...)} },
			in, []*array.Array{vec(vs...)})
		return d
	}
	_, hv = graph.VJP(jv, []*array.Array{x}, []*array.Array{array.Scalar(1.0)})
	near(t, "VJP of JVP", values(t, hv[0]), av, 1e-12)
}

func TestGradOfFunctionCallingGrad(t *testing.T) {
	xs := []float64{-2, 0.5, 3}
	// g(x) = sum(x^3); f(x) = sum(grad g(x) * x) = 3 sum(x^3); f' = 9x^2
	f := func(in ...*array.Array) *array.Array {
		return ops.Sum(ops.Mul(graph.Grad(sumCube)(in[0])[0], in[0]))
	}
	v, g := graph.ValueAndGrad(f)(vec(xs...))
	near(t, "value", values(t, v), []float64{3 * (-8 + 0.125 + 27)}, 1e-12)
	near(t, "gradient", values(t, g[0]), mapF(xs, func(v float64) float64 { return 9 * v * v }), 1e-12)

	// the inner function closes over the outer argument: d/dx of
	// d/dy sum(x*y*y) at y = c is d/dx sum(2 x c) = 2c
	c := vec(1, 2, 3)
	h := func(in ...*array.Array) *array.Array {
		x := in[0]
		inner := func(in ...*array.Array) *array.Array { return ops.Sum(ops.Mul(x, ops.Mul(in[0], in[0]))) }
		return ops.Sum(graph.Grad(inner)(c)[0])
	}
	near(t, "closure over the outer argument", values(t, graph.Grad(h)(vec(xs...))[0]), []float64{2, 4, 6}, 0)
}

func TestVJPJVPAgree(t *testing.T) {
	// for f: R^3 -> R^2, <u, J v> computed from both sides
	f := func(in ...*array.Array) []*array.Array {
		x, y := in[0], in[1]
		return []*array.Array{ops.Sum(ops.Mul(ops.Tanh(x), y)), ops.Exp(ops.Mul(x, x))}
	}
	x, y := vec(0.1, -0.4, 0.9), vec(2, 1, -1)
	u0, u1 := array.Scalar(1.5), vec(-1, 0.5, 2)
	vx, vy := vec(0.3, 0.2, -0.7), vec(1, -1, 0.5)
	_, vjps := graph.VJP(f, []*array.Array{x, y}, []*array.Array{u0, u1})
	_, jvps := graph.JVP(f, []*array.Array{x, y}, []*array.Array{vx, vy})
	dot := func(a, b *array.Array) float64 { return ops.Sum(ops.Mul(a, b)).Item() }
	left := dot(vjps[0], vx) + dot(vjps[1], vy)
	right := dot(u0, jvps[0]) + dot(u1, jvps[1])
	near(t, "<u, J v> = <J^T u, v>", []float64{left}, []float64{right}, 1e-12)
}

func TestVJPBadArguments(t *testing.T) {
	f := func(in ...*array.Array) []*array.Array { return []*array.Array{ops.Exp(in[0])} }
	x := vec(1, 2, 3)
	p := []*array.Array{x}
	wantError(t, func() { graph.VJP(f, p, nil) }, "graph.VJP", "0 cotangents for 1 outputs")
	wantError(t, func() { graph.VJP(f, p, []*array.Array{x, x}) }, "graph.VJP", "2 cotangents for 1 outputs")
	wantError(t, func() { graph.VJP(f, p, []*array.Array{vec(1, 2)}) }, "graph.VJP", "cotangent 0", "[2]", "[3]")
	wantError(t, func() { graph.VJP(f, p, []*array.Array{nil}) }, "graph.VJP", "cotangent 0 is nil")
	wantError(t, func() { graph.VJP(f, []*array.Array{nil}, []*array.Array{x}) }, "graph.VJP", "primal 0 is nil")
	none := func(...*array.Array) []*array.Array { return nil }
	wantError(t, func() { graph.VJP(none, p, nil) }, "graph.VJP", "no arrays")
	nilOut := func(...*array.Array) []*array.Array { return []*array.Array{x, nil} }
	wantError(t, func() { graph.VJP(nilOut, p, []*array.Array{x, x}) }, "graph.VJP", "output 1", "nil")
}

func TestJVPBadArguments(t *testing.T) {
	f := func(in ...*array.Array) []*array.Array { return []*array.Array{ops.Mul(in[0], in[1])} }
	x, y := vec(1, 2, 3), vec(4, 5, 6)
	p := []*array.Array{x, y}
	wantError(t, func() { graph.JVP(f, p, []*array.Array{x}) }, "graph.JVP", "1 tangents for 2 primals")
	wantError(t, func() { graph.JVP(f, p, []*array.Array{x, vec(1)}) }, "graph.JVP", "tangent 1", "[1]", "[3]")
	wantError(t, func() { graph.JVP(f, p, []*array.Array{x, nil}) }, "graph.JVP", "tangent 1 is nil")
	wantError(t, func() { graph.JVP(f, []*array.Array{x, nil}, p) }, "graph.JVP", "primal 1 is nil")
	none := func(...*array.Array) []*array.Array { return nil }
	wantError(t, func() { graph.JVP(none, p, p) }, "graph.JVP", "no arrays")
}

func TestJVPCastsTangents(t *testing.T) {
	// a float64 tangent of a float32 primal is taken in float32
	f := func(in ...*array.Array) []*array.Array { return []*array.Array{ops.Mul(in[0], in[0])} }
	x := array.FromSlice([]float32{1, 2})
	_, jvps := graph.JVP(f, []*array.Array{x}, []*array.Array{vec(1, 0.5)})
	arraytest.AssertClose(t, arrayOf(array.Float32, []int{2}, []float64{2, 2}), jvps[0], tol12, "tangent")
}

func TestTapeOrder(t *testing.T) {
	x := vec(1, 2)
	y := ops.Exp(x)
	z := ops.Add(y, ops.Mul(y, x))
	w := ops.Sum(z)
	tape := graph.NewTape([]*array.Array{x}, []*array.Array{w, z})
	pos := map[*array.Array]int{}
	for i, n := range tape.Nodes {
		for _, o := range n.Outputs {
			pos[o] = i
		}
	}
	if len(tape.Nodes) != 4 {
		t.Fatalf("%d nodes, want 4 (exp, mul, add, sum)", len(tape.Nodes))
	}
	for _, n := range tape.Nodes {
		for _, in := range n.Inputs {
			if j, ok := pos[in]; ok && j >= pos[n.Outputs[0]] {
				t.Fatalf("node %s comes before its input %s", n.Primitive.Name(), tape.Nodes[j].Primitive.Name())
			}
		}
	}
	if len(tape.Constants) != 0 {
		t.Fatalf("%d constants, want none (x is the input)", len(tape.Constants))
	}
}

func TestTapeLongChain(t *testing.T) {
	// the walk is iterative: a chain far deeper than any sane recursion
	const n = 200_000
	x := array.Scalar(1.0)
	y := x
	for range n {
		y = ops.AddScalar(y, 1)
	}
	tape := graph.NewTape([]*array.Array{x}, []*array.Array{y})
	if len(tape.Nodes) != n {
		t.Fatalf("%d nodes, want %d", len(tape.Nodes), n)
	}
}

func TestConcurrentTransforms(t *testing.T) {
	// transforms on several goroutines at once share nothing but the
	// count of active traces; run under -race
	xs := []float64{-0.5, 0.25, 1}
	want := mapF(xs, func(v float64) float64 { return 6 * v })
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			errs <- array.Try(func() {
				x := vec(xs...)
				d := func(in ...*array.Array) *array.Array { return ops.Sum(graph.Grad(sumCube)(in[0])[0]) }
				g, err := array.ToSlice[float64](graph.Grad(d)(x)[0])
				if err != nil {
					panic(array.Errorf("test", "%v", err))
				}
				per := graph.Vmap(graph.Grad(sumCube), nil, nil)(ops.Reshape(x, 3, 1))[0]
				p, err := array.ToSlice[float64](per)
				if err != nil {
					panic(array.Errorf("test", "%v", err))
				}
				for i := range xs {
					if math.Abs(g[i]-want[i]) > 1e-12 || math.Abs(p[i]-3*xs[i]*xs[i]) > 1e-12 {
						panic(array.Errorf("test", "got %v and %v", g, p))
					}
				}
			})
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
