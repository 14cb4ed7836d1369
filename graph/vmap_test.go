package graph_test

import (
	"math"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// noBatchPrim is a test-only primitive with no batching rule: it passes its
// input through.
type noBatchPrim struct{}

func (noBatchPrim) Name() string { return "NoBatchForTest" }
func (noBatchPrim) Eval(_ array.Stream, in, out []*array.Array) error {
	out[0].SetData(in[0].Storage(), in[0].Strides(), in[0].Offset())
	return nil
}

func noBatch(x *array.Array) *array.Array {
	return array.New(array.CurrentStream(), x.Shape(), x.DType(), noBatchPrim{}, x)
}

// vmapLoop is Vmap's meaning written out: f called on each slice of the
// batched arguments, its results stacked along the out axes.
func vmapLoop(f graph.Fn, inAxes, outAxes []int, in ...*array.Array) []*array.Array {
	size := -1
	for i, x := range in {
		if inAxes[i] != graph.NoAxis {
			size = x.Dim(inAxes[i])
		}
	}
	var per [][]*array.Array
	for b := range size {
		args := make([]*array.Array, len(in))
		for i, x := range in {
			if inAxes[i] == graph.NoAxis {
				args[i] = x
				continue
			}
			ax := inAxes[i]
			if ax < 0 {
				ax += x.Ndim()
			}
			args[i] = ops.Squeeze(ops.SliceAxis(x, ax, ops.R(b, b+1)), ax)
		}
		outs := f(args...)
		for j, o := range outs {
			if b == 0 {
				per = append(per, nil)
			}
			per[j] = append(per[j], o)
		}
	}
	res := make([]*array.Array, len(per))
	for j := range per {
		res[j] = ops.Stack(per[j], outAxes[j])
	}
	return res
}

// checkVmapLoop compares Vmap(f, inAxes, outAxes) with vmapLoop.
func checkVmapLoop(t *testing.T, what string, f graph.Fn, inAxes, outAxes []int, in ...*array.Array) {
	t.Helper()
	got := graph.Vmap(f, inAxes, outAxes)(in...)
	want := vmapLoop(f, inAxes, outAxes, in...)
	if len(got) != len(want) {
		t.Fatalf("%s: %d outputs, want %d", what, len(got), len(want))
	}
	for j := range got {
		if !arraytest.AssertClose(t, want[j], got[j], tol12, "%s, output %d", what, j) {
			t.FailNow()
		}
	}
}

func seq(n int, scale float64, shape ...int) *array.Array {
	v := make([]float64, n)
	for i := range v {
		v[i] = math.Sin(float64(i)*1.3+0.2) * scale
	}
	return array.FromSlice(v, shape...)
}

func TestVmapPerExampleGradients(t *testing.T) {
	// squared error of a linear model on one example
	loss := func(in ...*array.Array) *array.Array {
		w, x, y := in[0], in[1], in[2]
		return ops.Square(ops.Sub(ops.Sum(ops.Mul(w, x)), y))
	}
	w := vec(0.5, -1, 2)
	xs := seq(12, 1, 4, 3)
	ys := vec(1, -2, 0.5, 3)

	per := graph.Vmap(graph.Grad(loss), []int{graph.NoAxis, 0, 0}, nil)(w, xs, ys)[0]
	var loop []*array.Array
	for i := range 4 {
		x := ops.Squeeze(ops.SliceAxis(xs, 0, ops.R(i, i+1)), 0)
		y := ops.Squeeze(ops.SliceAxis(ys, 0, ops.R(i, i+1)), 0)
		loop = append(loop, graph.Grad(loss)(w, x, y)[0])
	}
	want := ops.Stack(loop, 0)
	arraytest.AssertClose(t, arrayOf(array.Float64, []int{4, 3}, values(t, want)), per, tol12, "per-example gradients")

	// closed form: 2 (w.x - y) x
	xv, yv, wv := values(t, xs), values(t, ys), values(t, w)
	var closed []float64
	for i := range 4 {
		r := -yv[i]
		for j := range 3 {
			r += wv[j] * xv[3*i+j]
		}
		for j := range 3 {
			closed = append(closed, 2*r*xv[3*i+j])
		}
	}
	near(t, "closed form", values(t, per), closed, 1e-12)

	// the examples stored as columns, the gradients wanted as columns too
	cols := graph.Vmap(graph.Grad(loss), []int{graph.NoAxis, -1, 0}, []int{1})(w, ops.Transpose(xs), ys)[0]
	arraytest.AssertClose(t, arrayOf(array.Float64, []int{3, 4}, values(t, ops.Transpose(want))), cols, tol12, "columns")

	// gradients with respect to two arguments, one of them unbatched
	g := graph.Vmap(graph.Grad(loss, 0, 1), []int{graph.NoAxis, 0, 0}, nil)(w, xs, ys)
	arraytest.AssertClose(t, arrayOf(array.Float64, []int{4, 3}, values(t, want)), g[0], tol12, "d/dw")
	checkVmapLoop(t, "d/dw, d/dx", graph.Grad(loss, 0, 1), []int{graph.NoAxis, 0, 0}, []int{0, 0}, w, xs, ys)

	// values and gradients together
	vg := graph.ValueAndGrad(loss)
	both := func(in ...*array.Array) []*array.Array {
		v, g := vg(in...)
		return []*array.Array{v, g[0]}
	}
	checkVmapLoop(t, "value and gradient", both, []int{graph.NoAxis, 0, 0}, []int{0, 0}, w, xs, ys)
}

func TestVmapAxes(t *testing.T) {
	// x has per-example shape [2 3], c [3]
	f := func(in ...*array.Array) []*array.Array {
		x, c := in[0], in[1]
		return []*array.Array{ops.Add(ops.Mul(ops.Exp(x), c), ops.Sum(x)), ops.Sum(ops.Mul(x, x))}
	}
	x := seq(24, 1, 4, 2, 3)
	c := seq(3, 2, 3)
	cs := seq(12, 2, 4, 3)
	cases := []struct {
		name    string
		inAxes  []int
		outAxes []int
		x, c    *array.Array
	}{
		{"all on axis 0", []int{0, 0}, []int{0, 0}, x, cs},
		{"c unbatched", []int{0, graph.NoAxis}, []int{0, 0}, x, c},
		{"x on axis 1", []int{1, 0}, []int{0, 0}, ops.MoveAxis(x, 0, 1), cs},
		{"x on axis -1, c on axis 1", []int{-1, 1}, []int{0, 0}, ops.MoveAxis(x, 0, -1), ops.Transpose(cs)},
		{"out on axis 1", []int{0, 0}, []int{1, 0}, x, cs},
		{"out on axis -1", []int{0, graph.NoAxis}, []int{-1, -1}, x, c},
		{"out on axis -2", []int{2, 0}, []int{-2, 0}, ops.MoveAxis(x, 0, 2), cs},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkVmapLoop(t, tc.name, f, tc.inAxes, tc.outAxes, tc.x, tc.c)
		})
	}

	// nil axes mean axis 0 everywhere
	got := graph.Vmap(f, nil, nil)(x, cs)
	want := vmapLoop(f, []int{0, 0}, []int{0, 0}, x, cs)
	near(t, "nil axes", values(t, got[0]), values(t, want[0]), 1e-12)
}

