//go:build fathom_mslharness

package compile_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/ops"
)

// These run compiled replays on the GPU through the MSL harness (the
// package's TestMain installs it), whose host is the real allocator and
// command queue: an intermediate's buffer goes back to the Metal buffer
// cache once the command buffer that last read it has completed.

// onGPU returns a worker that replays on the GPU, closed when the test
// ends, and copies of xs in GPU memory, evaluated.
func onGPU(t *testing.T, xs ...*array.Array) (*compile.Worker, []*array.Array) {
	t.Helper()
	gpu := array.DefaultStream(array.GPU)
	w := compile.NewWorker(compile.OnStream(gpu))
	t.Cleanup(w.Close)
	if err := array.SetDefaultDevice(array.GPU); err != nil {
		t.Fatal(err)
	}
	defer array.SetDefaultDevice(array.CPU)
	out := make([]*array.Array, len(xs))
	for i, x := range xs {
		out[i] = ops.Copy(x)
	}
	if err := array.Eval(out...); err != nil {
		t.Fatal(err)
	}
	return w, out
}

// gpuMemory is the GPU's memory counters and ActiveMemory (over both
// devices), for differences.
type gpuMemory struct{ active, cache, total int64 }

func readGPUMemory() gpuMemory {
	m := array.DeviceMemory(array.GPU)
	return gpuMemory{m.Active, m.Cache, array.ActiveMemory()}
}

func (m gpuMemory) minus(b gpuMemory) gpuMemory {
	return gpuMemory{m.active - b.active, m.cache - b.cache, m.total - b.total}
}

// gpuApprox compares a GPU result with the CPU's: their float32 sums run
// in different orders.
var gpuApprox = arraytest.Approx(1e-5, 1e-4)

// TestGPUReplayFreesIntermediates: x·w·w on the GPU has one
// intermediate, x·w, whose buffer goes back to the cache during the
// replay, without a collection: the replay leaves only its output
// active, and the next replay takes the intermediate's buffer from the
// cache again.
func TestGPUReplayFreesIntermediates(t *testing.T) {
	f := func(in ...*array.Array) []*array.Array {
		return []*array.Array{ops.MatMul(ops.MatMul(in[0], in[1]), in[1])}
	}
	c, cpuIn, wants := compileOn(t, f, 1, 2)
	w, in := onGPU(t, cpuIn...)
	first := w.Call(c, in...) // traces; its intermediate fills the cache
	if err := array.Eval(first...); err != nil {
		t.Fatal(err)
	}
	noCollections(t)
	array.ClearCache()
	const buf = 4 * n * n // 16 KiB: a GPU size class of its own
	for i := range 3 {
		before := readGPUMemory()
		out := w.Call(c, in...)[0]
		if err := out.Eval(); err != nil {
			t.Fatal(err)
		}
		// The output is new memory; the intermediate's went back to the
		// cache, where the next call finds it.
		want := gpuMemory{active: buf, total: buf}
		if i == 0 {
			want.cache = buf
		}
		if got := readGPUMemory().minus(before); got != want {
			t.Errorf("call %d: GPU active, cached and all active memory rose by %+v, want %+v", i, got, want)
		}
		if d := cmp.Diff(wants[0], out, gpuApprox); d != "" {
			t.Errorf("call %d: result differs from the CPU's (-want +got):\n%s", i, d)
		}
	}
}

