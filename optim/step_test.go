package optim

import (
	"fmt"
	"maps"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/nn"
	"github.com/fathom-go/fathom/ops"
	"github.com/fathom-go/fathom/random"
)

type mlp struct {
	Hidden *nn.Linear
	Out    *nn.Linear
}

func newMLP(seed uint64) *mlp {
	ks := random.Split(random.Key(seed), 2)
	k := func(i int) *array.Array { return ops.Reshape(ops.SliceAxis(ks, 0, ops.R(i, i+1)), 2) }
	return &mlp{Hidden: nn.NewLinear(k(0), 4, 8, true), Out: nn.NewLinear(k(1), 8, 2, true)}
}

// mse is the model's mean squared error on (x, y). calls counts how often
// it runs: a compiled step runs it only while tracing.
func mse(calls *atomic.Int64) LossFunc[*mlp] {
	return func(m *mlp, in ...*array.Array) *array.Array {
		if calls != nil {
			calls.Add(1)
		}
		pred := m.Out.Forward(ops.Tanh(m.Hidden.Forward(in[0])))
		return ops.Mean(ops.Square(ops.Sub(pred, in[1])))
	}
}

// batch returns the i-th batch of a fixed stream of inputs and targets.
func batch(i int) (x, y *array.Array) {
	ks := random.Split(random.Key(uint64(1000+i)), 2)
	k := func(j int) *array.Array { return ops.Reshape(ops.SliceAxis(ks, 0, ops.R(j, j+1)), 2) }
	return random.Normal(k(0), []int{8, 4}, array.Float32, 0, 1), random.Normal(k(1), []int{8, 2}, array.Float32, 0, 1)
}

// stepOptimisers returns a fresh optimiser of each kind, set up to use
// the parts of the rule that a compiled step could get wrong: schedules,
// first-step branches, bias corrections and learning-rate decays.
func stepOptimisers() map[string]func() Optimizer {
	return map[string]func() Optimizer{
		"adam_cosine": func() Optimizer {
			o := NewAdam(0)
			o.Schedule = JoinSchedules([]Schedule{LinearSchedule(0, 0.05, 2), CosineDecay(0.05, 4, 0.001)}, []int{2})
			return o
		},
		"sgd_dampening": func() Optimizer {
			o := NewSGD(0.1)
			o.Momentum, o.Dampening, o.WeightDecay = 0.9, 0.3, 0.01
			return o
		},
		"sgd_nesterov_step_decay": func() Optimizer {
			o := NewSGD(0)
			o.Momentum, o.Nesterov = 0.9, true
			o.Schedule = StepDecay(0.1, 0.5, 2)
			return o
		},
		"adamw":    func() Optimizer { return NewAdamW(0.01) },
		"adamax":   func() Optimizer { return NewAdamax(0.02) },
		"rmsprop":  func() Optimizer { o := NewRMSProp(0.01); o.Centered, o.Momentum = true, 0.5; return o },
		"adagrad":  func() Optimizer { o := NewAdagrad(0.1); o.LRDecay = 0.1; return o },
		"adadelta": func() Optimizer { return NewAdaDelta(1) },
		"lion":     func() Optimizer { o := NewLion(0.01); o.WeightDecay = 0.1; return o },
	}
}

func paramBits(t testing.TB, m any) map[string][]uint64 {
	out := map[string][]uint64{}
	for name, p := range nn.Parameters(m) {
		out[name] = bitsOf(t, p)
	}
	return out
}

func sameBits(t testing.TB, what string, a, b map[string][]uint64) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d and %d arrays", what, len(a), len(b))
	}
	for name, v := range a {
		if !slices.Equal(v, b[name]) {
			t.Fatalf("%s: %s differs", what, name)
		}
	}
}

