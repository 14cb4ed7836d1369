package ops

import (
	"fmt"
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
)

// convWGradPrim is the cotangent of a convolution's weight: of x [N,
// ...in, C_in] and the output's cotangent g [N, ...out, C_out], the
// weight-shaped dw[co, k, ci] = Σ_{n, o} g[n, o, co]·x[n, o·stride +
// k·dilation − padding, group(co)·C_in/groups + ci], for the convolution
// with p. It is a product whose depth is the whole batch of output
// positions, which a convolution of x with g (what MLX builds) computes
// as a poor GEMM shape.
type convWGradPrim struct {
	p convParams
	// wshape is the weight's shape: the kernel's size is not implied by
	// x's and g's (a strided convolution leaves input unread).
	wshape [maxConvDims + 2]int
}

func (c *convWGradPrim) Name() string { return "ConvWeightGrad" }
func (c *convWGradPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(c, s, in, out)
}
func (c *convWGradPrim) evalCPU(in, out []*array.Array) error {
	return cpu.ConvWeightGrad(alloc(out[0]), bufOf(in[0]), bufOf(in[1]), c.p.cpu())
}
func (c *convWGradPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		return metal.ConvWeightGrad(o, viewOf(in[0]), viewOf(in[1]), metal.ConvParams(c.p.cpu()))
	})
}
func (c *convWGradPrim) Equivalent(o array.Primitive) bool { return sameParams(c, o) }

// OutputShapes checks the convolution's shape rule against the new
// input shapes and returns the weight's shape.
func (c *convWGradPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	ws := c.weightShape()
	gs, why := convShape(in[0].Shape(), ws, c.p)
	if why == "" && !slices.Equal(gs, in[1].Shape()) {
		why = fmt.Sprintf("the cotangent's shape %v is not the output's %v", in[1].Shape(), gs)
	}
	if why != "" {
		return nil, array.Errorf("ops.Conv", "%s", why)
	}
	return [][]int{ws}, nil
}

func (c *convWGradPrim) weightShape() []int { return slices.Clone(c.wshape[:c.p.nd+2]) }

// convWeightGrad records the weight's cotangent of conv(x, w) with p for
// a weight of shape ws and the output's cotangent g.
func convWeightGrad(x, g *array.Array, p convParams, ws []int) *array.Array {
	c := &convWGradPrim{p: p}
	copy(c.wshape[:], ws)
	dt := array.Promote(x.DType(), g.DType())
	return node(slices.Clone(ws), dt, c, AsType(x, dt), AsType(g, dt))
}

// VJP: dw is linear in x and in g. Against a cotangent h of dw,
// ⟨h, dw(x, g)⟩ = ⟨g, conv(x, h)⟩, so g's cotangent is conv(x, h) and
// x's is the input's cotangent of that convolution.
func (c *convWGradPrim) VJP(in, _, cots []*array.Array, argnums []int) []*array.Array {
	x, g, h := in[0], in[1], cots[0]
	out := make([]*array.Array, len(argnums))
	for i, j := range argnums {
		if j == 1 {
			out[i] = convNode("ops.Conv", x, h, c.p)
			continue
		}
		out[i] = (&convPrim{p: c.p}).VJP([]*array.Array{x, h}, nil, []*array.Array{g}, []int{0})[0]
	}
	return out
}

// JVP: the sum of the weight cotangents of each tangent with the other
// operand.
func (c *convWGradPrim) JVP(in, _, tans []*array.Array, argnums []int) []*array.Array {
	var out *array.Array
	ws := c.weightShape()
	for i, j := range argnums {
		var t *array.Array
		if j == 0 {
			t = convWeightGrad(tans[i], in[1], c.p, ws)
		} else {
			t = convWeightGrad(in[0], tans[i], c.p, ws)
		}
		if out == nil {
			out = t
		} else {
			out = Add(out, t)
		}
	}
	return []*array.Array{out}
}

// Vmap folds the batch into the channel groups: batch element b of x's
// channels and of g's become groups of their own, so one product of
// B·groups groups computes every element's dw, [B·C_out, kernel...,
// C_in/groups], which splits into [B, C_out, ...].
func (c *convWGradPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	x, g := batchFront(in[0], axes[0]), batchFront(in[1], axes[1])
	b := 0
	if axes[0] >= 0 {
		b = x.Shape()[0]
	} else {
		b = g.Shape()[0]
	}
	if axes[0] < 0 {
		x = BroadcastTo(ExpandDims(x, 0), append([]int{b}, x.Shape()...)...)
	}
	if axes[1] < 0 {
		g = BroadcastTo(ExpandDims(g, 0), append([]int{b}, g.Shape()...)...)
	}
	// [B, N, ...sp, C] -> [N, ...sp, B·C]
	fold := func(a *array.Array) *array.Array {
		s := a.Shape()
		a = MoveAxis(a, 0, len(s)-2)
		return Reshape(a, append(slices.Clone(s[1:len(s)-1]), b*s[len(s)-1])...)
	}
	p := c.p
	p.groups *= b
	ws := c.weightShape()
	fws := append([]int{b * ws[0]}, ws[1:]...)
	if b == 0 {
		return []*array.Array{Zeros(append([]int{0}, ws...), array.Promote(x.DType(), g.DType()))}, []int{0}
	}
	dw := convWeightGrad(fold(x), fold(g), p, fws)
	return []*array.Array{Reshape(dw, append([]int{b}, ws...)...)}, []int{0}
}
