package graph

import (
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// VJPFunc computes the cotangents of a function's inputs (one per primal,
// nil for zero) from its primals, its outputs and the cotangents of its
// outputs.
type VJPFunc func(primals, outputs, cotangents []*array.Array) []*array.Array

// custom is the primitive of a function with a user-supplied VJP. Its
// inputs are the primals followed by the function's outputs behind a
// StopGradient, so the reverse pass never walks into the function itself;
// its outputs are views of those.
type custom struct {
	f   Fn
	vjp VJPFunc
	n   int // number of primals
}

func (p *custom) Name() string { return "CustomVJP" }

func (p *custom) Eval(_ array.Stream, in, out []*array.Array) error {
	for i, o := range out {
		src := in[p.n+i]
		o.SetData(src.Storage(), src.Strides(), src.Offset())
	}
	return nil
}

func (p *custom) VJP(inputs, outputs, cots []*array.Array, argnums []int) []*array.Array {
	g := p.cotangents(inputs[:p.n], outputs, cots)
	res := make([]*array.Array, len(argnums))
	for k, j := range argnums {
		if j < p.n {
			res[k] = g[j]
		}
	}
	return res
}

// cotangents calls the user's VJP function and checks what it returns
// against the primals.
func (p *custom) cotangents(primals, outputs, cots []*array.Array) []*array.Array {
	g := p.vjp(primals, outputs, cots)
	if len(g) != p.n {
		array.Panicf("graph.CustomVJP", "the VJP function returned %d cotangents for %d primals", len(g), p.n)
	}
	for i, c := range g {
		if c != nil && !slices.Equal(c.Shape(), primals[i].Shape()) {
			array.Panicf("graph.CustomVJP", "the VJP function returned a cotangent of shape %v for primal %d of shape %v", c.Shape(), i, primals[i].Shape())
		}
	}
	return g
}

// JVP differentiates the function itself: only its reverse pass is custom.
func (p *custom) JVP(inputs, _, tangents []*array.Array, argnums []int) []*array.Array {
	primals := inputs[:p.n]
	full := make([]*array.Array, p.n)
	for k, j := range argnums {
		if j < p.n {
			full[j] = tangents[k]
		}
	}
	for i := range full {
		if full[i] == nil {
			full[i] = ops.ZerosLike(primals[i])
		}
	}
	_, jvps := JVP(p.f, primals, full)
	return jvps
}

// Vmap batches the function and its VJP function each with Vmap, so the
// batched function keeps the user's reverse pass. The batched outputs of
// f that the replay computed (the inputs after the primals) are not used:
// the batched function recomputes them.
func (p *custom) Vmap(inputs []*array.Array, axes []int) ([]*array.Array, []int) {
	n := p.n
	inAxes := make([]int, n)
	some := false
	for i := range inAxes {
		inAxes[i] = axes[i]
		if axes[i] < 0 {
			inAxes[i] = NoAxis
		} else {
			some = true
		}
	}
	if !some {
		// the function closes over a batched array: batching its
		// arguments alone would compute something else
		array.Panicf("graph.Vmap", "CustomVJP: a batched array reaches the function other than through its arguments; pass it as an argument")
	}
	m := len(inputs) - n
	vjp := func(primals, outputs, cots []*array.Array) []*array.Array {
		// per example: the primals on their own axes, the outputs and
		// their cotangents on axis 0, where the batched function put them
		one := func(xs ...*array.Array) []*array.Array {
			g := p.cotangents(xs[:n], xs[n:n+m], xs[n+m:])
			for i := range g {
				if g[i] == nil {
					g[i] = ops.ZerosLike(xs[i])
				}
			}
			return g
		}
		ax := append(slices.Clone(inAxes), make([]int, 2*m)...)
		args := append(append(slices.Clone(primals), outputs...), cots...)
		g := Vmap(one, ax, nil)(args...)
		for i := range g {
			if inAxes[i] == NoAxis {
				// an unbatched primal was used by every example
				g[i] = ops.Sum(g[i], 0)
			} else {
				g[i] = ops.MoveAxis(g[i], 0, inAxes[i])
			}
		}
		return g
	}
	outs := CustomVJP(Vmap(p.f, inAxes, nil), vjp)(inputs[:n]...)
	return outs, make([]int, len(outs))
}

// CustomVJP returns f with its reverse-mode derivative given by vjp, as
// MLX's custom_function does: use it for a numerically better gradient, or
// one that f's operations cannot express. Forward-mode derivatives (JVP)
// still differentiate f.
func CustomVJP(f Fn, vjp VJPFunc) Fn {
	if f == nil {
		array.Panicf("graph.CustomVJP", "nil function")
	}
	if vjp == nil {
		array.Panicf("graph.CustomVJP", "nil VJP function")
	}
	return func(in ...*array.Array) []*array.Array {
		checkNil("graph.CustomVJP", "argument", in)
		outs := callFn("graph.CustomVJP", f, in)
		inputs := append([]*array.Array(nil), in...)
		shapes := make([][]int, len(outs))
		dts := make([]array.DType, len(outs))
		for i, o := range outs {
			inputs = append(inputs, ops.StopGradient(o))
			shapes[i] = o.Shape()
			dts[i] = o.DType()
		}
		return array.NewMulti(array.CurrentStream(), shapes, dts, &custom{f: f, vjp: vjp, n: len(in)}, inputs...)
	}
}

// Checkpoint returns f rewritten to recompute its forward pass during the
// reverse pass instead of keeping its intermediates: the reverse graph
// holds only f's inputs and outputs, trading compute for memory.
func Checkpoint(f Fn) Fn {
	if f == nil {
		array.Panicf("graph.Checkpoint", "nil function")
	}
	return CustomVJP(f, func(primals, _, cots []*array.Array) []*array.Array {
		_, vjps := VJP(f, primals, cots)
		return vjps
	})
}
