package ops

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
)

// ScanPrim is a running sum, product, maximum or minimum along Axis;
// see CumSum for Reverse and Inclusive.
type ScanPrim struct {
	Op        cpu.ScanOp
	Axis      int
	Reverse   bool
	Inclusive bool
}

var scanOpNames = [...]string{cpu.CumSum: "CumSum", cpu.CumProd: "CumProd", cpu.CumMax: "CumMax", cpu.CumMin: "CumMin"}

func (p *ScanPrim) Name() string {
	if int(p.Op) < len(scanOpNames) {
		return scanOpNames[p.Op]
	}
	return p.Op.String()
}
func (p *ScanPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *ScanPrim) evalCPU(in, out []*array.Array) error {
	return cpu.Scan(p.Op, alloc(out[0]), bufOf(in[0]), p.Axis, p.Reverse, p.Inclusive)
}
func (p *ScanPrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*ScanPrim)
	return ok && *q == *p
}

func scan(name string, op cpu.ScanOp, a *array.Array, axis int, reverse, inclusive bool) *array.Array {
	requireNonNil(name, a)
	dt, ok := cpu.ScanDType(op, a.DType())
	if !ok {
		array.Panicf(name, "not supported for dtype %v", a.DType())
	}
	ax := normAxis(name, axis, a.Ndim())
	return node(a.Shape(), dt, &ScanPrim{Op: op, Axis: ax, Reverse: reverse, Inclusive: inclusive}, a)
}

// CumSum returns the running sum of a along axis, with a's shape.
// Inclusive sums include each element in its own result (numpy's cumsum);
// exclusive ones start from 0 and leave it out (out[i] = a[0]+...+a[i-1]).
// reverse runs from the end of the axis (out[i] = a[i]+...+a[n-1] when
// inclusive). Bools sum as int32; integers keep their dtype and wrap.
func CumSum(a *array.Array, axis int, reverse, inclusive bool) *array.Array {
	return scan("ops.CumSum", cpu.CumSum, a, axis, reverse, inclusive)
}

// CumProd returns the running product of a along axis, like CumSum; an
// exclusive product starts from 1.
func CumProd(a *array.Array, axis int, reverse, inclusive bool) *array.Array {
	return scan("ops.CumProd", cpu.CumProd, a, axis, reverse, inclusive)
}

// CumMax returns the running maximum of a along axis, like CumSum: NaN
// from the first NaN on (numpy's maximum.accumulate). An exclusive scan
// starts from the dtype's lowest value (-Inf for floats, false for bool).
// complex64 is not supported.
func CumMax(a *array.Array, axis int, reverse, inclusive bool) *array.Array {
	return scan("ops.CumMax", cpu.CumMax, a, axis, reverse, inclusive)
}

// CumMin returns the running minimum of a along axis, like CumMax; an
// exclusive scan starts from the dtype's highest value.
func CumMin(a *array.Array, axis int, reverse, inclusive bool) *array.Array {
	return scan("ops.CumMin", cpu.CumMin, a, axis, reverse, inclusive)
}
