package graph_test

import (
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// Rows of the derivative table for the elementwise operations: unary and
// binary functions, their scalar forms, Where, casts and the Like
// constructors.

// ewUnary is a row for a function of one [2 3] argument drawn from
// [lo, hi].
func ewUnary(op string, f func(*array.Array) *array.Array, lo, hi float64) gradCase {
	return gradCase{op: op, name: "2x3", f: func(xs ...*array.Array) *array.Array { return f(xs[0]) },
		args: []arg{{shape: []int{2, 3}, lo: lo, hi: hi}}}
}

// ewFlat is a piecewise-constant row of a function of one [2 3] argument.
func ewFlat(op string, f func(*array.Array) *array.Array, lo, hi float64) gradCase {
	c := ewUnary(op, f, lo, hi)
	c.zero = true
	return c
}

// ewBinary is a row for a function of two arguments of the given shapes,
// drawn from [lo0, hi0] and [lo1, hi1].
func ewBinary(op, name string, f func(a, b *array.Array) *array.Array, s0, s1 []int, lo0, hi0, lo1, hi1 float64) gradCase {
	return gradCase{op: op, name: name, f: func(xs ...*array.Array) *array.Array { return f(xs[0], xs[1]) },
		args: []arg{{shape: s0, lo: lo0, hi: hi0}, {shape: s1, lo: lo1, hi: hi1}}}
}

// ewBinaryRows gives a binary function the standard rows: equal shapes,
// a trailing-axis broadcast, an outer broadcast, a 0-d operand, and a
// fixed float32 operand (promoted to float64) on either side.
func ewBinaryRows(op string, f func(a, b *array.Array) *array.Array, lo0, hi0, lo1, hi1 float64) []gradCase {
	fixed := ewFixedF32([]int{3}, lo1, hi1)
	fixed0 := ewFixedF32([]int{2, 1}, lo0, hi0)
	return []gradCase{
		ewBinary(op, "2x3,2x3", f, []int{2, 3}, []int{2, 3}, lo0, hi0, lo1, hi1),
		ewBinary(op, "2x3,3", f, []int{2, 3}, []int{3}, lo0, hi0, lo1, hi1),
		ewBinary(op, "2x1,1x3", f, []int{2, 1}, []int{1, 3}, lo0, hi0, lo1, hi1),
		ewBinary(op, "0d,2x3", f, []int{}, []int{2, 3}, lo0, hi0, lo1, hi1),
		ewBinary(op, "4,0d", f, []int{4}, []int{}, lo0, hi0, lo1, hi1),
		{op: op, name: "2x3,fixed float32 3", f: func(xs ...*array.Array) *array.Array { return f(xs[0], xs[1]) },
			args: []arg{{shape: []int{2, 3}, lo: lo0, hi: hi0}, {fixed: fixed}}},
		{op: op, name: "fixed float32 2x1,3", f: func(xs ...*array.Array) *array.Array { return f(xs[0], xs[1]) },
			args: []arg{{fixed: fixed0}, {shape: []int{3}, lo: lo1, hi: hi1}}},
	}
}

// ewFlatBinaryRows are the rows of a piecewise-constant binary function.
func ewFlatBinaryRows(op string, f func(a, b *array.Array) *array.Array) []gradCase {
	rows := []gradCase{
		ewBinary(op, "2x3,2x3", f, []int{2, 3}, []int{2, 3}, -2, 2, -2, 2),
		ewBinary(op, "2x1,3", f, []int{2, 1}, []int{3}, -2, 2, -2, 2),
	}
	for i := range rows {
		rows[i].zero = true
	}
	return rows
}

// ewFixedF32 is a constant float32 argument with values spread over
// [lo, hi] and exactly representable.
func ewFixedF32(shape []int, lo, hi float64) *array.Array {
	n := size(shape)
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(math.Round((lo+(hi-lo)*(float64(i)+0.5)/float64(n))*64) / 64)
	}
	return array.FromSlice(v, shape...)
}

// ewMask is a fixed Bool argument.
func ewMask(shape []int, pattern ...bool) *array.Array {
	v := make([]bool, size(shape))
	for i := range v {
		v[i] = pattern[i%len(pattern)]
	}
	return array.FromSlice(v, shape...)
}

