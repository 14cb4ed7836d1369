package graph_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// Rows of the derivative table for the reductions, arg reductions, scans
// and the softmax family, and closed-form checks of what finite
// differences cannot see: zeros in products, ties in maxima, second
// derivatives.
//
// The broadcast layout repeats values along axis 0, so rows of Max, Min
// and the running extremes never fold axis 0 when it is longer than 2: a
// tie of two is where central differences and the even split agree, and
// the running extremes give a tie to one position, which no finite
// difference sees.

// redRow is a row for f of one argument of shape drawn from [lo, hi]
// (both 0: [-1, 1]).
func redRow(op, name string, shape []int, lo, hi float64, f func(x *array.Array) *array.Array) gradCase {
	return gradCase{op: op, name: name, f: func(xs ...*array.Array) *array.Array { return f(xs[0]) },
		args: []arg{{shape: shape, lo: lo, hi: hi}}}
}

// redFlat is a row of a piecewise-constant f.
func redFlat(op, name string, shape []int, f func(x *array.Array) *array.Array) gradCase {
	c := redRow(op, name, shape, 0, 0, f)
	c.zero = true
	return c
}

// redAxesRows gives a reduction over axes the standard rows: no axes,
// one axis, several, negative ones, a 0-d argument, and one of size 1.
func redAxesRows(op string, f func(a *array.Array, axes ...int) *array.Array, lo, hi float64) []gradCase {
	return []gradCase{
		redRow(op, "all_2x3", []int{2, 3}, lo, hi, func(x *array.Array) *array.Array { return f(x) }),
		redRow(op, "axis1_3x4", []int{3, 4}, lo, hi, func(x *array.Array) *array.Array { return f(x, 1) }),
		redRow(op, "axes0,2_2x3x2", []int{2, 3, 2}, lo, hi, func(x *array.Array) *array.Array { return f(x, 0, 2) }),
		redRow(op, "axes1,2_3x2x2", []int{3, 2, 2}, lo, hi, func(x *array.Array) *array.Array { return f(x, 2, 1) }),
		redRow(op, "axis-1_3x4", []int{3, 4}, lo, hi, func(x *array.Array) *array.Array { return f(x, -1) }),
		redRow(op, "axes-1,-2_3x2x3", []int{3, 2, 3}, lo, hi, func(x *array.Array) *array.Array { return f(x, -1, -2) }),
		redRow(op, "0-d", []int{}, lo, hi, func(x *array.Array) *array.Array { return f(x) }),
		redRow(op, "axis0_1x4", []int{1, 4}, lo, hi, func(x *array.Array) *array.Array { return f(x, 0) }),
	}
}

// redScanRows gives a scan its rows: the four directions along the last
// axis, a 3-d argument along its middle axis, and a transposed argument
// along axis 0 (so the broadcast layout's repeats do not fall on the
// scanned axis).
func redScanRows(op string, f func(a *array.Array, axis int, reverse, inclusive bool) *array.Array, lo, hi float64) []gradCase {
	var rows []gradCase
	for _, rev := range []bool{false, true} {
		for _, incl := range []bool{true, false} {
			rows = append(rows, redRow(op, fmt.Sprintf("axis1_2x5_reverse=%v_inclusive=%v", rev, incl), []int{2, 5}, lo, hi,
				func(x *array.Array) *array.Array { return f(x, 1, rev, incl) }))
		}
	}
	return append(rows,
		redRow(op, "axis-2_2x4x3", []int{2, 4, 3}, lo, hi, func(x *array.Array) *array.Array { return f(x, -2, false, true) }),
		redRow(op, "axis-2_2x4x3_reverse_exclusive", []int{2, 4, 3}, lo, hi, func(x *array.Array) *array.Array { return f(x, -2, true, false) }),
		redRow(op, "axis0_of_transposed_3x4", []int{3, 4}, lo, hi, func(x *array.Array) *array.Array {
			return f(ops.Transpose(x), 0, false, true)
		}),
		redRow(op, "length1", []int{3, 1}, lo, hi, func(x *array.Array) *array.Array { return f(x, 1, false, true) }),
	)
}

