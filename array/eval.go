package array

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

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
	order, err := schedule(xs)
	if err != nil {
		return err
	}
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
// failure on them so that every later Eval reports it too.
func (w *gpuWork) finish() error {
	err := synchronize(w.streams)
	for _, n := range w.nodes {
		if err != nil {
			n.fail(err)
			continue
		}
		n.publish()
	}
	w.streams, w.nodes = w.streams[:0], w.nodes[:0]
	return err
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
// before the nodes that use them.
func schedule(xs []*Array) ([]*node, error) {
	type frame struct {
		n    *node
		next int // next input to visit
	}
	var order []*node
	seen := make(map[*node]struct{})
	var stack []frame
	for _, x := range xs {
		if x == nil {
			return nil, Errorf("array.Eval", "nil array")
		}
		n, err := pending(x)
		if err != nil {
			return nil, err
		}
		if n == nil {
			continue
		}
		if _, ok := seen[n]; ok {
			continue
		}
		seen[n] = struct{}{}
		stack = append(stack, frame{n: n})
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.next == len(top.n.inputs) {
				order = append(order, top.n)
				stack = stack[:len(stack)-1]
				continue
			}
			in := top.n.inputs[top.next]
			top.next++
			m, err := pending(in)
			if err != nil {
				return nil, err
			}
			if m == nil {
				continue
			}
			if _, ok := seen[m]; ok {
				continue
			}
			seen[m] = struct{}{}
			stack = append(stack, frame{n: m})
		}
	}
	return order, nil
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
		if in.data.Load() == nil {
			n.err = Errorf("array.Eval", "%s: input of shape %v has no value", n.prim.Name(), in.shape)
			return n.err
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
