package bench

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/fft"
)

// BenchmarkFFT measures the three transforms of issue 21's speed goals:
// a complex64 FFT of 1M points (and its inverse), an RFFT of 4M float32
// and an FFT2 of 64×512×512 complex64 (bench/compare runs the same ones
// next to numpy and PyTorch). GFLOP/s counts 5·N·log2(N) flops per
// complex transform of N points (half that for a real one), the
// convention of FFTW's benchmarks; GB/s counts the input read and the
// output written once.
func BenchmarkFFT(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	cplx := func(n int, shape ...int) *array.Array {
		v := make([]complex64, n)
		for i := range v {
			v[i] = complex(float32(r.NormFloat64()), float32(r.NormFloat64()))
		}
		a := array.FromSlice(v, shape...)
		mustEval(b, a)
		return a
	}
	flops := func(batch, n int) float64 { return 5 * float64(batch) * float64(n) * math.Log2(float64(n)) }
	b.Run("FFT/1M", func(b *testing.B) {
		const n = 1 << 20
		x := cplx(n, n)
		b.SetBytes(16 * n)
		for b.Loop() {
			mustEval(b, fft.FFT(x, 0, -1, fft.Backward))
		}
		b.ReportMetric(flops(1, n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
	// IFFT's backward norm scales by 1/N: the scale rides on the
	// transform's last pass, so this should cost what FFT/1M does.
	b.Run("IFFT/1M", func(b *testing.B) {
		const n = 1 << 20
		x := cplx(n, n)
		b.SetBytes(16 * n)
		for b.Loop() {
			mustEval(b, fft.IFFT(x, 0, -1, fft.Backward))
		}
		b.ReportMetric(flops(1, n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
	b.Run("RFFT/4M", func(b *testing.B) {
		const n = 1 << 22
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		x := array.FromSlice(v, n)
		mustEval(b, x)
		b.SetBytes(4*n + 8*(n/2+1))
		for b.Loop() {
			mustEval(b, fft.RFFT(x, 0, -1, fft.Backward))
		}
		b.ReportMetric(flops(1, n)/2*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
	b.Run("FFT2/64x512x512", func(b *testing.B) {
		x := cplx(64*512*512, 64, 512, 512)
		b.SetBytes(16 * 64 * 512 * 512)
		for b.Loop() {
			mustEval(b, fft.FFT2(x, nil, nil, fft.Backward))
		}
		b.ReportMetric(flops(64, 512*512)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	})
}
