package bench

import (
	"math"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// BenchmarkScaledDotProductAttention is issue 23's attention workload:
// batch 8, 8 heads, 512 queries and keys, head size 64, float32. The
// forward pass is two products of 2·L·S·D flops a head; the backward
// recomputes the scores and adds four more, so forward and backward
// count 7·2·L·S·D a head (FlashAttention's accounting).
func BenchmarkScaledDotProductAttention(b *testing.B) {
	const bs, h, l, d = 8, 8, 512, 64
	q, k, v, g := randF32(1, bs, h, l, d), randF32(2, bs, h, l, d), randF32(3, bs, h, l, d), randF32(4, bs, h, l, d)
	scale := 1 / math.Sqrt(d)
	head := 2 * float64(l) * float64(l) * float64(d) * bs * h
	for _, causal := range []bool{false, true} {
		name := "full"
		if causal {
			name = "causal"
		}
		attn := func(in ...*array.Array) []*array.Array {
			return []*array.Array{ops.ScaledDotProductAttention(in[0], in[1], in[2], scale, nil, causal)}
		}
		b.Run(name+"/forward", func(b *testing.B) {
			for b.Loop() {
				mustEval(b, attn(q, k, v)[0])
			}
			reportFLOPs(b, 2*head)
		})
		b.Run(name+"/forward+backward", func(b *testing.B) {
			for b.Loop() {
				outs, vjps := graph.VJP(attn, []*array.Array{q, k, v}, []*array.Array{g})
				if err := array.Eval(append(outs, vjps...)...); err != nil {
					b.Fatal(err)
				}
			}
			reportFLOPs(b, 7*head)
		})
	}
}

// BenchmarkLayerNorm normalises 4096 rows of 4096 float32 features with a
// weight and a bias: memory bound, so it reports the bytes read and
// written.
func BenchmarkLayerNorm(b *testing.B) {
	const rows, n = 4096, 4096
	x, w, bias := randF32(1, rows, n), randF32(2, n), randF32(3, n)
	b.SetBytes(2 * 4 * rows * n)
	for b.Loop() {
		mustEval(b, ops.LayerNorm(x, w, bias, 1e-5))
	}
}

// BenchmarkRMSNorm is BenchmarkLayerNorm's workload for RMSNorm.
func BenchmarkRMSNorm(b *testing.B) {
	const rows, n = 4096, 4096
	x, w := randF32(1, rows, n), randF32(2, n)
	b.SetBytes(2 * 4 * rows * n)
	for b.Loop() {
		mustEval(b, ops.RMSNorm(x, w, 1e-5))
	}
}

// BenchmarkRoPE rotates all 128 features of a [8, 32, 512, 128] float32
// array (batch, heads, positions, features).
func BenchmarkRoPE(b *testing.B) {
	x := randF32(1, 8, 32, 512, 128)
	b.SetBytes(int64(2 * 4 * x.Size()))
	for b.Loop() {
		mustEval(b, ops.RoPE(x, 128, false, 10000, 1, 0))
	}
}
