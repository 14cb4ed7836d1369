package compile_test

import (
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/internal/workload"
	"github.com/fathom-go/fathom/ops"
)

// noCollections turns the collector off for the test and returns
// ActiveMemory once the garbage of earlier tests has been collected: with
// no collection, a buffer can only come back because compile freed it.
func noCollections(t *testing.T) int64 {
	t.Helper()
	last := int64(-1)
	for range 200 {
		runtime.GC()
		time.Sleep(2 * time.Millisecond)
		if a := array.ActiveMemory(); a == last {
			break
		}
		last = array.ActiveMemory()
	}
	prev := debug.SetGCPercent(-1)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	return array.ActiveMemory()
}

// n is the side of the test's matrices: 64×64 float32 is 16 KiB, a
// pooled size class of its own.
const n = 64

func matrices(seeds ...uint64) []*array.Array {
	var out []*array.Array
	for _, s := range seeds {
		out = append(out, array.FromSlice(workload.RandF32(n*n, s), n, n))
	}
	return out
}

// compileOn compiles f, released when the test ends, and returns it with
// inputs made by matrices(seeds...) and f's own results on them,
// evaluated: what a test compares the compiled results with.
func compileOn(t *testing.T, f graph.Fn, seeds ...uint64) (c *compile.Func, in, want []*array.Array) {
	t.Helper()
	c = compile.Compile(f)
	t.Cleanup(c.Release)
	in = matrices(seeds...)
	want = f(in...)
	if err := array.Eval(want...); err != nil {
		t.Fatal(err)
	}
	return c, in, want
}

// TestReplayFreesIntermediatesOnEval: x·w·w has one intermediate, x·w,
// which the replay frees as soon as the second product has run, without
// a collection; only the output stays.
func TestReplayFreesIntermediatesOnEval(t *testing.T) {
	f := func(in ...*array.Array) []*array.Array {
		return []*array.Array{ops.MatMul(ops.MatMul(in[0], in[1]), in[1])}
	}
	c, in, wants := compileOn(t, f, 1, 2)
	want := wants[0]
	c.Call(in...) // traces
	base := noCollections(t)
	out := c.Call(in...)[0]
	if err := out.Eval(); err != nil {
		t.Fatal(err)
	}
	if got := array.ActiveMemory() - base; got != 4*n*n {
		t.Errorf("ActiveMemory rose by %d, want the output's %d: the intermediate was not freed", got, 4*n*n)
	}
	if d := cmp.Diff(want, out, arraytest.Approx(0, 0)); d != "" {
		t.Errorf("result differs from the uncompiled one (-want +got):\n%s", d)
	}
	// a second call reuses the freed buffer
	hits := array.CPUPoolStats().Hits
	out2 := c.Call(in...)[0]
	if err := out2.Eval(); err != nil {
		t.Fatal(err)
	}
	if got := array.CPUPoolStats().Hits - hits; got < 1 {
		t.Errorf("the second call reused %d buffers, want the freed intermediate's", got)
	}
	if d := cmp.Diff(want, out2, arraytest.Approx(0, 0)); d != "" {
		t.Errorf("second result differs (-want +got):\n%s", d)
	}
}

// TestReplayKeepsWhatOutputsShare: an output that is a view of an
// intermediate (a transpose) keeps the intermediate's buffer,
// and an intermediate read by two outputs evaluated one at a time lives
// until the second has run.
func TestReplayKeepsWhatOutputsShare(t *testing.T) {
	f := func(in ...*array.Array) []*array.Array {
		p := ops.MatMul(in[0], in[1])
		q := ops.MatMul(in[1], in[0])
		return []*array.Array{
			ops.Transpose(p),
			ops.MatMul(q, in[0]),
			ops.MatMul(q, in[1]),
		}
	}
	c, in, want := compileOn(t, f, 3, 4)
	c.Call(in...)
	base := noCollections(t)
	out := c.Call(in...)
	if err := array.Eval(out[0], out[1]); err != nil {
		t.Fatal(err)
	}
	// p (a view of which is out[0]), q (out[2] still to read it), out[1]
	after := array.ActiveMemory() - base
	if after != 3*4*n*n {
		t.Errorf("ActiveMemory rose by %d after two outputs, want p's, q's and out[1]'s %d", after, 3*4*n*n)
	}
	if err := out[2].Eval(); err != nil {
		t.Fatal(err)
	}
	if got := array.ActiveMemory() - base; got != after {
		t.Errorf("ActiveMemory rose by %d after the third output, want %d: q freed, out[2] made", got, after)
	}
	for i := range out {
		if d := cmp.Diff(want[i], out[i], arraytest.Approx(0, 0)); d != "" {
			t.Errorf("output %d differs from the uncompiled one (-want +got):\n%s", i, d)
		}
	}
}

// TestShapelessReplayFreesIntermediates replays a shapeless trace on
// new shapes, for which the sizes are worked out per call.
func TestShapelessReplayFreesIntermediates(t *testing.T) {
	f := func(in ...*array.Array) []*array.Array {
		return []*array.Array{ops.Sum(ops.Exp(ops.MatMul(in[0], in[1])), 1)}
	}
	c := compile.Compile(f, compile.Shapeless())
	defer c.Release()
	small := []*array.Array{array.FromSlice(workload.RandF32(8*8, 5), 8, 8), array.FromSlice(workload.RandF32(8*8, 6), 8, 8)}
	if err := array.Eval(c.Call(small...)...); err != nil {
		t.Fatal(err)
	}
	in := matrices(5, 6)
	want := f(in...)[0]
	if err := want.Eval(); err != nil {
		t.Fatal(err)
	}
	base := noCollections(t)
	out := c.Call(in...)[0]
	if err := out.Eval(); err != nil {
		t.Fatal(err)
	}
	if got := array.ActiveMemory() - base; got != 0 {
		t.Errorf("ActiveMemory rose by %d, want 0: a 256-byte output is not counted and the intermediates are freed", got)
	}
	if d := cmp.Diff(want, out, arraytest.Approx(1e-6, 1e-5)); d != "" {
		t.Errorf("result differs (-want +got):\n%s", d)
	}
}

// TestRecyclingUnderConcurrentCalls replays one trace on several workers
// at once, each evaluating its outputs, while buffers go back to the pool
// and are reused: every result must stay exact (run with -race).
func TestRecyclingUnderConcurrentCalls(t *testing.T) {
	f := func(in ...*array.Array) []*array.Array {
		h := ops.MaximumScalar(ops.MatMul(in[0], in[1]), 0)
		return []*array.Array{ops.MatMul(h, in[1]), ops.Sum(h, 0)}
	}
	c, in, want := compileOn(t, f, 7, 8)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := compile.NewWorker()
			defer w.Close()
			for i := range 20 {
				out := w.Call(c, in...)
				// evaluate the outputs in either order
				if (g+i)%2 == 0 {
					out[0], out[1] = out[1], out[0]
				}
				if err := out[0].Eval(); err != nil {
					t.Error(err)
					return
				}
				if err := out[1].Eval(); err != nil {
					t.Error(err)
					return
				}
				if (g+i)%2 == 0 {
					out[0], out[1] = out[1], out[0]
				}
				for k := range out {
					if d := cmp.Diff(want[k], out[k], arraytest.Approx(0, 0)); d != "" {
						t.Errorf("worker %d call %d output %d differs (-want +got):\n%s", g, i, k, d)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}
