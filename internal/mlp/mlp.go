// Package mlp is the network that fathom's benchmarks train: a 2-layer
// ReLU network, batch 256, 784 -> 512 -> 10, with a softmax cross-entropy
// loss. bench measures its forward pass and gradients with go test;
// bench/compare runs one training step against numpy and PyTorch.
package mlp

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/internal/workload"
	"github.com/fathom-go/fathom/ops"
)

// The network's sizes.
const (
	Batch  = 256
	In     = 784
	Hidden = 512
	Out    = 10
)

// ForwardFlops is the multiply-adds of the forward pass's two matmuls,
// times 2.
const ForwardFlops = 2 * Batch * (In*Hidden + Hidden*Out)

// StepFlops adds to ForwardFlops the matmuls of the gradients: the two
// weights' and the hidden layer's (the input's is not needed).
const StepFlops = ForwardFlops + 2*Batch*(In*Hidden+2*Hidden*Out)

// Loss is the network's loss. Its arguments are w1, b1, w2, b2 (the
// parameters), a batch x and its one-hot labels.
func Loss(in ...*array.Array) *array.Array {
	w1, b1, w2, b2, x, labels := in[0], in[1], in[2], in[3], in[4], in[5]
	h := ops.MaximumScalar(ops.Add(ops.MatMul(x, w1), b1), 0)
	logits := ops.Add(ops.MatMul(h, w2), b2)
	return ops.Neg(ops.Mean(ops.Sum(ops.Mul(labels, ops.LogSoftmax(logits, -1)), -1)))
}

// Step is one training step: the gradients of Loss with respect to the
// four parameters, then the loss, for compile.Compile to trace.
func Step(in ...*array.Array) []*array.Array {
	loss, grads := graph.ValueAndGrad(Loss, 0, 1, 2, 3)(in...)
	return append(grads, loss)
}

// LearningRate is TrainStep's step size.
const LearningRate = 0.01

// TrainStep is one step of plain gradient descent, for compile.Compile to
// trace: Loss's arguments in, the four updated parameters and the loss
// out. A training loop feeds the parameters back as the next step's
// arguments, so each step's parameters die as the next are made.
func TrainStep(in ...*array.Array) []*array.Array {
	out := Step(in...)
	for i := range 4 {
		out[i] = ops.Sub(in[i], ops.MulScalar(out[i], LearningRate))
	}
	return out
}

// Args returns float32 parameters, scaled so that the activations stay of
// order 1, and a batch with one-hot labels: Loss's arguments.
func Args() []*array.Array { return ArgsHidden(Hidden) }

// ArgsHidden is Args for a hidden layer of hidden units instead of
// Hidden: issue 22 measured its warm-up stall on 784-256-10.
func ArgsHidden(hidden int) []*array.Array {
	uniform := func(n int, seed uint64, s float32) []float32 {
		v := workload.RandF32(n, seed)
		for i := range v {
			v[i] *= s
		}
		return v
	}
	onehot := make([]float32, Batch*Out)
	for i := range Batch {
		onehot[i*Out+i*7%Out] = 1
	}
	return []*array.Array{
		array.FromSlice(uniform(In*hidden, 1, 0.05), In, hidden),
		array.FromSlice(uniform(hidden, 2, 0.1), hidden),
		array.FromSlice(uniform(hidden*Out, 3, 0.05), hidden, Out),
		array.FromSlice(uniform(Out, 4, 0.1), Out),
		array.FromSlice(uniform(Batch*In, 5, 1), Batch, In),
		array.FromSlice(onehot, Batch, Out),
	}
}
