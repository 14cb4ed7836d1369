package compile_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/ops"
)

// keptDims is a function with reductions that keep their axes, as users
// write them (no Reshape of their own).
func keptDims(in ...*array.Array) []*array.Array {
	x := in[0]
	return []*array.Array{
		ops.Sub(x, ops.KeepDims(ops.Mean, x, 1)),
		ops.KeepDims(ops.Max, x, 0, 2),
		ops.KeepDims(ops.Sum, x),
		ops.Var(x, 1),
		ops.Std(x, 0, 2),
		ops.StdDDOF(x, 1, -1),
		ops.Squeeze(ops.KeepDims(ops.Min, x, 1), 1),
		ops.NumberOfElements(x, array.Float64, 0, 2),
		ops.Mean(x, 0, 2),
		ops.VarDDOF(x, 1, 0),
		ops.Softmax(x, -1),
	}
}

func TestShapelessKeepDimsVarStd(t *testing.T) {
	var traces atomic.Int64
	f := compile.Compile(func(in ...*array.Array) []*array.Array {
		traces.Add(1)
		return keptDims(in...)
	}, compile.Shapeless())
	defer f.Release()
	w := compile.NewWorker()
	defer w.Close()
	for _, shape := range [][]int{{2, 3, 4}, {3, 5, 2}, {1, 1, 7}, {4, 2, 3}} {
		n := shape[0] * shape[1] * shape[2]
		x := ops.Reshape(ops.Sin(ops.Arange(0, float64(n), 1, array.Float64)), shape...)
		got, want := w.Call(f, x), keptDims(x)
		for k := range want {
			g, err := array.ToSlice[float64](got[k])
			if err != nil {
				t.Fatalf("shape %v output %d: %v", shape, k, err)
			}
			wv, _ := array.ToSlice[float64](want[k])
			if fmt.Sprint(got[k].Shape()) != fmt.Sprint(want[k].Shape()) {
				t.Fatalf("shape %v output %d: shape %v, want %v", shape, k, got[k].Shape(), want[k].Shape())
			}
			for i := range wv {
				if d := g[i] - wv[i]; d > 1e-12 || d < -1e-12 {
					t.Fatalf("shape %v output %d: %v, want %v", shape, k, g, wv)
				}
			}
		}
	}
	if traces.Load() != 1 {
		t.Fatalf("%d traces for four shapes of one rank, want 1", traces.Load())
	}
}

func TestShapelessReplayChecksEmptyMax(t *testing.T) {
	var traces atomic.Int64
	f := compile.Compile(func(in ...*array.Array) []*array.Array {
		traces.Add(1)
		return []*array.Array{ops.KeepDims(ops.Max, in[0], -1)}
	}, compile.Shapeless())
	defer f.Release()
	f.Call(ops.Ones([]int{2, 3}, array.Float32))
	err := array.Try(func() { f.Call(ops.Zeros([]int{0, 0}, array.Float32)) })
	var e *array.Error
	if !errors.As(err, &e) || !strings.Contains(e.Error(), "empty") {
		t.Fatalf("Max over an empty axis on replay: %v, want an *array.Error", err)
	}
	if traces.Load() != 1 {
		t.Fatalf("%d traces, want 1", traces.Load())
	}
}

