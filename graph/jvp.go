package graph

import (
	"slices"

	"github.com/fathom-go/fathom/internal/tracing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// JVP runs f on primals and returns its outputs and the Jacobian-vector
// products with tangents (one per primal, of the primal's shape): forward-
// mode differentiation. An output that does not depend on the primals gets
// zeros; a bool output (a comparison's) gets zeros of the first tangent's
// dtype, as in MLX.
func JVP(f Fn, primals, tangents []*array.Array) (outs, jvps []*array.Array) {
	if f == nil {
		array.Panicf("graph.JVP", "nil function")
	}
	checkNil("graph.JVP", "primal", primals)
	checkNil("graph.JVP", "tangent", tangents)
	if len(tangents) != len(primals) {
		array.Panicf("graph.JVP", "%d tangents for %d primals", len(tangents), len(primals))
	}
	for i, t := range tangents {
		if !slices.Equal(t.Shape(), primals[i].Shape()) {
			array.Panicf("graph.JVP", "tangent %d has shape %v, primal has shape %v", i, t.Shape(), primals[i].Shape())
		}
	}
	tracing.Begin()
	defer tracing.End()
	tr := tracers(primals)
	outs = callFn("graph.JVP", f, tr)
	tape := NewTape(tr, outs)
	act, dep := tape.active()
	tan := make(map[*array.Array]*array.Array, len(tr)+len(tape.Nodes))
	for i, t := range tr {
		if !t.DType().IsInexact() {
			continue
		}
		tg := tangents[i]
		if tg.DType() != t.DType() {
			tg = ops.AsType(tg, t.DType())
		}
		tan[t] = tg
	}
	for i, n := range tape.Nodes {
		if !act[i] {
			continue
		}
		var argnums []int
		var tans []*array.Array
		for j, in := range n.Inputs {
			if t, ok := tan[in]; ok && dep[in] {
				argnums = append(argnums, j)
				tans = append(tans, t)
			}
		}
		if len(argnums) == 0 {
			continue
		}
		rule, ok := n.Primitive.(array.JVPRule)
		if !ok {
			array.Panicf("graph.JVP", "%s has no forward derivative rule", n.Primitive.Name())
		}
		res := rule.JVP(n.Inputs, n.Outputs, tans, argnums)
		for j, o := range n.Outputs {
			if res[j] == nil || !o.DType().IsInexact() {
				continue
			}
			if res[j].DType() != o.DType() {
				res[j] = ops.AsType(res[j], o.DType())
			}
			tan[o] = res[j]
		}
	}
	jvps = make([]*array.Array, len(outs))
	for i, o := range outs {
		switch t, ok := tan[o]; {
		case ok:
			jvps[i] = t
		case o.DType() == array.Bool && len(tangents) > 0:
			// A comparison's tangent is zero in the tangents' dtype, as
			// in MLX, not a Bool array; an integer result keeps its
			// dtype (AsType's tangent is cast like its primal).
			jvps[i] = ops.Zeros(o.Shape(), tangents[0].DType())
		default:
			jvps[i] = ops.ZerosLike(o)
		}
	}
	untrace(primals, tr, outs, jvps)
	return outs, jvps
}
