package optim

import (
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/encoding/safetensors"
	"github.com/fathom-go/fathom/ops"
)

// TestTrajectoriesMatchPyTorch runs every case of optim.json (every
// optimiser, float32 and float64) for all its steps and compares the
// parameters after each step with torch.optim's.
func TestTrajectoriesMatchPyTorch(t *testing.T) {
	cases := ref(t).Cases
	if len(cases) < 16 {
		t.Fatalf("optim.json has %d cases", len(cases))
	}
	seen := map[string]bool{}
	for i := range cases {
		c := &cases[i]
		seen[c.Optimizer] = true
		t.Run(c.Name+"/"+c.DType, func(t *testing.T) {
			for _, init := range []bool{false, true} {
				trajectory(t, c, init)
			}
		})
	}
	if len(refOptimizers) != 8 {
		t.Errorf("%d optimisers to check, want all 8", len(refOptimizers))
	}
	for name := range refOptimizers {
		if !seen[name] {
			t.Errorf("no case for %s", name)
		}
	}
}

// trajectory runs case c. With init, the optimiser's state is made by
// Init before the first update (as a compiled step does) rather than by
// the update itself.
func trajectory(t *testing.T, c *refCase, init bool) {
	opt := c.optimizer(t)
	params := c.Params.arrays(t)
	if init {
		trained := map[string]*array.Array{}
		for name := range c.Grads[0] {
			trained[name] = params[name]
		}
		opt.Init(trained)
	}
	for k, g := range c.Grads {
		params = opt.Update(params, g.arrays(t))
		for _, name := range sortedKeys(params) {
			p := params[name]
			if p.DType().String() != c.DType {
				t.Fatalf("step %d, %s: dtype %s", k+1, name, p.DType())
			}
			if err := closeTo(values(t, p), c.Expected[k][name].Data, tol(p.DType())); err != nil {
				t.Fatalf("init %v, step %d, %s: %v", init, k+1, name, err)
			}
		}
	}
	st := opt.State()
	if got := st["step"].Item(); got != float64(len(c.Grads)) {
		t.Errorf("step count %v, want %d", got, len(c.Grads))
	}
	for name := range st {
		if strings.HasSuffix(name, ".frozen") {
			t.Errorf("state %q for a parameter that had no gradient", name)
		}
	}
}

// TestApplyIsPure checks that Apply changes neither the optimiser nor its
// arguments, and that Update is Apply plus keeping the state.
func TestApplyIsPure(t *testing.T) {
	c := &ref(t).Cases[0]
	for i := range ref(t).Cases {
		if ref(t).Cases[i].Name == "adam" {
			c = &ref(t).Cases[i]
			break
		}
	}
	opt := c.optimizer(t)
	params := c.Params.arrays(t)
	grads := c.Grads[0].arrays(t)
	opt.Init(params)
	before := opt.State()
	p1, s1 := opt.Apply(params, grads, before)
	if got := opt.State(); !sameArrays(got, before) {
		t.Fatal("Apply changed the optimiser's state")
	}
	if s1["step"].Item() != 1 || before["step"].Item() != 0 {
		t.Fatalf("step %v -> %v, want 0 -> 1", before["step"].Item(), s1["step"].Item())
	}
	p2 := opt.Update(params, grads)
	for name := range p1 {
		if !slices.Equal(bitsOf(t, p1[name]), bitsOf(t, p2[name])) {
			t.Errorf("%s: Apply and Update differ", name)
		}
	}
}

func sameArrays(a, b map[string]*array.Array) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestStateNames(t *testing.T) {
	params := map[string]*array.Array{
		"layers.0.weight": ops.Ones([]int{2, 2}, array.Float32),
		"frozen":          ops.Ones([]int{2}, array.Float32),
	}
	grads := map[string]*array.Array{"layers.0.weight": ops.Ones([]int{2, 2}, array.Float32)}
	for _, tc := range []struct {
		opt  Optimizer
		want []string
	}{
		{NewSGD(0.1), nil},
		{func() Optimizer { o := NewSGD(0.1); o.Momentum = 0.9; return o }(), []string{"v"}},
		{NewAdam(0.1), []string{"m", "v"}},
		{NewAdamW(0.1), []string{"m", "v"}},
		{NewAdamax(0.1), []string{"m", "v"}},
		{NewRMSProp(0.1), []string{"v"}},
		{func() Optimizer { o := NewRMSProp(0.1); o.Centered, o.Momentum = true, 0.5; return o }(), []string{"b", "g", "v"}},
		{NewAdagrad(0.1), []string{"v"}},
		{NewAdaDelta(0.1), []string{"u", "v"}},
		{NewLion(0.1), []string{"m"}},
	} {
		tc.opt.Update(params, grads)
		want := []string{"learning_rate", "step"}
		for _, s := range tc.want {
			want = append(want, s+".layers.0.weight")
		}
		slices.Sort(want)
		if got := sortedKeys(tc.opt.State()); !slices.Equal(got, want) {
			t.Errorf("%T: state %q, want %q", tc.opt, got, want)
		}
		st := tc.opt.State()
		if st["step"].DType() != array.Int32 || st["learning_rate"].DType() != array.Float32 {
			t.Errorf("%T: step %s, learning_rate %s", tc.opt, st["step"].DType(), st["learning_rate"].DType())
		}
	}
}

