package main

import (
	"math"
	"strconv"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/workload"
	"github.com/fathom-go/fathom/linalg"
	"github.com/fathom-go/fathom/ops"
)

// linalgTasks are issue 21's linear algebra rows, float64, against
// numpy.linalg (OpenBLAS's LAPACK) and torch.linalg on the same shapes
// (workloads.py's build_linalg). The "-gonum" rows run fathom with
// gonum's own BLAS under gonum's LAPACK (linalg.UseGonumBLAS), the speed
// before fathom's GEMM was registered. flops are LAPACK's operation
// counts (Golub and Van Loan's for Eigh and SVD with vectors).
func linalgTasks() []task {
	cube := func(n int) float64 { return math.Pow(float64(n), 3) }
	input := func(n int, spd bool) (a, b *array.Array) {
		a = array.FromSlice(workload.RandF64(n*n, 1), n, n)
		if spd {
			a = ops.Add(ops.DivScalar(ops.MatMul(a, ops.Transpose(a)), float64(n)), ops.Eye(n, n, 0, array.Float64))
		}
		b = array.FromSlice(workload.RandF64(n, 2), n, 1)
		eval(a)
		eval(b)
		return a, b
	}
	evalAll := func(xs ...*array.Array) {
		if err := array.Eval(xs...); err != nil {
			panic(err)
		}
	}
	rows := []struct {
		name  string
		n     int
		flops float64
		spd   bool
		run   func(a, b *array.Array)
	}{
		{"solve", 1024, 2 * cube(1024) / 3, false, func(a, b *array.Array) { evalAll(linalg.Solve(a, b)) }},
		{"inv", 1024, 2 * cube(1024), false, func(a, _ *array.Array) { evalAll(linalg.Inv(a)) }},
		{"cholesky", 1024, cube(1024) / 3, true, func(a, _ *array.Array) { evalAll(linalg.Cholesky(a, false)) }},
		{"qr", 1024, 8 * cube(1024) / 3, false, func(a, _ *array.Array) { evalAll(linalg.QR(a)) }},
		{"eigh", 512, 9 * cube(512), true, func(a, _ *array.Array) { evalAll(linalg.Eigh(a)) }},
		{"svd", 512, 21 * cube(512), false, func(a, _ *array.Array) { evalAll(linalg.SVD(a)) }},
	}
	var ts []task
	for _, r := range rows {
		for _, gonum := range []bool{false, true} {
			name := "linalg-" + r.name
			if gonum {
				name += "-gonum"
			}
			ts = append(ts, task{name: name + "/" + strconv.Itoa(r.n), flops: r.flops, setup: func() func() {
				a, b := input(r.n, r.spd)
				return func() {
					if gonum {
						linalg.UseGonumBLAS()
						defer linalg.UseFathomBLAS()
					} else {
						linalg.UseFathomBLAS()
					}
					r.run(a, b)
				}
			}})
		}
	}
	return ts
}
