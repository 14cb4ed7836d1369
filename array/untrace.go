package array

// Untrace is for a transform that has finished: it takes back the mark
// that NewTracer put on the transform's own tracers and that New passed
// on to every array computed from them, on the graph reachable from
// results. Each array that depends on one of tracers is marked again
// only if one of its inputs still is a tracer (of an enclosing transform
// or trace, or a placeholder), so an enclosing transform keeps its
// graph, and a transform called at top level leaves arrays that a
// compiled function replays, as if they had been built outside it.
// Arrays that were evaluated meanwhile drop their nodes, as evaluation
// would have outside a transform (see publish).
//
// Call it before the transform's tracing.End, from the goroutine that
// ran the transform, with nothing evaluating its arrays.
func Untrace(tracers []*Array, results ...*Array) {
	own := make(map[*Array]bool, len(tracers))
	for _, t := range tracers {
		own[t] = true
	}
	// nodes reachable from results through arrays marked as tracers, in
	// post-order (inputs first), found without recursion
	seen := map[*node]bool{}
	var order []*node
	type frame struct {
		n *node
		i int
	}
	var stack []frame
	push := func(a *Array) {
		if a == nil || !a.tracer {
			return
		}
		if n := a.node.Load(); n != nil && !seen[n] {
			seen[n] = true
			stack = append(stack, frame{n: n})
		}
	}
	for _, r := range results {
		push(r)
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if f.i < len(f.n.inputs) {
				in := f.n.inputs[f.i]
				f.i++
				push(in)
				continue
			}
			order = append(order, f.n)
			stack = stack[:len(stack)-1]
		}
	}
	dep := make(map[*node]bool, len(order))
	for _, n := range order {
		d := false
		for _, o := range n.outputs {
			d = d || own[o]
		}
		for _, in := range n.inputs {
			if in != nil {
				d = d || dep[in.node.Load()]
			}
		}
		if !d {
			continue
		}
		dep[n] = true
		mark := false
		for _, in := range n.inputs {
			mark = mark || (in != nil && in.tracer)
		}
		for _, o := range n.outputs {
			o.tracer = mark
		}
	}
	// detached last: dep looks nodes up through the arrays
	for n := range dep {
		if n.ready.Load() && !n.outputs[0].tracer {
			for _, o := range n.outputs {
				o.node.Store(nil)
			}
		}
	}
}
