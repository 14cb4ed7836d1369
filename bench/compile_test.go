package bench

import (
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/internal/workload"
	"github.com/fathom-go/fathom/ops"
)

func BenchmarkGELU(b *testing.B) {
	const n = 16 << 20
	x := array.FromSlice(workload.RandF32(n, 1), n)
	b.Run("uncompiled/16M", func(b *testing.B) {
		b.SetBytes(2 * 4 * n)
		for b.Loop() {
			mustEval(b, workload.GELU(x)[0])
		}
	})
	f := compile.Compile(workload.GELU)
	defer f.Release()
	b.Run("compiled/16M", func(b *testing.B) {
		b.SetBytes(2 * 4 * n)
		for b.Loop() {
			mustEval(b, f.Call(x)[0])
		}
	})
}

// BenchmarkCompiledCallSmall measures a cache hit: replaying a compiled
// 10-op function on 16-element inputs, evaluation included.
func BenchmarkCompiledCallSmall(b *testing.B) {
	f := compile.Compile(func(in ...*array.Array) []*array.Array {
		y := in[0]
		for i := 0; i < 5; i++ {
			y = ops.Tanh(ops.Mul(y, in[1]))
		}
		return []*array.Array{y}
	})
	defer f.Release()
	x, w := array.FromSlice(workload.RandF32(16, 1), 16), array.FromSlice(workload.RandF32(16, 2), 16)
	mustEval(b, f.Call(x, w)[0])
	b.ReportAllocs() // compile/alloc_test.go bounds them
	for b.Loop() {
		mustEval(b, f.Call(x, w)[0])
	}
}

// BenchmarkTraceAndFuse1000 measures tracing plus fusing a 1,000-node
// elementwise graph: each iteration compiles a new function, so every call
// traces.
func BenchmarkTraceAndFuse1000(b *testing.B) {
	x := array.FromSlice(workload.RandF32(16, 1), 16)
	g := func(in ...*array.Array) []*array.Array {
		y := in[0]
		for i := 0; i < 500; i++ {
			y = ops.Sin(ops.Add(y, in[0]))
		}
		return []*array.Array{y}
	}
	for b.Loop() {
		f := compile.Compile(g)
		f.Call(x)
		f.Release()
	}
}
