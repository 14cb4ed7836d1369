package ops

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
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
func (p *AsTypePrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*AsTypePrim)
	return ok && q.DType == p.DType
}

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

// CopyPrim materialises its input as a new row-major array.
type CopyPrim struct{}

func (p *CopyPrim) Name() string { return "Copy" }
func (p *CopyPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *CopyPrim) evalCPU(in, out []*array.Array) error {
	return cpu.Copy(alloc(out[0]), bufOf(in[0]))
}
func (p *CopyPrim) Equivalent(o array.Primitive) bool { _, ok := o.(*CopyPrim); return ok }

// VJP passes the cotangent through.
func (p *CopyPrim) VJP(inputs, outputs, cots []*array.Array, argnums []int) []*array.Array {
	return cots[:1]
}

// JVP passes the tangent through.
func (p *CopyPrim) JVP(inputs, outputs, tans []*array.Array, argnums []int) []*array.Array {
	return tans[:1]
}

// Vmap copies the whole batch; the batch axis stays where it is.
func (p *CopyPrim) Vmap(inputs []*array.Array, axes []int) ([]*array.Array, []int) {
	return []*array.Array{Copy(inputs[0])}, axes[:1]
}

// Copy returns a row-major copy of a.
func Copy(a *array.Array) *array.Array {
	requireNonNil("ops.Copy", a)
	return node(a.Shape(), a.DType(), &CopyPrim{}, a)
}

// StopGradientPrim passes its input through and has a zero derivative.
type StopGradientPrim struct{}

func (p *StopGradientPrim) Name() string { return "StopGradient" }
func (p *StopGradientPrim) Eval(s array.Stream, in, out []*array.Array) error {
	// A view: shares the input's memory on every device.
	out[0].SetData(in[0].Storage(), in[0].Strides(), in[0].Offset())
	return nil
}
func (p *StopGradientPrim) Equivalent(o array.Primitive) bool {
	_, ok := o.(*StopGradientPrim)
	return ok
}

// VJP is zero: StopGradient is where the derivative is cut.
func (p *StopGradientPrim) VJP(inputs, outputs, cots []*array.Array, argnums []int) []*array.Array {
	return make([]*array.Array, len(argnums))
}

// JVP is zero, as the VJP.
func (p *StopGradientPrim) JVP(inputs, outputs, tans []*array.Array, argnums []int) []*array.Array {
	return []*array.Array{nil}
}

// Vmap cuts the whole batch's derivative; the batch axis stays where it
// is.
func (p *StopGradientPrim) Vmap(inputs []*array.Array, axes []int) ([]*array.Array, []int) {
	return []*array.Array{StopGradient(inputs[0])}, axes[:1]
}

// StopGradient returns a with its derivative cut: transforms treat the
// result as a constant.
func StopGradient(a *array.Array) *array.Array {
	requireNonNil("ops.StopGradient", a)
	return node(a.Shape(), a.DType(), &StopGradientPrim{}, a)
}