// redClipped wraps a running extreme so that the infinite start of an
// exclusive scan, where finite differences give NaN, becomes the constant
// bound.
func redClipped(f func(a *array.Array, axis int, reverse, inclusive bool) *array.Array, clip func(*array.Array, float64) *array.Array, bound float64) func(a *array.Array, axis int, reverse, inclusive bool) *array.Array {
	return func(a *array.Array, axis int, reverse, inclusive bool) *array.Array {
		return clip(f(a, axis, reverse, inclusive), bound)
	}
}

// redSoftmaxRows gives a softmax-like function its rows: one axis (last,
// first, negative), several, all, and a 0-d argument.
func redSoftmaxRows(op string, f func(a *array.Array, axes ...int) *array.Array) []gradCase {
	return []gradCase{
		redRow(op, "axis1_2x4", []int{2, 4}, -2, 2, func(x *array.Array) *array.Array { return f(x, 1) }),
		redRow(op, "axis0_3x4", []int{3, 4}, -2, 2, func(x *array.Array) *array.Array { return f(x, 0) }),
		redRow(op, "axis-1_2x3x3", []int{2, 3, 3}, -2, 2, func(x *array.Array) *array.Array { return f(x, -1) }),
		redRow(op, "axis1_2x3x3", []int{2, 3, 3}, -2, 2, func(x *array.Array) *array.Array { return f(x, 1) }),
		redRow(op, "axes0,2_2x3x2", []int{2, 3, 2}, -2, 2, func(x *array.Array) *array.Array { return f(x, 0, 2) }),
		redRow(op, "axes-1,-2_2x2x3", []int{2, 2, 3}, -2, 2, func(x *array.Array) *array.Array { return f(x, -1, -2) }),
		redRow(op, "all_2x3", []int{2, 3}, -2, 2, func(x *array.Array) *array.Array { return f(x) }),
		redRow(op, "0-d", []int{}, -2, 2, func(x *array.Array) *array.Array { return f(x) }),
		redRow(op, "large_values_axis1_2x4", []int{2, 4}, 90, 110, func(x *array.Array) *array.Array { return f(x, 1) }),
	}
}

func redVarDDOF(ddof int) func(a *array.Array, axes ...int) *array.Array {
	return func(a *array.Array, axes ...int) *array.Array { return ops.VarDDOF(a, ddof, axes...) }
}

func redStdDDOF(ddof int) func(a *array.Array, axes ...int) *array.Array {
	return func(a *array.Array, axes ...int) *array.Array { return ops.StdDDOF(a, ddof, axes...) }
}

var _ = register(redAxesRows("Sum", ops.Sum, 0, 0)...)
var _ = register(redAxesRows("Prod", ops.Prod, 0, 0)...)
var _ = register(redAxesRows("Max", ops.Max, 0, 0)...)
var _ = register(redAxesRows("Min", ops.Min, 0, 0)...)
var _ = register(redAxesRows("Mean", ops.Mean, 0, 0)...)
var _ = register(redAxesRows("LogSumExp", ops.LogSumExp, -2, 2)...)
var _ = register(redScanRows("CumSum", ops.CumSum, 0, 0)...)
var _ = register(redScanRows("CumProd", ops.CumProd, 0, 0)...)
var _ = register(redScanRows("CumMax", redClipped(ops.CumMax, ops.MaximumScalar, -10), 0, 0)...)
var _ = register(redScanRows("CumMin", redClipped(ops.CumMin, ops.MinimumScalar, 10), 0, 0)...)
var _ = register(redSoftmaxRows("Softmax", ops.Softmax)...)
var _ = register(redSoftmaxRows("LogSoftmax", ops.LogSoftmax)...)

