package bench

import (
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/mnistnet"
	"github.com/fathom-go/fathom/nn"
	"github.com/fathom-go/fathom/optim"
	"github.com/fathom-go/fathom/random"
)

// Issue 23's training-step goals: a whole compiled step (forward,
// backward, Adam) of the MNIST models, batch 128, float32, against
// PyTorch's eager step (bench/compare's mnist-step rows run both).

const mnistBatch = 128

// The models' flops per step: each layer's forward matmul or convolution,
// its weight's gradient (as many again) and its input's gradient (as many
// again, but for the first layer, whose input needs none). Bias, ReLU,
// pooling, the loss and Adam are memory-bound and not counted.
const (
	mnistMLPFlops = 2 * mnistBatch * (3*(512*512+512*10) + 2*784*512)
	conv1Flops    = 2 * mnistBatch * 28 * 28 * 32 * 9
	conv2Flops    = 2 * mnistBatch * 14 * 14 * 64 * 9 * 32
	mnistCNNFlops = 2*conv1Flops + 3*conv2Flops + 3*2*mnistBatch*3136*10
)

func BenchmarkMNISTStep(b *testing.B) {
	y := random.RandInt(random.Key(3), 0, 10, []int{mnistBatch}, array.Int32)
	for _, c := range []struct {
		name  string
		model *nn.Sequential
		x     []int
		flops float64
	}{
		{"mlp", mnistnet.MLP(), []int{mnistBatch, 784}, mnistMLPFlops},
		{"cnn", mnistnet.CNN(), []int{mnistBatch, 28, 28, 1}, mnistCNNFlops},
	} {
		b.Run(c.name, func(b *testing.B) {
			step := optim.CompileStep(c.model, optim.NewAdam(1e-3), mnistnet.CrossEntropy)
			defer step.Release()
			x := random.Uniform(random.Key(2), 0, 1, c.x, array.Float32)
			if err := array.Eval(x, y); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := step.Call(x, y); err != nil {
					b.Fatal(err)
				}
			}
			s := b.Elapsed().Seconds()
			b.ReportMetric(c.flops*float64(b.N)/s/1e9, "GFLOP/s")
			b.ReportMetric(float64(b.N)/s, "steps/s")
		})
	}
}
