package compile

import (
	"fmt"
	"strings"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
)

// Fused traces f on inputs shaped like in, caching nothing, and returns
// the fused steps of its trace, in the order they run: the way to see
// what compiling makes of a function. Each step's String says whether it
// is elementwise (one pass over its output) or row-wise (folds over the
// trailing axes with the elementwise work around them, in a few passes
// over each row), and prints its program, one line per register. An
// operation that is in no step runs as it is. Inputs on the GPU trace
// for the GPU, whose fusion is the same.
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

// String describes the step on its first line and then prints its
// program (fused.Program's text form):
//
//	Compiled: row-wise over the last axis, 3 passes; 1 input, 1 output, 5 instructions
//	rows 1
//	r0 = in0 float32
//	r1 = Max(r0) float32 row
//	...
//
// Registers marked row have one value per row.
func (c *Compiled) String() string {
	p := c.prog
	var b strings.Builder
	b.WriteString("Compiled: ")
	if p.Rows == 0 {
		b.WriteString("elementwise")
	} else {
		axes := "axis"
		if p.Rows > 1 {
			axes = fmt.Sprintf("%d axes", p.Rows)
		}
		fmt.Fprintf(&b, "row-wise over the last %s, %d passes", axes, p.Passes())
	}
	fmt.Fprintf(&b, "; %s, %s, %s\n%s", plural(len(p.InDTypes), "input"), plural(len(p.Outputs), "output"),
		plural(len(p.Instrs), "instruction"), p)
	return b.String()
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
