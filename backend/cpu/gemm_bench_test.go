package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func benchGemm[T float32 | float64](b *testing.B, n int, parallel bool) {
	r := rand.New(rand.NewPCG(1, 2))
	a, bm, c := randSlice[T](r, n*n), randSlice[T](r, n*n), make([]T, n*n)
	for b.Loop() {
		gemm(n, n, n, mat[T]{a, 0, n, 1}, mat[T]{bm, 0, n, 1}, c, n, parallel)
	}
	b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkGemm times square products on all cores and on one.
func BenchmarkGemm(b *testing.B) {
	for _, n := range []int{64, 256, 512, 1024, 2048} {
		for _, par := range []bool{true, false} {
			cores := "all"
			if !par {
				cores = "one"
			}
			b.Run(fmt.Sprintf("float32/%d/%s", n, cores), func(b *testing.B) { benchGemm[float32](b, n, par) })
			b.Run(fmt.Sprintf("float64/%d/%s", n, cores), func(b *testing.B) { benchGemm[float64](b, n, par) })
		}
	}
}

// BenchmarkGemmKernel times the micro-kernel alone on packed panels that
// stay in L1 and L2: the ceiling the blocking can approach.
func BenchmarkGemmKernel(b *testing.B) {
	const k = 256
	b.Run("float32/"+kernel32.name, func(b *testing.B) { benchKernel(b, kernel32, k) })
	b.Run("float64/"+kernel64.name, func(b *testing.B) { benchKernel(b, kernel64, k) })
}

func benchKernel[T float32 | float64](b *testing.B, kern microKernel[T], k int) {
	r := rand.New(rand.NewPCG(3, 4))
	const tiles = 16
	a := randSlice[T](r, kern.mr*k)
	bp := randSlice[T](r, tiles*kern.nr*k)
	c := make([]T, kern.mr*kern.nr*tiles)
	for b.Loop() {
		for t := 0; t < tiles; t++ {
			kern.fn(k, &a[0], &bp[t*kern.nr*k], &c[t*kern.nr], kern.nr*tiles, true)
		}
	}
	b.ReportMetric(2*float64(kern.mr*kern.nr*k*tiles)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
