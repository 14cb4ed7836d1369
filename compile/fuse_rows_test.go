package compile

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/internal/randgraph"
	"github.com/fathom-go/fathom/ops"
)

// The hand-written row functions of the issue: softmax, log-softmax,
// layer norm and RMS norm over the last axis, with keepdims.

func handSoftmax(in ...*array.Array) []*array.Array {
	x := in[0]
	e := ops.Exp(ops.Sub(x, ops.KeepDims(ops.Max, x, -1)))
	return []*array.Array{ops.Div(e, ops.KeepDims(ops.Sum, e, -1))}
}

func handLogSoftmax(in ...*array.Array) []*array.Array {
	x := in[0]
	d := ops.Sub(x, ops.KeepDims(ops.Max, x, -1))
	return []*array.Array{ops.Sub(d, ops.Log(ops.KeepDims(ops.Sum, ops.Exp(d), -1)))}
}

func handLayerNorm(in ...*array.Array) []*array.Array {
	x, w, b := in[0], in[1], in[2]
	mu := ops.KeepDims(ops.Mean, x, -1)
	v := ops.KeepDims(ops.Var, x, -1)
	y := ops.Div(ops.Sub(x, mu), ops.Sqrt(ops.AddScalar(v, 1e-5)))
	return []*array.Array{ops.Add(ops.Mul(y, w), b)}
}

func handRMSNorm(in ...*array.Array) []*array.Array {
	x, w := in[0], in[1]
	ms := ops.KeepDims(ops.Mean, ops.Square(x), -1)
	return []*array.Array{ops.Mul(ops.Mul(x, ops.Rsqrt(ops.AddScalar(ms, 1e-6))), w)}
}

// randArray returns an array of shape with values in [-3, 3] of dtype dt.
func randArray(r *rand.Rand, dt array.DType, shape ...int) *array.Array {
	return ops.AsType(ops.MulScalar(randgraph.Input(r, shape, false), 1.5), dt)
}

// layouts returns x's values as the same [rows, cols] array laid out
// contiguously, transposed, as a slice of a larger array, and (for the
// second input form) broadcast from one row.
func layouts(r *rand.Rand, dt array.DType, rows, cols int) map[string]*array.Array {
	t := ops.Transpose(randArray(r, dt, cols, rows))
	big := randArray(r, dt, rows+3, cols+5)
	s := ops.Slice(big, ops.Range{Start: 1, Stop: rows + 1, Step: 1}, ops.Range{Start: 2, Stop: cols + 2, Step: 1})
	b := ops.BroadcastTo(randArray(r, dt, 1, cols), rows, cols)
	m := map[string]*array.Array{"contiguous": randArray(r, dt, rows, cols), "transposed": t, "sliced": s, "broadcast": b}
	for _, a := range m {
		if err := a.Eval(); err != nil {
			panic(err)
		}
	}
	return m
}

func tolOf(dt array.DType) float64 {
	switch dt {
	case array.Float64:
		return 1e-12
	case array.Float32:
		return 2e-5
	}
	return 1e-2
}

// sameValues fails t unless got and want have one shape and dtype and
// values within tol (relative, with an absolute floor of tol).
func sameValues(t *testing.T, what string, got, want *array.Array, tol float64) {
	t.Helper()
	if !slices.Equal(got.Shape(), want.Shape()) || got.DType() != want.DType() {
		t.Fatalf("%s: %v %v, want %v %v", what, got.Shape(), got.DType(), want.Shape(), want.DType())
	}
	g, err := array.ToSlice[float64](ops.AsType(got, array.Float64))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	w, err := array.ToSlice[float64](ops.AsType(want, array.Float64))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for i := range w {
		if !(g[i] == w[i] || math.Abs(g[i]-w[i]) <= tol*math.Max(1, math.Abs(w[i])) || math.IsNaN(g[i]) && math.IsNaN(w[i])) {
			t.Fatalf("%s: element %d = %v, uncompiled %v", what, i, g[i], w[i])
		}
	}
}

// rowSteps returns the row-wise fused steps of f's trace on in, and the
// number of steps of the trace.
func rowSteps(f func(in ...*array.Array) []*array.Array, in ...*array.Array) (rows []*Compiled, steps int) {
	tr := newTrace(&Func{id: nextID.Add(1), f: f}, in, array.CurrentStream())
	for _, st := range tr.steps {
		if c, ok := st.prim.(*Compiled); ok && c.Program().Rows > 0 {
			rows = append(rows, c)
		}
	}
	return rows, len(tr.steps)
}

