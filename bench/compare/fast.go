package main

import (
	"math"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// fastTasks are issue 23's rows for the fused primitives: attention
// forward, and forward with backward, at batch 8, 8 heads, sequence 512,
// head 64 (float32), against PyTorch 1.13's composition
// softmax(q·kᵀ·scale)·v (Debian's PyTorch predates
// F.scaled_dot_product_attention) and numpy's; and LayerNorm over 4096
// rows of 4096. workloads.py's build_fast builds the same. Attention
// counts 2·2·L·S·D flops a head forward and 7·2·L·S·D forward and
// backward (the backward recomputes the scores), LayerNorm the bytes of
// its input and output.
func fastTasks() []task {
	const b, h, l, d = 8, 8, 512, 64
	head := 2.0 * l * l * d * b * h
	qkv := func() (q, k, v, g *array.Array) {
		q, k, v, g = randF32(1, b, h, l, d), randF32(2, b, h, l, d), randF32(3, b, h, l, d), randF32(4, b, h, l, d)
		for _, x := range []*array.Array{q, k, v, g} {
			eval(x)
		}
		return q, k, v, g
	}
	scale := 1 / math.Sqrt(d)
	attn := func(in ...*array.Array) []*array.Array {
		return []*array.Array{ops.ScaledDotProductAttention(in[0], in[1], in[2], scale, nil, false)}
	}
	return []task{
		{name: "sdpa-fwd/8x8x512x64", flops: 2 * head, setup: func() func() {
			q, k, v, _ := qkv()
			return func() { eval(attn(q, k, v)[0]) }
		}},
		{name: "sdpa-fwd-bwd/8x8x512x64", flops: 7 * head, setup: func() func() {
			q, k, v, g := qkv()
			return func() {
				outs, vjps := graph.VJP(attn, []*array.Array{q, k, v}, []*array.Array{g})
				if err := array.Eval(append(outs, vjps...)...); err != nil {
					panic(err)
				}
			}
		}},
		{name: "layernorm/4096x4096", bytes: 2 * 4 * 4096 * 4096, setup: func() func() {
			x, w, bias := randF32(5, 4096, 4096), randF32(6, 4096), randF32(7, 4096)
			for _, a := range []*array.Array{x, w, bias} {
				eval(a)
			}
			return func() { eval(ops.LayerNorm(x, w, bias, 1e-5)) }
		}},
	}
}
