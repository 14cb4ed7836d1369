package bench

import (
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/internal/mlp"
	"github.com/fathom-go/fathom/ops"
)

// The autodiff goals: ValueAndGrad of a 2-layer MLP's loss costs at most
// 3.5 times its forward pass (compare BenchmarkMLPValueAndGrad with
// BenchmarkMLPForward), and the transform overhead is under 5 µs an
// operation (BenchmarkTransformOverhead).

func BenchmarkMLPForward(b *testing.B) {
	args := mlp.Args()
	for b.Loop() {
		mustEval(b, mlp.Loss(args...))
	}
	b.ReportMetric(float64(mlp.ForwardFlops)*float64(b.N)/b.Elapsed().Seconds()/1e9, "fwd-GFLOP/s")
}

func BenchmarkMLPValueAndGrad(b *testing.B) {
	args := mlp.Args()
	for b.Loop() {
		if err := array.Eval(mlp.Step(args...)...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(mlp.StepFlops)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkTransformOverhead measures what the transform adds per
// operation: Grad of a chain of 1,000 scalar operations, where the
// arithmetic is negligible. "build" times the Grad call alone (tracing,
// the tape, dispatching every rule), "eval" also evaluates the gradient.
func BenchmarkTransformOverhead(b *testing.B) {
	const chain = 1000
	f := func(in ...*array.Array) *array.Array {
		y := in[0]
		for i := range chain {
			switch i % 4 {
			case 0:
				y = ops.MulScalar(y, 0.999)
			case 1:
				y = ops.Sin(y)
			case 2:
				y = ops.Add(y, in[0])
			default:
				y = ops.Tanh(y)
			}
		}
		return y
	}
	x := array.Scalar[float32](0.5)
	grad := graph.Grad(f)
	b.Run("build", func(b *testing.B) {
		for b.Loop() {
			grad(x)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chain), "ns/chain-op")
	})
	b.Run("eval", func(b *testing.B) {
		for b.Loop() {
			mustEval(b, grad(x)[0])
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chain), "ns/chain-op")
	})
}