var _ = register(
	// casts and copies
	gradCase{op: "AsType", name: "same dtype", f: func(xs ...*array.Array) *array.Array {
		return ops.Mul(ops.AsType(xs[0], array.Float64), xs[0])
	}, args: []arg{{shape: []int{2, 3}}}},
	gradCase{op: "AsType", name: "float32 to float64 of a constant", f: func(xs ...*array.Array) *array.Array {
		return ops.Mul(xs[0], ops.AsType(xs[1], array.Float64))
	}, args: []arg{{shape: []int{2, 3}}, {fixed: ewFixedF32([]int{3}, -1, 1)}}},
	gradCase{op: "AsType", name: "to int32", zero: true, f: func(xs ...*array.Array) *array.Array {
		return ops.AsType(ops.MulScalar(xs[0], 4), array.Int32)
	}, args: []arg{{shape: []int{2, 3}}}},
	gradCase{op: "AsType", name: "through int32 and back", zero: true, f: func(xs ...*array.Array) *array.Array {
		return ops.AsType(ops.AsType(ops.MulScalar(xs[0], 4), array.Int32), array.Float64)
	}, args: []arg{{shape: []int{2, 3}}}},
	ewUnary("Copy", ops.Copy, -1, 1),
	gradCase{op: "Copy", name: "of a transpose", f: func(xs ...*array.Array) *array.Array {
		return ops.Mul(ops.Copy(ops.Transpose(xs[0])), xs[1])
	}, args: []arg{{shape: []int{3, 2}}, {shape: []int{2, 3}}}},
	ewFlat("StopGradient", ops.StopGradient, -1, 1),
	gradCase{op: "StopGradient", name: "of a product", zero: true, f: func(xs ...*array.Array) *array.Array {
		return ops.StopGradient(ops.Mul(xs[0], xs[1]))
	}, args: []arg{{shape: []int{2, 3}}, {shape: []int{3}}}},

	// the Like constructors: constants of their argument's shape
	ewFlat("ZerosLike", ops.ZerosLike, -1, 1),
	ewFlat("OnesLike", ops.OnesLike, -1, 1),
	ewFlat("FullLike", func(a *array.Array) *array.Array { return ops.FullLike(a, 2.5) }, -1, 1),
	gradCase{op: "FullLike", name: "times its argument", f: func(xs ...*array.Array) *array.Array {
		return ops.Mul(xs[0], ops.FullLike(xs[0], -1.5))
	}, args: []arg{{shape: []int{2, 3}}}},

	// scalar forms
	ewUnary("AddScalar", func(a *array.Array) *array.Array { return ops.AddScalar(a, 2.5) }, -1, 1),
	ewUnary("SubScalar", func(a *array.Array) *array.Array { return ops.SubScalar(a, -0.75) }, -1, 1),
	ewUnary("MulScalar", func(a *array.Array) *array.Array { return ops.MulScalar(a, -1.5) }, -1, 1),
	ewUnary("DivScalar", func(a *array.Array) *array.Array { return ops.DivScalar(a, 0.7) }, -1, 1),
	ewUnary("PowScalar", func(a *array.Array) *array.Array { return ops.PowScalar(a, 3) }, -2, 2),
	gradCase{op: "PowScalar", name: "fractional exponent", f: func(xs ...*array.Array) *array.Array {
		return ops.PowScalar(xs[0], -1.5)
	}, args: []arg{{shape: []int{2, 3}, lo: 0.5, hi: 2}}},
	gradCase{op: "PowScalar", name: "exponent 0", f: func(xs ...*array.Array) *array.Array {
		return ops.PowScalar(xs[0], 0)
	}, args: []arg{{shape: []int{2, 3}, lo: -1, hi: 1}}},
	gradCase{op: "PowScalar", name: "0-d", f: func(xs ...*array.Array) *array.Array {
		return ops.PowScalar(xs[0], 2.5)
	}, args: []arg{{shape: []int{}, lo: 0.5, hi: 2}}},
	ewUnary("MaximumScalar", func(a *array.Array) *array.Array { return ops.MaximumScalar(a, 0.1) }, -1, 1),
	ewUnary("MinimumScalar", func(a *array.Array) *array.Array { return ops.MinimumScalar(a, 0.1) }, -1, 1),

	// unary functions
	ewUnary("Neg", ops.Neg, -1, 1),
	ewUnary("Abs", ops.Abs, 0.2, 1),
	gradCase{op: "Abs", name: "negative", f: func(xs ...*array.Array) *array.Array { return ops.Abs(xs[0]) },
		args: []arg{{shape: []int{3, 2}, lo: -1, hi: -0.2}}},
	ewFlat("Sign", ops.Sign, -1, 1),
	ewUnary("Exp", ops.Exp, -1, 1),
	gradCase{op: "Exp", name: "0-d", f: func(xs ...*array.Array) *array.Array { return ops.Exp(xs[0]) },
		args: []arg{{shape: []int{}}}},
	gradCase{op: "Exp", name: "2x3x2", f: func(xs ...*array.Array) *array.Array { return ops.Exp(xs[0]) },
		args: []arg{{shape: []int{2, 3, 2}}}},
	ewUnary("Expm1", ops.Expm1, -1, 1),
	ewUnary("Log", ops.Log, 0.5, 2),
	ewUnary("Log1p", ops.Log1p, -0.5, 1),
	ewUnary("Log2", ops.Log2, 0.5, 2),
	ewUnary("Sqrt", ops.Sqrt, 0.5, 2),
	ewUnary("Rsqrt", ops.Rsqrt, 0.5, 2),
	ewUnary("Square", ops.Square, -2, 2),
	ewUnary("Reciprocal", ops.Reciprocal, 0.5, 2),
	gradCase{op: "Reciprocal", name: "negative", f: func(xs ...*array.Array) *array.Array {
		return ops.Reciprocal(xs[0])
	}, args: []arg{{shape: []int{4}, lo: -2, hi: -0.5}}},
	ewUnary("Sin", ops.Sin, -3, 3),
	ewUnary("Cos", ops.Cos, -3, 3),
	ewUnary("Tan", ops.Tan, -1.2, 1.2),
	ewUnary("ArcSin", ops.ArcSin, -0.9, 0.9),
	ewUnary("ArcCos", ops.ArcCos, -0.9, 0.9),
	ewUnary("ArcTan", ops.ArcTan, -3, 3),
	ewUnary("Sinh", ops.Sinh, -2, 2),
	ewUnary("Cosh", ops.Cosh, -2, 2),
	ewUnary("Tanh", ops.Tanh, -2, 2),
	ewUnary("Sigmoid", ops.Sigmoid, -4, 4),
	ewUnary("Erf", ops.Erf, -2, 2),
	ewUnary("ErfInv", ops.ErfInv, -0.9, 0.9),
	ewFlat("Floor", ops.Floor, -3, 3),
	ewFlat("Ceil", ops.Ceil, -3, 3),
	ewFlat("Round", ops.Round, -3, 3),
	ewFlat("LogicalNot", func(a *array.Array) *array.Array { return ops.LogicalNot(ops.Round(a)) }, -1, 1),
	ewFlat("IsNaN", func(a *array.Array) *array.Array { return ops.IsNaN(ops.Log(a)) }, -1, 1),
	ewFlat("IsInf", func(a *array.Array) *array.Array { return ops.IsInf(ops.Reciprocal(ops.Round(a))) }, -1, 1),
	gradCase{op: "Tanh", name: "of a sum of products", f: func(xs ...*array.Array) *array.Array {
		return ops.Tanh(ops.Add(ops.Mul(xs[0], xs[1]), ops.Sin(xs[0])))
	}, args: []arg{{shape: []int{2, 3}}, {shape: []int{3}}}},

	// Where: the condition is a constant or computed, the branches
	// broadcast
	gradCase{op: "Where", name: "fixed mask", f: func(xs ...*array.Array) *array.Array {
		return ops.Where(xs[0], xs[1], xs[2])
	}, args: []arg{{fixed: ewMask([]int{2, 3}, true, false, false, true, true)}, {shape: []int{2, 3}}, {shape: []int{2, 3}}}},
	gradCase{op: "Where", name: "broadcast branches", f: func(xs ...*array.Array) *array.Array {
		return ops.Where(xs[0], xs[1], xs[2])
	}, args: []arg{{fixed: ewMask([]int{3}, true, false)}, {shape: []int{2, 1}}, {shape: []int{}}}},
	gradCase{op: "Where", name: "broadcast mask", f: func(xs ...*array.Array) *array.Array {
		return ops.Where(xs[2], ops.Exp(xs[0]), ops.Square(xs[1]))
	}, args: []arg{{shape: []int{3}}, {shape: []int{2, 3}}, {fixed: ewMask([]int{2, 1}, false, true)}}},
	gradCase{op: "Where", name: "computed condition", f: func(xs ...*array.Array) *array.Array {
		return ops.Where(ops.Greater(xs[0], xs[1]), ops.Mul(xs[0], xs[1]), ops.Sin(xs[1]))
	}, args: []arg{{shape: []int{2, 3}}, {shape: []int{2, 3}}}},
	gradCase{op: "Where", name: "float32 branch promoted", f: func(xs ...*array.Array) *array.Array {
		return ops.Where(xs[1], xs[0], xs[2])
	}, args: []arg{{shape: []int{2, 3}}, {fixed: ewMask([]int{2, 3}, true, false)}, {fixed: ewFixedF32([]int{3}, -1, 1)}}},
)

