package compile

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
)

// Fused traces f on inputs shaped like in, caching nothing, and returns
// the fused steps of its trace: to see what fusion makes of a function,
// and for backends to test their lowering of real programs.
func Fused(f graph.Fn, in ...*array.Array) []*Compiled {
	if f == nil {
		array.Panicf("compile.Fused", "nil function")
	}
	for i, x := range in {
		if x == nil {
			array.Panicf("compile.Fused", "input %d is nil", i)
		}
	}
	tr := newTrace(&Func{id: nextID.Add(1), f: f}, in, array.CurrentStream())
	var out []*Compiled
	for _, st := range tr.steps {
		if c, ok := st.prim.(*Compiled); ok {
			out = append(out, c)
		}
	}
	return out
}