var _ = register(
	// Prod away from 1 in magnitude, and of a mix of signs
	redRow("Prod", "axis1_2x4_magnitudes", []int{2, 4}, 0.5, 2, func(x *array.Array) *array.Array { return ops.Prod(x, 1) }),
	redRow("Prod", "all_4_negative", []int{4}, -2, -0.5, func(x *array.Array) *array.Array { return ops.Prod(x) }),

	// Max and Min of a function of the argument
	redRow("Max", "of_a_square_axis1_2x3", []int{2, 3}, 0, 0, func(x *array.Array) *array.Array {
		return ops.Max(ops.Mul(x, x), 1)
	}),
	redRow("Min", "of_an_exp_axis-1_2x3", []int{2, 3}, 0, 0, func(x *array.Array) *array.Array {
		return ops.Min(ops.Exp(x), -1)
	}),

	// Var and Std with and without degrees of freedom
	redRow("Var", "all_2x3", []int{2, 3}, 0, 0, func(x *array.Array) *array.Array { return ops.Var(x) }),
	redRow("Var", "axis0_3x4", []int{3, 4}, 0, 0, func(x *array.Array) *array.Array { return ops.Var(x, 0) }),
	redRow("Var", "axes-1,-2_2x2x3", []int{2, 2, 3}, 0, 0, func(x *array.Array) *array.Array { return ops.Var(x, -1, -2) }),
	redRow("Var", "0-d", []int{}, 0, 0, func(x *array.Array) *array.Array { return ops.Var(x) }),
	redRow("VarDDOF", "ddof1_axis1_3x4", []int{3, 4}, 0, 0, func(x *array.Array) *array.Array { return redVarDDOF(1)(x, 1) }),
	redRow("VarDDOF", "ddof2_all_2x3", []int{2, 3}, 0, 0, func(x *array.Array) *array.Array { return redVarDDOF(2)(x) }),
	redRow("VarDDOF", "ddof0_axes0,2_2x3x2", []int{2, 3, 2}, 0, 0, func(x *array.Array) *array.Array { return redVarDDOF(0)(x, 0, 2) }),
	redRow("Std", "all_2x3", []int{2, 3}, 0, 0, func(x *array.Array) *array.Array { return ops.Std(x) }),
	redRow("Std", "axis-1_3x4", []int{3, 4}, 0, 0, func(x *array.Array) *array.Array { return ops.Std(x, -1) }),
	redRow("StdDDOF", "ddof1_axis1_2x4x3", []int{2, 4, 3}, 0, 0, func(x *array.Array) *array.Array { return redStdDDOF(1)(x, 1) }),
	redRow("StdDDOF", "ddof1_axes1,2_2x3x2", []int{2, 3, 2}, 0, 0, func(x *array.Array) *array.Array { return redStdDDOF(1)(x, 1, 2) }),

	// KeepDims over reductions of each kind
	redRow("KeepDims", "Sum_axis1_3x4", []int{3, 4}, 0, 0, func(x *array.Array) *array.Array { return ops.KeepDims(ops.Sum, x, 1) }),
	redRow("KeepDims", "Mean_all_2x3", []int{2, 3}, 0, 0, func(x *array.Array) *array.Array { return ops.KeepDims(ops.Mean, x) }),
	redRow("KeepDims", "Max_axes0,-1_2x3x2", []int{2, 3, 2}, 0, 0, func(x *array.Array) *array.Array {
		return ops.KeepDims(ops.Max, x, 0, -1)
	}),
	redRow("KeepDims", "Prod_axis-1_2x3", []int{2, 3}, 0, 0, func(x *array.Array) *array.Array { return ops.KeepDims(ops.Prod, x, -1) }),
	redRow("KeepDims", "LogSumExp_axis0_3x4", []int{3, 4}, 0, 0, func(x *array.Array) *array.Array {
		return ops.KeepDims(ops.LogSumExp, x, 0)
	}),
	redRow("KeepDims", "Std_axis1_3x4", []int{3, 4}, 0, 0, func(x *array.Array) *array.Array { return ops.KeepDims(ops.Std, x, 1) }),
	redRow("KeepDims", "centred_by_its_mean", []int{3, 4}, 0, 0, func(x *array.Array) *array.Array {
		return ops.Sub(x, ops.KeepDims(ops.Mean, x, 1))
	}),

	// LogSumExp of large values: a naive exp overflows float64 at ~710
	redRow("LogSumExp", "large_values_all_2x3", []int{2, 3}, 90, 110, func(x *array.Array) *array.Array { return ops.LogSumExp(x) }),
	redRow("LogSumExp", "large_values_axis1_3x4", []int{3, 4}, 95, 105, func(x *array.Array) *array.Array { return ops.LogSumExp(x, 1) }),
	redRow("LogSumExp", "very_large_values_axis-1_2x3", []int{2, 3}, 995, 1005, func(x *array.Array) *array.Array {
		return ops.LogSumExp(x, -1)
	}),

	// the boolean reductions and arg reductions have zero derivatives
	redFlat("All", "all_2x3", []int{2, 3}, func(x *array.Array) *array.Array { return ops.All(x) }),
	redFlat("All", "of_a_comparison_axis1", []int{2, 3}, func(x *array.Array) *array.Array {
		return ops.All(ops.Greater(x, ops.ZerosLike(x)), 1)
	}),
	redFlat("Any", "axis-1_2x3", []int{2, 3}, func(x *array.Array) *array.Array { return ops.Any(x, -1) }),
	redFlat("Any", "of_a_comparison_axes0,2", []int{2, 3, 2}, func(x *array.Array) *array.Array {
		return ops.Any(ops.Less(x, ops.ZerosLike(x)), 0, 2)
	}),
	redFlat("ArgMax", "axis1_3x4", []int{3, 4}, func(x *array.Array) *array.Array { return ops.ArgMax(x, 1) }),
	redFlat("ArgMax", "axis-3_2x3x2", []int{2, 3, 2}, func(x *array.Array) *array.Array { return ops.ArgMax(x, -3) }),
	redFlat("ArgMin", "axis0_3x4", []int{3, 4}, func(x *array.Array) *array.Array { return ops.ArgMin(x, 0) }),
	redFlat("ArgMin", "as_float_axis-1_2x3", []int{2, 3}, func(x *array.Array) *array.Array {
		return ops.MulScalar(ops.AsType(ops.ArgMin(x, -1), array.Float64), 0.5)
	}),
)

