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

// TestEnableDisableConcurrent flips compilation while other goroutines
// call: every call must give the right answer (run directly or replayed),
// and -race must see no race.
func TestEnableDisableConcurrent(t *testing.T) {
	if !compile.Enabled() {
		t.Skip("compilation is off in this process (" + compile.EnvDisable + "=1)")
	}
	defer compile.Enable()
	f := compile.Compile(func(in ...*array.Array) []*array.Array {
		return []*array.Array{ops.AddScalar(ops.MulScalar(in[0], 2), 1)}
	})
	defer f.Release()
	x := array.FromSlice([]float32{1, 2, 3})
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
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				got, err := array.ToSlice[float32](f.Call(x)[0])
				if err != nil || fmt.Sprint(got) != "[3 5 7]" {
					t.Errorf("got %v, %v; want [3 5 7]", got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	flips.Wait()
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