func TestVmapIdentityAndUnbatchedOutputs(t *testing.T) {
	x := seq(6, 1, 3, 2)
	c := vec(5, 7)
	// outputs: the batched input itself, an unbatched argument, a constant
	// and a function of the unbatched argument only
	f := func(in ...*array.Array) []*array.Array {
		return []*array.Array{in[0], in[1], array.Scalar(4.0), ops.MulScalar(in[1], 2)}
	}
	got := graph.Vmap(f, []int{0, graph.NoAxis}, []int{1, 0, 0, 1})(x, c)
	arraytest.AssertClose(t, arrayOf(array.Float64, []int{2, 3}, values(t, ops.Transpose(x))), got[0], tol12, "identity")
	arraytest.AssertClose(t, arrayOf(array.Float64, []int{3, 2}, []float64{5, 7, 5, 7, 5, 7}), got[1], tol12, "unbatched argument")
	arraytest.AssertClose(t, arrayOf(array.Float64, []int{3}, []float64{4, 4, 4}), got[2], tol12, "constant")
	arraytest.AssertClose(t, arrayOf(array.Float64, []int{2, 3}, []float64{10, 10, 10, 14, 14, 14}), got[3], tol12, "unbatched result on axis 1")
}

func TestVmapNested(t *testing.T) {
	// vmap of vmap of a scalar product is the outer product
	mul := func(in ...*array.Array) []*array.Array { return []*array.Array{ops.Mul(in[0], in[1])} }
	inner := graph.Vmap(mul, []int{graph.NoAxis, 0}, nil)
	outer := graph.Vmap(inner, []int{0, graph.NoAxis}, nil)
	got := outer(vec(1, 2, 3), vec(10, 20))[0]
	arraytest.AssertClose(t, arrayOf(array.Float64, []int{3, 2}, []float64{10, 20, 20, 40, 30, 60}), got, tol12, "outer product")
}

func TestGradOfVmap(t *testing.T) {
	// d/dx sum over rows of sum(tanh(row)) = 1 - tanh(x)^2
	rowSum := func(in ...*array.Array) []*array.Array { return []*array.Array{ops.Sum(ops.Tanh(in[0]))} }
	f := func(in ...*array.Array) *array.Array { return ops.Sum(graph.Vmap(rowSum, nil, nil)(in[0])[0]) }
	x := seq(6, 1.5, 2, 3)
	want := mapF(values(t, x), func(v float64) float64 { return 1 - math.Tanh(v)*math.Tanh(v) })
	near(t, "grad of vmap", values(t, graph.Grad(f)(x)[0]), want, 1e-12)

	// the JVP of a vmapped function is the vmapped JVP
	tan := seq(6, 0.5, 2, 3)
	_, jvps := graph.JVP(graph.Vmap(rowSum, nil, nil), []*array.Array{x}, []*array.Array{tan})
	wt := make([]float64, 2)
	for i, v := range values(t, tan) {
		wt[i/3] += want[i] * v
	}
	near(t, "JVP of vmap", values(t, jvps[0]), wt, 1e-12)
}