// redPoint is a point of one argument.
func redPoint(v []float64, shape []int) point {
	return point{vals: [][]float64{v}, shapes: [][]int{shape}}
}

// redCheckAt checks a row's VJP and JVP at a given point against finite
// differences, for functions that are smooth there although a random
// point would not reach it (zeros in products).
func redCheckAt(t *testing.T, c gradCase, p point) {
	t.Helper()
	r := rand.New(rand.NewPCG(seedOf(c.name), 3))
	out := c.call(p.contiguous())
	cot := randValues(r, out.Size(), 0, 0)
	tan := randValues(r, len(p.vals[0]), 0, 0)
	_, vjps := graph.VJP(c.fn(), p.contiguous(), []*array.Array{array.FromSlice(cot, append([]int{}, out.Shape()...)...)})
	compare(t, c.name+" VJP", values(t, vjps[0]), fdVJP(t, c, p, cot, out.Shape())[0])
	_, jvps := graph.JVP(c.fn(), p.contiguous(), []*array.Array{array.FromSlice(tan, p.shapes[0]...)})
	compare(t, c.name+" JVP", values(t, jvps[0]), fdJVP(t, c, p, [][]float64{tan}))
}

// Products are multilinear, so finite differences are exact at zeros too;
// the rules must not divide by them.
func TestProdGradZeros(t *testing.T) {
	lines := [][]float64{
		{0, 1.5, -2, 0.5},
		{1.5, -2, 0.5, 0},
		{2, 0, 0, 3},
		{0, 0, 0, 0},
		{1.5, 0.5, -2, 3},
	}
	var x []float64
	for _, l := range lines {
		x = append(x, l...)
	}
	shape := []int{len(lines), 4}
	for _, axes := range [][]int{{1}, {0}, {0, 1}} {
		c := redRow("Prod", fmt.Sprintf("zeros_axes%v", axes), shape, 0, 0, func(x *array.Array) *array.Array {
			return ops.Prod(x, axes...)
		})
		redCheckAt(t, c, redPoint(x, shape))
	}
	// the gradient of a product with one zero is the product of the others
	_, g := graph.VJP(func(in ...*array.Array) []*array.Array { return []*array.Array{ops.Prod(in[0])} },
		[]*array.Array{array.FromSlice([]float64{3, 0, -2})}, []*array.Array{array.Scalar(1.0)})
	near(t, "Prod([3 0 -2]) gradient", values(t, g[0]), []float64{0, -6, 0}, 1e-10)
}

