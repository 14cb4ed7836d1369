package graph_test

import (
	"sync/atomic"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

func TestValueAndGradAux(t *testing.T) {
	// loss = sum((w*x - y)^2); aux = the predictions and a count, which
	// must come back as computed and must not enter the gradient
	var runs atomic.Int64
	f := func(in ...*array.Array) (*array.Array, []*array.Array) {
		runs.Add(1)
		pred := ops.Mul(in[0], in[1])
		d := ops.Sub(pred, in[2])
		return ops.Sum(ops.Mul(d, d)), []*array.Array{pred, ops.Sum(ops.MulScalar(pred, 1000)), nil}
	}
	w, x, y := vec(2, -1), vec(3, 4), vec(5, -6)
	loss, aux, g := graph.ValueAndGradAux(f, 0, 2)(w, x, y)
	if runs.Load() != 1 {
		t.Fatalf("the function ran %d times, want 1", runs.Load())
	}
	near(t, "loss", values(t, loss), []float64{1 + 4}, 1e-12)
	if len(aux) != 3 || aux[2] != nil {
		t.Fatalf("aux: %v, want three outputs, the last nil", aux)
	}
	near(t, "aux predictions", values(t, aux[0]), []float64{6, -4}, 0)
	near(t, "aux total", values(t, aux[1]), []float64{2000}, 0)
	if len(g) != 2 {
		t.Fatalf("%d gradients, want 2", len(g))
	}
	// d/dw = 2(wx-y)x, d/dy = -2(wx-y)
	near(t, "grad w", values(t, g[0]), []float64{2 * 1 * 3, 2 * 2 * 4}, 1e-12)
	near(t, "grad y", values(t, g[1]), []float64{-2, -4}, 1e-12)

	// the same loss through ValueAndGrad agrees
	v2, g2 := graph.ValueAndGrad(func(in ...*array.Array) *array.Array { l, _ := f(in...); return l }, 0, 2)(w, x, y)
	near(t, "ValueAndGrad loss", values(t, v2), values(t, loss), 0)
	near(t, "ValueAndGrad grad", values(t, g2[0]), values(t, g[0]), 0)

	// per-example losses, aux and gradients under Vmap
	per := func(in ...*array.Array) []*array.Array {
		l, a, gs := graph.ValueAndGradAux(f)(in...)
		return []*array.Array{l, a[0], gs[0]}
	}
	b := graph.Vmap(per, []int{0, graph.NoAxis, graph.NoAxis}, nil)(array.FromSlice([]float64{2, -1, 1, 1}, 2, 2), x, y)
	near(t, "vmap loss", values(t, b[0]), []float64{5, 4 + 100}, 1e-12)
	near(t, "vmap aux", values(t, b[1]), []float64{6, -4, 3, 4}, 0)
	near(t, "vmap grad", values(t, b[2]), []float64{6, 16, -12, 80}, 1e-12)
}

func TestValueAndGradAuxBadInput(t *testing.T) {
	wantError(t, func() { graph.ValueAndGradAux(nil) }, "graph.ValueAndGradAux", "nil function")
	vec2 := func(in ...*array.Array) (*array.Array, []*array.Array) { return in[0], nil }
	wantError(t, func() { graph.ValueAndGradAux(vec2)(vec(1, 2)) }, "graph.Grad", "scalar", "[2]")
	wantError(t, func() { graph.ValueAndGradAux(vec2, 3)(vec(1, 2)) }, "graph.Grad", "argnum 3")
}

// softplusRules is log(1+e^x) with each rule hand-written, and each rule
// marked so the tests can see that it, not the function, ran.
func softplusRules(vjps, jvps, vmaps *atomic.Int64) graph.Custom {
	sigmoid := func(x *array.Array) *array.Array { return ops.Sigmoid(x) }
	f := func(in ...*array.Array) []*array.Array {
		return []*array.Array{ops.LogAddExp(in[0], ops.ZerosLike(in[0]))}
	}
	return graph.Custom{
		F: f,
		VJP: func(p, _, c []*array.Array) []*array.Array {
			vjps.Add(1)
			return []*array.Array{ops.Mul(c[0], sigmoid(p[0]))}
		},
		JVP: func(p, tans []*array.Array) []*array.Array {
			jvps.Add(1)
			return []*array.Array{ops.Mul(tans[0], sigmoid(p[0]))}
		},
		Vmap: func(in []*array.Array, axes []int) ([]*array.Array, []int) {
			vmaps.Add(1)
			return f(in...), axes
		},
	}
}

func TestCustomFunctionRules(t *testing.T) {
	var vjps, jvps, vmaps atomic.Int64
	sp := graph.CustomFunction(softplusRules(&vjps, &jvps, &vmaps))
	xs := []float64{-3, -0.5, 0, 0.5, 3}
	x := vec(xs...)
	want := values(t, ops.LogAddExp(x, ops.ZerosLike(x)))
	sig := values(t, ops.Sigmoid(x))

	near(t, "forward", values(t, sp(x)[0]), want, 0)
	if vjps.Load()+jvps.Load()+vmaps.Load() != 0 {
		t.Fatal("a rule ran outside any transform")
	}

	g := graph.Grad(sumOf(sp))(x)[0]
	near(t, "grad", values(t, g), sig, 1e-12)
	if vjps.Load() != 1 || jvps.Load() != 0 {
		t.Fatalf("Grad: %d VJP and %d JVP calls, want 1 and 0", vjps.Load(), jvps.Load())
	}

	tan := vec(1, 2, 3, 4, 5)
	_, jv := graph.JVP(sp, []*array.Array{x}, []*array.Array{tan})
	near(t, "JVP", values(t, jv[0]), values(t, ops.Mul(tan, ops.Sigmoid(x))), 1e-12)
	if jvps.Load() != 1 {
		t.Fatalf("JVP: %d JVP calls, want 1", jvps.Load())
	}

	m := array.FromSlice([]float64{-1, 0, 1, 2, -2, 0.5}, 2, 3)
	out := graph.Vmap(sp, []int{1}, []int{1})(m)[0]
	near(t, "vmap", values(t, out), values(t, ops.LogAddExp(m, ops.ZerosLike(m))), 1e-12)
	if vmaps.Load() != 1 {
		t.Fatalf("Vmap: %d Vmap calls, want 1", vmaps.Load())
	}
}

func TestCustomFunctionDefaults(t *testing.T) {
	// only a JVP rule: reverse mode differentiates F, forward mode uses
	// the rule (here deliberately twice the true derivative), and Vmap
	// batches F and keeps the rule
	cube := graph.CustomFunction(graph.Custom{
		F: func(in ...*array.Array) []*array.Array { return []*array.Array{ops.Mul(in[0], ops.Mul(in[0], in[0]))} },
		JVP: func(p, tans []*array.Array) []*array.Array {
			return []*array.Array{ops.Mul(tans[0], ops.MulScalar(ops.Mul(p[0], p[0]), 6))}
		},
	})
	x := vec(-1, 0.5, 2)
	near(t, "grad from F", values(t, graph.Grad(sumOf(cube))(x)[0]), []float64{3, 0.75, 12}, 1e-12)
	_, jv := graph.JVP(cube, []*array.Array{x}, []*array.Array{vec(1, 1, 1)})
	near(t, "JVP from the rule", values(t, jv[0]), []float64{6, 1.5, 24}, 1e-12)

	m := array.FromSlice([]float64{1, 2, 3, 4}, 2, 2)
	batched := graph.Vmap(cube, nil, nil)
	near(t, "vmap forward", values(t, batched(m)[0]), []float64{1, 8, 27, 64}, 0)
	_, bj := graph.JVP(batched, []*array.Array{m}, []*array.Array{ops.OnesLike(m)})
	near(t, "JVP of vmap keeps the rule", values(t, bj[0]), []float64{6, 24, 54, 96}, 1e-12)
	near(t, "grad of vmap from F", values(t, graph.Grad(sumOf(batched))(m)[0]), []float64{3, 12, 27, 48}, 1e-12)
}

func TestCustomFunctionBadRules(t *testing.T) {
	id := func(in ...*array.Array) []*array.Array { return []*array.Array{ops.MulScalar(in[0], 1)} }
	x := vec(1, 2, 3)
	wantError(t, func() { graph.CustomFunction(graph.Custom{}) }, "graph.CustomFunction", "nil function")
	wantError(t, func() { graph.CustomFunction(graph.Custom{F: id})(nil) }, "graph.CustomFunction", "argument 0 is nil")
	badJVP := graph.CustomFunction(graph.Custom{F: id, JVP: func(_, _ []*array.Array) []*array.Array { return []*array.Array{vec(1)} }})
	wantError(t, func() { graph.JVP(badJVP, []*array.Array{x}, []*array.Array{x}) }, "graph.CustomFunction", "tangent of shape [1]", "output 0 of shape [3]")
	twoJVP := graph.CustomFunction(graph.Custom{F: id, JVP: func(_, t []*array.Array) []*array.Array { return []*array.Array{t[0], t[0]} }})
	wantError(t, func() { graph.JVP(twoJVP, []*array.Array{x}, []*array.Array{x}) }, "graph.CustomFunction", "2 tangents for 1 outputs")
	badVmap := graph.CustomFunction(graph.Custom{F: id, Vmap: func(in []*array.Array, _ []int) ([]*array.Array, []int) { return in, []int{5} }})
	wantError(t, func() { graph.Vmap(badVmap, nil, nil)(array.FromSlice([]float64{1, 2}, 2, 1)) }, "graph.CustomFunction", "axis 5")
	noVmap := graph.CustomFunction(graph.Custom{F: id, Vmap: func(in []*array.Array, _ []int) ([]*array.Array, []int) { return nil, nil }})
	wantError(t, func() { graph.Vmap(noVmap, nil, nil)(array.FromSlice([]float64{1, 2}, 2, 1)) }, "graph.CustomFunction", "0 outputs")
}

func init() {
	notOps["Identity"] = "creates an array from Go values"
	notOps["NumberOfElements"] = "a count of elements: no derivative"
}
