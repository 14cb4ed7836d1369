package bench

import (
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/internal/workload"
	"github.com/fathom-go/fathom/ops"
)

// BenchmarkMaxPool2D is issue 20's pooling workload: 2×2 windows, stride
// 2, on a 32×112×112×64 float32 batch (channels last). Pooling is memory
// bound, so it reports bytes moved: the input read and the output written
// forward; the input and the output gradient read and the input gradient
// written backward. The backward recomputes each window's maximum from
// the input, so it does not need the forward's result, and evaluating the
// VJP alone times the backward kernel.
func BenchmarkMaxPool2D(b *testing.B) {
	const n, h, w, c = 32, 112, 112, 64
	in := n * h * w * c
	out := in / 4
	x := array.FromSlice(workload.RandF32(in, 1), n, h, w, c)
	g := array.FromSlice(workload.RandF32(out, 2), n, h/2, w/2, c)
	pool := func(x *array.Array) *array.Array {
		return ops.MaxPool2D(x, [2]int{2, 2}, [2]int{2, 2}, [2]int{})
	}
	b.Run("forward", func(b *testing.B) {
		b.SetBytes(int64(4 * (in + out)))
		for b.Loop() {
			mustEval(b, pool(x))
		}
	})
	b.Run("backward", func(b *testing.B) {
		b.SetBytes(int64(4 * (2*in + out)))
		for b.Loop() {
			_, vjps := graph.VJP(func(in ...*array.Array) []*array.Array { return []*array.Array{pool(in[0])} },
				[]*array.Array{x}, []*array.Array{g})
			mustEval(b, vjps[0])
		}
	})
}
