package compile_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"weak"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/ops"
)

func f32(t *testing.T, a *array.Array) []float32 {
	t.Helper()
	v, err := array.ToSlice[float32](a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// counting returns a function that counts how often it is traced.
func counting(n *atomic.Int64) func(in ...*array.Array) []*array.Array {
	return func(in ...*array.Array) []*array.Array {
		n.Add(1)
		return []*array.Array{ops.Add(ops.Mul(in[0], in[0]), in[0])}
	}
}

func TestReleaseErasesEveryWorkerCache(t *testing.T) {
	var traces atomic.Int64
	g := counting(&traces)
	f := compile.Compile(g)
	w := compile.NewWorker()
	defer w.Close()
	x := array.FromSlice([]float32{1, 2, 3})
	for i := 0; i < 2; i++ {
		if got := f32(t, w.Call(f, x)[0]); got[2] != 12 {
			t.Fatalf("f(3) = %v, want 12", got[2])
		}
	}
	if traces.Load() != 1 || w.Traces() != 1 {
		t.Fatalf("after two calls on a worker: %d traces run, %d cached; want 1 and 1", traces.Load(), w.Traces())
	}
	f.Call(x) // the default worker is the last caller
	if traces.Load() != 2 || compile.DefaultWorker().Traces() < 1 {
		t.Fatalf("default worker call: %d traces run, want 2", traces.Load())
	}
	f.Release()
	if w.Traces() != 0 {
		t.Fatalf("after Release the worker holds %d traces, want 0", w.Traces())
	}
	f2 := compile.Compile(g) // the very same Go function value
	w.Call(f2, x)
	if traces.Load() != 3 || w.Traces() != 1 {
		t.Fatalf("a new Compile of the same function: %d traces run, %d cached; want 3 and 1", traces.Load(), w.Traces())
	}
	f2.Release()
	if err := array.Try(func() { f.Call(x) }); err == nil {
		t.Fatal("calling a released function did not fail")
	}
}

func TestUnreachableFuncIsErasedEverywhere(t *testing.T) {
	w := compile.NewWorker()
	defer w.Close()
	captured := ops.AddScalar(array.FromSlice([]float32{1, 2, 3}), 1)
	if err := captured.Eval(); err != nil {
		t.Fatal(err)
	}
	wc := weak.Make(captured)
	func() {
		c := captured
		f := compile.Compile(func(in ...*array.Array) []*array.Array { return []*array.Array{ops.Add(in[0], c)} })
		x := array.FromSlice([]float32{1, 1, 1})
		w.Call(f, x)
		f.Call(x)
	}()
	captured = nil
	if w.Traces() != 1 {
		t.Fatalf("worker holds %d traces, want 1", w.Traces())
	}
	deadline := time.Now().Add(5 * time.Second)
	for w.Traces() != 0 || wc.Value() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("after the Func became unreachable: worker holds %d traces, captured array alive: %v", w.Traces(), wc.Value() != nil)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

func TestClosuresOfOneLiteralNeverShareATrace(t *testing.T) {
	mk := func(c float32) *compile.Func {
		k := array.Scalar(c)
		return compile.Compile(func(in ...*array.Array) []*array.Array { return []*array.Array{ops.Mul(in[0], k)} })
	}
	x := array.FromSlice([]float32{1, 2})
	a, b := mk(2), mk(3)
	defer a.Release()
	defer b.Release()
	w := compile.NewWorker()
	defer w.Close()
	if got := f32(t, w.Call(a, x)[0]); got[1] != 4 {
		t.Fatalf("a(2) = %v, want 4", got[1])
	}
	if got := f32(t, w.Call(b, x)[0]); got[1] != 6 {
		t.Fatalf("b(2) = %v, want 6", got[1])
	}
	if w.Traces() != 2 {
		t.Fatalf("%d traces, want 2", w.Traces())
	}
}

func TestKeyChangesTraceAgain(t *testing.T) {
	var traces atomic.Int64
	f := compile.Compile(func(in ...*array.Array) []*array.Array {
		traces.Add(1)
		out := in[0]
		for _, x := range in[1:] {
			out = ops.Add(out, x)
		}
		return []*array.Array{out}
	})
	defer f.Release()
	w := compile.NewWorker()
	defer w.Close()
	x3 := array.FromSlice([]float32{1, 2, 3})
	steps := []struct {
		name string
		in   []*array.Array
		want int64
	}{
		{"first call", []*array.Array{x3}, 1},
		{"same signature", []*array.Array{array.FromSlice([]float32{4, 5, 6})}, 1},
		{"new shape", []*array.Array{array.FromSlice([]float32{1, 2})}, 2},
		{"new dtype", []*array.Array{array.FromSlice([]float64{1, 2, 3})}, 3},
		{"more inputs", []*array.Array{x3, x3}, 4},
		{"same as first", []*array.Array{x3}, 4},
	}
	for _, s := range steps {
		w.Call(f, s.in...)
		if traces.Load() != s.want {
			t.Fatalf("%s: %d traces, want %d", s.name, traces.Load(), s.want)
		}
	}
	other := compile.NewWorker(compile.OnStream(array.NewStream(array.CPU)))
	defer other.Close()
	other.Call(f, x3)
	if traces.Load() != 5 {
		t.Fatalf("another stream: %d traces, want 5", traces.Load())
	}
}

func TestConcurrentFirstCallsTraceOnce(t *testing.T) {
	var traces atomic.Int64
	f := compile.Compile(func(in ...*array.Array) []*array.Array {
		traces.Add(1)
		time.Sleep(10 * time.Millisecond)
		return []*array.Array{ops.MulScalar(in[0], 2)}
	})
	defer f.Release()
	x := array.FromSlice([]float32{1, 2, 3})
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := f32(t, f.Call(x)[0]); got[2] != 6 {
				t.Errorf("got %v", got)
			}
		}()
	}
	wg.Wait()
	if traces.Load() != 1 {
		t.Fatalf("%d traces, want 1", traces.Load())
	}
}

func TestMaxTracesEvictsLeastRecentlyUsed(t *testing.T) {
	var traces atomic.Int64
	f := compile.Compile(func(in ...*array.Array) []*array.Array {
		traces.Add(1)
		return []*array.Array{ops.Neg(in[0])}
	})
	defer f.Release()
	w := compile.NewWorker(compile.MaxTraces(2))
	defer w.Close()
	a, b, c := array.FromSlice([]float32{1}), array.FromSlice([]float32{1, 2}), array.FromSlice([]float32{1, 2, 3})
	w.Call(f, a)
	w.Call(f, b)
	w.Call(f, a) // a is now the most recent
	w.Call(f, c) // evicts b
	if w.Traces() != 2 || traces.Load() != 3 {
		t.Fatalf("%d cached, %d traced; want 2 and 3", w.Traces(), traces.Load())
	}
	w.Call(f, a)
	if traces.Load() != 3 {
		t.Fatalf("a was evicted: %d traces", traces.Load())
	}
	w.Call(f, b)
	if traces.Load() != 4 {
		t.Fatalf("b was kept: %d traces, want 4", traces.Load())
	}
}
