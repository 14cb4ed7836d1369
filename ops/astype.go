package ops

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
)

// AsTypePrim converts an array to another dtype (numpy's astype).
type AsTypePrim struct{ DType array.DType }

func (p *AsTypePrim) Name() string { return "AsType" }
func (p *AsTypePrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *AsTypePrim) evalCPU(in, out []*array.Array) error {
	return cpu.Copy(alloc(out[0]), bufOf(in[0]))
}
func (p *AsTypePrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return copyGPU(s, in, out)
}
func (p *AsTypePrim) Equivalent(o array.Primitive) bool               { return sameParams(p, o) }
func (p *AsTypePrim) OutputShapes(in []*array.Array) ([][]int, error) { return sameShape(in) }

// VJP casts the cotangent back to the input's dtype; an integer or bool
// input has no derivative.
func (p *AsTypePrim) VJP(inputs, outputs, cots []*array.Array, argnums []int) []*array.Array {
	if !inputs[0].DType().IsInexact() {
		return []*array.Array{nil}
	}
	return []*array.Array{AsType(cots[0], inputs[0].DType())}
}

// JVP casts the tangent to the result's dtype; an integer or bool result
// has no derivative.
func (p *AsTypePrim) JVP(inputs, outputs, tans []*array.Array, argnums []int) []*array.Array {
	if !p.DType.IsInexact() {
		return []*array.Array{nil}
	}
	return []*array.Array{AsType(tans[0], p.DType)}
}

// Vmap casts the whole batch; the batch axis stays where it is.
func (p *AsTypePrim) Vmap(inputs []*array.Array, axes []int) ([]*array.Array, []int) {
	return []*array.Array{AsType(inputs[0], p.DType)}, axes[:1]
}

// AsType returns a converted to dtype dt; a itself if it already has it.
// Conversions follow numpy's astype (floats to integers truncate).
func AsType(a *array.Array, dt array.DType) *array.Array {
	requireNonNil("ops.AsType", a)
	if !dt.Valid() {
		array.Panicf("ops.AsType", "invalid dtype %v", dt)
	}
	if a.DType() == dt {
		return a
	}
	return node(a.Shape(), dt, &AsTypePrim{DType: dt}, a)
}

// copyGPU is the GPU kernel of AsType and Copy: Metal's copy converts
// between dtypes as it goes.
func copyGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) { return metal.Copy(o, viewOf(in[0])) })
}

// copyPrim materialises its input as a new row-major array.
type copyPrim struct{}

func (p *copyPrim) Name() string                                      { return "Copy" }
func (p *copyPrim) Eval(s array.Stream, in, out []*array.Array) error { return dispatch(p, s, in, out) }
func (p *copyPrim) evalCPU(in, out []*array.Array) error {
	return cpu.Copy(alloc(out[0]), bufOf(in[0]))
}
func (p *copyPrim) evalGPU(s array.Stream, in, out []*array.Array) error { return copyGPU(s, in, out) }
func (p *copyPrim) Equivalent(o array.Primitive) bool                    { return sameParams(p, o) }
func (p *copyPrim) OutputShapes(in []*array.Array) ([][]int, error)      { return sameShape(in) }

// VJP passes the cotangent through.
func (p *copyPrim) VJP(inputs, outputs, cots []*array.Array, argnums []int) []*array.Array {
	return cots[:1]
}

// JVP passes the tangent through.
func (p *copyPrim) JVP(inputs, outputs, tans []*array.Array, argnums []int) []*array.Array {
	return tans[:1]
}

// Vmap copies the whole batch; the batch axis stays where it is.
func (p *copyPrim) Vmap(inputs []*array.Array, axes []int) ([]*array.Array, []int) {
	return []*array.Array{Copy(inputs[0])}, axes[:1]
}

// Copy returns a row-major copy of a.
func Copy(a *array.Array) *array.Array {
	requireNonNil("ops.Copy", a)
	return node(a.Shape(), a.DType(), &copyPrim{}, a)
}

// stopGradientPrim passes its input through and has a zero derivative.
type stopGradientPrim struct{}

func (p *stopGradientPrim) Name() string { return "StopGradient" }
func (p *stopGradientPrim) Eval(s array.Stream, in, out []*array.Array) error {
	// A view: shares the input's memory on every device.
	out[0].SetData(in[0].Storage(), in[0].Strides(), in[0].Offset())
	return nil
}
func (p *stopGradientPrim) Equivalent(o array.Primitive) bool               { return sameParams(p, o) }
func (p *stopGradientPrim) OutputShapes(in []*array.Array) ([][]int, error) { return sameShape(in) }

// VJP is zero: StopGradient is where the derivative is cut.
func (p *stopGradientPrim) VJP(inputs, outputs, cots []*array.Array, argnums []int) []*array.Array {
	return make([]*array.Array, len(argnums))
}

// JVP is zero, as the VJP.
func (p *stopGradientPrim) JVP(inputs, outputs, tans []*array.Array, argnums []int) []*array.Array {
	return []*array.Array{nil}
}

// Vmap cuts the whole batch's derivative; the batch axis stays where it
// is.
func (p *stopGradientPrim) Vmap(inputs []*array.Array, axes []int) ([]*array.Array, []int) {
	return []*array.Array{StopGradient(inputs[0])}, axes[:1]
}

// StopGradient returns a with its derivative cut: transforms treat the
// result as a constant.
func StopGradient(a *array.Array) *array.Array {
	requireNonNil("ops.StopGradient", a)
	return node(a.Shape(), a.DType(), &stopGradientPrim{}, a)
}
