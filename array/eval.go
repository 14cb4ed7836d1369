package array

import (
	"cmp"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fathom-go/fathom/internal/ktrace"
	"github.com/fathom-go/fathom/internal/tracing"
)

// Eval computes the given arrays and everything they depend on that is
// still pending. It walks the graph without recursion, runs each node once
// (concurrent Evals of shared nodes wait for each other rather than repeat
// work), and detaches evaluated nodes so their inputs can be collected. It
// returns the first error: a device that cannot run, a kernel failure, a
// placeholder that has no value.
func Eval(xs ...*Array) error {
	if err := DeviceError(); err != nil {
		return err
	}
	order, sc, err := schedule(xs)
	if err != nil {
		return err
	}
	defer sc.release()
	var gpu gpuWork
	for _, n := range order {
		s := n.outputs[0].stream
		// A CPU kernel reads memory directly: GPU work queued earlier in
		// this Eval, which it may read, must have finished.
		if s.Device.Type == DeviceCPU && len(gpu.streams) > 0 {
			if err := gpu.finish(); err != nil {
				return err
			}
		}
		if err := n.eval(); err != nil {
			return err
		}
		if s.Device.Type == DeviceCPU {
			n.publish()
			continue
		}
		// Queued, maybe by another goroutine's Eval that has not yet
		// synchronized: either way this Eval waits for the stream before
		// it calls the node ready.
		gpu.add(s, n)
	}
	return gpu.finish()
}

// gpuWork is the GPU nodes an Eval has queued (or found queued) and the
// streams they run on, not yet synchronized.
type gpuWork struct {
	streams []Stream
	nodes   []*node
}

func (w *gpuWork) add(s Stream, n *node) {
	if !containsStream(w.streams, s) {
		w.streams = append(w.streams, s)
	}
	w.nodes = append(w.nodes, n)
}

// finish waits for the streams and publishes the nodes, or records the
// failure on them so that every later Eval reports it too. A failure of
// the device's own (a command buffer that did not complete) is recorded
// on the memory its work should have written, where every Eval that
// waited for that work finds it, not only the one that synchronized
// first.
func (w *gpuWork) finish() error {
	err := synchronize(w.streams)
	var failed error
	for _, n := range w.nodes {
		if err != nil {
			n.fail(err)
			continue
		}
		if e := n.failedWork(); e != nil {
			n.fail(e)
			failed = cmp.Or(failed, e)
			continue
		}
		n.publish()
	}
	w.streams, w.nodes = w.streams[:0], w.nodes[:0]
	return cmp.Or(err, failed)
}

// synchronize waits for the work queued on each stream.
func synchronize(streams []Stream) error {
	for _, s := range streams {
		b := backendFor(s.Device.Type)
		if b == nil {
			return DeviceAvailable(s.Device)
		}
		if err := b.Synchronize(s); err != nil {
			return err
		}
	}
	return nil
}

// Eval computes a; see the package function Eval.
func (a *Array) Eval() error { return Eval(a) }

func containsStream(l []Stream, s Stream) bool {
	for _, t := range l {
		if t == s {
			return true
		}
	}
	return false
}

// schedule returns the pending nodes that xs depend on, each once, inputs
// before the nodes that use them, in memory of the returned scratch,
// which the caller releases once it is done with them.
//
// It marks the nodes it reaches with a number drawn for this walk rather
// than keep a set of them: a map insertion per node was a tenth of what a
// small op cost. A node already marked by another walk (a concurrent Eval
// of a shared graph, or one that stopped at an error) makes the marks
// unreliable, and the walk starts again with a set.
func schedule(xs []*Array) ([]*node, *walkScratch, error) {
	sc := walkPool.Get().(*walkScratch)
	epoch := evalEpoch.Add(1)
	visit := func(n *node) (fresh, ok bool) {
		if n.mark.Load() == epoch {
			return false, true
		}
		old := n.mark.Swap(epoch)
		return true, old == 0
	}
	order, ok, err := sc.walk(xs, visit)
	if !ok {
		seen := make(map[*node]struct{})
		order, _, err = sc.walk(xs, func(n *node) (bool, bool) {
			if _, ok := seen[n]; ok {
				return false, true
			}
			seen[n] = struct{}{}
			return true, true
		})
	}
	if err != nil {
		sc.release()
		return nil, nil, err
	}
	return order, sc, nil
}

// evalEpoch numbers the walks of schedule.
var evalEpoch atomic.Uint64

// walkScratch is the memory of a walk, kept from one Eval to the next:
// growing it afresh was most of an Eval's allocations on a short chain.
type walkScratch struct {
	order []*node
	stack []walkFrame // empty, and zero past its length, between walks
	dirty int         // most entries of order the walks since release wrote
}

type walkFrame struct {
	n    *node
	next int // next input to visit
}

var walkPool = sync.Pool{New: func() any { return new(walkScratch) }}

// maxPooledWalk is the most nodes whose scratch goes back to the pool:
// a huge graph's would hold its memory for no later use.
const maxPooledWalk = 1 << 16

// release drops the scratch's references to nodes, so that it keeps no
// graph alive, and returns it to the pool. It clears only what the walks
// wrote: a scratch that once held a large graph costs a small Eval
// nothing more.
func (sc *walkScratch) release() {
	if cap(sc.order) > maxPooledWalk || cap(sc.stack) > maxPooledWalk {
		return
	}
	clear(sc.order[:sc.dirty])
	sc.order, sc.dirty = sc.order[:0], 0
	walkPool.Put(sc)
}

