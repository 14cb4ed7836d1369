package optim

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"sync"
	"testing"

	"github.com/fathom-go/fathom/array"
)

// refArray is an array of optim.json: dtype, shape and row-major data.
type refArray struct {
	DType string    `json:"dtype"`
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

func (r refArray) array(t testing.TB) *array.Array {
	t.Helper()
	switch r.DType {
	case "float32":
		v := make([]float32, len(r.Data))
		for i, x := range r.Data {
			v[i] = float32(x)
		}
		return array.FromSlice(v, r.Shape...)
	case "float64":
		return array.FromSlice(append([]float64(nil), r.Data...), r.Shape...)
	}
	t.Fatalf("optim.json: dtype %q", r.DType)
	return nil
}

type refMap map[string]refArray

func (m refMap) arrays(t testing.TB) map[string]*array.Array {
	out := make(map[string]*array.Array, len(m))
	for k, v := range m {
		out[k] = v.array(t)
	}
	return out
}

type refSchedule struct {
	Name       string    `json:"name"`
	Kind       string    `json:"kind"`
	Init       float64   `json:"init"`
	Rate       float64   `json:"rate"`
	StepSize   int       `json:"step_size"`
	DecaySteps int       `json:"decay_steps"`
	End        float64   `json:"end"`
	Steps      int       `json:"steps"`
	Values     []float64 `json:"values"`
}

func (s *refSchedule) schedule(t testing.TB) Schedule {
	switch s.Kind {
	case "step_decay":
		return StepDecay(s.Init, s.Rate, s.StepSize)
	case "exponential_decay":
		return ExponentialDecay(s.Init, s.Rate)
	case "cosine_decay":
		return CosineDecay(s.Init, s.DecaySteps, s.End)
	case "linear_schedule":
		return LinearSchedule(s.Init, s.End, s.Steps)
	}
	t.Fatalf("optim.json: schedule kind %q", s.Kind)
	return nil
}

type refCase struct {
	Name      string         `json:"name"`
	Optimizer string         `json:"optimizer"`
	LR        float64        `json:"lr"`
	Fields    map[string]any `json:"fields"`
	Schedule  *refSchedule   `json:"schedule"`
	DType     string         `json:"dtype"`
	Params    refMap         `json:"params"`
	Grads     []refMap       `json:"grads"`
	Expected  []refMap       `json:"expected"`
}

// refOptimizers makes each optimiser of optim.json by its name there.
var refOptimizers = map[string]func(lr float64) Optimizer{
	"SGD":      func(lr float64) Optimizer { return NewSGD(lr) },
	"Adam":     func(lr float64) Optimizer { return NewAdam(lr) },
	"AdamW":    func(lr float64) Optimizer { return NewAdamW(lr) },
	"Adamax":   func(lr float64) Optimizer { return NewAdamax(lr) },
	"RMSProp":  func(lr float64) Optimizer { return NewRMSProp(lr) },
	"Adagrad":  func(lr float64) Optimizer { return NewAdagrad(lr) },
	"AdaDelta": func(lr float64) Optimizer { return NewAdaDelta(lr) },
	"Lion":     func(lr float64) Optimizer { return NewLion(lr) },
}

// optimizer returns the case's optimiser, its fields set by name.
func (c *refCase) optimizer(t testing.TB) Optimizer {
	t.Helper()
	mk, ok := refOptimizers[c.Optimizer]
	if !ok {
		t.Fatalf("optim.json: optimizer %q", c.Optimizer)
	}
	o := mk(c.LR)
	v := reflect.ValueOf(o).Elem()
	for name, val := range c.Fields {
		f := v.FieldByName(name)
		if !f.IsValid() {
			t.Fatalf("%s has no field %s", c.Optimizer, name)
		}
		f.Set(reflect.ValueOf(val).Convert(f.Type()))
	}
	if c.Schedule != nil {
		v.FieldByName("Schedule").Set(reflect.ValueOf(c.Schedule.schedule(t)))
	}
	return o
}

type refClip struct {
	MaxNorm  float64 `json:"max_norm"`
	DType    string  `json:"dtype"`
	Grads    refMap  `json:"grads"`
	Expected refMap  `json:"expected"`
	Norm     float64 `json:"norm"`
}

type refFile struct {
	Generator string        `json:"generator"`
	Cases     []refCase     `json:"cases"`
	Schedules []refSchedule `json:"schedules"`
	Clip      []refClip     `json:"clip"`
}

var loadRef = sync.OnceValues(func() (*refFile, error) {
	b, err := os.ReadFile("testdata/optim.json")
	if err != nil {
		return nil, err
	}
	var f refFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, err
	}
	return &f, nil
})

func ref(t testing.TB) *refFile {
	t.Helper()
	f, err := loadRef()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// tol is the tolerance of a comparison with PyTorch in dtype dt, relative
// to 1+|want|: float32 rounds differently in a different order of
// operations, float64 hardly at all.
func tol(dt array.DType) float64 {
	if dt == array.Float64 {
		return 1e-12
	}
	return 2e-6
}

func values(t testing.TB, a *array.Array) []float64 {
	t.Helper()
	switch a.DType() {
	case array.Float32:
		v, err := array.ToSlice[float32](a)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x)
		}
		return out
	case array.Float64:
		v, err := array.ToSlice[float64](a)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	t.Fatalf("values of %s", a.DType())
	return nil
}

// closeTo reports the first element of got farther from want than tol
// relative to 1+|want|.
func closeTo(got, want []float64, tol float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d values, want %d", len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(got[i] - want[i]); !(d <= tol*(1+math.Abs(want[i]))) {
			return fmt.Errorf("element %d: %v, want %v (off by %.3g)", i, got[i], want[i], d)
		}
	}
	return nil
}

func bitsOf(t testing.TB, a *array.Array) []uint64 {
	v := values(t, a)
	out := make([]uint64, len(v))
	for i, x := range v {
		out[i] = math.Float64bits(x)
	}
	return out
}