// TestCompiledStepMatchesStep runs every optimiser for several steps
// compiled and uncompiled, and checks that losses, parameters and state
// are bit-identical and that the compiled step traced once.
func TestCompiledStepMatchesStep(t *testing.T) {
	const steps = 6
	for name, mk := range stepOptimisers() {
		t.Run(name, func(t *testing.T) {
			var calls atomic.Int64
			ma, mb := newMLP(1), newMLP(1)
			start := paramBits(t, ma)
			oa, ob := mk(), mk()
			w := compile.NewWorker()
			defer w.Close()
			step := CompileStep(ma, oa, mse(&calls))
			defer step.Release()
			for i := 0; i < steps; i++ {
				x, y := batch(i)
				la, err := step.CallOn(w, x, y)
				if err != nil {
					t.Fatal(err)
				}
				lb, err := Step(mb, ob, mse(nil), x, y)
				if err != nil {
					t.Fatal(err)
				}
				if la.Item() != lb.Item() {
					t.Fatalf("step %d: compiled loss %v, uncompiled %v", i+1, la.Item(), lb.Item())
				}
			}
			sameBits(t, "parameters", paramBits(t, ma), paramBits(t, mb))
			for name, v := range paramBits(t, ma) {
				if slices.Equal(v, start[name]) {
					t.Errorf("%s did not change", name)
				}
			}
			sameBits(t, "state", stateBits(t, oa), stateBits(t, ob))
			if got := oa.State()["step"].Item(); got != steps {
				t.Errorf("step count %v, want %d", got, steps)
			}
			if n := w.Traces(); n != 1 {
				t.Errorf("%d traces, want 1", n)
			}
			if n := calls.Load(); n != 1 {
				t.Errorf("the loss ran %d times, want once (while tracing)", n)
			}
		})
	}
}

func stateBits(t testing.TB, o Optimizer) map[string][]uint64 {
	out := map[string][]uint64{}
	for name, a := range o.State() {
		out[name] = bitsOf(t, ops.AsType(a, array.Float64))
	}
	return out
}

// TestCompiledStepFollowsTheLearningRate checks that the learning rate is
// an input of the compiled step, not a constant of its trace: a change
// between calls is used at once, without tracing again.
func TestCompiledStepFollowsTheLearningRate(t *testing.T) {
	ma, mb := newMLP(2), newMLP(2)
	oa, ob := NewSGD(0.1), NewSGD(0.1)
	w := compile.NewWorker()
	defer w.Close()
	step := CompileStep(ma, oa, mse(nil))
	defer step.Release()
	for i, lr := range []float64{0.1, 0.1, 0.5, 0.02} {
		oa.SetLearningRate(lr)
		ob.SetLearningRate(lr)
		x, y := batch(i)
		if _, err := step.CallOn(w, x, y); err != nil {
			t.Fatal(err)
		}
		if _, err := Step(mb, ob, mse(nil), x, y); err != nil {
			t.Fatal(err)
		}
		sameBits(t, fmt.Sprintf("step %d", i+1), paramBits(t, ma), paramBits(t, mb))
	}
	if n := w.Traces(); n != 1 {
		t.Errorf("%d traces, want 1", n)
	}
}

// TestCompiledStepLeavesFrozenParameters freezes a layer between steps:
// the step traces again (its inputs' roles changed) and leaves the frozen
// layer as it is.
func TestCompiledStepLeavesFrozenParameters(t *testing.T) {
	var calls atomic.Int64
	m := newMLP(3)
	o := NewAdam(0.01)
	w := compile.NewWorker()
	defer w.Close()
	step := CompileStep(m, o, mse(&calls))
	defer step.Release()
	x, y := batch(0)
	if _, err := step.CallOn(w, x, y); err != nil {
		t.Fatal(err)
	}
	if err := nn.Freeze(m, "hidden"); err != nil {
		t.Fatal(err)
	}
	frozen := paramBits(t, m.Hidden)
	hiddenState := bitsOf(t, o.State()["m.hidden.weight"])
	for i := 1; i < 4; i++ {
		x, y := batch(i)
		if _, err := step.CallOn(w, x, y); err != nil {
			t.Fatal(err)
		}
	}
	sameBits(t, "frozen layer", paramBits(t, m.Hidden), frozen)
	if !slices.Equal(bitsOf(t, o.State()["m.hidden.weight"]), hiddenState) {
		t.Error("the frozen layer's optimiser state changed")
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("the loss ran %d times, want 2 (one trace before freezing, one after)", n)
	}
	if got := o.State()["step"].Item(); got != 4 {
		t.Errorf("step count %v, want 4", got)
	}
}

