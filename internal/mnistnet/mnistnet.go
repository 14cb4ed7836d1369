// Package mnistnet builds the two MNIST models whose training step
// fathom's benchmarks time (bench's BenchmarkMNISTStep and bench/compare's
// mnist-step rows), so that both time the same networks as PyTorch's in
// bench/compare/workloads.py. Both are float32 and start from
// random.Key(1).
package mnistnet

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/nn"
	"github.com/fathom-go/fathom/ops"
	"github.com/fathom-go/fathom/random"
)

func keys() []*array.Array { return ops.Unstack(random.Split(random.Key(1), 3), 0) }

// MLP is 784-512-512-10 with ReLU.
func MLP() *nn.Sequential {
	ks := keys()
	relu := nn.Fn(nn.ReLU)
	return nn.NewSequential(nn.NewLinear(ks[0], 784, 512, true), relu,
		nn.NewLinear(ks[1], 512, 512, true), relu, nn.NewLinear(ks[2], 512, 10, true))
}

// CNN is conv 3x3 1->32 (padding 1) + ReLU, max-pool 2x2, conv 3x3 32->64
// (padding 1) + ReLU, max-pool 2x2, flatten, linear 3136->10, channels
// last: its input is [batch, 28, 28, 1].
func CNN() *nn.Sequential {
	ks := keys()
	c1 := nn.NewConv2D(ks[0], 1, 32, [2]int{3, 3}, 1, true)
	c2 := nn.NewConv2D(ks[1], 32, 64, [2]int{3, 3}, 1, true)
	c1.Padding, c2.Padding = [2]int{1, 1}, [2]int{1, 1}
	relu, pool := nn.Fn(nn.ReLU), nn.MaxPool2D{Kernel: [2]int{2, 2}}
	flatten := nn.Fn(func(x *array.Array) *array.Array { return ops.Reshape(x, x.Shape()[0], -1) })
	return nn.NewSequential(c1, relu, pool, c2, relu, pool, flatten, nn.NewLinear(ks[2], 3136, 10, true))
}

// CrossEntropy is the models' loss: the mean softmax cross-entropy of
// m's logits for in[0] against the labels in[1], in optim.CompileStep's
// form.
func CrossEntropy(m *nn.Sequential, in ...*array.Array) *array.Array {
	return nn.CrossEntropyLoss(m.Forward(in[0]), in[1], nil, 0, nn.Mean)
}
