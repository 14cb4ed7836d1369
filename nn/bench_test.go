package nn_test

import (
	"slices"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/nn"
	"github.com/fathom-go/fathom/ops"
	"github.com/fathom-go/fathom/random"
)

// BenchmarkMLPStep is the compiled SGD step of a 784-512-512-10 float32
// MLP on batches of 128 (the MNIST model of issue 23): forward, backward
// and update as one replayed trace. GFLOP/s counts the three matrix
// products of each layer (forward, input and weight gradients).
func BenchmarkMLPStep(b *testing.B) {
	const batch = 128
	sizes := []int{784, 512, 512, 10}
	m := &mlp{Scale: array.Scalar(float32(1))}
	flops := 0.0
	for i := range len(sizes) - 1 {
		m.Layers = append(m.Layers, nn.NewLinear(random.Key(uint64(i)), sizes[i], sizes[i+1], true))
		flops += 3 * 2 * batch * float64(sizes[i]*sizes[i+1])
	}
	loss := func(m *mlp, in ...*array.Array) *array.Array {
		return nn.CrossEntropyLoss(m.Forward(in[0]), in[1], nil, 0, nn.Mean)
	}
	vg := nn.ValueAndGrad(m, loss)
	names := sortedKeys(nn.TrainableParameters(m))
	step := compile.Compile(func(in ...*array.Array) []*array.Array {
		if err := setParams(m, names, in); err != nil {
			panic(err)
		}
		l, g := vg(in[len(names):]...)
		out := []*array.Array{l}
		for i, n := range names {
			out = append(out, ops.Sub(in[i], ops.MulScalar(g[n], 0.01)))
		}
		return out
	})
	defer step.Release()
	x := random.Normal(random.Key(9), []int{batch, 784}, array.Float32, 0, 1)
	y := random.RandInt(random.Key(10), 0, 10, []int{batch}, array.Int32)
	ps := params(m, names)
	run := func() {
		out := step.Call(append(slices.Clip(ps), x, y)...)
		if err := array.Eval(out...); err != nil {
			b.Fatal(err)
		}
		ps = out[1:]
	}
	run()
	b.ResetTimer()
	for b.Loop() {
		run()
	}
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
