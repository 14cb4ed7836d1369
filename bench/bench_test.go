package bench

import (
	"fmt"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/workload"
	"github.com/fathom-go/fathom/ops"
)

// sizes are the element counts of the memory-bound workloads: 1M fits in
// the last-level cache of some machines, 16M (64 MiB of float32) does not.
var sizes = []struct {
	name       string
	rows, cols int
}{{"1M", 1024, 1024}, {"16M", 4096, 4096}}

func mustEval(b *testing.B, a *array.Array) {
	if err := a.Eval(); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkAdd(b *testing.B) {
	for _, s := range sizes {
		n := s.rows * s.cols
		x := array.FromSlice(workload.RandF32(n, 1), s.rows, s.cols)
		y := array.FromSlice(workload.RandF32(n, 2), s.rows, s.cols)
		row := array.FromSlice(workload.RandF32(s.cols, 3), s.cols)
		b.Run("contiguous/"+s.name, func(b *testing.B) {
			b.SetBytes(int64(3 * 4 * n))
			for b.Loop() {
				mustEval(b, ops.Add(x, y))
			}
		})
		b.Run("row/"+s.name, func(b *testing.B) {
			b.SetBytes(int64(2 * 4 * n))
			for b.Loop() {
				mustEval(b, ops.Add(x, row))
			}
		})
	}
}

func BenchmarkExp(b *testing.B) {
	for _, s := range sizes {
		n := s.rows * s.cols
		x := array.FromSlice(workload.RandF32(n, 1), n)
		b.Run(s.name, func(b *testing.B) {
			b.SetBytes(int64(2 * 4 * n))
			for b.Loop() {
				mustEval(b, ops.Exp(x))
			}
		})
	}
}

func BenchmarkSum(b *testing.B) {
	for _, s := range sizes {
		n := s.rows * s.cols
		x := array.FromSlice(workload.RandF32(n, 1), s.rows, s.cols)
		for _, c := range []struct {
			name string
			axes []int
		}{{"all", nil}, {"rows", []int{1}}, {"cols", []int{0}}} {
			b.Run(c.name+"/"+s.name, func(b *testing.B) {
				b.SetBytes(int64(4 * n))
				for b.Loop() {
					mustEval(b, ops.Sum(x, c.axes...))
				}
			})
		}
	}
}

func flops(b *testing.B, n int) {
	b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkMatMul(b *testing.B) {
	for _, n := range []int{256, 512, 1024, 2048} {
		x := array.FromSlice(workload.RandF32(n*n, 1), n, n)
		y := array.FromSlice(workload.RandF32(n*n, 2), n, n)
		b.Run(fmt.Sprintf("float32/%d", n), func(b *testing.B) {
			for b.Loop() {
				mustEval(b, ops.MatMul(x, y))
			}
			flops(b, n)
		})
		xd := array.FromSlice(workload.RandF64(n*n, 1), n, n)
		yd := array.FromSlice(workload.RandF64(n*n, 2), n, n)
		b.Run(fmt.Sprintf("float64/%d", n), func(b *testing.B) {
			for b.Loop() {
				mustEval(b, ops.MatMul(xd, yd))
			}
			flops(b, n)
		})
	}
}

// BenchmarkGonumSgemm is the yardstick for MatMul float32: gonum's
// blas32.Gemm called directly on the same sizes.
func BenchmarkGonumSgemm(b *testing.B) {
	for _, n := range []int{256, 512, 1024} {
		g := func(seed uint64) blas32.General {
			return blas32.General{Rows: n, Cols: n, Stride: n, Data: workload.RandF32(n*n, seed)}
		}
		x, y, z := g(1), g(2), g(3)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				blas32.Gemm(blas.NoTrans, blas.NoTrans, 1, x, y, 0, z)
			}
			flops(b, n)
		})
	}
}

func BenchmarkSoftmax(b *testing.B) {
	const n = 4096
	x := array.FromSlice(workload.RandF32(n*n, 1), n, n)
	b.Run("rows/4096x4096", func(b *testing.B) {
		b.SetBytes(2 * 4 * n * n)
		for b.Loop() {
			mustEval(b, ops.Softmax(x, -1))
		}
	})
}

// BenchmarkGraphOverhead measures what fathom adds to each operation:
// building and evaluating a chain of 100 small ops, where the arithmetic
// itself is negligible. It reports the cost per op.
func BenchmarkGraphOverhead(b *testing.B) {
	const chain = 100
	x := array.FromSlice(workload.RandF32(16, 1), 16)
	for b.Loop() {
		y := x
		for i := 0; i < chain; i++ {
			y = ops.AddScalar(y, 1)
		}
		mustEval(b, y)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chain), "ns/node")
}

// BenchmarkTriad is the bandwidth probe: STREAM's triad a = b + 3c over
// 16M float32 (workload.Triad), which bench/compare runs too. The
// memory-bound benchmarks above are judged against its GB/s.
func BenchmarkTriad(b *testing.B) {
	const n = 16 << 20
	t := workload.NewTriad(n)
	b.SetBytes(workload.TriadBytes(n))
	for b.Loop() {
		t.Run()
	}
}

// BenchmarkPendingNode measures the memory a pending node holds before
// evaluation: a chain of 10,000 ops is built and the live heap measured
// after a collection. It reports live bytes and allocations per node.
func BenchmarkPendingNode(b *testing.B) {
	const chain = 10000
	x := array.FromSlice(workload.RandF32(16, 1), 16)
	for _, c := range []struct {
		name string
		op   func(y *array.Array) *array.Array
	}{
		{"AddScalar", func(y *array.Array) *array.Array { return ops.AddScalar(y, 1) }},
		{"Add", func(y *array.Array) *array.Array { return ops.Add(y, x) }},
		{"Exp", ops.Exp},
	} {
		b.Run(c.name, func(b *testing.B) {
			var live, allocs float64
			for b.Loop() {
				var m0, m1 runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&m0)
				y := x
				for range chain {
					y = c.op(y)
				}
				runtime.GC()
				runtime.ReadMemStats(&m1)
				live += float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)) / chain
				allocs += float64(m1.Mallocs-m0.Mallocs) / chain
				runtime.KeepAlive(y)
			}
			b.ReportMetric(live/float64(b.N), "B/node")
			b.ReportMetric(allocs/float64(b.N), "allocs/node")
		})
	}
}