var _ = register(slices.Concat(
	ewBinaryRows("Add", ops.Add, -1, 1, -1, 1),
	ewBinaryRows("Sub", ops.Sub, -1, 1, -1, 1),
	ewBinaryRows("Mul", ops.Mul, -1, 1, -1, 1),
	ewBinaryRows("Div", ops.Div, -1, 1, 0.5, 2),
	[]gradCase{ewBinary("Div", "negative divisor", ops.Div, []int{2, 3}, []int{3}, -1, 1, -2, -0.5)},
	ewBinaryRows("Pow", ops.Pow, 0.5, 2, -2, 2),
	ewBinaryRows("Maximum", ops.Maximum, -1, 1, -1, 1),
	ewBinaryRows("Minimum", ops.Minimum, -1, 1, -1, 1),
	ewBinaryRows("LogAddExp", ops.LogAddExp, -2, 2, -2, 2),
	[]gradCase{ewBinary("LogAddExp", "large", ops.LogAddExp, []int{2, 3}, []int{3}, 700, 710, 700, 710)},
	ewBinaryRows("ArcTan2", ops.ArcTan2, -1, 1, 0.5, 2),
	[]gradCase{ewBinary("ArcTan2", "second quadrant", ops.ArcTan2, []int{2, 3}, []int{2, 3}, 0.5, 2, -2, -0.5)},
	// a/b stays between 2 and 3 (or -3 and -2), away from the jumps
	[]gradCase{
		ewBinary("Remainder", "quotient 2", ops.Remainder, []int{2, 3}, []int{2, 3}, 2.2, 2.8, 1, 1.05),
		ewBinary("Remainder", "quotient -3, broadcast", ops.Remainder, []int{2, 3}, []int{3}, -2.8, -2.2, 1, 1.05),
		ewBinary("Remainder", "negative divisor", ops.Remainder, []int{2, 1}, []int{}, 2.2, 2.8, -1.05, -1),
	},
	ewFlatBinaryRows("FloorDivide", ops.FloorDivide),
	ewFlatBinaryRows("Equal", ops.Equal),
	ewFlatBinaryRows("NotEqual", ops.NotEqual),
	ewFlatBinaryRows("Less", ops.Less),
	ewFlatBinaryRows("LessEqual", ops.LessEqual),
	ewFlatBinaryRows("Greater", ops.Greater),
	ewFlatBinaryRows("GreaterEqual", ops.GreaterEqual),
	ewFlatBinaryRows("LogicalAnd", func(a, b *array.Array) *array.Array {
		return ops.LogicalAnd(ops.Round(a), ops.Round(b))
	}),
	ewFlatBinaryRows("LogicalOr", func(a, b *array.Array) *array.Array {
		return ops.LogicalOr(ops.Round(a), ops.Round(b))
	}),
)...)

