package compile

import (
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/internal/tracing"
)

// trace is a traced function reduced to what a replay needs: a list of
// steps (primitive, where each input comes from, output shapes and
// dtypes) in topological order, the captured constants, and where each
// output comes from. It holds no traced array, so it keeps nothing of the
// tracing call alive but the constants.
type trace struct {
	inShapes [][]int
	inDTypes []array.DType
	consts   []*array.Array
	steps    []step
	outs     []ref
}

// refKind says where a value of a trace comes from.
type refKind uint8

const (
	fromInput refKind = iota
	fromConst
	fromStep
)

// ref names a value: input idx, constant idx, or output out of step idx.
type ref struct {
	kind refKind
	idx  int
	out  int
}

type step struct {
	prim   array.Primitive
	ins    []ref
	shapes [][]int
	dtypes []array.DType
}

// newTrace runs f on placeholders shaped like in and records the graph it
// builds, then simplifies and fuses it.
func newTrace(f *Func, in []*array.Array, s array.Stream) *trace {
	ph := make([]*array.Array, len(in))
	for i, x := range in {
		ph[i] = array.NewPlaceholder(s, x.Shape(), x.DType())
	}
	outs := func() []*array.Array {
		tracing.Begin()
		defer tracing.End()
		return f.f(ph...)
	}()
	checkOutputs(outs)
	t := &trace{inShapes: make([][]int, len(in)), inDTypes: make([]array.DType, len(in))}
	for i, x := range in {
		t.inShapes[i] = x.Shape()
		t.inDTypes[i] = x.DType()
	}
	tape := graph.NewTape(ph, outs)
	refs := make(map[*array.Array]ref, len(tape.Nodes)+len(ph))
	for i, p := range ph {
		refs[p] = ref{kind: fromInput, idx: i}
	}
	// A value that does not depend on the inputs is a constant of the
	// trace, even if it is still pending: it is computed once, on the
	// first replay that evaluates it, and kept.
	constOf := func(a *array.Array) ref {
		if r, ok := refs[a]; ok {
			return r
		}
		r := ref{kind: fromConst, idx: len(t.consts)}
		t.consts = append(t.consts, a)
		refs[a] = r
		return r
	}
	dependent := make(map[*array.Array]bool, len(tape.Nodes))
	for _, p := range ph {
		dependent[p] = true
	}
	for _, n := range tape.Nodes {
		dep := false
		for _, x := range n.Inputs {
			dep = dep || dependent[x]
		}
		if !dep {
			continue
		}
		st := step{prim: n.Primitive, ins: make([]ref, len(n.Inputs))}
		for j, x := range n.Inputs {
			if dependent[x] {
				st.ins[j] = refs[x]
			} else {
				st.ins[j] = constOf(x)
			}
		}
		for j, o := range n.Outputs {
			st.shapes = append(st.shapes, o.Shape())
			st.dtypes = append(st.dtypes, o.DType())
			refs[o] = ref{kind: fromStep, idx: len(t.steps), out: j}
			dependent[o] = true
		}
		t.steps = append(t.steps, st)
	}
	for _, o := range outs {
		if dependent[o] {
			t.outs = append(t.outs, refs[o])
		} else {
			t.outs = append(t.outs, constOf(o))
		}
	}
	t.eliminateCommon()
	t.fuse()
	return t
}

// replay builds the traced graph again on new inputs, recording it on
// stream s. With a shapeless trace and inputs of new shapes, each step's
// output shapes come from its primitive's shape rule.
func (t *trace) replay(in []*array.Array, s array.Stream) []*array.Array {
	sameShapes := true
	for i, x := range in {
		if !slices.Equal(x.Shape(), t.inShapes[i]) {
			sameShapes = false
			break
		}
	}
	vals := make([][]*array.Array, len(t.steps))
	get := func(r ref) *array.Array {
		switch r.kind {
		case fromInput:
			return in[r.idx]
		case fromConst:
			return t.consts[r.idx]
		}
		return vals[r.idx][r.out]
	}
	for i, st := range t.steps {
		ins := make([]*array.Array, len(st.ins))
		for j, r := range st.ins {
			ins[j] = get(r)
		}
		shapes := st.shapes
		if !sameShapes {
			shapes = replayShapes(st, ins)
		}
		if len(shapes) == 1 {
			vals[i] = []*array.Array{array.New(s, shapes[0], st.dtypes[0], st.prim, ins...)}
		} else {
			vals[i] = array.NewMulti(s, shapes, st.dtypes, st.prim, ins...)
		}
	}
	outs := make([]*array.Array, len(t.outs))
	for i, r := range t.outs {
		outs[i] = get(r)
	}
	return outs
}

// replayShapes works out a step's output shapes for inputs of new shapes.
func replayShapes(st step, ins []*array.Array) [][]int {
	rule, ok := st.prim.(array.ShapeRule)
	if !ok {
		array.Panicf("compile.Call", "Shapeless: %s cannot be shapeless: its output shape does not follow from its input shapes", st.prim.Name())
	}
	shapes, err := rule.OutputShapes(ins)
	if err != nil {
		array.Panicf("compile.Call", "Shapeless: %s: %v", st.prim.Name(), err)
	}
	return shapes
}
