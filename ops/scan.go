package ops

import (
	"math"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/internal/opset"
)

// scanPrim is a running sum, product, maximum or minimum along Axis;
// see CumSum for Reverse and Inclusive.
type scanPrim struct {
	Op        opset.ScanOp
	Axis      int
	Reverse   bool
	Inclusive bool
}

func (p *scanPrim) Name() string                                      { return p.Op.String() }
func (p *scanPrim) Eval(s array.Stream, in, out []*array.Array) error { return dispatch(p, s, in, out) }
func (p *scanPrim) evalCPU(in, out []*array.Array) error {
	return cpu.Scan(p.Op, alloc(out[0]), bufOf(in[0]), p.Axis, p.Reverse, p.Inclusive)
}
func (p *scanPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		return metal.Scan(p.Op, o, viewOf(in[0]), p.Axis, p.Reverse, p.Inclusive)
	})
}
func (p *scanPrim) Equivalent(o array.Primitive) bool               { return sameParams(p, o) }
func (p *scanPrim) OutputShapes(in []*array.Array) ([][]int, error) { return sameShape(in) }

// VJP runs the cotangent back through the scan. CumSum's transpose is the
// sum in the other direction. CumProd divides by the element only before
// the first zero of a line, redoes the product with that zero set to 1
// for its own derivative, and gives the elements after it none, so zeros
// are exact (MLX's rule). CumMax and CumMin give each output's cotangent
// to the latest element (in scan order) that attained its extreme, as
// PyTorch's cummax does.
func (p *scanPrim) VJP(in, out, cots []*array.Array, _ []int) []*array.Array {
	x, y, g := in[0], out[0], cots[0]
	switch p.Op {
	case opset.CumSum:
		return []*array.Array{CumSum(g, p.Axis, !p.Reverse, p.Inclusive)}
	case opset.LogCumSumExp:
		return []*array.Array{p.logSumExpVJP(x, y, g)}
	case opset.CumProd:
		z := p.zeros(x)
		rest := Div(CumSum(Mul(g, y), p.Axis, !p.Reverse, p.Inclusive), z.safe)
		first := CumSum(Mul(g, z.withOne), p.Axis, !p.Reverse, p.Inclusive)
		return []*array.Array{Where(z.before, rest, Where(z.first, first, scalarOf(0, x.DType())))}
	}
	att := p.attained(x, y)
	r := CumSum(g, p.Axis, !p.Reverse, p.Inclusive)
	// The outputs whose cotangent goes to an attaining element run up to
	// the next attaining element in scan order.
	next := p.nearest(att, !p.Reverse, false)
	return []*array.Array{Where(att, Sub(r, TakeAlongAxis(p.padEnd(r), next, p.Axis)), scalarOf(0, x.DType()))}
}

// JVP is the scan's derivative along the tangent: a running sum of it for
// CumSum; for CumProd the running product times the running sum of t/x
// until the first zero, and the tangent of that zero times the product
// without it after; for CumMax and CumMin the tangent of the element each
// output is.
func (p *scanPrim) JVP(in, out, tans []*array.Array, _ []int) []*array.Array {
	x, y, t := in[0], out[0], tans[0]
	switch p.Op {
	case opset.CumSum:
		return []*array.Array{CumSum(t, p.Axis, p.Reverse, p.Inclusive)}
	case opset.LogCumSumExp:
		return []*array.Array{p.logSumExpJVP(x, y, t)}
	case opset.CumProd:
		z := p.zeros(x)
		clean := Equal(CumSum(z.zero, p.Axis, p.Reverse, p.Inclusive), scalarOf(0, array.Int32))
		rest := Mul(y, CumSum(Div(t, z.safe), p.Axis, p.Reverse, p.Inclusive))
		first := Mul(CumSum(Where(z.first, t, scalarOf(0, t.DType())), p.Axis, p.Reverse, p.Inclusive), z.withOne)
		return []*array.Array{Where(clean, rest, first)}
	}
	from := p.nearest(p.attained(x, y), p.Reverse, p.Inclusive)
	return []*array.Array{TakeAlongAxis(p.padEnd(t), from, p.Axis)}
}

