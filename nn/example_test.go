package nn_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/nn"
	"github.com/fathom-go/fathom/ops"
	"github.com/fathom-go/fathom/random"
)

// MLP is a model: a plain struct whose exported fields hold the layers.
type MLP struct {
	Hidden *nn.Linear
	Out    *nn.Linear
}

func (m *MLP) Forward(x *array.Array) *array.Array {
	return m.Out.Forward(nn.ReLU(m.Hidden.Forward(x)))
}

func ExampleParameters() {
	m := &MLP{Hidden: nn.NewLinear(random.Key(0), 4, 8, true), Out: nn.NewLinear(random.Key(1), 8, 2, false)}
	ps := nn.Parameters(m)
	names := make([]string, 0, len(ps))
	for n := range ps {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Println(n, ps[n].Shape())
	}
	// Output:
	// hidden.bias [8]
	// hidden.weight [8 4]
	// out.weight [2 8]
}

// A training loop: ValueAndGrad gives the loss and the gradients by
// parameter name, and Update writes the new parameters back.
func ExampleValueAndGrad() {
	m := &MLP{Hidden: nn.NewLinear(random.Key(0), 1, 16, true), Out: nn.NewLinear(random.Key(1), 16, 1, true)}
	x := ops.Reshape(ops.Linspace(-1, 1, 32, array.Float32), 32, 1)
	y := ops.Square(x)
	loss := func(m *MLP, in ...*array.Array) *array.Array {
		return nn.MSELoss(m.Forward(in[0]), in[1], nn.Mean)
	}
	vg := nn.ValueAndGrad(m, loss)
	first, _ := vg(x, y)
	for range 200 {
		_, grads := vg(x, y)
		ps := nn.Parameters(m)
		for n, g := range grads {
			grads[n] = ops.Sub(ps[n], ops.MulScalar(g, 0.1))
		}
		if err := nn.Update(m, grads); err != nil {
			panic(err)
		}
	}
	last, _ := vg(x, y)
	fmt.Println(last.Item() < first.Item()/10)
	// Output: true
}

// A whole training step compiles to one trace: the parameters are its
// inputs and outputs, so each call replays the trace on new values.
func ExampleValueAndGrad_compiled() {
	m := &MLP{Hidden: nn.NewLinear(random.Key(0), 1, 16, true), Out: nn.NewLinear(random.Key(1), 16, 1, true)}
	loss := func(m *MLP, in ...*array.Array) *array.Array {
		return nn.MSELoss(m.Forward(in[0]), in[1], nn.Mean)
	}
	vg := nn.ValueAndGrad(m, loss)
	names := []string{"hidden.bias", "hidden.weight", "out.bias", "out.weight"}
	step := compile.Compile(func(in ...*array.Array) []*array.Array {
		ps := map[string]*array.Array{}
		for i, n := range names {
			ps[n] = in[i]
		}
		if err := nn.Update(m, ps); err != nil {
			panic(err)
		}
		l, grads := vg(in[len(names):]...)
		out := []*array.Array{l}
		for _, n := range names {
			out = append(out, ops.Sub(ps[n], ops.MulScalar(grads[n], 0.1)))
		}
		return out
	})
	defer step.Release()
	w := compile.NewWorker()
	defer w.Close()
	x := ops.Reshape(ops.Linspace(-1, 1, 32, array.Float32), 32, 1)
	y := ops.Square(x)
	for range 100 {
		ps := nn.Parameters(m)
		in := []*array.Array{}
		for _, n := range names {
			in = append(in, ps[n])
		}
		out := w.Call(step, append(in, x, y)...)
		upd := map[string]*array.Array{}
		for i, n := range names {
			upd[n] = out[1+i]
		}
		if err := nn.Update(m, upd); err != nil {
			panic(err)
		}
	}
	fmt.Println("traces:", w.Traces())
	// Output: traces: 1
}

func ExampleSequential() {
	k := random.Split(random.Key(0), 2)
	net := nn.NewSequential(
		nn.NewConv2D(ops.Reshape(ops.SliceAxis(k, 0, ops.R(0, 1)), 2), 1, 4, [2]int{3, 3}, 1, true),
		nn.Fn(nn.ReLU),
		nn.MaxPool2D{Kernel: [2]int{2, 2}},
		nn.Fn(func(x *array.Array) *array.Array { return ops.Reshape(x, x.Shape()[0], -1) }),
		nn.NewLinear(ops.Reshape(ops.SliceAxis(k, 0, ops.R(1, 2)), 2), 4*3*3, 10, true),
	)
	x := ops.Zeros([]int{2, 8, 8, 1}, array.Float32)
	fmt.Println(net.Forward(x).Shape())
	fmt.Println(len(nn.Parameters(net)), nn.Parameters(net)["layers.4.weight"].Shape())
	// Output:
	// [2 10]
	// 4 [10 36]
}

func ExampleSave() {
	dir, err := os.MkdirTemp("", "nn")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.safetensors")
	a := &MLP{Hidden: nn.NewLinear(random.Key(0), 4, 8, true), Out: nn.NewLinear(random.Key(1), 8, 2, false)}
	if err := nn.Save(path, a); err != nil {
		panic(err)
	}
	b := &MLP{Hidden: nn.NewLinear(random.Key(2), 4, 8, true), Out: nn.NewLinear(random.Key(3), 8, 2, false)}
	fmt.Println(nn.Load(path, b))
	fmt.Println(b.Out.Weight.String() == a.Out.Weight.String())
	wrong := &MLP{Hidden: nn.NewLinear(random.Key(2), 4, 8, true), Out: nn.NewLinear(random.Key(3), 8, 3, true)}
	fmt.Println(nn.Load(path, wrong) != nil)
	// Output:
	// <nil>
	// true
	// true
}

func ExampleFreeze() {
	m := &MLP{Hidden: nn.NewLinear(random.Key(0), 4, 8, true), Out: nn.NewLinear(random.Key(1), 8, 2, true)}
	if err := nn.Freeze(m, "hidden"); err != nil {
		panic(err)
	}
	fmt.Println(len(nn.Parameters(m)), len(nn.TrainableParameters(m)))
	// Output: 4 2
}
