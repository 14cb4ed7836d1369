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

// AsType returns a converted to dtype dt; a itself if it already has it.
// Conversions follow numpy's astype (floats to integers truncate).
func AsType(a *array.Array, dt array.DType) *array.Array {
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

// Copy returns a row-major copy of a.
func Copy(a *array.Array) *array.Array {
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

// StopGradient returns a with its derivative cut: transforms treat the
// result as a constant.
func StopGradient(a *array.Array) *array.Array {
	return node(a.Shape(), a.DType(), &StopGradientPrim{}, a)
}
