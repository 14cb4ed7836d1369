package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// BenchmarkFFTKernel times the kernels without the graph around them:
// one long vector (the four-step split), many rows of 1024, and a real
// transform of 4M points. GFLOP/s counts 5·N·log2(N) per complex
// transform of N points.
func BenchmarkFFTKernel(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	run := func(b *testing.B, rows, n int) {
		x := randC64(r, rows*n)
		out := make([]complex64, rows*n)
		b.SetBytes(int64(16 * rows * n))
		for b.Loop() {
			if err := FFT(c64Buf(out, rows, n), c64Buf(x, rows, n), []int{1}, false, 1); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(5*float64(rows*n)*math.Log2(float64(n))*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	}
	b.Run("1x1M", func(b *testing.B) { run(b, 1, 1<<20) })
	b.Run("1024x1024", func(b *testing.B) { run(b, 1024, 1024) })
	b.Run("RFFT4M", func(b *testing.B) {
		const n = 1 << 22
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		out := make([]complex64, n/2+1)
		b.SetBytes(4*n + 8*(n/2+1))
		for b.Loop() {
			if err := RFFT(c64Buf(out, n/2+1), f32Buf(x, n), []int{0}, 1); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(2.5*n*22*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
}
