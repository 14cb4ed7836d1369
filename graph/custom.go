package graph

import (
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
	g := p.vjp(inputs[:p.n], outputs, cots)
	if len(g) != p.n {
		array.Panicf("graph.CustomVJP", "the VJP function returned %d cotangents for %d primals", len(g), p.n)
	}
	res := make([]*array.Array, len(argnums))
	for k, j := range argnums {
		if j < p.n {
			res[k] = g[j]
		}
	}
	return res
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

// CustomVJP returns f with its reverse-mode derivative given by vjp, as
// MLX's custom_function does: use it for a numerically better gradient, or
// one that f's operations cannot express. Forward-mode derivatives (JVP)
// still differentiate f.
func CustomVJP(f Fn, vjp VJPFunc) Fn {
	return func(in ...*array.Array) []*array.Array {
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
	return CustomVJP(f, func(primals, _, cots []*array.Array) []*array.Array {
		_, vjps := VJP(f, primals, cots)
		return vjps
	})
}