// Vmap scans the batch, moved to axis 0, along the axis after it.
func (p *scanPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	x := batchFront(in[0], axes[0])
	return []*array.Array{scan("ops."+p.Name(), p.Op, x, p.Axis+1, p.Reverse, p.Inclusive)}, []int{0}
}

// logSumExpVJP is LogCumSumExp's transpose: x_j receives
// exp(x_j) times the sum of g_i exp(-y_i) over the outputs i that include
// x_j, a scan in the other direction. Both factors overflow on their own,
// so the sum runs in log space, split by the cotangent's sign (the
// TensorFlow and MLX rule).
func (p *scanPrim) logSumExpVJP(x, y, g *array.Array) *array.Array {
	lg := Sub(Log(Abs(g)), y)
	part := func(sign *array.Array) *array.Array {
		s := scan("ops.LogCumSumExp", opset.LogCumSumExp, Where(sign, lg, scalarOf(math.Inf(-1), lg.DType())), p.Axis, !p.Reverse, p.Inclusive)
		return Exp(Add(s, x))
	}
	return Sub(part(GreaterScalar(g, 0)), part(LessScalar(g, 0)))
}

// logSumExpJVP is the softmax-weighted running sum of the tangent,
// sum_j exp(x_j - y_i) t_j, in log space like logSumExpVJP. An output
// that is -Inf (the start of an exclusive scan) is constant: its tangent
// is 0, not the NaN of -Inf minus -Inf.
func (p *scanPrim) logSumExpJVP(x, y, t *array.Array) *array.Array {
	lt := Add(x, Log(Abs(t)))
	part := func(sign *array.Array) *array.Array {
		s := scan("ops.LogCumSumExp", opset.LogCumSumExp, Where(sign, lt, scalarOf(math.Inf(-1), lt.DType())), p.Axis, p.Reverse, p.Inclusive)
		return Exp(Sub(s, y))
	}
	d := Sub(part(GreaterScalar(t, 0)), part(LessScalar(t, 0)))
	return Where(IsNegInf(y), scalarOf(0, d.DType()), d)
}

// scanZeros locates the zeros of the lines of a running product.
type scanZeros struct {
	zero    *array.Array // x == 0
	before  *array.Array // no zero up to and including here, in scan order
	first   *array.Array // the first zero of the line
	safe    *array.Array // x before the first zero, 1 from it on: a safe divisor
	withOne *array.Array // the running product with the first zero replaced by 1
}

// zeros finds the zeros of x along the running product's axis, in its
// direction.
func (p *scanPrim) zeros(x *array.Array) scanZeros {
	dt := x.DType()
	zero := Equal(x, scalarOf(0, dt))
	seen := CumSum(zero, p.Axis, p.Reverse, true)
	before := Equal(seen, scalarOf(0, array.Int32))
	first := LogicalAnd(zero, Equal(seen, scalarOf(1, array.Int32)))
	one := scalarOf(1, dt)
	return scanZeros{
		zero:    zero,
		before:  before,
		first:   first,
		safe:    Where(before, x, one),
		withOne: CumProd(Where(first, one, x), p.Axis, p.Reverse, p.Inclusive),
	}
}

// attained reports where x equals its inclusive running extreme (or is
// NaN, which the extreme becomes from there on); y is the scan's output.
func (p *scanPrim) attained(x, y *array.Array) *array.Array {
	if !p.Inclusive {
		y = scan("ops."+p.Name(), p.Op, x, p.Axis, p.Reverse, true)
	}
	return LogicalOr(Equal(x, y), IsNaN(x))
}

