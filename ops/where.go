package ops

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
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

func (p *WherePrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	shape := out[0].Shape()
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		return metal.Where(o, bcastViewOf(in[0], shape), bcastViewOf(in[1], shape), bcastViewOf(in[2], shape))
	})
}

// Equivalent reports whether o is also a WherePrim.
func (p *WherePrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// OutputShapes broadcasts the inputs' new shapes.
func (p *WherePrim) OutputShapes(in []*array.Array) ([][]int, error) {
	return broadcastShape("ops.Where", in)
}

// VJP routes the cotangent through the mask: to x where cond holds, to y
// elsewhere, each summed back to its operand's shape. The condition gets
// none.
func (p *WherePrim) VJP(inputs, outputs, cots []*array.Array, argnums []int) []*array.Array {
	cond, g := inputs[0], cots[0]
	zero := scalarOf(0, g.DType())
	res := make([]*array.Array, len(argnums))
	for k, i := range argnums {
		switch i {
		case 1:
			res[k] = sumToShape(Where(cond, g, zero), inputs[1].Shape())
		case 2:
			res[k] = sumToShape(Where(cond, zero, g), inputs[2].Shape())
		}
	}
	return res
}

// JVP selects between the branches' tangents by the same mask.
func (p *WherePrim) JVP(inputs, outputs, tans []*array.Array, argnums []int) []*array.Array {
	var tx, ty *array.Array
	for k, i := range argnums {
		switch i {
		case 1:
			tx = tans[k]
		case 2:
			ty = tans[k]
		}
	}
	if tx == nil && ty == nil {
		return []*array.Array{nil}
	}
	zero := scalarOf(0, outputs[0].DType())
	if tx == nil {
		tx = zero
	}
	if ty == nil {
		ty = zero
	}
	return []*array.Array{toShape(Where(inputs[0], tx, ty), outputs[0].Shape())}
}

// Vmap selects over the whole batch, the operands' batch axes aligned at
// the front.
func (p *WherePrim) Vmap(inputs []*array.Array, axes []int) ([]*array.Array, []int) {
	return elementwiseVmap(inputs, axes, func(in []*array.Array) *array.Array {
		return Where(in[0], in[1], in[2])
	})
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