// TestShapelessSqueezeChecksSize: Squeeze's axes are fixed at the trace,
// so a replay where one of them is no longer of size 1 is an error that
// names it, never a reshape into the wrong shape.
func TestShapelessSqueezeChecksSize(t *testing.T) {
	var traces atomic.Int64
	f := compile.Compile(func(in ...*array.Array) []*array.Array {
		traces.Add(1)
		return []*array.Array{ops.Squeeze(ops.ExpandDims(in[0], 0), 0, 2)}
	}, compile.Shapeless())
	defer f.Release()
	for _, shape := range [][]int{{2, 1, 3}, {5, 1, 4}} {
		x := ops.Ones(shape, array.Float32)
		if got := f.Call(x)[0].Shape(); fmt.Sprint(got) != fmt.Sprint([]int{shape[0], shape[2]}) {
			t.Fatalf("shape %v: result of shape %v", shape, got)
		}
	}
	err := array.Try(func() { f.Call(ops.Ones([]int{2, 4, 3}, array.Float32)) })
	var e *array.Error
	if !errors.As(err, &e) || !strings.Contains(e.Error(), "axis 2 of size 4") {
		t.Fatalf("Squeeze of an axis of size 4 on replay: %v, want an *array.Error naming it", err)
	}
	if traces.Load() != 1 {
		t.Fatalf("%d traces, want 1", traces.Load())
	}
}

func TestEnableDisable(t *testing.T) {
	if !compile.Enabled() {
		t.Skip("compilation is off in this process (" + compile.EnvDisable + "=1)")
	}
	defer compile.Enable()
	var traces atomic.Int64
	f := compile.Compile(counting(&traces))
	defer f.Release()
	w := compile.NewWorker()
	defer w.Close()
	x := array.FromSlice([]float32{1, 2, 3})
	call := func() {
		t.Helper()
		if got := f32(t, w.Call(f, x)[0]); fmt.Sprint(got) != fmt.Sprint(f32(t, counting(new(atomic.Int64))(x)[0])) {
			t.Fatalf("got %v", got)
		}
	}
	compile.Disable()
	if compile.Enabled() {
		t.Fatal("Enabled after Disable")
	}
	for range 3 {
		call()
	}
	if traces.Load() != 3 || w.Traces() != 0 {
		t.Fatalf("disabled: %d runs (want 3, one per call), %d cached (want 0)", traces.Load(), w.Traces())
	}
	compile.Enable()
	for range 3 {
		call()
	}
	if traces.Load() != 4 || w.Traces() != 1 {
		t.Fatalf("enabled: %d runs (want 4: one trace, then replays), %d cached (want 1)", traces.Load(), w.Traces())
	}
	compile.Disable()
	call()
	compile.Enable()
	call()
	if traces.Load() != 5 || w.Traces() != 1 {
		t.Fatalf("disabled once more, then enabled: %d runs (want 5, the cached trace serving again), %d cached (want 1)", traces.Load(), w.Traces())
	}
}

