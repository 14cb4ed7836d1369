package array_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fathom-go/fathom/array"
)

// The primitives of these tests, and eval_test.go's that they share, work
// on 0-d float32 arrays and count their runs, so a test can tell that a
// kernel ran exactly once whoever ran it.

// gatePrim copies its input once open is closed, after closing entered
// (once), so a test can hold an evaluation inside a kernel.
type gatePrim struct {
	entered, open chan struct{}
	once          sync.Once
	runs          atomic.Int64
}

func newGate() *gatePrim {
	return &gatePrim{entered: make(chan struct{}), open: make(chan struct{})}
}

func (p *gatePrim) Name() string { return "asyncGate" }
func (p *gatePrim) Eval(_ array.Stream, in, out []*array.Array) error {
	p.runs.Add(1)
	p.once.Do(func() { close(p.entered) })
	<-p.open
	setF32(out[0], f32Of(in[0]))
	return nil
}

func apply(p array.Primitive, in ...*array.Array) *array.Array {
	return array.New(array.CurrentStream(), nil, array.Float32, p, in...)
}

// diamondGraph is a graph whose outputs share most of their nodes: a
// chain behind a gate, and outputs that each add a different prefix of
// the chain to the gate's value. It returns the gate, the outputs, the
// values they must have, and the primitives of every node.
func diamondGraph(x *array.Array, n int) (*gatePrim, []*array.Array, []float32, []*sumPrim) {
	g := newGate()
	top := apply(g, x)
	var prims []*sumPrim
	chain := top
	v := f32Of(x)
	var outs []*array.Array
	var want []float32
	for i := range n {
		p := &sumPrim{add: float32(i + 1)}
		prims = append(prims, p)
		chain = apply(p, chain)
		v += float32(i + 1)
		q := &sumPrim{}
		prims = append(prims, q)
		outs = append(outs, apply(q, chain, top))
		want = append(want, v+f32Of(x))
	}
	return g, outs, want, prims
}

// TestAsyncEvalReadersWaitAndNothingRunsTwice holds the evaluation inside
// its first kernel while many goroutines read the outputs (the same ones
// and overlapping ones, through Eval, ToSlice and Item): each read must
// wait and see the right value, and every kernel must run once.
func TestAsyncEvalReadersWaitAndNothingRunsTwice(t *testing.T) {
	x := array.Scalar(float32(2))
	g, outs, want, prims := diamondGraph(x, 12)
	array.AsyncEval(outs...)
	<-g.entered
	for _, o := range outs {
		if o.Evaluated() {
			t.Fatal("an output is evaluated while the first kernel is still running")
		}
	}
	const readers = 8
	var wg sync.WaitGroup
	errs := make(chan error, readers*len(outs))
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range outs {
				i := (k*(r+1) + r) % len(outs)
				var got float32
				switch (r + k) % 3 {
				case 0:
					if err := outs[i].Eval(); err != nil {
						errs <- err
						return
					}
					got = f32Of(outs[i])
				case 1:
					s, err := array.ToSlice[float32](outs[i])
					if err != nil {
						errs <- err
						return
					}
					got = s[0]
				default:
					got = float32(outs[i].Item())
				}
				if got != want[i] {
					errs <- fmt.Errorf("reader %d: output %d is %v, want %v", r, i, got, want[i])
				}
			}
		}()
	}
	// The readers must be blocked behind the gate, not done.
	time.Sleep(10 * time.Millisecond)
	for _, o := range outs {
		if o.Evaluated() {
			t.Fatal("an output became evaluated while the gate was shut")
		}
	}
	close(g.open)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := g.runs.Load(); n != 1 {
		t.Errorf("the gate ran %d times, want 1", n)
	}
	for i, p := range prims {
		if n := p.evals.Load(); n != 1 {
			t.Errorf("node %d ran %d times, want 1", i, n)
		}
	}
}

// TestAsyncEvalOverlappingCalls starts many AsyncEvals of overlapping
// graphs from several goroutines while others read: every kernel runs
// once and every value is right.
func TestAsyncEvalOverlappingCalls(t *testing.T) {
	x := array.Scalar(float32(1))
	g, outs, want, prims := diamondGraph(x, 16)
	var wg sync.WaitGroup
	for r := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// each call asks for a different window of the outputs
			lo := (r * 3) % len(outs)
			array.AsyncEval(outs[lo:min(lo+5, len(outs))]...)
		}()
	}
	wg.Wait()
	<-g.entered
	close(g.open)
	var errs atomic.Int64
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := len(outs) - 1 - r; i >= 0; i -= 2 {
				if got := float32(outs[i].Item()); got != want[i] {
					errs.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if n := errs.Load(); n != 0 {
		t.Errorf("%d reads gave a wrong value", n)
	}
	if err := array.Eval(outs...); err != nil {
		t.Fatal(err)
	}
	for i, o := range outs {
		if got := f32Of(o); got != want[i] {
			t.Errorf("output %d = %v, want %v", i, got, want[i])
		}
	}
	for i, p := range prims {
		if n := p.evals.Load(); n != 1 {
			t.Errorf("node %d ran %d times, want 1", i, n)
		}
	}
}

// TestAsyncEvalErrorSurfacesOnEveryRead: a kernel that fails during an
// asynchronous evaluation is reported by the first read and by every
// later one, through each way of reading, and is not run again.
func TestAsyncEvalErrorSurfacesOnEveryRead(t *testing.T) {
	boom := errors.New("boom")
	f := &failPrim{err: boom}
	bad := apply(f, one())
	after := apply(&sumPrim{add: 1}, bad)
	array.AsyncEval(after)
	for i := range 3 {
		if err := after.Eval(); !errors.Is(err, boom) {
			t.Fatalf("read %d: Eval returned %v, want %v", i, err, boom)
		}
	}
	if _, err := array.ToSlice[float32](after); !errors.Is(err, boom) {
		t.Errorf("ToSlice returned %v, want %v", err, boom)
	}
	if err := bad.Eval(); !errors.Is(err, boom) {
		t.Errorf("Eval of the failed node itself returned %v, want %v", err, boom)
	}
	err := array.Try(func() { after.Item() })
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("Item panicked with %v, want an *Error about boom", err)
	}
	if n := f.evals.Load(); n != 1 {
		t.Errorf("the failing kernel ran %d times, want 1", n)
	}
}

