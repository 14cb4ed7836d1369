package bench

import (
	"math"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/internal/workload"
	"github.com/fathom-go/fathom/ops"
)

// BenchmarkScaledDotProductAttention is issue 23's attention workload:
// batch 8, 8 heads, 512 queries and keys, head size 64, float32. The
// forward pass is two products of 2·L·S·D flops a head; the backward
// recomputes the scores and adds four more, so forward and backward
// count 7·2·L·S·D a head (FlashAttention's accounting).
func BenchmarkScaledDotProductAttention(b *testing.B) {
	const bs, h, l, d = 8, 8, 512, 64
	n := bs * h * l * d
	q := array.FromSlice(workload.RandF32(n, 1), bs, h, l, d)
	k := array.FromSlice(workload.RandF32(n, 2), bs, h, l, d)
	v := array.FromSlice(workload.RandF32(n, 3), bs, h, l, d)
	g := array.FromSlice(workload.RandF32(n, 4), bs, h, l, d)
	scale := 1 / math.Sqrt(d)
	head := 2 * float64(l) * float64(l) * float64(d) * bs * h
	report := func(b *testing.B, products float64) {
		b.ReportMetric(products*head*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	}
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
			report(b, 2)
		})
		b.Run(name+"/forward+backward", func(b *testing.B) {
			for b.Loop() {
				outs, vjps := graph.VJP(attn, []*array.Array{q, k, v}, []*array.Array{g})
				if err := array.Eval(append(outs, vjps...)...); err != nil {
					b.Fatal(err)
				}
			}
			report(b, 7)
		})
	}
}

// BenchmarkLayerNorm normalises 4096 rows of 4096 float32 features with a
// weight and a bias: memory bound, so it reports the bytes read and
// written.
func BenchmarkLayerNorm(b *testing.B) {
	const rows, n = 4096, 4096
	x := array.FromSlice(workload.RandF32(rows*n, 1), rows, n)
	w := array.FromSlice(workload.RandF32(n, 2), n)
	bias := array.FromSlice(workload.RandF32(n, 3), n)
	b.SetBytes(2 * 4 * rows * n)
	for b.Loop() {
		mustEval(b, ops.LayerNorm(x, w, bias, 1e-5))
	}
}

// BenchmarkRMSNorm is BenchmarkLayerNorm's workload for RMSNorm.
func BenchmarkRMSNorm(b *testing.B) {
	const rows, n = 4096, 4096
	x := array.FromSlice(workload.RandF32(rows*n, 1), rows, n)
	w := array.FromSlice(workload.RandF32(n, 2), n)
	b.SetBytes(2 * 4 * rows * n)
	for b.Loop() {
		mustEval(b, ops.RMSNorm(x, w, 1e-5))
	}
}

// BenchmarkRoPE rotates all 128 features of a [8, 32, 512, 128] float32
// array (batch, heads, positions, features).
func BenchmarkRoPE(b *testing.B) {
	shape := []int{8, 32, 512, 128}
	n := 8 * 32 * 512 * 128
	x := array.FromSlice(workload.RandF32(n, 1), shape...)
	b.SetBytes(int64(2 * 4 * n))
	for b.Loop() {
		mustEval(b, ops.RoPE(x, 128, false, 10000, 1, 0))
	}
}