func TestRowFunctionsFuseIntoOneStep(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	x := randArray(r, array.Float32, 16, 256)
	w := randArray(r, array.Float32, 256)
	b := randArray(r, array.Float32, 256)
	for _, c := range []struct {
		name string
		f    func(in ...*array.Array) []*array.Array
		in   []*array.Array
	}{
		{"softmax", handSoftmax, []*array.Array{x}},
		{"logsoftmax", handLogSoftmax, []*array.Array{x}},
		{"layernorm", handLayerNorm, []*array.Array{x, w, b}},
		{"rmsnorm", handRMSNorm, []*array.Array{x, w}},
	} {
		rows, steps := rowSteps(c.f, c.in...)
		if len(rows) != 1 || steps != 1 {
			var progs []string
			for _, p := range rows {
				progs = append(progs, p.Program().String())
			}
			t.Errorf("%s: %d steps, %d row-wise, want one row-wise step:\n%v", c.name, steps, len(rows), progs)
		}
	}
	// the softmax's program, pinned: one max pass, one exp-sum pass, one
	// scale pass
	rows, _ := rowSteps(handSoftmax, x)
	want := "rows 1\nr0 = in0 float32\nr1 = Max(r0) float32 row\nr2 = Sub(r0, r1) float32\nr3 = Exp(r2) float32\n" +
		"r4 = Sum(r3) float32 row\nr5 = Div(r3, r4) float32\nout r5"
	if got := rows[0].Program().String(); got != want {
		t.Errorf("softmax program:\n%s\nwant:\n%s", got, want)
	}
}

// rowCase is a function whose compiled values are checked against its
// uncompiled ones, and whether it should fuse row-wise.
type rowCase struct {
	name  string
	f     func(in ...*array.Array) []*array.Array
	extra func(r *rand.Rand, dt array.DType, rows, cols int) []*array.Array // inputs after x
	fuses bool
}

func rowCases() []rowCase {
	vec := func(r *rand.Rand, dt array.DType, _, cols int) []*array.Array {
		return []*array.Array{randArray(r, dt, cols), randArray(r, dt, cols)}
	}
	return []rowCase{
		{"softmax", handSoftmax, nil, true},
		{"logsoftmax", handLogSoftmax, nil, true},
		{"layernorm", handLayerNorm, vec, true},
		{"rmsnorm", func(in ...*array.Array) []*array.Array { return handRMSNorm(in[0], in[1]) }, vec, true},
		{"sum-of-squares-no-keepdims", func(in ...*array.Array) []*array.Array {
			return []*array.Array{ops.Sum(ops.Square(in[0]), -1)}
		}, nil, true},
		{"stats-and-normalised", func(in ...*array.Array) []*array.Array {
			// several outputs: per-row values kept and dropped, and the
			// elementwise result
			x := in[0]
			m := ops.Max(x, -1)
			s := ops.KeepDims(ops.Sum, ops.Exp(x), -1)
			return []*array.Array{m, s, ops.Mul(ops.Sub(x, ops.ExpandDims(m, -1)), s)}
		}, nil, true},
		{"min-prod-std", func(in ...*array.Array) []*array.Array {
			x := ops.MulScalar(in[0], 0.3)
			p := ops.KeepDims(ops.Prod, ops.AddScalar(ops.Tanh(x), 1.5), -1)
			return []*array.Array{ops.Add(ops.Mul(x, ops.KeepDims(ops.Min, x, -1)), p), ops.Std(ops.Exp(x), -1), ops.VarDDOF(x, 1, -1)}
		}, nil, true},
		{"per-row-scalar-work", func(in ...*array.Array) []*array.Array {
			// work on the per-row values between the passes
			x := in[0]
			m := ops.MulScalar(ops.Sqrt(ops.Abs(ops.KeepDims(ops.Mean, x, -1))), 2)
			return []*array.Array{ops.Where(ops.Greater(x, m), x, m)}
		}, nil, true},
		{"non-last-axis", func(in ...*array.Array) []*array.Array {
			// over axis 0: not rows, must stay right
			x := in[0]
			e := ops.Exp(ops.Sub(x, ops.KeepDims(ops.Max, x, 0)))
			return []*array.Array{ops.Div(e, ops.KeepDims(ops.Sum, e, 0))}
		}, nil, false},
	}
}

