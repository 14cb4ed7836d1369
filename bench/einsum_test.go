package bench

import (
	"fmt"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/workload"
	"github.com/fathom-go/fathom/ops"
)

// The speed goals for Einsum (issue 19): a batched matrix product through
// Einsum within 5% of the same MatMul, and a four-operand chain no slower
// than the best hand-ordered MatMuls. Each pair of sub-benchmarks runs the
// same arithmetic, so their GFLOP/s compare directly.

func randF32(seed uint64, shape ...int) *array.Array {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return array.FromSlice(workload.RandF32(n, seed), shape...)
}

func reportFLOPs(b *testing.B, flops float64) {
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkEinsumBatchedMatMul(b *testing.B) {
	for _, n := range []int{64, 256} {
		const batch = 16
		x, y := randF32(1, batch, n, n), randF32(2, batch, n, n)
		flops := 2 * float64(batch) * float64(n) * float64(n) * float64(n)
		b.Run(fmt.Sprintf("einsum/%dx%d", batch, n), func(b *testing.B) {
			for b.Loop() {
				mustEval(b, ops.Einsum("bij,bjk->bik", x, y))
			}
			reportFLOPs(b, flops)
		})
		b.Run(fmt.Sprintf("matmul/%dx%d", batch, n), func(b *testing.B) {
			for b.Loop() {
				mustEval(b, ops.MatMul(x, y))
			}
			reportFLOPs(b, flops)
		})
	}
}

// BenchmarkEinsumChain contracts A[i j] B[j k] C[k l] D[l m] with i, k, m
// = 512 and j, l = 16. Left to right costs three 512×16×512 products; the
// best order, A·(B·C)·D, one such product and two small ones. The
// GFLOP/s of every row count the best order's flops.
func BenchmarkEinsumChain(b *testing.B) {
	const big, small = 512, 16
	a, bb := randF32(1, big, small), randF32(2, small, big)
	c, d := randF32(3, big, small), randF32(4, small, big)
	flops := 2 * float64(small*big*small+big*small*small+big*small*big)
	for _, r := range []struct {
		name string
		f    func() *array.Array
	}{
		{"einsum", func() *array.Array { return ops.Einsum("ij,jk,kl,lm->im", a, bb, c, d) }},
		{"matmul-best", func() *array.Array { return ops.MatMul(ops.MatMul(a, ops.MatMul(bb, c)), d) }},
		{"matmul-left-to-right", func() *array.Array { return ops.MatMul(ops.MatMul(ops.MatMul(a, bb), c), d) }},
	} {
		b.Run(r.name, func(b *testing.B) {
			for b.Loop() {
				mustEval(b, r.f())
			}
			reportFLOPs(b, flops)
		})
	}
}
