package graph_test

import (
	"runtime"
	"testing"
	"weak"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// clippedSquare is x*x whose reverse-mode gradient is clipped to [-1, 1].
var clippedSquare = graph.CustomVJP(
	func(in ...*array.Array) []*array.Array { return []*array.Array{ops.Mul(in[0], in[0])} },
	func(primals, _, cots []*array.Array) []*array.Array {
		g := ops.Mul(ops.MulScalar(primals[0], 2), cots[0])
		return []*array.Array{ops.MinimumScalar(ops.MaximumScalar(g, -1), 1)}
	})

func sumOf(f graph.Fn) func(in ...*array.Array) *array.Array {
	return func(in ...*array.Array) *array.Array { return ops.Sum(f(in...)[0]) }
}

func TestCustomVJPReplacesGradient(t *testing.T) {
	xs := []float64{-2, -0.25, 0.3, 3}
	x := vec(xs...)
	square := mapF(xs, func(v float64) float64 { return v * v })
	twice := mapF(xs, func(v float64) float64 { return 2 * v })

	near(t, "forward, outside any transform", values(t, clippedSquare(x)[0]), square, 0)
	v, g := graph.ValueAndGrad(sumOf(clippedSquare))(x)
	near(t, "value", values(t, v), []float64{4 + 0.0625 + 0.09 + 9}, 1e-12)
	near(t, "clipped gradient", values(t, g[0]), []float64{-1, -0.5, 0.6, 1}, 1e-12)

	outs, vjps := graph.VJP(clippedSquare, []*array.Array{x}, []*array.Array{vec(0.1, 1, 1, -0.1)})
	near(t, "VJP outputs", values(t, outs[0]), square, 0)
	near(t, "VJP", values(t, vjps[0]), []float64{-0.4, -0.5, 0.6, -0.6}, 1e-12)

	// forward mode differentiates the function itself: no clipping
	outs, jvps := graph.JVP(clippedSquare, []*array.Array{x}, []*array.Array{vec(1, 1, 1, 1)})
	near(t, "JVP outputs", values(t, outs[0]), square, 0)
	near(t, "JVP", values(t, jvps[0]), twice, 1e-12)
}

func TestCustomVJPSeveralInputsAndOutputs(t *testing.T) {
	// f(x, y) = (x*y, x+y); the custom VJP gives x the cotangent of the
	// first output times the second output and y nothing (nil)
	var seen []*array.Array
	f := graph.CustomVJP(
		func(in ...*array.Array) []*array.Array {
			return []*array.Array{ops.Mul(in[0], in[1]), ops.Add(in[0], in[1])}
		},
		func(primals, outputs, cots []*array.Array) []*array.Array {
			seen = outputs
			return []*array.Array{ops.Mul(outputs[1], cots[0]), nil}
		})
	x, y := vec(1, 2), vec(3, -5)
	outs, vjps := graph.VJP(f, []*array.Array{x, y}, []*array.Array{vec(2, 10), vec(100, 100)})
	near(t, "output 0", values(t, outs[0]), []float64{3, -10}, 0)
	near(t, "output 1", values(t, outs[1]), []float64{4, -3}, 0)
	near(t, "VJP function saw the outputs", values(t, seen[1]), []float64{4, -3}, 0)
	arraytest.AssertClose(t, arrayOf(array.Float64, []int{2}, []float64{8, -30}), vjps[0], tol12, "d/dx")
	arraytest.AssertClose(t, arrayOf(array.Float64, []int{2}, []float64{0, 0}), vjps[1], tol12, "nil cotangent")

	// a loss that uses output 1 only: output 0's cotangent is zero
	loss := func(in ...*array.Array) *array.Array { return ops.Sum(f(in...)[1]) }
	g := graph.Grad(loss, 0, 1)(x, y)
	near(t, "zero cotangent for the unused output", values(t, g[0]), []float64{0, 0}, 0)
}

func TestCustomVJPBadVJPFunction(t *testing.T) {
	id := func(in ...*array.Array) []*array.Array { return []*array.Array{ops.MulScalar(in[0], 1)} }
	tooMany := graph.CustomVJP(id, func(p, _, c []*array.Array) []*array.Array { return []*array.Array{c[0], c[0]} })
	wrongShape := graph.CustomVJP(id, func(p, _, c []*array.Array) []*array.Array { return []*array.Array{ops.Sum(c[0])} })
	x := vec(1, 2, 3)
	wantError(t, func() { graph.Grad(sumOf(tooMany))(x) }, "graph.CustomVJP", "2 cotangents for 1 primals")
	wantError(t, func() { graph.Grad(sumOf(wrongShape))(x) }, "graph.CustomVJP", "shape []", "primal 0 of shape [3]")
	wantError(t, func() { tooMany(nil) }, "graph.CustomVJP", "argument 0 is nil")
	none := graph.CustomVJP(func(...*array.Array) []*array.Array { return nil }, func(_, _, c []*array.Array) []*array.Array { return c })
	wantError(t, func() { none(x) }, "graph.CustomVJP", "no arrays")
}

func TestCustomVJPHigherOrder(t *testing.T) {
	// a custom VJP built from operations is itself differentiable: the
	// exact gradient 3x^2 of x^3 written by hand gives the second
	// derivative 6x
	c := graph.CustomVJP(
		func(in ...*array.Array) []*array.Array { return []*array.Array{cube(in[0])} },
		func(primals, _, cots []*array.Array) []*array.Array {
			x := primals[0]
			return []*array.Array{ops.Mul(ops.MulScalar(ops.Mul(x, x), 3), cots[0])}
		})
	xs := []float64{-1, 0.5, 2}
	d := func(in ...*array.Array) *array.Array { return ops.Sum(graph.Grad(sumOf(c))(in[0])[0]) }
	near(t, "second derivative", values(t, graph.Grad(d)(vec(xs...))[0]), mapF(xs, func(v float64) float64 { return 6 * v }), 1e-12)
}

// block is a small two-argument computation with intermediates that its
// reverse pass needs.
func block(in ...*array.Array) []*array.Array {
	x, w := in[0], in[1]
	h := ops.Tanh(ops.Mul(x, w))
	return []*array.Array{ops.Mul(ops.Exp(h), w), ops.Sum(ops.Mul(h, h))}
}

func TestCheckpointSameDerivatives(t *testing.T) {
	x, w := seq(6, 1, 2, 3), seq(3, 0.7, 3)
	loss := func(f graph.Fn) func(in ...*array.Array) *array.Array {
		return func(in ...*array.Array) *array.Array {
			outs := f(in...)
			return ops.Add(ops.Sum(ops.Mul(outs[0], outs[0])), outs[1])
		}
	}
	plain, ckpt := graph.ValueAndGrad(loss(block), 0, 1), graph.ValueAndGrad(loss(graph.Checkpoint(block)), 0, 1)
	v0, g0 := plain(x, w)
	v1, g1 := ckpt(x, w)
	near(t, "value", values(t, v1), values(t, v0), 1e-12)
	near(t, "d/dx", values(t, g1[0]), values(t, g0[0]), 1e-12)
	near(t, "d/dw", values(t, g1[1]), values(t, g0[1]), 1e-12)

	// forward mode
	tx, tw := seq(6, 0.3, 2, 3), seq(3, -0.2, 3)
	_, j0 := graph.JVP(block, []*array.Array{x, w}, []*array.Array{tx, tw})
	_, j1 := graph.JVP(graph.Checkpoint(block), []*array.Array{x, w}, []*array.Array{tx, tw})
	for i := range j0 {
		near(t, "JVP", values(t, j1[i]), values(t, j0[i]), 1e-12)
	}

	// second order: the recomputation is differentiable too
	hess := func(f graph.Fn) *array.Array {
		d := func(in ...*array.Array) *array.Array { return ops.Sum(graph.Grad(loss(f), 1)(in...)[0]) }
		return graph.Grad(d, 1)(x, w)[0]
	}
	near(t, "second order", values(t, hess(graph.Checkpoint(block))), values(t, hess(block)), 1e-10)

	// nested checkpoints
	twice := graph.Checkpoint(func(in ...*array.Array) []*array.Array {
		outs := graph.Checkpoint(block)(in...)
		return []*array.Array{ops.Exp(outs[0]), outs[1]}
	})
	once := func(in ...*array.Array) []*array.Array {
		outs := block(in...)
		return []*array.Array{ops.Exp(outs[0]), outs[1]}
	}
	g2 := graph.Grad(loss(twice), 0, 1)(x, w)
	g3 := graph.Grad(loss(once), 0, 1)(x, w)
	near(t, "nested d/dx", values(t, g2[0]), values(t, g3[0]), 1e-12)
	near(t, "nested d/dw", values(t, g2[1]), values(t, g3[1]), 1e-12)
}

// traceIntermediate runs VJP of f (Checkpoint(block) or block) with a
// weak pointer to the first intermediate that block makes, evaluates and
// drops the outputs, collects garbage, and returns whether the
// intermediate is still reachable and the VJPs.
func traceIntermediate(t *testing.T, wrap func(graph.Fn) graph.Fn) (bool, []*array.Array) {
	t.Helper()
	var ref weak.Pointer[array.Array]
	traced := false
	f := func(in ...*array.Array) []*array.Array {
		x, w := in[0], in[1]
		h := ops.Tanh(ops.Mul(x, w))
		if !traced {
			ref, traced = weak.Make(h), true
		}
		// Mul's rule multiplies the cotangent by the other factor: h
		return []*array.Array{ops.Sum(ops.Mul(ops.Mul(h, h), w))}
	}
	x, w := seq(6, 1, 2, 3), seq(3, 0.7, 3)
	outs, vjps := graph.VJP(wrap(f), []*array.Array{x, w}, []*array.Array{array.Scalar(1.0)})
	if err := outs[0].Eval(); err != nil {
		t.Fatal(err)
	}
	outs = nil
	runtime.GC()
	return ref.Value() != nil, vjps
}

func TestCheckpointDropsForwardIntermediates(t *testing.T) {
	id := func(f graph.Fn) graph.Fn { return f }
	alive, want := traceIntermediate(t, id)
	if !alive {
		t.Fatal("without Checkpoint the VJPs should hold the intermediate their rules need")
	}
	alive, got := traceIntermediate(t, graph.Checkpoint)
	if alive {
		t.Fatal("with Checkpoint the VJPs still reference the forward pass's intermediate")
	}
	for i := range got {
		near(t, "VJP after the intermediate was collected", values(t, got[i]), values(t, want[i]), 1e-12)
	}
}

func TestVmapOfCustomVJP(t *testing.T) {
	xs := seq(8, 2, 4, 2)
	sq := mapF(values(t, xs), func(v float64) float64 { return v * v })
	clip := mapF(values(t, xs), func(v float64) float64 { return max(-1, min(1, 2*v)) })

	// the batched function computes the same forward values
	near(t, "forward", values(t, graph.Vmap(clippedSquare, nil, nil)(xs)[0]), sq, 0)
	near(t, "forward, batch on axis 1", values(t, graph.Vmap(clippedSquare, []int{1}, []int{1})(ops.Transpose(xs))[0]), values(t, ops.Transpose(array.FromSlice(sq, 4, 2))), 0)

	// the gradient of a batched custom function keeps the custom rule
	loss := func(in ...*array.Array) *array.Array { return ops.Sum(graph.Vmap(clippedSquare, nil, nil)(in[0])[0]) }
	near(t, "grad of vmap", values(t, graph.Grad(loss)(xs)[0]), clip, 1e-12)
	lossT := func(in ...*array.Array) *array.Array {
		return ops.Sum(graph.Vmap(clippedSquare, []int{1}, nil)(in[0])[0])
	}
	near(t, "grad of vmap, batch on axis 1", values(t, graph.Grad(lossT)(ops.Transpose(xs))[0]), values(t, ops.Transpose(array.FromSlice(clip, 4, 2))), 1e-12)

	// per-example gradients of the custom function
	near(t, "vmap of grad", values(t, graph.Vmap(graph.Grad(sumOf(clippedSquare)), nil, nil)(xs)[0]), clip, 1e-12)

	// an unbatched argument's cotangent sums over the batch
	scaled := graph.CustomVJP(
		func(in ...*array.Array) []*array.Array { return []*array.Array{ops.Mul(in[0], in[1])} },
		func(p, _, c []*array.Array) []*array.Array {
			return []*array.Array{ops.Mul(c[0], p[1]), ops.MulScalar(ops.Mul(c[0], p[0]), 10)}
		})
	w := vec(1, -2)
	wloss := func(in ...*array.Array) *array.Array {
		return ops.Sum(graph.Vmap(scaled, []int{0, graph.NoAxis}, nil)(in[0], in[1])[0])
	}
	g := graph.Grad(wloss, 0, 1)(xs, w)
	near(t, "batched argument", values(t, g[0]), values(t, ops.BroadcastTo(w, 4, 2)), 1e-12)
	near(t, "unbatched argument", values(t, g[1]), values(t, ops.MulScalar(ops.Sum(xs, 0), 10)), 1e-12)

	// Checkpoint under Vmap
	x3, w3 := seq(18, 1, 3, 2, 3), seq(3, 0.7, 3)
	for j, o := range graph.Vmap(graph.Checkpoint(block), []int{0, graph.NoAxis}, nil)(x3, w3) {
		near(t, "vmap of checkpoint", values(t, o), values(t, graph.Vmap(block, []int{0, graph.NoAxis}, nil)(x3, w3)[j]), 1e-12)
	}
}