// TestFloat64LearningRate checks that a float64 model gets its learning
// rate in float64, not rounded to float32.
func TestFloat64LearningRate(t *testing.T) {
	o := NewSGD(0.1)
	p := map[string]*array.Array{"w": array.FromSlice([]float64{1})}
	p = o.Update(p, map[string]*array.Array{"w": array.FromSlice([]float64{1})})
	if got := values(t, p["w"])[0]; got != 1-0.1 {
		t.Errorf("w = %v, want %v", got, 1-0.1)
	}
	if lr := o.State()["learning_rate"]; lr.DType() != array.Float64 || lr.Item() != 0.1 {
		t.Errorf("learning_rate %s %v", lr.DType(), lr.Item())
	}
}

func TestSchedulesMatchPyTorch(t *testing.T) {
	for i := range ref(t).Schedules {
		s := &ref(t).Schedules[i]
		for _, dt := range []array.DType{array.Float32, array.Float64} {
			sched := s.schedule(t)
			for k, want := range s.Values {
				got := sched(ops.Full(nil, float64(k), dt))
				if got.DType() != dt || got.Ndim() != 0 {
					t.Fatalf("%s: %s %v", s.Name, got.DType(), got.Shape())
				}
				tl := 1e-13
				if dt == array.Float32 {
					tl = 3e-7
				}
				if err := closeTo([]float64{got.Item()}, []float64{want}, tl); err != nil {
					t.Errorf("%s %s step %d: %v", s.Name, dt, k, err)
				}
			}
		}
	}
}

// TestJoinSchedules checks a warm-up joined to a cosine decay and a step
// decay against MLX's join_schedules formula written out.
func TestJoinSchedules(t *testing.T) {
	s := JoinSchedules([]Schedule{
		LinearSchedule(0, 0.1, 4),
		CosineDecay(0.1, 6, 0.01),
		StepDecay(0.01, 0.5, 2),
	}, []int{4, 10})
	for k := 0; k < 16; k++ {
		var want float64
		switch {
		case k < 4:
			want = float64(k) * 0.1 / 4
		case k < 10:
			x := math.Min(float64(k-4), 6)
			want = 0.01 + 0.09*(1+math.Cos(math.Pi*x/6))/2
		default:
			want = 0.01 * math.Pow(0.5, math.Floor(float64(k-10)/2))
		}
		got := s(ops.Full(nil, float64(k), array.Float64)).Item()
		if math.Abs(got-want) > 1e-15 {
			t.Errorf("step %d: %v, want %v", k, got, want)
		}
	}
	// MLX's cosine_decay stays at its end value after decaySteps
	if got := CosineDecay(1, 10, 0.25)(ops.Full(nil, 25, array.Float64)).Item(); got != 0.25 {
		t.Errorf("cosine decay after its steps: %v, want 0.25", got)
	}
}

// TestScheduledUpdates checks that an optimiser with a schedule uses the
// rate of the step count before each update, as MLX (and PyTorch's
// scheduler.step after optimizer.step) do, and keeps it in its state.
func TestScheduledUpdates(t *testing.T) {
	o := NewSGD(123)
	o.Schedule = ExponentialDecay(0.5, 0.5)
	if got := o.LearningRate(); got != 0.5 {
		t.Fatalf("learning rate before the first update %v, want 0.5", got)
	}
	p := map[string]*array.Array{"w": array.FromSlice([]float32{0})}
	g := map[string]*array.Array{"w": array.FromSlice([]float32{1})}
	want := float32(0)
	for k := 0; k < 4; k++ {
		lr := float32(0.5 * math.Pow(0.5, float64(k)))
		want -= lr
		p = o.Update(p, g)
		if got := values(t, p["w"])[0]; float32(got) != want {
			t.Fatalf("update %d: w = %v, want %v", k+1, got, want)
		}
		if got := o.LearningRate(); float32(got) != lr {
			t.Fatalf("update %d: learning rate %v, want %v", k+1, got, lr)
		}
	}
	o.Schedule = nil
	o.SetLearningRate(2)
	p = o.Update(p, g)
	if got := values(t, p["w"])[0]; float32(got) != want-2 {
		t.Errorf("after SetLearningRate(2): w = %v, want %v", got, want-2)
	}
}

