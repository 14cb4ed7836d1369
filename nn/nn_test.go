package nn_test

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/nn"
	"github.com/fathom-go/fathom/ops"
	"github.com/fathom-go/fathom/random"
)

type mlp struct {
	Layers []*nn.Linear
	Scale  *array.Array `nn:"scale,state"`
}

func (m *mlp) Forward(x *array.Array) *array.Array {
	for i, l := range m.Layers {
		x = l.Forward(x)
		if i < len(m.Layers)-1 {
			x = nn.ReLU(x)
		}
	}
	return ops.Mul(x, m.Scale)
}

// setParams stores xs in m under names, in order: a compiled training
// step takes the parameters in as its inputs.
func setParams(m any, names []string, xs []*array.Array) error {
	set := make(map[string]*array.Array, len(names))
	for i, n := range names {
		set[n] = xs[i]
	}
	return nn.Update(m, set)
}

// params returns the parameters of m named names, in order.
func params(m any, names []string) []*array.Array {
	ps := nn.Parameters(m)
	out := make([]*array.Array, len(names))
	for i, n := range names {
		out[i] = ps[n]
	}
	return out
}

func newMLP(t *testing.T, sizes ...int) *mlp {
	m := &mlp{Scale: array.Scalar(0.5)}
	for i := range len(sizes) - 1 {
		m.Layers = append(m.Layers, nn.NewLinear(random.Key(uint64(3+i)), sizes[i], sizes[i+1], true))
	}
	to64(t, m)
	return m
}