func TestCumProdGradZeros(t *testing.T) {
	lines := [][]float64{
		{0, 1.5, -2, 0.5, 2},
		{1.5, -2, 0.5, 2, 0},
		{2, 0, -1.5, 0, 3},
		{0, 0, 2, 0.5, -1},
		{1.5, 0.5, 0, -2, 3},
		{1.5, 0.5, -2, 3, 2},
	}
	var x []float64
	for _, l := range lines {
		x = append(x, l...)
	}
	shape := []int{len(lines), 5}
	for _, rev := range []bool{false, true} {
		for _, incl := range []bool{true, false} {
			c := redRow("CumProd", fmt.Sprintf("zeros_reverse=%v_inclusive=%v", rev, incl), shape, 0, 0,
				func(x *array.Array) *array.Array { return ops.CumProd(x, 1, rev, incl) })
			redCheckAt(t, c, redPoint(x, shape))
			// and along axis 0 of the transpose
			tr := redRow("CumProd", c.name+"_axis0", []int{5, len(lines)}, 0, 0,
				func(x *array.Array) *array.Array { return ops.CumProd(x, 0, rev, incl) })
			redCheckAt(t, tr, redPoint(values(t, ops.Transpose(array.FromSlice(x, shape...))), []int{5, len(lines)}))
		}
	}
}

// redGrads returns the VJP with cotangent cot and the JVP with tangent tan
// of f at x.
func redGrads(t *testing.T, f func(*array.Array) *array.Array, x *array.Array, cot, tan []float64) (vjp, jvp []float64) {
	t.Helper()
	fn := func(in ...*array.Array) []*array.Array { return []*array.Array{f(in[0])} }
	out := f(x)
	_, g := graph.VJP(fn, []*array.Array{x}, []*array.Array{array.FromSlice(cot, append([]int{}, out.Shape()...)...)})
	_, d := graph.JVP(fn, []*array.Array{x}, []*array.Array{array.FromSlice(tan, append([]int{}, x.Shape()...)...)})
	return values(t, g[0]), values(t, d[0])
}

// Max and Min split the cotangent evenly among tied elements, as MLX does;
// their JVP is the mean of the tied tangents.
func TestMaxMinGradTies(t *testing.T) {
	x := array.FromSlice([]float64{
		1, 3, 3, 2,
		5, 1, 5, 5,
		2, 2, 2, 2,
	}, 3, 4)
	tan := []float64{
		1, 2, 3, 4,
		5, 6, 7, 8,
		-1, 1, -2, 6,
	}
	wantVJP := []float64{
		0, 0.5, 0.5, 0,
		2. / 3, 0, 2. / 3, 2. / 3,
		0.75, 0.75, 0.75, 0.75,
	}
	wantJVP := []float64{2.5, 20. / 3, 1}
	vjp, jvp := redGrads(t, func(x *array.Array) *array.Array { return ops.Max(x, 1) }, x, []float64{1, 2, 3}, tan)
	near(t, "Max VJP", vjp, wantVJP, 1e-10)
	near(t, "Max JVP", jvp, wantJVP, 1e-10)
	vjp, jvp = redGrads(t, func(x *array.Array) *array.Array { return ops.Min(ops.Neg(x), 1) }, x, []float64{1, 2, 3}, tan)
	near(t, "Min of the negation VJP", vjp, redNeg(wantVJP), 1e-10)
	near(t, "Min of the negation JVP", jvp, redNeg(wantJVP), 1e-10)
	// over all axes, and through KeepDims
	vjp, jvp = redGrads(t, func(x *array.Array) *array.Array { return ops.KeepDims(ops.Min, x) }, x, []float64{6}, tan)
	near(t, "Min over all VJP", vjp, []float64{3, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0}, 1e-10)
	near(t, "Min over all JVP", jvp, []float64{3.5}, 1e-10)
}