// walk visits, depth first and without recursion, the pending nodes that
// xs depend on, and returns them inputs first. visit reports whether a
// node is reached for the first time, and ok false to abandon the walk.
func (sc *walkScratch) walk(xs []*Array, visit func(*node) (fresh, ok bool)) ([]*node, bool, error) {
	order, stack := sc.order[:0], sc.stack[:0]
	// keep what the walk grew, for the pool
	defer func() {
		clear(stack) // frames left by an early return
		sc.order, sc.stack = order, stack[:0]
		sc.dirty = max(sc.dirty, len(order))
	}()
	for _, x := range xs {
		if x == nil {
			return nil, true, Errorf("array.Eval", "nil array")
		}
		n, err := pending(x)
		if err != nil {
			return nil, true, err
		}
		if n == nil {
			if err := readError(x, storageOf(x)); err != nil {
				return nil, true, err
			}
			continue
		}
		fresh, ok := visit(n)
		if !ok {
			return nil, false, nil
		}
		if !fresh {
			continue
		}
		stack = append(stack, walkFrame{n: n})
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.next == len(top.n.inputs) {
				order = append(order, top.n)
				*top = walkFrame{}
				stack = stack[:len(stack)-1]
				continue
			}
			in := top.n.inputs[top.next]
			top.next++
			m, err := pending(in)
			if err != nil {
				return nil, true, err
			}
			if m == nil {
				continue
			}
			fresh, ok := visit(m)
			if !ok {
				return nil, false, nil
			}
			if fresh {
				stack = append(stack, walkFrame{n: m})
			}
		}
	}
	return order, true, nil
}

// pending returns a's node if a still needs computing (or is being
// computed by another Eval), nil if its value is ready.
func pending(a *Array) (*node, error) {
	if n := a.node.Load(); n != nil {
		if n.ready.Load() {
			return nil, nil
		}
		return n, nil
	}
	// A node is detached only after its outputs have their data, so no
	// node means either a value or a placeholder.
	if a.data.Load() != nil {
		return nil, nil
	}
	return nil, Errorf("array.Eval", "array of shape %v and dtype %v has no value: it is a placeholder of a trace (arrays inside a traced function cannot be read on the host)", a.shape, a.dtype)
}

// eval runs the node's primitive once. Concurrent calls wait for the first
// and return its result. On the GPU, a nil result means queued, not done.
func (n *node) eval() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ran {
		return n.err
	}
	n.ran = true
	for _, in := range n.inputs {
		d := in.data.Load()
		if d == nil {
			n.err = Errorf("array.Eval", "%s: input of shape %v has no value", n.prim.Name(), in.shape)
			return n.err
		}
		if err := readError(in, d.storage); err != nil {
			n.err = err
			return err
		}
	}
	s := n.outputs[0].stream
	if err := runPrimitive(n, s); err != nil {
		n.err = err
		return err
	}
	for _, o := range n.outputs {
		if o.data.Load() == nil {
			n.err = Errorf("array.Eval", "%s: primitive left output of shape %v without a value", n.prim.Name(), o.shape)
			return n.err
		}
	}
	return nil
}

// publish marks the node's outputs ready, then detaches the node so its
// inputs can be collected (tracers keep theirs while a trace is active).
// Readers that see no node rely on this order.
func (n *node) publish() {
	if n.ready.Load() {
		return
	}
	n.ready.Store(true)
	keep := tracing.Active()
	for _, o := range n.outputs {
		if !o.tracer || !keep {
			o.node.Store(nil)
		}
	}
}

// fail records an error found after the node ran (a GPU stream that did
// not synchronize).
func (n *node) fail(err error) {
	n.mu.Lock()
	if n.err == nil {
		n.err = err
	}
	n.mu.Unlock()
}

func runPrimitive(n *node, s Stream) (err error) {
	if s.Device.Type != DeviceCPU {
		if err := DeviceAvailable(s.Device); err != nil {
			return err
		}
	}
	defer func() {
		if r := recover(); r != nil {
			err = kernelPanic(n, s, r)
		}
	}()
	if t := ktrace.Current(); t != nil {
		return traceKernel(t, n, s)
	}
	return n.prim.Eval(s, n.inputs, n.outputs)
}

// kernelPanic turns what a primitive panicked with into the error Eval
// returns: an *Error is passed on (one from the allocator is renamed for
// the primitive and its outputs), and anything else, a bug in a kernel,
// becomes an *Error that names the primitive and carries the stack, so a
// server that evaluates untrusted graphs keeps running.
func kernelPanic(n *node, s Stream, r any) error {
	if e, ok := r.(*Error); ok {
		if e.Op == "array.AllocCPU" && errors.Is(e, ErrOutOfMemory) {
			return &Error{Op: n.prim.Name(), Msg: fmt.Sprintf("cannot allocate outputs %s: %s", outputsText(n.outputs), e.Msg), Err: ErrOutOfMemory}
		}
		return e
	}
	if e, ok := r.(interface{ PanicStack() []byte }); ok {
		return Errorf(n.prim.Name(), "kernel panicked on %v: %v\n%s", s, r, e.PanicStack())
	}
	return Errorf(n.prim.Name(), "kernel panicked on %v: %v\n%s", s, r, debug.Stack())
}

// outputsText lists output shapes and dtypes: "[2 3] float32".
func outputsText(outs []*Array) string {
	var b strings.Builder
	for i, o := range outs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%v %v", o.shape, o.dtype)
	}
	return b.String()
}
