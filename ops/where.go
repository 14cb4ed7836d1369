package ops

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
)

// WherePrim selects elementwise between two arrays by a Bool condition.
// Its inputs broadcast to the output's shape through zero strides.
type WherePrim struct{}

// Name returns "Where".
func (p *WherePrim) Name() string { return "Where" }

// Eval selects on the stream's device.
func (p *WherePrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}

func (p *WherePrim) evalCPU(in, out []*array.Array) error {
	shape := out[0].Shape()
	return cpu.Where(alloc(out[0]), bcastBufOf(in[0], shape), bcastBufOf(in[1], shape), bcastBufOf(in[2], shape))
}

// Equivalent reports whether o is also a WherePrim.
func (p *WherePrim) Equivalent(o array.Primitive) bool {
	_, ok := o.(*WherePrim)
	return ok
}

// Where returns x where cond is true and y elsewhere (numpy's where). The
// three broadcast together; cond is read as Bool (non-zero is true), and
// the result has x's and y's promoted dtype.
func Where(cond, x, y *array.Array) *array.Array {
	const op = "ops.Where"
	requireNonNil(op, cond, x, y)
	shape := BroadcastShapes(op, cond.Shape(), x.Shape(), y.Shape())
	dt := array.Promote(x.DType(), y.DType())
	return node(shape, dt, &WherePrim{}, AsType(cond, array.Bool), AsType(x, dt), AsType(y, dt))
}