// The running extremes give each output's cotangent to the latest
// position that attained it, as PyTorch's cummax does.
func TestCumMaxMinGradTies(t *testing.T) {
	x := []float64{1, 3, 2, 3, 5, 5}
	g := []float64{1, 2, 3, 4, 5, 6}
	tan := []float64{10, 20, 30, 40, 50, 60}
	for _, c := range []struct {
		reverse, inclusive bool
		vjp, jvp           []float64
	}{
		{false, true, []float64{1, 5, 0, 4, 5, 6}, []float64{10, 20, 20, 40, 50, 60}},
		{true, true, []float64{0, 0, 0, 0, 15, 6}, []float64{50, 50, 50, 50, 50, 60}},
		{false, false, []float64{2, 7, 0, 5, 6, 0}, []float64{0, 10, 20, 20, 40, 50}},
		{true, false, []float64{0, 0, 0, 0, 10, 5}, []float64{50, 50, 50, 50, 60, 0}},
	} {
		name := fmt.Sprintf("reverse=%v inclusive=%v", c.reverse, c.inclusive)
		vjp, jvp := redGrads(t, func(x *array.Array) *array.Array { return ops.CumMax(x, 0, c.reverse, c.inclusive) },
			array.FromSlice(x), g, tan)
		near(t, "CumMax "+name+" VJP", vjp, c.vjp, 1e-10)
		near(t, "CumMax "+name+" JVP", jvp, c.jvp, 1e-10)
		vjp, jvp = redGrads(t, func(x *array.Array) *array.Array { return ops.CumMin(ops.Neg(x), 0, c.reverse, c.inclusive) },
			array.FromSlice(x), g, tan)
		near(t, "CumMin "+name+" VJP", vjp, redNeg(c.vjp), 1e-10)
		near(t, "CumMin "+name+" JVP", jvp, redNeg(c.jvp), 1e-10)
		// and as the middle axis of a batch of two
		x2 := ops.Stack([]*array.Array{array.FromSlice(x), ops.MulScalar(array.FromSlice(x), 2)}, 1)
		vjp, _ = redGrads(t, func(x *array.Array) *array.Array { return ops.CumMax(ops.ExpandDims(x, 0), 1, c.reverse, c.inclusive) },
			x2, values(t, ops.Stack([]*array.Array{array.FromSlice(g), array.FromSlice(g)}, 1)), values(t, ops.ZerosLike(x2)))
		near(t, "CumMax "+name+" along axis 1 of 3", vjp, values(t, ops.Stack([]*array.Array{array.FromSlice(c.vjp), array.FromSlice(c.vjp)}, 1)), 1e-10)
	}
}

func redNeg(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = -x
	}
	return out
}

// LogSumExp and the softmaxes of values far beyond exp's range have
// finite derivatives: the rules are built from the (stable) outputs.
func TestSoftmaxGradLargeValues(t *testing.T) {
	x := array.FromSlice([]float64{1000, 1001, 999, -1000, 1002, 1000}, 2, 3)
	p0 := []float64{1 / (1 + math.E + 1/math.E), math.E / (1 + math.E + 1/math.E), (1 / math.E) / (1 + math.E + 1/math.E)}
	q := 1 / (math.Exp(-2002) + 1 + math.Exp(-2))
	p1 := []float64{math.Exp(-2002) * q, q, math.Exp(-2) * q}
	p := append(append([]float64(nil), p0...), p1...)
	vjp, jvp := redGrads(t, func(x *array.Array) *array.Array { return ops.LogSumExp(x, 1) }, x,
		[]float64{1, 1}, []float64{1, 0, 0, 0, 1, 0})
	near(t, "LogSumExp VJP", vjp, p, 1e-10)
	near(t, "LogSumExp JVP", jvp, []float64{p[0], p[4]}, 1e-10)
	// softmax's VJP of the cotangent e_k in row r is p_j (δ_jk - p_k)
	vjp, _ = redGrads(t, func(x *array.Array) *array.Array { return ops.Softmax(x, 1) }, x,
		[]float64{1, 0, 0, 0, 1, 0}, make([]float64, 6))
	want := make([]float64, 6)
	for r, k := range []int{0, 1} {
		for j := range 3 {
			d := 0.0
			if j == k {
				d = 1
			}
			want[3*r+j] = p[3*r+j] * (d - p[3*r+k])
		}
	}
	near(t, "Softmax VJP", vjp, want, 1e-10)
	vjp, _ = redGrads(t, func(x *array.Array) *array.Array { return ops.LogSoftmax(x, 1) }, x,
		[]float64{1, 0, 0, 0, 1, 0}, make([]float64, 6))
	for r, k := range []int{0, 1} {
		for j := range 3 {
			d := 0.0
			if j == k {
				d = 1
			}
			want[3*r+j] = d - p[3*r+j]
		}
	}
	near(t, "LogSoftmax VJP", vjp, want, 1e-10)
}

