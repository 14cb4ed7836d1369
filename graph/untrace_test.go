package graph_test

import (
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

func checkNotTracers(t *testing.T, what string, xs []*array.Array) {
	t.Helper()
	for i, x := range xs {
		if x != nil && x.Tracer() {
			t.Errorf("%s %d is a tracer after a top-level transform", what, i)
		}
	}
}

// TestTopLevelResultsAreNotTracers checks that the transforms, called
// outside any other, leave no tracers behind: a compiled function given
// their results would run uncompiled, and so would every step fed
// parameters updated from a gradient.
func TestTopLevelResultsAreNotTracers(t *testing.T) {
	x := array.FromSlice([]float32{1, 2, 3})
	f := func(in ...*array.Array) []*array.Array {
		return []*array.Array{ops.Sum(ops.Mul(in[0], in[0])), ops.Exp(in[0])}
	}
	outs, vjps := graph.VJP(f, []*array.Array{x}, []*array.Array{array.Scalar[float32](1), ops.OnesLike(x)})
	checkNotTracers(t, "VJP output", outs)
	checkNotTracers(t, "VJP product", vjps)
	outs, jvps := graph.JVP(f, []*array.Array{x}, []*array.Array{ops.OnesLike(x)})
	checkNotTracers(t, "JVP output", outs)
	checkNotTracers(t, "JVP product", jvps)

	loss := func(in ...*array.Array) *array.Array { return ops.Sum(ops.Mul(in[0], in[1])) }
	v, g := graph.ValueAndGrad(loss, 0, 1)(x, x)
	checkNotTracers(t, "value", []*array.Array{v})
	checkNotTracers(t, "gradient", g)
	v, aux, g := graph.ValueAndGradAux(func(in ...*array.Array) (*array.Array, []*array.Array) {
		return ops.Sum(in[0]), []*array.Array{ops.Neg(in[0]), nil}
	})(x)
	checkNotTracers(t, "value", []*array.Array{v})
	checkNotTracers(t, "aux", aux)
	checkNotTracers(t, "gradient", g)

	// a compiled function given a gradient replays its trace
	w := compile.NewWorker()
	defer w.Close()
	step := compile.Compile(func(in ...*array.Array) []*array.Array {
		return []*array.Array{ops.Sub(in[0], in[1])}
	})
	defer step.Release()
	p := x
	for range 3 {
		_, g := graph.ValueAndGrad(loss)(p, x)
		p = w.Call(step, p, g[0])[0]
	}
	if w.Traces() != 1 {
		t.Errorf("the compiled step holds %d traces, want 1 (it ran uncompiled)", w.Traces())
	}
	got, err := array.ToSlice[float32](p)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float32{-2, -4, -6} {
		if got[i] != want {
			t.Errorf("p[%d] = %v, want %v", i, got[i], want)
		}
	}
}

// TestNestedResultsStayTracers checks that a transform called inside
// another, on primals that are not tracers, keeps marked what depends on
// the outer transform's tracers (here captured by the inner function),
// so the outer one still differentiates through it.
func TestNestedResultsStayTracers(t *testing.T) {
	c := array.Scalar[float64](3)
	var inner []*array.Array
	g := graph.Grad(func(in ...*array.Array) *array.Array {
		x := in[0]
		// d/dy (x*y*y) at c = 2*x*c
		_, inner = graph.VJP(func(y ...*array.Array) []*array.Array {
			return []*array.Array{ops.Mul(x, ops.Mul(y[0], y[0]))}
		}, []*array.Array{c}, []*array.Array{array.Scalar[float64](1)})
		if !inner[0].Tracer() {
			t.Error("the inner product, which depends on the outer tracer, is not a tracer")
		}
		if err := inner[0].Eval(); err != nil {
			t.Fatal(err)
		}
		return ops.Mul(inner[0], x)
	})(array.Scalar[float64](2))
	// d/dx (2*x*c*x) = 4*c*x = 24
	if got := g[0].Item(); got != 24 {
		t.Errorf("gradient %v, want 24", got)
	}
}
