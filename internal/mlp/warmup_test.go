package mlp

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/compile"
)

// compiledStep turns the collector off for the test, empties the pools
// and returns TrainStep compiled, released when the test ends.
func compiledStep(t *testing.T) *compile.Func {
	runtime.GC()
	prev := debug.SetGCPercent(-1)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	array.ClearCache()
	step := compile.Compile(TrainStep)
	t.Cleanup(step.Release)
	return step
}

// TestTrainingStepsReuseEveryIntermediate guards issue 22's warm-up
// stall: a compiled training loop used to take fresh memory for every
// intermediate of a step until a collection gave the last step's back.
// Compile now frees each intermediate when its last consumer has run, so
// from the second step on the pool misses only for the step's new
// parameters (the two of them large enough to be pooled), with the
// collector off. The results stay those of the uncompiled step.
func TestTrainingStepsReuseEveryIntermediate(t *testing.T) {
	const steps = 4
	step := compiledStep(t)
	args := Args()
	var perStep int64
	var got [][]*array.Array
	for i := range steps {
		before := array.CPUPoolStats()
		out := step.Call(args...)
		if err := array.Eval(out...); err != nil {
			t.Fatal(err)
		}
		after := array.CPUPoolStats()
		hits, misses := after.Hits-before.Hits, after.Misses-before.Misses
		if i == 0 {
			perStep = hits + misses
		} else {
			if hits+misses != perStep {
				t.Errorf("step %d: %d allocations, the first step made %d", i, hits+misses, perStep)
			}
			if misses > 2 {
				t.Errorf("step %d: %d fresh buffers (%d reused), want at most the 2 pooled parameters", i, misses, hits)
			}
		}
		got = append(got, out)
		copy(args, out[:4])
	}
	// the uncompiled steps, after: their allocations would have taken
	// the buffers the compiled ones freed
	args = Args()
	for i, out := range got {
		want := TrainStep(args...)
		for k := range out {
			if d := cmp.Diff(want[k], out[k], arraytest.Approx(1e-5, 1e-6)); d != "" {
				t.Fatalf("step %d output %d differs from the uncompiled step (-want +got):\n%s", i, k, d)
			}
		}
		copy(args, want[:4])
	}
}

// TestDonatingTrainingStepsTakeNoFreshMemory: a loop that donates each
// step's parameters to the next finds every buffer in the pool from the
// second step on, exactly, with the collector off.
func TestDonatingTrainingStepsTakeNoFreshMemory(t *testing.T) {
	const steps = 6
	step := compiledStep(t)
	args := Args()
	base := array.ActiveMemory()
	params := []int{0, 1, 2, 3}
	var loss []float32
	for i := range steps {
		before := array.CPUPoolStats()
		out := step.CallDonating(params, args...)
		if err := array.Eval(out...); err != nil {
			t.Fatal(err)
		}
		after := array.CPUPoolStats()
		if misses := after.Misses - before.Misses; i > 0 && misses != 0 {
			t.Errorf("step %d took %d fresh buffers, want none", i, misses)
		}
		if got := array.ActiveMemory(); i > 0 && got != base {
			t.Errorf("step %d: ActiveMemory %d, want %d: the new parameters in the old ones' place", i, got, base)
		}
		l, err := array.ToSlice[float32](out[4])
		if err != nil {
			t.Fatal(err)
		}
		loss = append(loss, l[0])
		copy(args, out[:4])
	}
	// the same losses as steps that donate nothing
	args = Args()
	for i := range steps {
		out := TrainStep(args...)
		l, err := array.ToSlice[float32](out[4])
		if err != nil {
			t.Fatal(err)
		}
		if d := math.Abs(float64(l[0] - loss[i])); d > 1e-5 {
			t.Errorf("step %d: loss %v, the uncompiled step's %v", i, loss[i], l[0])
		}
		copy(args, out[:4])
	}
}
