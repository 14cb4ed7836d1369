package graph

import (
	"slices"

	"github.com/fathom-go/fathom/internal/tracing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// Fn is a function of arrays to arrays: what the transforms take and give.
type Fn func(in ...*array.Array) []*array.Array

// identity stands in for a primal inside a transform: a view of it that is
// marked as a tracer, so the graph built from it survives evaluation while
// the transform runs.
type identity struct{}

func (identity) Name() string { return "Identity" }
func (identity) Eval(_ array.Stream, in, out []*array.Array) error {
	out[0].SetData(in[0].Storage(), in[0].Strides(), in[0].Offset())
	return nil
}

// OutputShapes lets a gradient be taken inside a compile.Shapeless trace.
func (identity) OutputShapes(in []*array.Array) ([][]int, error) {
	return [][]int{in[0].Shape()}, nil
}
func (identity) VJP(_, _, cots []*array.Array, _ []int) []*array.Array { return cots[:1] }
func (identity) JVP(_, _, tans []*array.Array, _ []int) []*array.Array { return tans[:1] }
func (identity) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	return in[:1], axes[:1]
}

func tracers(xs []*array.Array) []*array.Array {
	out := make([]*array.Array, len(xs))
	for i, x := range xs {
		out[i] = array.NewTracer(x.Stream(), x.Shape(), x.DType(), identity{}, x)
	}
	return out
}

// checkNil rejects a nil array among xs, which the error calls what.
func checkNil(op, what string, xs []*array.Array) {
	for i, x := range xs {
		if x == nil {
			array.Panicf(op, "%s %d is nil", what, i)
		}
	}
}

func callFn(op string, f Fn, in []*array.Array) []*array.Array {
	outs := f(in...)
	if len(outs) == 0 {
		array.Panicf(op, "the function returned no arrays")
	}
	for i, o := range outs {
		if o == nil {
			array.Panicf(op, "output %d of the function is nil", i)
		}
	}
	return outs
}

// VJP runs f on primals and returns its outputs and the vector-Jacobian
// products of cotangents (one per output, of the output's shape) with
// respect to every primal: reverse-mode differentiation. A primal that the
// outputs do not depend on gets zeros of its own shape and dtype.
func VJP(f Fn, primals, cotangents []*array.Array) (outs, vjps []*array.Array) {
	if f == nil {
		array.Panicf("graph.VJP", "nil function")
	}
	checkNil("graph.VJP", "primal", primals)
	checkNil("graph.VJP", "cotangent", cotangents)
	tracing.Begin()
	defer tracing.End()
	tr := tracers(primals)
	outs = callFn("graph.VJP", f, tr)
	if len(cotangents) != len(outs) {
		array.Panicf("graph.VJP", "%d cotangents for %d outputs", len(cotangents), len(outs))
	}
	for i, c := range cotangents {
		if !slices.Equal(c.Shape(), outs[i].Shape()) {
			array.Panicf("graph.VJP", "cotangent %d has shape %v, output has shape %v", i, c.Shape(), outs[i].Shape())
		}
	}
	vjps = backward(tr, primals, outs, cotangents)
	untrace(primals, tr, outs, vjps)
	return outs, vjps
}

// untrace ends the marking of a transform's tracers tr on its results
// when none of primals was a tracer: called at top level, a transform
// must not leave tracers behind, or a compiled function given its
// results would run uncompiled. Nested in another transform or a trace,
// the results stay marked, as that one still walks them.
func untrace(primals, tr []*array.Array, results ...[]*array.Array) {
	for _, p := range primals {
		if p.Tracer() {
			return
		}
	}
	var all []*array.Array
	for _, r := range results {
		all = append(all, r...)
	}
	array.Untrace(tr, all...)
}

// backward pushes cotangents from outs back to the tracers tr.
func backward(tr, primals, outs, cotangents []*array.Array) []*array.Array {
	tape := NewTape(tr, outs)
	act, dep := tape.active()
	cot := make(map[*array.Array]*array.Array)
	add := func(a, g *array.Array) {
		// integer and bool values have no derivative: their cotangents
		// are zero and are dropped, as in MLX
		if g == nil || !a.DType().IsInexact() {
			return
		}
		if g.DType() != a.DType() {
			g = ops.AsType(g, a.DType())
		}
		if prev, ok := cot[a]; ok {
			cot[a] = ops.Add(prev, g)
		} else {
			cot[a] = g
		}
	}
	for i, o := range outs {
		if dep[o] {
			add(o, cotangents[i])
		}
	}
	for i := len(tape.Nodes) - 1; i >= 0; i-- {
		if !act[i] {
			continue
		}
		n := tape.Nodes[i]
		cots := make([]*array.Array, len(n.Outputs))
		any := false
		for j, o := range n.Outputs {
			if c, ok := cot[o]; ok {
				cots[j] = c
				any = true
			}
		}
		if !any {
			continue
		}
		for j, o := range n.Outputs {
			if cots[j] == nil {
				cots[j] = ops.ZerosLike(o)
			}
		}
		var argnums []int
		for j, in := range n.Inputs {
			if dep[in] {
				argnums = append(argnums, j)
			}
		}
		rule, ok := n.Primitive.(array.VJPRule)
		if !ok {
			array.Panicf("graph.VJP", "%s has no derivative rule", n.Primitive.Name())
		}
		grads := rule.VJP(n.Inputs, n.Outputs, cots, argnums)
		for k, j := range argnums {
			add(n.Inputs[j], grads[k])
		}
	}
	vjps := make([]*array.Array, len(tr))
	for i, t := range tr {
		if g, ok := cot[t]; ok {
			vjps[i] = g
		} else {
			vjps[i] = ops.ZerosLike(primals[i])
		}
	}
	return vjps
}

