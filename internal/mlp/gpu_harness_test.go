//go:build fathom_mslharness

package mlp

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/backend/metal/mslharness"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/ops"
)

// With the fathom_mslharness tag the GPU device runs on the CPU through
// the MSL harness.
func TestMain(m *testing.M) { mslharness.Main(m) }

// TestDonatingTrainingStepsOnGPU is TestDonatingTrainingStepsTakeNoFreshMemory
// on the GPU, on the 784-256-10 network: from the second step on
// a loop that donates its parameters takes no new GPU buffer but the
// loss's, exactly, with the collector off: intermediates and the old
// parameters go back to the Metal cache once the GPU has run what reads
// them, and only the dropped losses (256 bytes each, the smallest GPU
// class) wait for a collection. Its losses are the CPU's.
func TestDonatingTrainingStepsOnGPU(t *testing.T) {
	const steps = 3
	step := compiledStep(t)
	w := compile.NewWorker(compile.OnStream(array.DefaultStream(array.GPU)))
	defer w.Close()
	cpuArgs := ArgsHidden(256)
	if err := array.SetDefaultDevice(array.GPU); err != nil {
		t.Fatal(err)
	}
	args := make([]*array.Array, len(cpuArgs))
	for i, a := range cpuArgs {
		args[i] = ops.Copy(a)
	}
	array.SetDefaultDevice(array.CPU)
	if err := array.Eval(args...); err != nil {
		t.Fatal(err)
	}
	want := cpuArgs
	var before array.MemoryStats
	for i := range steps {
		out := w.CallDonating(step, []int{0, 1, 2, 3}, args...)
		if err := array.Eval(out...); err != nil {
			t.Fatal(err)
		}
		got := array.DeviceMemory(array.GPU)
		if i > 0 && (got.Active != before.Active+256 || got.Cache != before.Cache) {
			t.Errorf("step %d: GPU active %d and cached %d bytes, want %d and %d: a new buffer for the loss alone",
				i, got.Active, got.Cache, before.Active+256, before.Cache)
		}
		before = got
		wantOut := TrainStep(want...)
		if d := cmp.Diff(wantOut[4], out[4], arraytest.Approx(1e-5, 1e-4)); d != "" {
			t.Errorf("step %d: loss differs from the CPU's (-want +got):\n%s", i, d)
		}
		copy(args, out[:4])
		copy(want, wantOut[:4])
	}
}