func TestClipGradNormMatchesPyTorch(t *testing.T) {
	for _, c := range ref(t).Clip {
		clipped, norm := ClipGradNorm(c.Grads.arrays(t), c.MaxNorm)
		dt := array.Float32
		if c.DType == "float64" {
			dt = array.Float64
		}
		if norm.DType() != dt || norm.Ndim() != 0 {
			t.Fatalf("norm %s %v", norm.DType(), norm.Shape())
		}
		if err := closeTo([]float64{norm.Item()}, []float64{c.Norm}, tol(dt)); err != nil {
			t.Errorf("max %v %s: norm: %v", c.MaxNorm, c.DType, err)
		}
		for name, want := range c.Expected {
			g := clipped[name]
			if g.DType() != dt {
				t.Errorf("%s: dtype %s", name, g.DType())
			}
			if err := closeTo(values(t, g), want.Data, tol(dt)); err != nil {
				t.Errorf("max %v %s, %s: %v", c.MaxNorm, c.DType, name, err)
			}
		}
	}
	out, norm := ClipGradNorm(map[string]*array.Array{}, 1)
	if len(out) != 0 || norm.Item() != 0 {
		t.Errorf("no gradients: %d, norm %v", len(out), norm.Item())
	}
}

// TestCheckpointRoundTrip saves an optimiser's state after some updates,
// loads it into a new optimiser, and checks that both continue
// bit-identically.
func TestCheckpointRoundTrip(t *testing.T) {
	var c *refCase
	for i := range ref(t).Cases {
		if cc := &ref(t).Cases[i]; cc.Name == "rmsprop_centered_momentum" && cc.DType == "float32" {
			c = cc
		}
	}
	if c == nil {
		t.Fatal("optim.json has no float32 case rmsprop_centered_momentum")
	}
	path := filepath.Join(t.TempDir(), "opt.safetensors")
	a := c.optimizer(t)
	params := c.Params.arrays(t)
	for _, g := range c.Grads[:2] {
		params = a.Update(params, g.arrays(t))
	}
	if err := Save(path, a); err != nil {
		t.Fatal(err)
	}
	b := c.optimizer(t)
	if err := Load(path, b); err != nil {
		t.Fatal(err)
	}
	if got, want := sortedKeys(b.State()), sortedKeys(a.State()); !slices.Equal(got, want) {
		t.Fatalf("loaded state %q, want %q", got, want)
	}
	pa, pb := params, params
	for _, g := range c.Grads[2:] {
		pa = a.Update(pa, g.arrays(t))
		pb = b.Update(pb, g.arrays(t))
	}
	for name := range pa {
		if !slices.Equal(bitsOf(t, pa[name]), bitsOf(t, pb[name])) {
			t.Errorf("%s: the resumed run differs", name)
		}
	}
	sa, sb := a.State(), b.State()
	for name := range sa {
		if !slices.Equal(bitsOf(t, ops.AsType(sa[name], array.Float64)), bitsOf(t, ops.AsType(sb[name], array.Float64))) {
			t.Errorf("state %s differs", name)
		}
	}
}