func TestRowFusedValuesMatchUncompiled(t *testing.T) {
	const rows, cols = 9, 300 // more rows than minRows, a row of two tiles' worth of neither
	for _, dt := range []array.DType{array.Float32, array.Float64, array.Float16} {
		for _, c := range rowCases() {
			r := rand.New(rand.NewPCG(uint64(dt), 7))
			for layout, x := range layouts(r, dt, rows, cols) {
				in := []*array.Array{x}
				if c.extra != nil {
					in = append(in, c.extra(r, dt, rows, cols)...)
				}
				name := fmt.Sprintf("%s/%v/%s", c.name, dt, layout)
				fr, _ := rowSteps(c.f, in...)
				if (len(fr) > 0) != c.fuses {
					t.Errorf("%s: %d row-wise steps, want fused %v", name, len(fr), c.fuses)
				}
				f := Compile(c.f)
				got := f.Call(in...)
				want := c.f(in...)
				for k := range want {
					sameValues(t, fmt.Sprintf("%s output %d", name, k), got[k], want[k], tolOf(dt))
				}
				f.Release()
			}
		}
	}
}

// largeMeanLayerNorm returns the inputs of a layer norm over rows of
// 1e4 plus noise, and the hand-written layer norm of them in float64 (as
// the float64 numpy reference of the row runner's own test,
// backend/cpu/testdata/gen_rows_precision.py), evaluated on the CPU.
// Compiled, the layer norm must keep the precision of the two passes it
// is written with (mean, then the mean square of x - mean): float32 sums
// of 1e4s put the mean off by ~1e-3 of the noise, where E[x^2]-E[x]^2 in
// float32 would be off by the whole variance.
func largeMeanLayerNorm(t *testing.T) (in []*array.Array, want *array.Array) {
	t.Helper()
	r := rand.New(rand.NewPCG(18, 19))
	const rows, cols = 12, 1000
	x := ops.AsType(ops.AddScalar(randgraph.Input(r, []int{rows, cols}, false), 1e4), array.Float32)
	w := ops.AsType(ops.AddScalar(ops.MulScalar(randgraph.Input(r, []int{cols}, false), 0.1), 1), array.Float32)
	in = []*array.Array{x, w, randArray(r, array.Float32, cols)}
	f64 := make([]*array.Array, len(in))
	for i, a := range in {
		f64[i] = ops.AsType(a, array.Float64)
	}
	want = ops.AsType(handLayerNorm(f64...)[0], array.Float32)
	if err := array.Eval(append(in, want)...); err != nil {
		t.Fatal(err)
	}
	return in, want
}

func TestRowFusedLayerNormLargeMean(t *testing.T) {
	in, want := largeMeanLayerNorm(t)
	if fr, _ := rowSteps(handLayerNorm, in...); len(fr) != 1 {
		t.Fatalf("%d row-wise steps, want 1", len(fr))
	}
	f := Compile(handLayerNorm)
	defer f.Release()
	got := f.Call(in...)[0]
	sameValues(t, "against uncompiled", got, handLayerNorm(in...)[0], 1e-4)
	sameValues(t, "against float64", got, want, 5e-3)
}

func TestRowFusionOverTrailingAxes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	x := randArray(r, array.Float32, 10, 12, 20)
	f := func(in ...*array.Array) []*array.Array {
		x := in[0]
		e := ops.Exp(ops.Sub(x, ops.KeepDims(ops.Max, x, 1, 2)))
		return []*array.Array{ops.Div(e, ops.KeepDims(ops.Sum, e, 1, 2)), ops.Mean(ops.Square(x), -2, -1)}
	}
	// two groups that share only an input: two steps, each over 2 axes
	if rows, steps := rowSteps(f, x); len(rows) != 2 || rows[0].Program().Rows != 2 || rows[1].Program().Rows != 2 || steps != 2 {
		t.Fatalf("%d steps, %d row-wise: want two over 2 row axes", steps, len(rows))
	}
	cf := Compile(f)
	defer cf.Release()
	got, want := cf.Call(x), f(x)
	for k := range want {
		sameValues(t, fmt.Sprintf("output %d", k), got[k], want[k], 2e-5)
	}
}

// TestShortRowsAreNotFusedRowWise guards "compiling never makes a
// function slower": rows shorter than minRowLen cost the row runner more
// per row than they save.
func TestShortRowsAreNotFusedRowWise(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	x := randArray(r, array.Float32, 512, 10)
	if rows, _ := rowSteps(handSoftmax, x); len(rows) != 0 {
		t.Fatalf("rows of 10 fused row-wise:\n%s", rows[0].Program())
	}
	// one long row: a plain reduction shares it over the cores
	y := randArray(r, array.Float32, 2, 1<<16)
	if rows, _ := rowSteps(handSoftmax, y); len(rows) != 0 {
		t.Fatalf("two rows of 64K fused row-wise:\n%s", rows[0].Program())
	}
}

