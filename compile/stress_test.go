package compile_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

func TestReleaseDuringTraceKeepsNoTrace(t *testing.T) {
	started, proceed := make(chan struct{}), make(chan struct{})
	f := compile.Compile(func(in ...*array.Array) []*array.Array {
		close(started)
		<-proceed
		return []*array.Array{ops.AddScalar(in[0], 1)}
	})
	w := compile.NewWorker()
	defer w.Close()
	x := array.FromSlice([]float32{1, 2})
	done := make(chan []*array.Array)
	go func() { done <- w.Call(f, x) }()
	<-started
	f.Release()
	close(proceed)
	out := <-done
	if got := f32(t, out[0]); got[1] != 3 {
		t.Fatalf("the in-flight call returned %v, want [2 3]", got)
	}
	if w.Traces() != 0 {
		t.Fatalf("a trace of a released function was kept: %d traces", w.Traces())
	}
}

func TestReleaseDuringReplayOnAnotherGoroutine(t *testing.T) {
	f := compile.Compile(func(in ...*array.Array) []*array.Array {
		y := in[0]
		for i := 0; i < 20; i++ {
			y = ops.AddScalar(y, 1)
		}
		return []*array.Array{y}
	})
	x := array.FromSlice([]float32{0, 1, 2})
	f.Call(x)
	var wg sync.WaitGroup
	var calls, refused atomic.Int64
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				var out []*array.Array
				err := array.Try(func() { out = f.Call(x) })
				if err != nil {
					refused.Add(1)
					continue
				}
				calls.Add(1)
				if v := f32(t, out[0]); v[2] != 22 {
					t.Errorf("replay gave %v", v)
					return
				}
			}
		}()
	}
	time.Sleep(time.Millisecond)
	f.Release()
	wg.Wait()
	if err := array.Try(func() { f.Call(x) }); err == nil {
		t.Fatal("a released function replayed")
	}
	if calls.Load()+refused.Load() != 800 {
		t.Fatalf("%d calls succeeded and %d were refused, want 800 in all", calls.Load(), refused.Load())
	}
}

func TestCloseDuringCalls(t *testing.T) {
	f := compile.Compile(func(in ...*array.Array) []*array.Array { return []*array.Array{ops.Mul(in[0], in[0])} })
	defer f.Release()
	w := compile.NewWorker()
	x := array.FromSlice([]float32{3})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				var out []*array.Array
				if err := array.Try(func() { out = w.Call(f, x) }); err != nil {
					if !strings.Contains(err.Error(), "closed") {
						t.Errorf("unexpected error %v", err)
					}
					return
				}
				if v := f32(t, out[0]); v[0] != 9 {
					t.Errorf("got %v", v)
					return
				}
			}
		}()
	}
	time.Sleep(time.Millisecond)
	w.Close()
	w.Close() // idempotent
	wg.Wait()
	if w.Traces() != 0 {
		t.Fatalf("a closed worker holds %d traces", w.Traces())
	}
}

// TestStress runs 8 goroutines over 16 functions, calling, releasing and
// recompiling them and closing workers, checking every result.
func TestStress(t *testing.T) {
	const goroutines, funcs = 8, 16
	var mu sync.Mutex
	fs := make([]*compile.Func, funcs)
	mk := func(k int) *compile.Func {
		c := array.Scalar(float32(k))
		return compile.Compile(func(in ...*array.Array) []*array.Array {
			return []*array.Array{ops.Add(ops.Mul(in[0], c), c)}
		})
	}
	for k := range fs {
		fs[k] = mk(k)
	}
	iters := 300
	if testing.Short() {
		iters = 60
	}
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 5))
			w := compile.NewWorker(compile.MaxTraces(8))
			for i := 0; i < iters; i++ {
				k := r.IntN(funcs)
				mu.Lock()
				f := fs[k]
				mu.Unlock()
				n := 1 + r.IntN(4)
				x := array.FromSlice(make([]float32, n))
				var out []*array.Array
				var err error
				switch r.IntN(10) {
				case 0:
					f.Release()
					mu.Lock()
					if fs[k] == f {
						fs[k] = mk(k)
					}
					mu.Unlock()
					continue
				case 1:
					w.Close()
					w = compile.NewWorker(compile.MaxTraces(8))
					continue
				case 2, 3:
					err = array.Try(func() { out = f.Call(x) })
				default:
					err = array.Try(func() { out = w.Call(f, x) })
				}
				if err != nil {
					if !strings.Contains(err.Error(), "released") {
						t.Errorf("unexpected error %v", err)
					}
					continue
				}
				v := f32(t, out[0])
				for _, e := range v {
					if e != float32(k) {
						t.Errorf("function %d gave %v", k, v)
						return
					}
				}
				if w.Traces() > 8 {
					t.Errorf("worker holds %d traces, bound 8", w.Traces())
				}
			}
			w.Close()
		}(g)
	}
	wg.Wait()
	for _, f := range fs {
		f.Release()
	}
}

