package array_test

import (
	"encoding/binary"
	"errors"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"weak"

	"github.com/fathom-go/fathom/internal/tracing"

	"github.com/fathom-go/fathom/array"
)

// The primitives below work on 0-d float32 arrays, enough to observe the
// scheduler without depending on package ops.

func f32Of(a *array.Array) float32 {
	return math.Float32frombits(binary.NativeEndian.Uint32(a.Storage().Bytes()[4*a.Offset():]))
}

func setF32(a *array.Array, v float32) {
	st := array.AllocCPU(4)
	binary.NativeEndian.PutUint32(st.Bytes(), math.Float32bits(v))
	a.SetData(st, nil, 0)
}

// sumPrim writes the sum of its inputs plus add, and counts its
// evaluations.
type sumPrim struct {
	add   float32
	evals atomic.Int64
}

func (p *sumPrim) Name() string { return "sum" }
func (p *sumPrim) Eval(_ array.Stream, in, out []*array.Array) error {
	p.evals.Add(1)
	s := p.add
	for _, x := range in {
		s += f32Of(x)
	}
	setF32(out[0], s)
	return nil
}

func sum(p *sumPrim, in ...*array.Array) *array.Array {
	return array.New(array.CurrentStream(), nil, array.Float32, p, in...)
}

// pairPrim has two outputs: its input plus one and minus one.
type pairPrim struct{ evals atomic.Int64 }

func (p *pairPrim) Name() string { return "pair" }
func (p *pairPrim) Eval(_ array.Stream, in, out []*array.Array) error {
	p.evals.Add(1)
	setF32(out[0], f32Of(in[0])+1)
	setF32(out[1], f32Of(in[0])-1)
	return nil
}

// viewPrim makes its output a view of its input's memory.
type viewPrim struct{}

func (viewPrim) Name() string { return "view" }
func (viewPrim) Eval(_ array.Stream, in, out []*array.Array) error {
	out[0].SetData(in[0].Storage(), in[0].Strides(), in[0].Offset())
	return nil
}

func view(x *array.Array) *array.Array {
	return array.New(x.Stream(), x.Shape(), x.DType(), viewPrim{}, x)
}

// failPrim returns err, or panics with it if panics is set.
type failPrim struct {
	err    error
	panics any
	evals  atomic.Int64
}

func (p *failPrim) Name() string { return "fail" }
func (p *failPrim) Eval(array.Stream, []*array.Array, []*array.Array) error {
	p.evals.Add(1)
	if p.panics != nil {
		panic(p.panics)
	}
	return p.err
}

// lazyPrim forgets to give its output memory.
type lazyPrim struct{}

func (lazyPrim) Name() string                                            { return "lazy" }
func (lazyPrim) Eval(array.Stream, []*array.Array, []*array.Array) error { return nil }

func one() *array.Array { return array.Scalar(float32(1)) }

func TestEvalIsLazyAndRunsSharedNodesOnce(t *testing.T) {
	pa, pb, pc, pd := &sumPrim{add: 1}, &sumPrim{}, &sumPrim{add: 10}, &sumPrim{}
	x := one()
	a := sum(pa, x, x) // 3
	b := sum(pb, a, a) // 6
	c := sum(pc, a)    // 13
	d := sum(pd, b, c) // 19
	for _, p := range []*sumPrim{pa, pb, pc, pd} {
		if n := p.evals.Load(); n != 0 {
			t.Fatalf("a primitive ran %d times before Eval", n)
		}
	}
	if d.Evaluated() || d.Primitive() != pd || len(d.Inputs()) != 2 {
		t.Fatalf("pending d: Evaluated %v, Primitive %v, %d inputs", d.Evaluated(), d.Primitive(), len(d.Inputs()))
	}
	if err := d.Eval(); err != nil {
		t.Fatal(err)
	}
	if got := f32Of(d); got != 19 {
		t.Errorf("d = %v, want 19", got)
	}
	for i, p := range []*sumPrim{pa, pb, pc, pd} {
		if n := p.evals.Load(); n != 1 {
			t.Errorf("primitive %d ran %d times, want once", i, n)
		}
	}
	for _, v := range []*array.Array{a, b, c, d} {
		if !v.Evaluated() {
			t.Error("an input of d was not evaluated")
		}
	}
	// evaluated nodes are not run again, by any route
	if err := array.Eval(d, c, a); err != nil {
		t.Fatal(err)
	}
	if got := d.Item(); got != 19 {
		t.Errorf("Item = %v", got)
	}
	if n := pa.evals.Load() + pb.evals.Load() + pc.evals.Load() + pd.evals.Load(); n != 4 {
		t.Errorf("%d evaluations in all after re-evaluating, want 4", n)
	}
	if err := array.Eval(); err != nil {
		t.Errorf("Eval of nothing: %v", err)
	}
}

