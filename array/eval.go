package array

import (
	"fmt"
	"sync/atomic"
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
	var gpu []Stream // streams with work queued and not yet waited for
	for _, n := range order {
		s := n.outputs[0].stream
		// A CPU kernel reads memory directly: GPU work queued earlier in
		// this Eval, which it may read, must have finished.
		if s.Device.Type == DeviceCPU && len(gpu) > 0 {
			if err := synchronize(gpu); err != nil {
				return err
			}
			gpu = gpu[:0]
		}
		if err := n.eval(); err != nil {
			return err
		}
		if s.Device.Type != DeviceCPU && !containsStream(gpu, s) {
			gpu = append(gpu, s)
		}
	}
	return synchronize(gpu)
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

// pending returns a's node if a still needs computing, nil if it has its
// value.
func pending(a *Array) (*node, error) {
	if a.data.Load() != nil {
		return nil, nil
	}
	n := a.node.Load()
	if n == nil {
		if a.data.Load() != nil { // evaluated and detached since the first look
			return nil, nil
		}
		return nil, Errorf("array.Eval", "array of shape %v and dtype %v has no value: it is a placeholder of a trace (arrays inside a traced function cannot be read on the host)", a.shape, a.dtype)
	}
	return n, nil
}

func (n *node) eval() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.done {
		return n.err
	}
	n.done = true
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
	keep := activeTraces.Load() > 0
	for _, o := range n.outputs {
		if !o.tracer || !keep {
			o.node.Store(nil)
		}
	}
	return nil
}

// activeTraces counts transforms and traces in progress, on any goroutine.
// While one is, evaluating a tracer keeps its node, so the transform can
// still walk the graph through it (MLX's is_tracer). Other goroutines'
// tracers may so keep their graphs a little longer; nothing is ever wrong.
var activeTraces atomic.Int64

// BeginTrace marks the start of a transform or trace; EndTrace its end.
// Package graph and compile bracket every function they trace with them.
func BeginTrace() { activeTraces.Add(1) }

// EndTrace marks the end of a transform or trace started with BeginTrace.
func EndTrace() { activeTraces.Add(-1) }

func runPrimitive(n *node, s Stream) (err error) {
	if s.Device.Type != DeviceCPU {
		if err := DeviceAvailable(s.Device); err != nil {
			return err
		}
	}
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(*Error); ok {
				err = e
				return
			}
			panic(fmt.Sprintf("fathom: %s on %v panicked: %v", n.prim.Name(), s, r))
		}
	}()
	return n.prim.Eval(s, n.inputs, n.outputs)
}
