package nn_test

import (
	"math"
	"slices"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/nn"
	"github.com/fathom-go/fathom/ops"
	"github.com/fathom-go/fathom/random"
)

func TestDropout(t *testing.T) {
	const p = 0.25
	d := nn.NewDropout(random.Key(1), p)
	x := ops.AddScalar(ops.Zeros([]int{64, 64}, array.Float32), 1)
	k0 := d.Key
	y1 := f64(t, d.Forward(x))
	k1 := d.Key
	y2 := f64(t, d.Forward(x))
	if slices.Equal(f64(t, k0), f64(t, k1)) || slices.Equal(f64(t, k1), f64(t, d.Key)) {
		t.Fatal("Forward in training mode did not move the key")
	}
	zeros, same := 0, 0
	for i, v := range y1 {
		switch v {
		case 0:
			zeros++
		case float64(float32(1 / (1 - p))):
		default:
			t.Fatalf("element %d = %v: want 0 or %v", i, v, float32(1/(1-p)))
		}
		if (v == 0) == (y2[i] == 0) {
			same++
		}
	}
	// 4096 Bernoulli draws: the zero fraction is p within 5 standard
	// deviations (0.007 each)
	if f := float64(zeros) / float64(len(y1)); math.Abs(f-p) > 0.035 {
		t.Errorf("dropped %.3f of the elements, want %v", f, p)
	}
	if same == len(y1) {
		t.Error("two calls drew the same mask")
	}
	// the same key gives the same mask
	d.Key = k0
	if !slices.Equal(f64(t, d.Forward(x)), y1) {
		t.Error("the same key gave another mask")
	}
	// the gradient is the mask, scaled
	d.Key = k0
	g := graph.Grad(func(in ...*array.Array) *array.Array { return ops.Sum(d.Forward(in[0])) })(x)
	if !slices.Equal(f64(t, g[0]), y1) {
		t.Error("the gradient of dropout is not its scaled mask")
	}
	if err := nn.Train(d, false); err != nil {
		t.Fatal(err)
	}
	k := d.Key
	if y := d.Forward(x); y != x || d.Key != k {
		t.Error("evaluation mode changed the input or the key")
	}
}

type bnNet struct {
	Conv *nn.Conv2D
	BN   nn.BatchNorm
	Drop *nn.Dropout
	Head *nn.Linear
}

func (n *bnNet) Forward(x *array.Array) *array.Array {
	y := nn.ReLU(n.BN.Forward(n.Conv.Forward(x)))
	y = n.Drop.Forward(ops.Mean(y, 1, 2))
	return n.Head.Forward(y)
}

func newBNNet() *bnNet {
	k := random.Key(9)
	return &bnNet{
		Conv: nn.NewConv2D(k, 2, 3, [2]int{3, 3}, 1, true),
		BN:   *nn.NewBatchNorm(3, 1e-5, 0.1, true, true),
		Drop: nn.NewDropout(random.Key(10), 0.5),
		Head: nn.NewLinear(k, 3, 2, true),
	}
}

func TestTrainSetsNestedLayers(t *testing.T) {
	n := newBNNet()
	if err := nn.Train(n, false); err != nil {
		t.Fatal(err)
	}
	if n.BN.Training || n.Drop.Training {
		t.Fatalf("after Train(false): BatchNorm %v, Dropout %v", n.BN.Training, n.Drop.Training)
	}
	x := randn(1, 4, 5, 5, 2)
	rm := n.BN.RunningMean
	y1, y2 := f64(t, n.Forward(x)), f64(t, n.Forward(x))
	if !slices.Equal(y1, y2) || n.BN.RunningMean != rm {
		t.Error("evaluation mode is not deterministic or moved the running statistics")
	}
	if err := nn.Train(n, true); err != nil {
		t.Fatal(err)
	}
	if !n.BN.Training || !n.Drop.Training {
		t.Fatal("Train(true) did not reach the layers")
	}
	n.Forward(x)
	if n.BN.RunningMean == rm {
		t.Error("training mode did not move the running statistics")
	}
}

// TestValueAndGradKeepsState checks that state a loss moves (running
// statistics, a dropout key) keeps its new value, is not differentiated,
// and that a compiled step that returns it replays one trace with new
// masks every step.
func TestValueAndGradKeepsState(t *testing.T) {
	n := newBNNet()
	loss := func(n *bnNet, in ...*array.Array) *array.Array { return ops.Sum(n.Forward(in[0])) }
	vg := nn.ValueAndGrad(n, loss)
	before := nn.Parameters(n)
	x := random.Normal(random.Key(2), []int{4, 5, 5, 2}, array.Float32, 0, 1)
	_, g := vg(x)
	for _, name := range []string{"bn.running_mean", "bn.running_var", "drop.key"} {
		if _, ok := g[name]; ok {
			t.Errorf("%s has a gradient", name)
		}
		if nn.Parameters(n)[name] == before[name] {
			t.Errorf("%s did not move", name)
		}
	}
	if got := len(g); got != 6 {
		t.Errorf("%d gradients, want 6: %q", got, sortedKeys(g))
	}
	names := sortedKeys(nn.Parameters(n))
	step := compile.Compile(func(in ...*array.Array) []*array.Array {
		if err := setParams(n, names, in); err != nil {
			panic(err)
		}
		l, _ := vg(in[len(names):]...)
		out := []*array.Array{l}
		ps := nn.Parameters(n)
		for _, name := range names {
			out = append(out, ps[name])
		}
		return out
	})
	defer step.Release()
	w := compile.NewWorker()
	defer w.Close()
	var losses []float64
	for range 3 {
		out := w.Call(step, append(params(n, names), x)...)
		if err := setParams(n, names, out[1:]); err != nil {
			t.Fatal(err)
		}
		losses = append(losses, out[0].Item())
	}
	if w.Traces() != 1 {
		t.Errorf("%d traces, want 1", w.Traces())
	}
	// the same input and parameters: only the dropout mask differs
	if losses[0] == losses[1] && losses[1] == losses[2] {
		t.Errorf("replayed steps drew the same dropout mask: losses %v", losses)
	}
}
