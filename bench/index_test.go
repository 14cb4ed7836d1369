package bench

import (
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/workload"
	"github.com/fathom-go/fathom/ops"
)

// scatterIndices are 1M indices into 64K slots, each slot hit 16 times
// in a scattered order: (i * 40503) mod 65536, as bench/compare's numpy
// side builds them.
func scatterIndices(n, slots int) []int32 {
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(i * 40503 % slots)
	}
	return idx
}

// BenchmarkScatterAdd adds 1M float32 updates with duplicate indices into
// 64K slots (np.add.at's workload). Bytes count the updates and indices
// read.
func BenchmarkScatterAdd(b *testing.B) {
	const n, slots = 1 << 20, 1 << 16
	idx := array.FromSlice(scatterIndices(n, slots), n)
	upd := array.FromSlice(workload.RandF32(n, 1), n, 1)
	a := ops.Zeros([]int{slots}, array.Float32)
	mustEval(b, a)
	b.SetBytes(8 * n)
	for b.Loop() {
		mustEval(b, ops.ScatterAdd(a, []*array.Array{idx}, upd, []int{0}))
	}
}

// BenchmarkIndexRows gathers 4096 rows, in a scattered order, of a
// 4096x4096 float32 array (numpy's a[idx]). Bytes count the rows read
// and written.
func BenchmarkIndexRows(b *testing.B) {
	const n = 4096
	x := array.FromSlice(workload.RandF32(n*n, 1), n, n)
	rows := make([]int32, n)
	for i := range rows {
		rows[i] = int32(i * 1103 % n)
	}
	idx := array.FromSlice(rows, n)
	mustEval(b, x)
	b.SetBytes(2 * 4 * n * n)
	for b.Loop() {
		mustEval(b, ops.Index(x, idx))
	}
}