func TestLoadRefusesWhatIsNotItsState(t *testing.T) {
	dir := t.TempDir()
	adam := NewAdam(0.1)
	adam.Update(map[string]*array.Array{"w": ops.Ones([]int{2}, array.Float32)}, map[string]*array.Array{"w": ops.Ones([]int{2}, array.Float32)})
	adamPath := filepath.Join(dir, "adam.safetensors")
	if err := Save(adamPath, adam); err != nil {
		t.Fatal(err)
	}
	weights := filepath.Join(dir, "weights.safetensors")
	if err := safetensors.Save(weights, map[string]*array.Array{"w": ops.Ones([]int{2}, array.Float32)}, nil); err != nil {
		t.Fatal(err)
	}
	lion := NewLion(0.1)
	before := lion.State()
	for _, tc := range []struct {
		path string
		want string
	}{
		{adamPath, `"v.w" is not a state entry of optim.Lion`},
		{weights, "holds no optimiser state"},
		{filepath.Join(dir, "missing.safetensors"), "no such file"},
	} {
		err := Load(tc.path, lion)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%s): %v, want an error containing %q", filepath.Base(tc.path), err, tc.want)
		}
		var ae *array.Error
		if !errors.As(err, &ae) {
			t.Errorf("Load(%s): %T, want *array.Error", filepath.Base(tc.path), err)
		}
	}
	if got := sortedKeys(lion.State()); !slices.Equal(got, sortedKeys(before)) || lion.State()["step"].Item() != 0 {
		t.Errorf("a failed Load changed the optimiser: %q", got)
	}
	for _, st := range []map[string]*array.Array{
		{"learning_rate": array.Scalar[float32](1)},
		{"step": array.Scalar[float32](1), "learning_rate": array.Scalar[float32](1)},
		{"step": array.Scalar[int32](1), "learning_rate": array.FromSlice([]float32{1, 2})},
		{"step": array.Scalar[int32](1), "learning_rate": array.Scalar[float32](1), "m": array.Scalar[float32](1)},
		{"step": array.Scalar[int32](1), "learning_rate": array.Scalar[float32](1), "m.w": array.Scalar[int32](1)},
	} {
		if err := lion.SetState(st); err == nil {
			t.Errorf("SetState(%q) succeeded", sortedKeys(st))
		}
	}
}

// TestBadArguments checks that misuse panics with an *array.Error that
// names the operation and what is wrong.
func TestBadArguments(t *testing.T) {
	w := ops.Ones([]int{2, 3}, array.Float32)
	p := map[string]*array.Array{"w": w}
	for _, tc := range []struct {
		name string
		f    func()
		want string
	}{
		{"shape", func() { NewAdam(0.1).Update(p, map[string]*array.Array{"w": ops.Ones([]int{3, 2}, array.Float32)}) },
			`optim.Adam: gradient "w" is float32 [3 2], its parameter float32 [2 3]`},
		{"dtype", func() { NewAdam(0.1).Update(p, map[string]*array.Array{"w": ops.Ones([]int{2, 3}, array.Float64)}) },
			`gradient "w" is float64 [2 3]`},
		{"unknown", func() { NewSGD(0.1).Update(p, map[string]*array.Array{"v": w}) },
			`optim.SGD: gradient "v" has no parameter (parameters: "w")`},
		{"nil grad", func() { NewSGD(0.1).Update(p, map[string]*array.Array{"w": nil}) }, `"w": nil`},
		{"int param", func() {
			NewSGD(0.1).Update(map[string]*array.Array{"i": array.FromSlice([]int32{1})}, map[string]*array.Array{"i": array.FromSlice([]int32{1})})
		}, `parameter "i" is int32`},
		{"nesterov", func() {
			o := NewSGD(0.1)
			o.Nesterov = true
			o.Update(p, map[string]*array.Array{"w": w})
		}, "Nesterov momentum needs a Momentum > 0"},
		{"apply without state", func() { NewAdam(0.1).Apply(p, p, nil) }, `the state has no "step"`},
		{"bad slot", func() {
			NewAdam(0.1).Apply(p, p, map[string]*array.Array{"step": array.Scalar[int32](0), "learning_rate": array.Scalar[float32](1), "m.w": ops.Ones([]int{3}, array.Float32)})
		}, `state "m.w" is float32 [3], its parameter float32 [2 3]`},
		{"schedule shape", func() {
			o := NewSGD(0.1)
			o.Schedule = func(*array.Array) *array.Array { return ops.Ones([]int{2}, array.Float32) }
			o.Update(p, p)
		}, "the Schedule returned float32 [2], want a 0-d float array"},
		{"literal", func() { (&Adam{}).Update(p, p) }, "not made by its New function"},
		{"step decay", func() { StepDecay(1, 0.5, 0) }, "optim.StepDecay: stepSize 0"},
		{"cosine", func() { CosineDecay(1, 0, 0) }, "optim.CosineDecay"},
		{"linear", func() { LinearSchedule(1, 0, -1) }, "optim.LinearSchedule"},
		{"join", func() { JoinSchedules([]Schedule{ExponentialDecay(1, 1)}, []int{3}) }, "1 schedules need 0 boundaries, have 1"},
		{"join nil", func() { JoinSchedules([]Schedule{nil}, nil) }, "schedule 0 is nil"},
		{"clip nan", func() { ClipGradNorm(p, math.NaN()) }, "optim.ClipGradNorm: maxNorm NaN"},
		{"clip nil", func() { ClipGradNorm(map[string]*array.Array{"x": nil}, 1) }, `gradient "x" is nil`},
	} {
		err := array.Try(tc.f)
		var ae *array.Error
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an *array.Error containing %q", tc.name, err, tc.want)
		}
	}
}
