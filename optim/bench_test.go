package optim

import (
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/nn"
	"github.com/fathom-go/fathom/ops"
	"github.com/fathom-go/fathom/random"
)

// mnistShapes are the parameters of the MNIST MLP, 784-512-512-10:
// 669,706 float32 numbers.
var mnistShapes = map[string][]int{
	"layers.0.weight": {512, 784}, "layers.0.bias": {512},
	"layers.1.weight": {512, 512}, "layers.1.bias": {512},
	"layers.2.weight": {10, 512}, "layers.2.bias": {10},
}

func benchTrees(b *testing.B) (params, grads map[string]*array.Array, n int) {
	params, grads = map[string]*array.Array{}, map[string]*array.Array{}
	seed := uint64(0)
	for name, s := range mnistShapes {
		seed++
		params[name] = random.Normal(random.Key(seed), s, array.Float32, 0, 1)
		grads[name] = random.Normal(random.Key(seed+100), s, array.Float32, 0, 1)
		n += params[name].Size()
	}
	if err := array.Eval(evalList(params, grads)...); err != nil {
		b.Fatal(err)
	}
	return params, grads, n
}

// adamBytes is the memory an Adam update must move per parameter: read
// p, g, m and v, write p, m and v, 4 bytes each.
const adamBytes = 7 * 4

// BenchmarkAdamUpdate is Adam's update of the MNIST MLP's parameters,
// one operation at a time: each of the dozen operations per parameter
// reads and writes memory.
func BenchmarkAdamUpdate(b *testing.B) {
	params, grads, n := benchTrees(b)
	opt := NewAdam(1e-3)
	opt.Init(params)
	b.SetBytes(int64(n * adamBytes))
	for b.Loop() {
		params = opt.Update(params, grads)
		if err := array.Eval(evalList(params, opt.State())...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAdamUpdateCompiled is the same update compiled
// (CompileUpdate): each parameter's update is one fused pass.
func BenchmarkAdamUpdateCompiled(b *testing.B) {
	params, grads, n := benchTrees(b)
	upd := CompileUpdate(NewAdam(1e-3))
	defer upd.Release()
	b.SetBytes(int64(n * adamBytes))
	for b.Loop() {
		var err error
		if params, err = upd.Call(params, grads); err != nil {
			b.Fatal(err)
		}
	}
}

// mnistMLP is the MNIST MLP, 784-512-512-10 with ReLU.
type mnistMLP struct {
	Layers []*nn.Linear
}

func (m *mnistMLP) forward(x *array.Array) *array.Array {
	for i, l := range m.Layers {
		x = l.Forward(x)
		if i < len(m.Layers)-1 {
			x = nn.ReLU(x)
		}
	}
	return x
}

// BenchmarkCompiledStepMLP is a whole compiled training step of the MNIST
// MLP with Adam on a batch of 128 (bench/mnist_test.go has the figures
// against PyTorch); here it shows what CompileStep adds around the
// replay. Flops: forward 2·128·669,706, backward twice that.
func BenchmarkCompiledStepMLP(b *testing.B) {
	keys := random.Split(random.Key(1), 3)
	key := func(i int) *array.Array { return ops.Reshape(ops.SliceAxis(keys, 0, ops.R(i, i+1)), 2) }
	m := &mnistMLP{Layers: []*nn.Linear{
		nn.NewLinear(key(0), 784, 512, true), nn.NewLinear(key(1), 512, 512, true), nn.NewLinear(key(2), 512, 10, true),
	}}
	x := random.Uniform(random.Key(2), 0, 1, []int{128, 784}, array.Float32)
	y := random.RandInt(random.Key(3), 0, 10, []int{128}, array.Int32)
	if err := array.Eval(x, y); err != nil {
		b.Fatal(err)
	}
	step := CompileStep(m, NewAdam(1e-3), func(m *mnistMLP, in ...*array.Array) *array.Array {
		return nn.CrossEntropyLoss(m.forward(in[0]), in[1], nil, 0, nn.Mean)
	})
	defer step.Release()
	for b.Loop() {
		if _, err := step.Call(x, y); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(3*2*128*669706*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
