package bench

import (
	"fmt"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/workload"
	"github.com/fathom-go/fathom/linalg"
	"github.com/fathom-go/fathom/ops"
)

// linalgCase is one of issue 21's linear algebra workloads on an n×n
// float64 matrix. flops counts the arithmetic as LAPACK's operation
// counts do (Golub and Van Loan's for the SVD and the symmetric
// eigenproblem with vectors), so GFLOP/s compares with numpy's time for
// the same call in bench/compare.
type linalgCase struct {
	name  string
	n     int
	flops float64
	spd   bool // the input is made symmetric positive definite
	run   func(a, b *array.Array) []*array.Array
}

func linalgCases() []linalgCase {
	cube := func(n int) float64 { return float64(n) * float64(n) * float64(n) }
	return []linalgCase{
		{"Solve", 1024, 2 * cube(1024) / 3, false, func(a, b *array.Array) []*array.Array { return []*array.Array{linalg.Solve(a, b)} }},
		{"Inv", 1024, 2 * cube(1024), false, func(a, _ *array.Array) []*array.Array { return []*array.Array{linalg.Inv(a)} }},
		{"Cholesky", 1024, cube(1024) / 3, true, func(a, _ *array.Array) []*array.Array { return []*array.Array{linalg.Cholesky(a, false)} }},
		{"QR", 1024, 8 * cube(1024) / 3, false, func(a, _ *array.Array) []*array.Array { q, r := linalg.QR(a); return []*array.Array{q, r} }},
		{"Eigh", 512, 9 * cube(512), true, func(a, _ *array.Array) []*array.Array { w, v := linalg.Eigh(a); return []*array.Array{w, v} }},
		{"SVD", 512, 21 * cube(512), false, func(a, _ *array.Array) []*array.Array { u, s, vt := linalg.SVD(a); return []*array.Array{u, s, vt} }},
	}
}

// linalgInput returns a random n×n float64 matrix, symmetric positive
// definite (x·xᵀ/n + I) if spd, and a right-hand side [n, 1].
func linalgInput(b *testing.B, n int, spd bool) (a, rhs *array.Array) {
	a = array.FromSlice(workload.RandF64(n*n, 1), n, n)
	if spd {
		a = ops.Add(ops.DivScalar(ops.MatMul(a, ops.Transpose(a)), float64(n)), ops.Eye(n, n, 0, array.Float64))
	}
	rhs = array.FromSlice(workload.RandF64(n, 2), n, 1)
	if err := array.Eval(a, rhs); err != nil {
		b.Fatal(err)
	}
	return a, rhs
}

// BenchmarkLinalg times issue 21's workloads (float64; 1024 for the
// factorisations and solvers, 512 for Eigh and SVD) with fathom's GEMM
// under gonum's LAPACK, the default, and with gonum's own BLAS, the way
// out (linalg.UseGonumBLAS), to show what the registration gains:
//
//	go test ./bench -run '^$' -bench Linalg -benchtime 3x
func BenchmarkLinalg(b *testing.B) {
	for _, c := range linalgCases() {
		for _, blas := range []string{"fathom", "gonum"} {
			b.Run(fmt.Sprintf("%s/%d/blas=%s", c.name, c.n, blas), func(b *testing.B) {
				if blas == "gonum" {
					linalg.UseGonumBLAS()
					defer linalg.UseFathomBLAS()
				} else {
					linalg.UseFathomBLAS()
				}
				a, rhs := linalgInput(b, c.n, c.spd)
				for b.Loop() {
					if err := array.Eval(c.run(a, rhs)...); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(c.flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
