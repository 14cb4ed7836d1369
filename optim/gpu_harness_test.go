//go:build fathom_mslharness

package optim

import (
	"math"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal/mslharness"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/nn"
)

// With the fathom_mslharness tag the GPU device runs on the CPU through
// the MSL harness.
func TestMain(m *testing.M) { mslharness.Main(m) }

// TestCompiledStepOnGPU runs compiled steps with the GPU the default
// device (the step count, schedules, first-step branches and signs all
// on the GPU) and compares them with the same steps on the CPU.
func TestCompiledStepOnGPU(t *testing.T) {
	const steps = 3
	run := func(name string) map[string][]float64 {
		m := newMLP(7)
		o := stepOptimisers()[name]()
		w := compile.NewWorker()
		defer w.Close()
		step := CompileStep(m, o, mse(nil))
		defer step.Release()
		for i := 0; i < steps; i++ {
			x, y := batch(i)
			if _, err := step.CallOn(w, x, y); err != nil {
				t.Fatal(err)
			}
		}
		if w.Traces() != 1 {
			t.Errorf("%s: %d traces", name, w.Traces())
		}
		for _, p := range nn.Parameters(m) {
			if p.Stream().Device != array.DefaultDevice() {
				t.Errorf("%s: a parameter on %v", name, p.Stream().Device)
			}
		}
		out := map[string][]float64{}
		for k, p := range nn.Parameters(m) {
			out[k] = values(t, p)
		}
		return out
	}
	for _, name := range []string{"adam_cosine", "sgd_dampening", "lion", "rmsprop"} {
		cpu := run(name)
		if err := array.SetDefaultDevice(array.GPU); err != nil {
			t.Fatal(err)
		}
		gpu := run(name)
		if err := array.SetDefaultDevice(array.CPU); err != nil {
			t.Fatal(err)
		}
		for k, want := range cpu {
			for i, v := range gpu[k] {
				if math.Abs(v-want[i]) > 1e-5*(1+math.Abs(want[i])) {
					t.Errorf("%s %s[%d]: GPU %v, CPU %v", name, k, i, v, want[i])
					break
				}
			}
		}
	}
}
