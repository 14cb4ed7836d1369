package graph

import "github.com/fathom-go/fathom/array"

// Tape is the part of the graph between some inputs and some outputs: the
// nodes that outputs depend on, inputs before the nodes that use them. The
// walk stops at the inputs and at arrays that have no node (evaluated
// constants), which it lists as Constants.
type Tape struct {
	Inputs    []*array.Array
	Outputs   []*array.Array
	Nodes     []array.Node
	Constants []*array.Array
}

// NewTape walks the graph from outputs back to inputs without recursion.
// A nil array among either is an *array.Error.
func NewTape(inputs, outputs []*array.Array) *Tape {
	checkNil("graph.NewTape", "input", inputs)
	checkNil("graph.NewTape", "output", outputs)
	t := &Tape{Inputs: inputs, Outputs: outputs}
	stop := make(map[*array.Array]bool, len(inputs))
	for _, in := range inputs {
		stop[in] = true
	}
	seenNode := map[uintptr]bool{}
	seenConst := map[*array.Array]bool{}
	type frame struct {
		n    array.Node
		next int
	}
	var stack []frame
	visit := func(a *array.Array) (array.Node, bool) {
		if stop[a] {
			return array.Node{}, false
		}
		n, ok := a.Node()
		if !ok {
			if !seenConst[a] {
				seenConst[a] = true
				t.Constants = append(t.Constants, a)
			}
			return array.Node{}, false
		}
		if seenNode[n.ID] {
			return array.Node{}, false
		}
		seenNode[n.ID] = true
		return n, true
	}
	for _, out := range outputs {
		n, ok := visit(out)
		if !ok {
			continue
		}
		stack = append(stack, frame{n: n})
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.next == len(top.n.Inputs) {
				t.Nodes = append(t.Nodes, top.n)
				stack = stack[:len(stack)-1]
				continue
			}
			in := top.n.Inputs[top.next]
			top.next++
			if m, ok := visit(in); ok {
				stack = append(stack, frame{n: m})
			}
		}
	}
	return t
}

// active returns, for each node of the tape, whether it depends on one of
// the tape's inputs, and the set of arrays that do (inputs included).
func (t *Tape) active() ([]bool, map[*array.Array]bool) {
	dep := make(map[*array.Array]bool, len(t.Inputs)+len(t.Nodes))
	for _, in := range t.Inputs {
		dep[in] = true
	}
	act := make([]bool, len(t.Nodes))
	for i, n := range t.Nodes {
		for _, in := range n.Inputs {
			if dep[in] {
				act[i] = true
				break
			}
		}
		if act[i] {
			for _, o := range n.Outputs {
				dep[o] = true
			}
		}
	}
	return act, dep
}