func TestReadingEvaluates(t *testing.T) {
	for name, read := range map[string]func(*array.Array){
		"ToSlice": func(a *array.Array) { _, _ = array.ToSlice[float32](a) },
		"Item":    func(a *array.Array) { a.Item() },
		"String":  func(a *array.Array) { _ = a.String() },
	} {
		p := &sumPrim{add: 2}
		a := sum(p, one())
		read(a)
		if p.evals.Load() != 1 || !a.Evaluated() || f32Of(a) != 3 {
			t.Errorf("%s: %d evaluations, evaluated %v", name, p.evals.Load(), a.Evaluated())
		}
	}
}

func TestSiblings(t *testing.T) {
	p := &pairPrim{}
	x := array.Scalar(float32(5))
	outs := array.NewMulti(array.CurrentStream(), [][]int{nil, nil}, []array.DType{array.Float32, array.Float32}, p, x)
	if len(outs) != 2 {
		t.Fatalf("%d outputs", len(outs))
	}
	for i, o := range outs {
		if sib := o.Siblings(); len(sib) != 2 || sib[0] != outs[0] || sib[1] != outs[1] {
			t.Errorf("output %d: Siblings %v", i, sib)
		}
		if o.SiblingIndex() != i {
			t.Errorf("output %d: SiblingIndex %d", i, o.SiblingIndex())
		}
	}
	if outs[0].NodeID() == 0 || outs[0].NodeID() != outs[1].NodeID() {
		t.Errorf("siblings have node ids %d and %d", outs[0].NodeID(), outs[1].NodeID())
	}
	other := sum(&sumPrim{}, x)
	if other.NodeID() == outs[0].NodeID() {
		t.Error("another node has the siblings' id")
	}
	// evaluating one output evaluates both, once
	if got := outs[1].Item(); got != 4 {
		t.Errorf("second output = %v, want 4", got)
	}
	if !outs[0].Evaluated() || f32Of(outs[0]) != 6 {
		t.Error("first output was not computed with the second")
	}
	if err := array.Eval(outs...); err != nil || p.evals.Load() != 1 {
		t.Errorf("Eval of both: %v, %d evaluations", err, p.evals.Load())
	}
	if outs[0].Siblings() != nil || outs[0].NodeID() != 0 {
		t.Error("evaluated siblings still hold their node")
	}

	for _, bad := range []func(){
		func() { array.NewMulti(array.CurrentStream(), [][]int{nil}, nil, p, x) },
		func() { array.NewMulti(array.CurrentStream(), nil, nil, p, x) },
	} {
		wantError(t, array.Try(bad), "array.NewMulti")
	}
}

// pendingOn returns a pending array computed from a fresh 1 MiB input,
// and a weak pointer to that input, which nothing else references.
//
//go:noinline
func pendingOn() (*array.Array, weak.Pointer[array.Array]) {
	x := array.FromSlice(make([]float32, 1<<18))
	return array.New(x.Stream(), nil, array.Float32, &sumPrim{add: 7}, x), weak.Make(x)
}

func collected[T any](w weak.Pointer[T]) bool {
	for range 10 {
		runtime.GC()
		if w.Value() == nil {
			return true
		}
	}
	return false
}

func TestEvalDetaches(t *testing.T) {
	y, wx := pendingOn()
	runtime.GC()
	if wx.Value() == nil {
		t.Fatal("a pending array's input was collected")
	}
	if err := y.Eval(); err != nil {
		t.Fatal(err)
	}
	if y.Primitive() != nil || y.Inputs() != nil || y.Siblings() != nil {
		t.Errorf("after Eval: Primitive %v, Inputs %v, Siblings %v; want all nil", y.Primitive(), y.Inputs(), y.Siblings())
	}
	if !collected(wx) {
		t.Error("the input of an evaluated array was not collected")
	}
	if got := f32Of(y); got != 7 {
		t.Errorf("y = %v, want 7 (the sum of zeros plus 7)", got)
	}
}

// chain returns the end of a chain of n views of a scalar, and weak
// pointers to the first and the middle node.
//
//go:noinline
func chain(n int) (*array.Array, weak.Pointer[array.Array], weak.Pointer[array.Array]) {
	x := view(array.Scalar(float32(3)))
	first := weak.Make(x)
	var mid weak.Pointer[array.Array]
	for i := 1; i < n; i++ {
		x = view(x)
		if i == n/2 {
			mid = weak.Make(x)
		}
	}
	return x, first, mid
}