// TestMaximumMinimumTies checks what finite differences cannot: where the
// operands are equal, Maximum and Minimum split the gradient evenly.
func TestMaximumMinimumTies(t *testing.T) {
	a := array.FromSlice([]float64{1, 2, 3, 4}, 4)
	b := array.FromSlice([]float64{1, 5, 3, -1}, 4)
	for _, tc := range []struct {
		name   string
		f      func(a, b *array.Array) *array.Array
		ga, gb []float64
	}{
		{"Maximum", ops.Maximum, []float64{0.5, 0, 0.5, 1}, []float64{0.5, 1, 0.5, 0}},
		{"Minimum", ops.Minimum, []float64{0.5, 1, 0.5, 0}, []float64{0.5, 0, 0.5, 1}},
	} {
		_, g := graph.VJP(func(in ...*array.Array) []*array.Array { return []*array.Array{tc.f(in[0], in[1])} },
			[]*array.Array{a, b}, []*array.Array{ops.OnesLike(a)})
		if got := values(t, g[0]); !slices.Equal(got, tc.ga) {
			t.Errorf("%s: gradient of a is %v, want %v", tc.name, got, tc.ga)
		}
		if got := values(t, g[1]); !slices.Equal(got, tc.gb) {
			t.Errorf("%s: gradient of b is %v, want %v", tc.name, got, tc.gb)
		}
		_, jvp := graph.JVP(func(in ...*array.Array) []*array.Array { return []*array.Array{tc.f(in[0], in[1])} },
			[]*array.Array{a, b}, []*array.Array{ops.OnesLike(a), ops.FullLike(b, 3)})
		want := make([]float64, 4)
		for i := range want {
			want[i] = tc.ga[i] + 3*tc.gb[i]
		}
		if got := values(t, jvp[0]); !slices.Equal(got, want) {
			t.Errorf("%s: JVP is %v, want %v", tc.name, got, want)
		}
	}
}

// TestCastGradientDType checks that a cast's cotangent is cast back: the
// gradient of a float32 argument used in float64 arithmetic is float32,
// and one of an integer argument is zero of its own dtype.
func TestCastGradientDType(t *testing.T) {
	x := array.FromSlice([]float32{1, -2, 0.5}, 3)
	n := array.FromSlice([]int32{1, 2, 3}, 3)
	w := array.FromSlice([]float64{0.25, 2, -1}, 3)
	_, g := graph.VJP(func(in ...*array.Array) []*array.Array {
		return []*array.Array{ops.Mul(ops.Mul(ops.AsType(in[0], array.Float64), w), in[1])}
	}, []*array.Array{x, n}, []*array.Array{ops.OnesLike(w)})
	if g[0].DType() != array.Float32 || g[1].DType() != array.Int32 {
		t.Fatalf("gradient dtypes %v and %v, want float32 and int32", g[0].DType(), g[1].DType())
	}
	if got := values(t, g[0]); !slices.Equal(got, []float64{0.25, 4, -3}) {
		t.Errorf("gradient of the float32 argument is %v, want [0.25 4 -3]", got)
	}
	if got := values(t, g[1]); !slices.Equal(got, []float64{0, 0, 0}) {
		t.Errorf("gradient of the int32 argument is %v, want zeros", got)
	}
	_, jvp := graph.JVP(func(in ...*array.Array) []*array.Array {
		return []*array.Array{ops.Mul(ops.AsType(in[0], array.Float64), w)}
	}, []*array.Array{x}, []*array.Array{ops.OnesLike(x)})
	if jvp[0].DType() != array.Float64 {
		t.Fatalf("JVP dtype %v, want float64", jvp[0].DType())
	}
	if got := values(t, jvp[0]); !slices.Equal(got, []float64{0.25, 2, -1}) {
		t.Errorf("JVP is %v, want [0.25 2 -1]", got)
	}
}