// TestCompiledStepOnSeveralWorkers trains one model per goroutine, each on
// its own compile.Worker, and checks each against a serial run; then
// several goroutines share one step (and model), each with its own worker.
func TestCompiledStepOnSeveralWorkers(t *testing.T) {
	const goroutines, steps = 3, 4
	serial := func(seed uint64) map[string][]uint64 {
		m := newMLP(seed)
		o := stepOptimisers()["adam_cosine"]()
		for i := 0; i < steps; i++ {
			x, y := batch(i)
			if _, err := Step(m, o, mse(nil), x, y); err != nil {
				t.Fatal(err)
			}
		}
		return paramBits(t, m)
	}
	got := make([]map[string][]uint64, goroutines)
	errs := make([]error, goroutines)
	traces := make([]int, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			w := compile.NewWorker()
			defer w.Close()
			m := newMLP(uint64(10 + g))
			step := CompileStep(m, stepOptimisers()["adam_cosine"](), mse(nil))
			defer step.Release()
			for i := 0; i < steps; i++ {
				x, y := batch(i)
				if _, err := step.CallOn(w, x, y); err != nil {
					errs[g] = err
					return
				}
			}
			got[g], traces[g] = paramBits(t, m), w.Traces()
		})
	}
	wg.Wait()
	for g := range goroutines {
		if errs[g] != nil {
			t.Fatal(errs[g])
		}
		sameBits(t, fmt.Sprintf("goroutine %d", g), got[g], serial(uint64(10+g)))
		if traces[g] != 1 {
			t.Errorf("goroutine %d: %d traces, want 1", g, traces[g])
		}
	}

	m := newMLP(20)
	o := NewSGD(0.05)
	step := CompileStep(m, o, mse(nil))
	defer step.Release()
	x, y := batch(0)
	for g := range goroutines {
		wg.Go(func() {
			w := compile.NewWorker()
			defer w.Close()
			for range steps {
				if _, err := step.CallOn(w, x, y); err != nil {
					errs[g] = err
					return
				}
			}
			traces[g] = w.Traces()
		})
	}
	wg.Wait()
	for g := range goroutines {
		if errs[g] != nil {
			t.Fatal(errs[g])
		}
		if traces[g] != 1 {
			t.Errorf("shared step, goroutine %d: %d traces, want 1", g, traces[g])
		}
	}
	if got := o.State()["step"].Item(); got != goroutines*steps {
		t.Errorf("shared step: step count %v, want %d", got, goroutines*steps)
	}
}

// TestResumeIsBitIdentical trains for six compiled steps without stopping,
// and for three, saving the model and the optimiser, then three more in a
// new model and optimiser loaded from the files: the parameters must be
// the same bits.
func TestResumeIsBitIdentical(t *testing.T) {
	const steps, stop = 6, 3
	mk := stepOptimisers()["adam_cosine"]
	train := func(m *mlp, o Optimizer, from, to int) {
		step := CompileStep(m, o, mse(nil))
		defer step.Release()
		for i := from; i < to; i++ {
			x, y := batch(i)
			if _, err := step.Call(x, y); err != nil {
				t.Fatal(err)
			}
		}
	}
	ref := newMLP(4)
	train(ref, mk(), 0, steps)

	dir := t.TempDir()
	model, opt := filepath.Join(dir, "model.safetensors"), filepath.Join(dir, "opt.safetensors")
	first := newMLP(4)
	o := mk()
	train(first, o, 0, stop)
	if err := nn.Save(model, first); err != nil {
		t.Fatal(err)
	}
	if err := Save(opt, o); err != nil {
		t.Fatal(err)
	}

	resumed := newMLP(99) // other weights: the checkpoint must replace them all
	o2 := mk()
	if err := nn.Load(model, resumed); err != nil {
		t.Fatal(err)
	}
	if err := Load(opt, o2); err != nil {
		t.Fatal(err)
	}
	train(resumed, o2, stop, steps)
	sameBits(t, "resumed run", paramBits(t, resumed), paramBits(t, ref))
}