// The Hessian of the softmax cross-entropy -sum(y * log softmax(z)), with
// y summing to 1 over each softmax group, is diag(p) - p p^T within each
// group (p = softmax(z)) and 0 across groups; so is the Hessian of
// sum(LogSumExp(z)). Hessian-vector products come from forward over
// reverse (JVP of Grad) and reverse over reverse (Grad of <Grad, v>), and
// the whole Hessian from JVPs along the basis vectors.
func TestSoftmaxCrossEntropyHessian(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	for _, c := range []struct {
		name  string
		shape []int
		group func(i int) int // the softmax group of flat element i
		loss  func(z, y *array.Array) *array.Array
	}{
		{"LogSoftmax_axis-1_3x4", []int{3, 4}, func(i int) int { return i / 4 }, func(z, y *array.Array) *array.Array {
			return ops.Neg(ops.Sum(ops.Mul(y, ops.LogSoftmax(z, -1))))
		}},
		{"log_of_Softmax_axis-1_3x4", []int{3, 4}, func(i int) int { return i / 4 }, func(z, y *array.Array) *array.Array {
			return ops.Neg(ops.Sum(ops.Mul(y, ops.Log(ops.Softmax(z, -1)))))
		}},
		{"LogSoftmax_axis0_4x3", []int{4, 3}, func(i int) int { return i % 3 }, func(z, y *array.Array) *array.Array {
			return ops.Neg(ops.Sum(ops.Mul(y, ops.LogSoftmax(z, 0))))
		}},
		{"LogSoftmax_axes1,2_2x2x3", []int{2, 2, 3}, func(i int) int { return i / 6 }, func(z, y *array.Array) *array.Array {
			return ops.Neg(ops.Sum(ops.Mul(y, ops.LogSoftmax(z, 1, 2))))
		}},
		{"log_of_Softmax_all_2x3", []int{2, 3}, func(int) int { return 0 }, func(z, y *array.Array) *array.Array {
			return ops.Neg(ops.Sum(ops.Mul(y, ops.Log(ops.Softmax(z)))))
		}},
		{"LogSumExp_axis-1_3x4", []int{3, 4}, func(i int) int { return i / 4 }, func(z, _ *array.Array) *array.Array {
			return ops.Sum(ops.LogSumExp(z, -1))
		}},
		{"Mean_LogSumExp_large_values_axis0_4x3", []int{4, 3}, func(i int) int { return i % 3 }, func(z, _ *array.Array) *array.Array {
			return ops.MulScalar(ops.Mean(ops.LogSumExp(ops.AddScalar(z, 500), 0)), 3)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := size(c.shape)
			zs := randValues(r, n, -2, 2)
			ys := randValues(r, n, 0.1, 1)
			groups := map[int]float64{}
			for i, v := range ys {
				groups[c.group(i)] += v
			}
			for i := range ys {
				ys[i] /= groups[c.group(i)]
			}
			p := make([]float64, n)
			den := map[int]float64{}
			for i, z := range zs {
				den[c.group(i)] += math.Exp(z)
			}
			for i, z := range zs {
				p[i] = math.Exp(z) / den[c.group(i)]
			}
			hess := func(i, j int) float64 {
				if c.group(i) != c.group(j) {
					return 0
				}
				h := -p[i] * p[j]
				if i == j {
					h += p[i]
				}
				return h
			}
			z := array.FromSlice(zs, c.shape...)
			y := array.FromSlice(ys, c.shape...)
			loss := func(in ...*array.Array) *array.Array { return c.loss(in[0], y) }
			grad := graph.Grad(loss)

			vs := randValues(r, n, 0, 0)
			hv := make([]float64, n)
			for i := range hv {
				for j := range vs {
					hv[i] += hess(i, j) * vs[j]
				}
			}
			v := array.FromSlice(vs, c.shape...)
			_, fwd := graph.JVP(grad, []*array.Array{z}, []*array.Array{v})
			near(t, "JVP of Grad", values(t, fwd[0]), hv, 1e-10)
			gv := func(in ...*array.Array) *array.Array { return ops.Sum(ops.Mul(grad(in[0])[0], v)) }
			near(t, "Grad of <Grad, v>", values(t, graph.Grad(gv)(z)[0]), hv, 1e-10)

			for j := range n {
				e := make([]float64, n)
				e[j] = 1
				_, col := graph.JVP(grad, []*array.Array{z}, []*array.Array{array.FromSlice(e, c.shape...)})
				want := make([]float64, n)
				for i := range want {
					want[i] = hess(i, j)
				}
				near(t, fmt.Sprintf("Hessian column %d", j), values(t, col[0]), want, 1e-10)
			}
		})
	}
}

