package nn_test

import (
	"math"
	"slices"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/nn"
	"github.com/fathom-go/fathom/ops"
	"github.com/fathom-go/fathom/random"
)

// f64 returns a's values as float64s.
func f64(t testing.TB, a *array.Array) []float64 {
	t.Helper()
	v, err := array.ToSlice[float64](ops.AsType(a, array.Float64))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// randn returns a float64 array of standard normal draws from seed.
func randn(seed uint64, shape ...int) *array.Array {
	return random.Normal(random.Key(seed), shape, array.Float64, 0, 1)
}

// fdCheck compares grads, the analytic gradients of the scalar function f
// at xs, with central differences of f in float64, element by element.
func fdCheck(t *testing.T, what string, f func(xs []*array.Array) *array.Array, xs, grads []*array.Array) {
	t.Helper()
	const h = 1e-6
	for i, x := range xs {
		if x.DType() != array.Float64 {
			t.Fatalf("%s: argument %d is %v; finite differences need float64", what, i, x.DType())
		}
		base := f64(t, x)
		g := f64(t, grads[i])
		if !slices.Equal(grads[i].Shape(), x.Shape()) {
			t.Fatalf("%s: gradient %d has shape %v, argument %v", what, i, grads[i].Shape(), x.Shape())
		}
		at := func(j int, d float64) float64 {
			v := slices.Clone(base)
			v[j] += d
			args := slices.Clone(xs)
			args[i] = array.FromSlice(v, x.Shape()...)
			return f(args).Item()
		}
		// a few elements of each argument, spread over it, about 48 in
		// all, keep the checks fast under -race
		step := max(1, len(base)/max(3, 48/len(xs)))
		for j := 0; j < len(base); j += step {
			num := (at(j, h) - at(j, -h)) / (2 * h)
			if d := math.Abs(num - g[j]); d > 1e-5+1e-4*math.Abs(num) {
				t.Errorf("%s: d/d(arg %d)[%d]: analytic %.9g, finite differences %.9g", what, i, j, g[j], num)
				return
			}
		}
	}
}

// checkModelGrads checks ValueAndGrad of loss over model m (float64)
// against finite differences in every trainable parameter.
func checkModelGrads[M any](t *testing.T, what string, m M, loss func(m M, in ...*array.Array) *array.Array, in ...*array.Array) {
	t.Helper()
	params := nn.Parameters(m)
	_, grads := nn.ValueAndGrad(m, loss)(in...)
	// the loss may move state (a Dropout's key): every evaluation starts
	// from the same parameters
	if err := nn.Update(m, params); err != nil {
		t.Fatal(err)
	}
	names := sortedKeys(grads)
	if want := nn.TrainableParameters(m); len(want) != len(grads) {
		t.Fatalf("%s: %d gradients for %d trainable parameters", what, len(grads), len(want))
	}
	xs := make([]*array.Array, len(names))
	gs := make([]*array.Array, len(names))
	for i, n := range names {
		xs[i], gs[i] = params[n], grads[n]
	}
	f := func(ps []*array.Array) *array.Array {
		if err := setParams(m, names, ps); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := nn.Update(m, params); err != nil {
				t.Fatal(err)
			}
		}()
		return loss(m, in...)
	}
	fdCheck(t, what, f, xs, gs)
}

// checkInputGrad checks the gradient of sum(fwd(x)·r), r fixed and random,
// with respect to x.
func checkInputGrad(t *testing.T, what string, fwd func(x *array.Array) *array.Array, x *array.Array) {
	t.Helper()
	r := randn(99, fwd(x).Shape()...)
	loss := func(in ...*array.Array) *array.Array { return ops.Sum(ops.Mul(fwd(in[0]), r)) }
	g := graph.Grad(loss)(x)
	fdCheck(t, what+" (input)", func(xs []*array.Array) *array.Array { return loss(xs...) }, []*array.Array{x}, g)
}

// weighted is a loss for layer tests: sum(layer(x)·r) for a fixed random
// r, so that every output element matters with its own weight.
func weighted[L nn.Layer](shape []int) func(l L, in ...*array.Array) *array.Array {
	r := randn(77, shape...)
	return func(l L, in ...*array.Array) *array.Array { return ops.Sum(ops.Mul(l.Forward(in[0]), r)) }
}

// checkLayer checks a float64 layer's parameter and input gradients.
func checkLayer[L nn.Layer](t *testing.T, what string, l L, x *array.Array) {
	t.Helper()
	out := l.Forward(x)
	checkModelGrads(t, what, l, weighted[L](out.Shape()), x)
	checkInputGrad(t, what, l.Forward, x)
}

func to64(t *testing.T, m any) {
	t.Helper()
	if err := nn.AsType(m, array.Float64); err != nil {
		t.Fatal(err)
	}
}
