package bench

import (
	"fmt"
	"math"
	"testing"
	"unsafe"

	"github.com/fathom-go/fathom/fft"
	"github.com/fathom-go/fathom/internal/strided"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/internal/workload"
	"github.com/fathom-go/fathom/ops"
)

// GPU benchmarks: they need a Mac with Apple silicon and skip elsewhere.
// docs/metal.md lists the targets and MLX's figures for the same work:
//
//	go test ./bench -run '^$' -bench GPU -count 5
//
// Inputs are made on the GPU first, so no iteration copies host data, and
// every iteration ends in Eval, which waits for the GPU.

// onGPU makes the GPU the default device for the benchmark, or skips it.
func onGPU(b *testing.B) {
	b.Helper()
	if err := metal.Available(); err != nil {
		b.Skip(err)
	}
	prev := array.DefaultDevice()
	if err := array.SetDefaultDevice(array.GPU); err != nil {
		b.Skip(err)
	}
	b.Cleanup(func() { array.SetDefaultDevice(prev) })
}

// gpuArray returns an evaluated GPU array holding data.
func gpuArray[T array.Elem](b *testing.B, data []T, shape ...int) *array.Array {
	b.Helper()
	nbytes := len(data) * int(unsafe.Sizeof(data[0]))
	st, err := metal.Alloc(nbytes)
	if err != nil {
		b.Fatal(err)
	}
	copy(st.Bytes(), unsafe.Slice((*byte)(unsafe.Pointer(&data[0])), nbytes))
	return array.FromStorage(array.DefaultStream(array.GPU), shape, array.DTypeOf[T](), st, strided.RowMajor(shape), 0)
}

func randF16(n int, seed uint64) []array.F16 {
	out := make([]array.F16, n)
	for i, v := range workload.RandF32(n, seed) {
		out[i] = array.NewF16(v)
	}
	return out
}

// BenchmarkGPUGELU is MLX's compile example: GELU on (32, 1000, 4096)
// float32, where fusion turns about ten memory-bound kernels into one.
func BenchmarkGPUGELU(b *testing.B) {
	onGPU(b)
	shape := []int{32, 1000, 4096}
	n := 32 * 1000 * 4096
	x := gpuArray(b, workload.RandF32(n, 1), shape...)
	b.Run("uncompiled", func(b *testing.B) {
		b.SetBytes(2 * 4 * int64(n))
		for b.Loop() {
			mustEval(b, workload.GELU(x)[0])
		}
	})
	f := compile.Compile(workload.GELU)
	defer f.Release()
	b.Run("compiled", func(b *testing.B) {
		b.SetBytes(2 * 4 * int64(n))
		for b.Loop() {
			mustEval(b, f.Call(x)[0])
		}
	})
}

// BenchmarkGPUMatMul reports TFLOP/s (2n^3 flops per product) for square
// products in float32 and float16.
func BenchmarkGPUMatMul(b *testing.B) {
	onGPU(b)
	for _, n := range []int{1024, 2048, 4096} {
		for _, dt := range []array.DType{array.Float32, array.Float16} {
			var x, y *array.Array
			if dt == array.Float32 {
				x, y = gpuArray(b, workload.RandF32(n*n, 1), n, n), gpuArray(b, workload.RandF32(n*n, 2), n, n)
			} else {
				x, y = gpuArray(b, randF16(n*n, 1), n, n), gpuArray(b, randF16(n*n, 2), n, n)
			}
			b.Run(fmt.Sprintf("%v/%d", dt, n), func(b *testing.B) {
				for b.Loop() {
					mustEval(b, ops.MatMul(x, y))
				}
				flops := 2 * float64(n) * float64(n) * float64(n) * float64(b.N)
				b.ReportMetric(flops/b.Elapsed().Seconds()/1e12, "TFLOP/s")
			})
		}
	}
}

// BenchmarkGPUReduce reports GB/s of input read: a whole-array sum, a row
// reduction (the contiguous axis) and a column reduction.
func BenchmarkGPUReduce(b *testing.B) {
	onGPU(b)
	const rows, cols = 4096, 4096
	x := gpuArray(b, workload.RandF32(rows*cols, 1), rows, cols)
	for _, c := range []struct {
		name string
		axes []int
	}{{"all", nil}, {"rows", []int{1}}, {"cols", []int{0}}} {
		b.Run("sum/"+c.name, func(b *testing.B) {
			b.SetBytes(4 * rows * cols)
			for b.Loop() {
				mustEval(b, ops.Sum(x, c.axes...))
			}
		})
	}
	b.Run("max/rows", func(b *testing.B) {
		b.SetBytes(4 * rows * cols)
		for b.Loop() {
			mustEval(b, ops.Max(x, 1))
		}
	})
}

// BenchmarkGPUSoftmax reports GB/s (one read, one write) of a last-axis
// softmax, as in attention.
func BenchmarkGPUSoftmax(b *testing.B) {
	onGPU(b)
	const rows, cols = 4096, 4096
	for _, dt := range []array.DType{array.Float32, array.Float16} {
		var x *array.Array
		if dt == array.Float32 {
			x = gpuArray(b, workload.RandF32(rows*cols, 1), rows, cols)
		} else {
			x = gpuArray(b, randF16(rows*cols, 1), rows, cols)
		}
		b.Run(dt.String(), func(b *testing.B) {
			b.SetBytes(2 * int64(dt.Size()) * rows * cols)
			for b.Loop() {
				mustEval(b, ops.Softmax(x, -1))
			}
		})
	}
}

// BenchmarkGPUFFT is complex64 FFTs along the last axis: lengths that take
// one launch (64, 1024) and four steps (4096, 2^20). GFLOP/s counts
// 5·n·log2(n) per line, as FFT benchmarks do; GB/s one read and one write.
func BenchmarkGPUFFT(b *testing.B) {
	onGPU(b)
	for _, c := range []struct{ batch, n int }{{16384, 64}, {1024, 1024}, {256, 4096}, {1, 1 << 20}} {
		b.Run(fmt.Sprintf("%dx%d", c.batch, c.n), func(b *testing.B) {
			re := workload.RandF32(c.batch*c.n, 1)
			data := make([]complex64, len(re))
			for i, v := range re {
				data[i] = complex(v, -v)
			}
			x := gpuArray(b, data, c.batch, c.n)
			b.SetBytes(int64(16 * len(data)))
			b.ResetTimer()
			for range b.N {
				mustEval(b, fft.FFT(x, 0, -1, fft.Backward))
			}
			flops := 5 * float64(c.batch*c.n) * math.Log2(float64(c.n))
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