// TestStopGradientCuts checks that StopGradient makes its operand a
// constant of the derivative while its value flows on: the VJP of x *
// stop(x) with ones is x, where finite differences would give 2x.
func TestStopGradientCuts(t *testing.T) {
	x := array.FromSlice([]float64{1, -2, 3}, 3)
	f := func(in ...*array.Array) *array.Array { return ops.Mul(in[0], ops.StopGradient(in[0])) }
	_, g := graph.VJP(func(in ...*array.Array) []*array.Array { return []*array.Array{f(in...)} },
		[]*array.Array{x}, []*array.Array{ops.OnesLike(x)})
	if got := values(t, g[0]); !slices.Equal(got, []float64{1, -2, 3}) {
		t.Errorf("gradient %v, want [1 -2 3]", got)
	}
	_, jvp := graph.JVP(func(in ...*array.Array) []*array.Array { return []*array.Array{f(in...)} },
		[]*array.Array{x}, []*array.Array{ops.OnesLike(x)})
	if got := values(t, jvp[0]); !slices.Equal(got, []float64{1, -2, 3}) {
		t.Errorf("JVP %v, want [1 -2 3]", got)
	}
}

// TestElementwiseSecondOrder differentiates the elementwise rules
// themselves: the Hessian-vector product of sum(w * f(x...)), computed as
// the JVP of its gradient and as the VJP of its gradient (the Hessian is
// symmetric), against finite differences of the gradient.
func TestElementwiseSecondOrder(t *testing.T) {
	type fn = func(xs ...*array.Array) *array.Array
	un := func(f func(*array.Array) *array.Array) fn {
		return func(xs ...*array.Array) *array.Array { return f(xs[0]) }
	}
	bin := func(f func(a, b *array.Array) *array.Array) fn {
		return func(xs ...*array.Array) *array.Array { return f(xs[0], xs[1]) }
	}
	cases := []struct {
		name   string
		f      fn
		nargs  int
		lo, hi float64
	}{
		{"Tanh", un(ops.Tanh), 1, -2, 2},
		{"PowScalar 3", un(func(a *array.Array) *array.Array { return ops.PowScalar(a, 3) }), 1, -2, 2},
		{"Exp", un(ops.Exp), 1, -1, 1},
		{"Expm1", un(ops.Expm1), 1, -1, 1},
		{"Log", un(ops.Log), 1, 0.5, 2},
		{"Log1p", un(ops.Log1p), 1, 0.5, 2},
		{"Log2", un(ops.Log2), 1, 0.5, 2},
		{"Sqrt", un(ops.Sqrt), 1, 0.5, 2},
		{"Rsqrt", un(ops.Rsqrt), 1, 0.5, 2},
		{"Square", un(ops.Square), 1, -1, 1},
		{"Reciprocal", un(ops.Reciprocal), 1, 0.5, 2},
		{"Sin", un(ops.Sin), 1, -3, 3},
		{"Cos", un(ops.Cos), 1, -3, 3},
		{"Tan", un(ops.Tan), 1, -1, 1},
		{"ArcSin", un(ops.ArcSin), 1, -0.8, 0.8},
		{"ArcCos", un(ops.ArcCos), 1, -0.8, 0.8},
		{"ArcTan", un(ops.ArcTan), 1, -2, 2},
		{"Sinh", un(ops.Sinh), 1, -2, 2},
		{"Cosh", un(ops.Cosh), 1, -2, 2},
		{"Sigmoid", un(ops.Sigmoid), 1, -3, 3},
		{"Erf", un(ops.Erf), 1, -1.5, 1.5},
		{"ErfInv", un(ops.ErfInv), 1, -0.8, 0.8},
		{"Abs", un(ops.Abs), 1, 0.2, 1},
		{"Neg", un(ops.Neg), 1, -1, 1},
		{"Mul", bin(ops.Mul), 2, -1, 1},
		{"Div", bin(ops.Div), 2, 0.5, 2},
		{"Pow", bin(ops.Pow), 2, 0.5, 2},
		{"LogAddExp", bin(ops.LogAddExp), 2, -2, 2},
		{"ArcTan2", bin(ops.ArcTan2), 2, 0.5, 2},
		{"Maximum", bin(ops.Maximum), 2, -1, 1},
		{"Remainder", bin(func(a, b *array.Array) *array.Array {
			return ops.Remainder(ops.AddScalar(ops.Square(a), 2.2), ops.AddScalar(ops.MulScalar(b, 0.01), 1))
		}), 2, -0.5, 0.5},
		{"Where", bin(func(a, b *array.Array) *array.Array {
			return ops.Where(ops.Greater(a, b), ops.Mul(a, ops.Square(b)), ops.Exp(ops.Mul(a, b)))
		}), 2, -1, 1},
		{"AsType and Copy", un(func(a *array.Array) *array.Array {
			return ops.Copy(ops.Mul(ops.Square(a), ops.AsType(ewFixedF32([]int{3}, -1, 1), array.Float64)))
		}), 1, -1, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newEwRand(tc.name)
			shape := []int{2, 3}
			mk := func() *array.Array { return array.FromSlice(randValues(r, 6, tc.lo, tc.hi), shape...) }
			xs := make([]*array.Array, tc.nargs)
			vs := make([]*array.Array, tc.nargs)
			for i := range xs {
				xs[i], vs[i] = mk(), array.FromSlice(randValues(r, 6, 0, 0), shape...)
			}
			w := array.FromSlice(randValues(r, 6, 0, 0), shape...)
			grad := func(in ...*array.Array) []*array.Array {
				_, g := graph.VJP(func(in ...*array.Array) []*array.Array { return []*array.Array{tc.f(in...)} },
					in, []*array.Array{w})
				return g
			}
			// finite differences of the gradient along vs
			shifted := func(s float64) []*array.Array {
				out := make([]*array.Array, len(xs))
				for i := range xs {
					out[i] = ops.Add(xs[i], ops.MulScalar(vs[i], s))
				}
				return out
			}
			hi, lo := grad(shifted(fdStep)...), grad(shifted(-fdStep)...)
			_, byJVP := graph.JVP(grad, xs, vs)
			_, byVJP := graph.VJP(grad, xs, vs)
			for i := range xs {
				h, l := values(t, hi[i]), values(t, lo[i])
				want := make([]float64, len(h))
				for j := range want {
					want[j] = (h[j] - l[j]) / (2 * fdStep)
				}
				compare(t, fmt.Sprintf("JVP of the gradient, argument %d", i), values(t, byJVP[i]), want)
				compare(t, fmt.Sprintf("VJP of the gradient, argument %d", i), values(t, byVJP[i]), want)
			}
		})
	}
}