// The rules are built from ops with rules of their own, so they can be
// differentiated again and batched: Hessian-vector products (forward over
// reverse, and reverse over reverse) against finite differences of the
// gradient, and per-example gradients (Vmap of Grad) against a loop.
func TestReduceSecondOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	weights := array.FromSlice(randValues(r, 24, 0, 0), 2, 3, 4)
	// loss weighs the result of op with fixed weights, so every output
	// element matters
	loss := func(op func(*array.Array) *array.Array) func(in ...*array.Array) *array.Array {
		return func(in ...*array.Array) *array.Array {
			y := op(in[0])
			w := ops.Reshape(ops.Slice(ops.Reshape(weights, -1), ops.R(0, y.Size())), y.Shape()...)
			return ops.Sum(ops.Mul(ops.Square(y), w))
		}
	}
	for _, c := range []struct {
		name string
		op   func(*array.Array) *array.Array
		zero bool // put zeros into the point
	}{
		{"Sum_axis1", func(x *array.Array) *array.Array { return ops.Sum(x, 1) }, false},
		{"Prod_axes0,2", func(x *array.Array) *array.Array { return ops.Prod(x, 0, 2) }, false},
		{"Prod_axis-1_zeros", func(x *array.Array) *array.Array { return ops.Prod(x, -1) }, true},
		{"Max_axis1", func(x *array.Array) *array.Array { return ops.Max(x, 1) }, false},
		{"Min_all", func(x *array.Array) *array.Array { return ops.Min(x) }, false},
		{"CumSum_axis1_reverse", func(x *array.Array) *array.Array { return ops.CumSum(x, 1, true, true) }, false},
		{"CumProd_axis-1", func(x *array.Array) *array.Array { return ops.CumProd(x, -1, false, true) }, false},
		{"CumProd_axis-1_exclusive_zeros", func(x *array.Array) *array.Array { return ops.CumProd(x, -1, false, false) }, true},
		{"CumProd_axis1_reverse_zeros", func(x *array.Array) *array.Array { return ops.CumProd(x, 1, true, true) }, true},
		{"CumMax_axis-1", func(x *array.Array) *array.Array { return ops.CumMax(x, -1, false, true) }, false},
		{"CumMin_axis1_reverse", func(x *array.Array) *array.Array { return ops.CumMin(x, 1, true, true) }, false},
		{"Softmax_axis-1", func(x *array.Array) *array.Array { return ops.Softmax(x, -1) }, false},
		{"LogSoftmax_axes0,2", func(x *array.Array) *array.Array { return ops.LogSoftmax(x, 0, 2) }, false},
		{"LogSumExp_axis1", func(x *array.Array) *array.Array { return ops.LogSumExp(x, 1) }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			shape := []int{2, 3, 4}
			xs := randValues(r, 24, 0.3, 1.5)
			for i := range xs {
				if r.IntN(2) == 0 {
					xs[i] = -xs[i]
				}
				if c.zero && i%5 == 1 {
					xs[i] = 0
				}
			}
			vs := randValues(r, 24, 0, 0)
			f := loss(c.op)
			grad := graph.Grad(f)
			gradAt := func(s float64) []float64 {
				p := make([]float64, len(xs))
				for i := range p {
					p[i] = xs[i] + s*vs[i]
				}
				return values(t, grad(array.FromSlice(p, shape...))[0])
			}
			hi, lo := gradAt(fdStep), gradAt(-fdStep)
			want := make([]float64, len(hi))
			for i := range want {
				want[i] = (hi[i] - lo[i]) / (2 * fdStep)
			}
			x, v := array.FromSlice(xs, shape...), array.FromSlice(vs, shape...)
			_, hv := graph.JVP(grad, []*array.Array{x}, []*array.Array{v})
			compare(t, "JVP of Grad", values(t, hv[0]), want)
			gv := func(in ...*array.Array) *array.Array { return ops.Sum(ops.Mul(grad(in[0])[0], v)) }
			compare(t, "Grad of <Grad, v>", values(t, graph.Grad(gv)(x)[0]), want)

			// per-example gradients: the batch is axis 0 of x
			var loop []*array.Array
			for b := range shape[0] {
				loop = append(loop, grad(ops.SliceAxis(x, 0, ops.R(b, b+1)))[0])
			}
			per := graph.Vmap(graph.Grad(func(in ...*array.Array) *array.Array {
				return f(ops.ExpandDims(in[0], 0))
			}), nil, nil)(x)[0]
			compare(t, "Vmap of Grad", values(t, per), values(t, ops.Concatenate(loop, 0)))
		})
	}
}
