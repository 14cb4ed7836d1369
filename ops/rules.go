package ops

import "github.com/fathom-go/fathom/array"

// Helpers shared by the derivative (VJP, JVP), batching (Vmap) and shape
// (OutputShapes) rules. A derivative rule returns nil for a cotangent or
// tangent that is zero: the transforms skip it instead of building
// arithmetic on zeros.
//
// Shape rules (array.ShapeRule) serve shapeless compilation: a shapeless
// trace replayed on inputs of new shapes asks each primitive for its
// output shapes. A primitive whose output shape is fixed by Go values
// (Reshape, BroadcastTo, Slice) has no rule, and such a replay is an
// error. Each rule re-checks what the operation checked at the call, and
// returns an *array.Error when the new shapes do not fit.

func sameShape(in []*array.Array) ([][]int, error) { return [][]int{in[0].Shape()}, nil }

func broadcastShape(name string, in []*array.Array) ([][]int, error) {
	shapes := make([][]int, len(in))
	for i, x := range in {
		shapes[i] = x.Shape()
	}
	var out []int
	err := array.Try(func() { out = BroadcastShapes(name, shapes...) })
	return [][]int{out}, err
}

// checkAxes reports an error unless every axis is within ndim.
func checkAxes(name string, axes []int, ndim int) error {
	for _, a := range axes {
		if a < 0 || a >= ndim {
			return array.Errorf(name, "axis %d out of range for %d dimensions", a, ndim)
		}
	}
	return nil
}

// sumToShape reduces g, the cotangent of a broadcast result, to shape:
// it sums the leading axes that broadcasting added and the axes where
// shape has size 1 but g does not.
func sumToShape(g *array.Array, shape []int) *array.Array {
	gs := g.Shape()
	if equalInts(gs, shape) {
		return g
	}
	lead := len(gs) - len(shape)
	var axes []int
	for i := range gs {
		if i < lead || (shape[i-lead] == 1 && gs[i] != 1) {
			axes = append(axes, i)
		}
	}
	if len(axes) > 0 {
		g = Sum(g, axes...)
	}
	return Reshape(g, shape...)
}

// batchFront moves x's batch axis ax to the front; an unbatched x (ax < 0)
// is returned as is.
func batchFront(x *array.Array, ax int) *array.Array {
	if ax <= 0 {
		return x
	}
	return MoveAxis(x, ax, 0)
}

// alignBatched prepares the inputs of a broadcasting elementwise
// primitive for batching: each batched input gets its batch axis first and
// size-1 axes after it, so that its other axes line up from the right with
// the unbatched inputs, which broadcast as they are. The result's batch
// axis is 0.
func alignBatched(ins []*array.Array, axes []int) []*array.Array {
	rank := 0
	for i, x := range ins {
		k := x.Ndim()
		if axes[i] >= 0 {
			k--
		}
		rank = max(rank, k)
	}
	out := make([]*array.Array, len(ins))
	for i, x := range ins {
		if axes[i] < 0 {
			out[i] = x
			continue
		}
		x = batchFront(x, axes[i])
		s := x.Shape()
		if pad := rank - (len(s) - 1); pad > 0 {
			shape := append([]int{s[0]}, make([]int, pad)...)
			for j := 1; j <= pad; j++ {
				shape[j] = 1
			}
			x = Reshape(x, append(shape, s[1:]...)...)
		}
		out[i] = x
	}
	return out
}

// zeroIfNil returns g, or zeros shaped like like when g is nil.
func zeroIfNil(g, like *array.Array) *array.Array {
	if g == nil {
		return ZerosLike(like)
	}
	return g
}

// toShape broadcasts t, a tangent computed from inputs that may be
// smaller than a broadcasting primitive's output, to the output's shape.
func toShape(t *array.Array, shape []int) *array.Array {
	if t == nil || equalInts(t.Shape(), shape) {
		return t
	}
	return BroadcastTo(t, shape...)
}

// addTangents sums two tangent contributions, either of which may be nil
// (zero).
func addTangents(a, b *array.Array) *array.Array {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return Add(a, b)
}

// oneMinus returns 1 - x in x's dtype.
func oneMinus(x *array.Array) *array.Array { return AddScalar(Neg(x), 1) }

// elementwiseVmap batches a primitive that applies elementwise with
// broadcasting: it aligns the inputs' batch axes at the front and applies
// the same primitive again, through apply.
func elementwiseVmap(ins []*array.Array, axes []int, apply func(ins []*array.Array) *array.Array) ([]*array.Array, []int) {
	return []*array.Array{apply(alignBatched(ins, axes))}, []int{0}
}