func newEwRand(name string) *rand.Rand { return rand.New(rand.NewPCG(seedOf(name), 5)) }

// Rows of the elementwise operations added with numpy's and MLX's wider
// op set: inverse hyperbolics, Log10, Hypot, Clip, the scalar forms of the
// comparisons and the rest, and the piecewise-constant predicates and
// integer operations.
var _ = register(slices.Concat(
	[]gradCase{
		ewUnary("Log10", ops.Log10, 0.5, 2),
		ewUnary("ArcSinh", ops.ArcSinh, -2, 2),
		ewUnary("ArcCosh", ops.ArcCosh, 1.2, 3),
		ewUnary("ArcTanh", ops.ArcTanh, -0.8, 0.8),
		ewUnary("Degrees", ops.Degrees, -3, 3),
		ewUnary("Radians", ops.Radians, -90, 90),
		ewFlat("Trunc", ops.Trunc, -3, 3),
		ewFlat("RoundDecimals", func(a *array.Array) *array.Array { return ops.RoundDecimals(ops.MulScalar(a, 10), 1) }, -3, 3),
		ewFlat("IsFinite", func(a *array.Array) *array.Array { return ops.IsFinite(ops.Log(a)) }, -1, 1),
		ewFlat("IsPosInf", func(a *array.Array) *array.Array { return ops.IsPosInf(ops.Reciprocal(ops.Round(a))) }, -1, 1),
		ewFlat("IsNegInf", func(a *array.Array) *array.Array { return ops.IsNegInf(ops.Reciprocal(ops.Round(a))) }, -1, 1),
		ewFlat("Invert", func(a *array.Array) *array.Array { return ops.Invert(ops.AsType(ops.MulScalar(a, 4), array.Int32)) }, -1, 1),
		// NaN and the infinities are constants; elsewhere NanToNum is the
		// identity
		ewUnary("NanToNum", func(a *array.Array) *array.Array { return ops.NanToNum(a, 0, math.Inf(1), math.Inf(-1)) }, -2, 2),
		{op: "NanToNum", name: "with NaN and Inf", f: func(xs ...*array.Array) *array.Array {
			return ops.Mul(xs[0], ops.NanToNum(ops.Div(xs[1], xs[1]), 7, 1, -1))
		}, args: []arg{{shape: []int{2, 3}}, {fixed: array.FromSlice([]float64{0, 1, -2, 0, 3, 0}, 2, 3)}}},
		// the complex parts of real arguments: Real and Conj are the
		// identity, Imag zero, Angle 0 or π (see TestComplexPartGradients)
		ewUnary("Real", ops.Real, -2, 2),
		ewUnary("Conj", ops.Conj, -2, 2),
		ewFlat("Imag", ops.Imag, -2, 2),
		ewFlat("Angle", ops.Angle, -2, 2),
		ewUnary("ClipScalar", func(a *array.Array) *array.Array { return ops.ClipScalar(a, -0.5, 0.6) }, -1, 1),
		ewUnary("FloorDivideScalar", func(a *array.Array) *array.Array { return ops.FloorDivideScalar(a, 0.7) }, -1, 1),
		ewUnary("RemainderScalar", func(a *array.Array) *array.Array { return ops.RemainderScalar(a, 1.05) }, 2.2, 2.8),
		ewUnary("LogAddExpScalar", func(a *array.Array) *array.Array { return ops.LogAddExpScalar(a, 0.5) }, -2, 2),
		ewUnary("ArcTan2Scalar", func(a *array.Array) *array.Array { return ops.ArcTan2Scalar(a, -0.75) }, -2, 2),
		ewUnary("HypotScalar", func(a *array.Array) *array.Array { return ops.HypotScalar(a, -0.75) }, -2, 2),
		ewFlat("BitwiseAndScalar", func(a *array.Array) *array.Array { return ops.BitwiseAndScalar(ewInt(a), 6) }, -1, 1),
		ewFlat("BitwiseOrScalar", func(a *array.Array) *array.Array { return ops.BitwiseOrScalar(ewInt(a), 6) }, -1, 1),
		ewFlat("BitwiseXorScalar", func(a *array.Array) *array.Array { return ops.BitwiseXorScalar(ewInt(a), 6) }, -1, 1),
		ewFlat("LeftShiftScalar", func(a *array.Array) *array.Array { return ops.LeftShiftScalar(ewInt(a), 2) }, -1, 1),
		ewFlat("RightShiftScalar", func(a *array.Array) *array.Array { return ops.RightShiftScalar(ewInt(a), 1) }, -1, 1),
		ewFlat("EqualScalar", func(a *array.Array) *array.Array { return ops.EqualScalar(ops.Round(a), 1) }, -2, 2),
		ewFlat("NotEqualScalar", func(a *array.Array) *array.Array { return ops.NotEqualScalar(ops.Round(a), 1) }, -2, 2),
		ewFlat("LessScalar", func(a *array.Array) *array.Array { return ops.LessScalar(a, 0.25) }, -2, 2),
		ewFlat("LessEqualScalar", func(a *array.Array) *array.Array { return ops.LessEqualScalar(a, 0.25) }, -2, 2),
		ewFlat("GreaterScalar", func(a *array.Array) *array.Array { return ops.GreaterScalar(a, 0.25) }, -2, 2),
		ewFlat("GreaterEqualScalar", func(a *array.Array) *array.Array { return ops.GreaterEqualScalar(a, 0.25) }, -2, 2),
		{op: "Clip", name: "array bounds", f: func(xs ...*array.Array) *array.Array {
			return ops.Clip(xs[0], xs[1], xs[2])
		}, args: []arg{{shape: []int{2, 3}, lo: -2, hi: 2}, {shape: []int{3}, lo: -1, hi: -0.2}, {shape: []int{2, 1}, lo: 0.2, hi: 1}}},
		{op: "Clip", name: "upper bound only", f: func(xs ...*array.Array) *array.Array {
			return ops.Clip(xs[0], nil, xs[1])
		}, args: []arg{{shape: []int{2, 3}, lo: -2, hi: 2}, {shape: []int{}, lo: -0.5, hi: 0.5}}},
		{op: "DivMod", name: "quotient and remainder", f: func(xs ...*array.Array) *array.Array {
			q, r := ops.DivMod(xs[0], xs[1])
			return ops.Add(q, ops.MulScalar(r, 3))
		}, args: []arg{{shape: []int{2, 3}, lo: 2.2, hi: 2.8}, {shape: []int{3}, lo: 1, hi: 1.05}}},
	},
	ewBinaryRows("Hypot", ops.Hypot, 0.5, 2, -2, -0.5),
	ewFlatBinaryRows("LogicalXor", func(a, b *array.Array) *array.Array { return ops.LogicalXor(ops.Round(a), ops.Round(b)) }),
	ewFlatBinaryRows("IsClose", func(a, b *array.Array) *array.Array {
		return ops.IsClose(ops.Round(a), ops.Round(b), 1e-5, 1e-8, false)
	}),
	ewFlatBinaryRows("AllClose", func(a, b *array.Array) *array.Array {
		return ops.AllClose(ops.Round(a), ops.Round(b), 1e-5, 1e-8, false)
	}),
	ewFlatBinaryRows("ArrayEqual", func(a, b *array.Array) *array.Array {
		return ops.ArrayEqual(ops.Round(a), ops.Round(b), true)
	}),
	ewFlatBinaryRows("BitwiseAnd", ewIntBinary(ops.BitwiseAnd)),
	ewFlatBinaryRows("BitwiseOr", ewIntBinary(ops.BitwiseOr)),
	ewFlatBinaryRows("BitwiseXor", ewIntBinary(ops.BitwiseXor)),
	ewFlatBinaryRows("LeftShift", ewIntBinary(ops.LeftShift)),
	ewFlatBinaryRows("RightShift", ewIntBinary(ops.RightShift)),
)...)