// TestEnableDisableConcurrent flips compilation while goroutines call one
// compiled function, on the default worker and on workers of their own:
// every call must give the right answer (run directly or replayed), -race
// must see no race, and each worker must trace the function exactly once
// however the calls and flips interleave (singleflight), while a call made
// when compilation was off runs the function on the caller's arrays.
func TestEnableDisableConcurrent(t *testing.T) {
	if !compile.Enabled() {
		t.Skip("compilation is off in this process (" + compile.EnvDisable + "=1)")
	}
	defer compile.Enable()
	const goroutines, calls = 8, 50
	x := array.FromSlice([]float32{1, 2, 3})
	var traces, direct atomic.Int64
	f := compile.Compile(func(in ...*array.Array) []*array.Array {
		// a trace sees placeholders, a direct run the caller's array
		if in[0] == x {
			direct.Add(1)
		} else {
			traces.Add(1)
		}
		return []*array.Array{ops.AddScalar(ops.MulScalar(in[0], 2), 1)}
	})
	defer f.Release()
	check := func(out []*array.Array) bool {
		got, err := array.ToSlice[float32](out[0])
		if err != nil || fmt.Sprint(got) != "[3 5 7]" {
			t.Errorf("got %v, %v; want [3 5 7]", got, err)
			return false
		}
		return true
	}
	stop := make(chan struct{})
	var flips sync.WaitGroup
	flips.Add(1)
	go func() {
		defer flips.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if i%2 == 0 {
				compile.Disable()
			} else {
				compile.Enable()
			}
		}
	}()
	workers := make([]*compile.Worker, goroutines/2)
	for i := range workers {
		workers[i] = compile.NewWorker()
		defer workers[i].Close()
	}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range calls {
				// the even goroutines share the default worker, the odd
				// ones each have a worker of their own
				var out []*array.Array
				if g%2 == 0 {
					out = f.Call(x)
				} else {
					out = workers[g/2].Call(f, x)
				}
				if !check(out) {
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	flips.Wait()
	compile.Enable()
	// one enabled call each, so that every worker has traced by now
	check(f.Call(x))
	for _, w := range workers {
		check(w.Call(f, x))
		if w.Traces() != 1 {
			t.Errorf("a worker holds %d traces, want 1", w.Traces())
		}
	}
	if want := int64(len(workers) + 1); traces.Load() != want {
		t.Errorf("%d traces, want %d: one per worker, the default included", traces.Load(), want)
	}
	if d := direct.Load(); d > goroutines*calls {
		t.Errorf("%d direct runs for %d calls", d, goroutines*calls)
	}
	t.Logf("%d of %d calls ran with compilation off", direct.Load(), goroutines*calls)
}

func ExampleDisable() {
	runs := 0
	f := compile.Compile(func(in ...*array.Array) []*array.Array {
		runs++
		return []*array.Array{ops.MulScalar(in[0], 2)}
	})
	defer f.Release()
	x := array.FromSlice([]float32{1, 2})
	compile.Disable()
	f.Call(x)
	f.Call(x)
	fmt.Println("disabled: the function ran", runs, "times")
	compile.Enable()
	f.Call(x)
	f.Call(x)
	fmt.Println("enabled: the function ran", runs, "times", f.Call(x)[0])
	// Output:
	// disabled: the function ran 2 times
	// enabled: the function ran 3 times array([2., 4.], dtype=float32)
}

// TestShapelessLikeFollowsInput checks that ZerosLike, OnesLike and
// FullLike of an input follow the input to a new shape on replay: they
// used to be constants of the traced shape, so Sum(OnesLike(x)) gave the
// first call's count forever and Add(x, OnesLike(x)) the first shape.
func TestShapelessLikeFollowsInput(t *testing.T) {
	var traces atomic.Int64
	f := compile.Compile(func(in ...*array.Array) []*array.Array {
		traces.Add(1)
		x := in[0]
		return []*array.Array{
			ops.Add(ops.Sum(x), ops.Sum(ops.OnesLike(x))),
			ops.Add(x, ops.FullLike(x, 2)),
			ops.Mul(ops.AddScalar(ops.ZerosLike(x), 3), x),
		}
	}, compile.Shapeless())
	defer f.Release()
	w := compile.NewWorker()
	defer w.Close()
	for _, shape := range [][]int{{2, 3}, {4, 5}, {1, 3}} {
		n := shape[0] * shape[1]
		x := ops.Reshape(ops.Arange(0, float64(n), 1, array.Float64), shape...)
		got := w.Call(f, x)
		s, err := array.ToSlice[float64](got[0])
		if err != nil {
			t.Fatal(err)
		}
		if want := float64(n*(n-1)/2 + n); s[0] != want {
			t.Errorf("shape %v: Sum(x)+Sum(OnesLike(x)) = %v, want %v", shape, s[0], want)
		}
		for k, scale := range []float64{1, 3} {
			o := got[k+1]
			if fmt.Sprint(o.Shape()) != fmt.Sprint(shape) {
				t.Fatalf("shape %v: output %d has shape %v", shape, k+1, o.Shape())
			}
			v, _ := array.ToSlice[float64](o)
			for i, e := range v {
				want := float64(i) + 2
				if k == 1 {
					want = scale * float64(i)
				}
				if e != want {
					t.Fatalf("shape %v output %d element %d: %v, want %v", shape, k+1, i, e, want)
				}
			}
		}
	}
	if traces.Load() != 1 {
		t.Fatalf("%d traces for three shapes of one rank, want 1", traces.Load())
	}
}
