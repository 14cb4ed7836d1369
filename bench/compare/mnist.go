package main

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/mnistnet"
	"github.com/fathom-go/fathom/nn"
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
	step := func(model func() *nn.Sequential, x ...int) func() func() {
		return func() func() {
			s := optim.CompileStep(model(), optim.NewAdam(1e-3), mnistnet.CrossEntropy)
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
		{name: "mnist-step/mlp", flops: 2 * batch * (3*(512*512+512*10) + 2*784*512), setup: step(mnistnet.MLP, batch, 784)},
		{name: "mnist-step/cnn", flops: float64(2*conv1 + 3*conv2 + 3*2*batch*3136*10), setup: step(mnistnet.CNN, batch, 28, 28, 1)},
	}
}
