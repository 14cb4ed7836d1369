package graph_test

import (
	"math"
	"runtime"
	"testing"
	"weak"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// These tests are not parallel: while any transform runs, on any
// goroutine, evaluated tracers keep their graphs (see array.BeginTrace).

// watched makes intermediates and keeps weak pointers to them.
type watched struct{ refs []weak.Pointer[array.Array] }

func (w *watched) keep(a *array.Array) *array.Array {
	w.refs = append(w.refs, weak.Make(a))
	return a
}

// alive counts the watched arrays that are still reachable after a full
// collection.
func (w *watched) alive() int {
	runtime.GC()
	n := 0
	for _, r := range w.refs {
		if r.Value() != nil {
			n++
		}
	}
	return n
}

// f is sum(exp(tanh(x)^2)), its intermediates watched.
func (w *watched) f(in ...*array.Array) *array.Array {
	h := w.keep(ops.Tanh(in[0]))
	s := w.keep(ops.Mul(h, h))
	return ops.Sum(w.keep(ops.Exp(s)))
}

// fGrad is the derivative of f: exp(tanh^2) * 2 tanh * (1 - tanh^2).
func fGrad(x []float64) []float64 {
	return mapF(x, func(v float64) float64 {
		th := math.Tanh(v)
		return math.Exp(th*th) * 2 * th * (1 - th*th)
	})
}

func TestGradReleasesIntermediates(t *testing.T) {
	var w watched
	xs := values(t, seq(6, 1, 2, 3))
	x := array.FromSlice(xs, 2, 3)
	g := graph.Grad(w.f)(x)[0]
	if w.alive() == 0 {
		t.Fatal("no intermediate alive before the gradient is evaluated, yet its rules need some: the check would prove nothing")
	}
	near(t, "gradient", values(t, g), fGrad(xs), 1e-12)

	// the gradient still exists, but evaluating it detached its graph
	if g.Primitive() != nil || g.Inputs() != nil {
		t.Fatal("the evaluated gradient still has its node")
	}
	if n := w.alive(); n != 0 {
		t.Fatalf("%d intermediates of f still reachable from the evaluated gradient", n)
	}
	near(t, "gradient read again", values(t, g), fGrad(xs), 1e-12)
	runtime.KeepAlive(g)
}

func TestValueAndGradReleasesIntermediates(t *testing.T) {
	var w watched
	xs := []float64{0.1, -0.7, 1.2}
	v, g := graph.ValueAndGrad(w.f)(vec(xs...))
	if err := array.Eval(v, g[0]); err != nil {
		t.Fatal(err)
	}
	if v.Primitive() != nil || g[0].Primitive() != nil {
		t.Fatal("evaluated value or gradient still has its node")
	}
	if n := w.alive(); n != 0 {
		t.Fatalf("%d intermediates still reachable after value and gradient were evaluated", n)
	}
	want := 0.0
	for _, x := range xs {
		want += math.Exp(math.Tanh(x) * math.Tanh(x))
	}
	near(t, "value", values(t, v), []float64{want}, 1e-12)
	near(t, "gradient", values(t, g[0]), fGrad(xs), 1e-12)
}

func TestDroppedGradientReleasesEverything(t *testing.T) {
	var w watched
	var gw weak.Pointer[array.Array]
	func() {
		g := graph.Grad(w.f)(vec(1, 2, 3))[0]
		gw = weak.Make(g)
		if err := g.Eval(); err != nil {
			t.Fatal(err)
		}
	}()
	if n := w.alive(); n != 0 {
		t.Fatalf("%d intermediates alive after the gradient was dropped", n)
	}
	if gw.Value() != nil {
		t.Fatal("the dropped gradient is still reachable")
	}

	// dropped without ever being evaluated: the pending graph goes too
	func() { graph.Grad(w.f)(vec(1, 2, 3)) }()
	if n := w.alive(); n != 0 {
		t.Fatalf("%d intermediates alive after an unevaluated gradient was dropped", n)
	}
}

func TestTracersKeepGraphInsideTransform(t *testing.T) {
	// f reads an intermediate on the host in the middle of the transform:
	// the tracer keeps its node so the reverse pass can still walk it
	var inside []bool
	f := func(in ...*array.Array) *array.Array {
		h := ops.Tanh(in[0])
		if err := h.Eval(); err != nil {
			t.Fatal(err)
		}
		inside = append(inside, h.Primitive() != nil)
		return ops.Sum(ops.Mul(h, in[0]))
	}
	xs := []float64{0.5, -1}
	g := graph.Grad(f)(vec(xs...))[0]
	if len(inside) != 1 || !inside[0] {
		t.Fatal("an evaluated tracer lost its node while the transform ran")
	}
	near(t, "gradient", values(t, g), mapF(xs, func(v float64) float64 {
		th := math.Tanh(v)
		return (1-th*th)*v + th
	}), 1e-12)
	if g.Primitive() != nil {
		t.Fatal("the gradient evaluated after the transform kept its node")
	}

	// an ordinary array evaluated inside a transform is detached as usual
	var kept bool
	graph.Grad(func(in ...*array.Array) *array.Array {
		c := ops.Exp(vec(1))
		if err := c.Eval(); err != nil {
			t.Fatal(err)
		}
		kept = c.Primitive() != nil
		return ops.Sum(in[0])
	})(vec(1))
	if kept {
		t.Fatal("a constant evaluated inside a transform kept its node")
	}
}

func TestJVPAndVmapReleaseIntermediates(t *testing.T) {
	var w watched
	f := func(in ...*array.Array) []*array.Array { return []*array.Array{w.f(in...)} }
	_, jvps := graph.JVP(f, []*array.Array{vec(0.5, 1)}, []*array.Array{vec(1, 1)})
	if err := jvps[0].Eval(); err != nil {
		t.Fatal(err)
	}
	if n := w.alive(); n != 0 {
		t.Fatalf("JVP: %d intermediates alive after the tangent was evaluated", n)
	}
	runtime.KeepAlive(jvps)

	// Vmap's trace on stand-ins is dropped once it has been replayed
	w = watched{}
	out := graph.Vmap(f, nil, nil)(seq(6, 1, 3, 2))[0]
	if n := w.alive(); n != 0 {
		t.Fatalf("Vmap: %d traced intermediates alive after the call returned", n)
	}
	if err := out.Eval(); err != nil {
		t.Fatal(err)
	}

	// Vmap of Grad: per-example gradients
	w = watched{}
	pg := graph.Vmap(graph.Grad(w.f), nil, nil)(seq(6, 1, 3, 2))[0]
	if n := w.alive(); n != 0 {
		t.Fatalf("Vmap of Grad: %d traced intermediates alive after the call returned", n)
	}
	near(t, "per-example gradients", values(t, pg), fGrad(values(t, seq(6, 1, 3, 2))), 1e-12)
}
