package compile

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/randgraph"
	"github.com/fathom-go/fathom/internal/workload"
	"github.com/fathom-go/fathom/ops"
)

func TestGELUFusesIntoOneStep(t *testing.T) {
	f := Compile(workload.GELU)
	defer f.Release()
	x := array.FromSlice([]float32{-2, -1, 0, 0.5, 3}, 5)
	tr := newTrace(f, []*array.Array{x}, array.CurrentStream())
	if len(tr.steps) != 1 {
		t.Fatalf("%d steps, want 1 fused step:\n%v", len(tr.steps), describeSteps(tr))
	}
	c, ok := tr.steps[0].prim.(*Compiled)
	if !ok {
		t.Fatalf("step is %s, not Compiled", tr.steps[0].prim.Name())
	}
	// five scalar constants merge to four distinct ones (0.5 and 1 are
	// distinct, 0.044715 and sqrt(2/pi) too): inputs are x and those
	if len(c.Program().InDTypes) != 5 {
		t.Errorf("fused step reads %d inputs, want 5 (x and 4 scalars):\n%s", len(c.Program().InDTypes), c.Program())
	}
	want, _ := array.ToSlice[float32](workload.GELU(x)[0])
	got, err := array.ToSlice[float32](f.Call(x)[0])
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if math.Abs(float64(got[i]-want[i])) > 1e-6 {
			t.Fatalf("compiled gelu %v, uncompiled %v", got, want)
		}
	}
}

func describeSteps(t *trace) string {
	s := ""
	for _, st := range t.steps {
		s += st.prim.Name() + "\n"
	}
	return s
}

func TestIntermediateOutputsBecomeExtraOutputs(t *testing.T) {
	f := Compile(func(in ...*array.Array) []*array.Array {
		a := ops.Exp(in[0])
		b := ops.Mul(a, in[0])
		return []*array.Array{ops.Add(b, a), a, ops.Sum(b)}
	})
	defer f.Release()
	x := array.FromSlice([]float64{0.5, 1, 2})
	tr := newTrace(f, []*array.Array{x}, array.CurrentStream())
	var fused *Compiled
	for _, st := range tr.steps {
		if c, ok := st.prim.(*Compiled); ok {
			fused = c
		}
	}
	if fused == nil || len(fused.Program().Outputs) != 3 {
		t.Fatalf("want one fused step with 3 outputs (result, a, b for Sum); got %v", describeSteps(tr))
	}
	outs := f.Call(x)
	for i, e := range []float64{0.5, 1, 2} {
		a := math.Exp(e)
		want := []float64{a*e + a, a}
		for k := range 2 {
			v, _ := array.ToSlice[float64](outs[k])
			if math.Abs(v[i]-want[k]) > 1e-12 {
				t.Fatalf("output %d element %d = %v, want %v", k, i, v[i], want[k])
			}
		}
	}
	s := 0.0
	for _, e := range []float64{0.5, 1, 2} {
		s += math.Exp(e) * e
	}
	if got := outs[2].Item(); math.Abs(got-s) > 1e-12 {
		t.Fatalf("sum = %v, want %v", got, s)
	}
}

func TestFusionStaysAcyclic(t *testing.T) {
	// a -> Sum (not fusible) -> b depends on the group through a step
	// outside it: b must not join a's group.
	f := Compile(func(in ...*array.Array) []*array.Array {
		a := ops.Exp(in[0])
		s := ops.Sum(a, 0)
		b := ops.Add(ops.Mul(a, in[0]), s)
		return []*array.Array{b}
	})
	defer f.Release()
	x := array.FromSlice([]float64{1, 2, 3, 4}, 2, 2)
	got, err := array.ToSlice[float64](f.Call(x)[0])
	if err != nil {
		t.Fatal(err)
	}
	xs := []float64{1, 2, 3, 4}
	for i, v := range xs {
		col := i % 2
		s := math.Exp(xs[col]) + math.Exp(xs[col+2])
		if want := math.Exp(v)*v + s; math.Abs(got[i]-want) > 1e-9 {
			t.Fatalf("element %d = %v, want %v", i, got[i], want)
		}
	}
}

func TestRandomElementwiseGraphsCompileExactly(t *testing.T) {
	shapes := [][][]int{
		{{4, 5}, {4, 5}, {4, 5}},
		{{4, 5}, {5}, {4, 1}},
		{{2, 3, 4}, {1, 4}, {}},
		{{3000}, {3000}, {1}}, // more than one tile
	}
	for seed := uint64(0); seed < 120; seed++ {
		r := rand.New(rand.NewPCG(seed, 3))
		depth := 1 + r.IntN(20)
		g := randgraph.New(r, depth, randgraph.Options{})
		sh := shapes[seed%uint64(len(shapes))]
		in := make([]*array.Array, len(sh))
		for i, s := range sh {
			in[i] = randgraph.Input(r, s, seed%2 == 1)
			if seed%4 == 3 {
				in[i] = ops.AsType(in[i], array.Float32)
			}
		}
		tol := 1e-12
		if seed%4 == 3 {
			tol = 1e-5
		}
		f := Compile(g)
		got := f.Call(in...)
		want := g(in...)
		for k := range want {
			if got[k].DType() != want[k].DType() {
				t.Fatalf("seed %d output %d: dtype %v, want %v", seed, k, got[k].DType(), want[k].DType())
			}
			gv, err := array.ToSlice[float64](ops.AsType(got[k], array.Float64))
			if err != nil {
				t.Fatal(err)
			}
			wv, _ := array.ToSlice[float64](ops.AsType(want[k], array.Float64))
			if !slices.Equal(got[k].Shape(), want[k].Shape()) {
				t.Fatalf("seed %d output %d: shape %v, want %v", seed, k, got[k].Shape(), want[k].Shape())
			}
			for i := range wv {
				if !(gv[i] == wv[i] || math.Abs(gv[i]-wv[i]) <= tol*(1+math.Abs(wv[i])) || (math.IsNaN(gv[i]) && math.IsNaN(wv[i]))) {
					t.Fatalf("seed %d (depth %d) output %d element %d: compiled %v, uncompiled %v", seed, depth, k, i, gv[i], wv[i])
				}
			}
		}
		f.Release()
	}
}