func TestVmapBadArguments(t *testing.T) {
	f := func(in ...*array.Array) []*array.Array { return []*array.Array{ops.Add(in[0], in[1])} }
	x := seq(6, 1, 3, 2)
	y := seq(8, 1, 4, 2)
	wantError(t, func() { graph.Vmap(f, nil, nil)(x, y) }, "graph.Vmap", "batch size 4", "3")
	wantError(t, func() { graph.Vmap(f, []int{0, 1}, nil)(x, x) }, "graph.Vmap", "batch size 2", "3")
	wantError(t, func() { graph.Vmap(f, []int{0}, nil)(x, x) }, "graph.Vmap", "1 in axes for 2 arguments")
	wantError(t, func() { graph.Vmap(f, []int{0, 2}, nil)(x, x) }, "graph.Vmap", "in axis 2", "argument 1", "[3 2]")
	wantError(t, func() { graph.Vmap(f, []int{0, -3}, nil)(x, x) }, "graph.Vmap", "in axis -3")
	wantError(t, func() { graph.Vmap(f, []int{0, 0}, []int{0, 0})(x, x) }, "graph.Vmap", "2 out axes for 1 outputs")
	wantError(t, func() { graph.Vmap(f, []int{0, 0}, []int{2})(x, x) }, "graph.Vmap", "out axis 2", "[2]")
	wantError(t, func() { graph.Vmap(f, []int{0, 0}, []int{-3})(x, x) }, "graph.Vmap", "out axis -3")
	wantError(t, func() { graph.Vmap(f, []int{graph.NoAxis, graph.NoAxis}, nil)(x, x) }, "graph.Vmap", "no argument is batched")
	wantError(t, func() { graph.Vmap(f, nil, nil)(x, nil) }, "graph.Vmap", "argument 1 is nil")
	wantError(t, func() { graph.Vmap(f, nil, nil)(array.Scalar(1.0), x) }, "graph.Vmap", "in axis 0", "argument 0")
	none := func(...*array.Array) []*array.Array { return nil }
	wantError(t, func() { graph.Vmap(none, nil, nil)(x) }, "graph.Vmap", "no arrays")
}

func TestVmapMissingRule(t *testing.T) {
	f := func(in ...*array.Array) []*array.Array { return []*array.Array{ops.Exp(noBatch(in[0]))} }
	wantError(t, func() { graph.Vmap(f, nil, nil)(seq(6, 1, 3, 2)) }, "graph.Vmap", "NoBatchForTest", "no batching rule")

	// the rule is needed only where a batched value flows: applied to an
	// unbatched argument the primitive runs as it is
	g := func(in ...*array.Array) []*array.Array { return []*array.Array{ops.Add(in[0], noBatch(in[1]))} }
	got := graph.Vmap(g, []int{0, graph.NoAxis}, nil)(seq(6, 1, 3, 2), vec(10, 20))[0]
	want := ops.Add(seq(6, 1, 3, 2), vec(10, 20))
	arraytest.AssertClose(t, arrayOf(array.Float64, []int{3, 2}, values(t, want)), got, tol12, "unbatched input")
}

// tenPrim is a test-only primitive whose result, the scalar 10, does not
// depend on its input's values: its batching rule says so with axis -1.
type tenPrim struct{}

func (tenPrim) Name() string { return "TenForTest" }
func (tenPrim) Eval(_ array.Stream, _, out []*array.Array) error {
	c := array.Scalar(10.0)
	if err := c.Eval(); err != nil {
		return err
	}
	out[0].SetData(c.Storage(), c.Strides(), c.Offset())
	return nil
}
func (tenPrim) Vmap(in []*array.Array, _ []int) ([]*array.Array, []int) {
	return []*array.Array{ten(in[0])}, []int{-1}
}

func ten(x *array.Array) *array.Array {
	return array.New(array.CurrentStream(), nil, array.Float64, tenPrim{}, x)
}

func TestVmapRuleWithUnbatchedResult(t *testing.T) {
	f := func(in ...*array.Array) []*array.Array {
		c := ten(in[0])
		return []*array.Array{c, ops.Exp(ops.MulScalar(c, 0.1)), ops.Add(in[0], c)}
	}
	got := graph.Vmap(f, nil, []int{0, 0, 1})(seq(6, 1, 3, 2))
	arraytest.AssertClose(t, arrayOf(array.Float64, []int{3}, []float64{10, 10, 10}), got[0], tol12, "rule's unbatched result")
	e := math.Exp(1)
	arraytest.AssertClose(t, arrayOf(array.Float64, []int{3}, []float64{e, e, e}), got[1], tol12, "computed from it")
	want := values(t, ops.Transpose(ops.AddScalar(seq(6, 1, 3, 2), 10)))
	arraytest.AssertClose(t, arrayOf(array.Float64, []int{2, 3}, want), got[2], tol12, "combined with a batched value")
}