// ewInt scales a float argument and casts it to int32, for the
// integer-only ops, whose derivative is zero everywhere.
func ewInt(a *array.Array) *array.Array { return ops.AsType(ops.MulScalar(a, 8), array.Int32) }

// ewIntBinary applies an integer-only binary op to its float arguments
// scaled and cast to int32: its derivative is zero everywhere.
func ewIntBinary(f func(a, b *array.Array) *array.Array) func(a, b *array.Array) *array.Array {
	return func(a, b *array.Array) *array.Array {
		return f(ops.AsType(ops.MulScalar(a, 8), array.Int32), ops.AsType(ops.AddScalar(b, 2), array.Int32))
	}
}

// TestComplexPartGradients checks the derivatives of Real, Imag, Conj and
// Angle at complex64 arguments, which the finite-difference table (real
// float64 arguments) cannot reach, against hand-derived values in the
// convention of complex multiplication's rule (JAX's: the VJP is the
// transpose of the JVP under the pairing Re(Σ t·c)). For z = x+iy and a
// real result f(x, y), the VJP of the cotangent 1 is ∂f/∂x - i·∂f/∂y:
// 1 for Real, -i for Imag, (-y - i·x)/|z|² for Angle; Conj's VJP
// conjugates the cotangent. Each JVP is checked against its VJP through
// the pairing, on tangents 1 and i.
func TestComplexPartGradients(t *testing.T) {
	zs := []complex64{3 + 4i, -1 + 0.5i, -2 - 1i, 0.25 - 3i}
	z := array.FromSlice(zs)
	type fn = func(*array.Array) *array.Array
	tests := []struct {
		name string
		f    fn
		vjp  func(z complex128) complex128 // of the cotangent 1
	}{
		{"Abs", ops.Abs, func(z complex128) complex128 { return cmplx.Conj(z) / complex(cmplx.Abs(z), 0) }},
		{"Real", ops.Real, func(complex128) complex128 { return 1 }},
		{"Imag", ops.Imag, func(complex128) complex128 { return -1i }},
		{"Angle", ops.Angle, func(z complex128) complex128 {
			x, y := real(z), imag(z)
			r2 := x*x + y*y
			return complex(-y/r2, -x/r2)
		}},
	}
	for _, tt := range tests {
		f := func(in ...*array.Array) []*array.Array { return []*array.Array{tt.f(in[0])} }
		ones := ops.OnesLike(tt.f(z))
		_, vjps := graph.VJP(f, []*array.Array{z}, []*array.Array{ones})
		got := complexValues(t, vjps[0])
		for i, zi := range zs {
			want := tt.vjp(complex128(zi))
			if cmplxDiff(got[i], want) > 1e-6 {
				t.Errorf("%s: VJP at %v = %v, want %v", tt.name, zi, got[i], want)
			}
		}
		for _, dir := range []complex64{1, 1i} {
			tan := ops.Mul(ops.OnesLike(z), array.Scalar(dir))
			_, jvps := graph.JVP(f, []*array.Array{z}, []*array.Array{tan})
			jv, err := array.ToSlice[float32](jvps[0])
			if err != nil {
				t.Fatal(err)
			}
			for i := range zs {
				want := real(got[i] * complex128(dir))
				if math.Abs(float64(jv[i])-want) > 1e-6 {
					t.Errorf("%s: JVP at %v along %v = %v, want %v", tt.name, zs[i], dir, jv[i], want)
				}
			}
		}
	}
	conj := func(in ...*array.Array) []*array.Array { return []*array.Array{ops.Conj(in[0])} }
	ct := array.FromSlice([]complex64{1 + 2i, -3i, 0.5, -1 - 1i})
	_, vjps := graph.VJP(conj, []*array.Array{z}, []*array.Array{ct})
	_, jvps := graph.JVP(conj, []*array.Array{z}, []*array.Array{ct})
	for name, g := range map[string]*array.Array{"VJP": vjps[0], "JVP": jvps[0]} {
		got := complexValues(t, g)
		for i, want := range []complex128{1 - 2i, 3i, 0.5, -1 + 1i} {
			if got[i] != want {
				t.Errorf("Conj: %s element %d = %v, want %v", name, i, got[i], want)
			}
		}
	}
}

func complexValues(t *testing.T, a *array.Array) []complex128 {
	t.Helper()
	v, err := array.ToSlice[complex64](a)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]complex128, len(v))
	for i, c := range v {
		out[i] = complex128(c)
	}
	return out
}

func cmplxDiff(a, b complex128) float64 {
	return math.Hypot(real(a)-real(b), imag(a)-imag(b)) / math.Max(1, math.Hypot(real(b), imag(b)))
}