func TestShapeChangingLoopStaysBounded(t *testing.T) {
	f := compile.Compile(func(in ...*array.Array) []*array.Array { return []*array.Array{ops.Exp(in[0])} })
	defer f.Release()
	w := compile.NewWorker(compile.MaxTraces(4))
	defer w.Close()
	var before, after runtime.MemStats
	for i := 1; i <= 2000; i++ {
		if i == 1000 {
			runtime.GC()
			runtime.ReadMemStats(&before)
		}
		out := w.Call(f, array.FromSlice(make([]float32, i%500+1)))
		if err := out[0].Eval(); err != nil {
			t.Fatal(err)
		}
		if w.Traces() > 4 {
			t.Fatalf("%d traces, bound 4", w.Traces())
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grow := int64(after.HeapAlloc) - int64(before.HeapAlloc); grow > 4<<20 {
		t.Fatalf("heap grew by %d bytes over 1000 calls with new shapes", grow)
	}
}

func TestShapeless(t *testing.T) {
	var traces atomic.Int64
	f := compile.Compile(func(in ...*array.Array) []*array.Array {
		traces.Add(1)
		return []*array.Array{ops.Tanh(ops.Add(ops.Mul(in[0], in[0]), in[1]))}
	}, compile.Shapeless())
	defer f.Release()
	w := compile.NewWorker()
	defer w.Close()
	for _, n := range []int{3, 5, 1, 8} {
		x := ops.Arange(0, float64(n), 1, array.Float32)
		y := array.Scalar(float32(-1))
		got := f32(t, w.Call(f, x, y)[0])
		want := f32(t, ops.Tanh(ops.Add(ops.Mul(x, x), y)))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("n=%d: %v, want %v", n, got, want)
		}
	}
	if traces.Load() != 1 {
		t.Fatalf("%d traces for four shapes of one rank, want 1", traces.Load())
	}
	// a new rank traces again
	w.Call(f, array.FromSlice([]float32{1, 2, 3, 4}, 2, 2), array.Scalar(float32(0)))
	if traces.Load() != 2 {
		t.Fatalf("%d traces after a new rank, want 2", traces.Load())
	}
}

func TestShapelessRejectsShapeLogic(t *testing.T) {
	f := compile.Compile(func(in ...*array.Array) []*array.Array {
		return []*array.Array{ops.Reshape(in[0], 2, 2)}
	}, compile.Shapeless())
	defer f.Release()
	f.Call(array.FromSlice([]float32{1, 2, 3, 4}))
	err := array.Try(func() { f.Call(array.FromSlice([]float32{1, 2, 3, 4, 5, 6})) })
	var e *array.Error
	if !errors.As(err, &e) || !strings.Contains(e.Error(), "Shapeless") {
		t.Fatalf("got %v, want an *array.Error about Shapeless", err)
	}
}

func TestBadFunctions(t *testing.T) {
	none := compile.Compile(func(in ...*array.Array) []*array.Array { return nil })
	defer none.Release()
	if err := array.Try(func() { none.Call(array.Scalar(float32(1))) }); err == nil || !strings.Contains(err.Error(), "no arrays") {
		t.Fatalf("a function returning nothing: %v", err)
	}
	reads := compile.Compile(func(in ...*array.Array) []*array.Array {
		if in[0].Item() > 0 {
			return []*array.Array{in[0]}
		}
		return []*array.Array{ops.Neg(in[0])}
	})
	defer reads.Release()
	err := array.Try(func() { reads.Call(array.Scalar(float32(1))) })
	if err == nil || !strings.Contains(err.Error(), "placeholder") {
		t.Fatalf("a function reading values while tracing: %v", err)
	}
}

func TestTransformsRunCompiledFunctionsUncompiled(t *testing.T) {
	var traces atomic.Int64
	f := compile.Compile(func(in ...*array.Array) []*array.Array {
		traces.Add(1)
		return []*array.Array{ops.Sum(ops.Mul(ops.Sin(in[0]), in[0]))}
	})
	defer f.Release()
	loss := func(in ...*array.Array) *array.Array { return f.Call(in...)[0] }
	x := array.FromSlice([]float64{0.5, 1, 2})
	cached := compile.DefaultWorker().Traces()
	g, err := array.ToSlice[float64](graph.Grad(loss)(x)[0])
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range []float64{0.5, 1, 2} {
		want := v*math.Cos(v) + math.Sin(v)
		if d := g[i] - want; d > 1e-12 || d < -1e-12 {
			t.Fatalf("grad[%d] = %v, want %v", i, g[i], want)
		}
	}
	if traces.Load() != 1 || compile.DefaultWorker().Traces() != cached {
		t.Fatalf("inside Grad: the function ran %d times (want 1, uncompiled) and %d traces were cached (want 0)", traces.Load(), compile.DefaultWorker().Traces()-cached)
	}
	// Compile(Grad(f)) is the fast path: it traces once and replays.
	cg := compile.Compile(graph.Grad(loss))
	defer cg.Release()
	for i := 0; i < 3; i++ {
		h, _ := array.ToSlice[float64](cg.Call(x)[0])
		for j := range g {
			if d := h[j] - g[j]; d > 1e-12 || d < -1e-12 {
				t.Fatalf("compiled grad %v, want %v", h, g)
			}
		}
	}
}

func TestDisableCompile(t *testing.T) {
	if os.Getenv("FATHOM_TEST_CHILD") == "1" {
		var traces atomic.Int64
		f := compile.Compile(func(in ...*array.Array) []*array.Array {
			traces.Add(1)
			return []*array.Array{ops.Neg(in[0])}
		})
		x := array.Scalar(float32(2))
		for i := 0; i < 3; i++ {
			if v := f.Call(x)[0].Item(); v != -2 {
				t.Fatalf("got %v", v)
			}
		}
		if traces.Load() != 3 || compile.DefaultWorker().Traces() != 0 {
			t.Fatalf("with compilation off: %d runs (want 3), %d cached (want 0)", traces.Load(), compile.DefaultWorker().Traces())
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDisableCompile$")
	cmd.Env = append(os.Environ(), "FATHOM_TEST_CHILD=1", compile.EnvDisable+"=1", "GORACE=atexit_sleep_ms=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func TestShapelessMeanAndReductions(t *testing.T) {
	f := compile.Compile(func(in ...*array.Array) []*array.Array {
		x := in[0]
		return []*array.Array{ops.Mean(x, 1), ops.Softmax(x, -1), ops.MatMul(x, ops.Transpose(x))}
	}, compile.Shapeless())
	defer f.Release()
	for _, n := range []int{2, 3, 7} {
		x := ops.Reshape(ops.Arange(0, float64(2*n), 1, array.Float64), 2, n)
		got := f.Call(x)
		want := []*array.Array{ops.Mean(x, 1), ops.Softmax(x, -1), ops.MatMul(x, ops.Transpose(x))}
		for k := range want {
			g, err := array.ToSlice[float64](got[k])
			if err != nil {
				t.Fatal(err)
			}
			w, _ := array.ToSlice[float64](want[k])
			if fmt.Sprint(got[k].Shape(), g) != fmt.Sprint(want[k].Shape(), w) {
				t.Fatalf("n=%d output %d: %v %v, want %v %v", n, k, got[k].Shape(), g, want[k].Shape(), w)
			}
		}
	}
}