// nearest returns, at each position along the axis, the index of the
// nearest marked position looking back from it against a scan that runs
// in direction reverse, itself included when inclusive. Where there is
// none it is -1 or n (the axis length): both index the zero padEnd adds,
// as TakeAlongAxis counts negative indices from the end.
func (p *scanPrim) nearest(mark *array.Array, reverse, inclusive bool) *array.Array {
	n := mark.Dim(p.Axis)
	it := array.Int32
	if n >= math.MaxInt32 {
		it = array.Int64
	}
	shape := make([]int, mark.Ndim()-p.Axis)
	for i := range shape {
		shape[i] = 1
	}
	shape[0] = n
	idx := Reshape(Arange(0, float64(n), 1, it), shape...)
	// exclusive scans start from the dtype's lowest or highest value
	if !reverse {
		return MaximumScalar(CumMax(Where(mark, idx, scalarOf(-1, it)), p.Axis, false, inclusive), -1)
	}
	return MinimumScalar(CumMin(Where(mark, idx, scalarOf(float64(n), it)), p.Axis, true, inclusive), float64(n))
}

// padEnd appends a zero to a along the scan's axis.
func (p *scanPrim) padEnd(a *array.Array) *array.Array {
	w := make([][2]int, a.Ndim())
	w[p.Axis][1] = 1
	return Pad(a, w, 0)
}

func scan(name string, op opset.ScanOp, a *array.Array, axis int, reverse, inclusive bool) *array.Array {
	requireNonNil(name, a)
	dt, ok := op.Result(a.DType())
	if !ok {
		array.Panicf(name, "not supported for dtype %v", a.DType())
	}
	ax := normAxis(name, axis, a.Ndim())
	return node(a.Shape(), dt, &scanPrim{Op: op, Axis: ax, Reverse: reverse, Inclusive: inclusive}, a)
}

// CumSum returns the running sum of a along axis, with a's shape.
// Inclusive sums include each element in its own result (numpy's cumsum);
// exclusive ones start from 0 and leave it out (out[i] = a[0]+...+a[i-1]).
// reverse runs from the end of the axis (out[i] = a[i]+...+a[n-1] when
// inclusive). Bools sum as int32; integers keep their dtype and wrap.
func CumSum(a *array.Array, axis int, reverse, inclusive bool) *array.Array {
	return scan("ops.CumSum", opset.CumSum, a, axis, reverse, inclusive)
}

// CumProd returns the running product of a along axis, like CumSum; an
// exclusive product starts from 1.
func CumProd(a *array.Array, axis int, reverse, inclusive bool) *array.Array {
	return scan("ops.CumProd", opset.CumProd, a, axis, reverse, inclusive)
}

// CumMax returns the running maximum of a along axis, like CumSum: NaN
// from the first NaN on (numpy's maximum.accumulate). An exclusive scan
// starts from the dtype's lowest value (-Inf for floats, false for bool).
// complex64 is not supported.
func CumMax(a *array.Array, axis int, reverse, inclusive bool) *array.Array {
	return scan("ops.CumMax", opset.CumMax, a, axis, reverse, inclusive)
}

// CumMin returns the running minimum of a along axis, like CumMax; an
// exclusive scan starts from the dtype's highest value.
func CumMin(a *array.Array, axis int, reverse, inclusive bool) *array.Array {
	return scan("ops.CumMin", opset.CumMin, a, axis, reverse, inclusive)
}

// LogCumSumExp returns the running log(sum(exp(a))) along axis, like
// CumSum, folded with numpy's logaddexp (logaddexp.accumulate), so large
// values do not overflow: an exclusive scan starts from -Inf, +Inf stays
// +Inf, and NaN propagates from where it appears. Integers and bools
// compute in float32; complex64 is not supported.
func LogCumSumExp(a *array.Array, axis int, reverse, inclusive bool) *array.Array {
	const name = "ops.LogCumSumExp"
	requireNonNil(name, a)
	return scan(name, opset.LogCumSumExp, AsType(a, floatDType(a.DType())), axis, reverse, inclusive)
}
