package bench

import (
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// The autodiff goals: ValueAndGrad of a 2-layer MLP's loss costs at most
// 3.5 times its forward pass (compare BenchmarkMLPValueAndGrad with
// BenchmarkMLPForward), and the transform overhead is under 5 µs an
// operation (BenchmarkTransformOverhead).

const (
	mlpBatch  = 256
	mlpIn     = 784
	mlpHidden = 512
	mlpOut    = 10
)

// mlpLoss is the softmax cross-entropy of a 2-layer ReLU network:
// arguments w1, b1, w2, b2 (the parameters), x and the one-hot labels.
func mlpLoss(in ...*array.Array) *array.Array {
	w1, b1, w2, b2, x, labels := in[0], in[1], in[2], in[3], in[4], in[5]
	h := ops.MaximumScalar(ops.Add(ops.MatMul(x, w1), b1), 0)
	logits := ops.Add(ops.MatMul(h, w2), b2)
	return ops.Neg(ops.Mean(ops.Sum(ops.Mul(labels, ops.LogSoftmax(logits, -1)), -1)))
}

// mlpArgs returns float32 parameters and a batch, with weights scaled so
// that the activations stay of order 1.
func mlpArgs() []*array.Array {
	scaled := func(n int, seed uint64, s float32) []float32 {
		v := randF32(n, seed)
		for i := range v {
			v[i] *= s
		}
		return v
	}
	onehot := make([]float32, mlpBatch*mlpOut)
	for i := range mlpBatch {
		onehot[i*mlpOut+i*7%mlpOut] = 1
	}
	return []*array.Array{
		array.FromSlice(scaled(mlpIn*mlpHidden, 1, 0.05), mlpIn, mlpHidden),
		array.FromSlice(scaled(mlpHidden, 2, 0.1), mlpHidden),
		array.FromSlice(scaled(mlpHidden*mlpOut, 3, 0.05), mlpHidden, mlpOut),
		array.FromSlice(scaled(mlpOut, 4, 0.1), mlpOut),
		array.FromSlice(randF32(mlpBatch*mlpIn, 5), mlpBatch, mlpIn),
		array.FromSlice(onehot, mlpBatch, mlpOut),
	}
}

// mlpFlops is the multiply-adds of the forward pass's two matmuls, times 2.
const mlpFlops = 2 * mlpBatch * (mlpIn*mlpHidden + mlpHidden*mlpOut)

func BenchmarkMLPForward(b *testing.B) {
	args := mlpArgs()
	for b.Loop() {
		mustEval(b, mlpLoss(args...))
	}
	b.ReportMetric(float64(mlpFlops)*float64(b.N)/b.Elapsed().Seconds()/1e9, "fwd-GFLOP/s")
}

func BenchmarkMLPValueAndGrad(b *testing.B) {
	args := mlpArgs()
	vg := graph.ValueAndGrad(mlpLoss, 0, 1, 2, 3)
	for b.Loop() {
		l, g := vg(args...)
		if err := array.Eval(append(g, l)...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(mlpFlops)*float64(b.N)/b.Elapsed().Seconds()/1e9, "fwd-GFLOP/s")
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