// TestGPUReplayReusesDuringTheReplay: a chain of 120 products, each
// with a fused scale and tanh (240 dispatches; the harness commits every
// 40), reuses the buffers of
// the first command buffers' intermediates in the later ones, so the
// GPU's peak stays near one command buffer's worth; at the end only the
// output is active.
func TestGPUReplayReusesDuringTheReplay(t *testing.T) {
	const chain = 120
	f := func(in ...*array.Array) []*array.Array {
		x := in[0]
		for range chain {
			x = ops.Tanh(ops.MulScalar(ops.MatMul(x, in[1]), 0.25))
		}
		return []*array.Array{x}
	}
	c, cpuIn, want := compileOn(t, f, 3, 4)
	w, in := onGPU(t, cpuIn...)
	if err := array.Eval(w.Call(c, in...)...); err != nil {
		t.Fatal(err)
	}
	array.ClearCache()
	noCollections(t)
	before := readGPUMemory()
	array.ResetPeakMemory()
	out := w.Call(c, in...)[0]
	if err := out.Eval(); err != nil {
		t.Fatal(err)
	}
	const buf = 4 * n * n
	if got, want := readGPUMemory().active-before.active, int64(buf); got != want {
		t.Errorf("GPU active memory rose by %d, want the output's %d", got, want)
	}
	// A command buffer's 40 dispatches' intermediates wait for it to
	// run; 2·120 of them would be live without recycling.
	if peak := array.DeviceMemory(array.GPU).Peak - before.active; peak > 48*buf {
		t.Errorf("GPU peak %d above the start, over 48 buffers of %d bytes: the intermediates were not reused during the replay", peak, buf)
	}
	if d := cmp.Diff(want[0], out, gpuApprox); d != "" {
		t.Errorf("result differs from the CPU's (-want +got):\n%s", d)
	}
}

// TestGPUCallDonating: a step that donates its parameters to the next
// leaves GPU memory flat, exactly, with the collector off; the donated
// array cannot be read again.
func TestGPUCallDonating(t *testing.T) {
	f := func(in ...*array.Array) []*array.Array {
		return []*array.Array{ops.Sub(in[0], ops.MulScalar(ops.MatMul(in[1], in[0]), 0.01))}
	}
	c, cpuIn, _ := compileOn(t, f, 5, 6)
	w, in := onGPU(t, cpuIn...)
	p, x := in[0], in[1]
	want := cpuIn[0]
	step := func() {
		next := w.CallDonating(c, []int{0}, p, x)[0]
		if err := next.Eval(); err != nil {
			t.Fatal(err)
		}
		old := p
		p = next
		if err := old.Eval(); err == nil || !strings.Contains(err.Error(), "donated") {
			t.Errorf("reading a donated GPU array: %v, want an error that says it was donated", err)
		}
		want = f(want, cpuIn[1])[0]
	}
	step()
	noCollections(t)
	for i := range 3 {
		before := readGPUMemory()
		step()
		if got := readGPUMemory().minus(before); got != (gpuMemory{}) {
			t.Errorf("step %d: GPU active, cached and all active memory changed by %+v, want none", i, got)
		}
		if d := cmp.Diff(want, p, gpuApprox); d != "" {
			t.Fatalf("step %d differs from the CPU's (-want +got):\n%s", i, d)
		}
	}
}

// TestGPURecyclingUnderConcurrentCalls replays one trace on the GPU from
// several goroutines at once, each on its own worker and inputs, while
// intermediates go back to the cache and are reused: every result must
// be the CPU's (run with -race).
func TestGPURecyclingUnderConcurrentCalls(t *testing.T) {
	f := func(in ...*array.Array) []*array.Array {
		h := ops.MaximumScalar(ops.MatMul(in[0], in[1]), 0)
		return []*array.Array{ops.MatMul(h, in[1]), ops.Sum(ops.Exp(ops.MulScalar(h, 0.01)), 0)}
	}
	c := compile.Compile(f)
	t.Cleanup(c.Release)
	var wg sync.WaitGroup
	for g := range 4 {
		cpuIn := matrices(uint64(10+2*g), uint64(11+2*g))
		want := f(cpuIn...)
		if err := array.Eval(want...); err != nil {
			t.Fatal(err)
		}
		w, in := onGPU(t, cpuIn...)
		wg.Go(func() {
			for i := range 8 {
				out := w.Call(c, in...)
				if err := out[(g+i)%2].Eval(); err != nil {
					t.Error(err)
					return
				}
				for k := range out {
					if d := cmp.Diff(want[k], out[k], gpuApprox); d != "" {
						t.Errorf("goroutine %d call %d output %d differs from the CPU's (-want +got):\n%s", g, i, k, d)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}
