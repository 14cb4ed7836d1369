package compile_test

import (
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/internal/workload"
	"github.com/fathom-go/fathom/ops"
)

// TestCompiledCallAllocations guards the cost of a small compiled call (a
// cache hit replaying 5 x tanh(x*w) on 16 elements, evaluation
// included), which allocated 28 times before the key, the replay and the
// interpreter kept their scratch on the stack or in pools, and allocates
// 6: the result's array, node, data and memory (two), and the slice Call
// returns. The bound leaves room for changes elsewhere, not for a return
// of the per-call copies; the race detector's sync.Pool, which drops a
// quarter of what it is given, stays under it.
func TestCompiledCallAllocations(t *testing.T) {
	f := compile.Compile(func(in ...*array.Array) []*array.Array {
		y := in[0]
		for range 5 {
			y = ops.Tanh(ops.Mul(y, in[1]))
		}
		return []*array.Array{y}
	})
	defer f.Release()
	x, w := array.FromSlice(workload.RandF32(16, 1), 16), array.FromSlice(workload.RandF32(16, 2), 16)
	call := func() {
		if err := f.Call(x, w)[0].Eval(); err != nil {
			t.Fatal(err)
		}
	}
	call() // traces
	const bound = 12
	if got := testing.AllocsPerRun(200, call); got > bound {
		t.Fatalf("a compiled call of 10 ops on 16 elements allocates %v times, want at most %d", got, bound)
	}
}