func TestEvalLongChain(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	end, first, mid := chain(n)
	// A scheduler that recursed once per node would need far more stack
	// than this; the limit turns such a bug into a crash here.
	old := debug.SetMaxStack(8 << 20)
	err := end.Eval()
	debug.SetMaxStack(old)
	if err != nil {
		t.Fatal(err)
	}
	if got := end.Item(); got != 3 {
		t.Errorf("end of the chain = %v, want 3", got)
	}
	if end.Inputs() != nil {
		t.Error("the end of the chain still holds its input")
	}
	if !collected(first) || !collected(mid) {
		t.Error("intermediates of an evaluated chain were not collected")
	}
	runtime.KeepAlive(end)
}

func TestEvalPlaceholder(t *testing.T) {
	p := array.NewPlaceholder(array.CurrentStream(), []int{2, 3}, array.Float32)
	if !p.Tracer() || p.Evaluated() {
		t.Errorf("placeholder: Tracer %v, Evaluated %v", p.Tracer(), p.Evaluated())
	}
	wantError(t, p.Eval(), "array.Eval", "placeholder", "[2 3]", "float32")
	// and through an array computed from one
	y := view(p)
	if !y.Tracer() {
		t.Error("an array computed from a placeholder is not a tracer")
	}
	wantError(t, array.Eval(one(), y), "array.Eval", "placeholder")
	_, err := array.ToSlice[float32](y)
	wantError(t, err, "array.Eval", "placeholder")
	wantError(t, array.Try(func() { array.NewPlaceholder(array.CurrentStream(), nil, array.Float32).Item() }), "array.Eval", "placeholder")
}

func TestEvalNil(t *testing.T) {
	wantError(t, array.Eval(one(), nil), "array.Eval", "nil")
}

