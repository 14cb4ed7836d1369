package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	lapackjob "gonum.org/v1/gonum/lapack"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"
)

// lapackCase is one gonum LAPACK routine timed on an n×n matrix: run
// copies src into a (row-major, lda = n) and factors it, and flops counts
// its arithmetic the way LAPACK's operation counts do. src is random, and
// symmetric positive definite where spd is set.
type lapackCase struct {
	name  string
	n     int
	flops func(n float64) float64
	run   func(n int, a, src []float64)
	spd   bool
}

var lapackCases = []lapackCase{
	{"Dgetrf", 1024, func(n float64) float64 { return 2 * n * n * n / 3 }, func(n int, a, src []float64) {
		copy(a, src)
		lapackgonum.Implementation{}.Dgetrf(n, n, a, n, make([]int, n))
	}, false},
	{"Dpotrf", 1024, func(n float64) float64 { return n * n * n / 3 }, func(n int, a, src []float64) {
		copy(a, src)
		lapackgonum.Implementation{}.Dpotrf(blas.Lower, n, a, n)
	}, true},
	{"Dgeqrf", 1024, func(n float64) float64 { return 4 * n * n * n / 3 }, func(n int, a, src []float64) {
		copy(a, src)
		impl := lapackgonum.Implementation{}
		tau, work := make([]float64, n), make([]float64, 1)
		impl.Dgeqrf(n, n, a, n, tau, work, -1)
		work = make([]float64, int(work[0]))
		impl.Dgeqrf(n, n, a, n, tau, work, len(work))
	}, false},
	{"Dsyev", 512, func(n float64) float64 { return 9 * n * n * n }, func(n int, a, src []float64) {
		copy(a, src)
		impl := lapackgonum.Implementation{}
		w, work := make([]float64, n), make([]float64, 1)
		impl.Dsyev(lapackjob.EVCompute, blas.Lower, n, a, n, w, work, -1)
		work = make([]float64, int(work[0]))
		impl.Dsyev(lapackjob.EVCompute, blas.Lower, n, a, n, w, work, len(work))
	}, false},
	{"Dgesvd", 512, func(n float64) float64 { return 21 * n * n * n }, func(n int, a, src []float64) {
		copy(a, src)
		impl := lapackgonum.Implementation{}
		s, u, vt, work := make([]float64, n), make([]float64, n*n), make([]float64, n*n), make([]float64, 1)
		impl.Dgesvd(lapackjob.SVDAll, lapackjob.SVDAll, n, n, a, n, s, u, n, vt, n, work, -1)
		work = make([]float64, int(work[0]))
		impl.Dgesvd(lapackjob.SVDAll, lapackjob.SVDAll, n, n, a, n, s, u, n, vt, n, work, len(work))
	}, false},
}

// spd returns x·xᵀ/n + I for the n×n x, symmetric positive definite.
func spd(n int, x []float64) []float64 {
	a := make([]float64, n*n)
	gonum.Implementation{}.Dgemm(blas.NoTrans, blas.Trans, n, n, n, 1/float64(n), x, n, x, n, 0, a, n)
	for i := range n {
		a[i*n+i]++
	}
	return a
}

// BenchmarkLAPACK times gonum's LAPACK with gonum's BLAS and with BLAS
// registered, in GFLOP/s by LAPACK's operation counts (the SVD and
// eigendecomposition counts are the usual estimates for computing all
// vectors):
//
//	go test ./backend/cpu -run '^$' -bench LAPACK -benchtime 2x
func BenchmarkLAPACK(b *testing.B) {
	for _, c := range lapackCases {
		for _, impl := range []struct {
			name string
			blas blasImpl
		}{{"gonum", gonum.Implementation{}}, {"fathom", BLAS{}}} {
			b.Run(fmt.Sprintf("%s/%d/%s", c.name, c.n, impl.name), func(b *testing.B) {
				register(impl.blas)
				defer register(gonum.Implementation{})
				r := rand.New(rand.NewPCG(1, 2))
				src, a := randSlice[float64](r, c.n*c.n), make([]float64, c.n*c.n)
				if c.spd {
					src = spd(c.n, src)
				}
				for b.Loop() {
					c.run(c.n, a, src)
				}
				b.ReportMetric(c.flops(float64(c.n))*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkLevel2 times the level-2 and rank-2k routines behind Eigh's
// tridiagonal reduction (Dsytrd) with gonum's code and with BLAS, in
// GFLOP/s:
//
//	go test ./backend/cpu -run '^$' -bench Level2 -benchtime 20x
func BenchmarkLevel2(b *testing.B) {
	const n, k = 512, 32
	r := rand.New(rand.NewPCG(5, 6))
	a, x, y := randSlice[float64](r, n*n), randSlice[float64](r, n), make([]float64, n)
	w, c := randSlice[float64](r, n*k), randSlice[float64](r, n*n)
	for _, impl := range []struct {
		name string
		blas blas.Float64
	}{{"gonum", gonum.Implementation{}}, {"fathom", BLAS{}}} {
		b.Run(fmt.Sprintf("Dsymv/%d/%s", n, impl.name), func(b *testing.B) {
			for b.Loop() {
				impl.blas.Dsymv(blas.Lower, n, 1, a, n, x, 1, 0, y, 1)
			}
			b.ReportMetric(2*n*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			b.Run(fmt.Sprintf("Dgemv%c/%d/%s", tA, n, impl.name), func(b *testing.B) {
				for b.Loop() {
					impl.blas.Dgemv(tA, n, n, 1, a, n, x, 1, 0, y, 1)
				}
				b.ReportMetric(2*n*n*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
		b.Run(fmt.Sprintf("Dsyr2k/%dx%d/%s", n, k, impl.name), func(b *testing.B) {
			for b.Loop() {
				impl.blas.Dsyr2k(blas.Lower, blas.NoTrans, n, k, -1, a, k, w, k, 1, c, n)
			}
			b.ReportMetric(2*n*n*k*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
