package main

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/workload"
	"github.com/fathom-go/fathom/ops"
)

// indexTasks are issue 19's speed rows: ScatterAdd of 1M float32 updates
// with repeated indices (np.add.at), integer-array indexing of a
// 4096x4096 array (numpy's fancy indexing), and Einsum against the
// MatMuls it should become. workloads.py builds the same inputs.
func indexTasks() []task {
	const n, slots = 1 << 20, 1 << 16
	const rows = 4096
	const batch, bm = 16, 256
	const big, small = 512, 16
	bmmFlops := 2 * float64(batch) * bm * bm * bm
	// The best order, A·(B·C)·D: the flops every chain row counts.
	chainFlops := 2 * float64(small*big*small+big*small*small+big*small*big)
	chain := func() (a, b, c, d *array.Array) {
		a, b = randF32(1, big, small), randF32(2, small, big)
		c, d = randF32(3, big, small), randF32(4, small, big)
		for _, x := range []*array.Array{a, b, c, d} {
			eval(x)
		}
		return a, b, c, d
	}
	bmm := func() (x, y *array.Array) {
		x, y = randF32(1, batch, bm, bm), randF32(2, batch, bm, bm)
		eval(x)
		eval(y)
		return x, y
	}
	return []task{
		{name: "scatter-add/1M", bytes: 8 * n, setup: func() func() {
			idx := make([]int32, n)
			for i := range idx {
				idx[i] = int32(i * 40503 % slots)
			}
			ix := array.FromSlice(idx, n)
			upd := array.FromSlice(workload.RandF32(n, 1), n, 1)
			a := ops.Zeros([]int{slots}, array.Float32)
			eval(ix)
			eval(upd)
			eval(a)
			return func() { eval(ops.ScatterAdd(a, []*array.Array{ix}, upd, []int{0})) }
		}},
		{name: "index-rows/16M", bytes: 2 * 4 * rows * rows, setup: func() func() {
			x := randF32(1, rows, rows)
			r := make([]int32, rows)
			for i := range r {
				r[i] = int32(i * 1103 % rows)
			}
			idx := array.FromSlice(r, rows)
			eval(x)
			eval(idx)
			return func() { eval(ops.Index(x, idx)) }
		}},
		{name: "einsum-bmm/16x256", flops: bmmFlops, setup: func() func() {
			x, y := bmm()
			return func() { eval(ops.Einsum("bij,bjk->bik", x, y)) }
		}},
		{name: "bmm/16x256", flops: bmmFlops, setup: func() func() {
			x, y := bmm()
			return func() { eval(ops.MatMul(x, y)) }
		}},
		{name: "einsum-chain/512", flops: chainFlops, setup: func() func() {
			a, b, c, d := chain()
			return func() { eval(ops.Einsum("ij,jk,kl,lm->im", a, b, c, d)) }
		}},
		{name: "matmul-chain/512", flops: chainFlops, setup: func() func() {
			a, b, c, d := chain()
			return func() { eval(ops.MatMul(ops.MatMul(a, ops.MatMul(b, c)), d)) }
		}},
	}
}

func randF32(seed uint64, shape ...int) *array.Array {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return array.FromSlice(workload.RandF32(n, seed), shape...)
}
