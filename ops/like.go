package ops

import (
	"github.com/fathom-go/fathom/array"
)

// fullLikePrim fills its output with Value in the shape and dtype of its
// one input, whose elements it never reads. The input is an input, not a
// shape copied at the call, so that under shapeless compilation a
// ZerosLike(x) follows x to a new shape instead of replaying the shape it
// was traced with (a silent wrong answer before).
type fullLikePrim struct{ Value float64 }

// Name returns "FullLike".
func (p *fullLikePrim) Name() string { return "FullLike" }

// Eval fills the output on the stream's device.
func (p *fullLikePrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}

func (p *fullLikePrim) fill(out *array.Array) *fullPrim {
	return &fullPrim{Shape: out.Shape(), Value: p.Value, DType: out.DType()}
}

func (p *fullLikePrim) evalCPU(_, out []*array.Array) error { return p.fill(out[0]).evalCPU(nil, out) }

func (p *fullLikePrim) evalGPU(s array.Stream, _, out []*array.Array) error {
	return p.fill(out[0]).evalGPU(s, nil, out)
}

// Equivalent reports whether o fills with the same value.
func (p *fullLikePrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*fullLikePrim)
	return ok && sameFloat(q.Value, p.Value)
}

// OutputShapes follows the input's shape.
func (p *fullLikePrim) OutputShapes(in []*array.Array) ([][]int, error) { return sameShape(in) }

// VJP is zero: the result does not depend on the input's values.
func (p *fullLikePrim) VJP(_, _, _ []*array.Array, argnums []int) []*array.Array {
	return make([]*array.Array, len(argnums))
}

// JVP is zero, as the VJP.
func (p *fullLikePrim) JVP(_, _, _ []*array.Array, _ []int) []*array.Array {
	return []*array.Array{nil}
}

// Vmap fills the whole batch; the batch axis stays where it is.
func (p *fullLikePrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	return []*array.Array{fullLike("ops.FullLike", in[0], p.Value)}, axes[:1]
}

func fullLike(op string, a *array.Array, v float64) *array.Array {
	requireNonNil(op, a)
	return node(a.Shape(), a.DType(), &fullLikePrim{Value: v}, a)
}

// ZerosLike returns zeros with a's shape and dtype. The result depends on
// a (so its shape follows a under shapeless compilation, and evaluating it
// evaluates a); Zeros(a.Shape(), a.DType()) does not.
func ZerosLike(a *array.Array) *array.Array { return fullLike("ops.ZerosLike", a, 0) }

// OnesLike returns ones with a's shape and dtype, depending on a as
// ZerosLike does.
func OnesLike(a *array.Array) *array.Array { return fullLike("ops.OnesLike", a, 1) }

// FullLike returns an array with a's shape and dtype filled with v (see
// Full), depending on a as ZerosLike does.
func FullLike(a *array.Array, v float64) *array.Array { return fullLike("ops.FullLike", a, v) }