func TestStepBadArguments(t *testing.T) {
	m := newMLP(5)
	for _, tc := range []struct {
		name string
		f    func()
		want string
	}{
		{"value model", func() { CompileStep(*m, NewSGD(1), func(mlp, ...*array.Array) *array.Array { return nil }) },
			"the model is a optim.mlp: pass a non-nil pointer"},
		{"nil model", func() { CompileStep[*mlp](nil, NewSGD(1), mse(nil)) }, "pass a non-nil pointer"},
		{"nil optimiser", func() { CompileStep(m, nil, mse(nil)) }, "optim.CompileStep: nil optimiser"},
		{"nil typed optimiser", func() { CompileStep(m, (*Adam)(nil), mse(nil)) }, "nil optimiser"},
		{"nil loss", func() { Step(m, NewSGD(1), nil) }, "optim.Step: nil loss function"},
		{"nil worker", func() { CompileStep(m, NewSGD(1), mse(nil)).CallOn(nil) }, "nil worker"},
	} {
		err := array.Try(tc.f)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	// a failed trace leaves the model its own arrays
	before := paramBits(t, m)
	step := CompileStep(m, NewSGD(1), mse(nil))
	defer step.Release()
	x, _ := batch(0)
	if err := array.Try(func() { step.Call(x, ops.Ones([]int{3, 3}, array.Float32)) }); err == nil {
		t.Fatal("a step on mismatched targets succeeded")
	}
	sameBits(t, "after a failed step", paramBits(t, m), before)
}

// withStats has state that its loss replaces, as a BatchNorm's running
// statistics: not trained, but carried from step to step.
type withStats struct {
	Layer   *nn.Linear
	Running *array.Array `nn:"running,state"`
}

func statsLoss(m *withStats, in ...*array.Array) *array.Array {
	m.Running = ops.Add(ops.MulScalar(m.Running, 0.9), ops.MulScalar(ops.Mean(in[0], 0), 0.1))
	return ops.Mean(ops.Square(ops.Sub(m.Layer.Forward(in[0]), in[1])))
}

// TestCompiledStepCarriesState checks that state the loss writes into the
// model comes out of the compiled step, as it does uncompiled.
func TestCompiledStepCarriesState(t *testing.T) {
	mk := func() *withStats {
		return &withStats{Layer: nn.NewLinear(random.Key(6), 4, 2, true), Running: ops.Zeros([]int{4}, array.Float32)}
	}
	ma, mb := mk(), mk()
	oa, ob := NewAdam(0.01), NewAdam(0.01)
	w := compile.NewWorker()
	defer w.Close()
	step := CompileStep(ma, oa, statsLoss)
	defer step.Release()
	for i := 0; i < 3; i++ {
		x, y := batch(i)
		if _, err := step.CallOn(w, x, y); err != nil {
			t.Fatal(err)
		}
		if _, err := Step(mb, ob, statsLoss, x, y); err != nil {
			t.Fatal(err)
		}
	}
	sameBits(t, "model", paramBits(t, ma), paramBits(t, mb))
	if v := values(t, ma.Running); v[0] == 0 {
		t.Errorf("running statistics not carried: %v", v)
	}
	if _, ok := oa.State()["m.running"]; ok {
		t.Error("the optimiser keeps state for a state leaf")
	}
	if n := w.Traces(); n != 1 {
		t.Errorf("%d traces, want 1", n)
	}
}

// TestAdamUpdateFusesOnePassPerParameter checks what compiling an update
// makes of it: the step-count scalars in one fused step, and each
// parameter's whole update (new parameter, m and v) in one more.
func TestAdamUpdateFusesOnePassPerParameter(t *testing.T) {
	opt := NewAdam(1e-3)
	params := map[string]*array.Array{"a": ops.Ones([]int{16, 8}, array.Float32), "b": ops.Ones([]int{8}, array.Float32)}
	opt.Init(params)
	st := opt.State()
	names, stateNames := sortedKeys(params), sortedKeys(st)
	in := []*array.Array{}
	for _, n := range names {
		in = append(in, params[n], params[n])
	}
	for _, n := range stateNames {
		in = append(in, st[n])
	}
	fused := compile.Fused(func(in ...*array.Array) []*array.Array {
		p, g, s := map[string]*array.Array{}, map[string]*array.Array{}, map[string]*array.Array{}
		for i, n := range names {
			p[n], g[n] = in[2*i], in[2*i+1]
		}
		for i, n := range stateNames {
			s[n] = in[2*len(names)+i]
		}
		np, ns := opt.Apply(p, g, s)
		out := []*array.Array{}
		for _, n := range names {
			out = append(out, np[n])
		}
		for _, n := range stateNames {
			out = append(out, ns[n])
		}
		return out
	}, in...)
	if len(fused) != 1+len(params) {
		t.Fatalf("%d fused steps, want %d", len(fused), 1+len(params))
	}
	perParam := 0
	for _, f := range fused {
		if strings.Count(f.Program().String(), "Sqrt") == 1 && strings.Contains(f.Program().String(), "Square") {
			perParam++
		}
	}
	if perParam != len(params) {
		t.Errorf("%d fused steps hold a parameter's whole update, want %d:\n%v", perParam, len(params), fused)
	}
}

// TestCompiledStepWithCompilationOff checks the step when compilation is
// turned off process-wide (FATHOM_DISABLE_COMPILE, compile.Disable): it
// runs uncompiled and still trains exactly as Step does.
func TestCompiledStepWithCompilationOff(t *testing.T) {
	compile.Disable()
	defer compile.Enable()
	var calls atomic.Int64
	ma, mb := newMLP(8), newMLP(8)
	oa, ob := NewAdam(0.01), NewAdam(0.01)
	step := CompileStep(ma, oa, mse(&calls))
	defer step.Release()
	for i := 0; i < 3; i++ {
		x, y := batch(i)
		if _, err := step.Call(x, y); err != nil {
			t.Fatal(err)
		}
		if _, err := Step(mb, ob, mse(nil), x, y); err != nil {
			t.Fatal(err)
		}
	}
	sameBits(t, "parameters", paramBits(t, ma), paramBits(t, mb))
	if n := calls.Load(); n != 3 {
		t.Errorf("the loss ran %d times, want 3 (once per uncompiled call)", n)
	}
}

// TestCompiledStepDonating checks that a donating step trains exactly as
// a plain one for every optimiser, that from its second call it takes no
// fresh memory, and that a parameter array taken before a call cannot be
// read after it. The collector is off, so that nothing else hands
// buffers back; only the first call, with an empty pool, takes fresh
// memory.
func TestCompiledStepDonating(t *testing.T) {
	const steps = 5
	// wide, so that the weights and their state are pooled: arrays of at
	// most array.MaxUnpooled bytes are not donated
	wide := func() *mlp {
		ks := random.Split(random.Key(7), 2)
		k := func(i int) *array.Array { return ops.Reshape(ops.SliceAxis(ks, 0, ops.R(i, i+1)), 2) }
		m := &mlp{Hidden: nn.NewLinear(k(0), 4, 1024, true), Out: nn.NewLinear(k(1), 1024, 2, true)}
		if err := array.Eval(slices.Collect(maps.Values(nn.Parameters(m)))...); err != nil {
			t.Fatal(err)
		}
		return m
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	for name, mk := range stepOptimisers() {
		t.Run(name, func(t *testing.T) {
			w := compile.NewWorker()
			defer w.Close()
			mb, ob := wide(), mk()
			plain := CompileStep(mb, ob, mse(nil))
			defer plain.Release()
			var want []float64
			for i := range steps {
				x, y := batch(i)
				l, err := plain.CallOn(w, x, y)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, l.Item())
			}

			ma, oa := wide(), mk()
			donating := CompileStep(ma, oa, mse(nil), Donate())
			defer donating.Release()
			for i := range steps {
				x, y := batch(i)
				if err := array.Eval(x, y); err != nil {
					t.Fatal(err)
				}
				held := ma.Hidden.Weight
				before := array.CPUPoolStats()
				l, err := donating.CallOn(w, x, y)
				if err != nil {
					t.Fatal(err)
				}
				if misses := array.CPUPoolStats().Misses - before.Misses; i > 0 && misses != 0 {
					t.Errorf("step %d took %d fresh buffers, want none", i+1, misses)
				}
				if err := held.Eval(); err == nil {
					t.Errorf("step %d: the hidden weight taken before the call can still be read", i+1)
				} else if _, ok := err.(*array.Error); !ok {
					t.Errorf("step %d: reading a donated weight: %T %v, want an *array.Error", i+1, err, err)
				}
				if l.Item() != want[i] {
					t.Fatalf("step %d: donating loss %v, plain %v", i+1, l.Item(), want[i])
				}
			}
			sameBits(t, "parameters", paramBits(t, ma), paramBits(t, mb))
			sameBits(t, "state", stateBits(t, oa), stateBits(t, ob))
		})
	}
}