func TestEvalConcurrent(t *testing.T) {
	// A layered graph where every node reads two nodes of the layer
	// below, so each node is shared by several paths and goroutines.
	const width, depth = 8, 12
	var prims []*sumPrim
	layer := make([]*array.Array, width)
	for i := range layer {
		layer[i] = array.Scalar(float32(i))
	}
	var all []*array.Array
	for range depth {
		next := make([]*array.Array, width)
		for i := range next {
			p := &sumPrim{}
			prims = append(prims, p)
			next[i] = sum(p, layer[i], layer[(i+1)%width])
		}
		all = append(all, next...)
		layer = next
	}
	root := sum(&sumPrim{}, layer...)

	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			// half evaluate the root, half a node partway up
			x := root
			if g%2 == 1 {
				x = all[(g*7)%len(all)]
			}
			if err := x.Eval(); err != nil {
				errs <- err
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i, p := range prims {
		if n := p.evals.Load(); n != 1 {
			t.Errorf("node %d ran %d times, want once", i, n)
		}
	}
	// each layer sums pairs: the total doubles per layer
	if got, want := root.Item(), float64(width*(width-1)/2)*math.Pow(2, depth); got != want {
		t.Errorf("root = %v, want %v", got, want)
	}
}

func TestEvalReturnsPrimitiveError(t *testing.T) {
	failure := array.Errorf("test.Fail", "index 9 out of range")
	p := &failPrim{err: failure}
	a := array.New(array.CurrentStream(), nil, array.Float32, p, one())
	b := sum(&sumPrim{}, a)
	for i := range 2 {
		if err := b.Eval(); err != failure {
			t.Errorf("Eval %d: got %v, want the primitive's error", i, err)
		}
	}
	if err := a.Eval(); err != failure {
		t.Errorf("Eval of the failed node: %v", err)
	}
	if n := p.evals.Load(); n != 1 {
		t.Errorf("the failing primitive ran %d times, want once", n)
	}
	if a.Evaluated() || b.Evaluated() {
		t.Error("a failed node reports itself evaluated")
	}
	if s := b.String(); !strings.Contains(s, "index 9 out of range") {
		t.Errorf("String of a failed array: %q", s)
	}
	err := array.Try(func() { b.Item() })
	if err != failure {
		t.Errorf("Item of a failed array panicked with %v", err)
	}

	// a non-*Error error passes through as it is
	plain := errors.New("device lost")
	if err := array.New(array.CurrentStream(), nil, array.Float32, &failPrim{err: plain}).Eval(); err != plain {
		t.Errorf("got %v, want %v", err, plain)
	}
}

func TestEvalPrimitivePanics(t *testing.T) {
	failure := array.Errorf("test.Panic", "bad value")
	a := array.New(array.CurrentStream(), nil, array.Float32, &failPrim{panics: failure})
	if err := a.Eval(); err != failure {
		t.Errorf("a primitive panicking with *array.Error: Eval returned %v", err)
	}
	if err := a.Eval(); err != failure {
		t.Errorf("second Eval returned %v", err)
	}

	// Any other panic is a bug in the primitive: Eval returns it as an
	// *Error naming the primitive and the cause, and the process goes on.
	b := array.New(array.CurrentStream(), nil, array.Float32, &failPrim{panics: "index out of range"})
	err := b.Eval()
	var e *array.Error
	if !errors.As(err, &e) || e.Op != "fail" || !strings.Contains(e.Msg, "index out of range") || !strings.Contains(e.Msg, "panicked") {
		t.Errorf("a primitive's runtime panic: Eval returned %v; want an *array.Error naming the primitive and the cause", err)
	}
	if err2 := b.Eval(); err2 != err {
		t.Errorf("second Eval returned %v, want the first error again", err2)
	}
}

func TestEvalPrimitiveWithoutOutput(t *testing.T) {
	a := array.New(array.CurrentStream(), []int{2}, array.Float32, lazyPrim{}, one())
	wantError(t, a.Eval(), "array.Eval", "lazy", "without a value")
}

func TestTracerKeepsGraphDuringTrace(t *testing.T) {
	tracing.Begin()
	x := array.NewTracer(array.CurrentStream(), nil, array.Float32, viewPrim{}, one())
	y := sum(&sumPrim{add: 1}, x)
	if !y.Tracer() {
		t.Fatal("an array computed from a tracer is not a tracer")
	}
	if err := y.Eval(); err != nil {
		tracing.End()
		t.Fatal(err)
	}
	tracing.End()
	if y.Primitive() == nil || len(y.Inputs()) != 1 || y.Inputs()[0] != x || x.Primitive() == nil {
		t.Error("a tracer evaluated during a trace lost its graph")
	}
	if got := y.Item(); got != 2 {
		t.Errorf("y = %v, want 2", got)
	}

	// outside any trace, tracers are detached like other arrays
	z := sum(&sumPrim{}, array.NewTracer(array.CurrentStream(), nil, array.Float32, viewPrim{}, one()))
	if err := z.Eval(); err != nil {
		t.Fatal(err)
	}
	if z.Primitive() != nil || z.Inputs() != nil {
		t.Error("a tracer evaluated outside a trace kept its graph")
	}
}

// TestEvalAfterAnAbandonedSchedule guards the scheduler's marks: an Eval
// that stops partway through its walk (here at a placeholder) leaves
// nodes marked but pending, and the next Eval must still run each of them
// exactly once, in order, through a shared diamond.
func TestEvalAfterAnAbandonedSchedule(t *testing.T) {
	pa, pb, pc, pd := &sumPrim{add: 1}, &sumPrim{}, &sumPrim{add: 10}, &sumPrim{}
	x := one()
	a := sum(pa, x, x) // 3
	b := sum(pb, a, a) // 6
	c := sum(pc, a)    // 13
	d := sum(pd, b, c) // 19
	p := array.NewPlaceholder(array.CurrentStream(), nil, array.Float32)
	wantError(t, array.Eval(d, p), "array.Eval", "placeholder")
	for _, p := range []*sumPrim{pa, pb, pc, pd} {
		if n := p.evals.Load(); n != 0 {
			t.Fatalf("a node ran %d times in an Eval that failed to schedule", n)
		}
	}
	if err := d.Eval(); err != nil {
		t.Fatal(err)
	}
	if got := f32Of(d); got != 19 {
		t.Errorf("d = %v, want 19", got)
	}
	for i, p := range []*sumPrim{pa, pb, pc, pd} {
		if n := p.evals.Load(); n != 1 {
			t.Errorf("node %d ran %d times, want once", i, n)
		}
	}
}

// TestNewKeepsItsOwnInputs checks that New copies the inputs it is given
// (it keeps up to two inside the node): a caller that reuses its slice
// does not change the graph.
func TestNewKeepsItsOwnInputs(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5} {
		ins := make([]*array.Array, n)
		for i := range ins {
			ins[i] = array.Scalar(float32(i + 1))
		}
		y := sum(&sumPrim{}, ins...)
		want := slices.Clone(ins)
		for i := range ins {
			ins[i] = array.Scalar(float32(100))
		}
		if !slices.Equal(y.Inputs(), want) {
			t.Errorf("%d inputs: the node's inputs changed with the caller's slice", n)
		}
		if got, want := y.Item(), float64(n*(n+1)/2); got != want {
			t.Errorf("%d inputs: sum = %v, want %v", n, got, want)
		}
	}
}
