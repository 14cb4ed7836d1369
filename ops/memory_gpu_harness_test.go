//go:build fathom_mslharness

package ops_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/internal/workload"
	"github.com/fathom-go/fathom/ops"
)

// TestGPUMemoryCounters checks array's memory counters on the GPU under
// the MSL harness, whose host runs the real allocator: a GPU buffer
// counts at its size class from allocation until its storage dies, and
// an evaluation on the GPU counts its output, exactly.
func TestGPUMemoryCounters(t *testing.T) {
	settle := func() int64 {
		last := int64(-1)
		for range 200 {
			runtime.GC()
			time.Sleep(2 * time.Millisecond)
			a := array.DeviceMemory(array.GPU).Active
			if a == last {
				return a
			}
			last = a
		}
		t.Fatal("the GPU's active memory did not settle")
		return 0
	}
	base := settle()
	st, err := metal.Alloc(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if got := array.DeviceMemory(array.GPU).Active - base; got != 1<<20 {
		t.Errorf("a 1 MiB GPU buffer: the GPU's Active rose by %d, want %d", got, 1<<20)
	}
	runtime.KeepAlive(st)
	st = nil
	if got := settle(); got != base {
		t.Errorf("the GPU's Active %d after the buffer died, want %d", got, base)
	}

	const n = 1 << 18 // 1 MiB of float32
	x := array.FromSlice(workload.RandF32(n, 1), n)
	if err := array.SetDefaultDevice(array.GPU); err != nil {
		t.Fatal(err)
	}
	y := ops.AddScalar(x, 1)
	array.SetDefaultDevice(array.CPU)
	if err := y.Eval(); err != nil {
		t.Fatal(err)
	}
	// the output: the device copies of the CPU input and of the scalar
	// went back to the cache when the GPU had run
	if got, want := array.DeviceMemory(array.GPU).Active-base, int64(1<<20); got != want {
		t.Errorf("AddScalar of 1 MiB on the GPU: Active rose by %d, want %d", got, want)
	}
	if got := settle() - base; got != 1<<20 {
		t.Errorf("once the copies died, Active is %d above the start, want the output's %d", got, 1<<20)
	}
	v, err := array.ToSlice[float32](y)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := array.ToSlice[float32](x)
	for i := range v {
		if v[i] != w[i]+1 {
			t.Fatalf("element %d: %v, want %v", i, v[i], w[i]+1)
		}
	}
}
