// Package randgraph builds random elementwise graphs from every fusible
// operation, for property tests: compile checks that compiled and
// uncompiled graphs agree, and the Metal backend that the fused kernels
// generated from their traces agree with the CPU.
package randgraph

import (
	"math/rand/v2"
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// Options narrow the graphs New builds.
type Options struct {
	// Mid is the dtype of the AsType round trips (to Mid and back);
	// float32 when zero.
	Mid array.DType
	// Smooth leaves out the operations whose result jumps (rounding,
	// signs, comparisons, integer division), so that two backends whose
	// transcendental functions differ in the last bits agree within a
	// tolerance.
	Smooth bool
}

// New builds a random elementwise graph of depth operations over inputs
// of shapes that broadcast together, from every fusible operation: each
// unary and binary function (with arguments mapped into its domain),
// Where and AsType.
func New(r *rand.Rand, depth int, opt Options) func(in ...*array.Array) []*array.Array {
	if opt.Mid == 0 {
		opt.Mid = array.Float32
	}
	bounded := func(x *array.Array) *array.Array { return ops.MinimumScalar(ops.MaximumScalar(x, -3), 3) }
	positive := func(x *array.Array) *array.Array { return ops.AddScalar(ops.Abs(bounded(x)), 0.5) }
	unit := func(x *array.Array) *array.Array { return ops.MulScalar(ops.Tanh(x), 0.9) }
	unary := []func(*array.Array) *array.Array{
		func(x *array.Array) *array.Array { return ops.Neg(x) },
		func(x *array.Array) *array.Array { return ops.Abs(x) },
		func(x *array.Array) *array.Array { return ops.Sign(x) },
		func(x *array.Array) *array.Array { return ops.Exp(bounded(x)) },
		func(x *array.Array) *array.Array { return ops.Expm1(bounded(x)) },
		func(x *array.Array) *array.Array { return ops.Log(positive(x)) },
		func(x *array.Array) *array.Array { return ops.Log1p(positive(x)) },
		func(x *array.Array) *array.Array { return ops.Log2(positive(x)) },
		func(x *array.Array) *array.Array { return ops.Sqrt(positive(x)) },
		func(x *array.Array) *array.Array { return ops.Rsqrt(positive(x)) },
		func(x *array.Array) *array.Array { return ops.Square(bounded(x)) },
		func(x *array.Array) *array.Array { return ops.Reciprocal(positive(x)) },
		func(x *array.Array) *array.Array { return ops.Sin(x) },
		func(x *array.Array) *array.Array { return ops.Cos(x) },
		func(x *array.Array) *array.Array { return ops.Tan(unit(x)) },
		func(x *array.Array) *array.Array { return ops.ArcSin(unit(x)) },
		func(x *array.Array) *array.Array { return ops.ArcCos(unit(x)) },
		func(x *array.Array) *array.Array { return ops.ArcTan(x) },
		func(x *array.Array) *array.Array { return ops.Sinh(bounded(x)) },
		func(x *array.Array) *array.Array { return ops.Cosh(bounded(x)) },
		func(x *array.Array) *array.Array { return ops.Tanh(x) },
		func(x *array.Array) *array.Array { return ops.Sigmoid(x) },
		func(x *array.Array) *array.Array { return ops.Erf(x) },
		func(x *array.Array) *array.Array { return ops.ErfInv(unit(x)) },
		func(x *array.Array) *array.Array { return ops.Floor(x) },
		func(x *array.Array) *array.Array { return ops.Ceil(x) },
		func(x *array.Array) *array.Array { return ops.Round(x) },
		func(x *array.Array) *array.Array { return ops.Where(ops.IsNaN(x), ops.ZerosLike(x), x) },
		func(x *array.Array) *array.Array { return ops.Where(ops.IsInf(x), ops.ZerosLike(x), x) },
		func(x *array.Array) *array.Array {
			return ops.AsType(ops.LogicalNot(ops.Greater(x, ops.ZerosLike(x))), array.Float64)
		},
	}
	binary := []func(a, b *array.Array) *array.Array{
		ops.Add, ops.Sub, ops.Mul, ops.Maximum, ops.Minimum, ops.ArcTan2, ops.LogAddExp,
		func(a, b *array.Array) *array.Array { return ops.Div(a, positive(b)) },
		func(a, b *array.Array) *array.Array { return ops.FloorDivide(a, positive(b)) },
		func(a, b *array.Array) *array.Array { return ops.Remainder(a, positive(b)) },
		func(a, b *array.Array) *array.Array { return ops.Pow(positive(a), bounded(b)) },
		func(a, b *array.Array) *array.Array {
			c := ops.LogicalOr(ops.LogicalAnd(ops.Less(a, b), ops.NotEqual(a, b)), ops.Equal(a, b))
			return ops.Where(ops.LessEqual(a, b), ops.AsType(c, array.Float64), ops.AsType(ops.GreaterEqual(a, b), array.Float64))
		},
	}
	if opt.Smooth {
		unary = []func(*array.Array) *array.Array{unary[0], unary[3], unary[5], unary[8], unary[12], unary[13], unary[17], unary[20], unary[21], unary[22]}
		binary = binary[:7]
	}
	plan := make([]int, depth)
	args := make([][3]int, depth)
	ui := make([]int, depth)
	bi := make([]int, depth)
	for i := range plan {
		plan[i] = r.IntN(5)
		args[i] = [3]int{r.Int(), r.Int(), r.Int()}
		ui[i] = r.IntN(len(unary))
		bi[i] = r.IntN(len(binary))
	}
	return func(in ...*array.Array) []*array.Array {
		vals := slices.Clone(in)
		for i, p := range plan {
			a, b, c := vals[args[i][0]%len(vals)], vals[args[i][1]%len(vals)], vals[args[i][2]%len(vals)]
			var v *array.Array
			switch p {
			case 0, 1:
				v = unary[ui[i]](a)
			case 2:
				v = binary[bi[i]](a, b)
			case 3:
				if opt.Smooth {
					v = ops.Mul(ops.Add(a, b), c)
				} else {
					v = ops.Where(ops.Greater(a, b), c, ops.MulScalar(a, 0.5))
				}
			default:
				v = ops.AsType(ops.AsType(a, opt.Mid), a.DType())
			}
			vals = append(vals, v)
		}
		return []*array.Array{vals[len(vals)-1], vals[len(vals)/2+len(in)/2]}
	}
}

// Input returns a float64 array of shape s with values in [-2, 2],
// strided (a transposed copy viewed back) when strided is set.
func Input(r *rand.Rand, s []int, strided bool) *array.Array {
	n := 1
	for _, d := range s {
		n *= d
	}
	v := make([]float64, n)
	for i := range v {
		v[i] = 4*r.Float64() - 2
	}
	a := array.FromSlice(v, s...)
	if strided && len(s) >= 2 {
		a = ops.Transpose(ops.Copy(ops.Transpose(a)))
	}
	return a
}