// Grad returns a function that computes the gradient of f with respect to
// the arguments in argnums (none: argument 0), one array per argnum in
// that order. f must return a scalar (a 0-d array); anything else is an
// *array.Error when the gradient function is called.
func Grad(f func(in ...*array.Array) *array.Array, argnums ...int) Fn {
	// checked here too so that the error names Grad, not ValueAndGrad
	if f == nil {
		array.Panicf("graph.Grad", "nil function")
	}
	vg := ValueAndGrad(f, argnums...)
	return func(in ...*array.Array) []*array.Array {
		_, g := vg(in...)
		return g
	}
}

// ValueAndGrad returns a function that computes f and its gradient with
// respect to the arguments in argnums (none: argument 0).
func ValueAndGrad(f func(in ...*array.Array) *array.Array, argnums ...int) func(in ...*array.Array) (*array.Array, []*array.Array) {
	if f == nil {
		array.Panicf("graph.ValueAndGrad", "nil function")
	}
	vg := valueAndGrad(func(in ...*array.Array) (*array.Array, []*array.Array) { return f(in...), nil }, argnums)
	return func(in ...*array.Array) (*array.Array, []*array.Array) {
		v, _, g := vg(in...)
		return v, g
	}
}

// ValueAndGradAux is ValueAndGrad for a function that returns auxiliary
// outputs besides its scalar loss (JAX's has_aux), such as the
// predictions or the accuracy next to a training loss: the returned
// function gives the loss, the auxiliary outputs as f returned them, and
// the gradient of the loss alone with respect to the arguments in argnums
// (none: argument 0). The auxiliary outputs are computed once, with the
// loss, and may have any shape; nil ones are kept as nil.
func ValueAndGradAux(f func(in ...*array.Array) (loss *array.Array, aux []*array.Array), argnums ...int) func(in ...*array.Array) (loss *array.Array, aux, grads []*array.Array) {
	if f == nil {
		array.Panicf("graph.ValueAndGradAux", "nil function")
	}
	return valueAndGrad(f, argnums)
}

func valueAndGrad(f func(in ...*array.Array) (*array.Array, []*array.Array), argnums []int) func(in ...*array.Array) (*array.Array, []*array.Array, []*array.Array) {
	// a copy: the caller may reuse the slice it passed
	argnums = slices.Clone(argnums)
	if len(argnums) == 0 {
		argnums = []int{0}
	}
	return func(in ...*array.Array) (*array.Array, []*array.Array, []*array.Array) {
		for k, a := range argnums {
			if a < 0 || a >= len(in) {
				array.Panicf("graph.Grad", "argnum %d out of range for %d arguments", a, len(in))
			}
			if in[a] == nil {
				array.Panicf("graph.Grad", "argument %d is nil", a)
			}
			// one tracer per argument: a repeated argnum would leave all
			// but the last of its tracers out of the function
			if slices.Contains(argnums[:k], a) {
				array.Panicf("graph.Grad", "argnum %d given more than once", a)
			}
		}
		var value *array.Array
		var aux []*array.Array
		wrt := func(xs ...*array.Array) []*array.Array {
			args := append([]*array.Array(nil), in...)
			for k, a := range argnums {
				args[a] = xs[k]
			}
			value, aux = f(args...)
			if value == nil {
				array.Panicf("graph.Grad", "the function returned nil")
			}
			if value.Ndim() != 0 {
				array.Panicf("graph.Grad", "the function must return a scalar (0-d array), not shape %v", value.Shape())
			}
			return []*array.Array{value}
		}
		primals := make([]*array.Array, len(argnums))
		for k, a := range argnums {
			primals[k] = in[a]
		}
		tracing.Begin()
		defer tracing.End()
		tr := tracers(primals)
		outs := callFn("graph.Grad", wrt, tr)
		grads := backward(tr, primals, outs, []*array.Array{ops.OnesLike(outs[0])})
		untrace(primals, tr, outs, aux, grads)
		return value, aux, grads
	}
}