// TestAsyncEvalPanicDoesNotEndTheProcess: a kernel that panics on the
// background goroutine becomes an error for the reader.
func TestAsyncEvalPanicDoesNotEndTheProcess(t *testing.T) {
	f := &failPrim{panics: "index out of range [7] with length 3"}
	y := apply(f, one())
	array.AsyncEval(y)
	for range 2 {
		err := y.Eval()
		var e *array.Error
		if !errors.As(err, &e) || e.Op != "fail" || !strings.Contains(e.Msg, "kernel panicked") {
			t.Fatalf("Eval returned %v, want a *Error from fail saying the kernel panicked", err)
		}
	}
	// The process goes on: an unrelated evaluation works.
	z := apply(&sumPrim{add: 2}, one())
	array.AsyncEval(z)
	if got := z.Item(); got != 3 {
		t.Errorf("after the panic, 1+2 evaluated to %v", got)
	}
}

// TestAsyncEvalRunsCallsInOrder: calls made one after another are
// evaluated in that order.
func TestAsyncEvalRunsCallsInOrder(t *testing.T) {
	var mu sync.Mutex
	var order []int
	g := newGate()
	first := apply(g, one())
	var outs []*array.Array
	for i := range 5 {
		p := &logPrim{i: i, mu: &mu, log: &order}
		outs = append(outs, apply(p, first))
		array.AsyncEval(outs[i])
	}
	<-g.entered
	close(g.open)
	if err := array.Eval(outs...); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(order) != "[0 1 2 3 4]" {
		t.Errorf("calls ran in the order %v, want [0 1 2 3 4]", order)
	}
}

// logPrim appends i to log, then copies its input.
type logPrim struct {
	i   int
	mu  *sync.Mutex
	log *[]int
}

func (p *logPrim) Name() string { return "asyncLog" }
func (p *logPrim) Eval(_ array.Stream, in, out []*array.Array) error {
	p.mu.Lock()
	*p.log = append(*p.log, p.i)
	p.mu.Unlock()
	setF32(out[0], f32Of(in[0]))
	return nil
}

// TestAsyncEvalBoundsPendingCalls: with the worker held inside a kernel,
// a few calls queue and return at once, and the one after them waits
// until the queue drains.
func TestAsyncEvalBoundsPendingCalls(t *testing.T) {
	g := newGate()
	top := apply(g, one())
	var outs []*array.Array
	for i := range 8 {
		outs = append(outs, apply(&sumPrim{add: float32(i)}, top))
	}
	for _, o := range outs {
		array.AsyncEval(o)
	}
	<-g.entered
	last := apply(&sumPrim{add: 100}, top)
	returned := make(chan struct{})
	go func() {
		array.AsyncEval(last)
		close(returned)
	}()
	select {
	case <-returned:
		t.Fatal("AsyncEval returned with 8 calls pending and the worker held")
	case <-time.After(20 * time.Millisecond):
	}
	close(g.open)
	<-returned
	if got := last.Item(); got != 101 {
		t.Errorf("last = %v, want 101", got)
	}
	for i, o := range outs {
		if got := o.Item(); got != float64(1+i) {
			t.Errorf("output %d = %v, want %v", i, got, 1+i)
		}
	}
}

func TestAsyncEvalNilArrayPanics(t *testing.T) {
	err := array.Try(func() { array.AsyncEval(one(), nil) })
	var e *array.Error
	if !errors.As(err, &e) || e.Op != "array.AsyncEval" || !strings.Contains(e.Msg, "position 1") {
		t.Fatalf("AsyncEval(x, nil) gave %v, want a *Error from array.AsyncEval naming position 1", err)
	}
}

// TestAsyncEvalOfPlaceholderReportsOnRead: what Eval refuses (a
// placeholder) is refused by the read after an AsyncEval, not by a panic
// on the background goroutine.
func TestAsyncEvalOfPlaceholderReportsOnRead(t *testing.T) {
	p := array.NewPlaceholder(array.CurrentStream(), []int{2}, array.Float32)
	array.AsyncEval(p)
	if err := p.Eval(); err == nil || !strings.Contains(err.Error(), "placeholder") {
		t.Fatalf("Eval of a placeholder after AsyncEval returned %v", err)
	}
}
