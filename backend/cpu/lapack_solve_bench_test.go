package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkLapackSolve measures the solver kernels on one n×n float64
// matrix, in GFLOP/s of the usual operation counts: Solve with n
// right-hand sides 2n³/3 + 2n³ (getrf, getrs), Inv 2n³ (what getri would
// take; Inv runs getrf and getrs on the identity, 8n³/3), SolveTriangular
// with n right-hand sides n³. gonum's LAPACK runs
// on the BLAS registered with blas64 (fathom's GEMM through EnsureBLAS,
// or gonum's own with FATHOM_GONUM_BLAS=gonum).
func BenchmarkLapackSolve(b *testing.B) {
	for _, n := range []int{256, 1024} {
		r := rand.New(rand.NewPCG(uint64(n), 1))
		a := luRandMatrix(r, n, n, float64(n))
		rhs := luRandMatrix(r, n, n, 0)
		shape := []int{n, n}
		ab, bb := luF64Buf(a, shape, luRowMajor(n, n)), luF64Buf(rhs, shape, luRowMajor(n, n))
		out := luF64Buf(make([]float64, n*n), shape, luRowMajor(n, n))
		nf := float64(n)
		for _, k := range []struct {
			name  string
			flops float64
			run   func() error
		}{
			{"Solve", 2*nf*nf*nf/3 + 2*nf*nf*nf, func() error { return Solve(out, ab, bb) }},
			{"Inv", 2 * nf * nf * nf, func() error { return Inv(out, ab) }},
			{"SolveTriangular", nf * nf * nf, func() error { return SolveTriangular(out, ab, bb, true, false) }},
		} {
			b.Run(fmt.Sprintf("%s/%d", k.name, n), func(b *testing.B) {
				for b.Loop() {
					if err := k.run(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(k.flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkLapackSolveBatch measures batches of small matrices, where
// the work per matrix is the copies and LAPACK's overhead rather than
// arithmetic: GB/s of the batch's input.
func BenchmarkLapackSolveBatch(b *testing.B) {
	for _, n := range []int{3, 8} {
		const batch = 4096
		r := rand.New(rand.NewPCG(uint64(n), 2))
		a := make([]float64, 0, batch*n*n)
		for range batch {
			a = append(a, luRandMatrix(r, n, n, float64(n))...)
		}
		shape := []int{batch, n, n}
		ab := luF64Buf(a, shape, luRowMajor(shape...))
		out := luF64Buf(make([]float64, batch*n*n), shape, luRowMajor(shape...))
		b.Run(fmt.Sprintf("Inv/%dx%dx%d", batch, n, n), func(b *testing.B) {
			b.SetBytes(int64(8 * len(a)))
			for b.Loop() {
				if err := Inv(out, ab); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
