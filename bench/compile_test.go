package bench

import (
	"math"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/ops"
)

// gelu is the tanh approximation of GELU, as PyTorch's F.gelu(approximate="tanh"):
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
func gelu(in ...*array.Array) []*array.Array {
	x := in[0]
	inner := ops.MulScalar(ops.Add(x, ops.MulScalar(ops.Mul(ops.Square(x), x), 0.044715)), math.Sqrt(2/math.Pi))
	return []*array.Array{ops.Mul(ops.MulScalar(x, 0.5), ops.AddScalar(ops.Tanh(inner), 1))}
}

func BenchmarkGELU(b *testing.B) {
	const n = 16 << 20
	x := array.FromSlice(randF32(n, 1), n)
	b.Run("uncompiled/16M", func(b *testing.B) {
		b.SetBytes(2 * 4 * n)
		for b.Loop() {
			mustEval(b, gelu(x)[0])
		}
	})
	f := compile.Compile(gelu)
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
	x, w := array.FromSlice(randF32(16, 1), 16), array.FromSlice(randF32(16, 2), 16)
	mustEval(b, f.Call(x, w)[0])
	for b.Loop() {
		mustEval(b, f.Call(x, w)[0])
	}
}

// BenchmarkTraceAndFuse1000 measures tracing plus fusing a 1,000-node
// elementwise graph: each iteration compiles a new function, so every call
// traces.
func BenchmarkTraceAndFuse1000(b *testing.B) {
	x := array.FromSlice(randF32(16, 1), 16)
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