// TestLongRowsRecomputeInsteadOfBuffering runs a row past the row
// buffers' budget, where the exp-sum pass's values are computed again in
// the scale pass.
func TestLongRowsRecomputeInsteadOfBuffering(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	f := func(in ...*array.Array) []*array.Array {
		x := in[0]
		d := ops.Sub(x, ops.KeepDims(ops.Max, x, -1))
		e := ops.Exp(d)
		return []*array.Array{ops.Mul(ops.Div(e, ops.KeepDims(ops.Sum, e, -1)), d)}
	}
	x := randArray(r, array.Float64, 8, 40000)
	if rows, _ := rowSteps(f, x); len(rows) != 1 {
		t.Fatalf("%d row-wise steps, want 1", len(rows))
	}
	cf := Compile(f)
	defer cf.Release()
	sameValues(t, "long rows", cf.Call(x)[0], f(x)[0], 1e-12)
}

func TestRowFusedGradientsMatchUncompiled(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 11))
	x := randArray(r, array.Float64, 12, 160)
	w := randArray(r, array.Float64, 160)
	b := randArray(r, array.Float64, 160)
	c := randArray(r, array.Float64, 12, 160)
	losses := map[string]func(in ...*array.Array) *array.Array{
		"softmax": func(in ...*array.Array) *array.Array { return ops.Sum(ops.Mul(handSoftmax(in[0])[0], in[3])) },
		"logsoftmax": func(in ...*array.Array) *array.Array {
			return ops.Sum(ops.Mul(handLogSoftmax(in[0])[0], in[3]))
		},
		"layernorm": func(in ...*array.Array) *array.Array {
			return ops.Sum(ops.Mul(handLayerNorm(in[0], in[1], in[2])[0], in[3]))
		},
		"rmsnorm": func(in ...*array.Array) *array.Array {
			return ops.Sum(ops.Mul(handRMSNorm(in[0], in[1])[0], in[3]))
		},
	}
	for name, loss := range losses {
		g := graph.Grad(loss, 0, 1, 2)
		f := Compile(g)
		got := f.Call(x, w, b, c)
		want := g(x, w, b, c)
		for k := range want {
			sameValues(t, fmt.Sprintf("%s gradient %d", name, k), got[k], want[k], 1e-10)
		}
		f.Release()
	}
}

func TestRowFusedTracesOnce(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 13))
	runs := 0
	f := Compile(func(in ...*array.Array) []*array.Array {
		runs++
		return handSoftmax(in...)
	})
	defer f.Release()
	w := NewWorker()
	defer w.Close()
	a, b := randArray(r, array.Float32, 16, 256), randArray(r, array.Float32, 16, 512)
	for range 3 {
		for _, x := range []*array.Array{a, b} {
			sameValues(t, "softmax", w.Call(f, x)[0], handSoftmax(x)[0], 2e-5)
		}
	}
	if runs != 2 || w.Traces() != 2 {
		t.Fatalf("function ran %d times, worker holds %d traces; want 2 and 2", runs, w.Traces())
	}
}

func TestRowFusedShapeless(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 15))
	runs := 0
	f := Compile(func(in ...*array.Array) []*array.Array {
		runs++
		return handLayerNorm(in...)
	}, Shapeless())
	defer f.Release()
	for _, n := range []int{256, 300, 200} {
		x, w, b := randArray(r, array.Float32, 10, n), randArray(r, array.Float32, n), randArray(r, array.Float32, n)
		sameValues(t, fmt.Sprintf("layer norm of %d", n), f.Call(x, w, b)[0], handLayerNorm(x, w, b)[0], 2e-5)
	}
	if runs != 1 {
		t.Fatalf("traced %d times, want 1", runs)
	}
}

func TestRowFusedConcurrentCalls(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 17))
	x := randArray(r, array.Float32, 16, 256)
	w, b := randArray(r, array.Float32, 256), randArray(r, array.Float32, 256)
	want, err := array.ToSlice[float32](handLayerNorm(x, w, b)[0])
	if err != nil {
		t.Fatal(err)
	}
	f := Compile(handLayerNorm)
	defer f.Release()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var wk *Worker
			if g%2 == 0 {
				wk = NewWorker()
				defer wk.Close()
			}
			for range 5 {
				var out []*array.Array
				if wk != nil {
					out = wk.Call(f, x, w, b)
				} else {
					out = f.Call(x, w, b)
				}
				got, err := array.ToSlice[float32](out[0])
				if err != nil {
					errs <- err
					return
				}
				for i := range want {
					if math.Abs(float64(got[i]-want[i])) > 2e-5*math.Max(1, math.Abs(float64(want[i]))) {
						errs <- fmt.Errorf("element %d = %v, want %v", i, got[i], want[i])
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
