package main

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/nn"
	"github.com/fathom-go/fathom/ops"
	"github.com/fathom-go/fathom/optim"
	"github.com/fathom-go/fathom/random"
)

// mnistTasks are issue 23's training-step rows: one compiled step
// (optim.CompileStep: forward, backward and Adam) of the MNIST MLP and
// CNN on a batch of 128 float32 images, against PyTorch's eager step
// (zero_grad, forward, backward, torch.optim.Adam.step) of the same
// models, the CNN in PyTorch's NCHW; workloads.py's build_mnist builds
// them. The flops are those of the matmuls and convolutions (see
// bench/mnist_test.go).
func mnistTasks() []task {
	const batch = 128
	relu := nn.Fn(nn.ReLU)
	keys := func() []*array.Array { return ops.Unstack(random.Split(random.Key(1), 3), 0) }
	mlp := func() *nn.Sequential {
		ks := keys()
		return nn.NewSequential(nn.NewLinear(ks[0], 784, 512, true), relu,
			nn.NewLinear(ks[1], 512, 512, true), relu, nn.NewLinear(ks[2], 512, 10, true))
	}
	cnn := func() *nn.Sequential {
		ks := keys()
		c1 := nn.NewConv2D(ks[0], 1, 32, [2]int{3, 3}, 1, true)
		c2 := nn.NewConv2D(ks[1], 32, 64, [2]int{3, 3}, 1, true)
		c1.Padding, c2.Padding = [2]int{1, 1}, [2]int{1, 1}
		pool := nn.MaxPool2D{Kernel: [2]int{2, 2}}
		flatten := nn.Fn(func(x *array.Array) *array.Array { return ops.Reshape(x, batch, -1) })
		return nn.NewSequential(c1, relu, pool, c2, relu, pool, flatten, nn.NewLinear(ks[2], 3136, 10, true))
	}
	step := func(model func() *nn.Sequential, x ...int) func() func() {
		return func() func() {
			s := optim.CompileStep(model(), optim.NewAdam(1e-3), func(m *nn.Sequential, in ...*array.Array) *array.Array {
				return nn.CrossEntropyLoss(m.Forward(in[0]), in[1], nil, 0, nn.Mean)
			})
			xs := random.Uniform(random.Key(2), 0, 1, x, array.Float32)
			y := random.RandInt(random.Key(3), 0, 10, []int{batch}, array.Int32)
			if err := array.Eval(xs, y); err != nil {
				panic(err)
			}
			return func() {
				if _, err := s.Call(xs, y); err != nil {
					panic(err)
				}
			}
		}
	}
	conv1, conv2 := 2*batch*28*28*32*9, 2*batch*14*14*64*9*32
	return []task{
		{name: "mnist-step/mlp", flops: 2 * batch * (3*(512*512+512*10) + 2*784*512), setup: step(mlp, batch, 784)},
		{name: "mnist-step/cnn", flops: float64(2*conv1 + 3*conv2 + 3*2*batch*3136*10), setup: step(cnn, batch, 28, 28, 1)},
	}
}