func mseLoss(m *mlp, in ...*array.Array) *array.Array {
	return nn.MSELoss(m.Forward(in[0]), in[1], nn.Mean)
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func TestParametersNames(t *testing.T) {
	m := newMLP(t, 3, 4, 2)
	want := []string{"layers.0.bias", "layers.0.weight", "layers.1.bias", "layers.1.weight", "scale"}
	if got := sortedKeys(nn.Parameters(m)); !slices.Equal(got, want) {
		t.Errorf("Parameters: %q, want %q", got, want)
	}
	if got := sortedKeys(nn.TrainableParameters(m)); !slices.Equal(got, want[:4]) {
		t.Errorf("TrainableParameters: %q, want %q", got, want[:4])
	}
	if s := nn.Parameters(m)["layers.1.weight"].Shape(); !slices.Equal(s, []int{2, 4}) {
		t.Errorf("layers.1.weight shape %v, want [2 4]", s)
	}
}

func TestValueAndGradMatchesFiniteDifferences(t *testing.T) {
	m := newMLP(t, 3, 5, 2)
	x, y := randn(1, 4, 3), randn(2, 4, 2)
	checkModelGrads(t, "mlp", m, mseLoss, x, y)
	// the model's own arrays are back in place after the call
	before := nn.Parameters(m)
	nn.ValueAndGrad(m, mseLoss)(x, y)
	for n, a := range nn.Parameters(m) {
		if a != before[n] {
			t.Errorf("%s was not restored", n)
		}
	}
}

func TestValueAndGradOfAModelValue(t *testing.T) {
	type pair struct{ A, B *array.Array }
	p := pair{A: array.FromSlice([]float64{1, 2}), B: array.FromSlice([]float64{3, 4})}
	v, g := nn.ValueAndGrad(p, func(p pair, in ...*array.Array) *array.Array {
		return ops.Sum(ops.Mul(ops.Mul(p.A, p.B), in[0]))
	})(array.FromSlice([]float64{1, 10}))
	if v.Item() != 83 {
		t.Errorf("value %v, want 83", v.Item())
	}
	if got, want := f64(t, g["a"]), []float64{3, 40}; !slices.Equal(got, want) {
		t.Errorf("d/da %v, want %v", got, want)
	}
	if got, want := f64(t, g["b"]), []float64{1, 20}; !slices.Equal(got, want) {
		t.Errorf("d/db %v, want %v", got, want)
	}
}

func TestFreezeLeavesParametersOutOfGradients(t *testing.T) {
	m := newMLP(t, 3, 4, 4, 2)
	if err := nn.Freeze(m, "layers.1"); err != nil {
		t.Fatal(err)
	}
	x, y := randn(1, 2, 3), randn(2, 2, 2)
	_, g := nn.ValueAndGrad(m, mseLoss)(x, y)
	want := []string{"layers.0.bias", "layers.0.weight", "layers.2.bias", "layers.2.weight"}
	if got := sortedKeys(g); !slices.Equal(got, want) {
		t.Errorf("gradients of %q, want %q", got, want)
	}
	// freezing is the slot's: a new array from Update stays frozen
	if err := nn.Update(m, map[string]*array.Array{"layers.1.bias": ops.ZerosLike(m.Layers[1].Bias)}); err != nil {
		t.Fatal(err)
	}
	if _, ok := nn.TrainableParameters(m)["layers.1.bias"]; ok {
		t.Error("a frozen slot thawed when its array was replaced")
	}
	checkModelGrads(t, "frozen mlp", m, mseLoss, x, y)
	if err := nn.Unfreeze(m, "layers.1.weight"); err != nil {
		t.Fatal(err)
	}
	want = []string{"layers.0.bias", "layers.0.weight", "layers.1.weight", "layers.2.bias", "layers.2.weight"}
	if got := sortedKeys(nn.TrainableParameters(m)); !slices.Equal(got, want) {
		t.Errorf("after Unfreeze: %q, want %q", got, want)
	}
	if err := nn.Freeze(m); err != nil {
		t.Fatal(err)
	}
	if got := nn.TrainableParameters(m); len(got) != 0 {
		t.Errorf("after freezing everything: %q", sortedKeys(got))
	}
	v, g := nn.ValueAndGrad(m, mseLoss)(x, y)
	if len(g) != 0 || v.Ndim() != 0 {
		t.Errorf("all frozen: value shape %v, %d gradients", v.Shape(), len(g))
	}
	if err := nn.Unfreeze(m); err != nil {
		t.Fatal(err)
	}
	// a prefix is whole steps: "layers.1" is not "layers.10"
	err := nn.Freeze(m, "layers.0", "layer")
	if !hasErr(err, "nn.Freeze", `"layer"`) {
		t.Errorf("Freeze of an unknown prefix: %v", err)
	}
}

func hasErr(err error, op string, parts ...string) bool {
	var e *array.Error
	if !errors.As(err, &e) || e.Op != op {
		return false
	}
	for _, p := range parts {
		if !strings.Contains(e.Error(), p) {
			return false
		}
	}
	return true
}

func TestUpdateChecks(t *testing.T) {
	m := newMLP(t, 3, 4, 2)
	before := nn.Parameters(m)
	cases := []struct {
		name   string
		params map[string]*array.Array
		parts  []string
	}{
		{"shape", map[string]*array.Array{"layers.0.weight": ops.Zeros([]int{3, 4}, array.Float64)},
			[]string{`"layers.0.weight"`, "[4 3]", "[3 4]"}},
		{"dtype", map[string]*array.Array{"layers.0.bias": ops.Zeros([]int{4}, array.Float32)},
			[]string{`"layers.0.bias"`, "float64", "float32"}},
		{"name", map[string]*array.Array{"layers.0.weights": ops.Zeros([]int{4, 3}, array.Float64)},
			[]string{`"layers.0.weights"`}},
		{"nil", map[string]*array.Array{"scale": nil}, []string{`"scale"`, "nil"}},
	}
	for _, c := range cases {
		if err := nn.Update(m, c.params); !hasErr(err, "nn.Update", c.parts...) {
			t.Errorf("%s: %v, want an nn.Update error with %q", c.name, err, c.parts)
		}
	}
	for n, a := range nn.Parameters(m) {
		if a != before[n] {
			t.Errorf("%s changed by a failed Update", n)
		}
	}
	err := array.Try(func() { nn.Parameters(&mlp{Layers: []*nn.Linear{nil}, Scale: array.Scalar(1.0)}) })
	if !hasErr(err, "nn.Parameters", `"layers.0"`, "nil") {
		t.Errorf("Parameters of a tree with a nil layer: %v", err)
	}
}

// TestCompiledTrainingStepIsOneTrace compiles a whole SGD step over a
// model (forward, backward, update) and checks it replays one trace and
// gives the uncompiled step's parameters.
func TestCompiledTrainingStepIsOneTrace(t *testing.T) {
	m := newMLP(t, 3, 6, 2)
	ref := newMLP(t, 3, 6, 2)
	names := sortedKeys(nn.Parameters(m))
	const lr = 0.1
	vg := nn.ValueAndGrad(m, mseLoss)
	step := func(in ...*array.Array) []*array.Array {
		if err := setParams(m, names, in); err != nil {
			panic(err)
		}
		loss, g := vg(in[len(names):]...)
		out := []*array.Array{loss}
		for _, n := range names {
			p := nn.Parameters(m)[n]
			if gn, ok := g[n]; ok {
				p = ops.Sub(p, ops.MulScalar(gn, lr))
			}
			out = append(out, p)
		}
		return out
	}
	traced := 0
	f := compile.Compile(func(in ...*array.Array) []*array.Array { traced++; return step(in...) })
	defer f.Release()
	w := compile.NewWorker()
	defer w.Close()
	refVG := nn.ValueAndGrad(ref, mseLoss)
	for i := range 4 {
		x, y := randn(uint64(10+i), 5, 3), randn(uint64(20+i), 5, 2)
		out := w.Call(f, append(params(m, names), x, y)...)
		if err := setParams(m, names, out[1:]); err != nil {
			t.Fatal(err)
		}
		refLoss, g := refVG(x, y)
		refUpd := map[string]*array.Array{}
		for n, gn := range g {
			refUpd[n] = ops.Sub(nn.Parameters(ref)[n], ops.MulScalar(gn, lr))
		}
		if err := nn.Update(ref, refUpd); err != nil {
			t.Fatal(err)
		}
		if a, b := out[0].Item(), refLoss.Item(); !near(a, b, 1e-12) {
			t.Errorf("step %d: compiled loss %v, uncompiled %v", i, a, b)
		}
	}
	if traced != 1 || w.Traces() != 1 {
		t.Errorf("traced %d times, %d traces cached; want 1 and 1", traced, w.Traces())
	}
	for n, a := range nn.Parameters(m) {
		want := f64(t, nn.Parameters(ref)[n])
		for j, v := range f64(t, a) {
			if !near(v, want[j], 1e-12) {
				t.Fatalf("%s[%d]: compiled %v, uncompiled %v", n, j, v, want[j])
			}
		}
	}
}

func near(a, b, tol float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	m := b
	if m < 0 {
		m = -m
	}
	return d <= tol*(1+m)
}

// TestValueAndGradResultsAreNotTracers guards the untracing of a
// top-level ValueAndGrad's results: parameters updated from tracer
// gradients would make every compiled step that takes them run
// uncompiled.
func TestValueAndGradResultsAreNotTracers(t *testing.T) {
	m := newMLP(t, 3, 4, 2)
	v, g := nn.ValueAndGrad(m, mseLoss)(randn(1, 2, 3), randn(2, 2, 2))
	if v.Tracer() {
		t.Error("the loss is a tracer")
	}
	for n, a := range g {
		if a.Tracer() {
			t.Errorf("the gradient of %s is a tracer", n)
		}
	}
}
