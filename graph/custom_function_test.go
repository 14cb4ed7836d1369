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
	wrongShape := graph.CustomFunction(graph.Custom{F: id, Vmap: func(in []*array.Array, _ []int) ([]*array.Array, []int) {
		return []*array.Array{ops.Sum(in[0], 1)}, []int{0}
	}})
	wantError(t, func() { graph.Vmap(wrongShape, nil, nil)(array.FromSlice([]float64{1, 2, 3, 4}, 2, 2)) },
		"graph.CustomFunction", "output 0 of shape [2]", "each example has shape []", "want [2]")
	noVmap := graph.CustomFunction(graph.Custom{F: id, Vmap: func(in []*array.Array, _ []int) ([]*array.Array, []int) { return nil, nil }})
	wantError(t, func() { graph.Vmap(noVmap, nil, nil)(array.FromSlice([]float64{1, 2}, 2, 1)) }, "graph.CustomFunction", "0 outputs")
}

// sinExp is F(x, y) = (x·sin y, e^x·y) with each rule written by hand, so
// that the finite-difference table checks the rules themselves.
func sinExp(withVJP, withJVP, withVmap bool) graph.Custom {
	f := func(in ...*array.Array) []*array.Array {
		x, y := in[0], in[1]
		return []*array.Array{ops.Mul(x, ops.Sin(y)), ops.Mul(ops.Exp(x), y)}
	}
	c := graph.Custom{F: f}
	if withVJP {
		c.VJP = func(p, _, cots []*array.Array) []*array.Array {
			x, y := p[0], p[1]
			ex := ops.Exp(x)
			return []*array.Array{
				ops.Add(ops.Mul(cots[0], ops.Sin(y)), ops.Mul(cots[1], ops.Mul(ex, y))),
				ops.Add(ops.Mul(cots[0], ops.Mul(x, ops.Cos(y))), ops.Mul(cots[1], ex)),
			}
		}
	}
	if withJVP {
		c.JVP = func(p, tans []*array.Array) []*array.Array {
			x, y := p[0], p[1]
			ex := ops.Exp(x)
			return []*array.Array{
				ops.Add(ops.Mul(tans[0], ops.Sin(y)), ops.Mul(tans[1], ops.Mul(x, ops.Cos(y)))),
				ops.Add(ops.Mul(tans[0], ops.Mul(ex, y)), ops.Mul(tans[1], ex)),
			}
		}
	}
	if withVmap {
		// F is elementwise: line every batched input's batch axis up at
		// the front, give unbatched ones a size-1 axis there, and
		// broadcasting does the rest
		c.Vmap = func(in []*array.Array, axes []int) ([]*array.Array, []int) {
			front := make([]*array.Array, len(in))
			for i, a := range in {
				if axes[i] == graph.NoAxis {
					front[i] = ops.ExpandDims(a, 0)
				} else {
					front[i] = ops.MoveAxis(a, axes[i], 0)
				}
			}
			return f(front...), []int{0, 0}
		}
	}
	return c
}

// combine makes one array of a custom function's two outputs in a way
// that needs both cotangents.
func combine(g graph.Fn) func(xs ...*array.Array) *array.Array {
	return func(xs ...*array.Array) *array.Array {
		o := g(xs...)
		return ops.Add(o[0], ops.Mul(o[1], o[0]))
	}
}

var _ = register(
	gradCase{op: "graph.CustomFunction", name: "VJP, JVP and Vmap rules",
		f:    combine(graph.CustomFunction(sinExp(true, true, true))),
		args: []arg{{shape: []int{2, 3}}, {shape: []int{2, 3}}}},
	gradCase{op: "graph.CustomFunction", name: "JVP rule only",
		f:    combine(graph.CustomFunction(sinExp(false, true, false))),
		args: []arg{{shape: []int{3}}, {shape: []int{3}}}},
	gradCase{op: "graph.CustomFunction", name: "Vmap rule only, a fixed argument",
		f:    combine(graph.CustomFunction(sinExp(false, false, true))),
		args: []arg{{shape: []int{2, 2}}, {fixed: array.FromSlice([]float64{0.5, -1, 2, 0.25}, 2, 2)}}},
	gradCase{op: "graph.CustomVJP", name: "two outputs",
		f:    combine(graph.CustomVJP(sinExp(true, false, false).F, sinExp(true, false, false).VJP)),
		args: []arg{{shape: []int{2, 3}}, {shape: []int{2, 3}}}},
	gradCase{op: "graph.Checkpoint", name: "two outputs",
		f:    combine(graph.Checkpoint(sinExp(false, false, false).F)),
		args: []arg{{shape: []int{3, 2}}, {shape: []int{3, 2}}}},
)

// TestCustomRulesAreUsed makes the finite-difference rows above mean
// something: a deliberately wrong rule must change what each transform
// gives, so the rows cannot pass by going through F.
func TestCustomRulesAreUsed(t *testing.T) {
	x, y := vec(0.5, -1), vec(2, 0.25)
	wrong := sinExp(true, true, true)
	wrong.VJP = func(p, _, _ []*array.Array) []*array.Array {
		return []*array.Array{ops.ZerosLike(p[0]), ops.ZerosLike(p[1])}
	}
	wrong.JVP = func(p, _ []*array.Array) []*array.Array {
		return []*array.Array{ops.ZerosLike(p[0]), ops.ZerosLike(p[1])}
	}
	wrong.Vmap = func(in []*array.Array, axes []int) ([]*array.Array, []int) {
		return []*array.Array{ops.ZerosLike(in[0]), ops.ZerosLike(in[1])}, axes
	}
	g := graph.CustomFunction(wrong)
	_, vjps := graph.VJP(g, []*array.Array{x, y}, []*array.Array{vec(1, 1), vec(1, 1)})
	near(t, "VJP from the rule", values(t, vjps[0]), []float64{0, 0}, 0)
	_, jvps := graph.JVP(g, []*array.Array{x, y}, []*array.Array{vec(1, 1), vec(1, 1)})
	near(t, "JVP from the rule", values(t, jvps[1]), []float64{0, 0}, 0)
	out := graph.Vmap(g, nil, nil)(array.FromSlice([]float64{1, 2}, 2, 1), array.FromSlice([]float64{3, 4}, 2, 1))
	near(t, "Vmap from the rule", values(t, out[0]), []float64{0, 0}, 0)
}
