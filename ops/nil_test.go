package ops_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// TestNilArrays passes a nil *array.Array in each array argument of every
// operation: each must panic with an *array.Error naming the operation,
// never a nil dereference.
func TestNilArrays(t *testing.T) {
	x := array.FromSlice([]float32{1, 2, 3, 4}, 2, 2)
	idx := array.FromSlice([]int32{0, 1, 0, 1}, 2, 2)
	var n *array.Array
	unary := map[string]func(*array.Array) *array.Array{
		"Neg": ops.Neg, "Abs": ops.Abs, "Sign": ops.Sign, "Exp": ops.Exp, "Expm1": ops.Expm1, "Log": ops.Log,
		"Log1p": ops.Log1p, "Log2": ops.Log2, "Sqrt": ops.Sqrt, "Rsqrt": ops.Rsqrt, "Square": ops.Square,
		"Reciprocal": ops.Reciprocal, "Sin": ops.Sin, "Cos": ops.Cos, "Tan": ops.Tan, "ArcSin": ops.ArcSin,
		"ArcCos": ops.ArcCos, "ArcTan": ops.ArcTan, "Sinh": ops.Sinh, "Cosh": ops.Cosh, "Tanh": ops.Tanh,
		"Sigmoid": ops.Sigmoid, "Erf": ops.Erf, "ErfInv": ops.ErfInv, "Floor": ops.Floor, "Ceil": ops.Ceil,
		"Round": ops.Round, "LogicalNot": ops.LogicalNot, "IsNaN": ops.IsNaN, "IsInf": ops.IsInf,
		"ZerosLike": ops.ZerosLike, "OnesLike": ops.OnesLike, "Copy": ops.Copy, "StopGradient": ops.StopGradient,
		"Flatten": ops.Flatten, "Log10": ops.Log10, "ArcSinh": ops.ArcSinh, "ArcCosh": ops.ArcCosh,
		"ArcTanh": ops.ArcTanh, "Trunc": ops.Trunc, "Invert": ops.Invert, "IsFinite": ops.IsFinite,
		"IsPosInf": ops.IsPosInf, "IsNegInf": ops.IsNegInf, "Degrees": ops.Degrees, "Radians": ops.Radians,
		"Real": ops.Real, "Imag": ops.Imag, "Conj": ops.Conj, "Angle": ops.Angle,
	}
	binary := map[string]func(a, b *array.Array) *array.Array{
		"Add": ops.Add, "Sub": ops.Sub, "Mul": ops.Mul, "Div": ops.Div, "FloorDivide": ops.FloorDivide,
		"Remainder": ops.Remainder, "Pow": ops.Pow, "Maximum": ops.Maximum, "Minimum": ops.Minimum,
		"Equal": ops.Equal, "NotEqual": ops.NotEqual, "Less": ops.Less, "LessEqual": ops.LessEqual,
		"Greater": ops.Greater, "GreaterEqual": ops.GreaterEqual, "LogicalAnd": ops.LogicalAnd,
		"LogicalOr": ops.LogicalOr, "LogAddExp": ops.LogAddExp, "ArcTan2": ops.ArcTan2, "MatMul": ops.MatMul,
		"Outer": ops.Outer,
	}
	reductions := map[string]ops.ReduceFunc{
		"Sum": ops.Sum, "Mean": ops.Mean, "Prod": ops.Prod, "Max": ops.Max, "Min": ops.Min, "Var": ops.Var,
		"Std": ops.Std, "LogSumExp": ops.LogSumExp, "All": ops.All, "Any": ops.Any, "Softmax": ops.Softmax,
		"LogSoftmax": ops.LogSoftmax,
	}
	type call struct {
		op string
		f  func()
	}
	var calls []call
	for name, f := range unary {
		calls = append(calls, call{name, func() { f(n) }})
	}
	for name, f := range binary {
		calls = append(calls, call{name, func() { f(n, x) }}, call{name, func() { f(x, n) }})
	}
	for name, f := range reductions {
		calls = append(calls, call{name, func() { f(n) }}, call{name, func() { f(n, 0) }})
	}
	scan := map[string]func(*array.Array, int, bool, bool) *array.Array{
		"CumSum": ops.CumSum, "CumProd": ops.CumProd, "CumMax": ops.CumMax, "CumMin": ops.CumMin,
		"LogCumSumExp": ops.LogCumSumExp,
	}
	for name, f := range scan {
		calls = append(calls, call{name, func() { f(n, 0, false, true) }})
	}
	scalar := map[string]func(*array.Array, float64) *array.Array{
		"AddScalar": ops.AddScalar, "SubScalar": ops.SubScalar, "MulScalar": ops.MulScalar,
		"DivScalar": ops.DivScalar, "PowScalar": ops.PowScalar, "MaximumScalar": ops.MaximumScalar,
		"MinimumScalar": ops.MinimumScalar, "FullLike": ops.FullLike,
	}
	for name, f := range scalar {
		calls = append(calls, call{name, func() { f(n, 1) }})
	}
	calls = append(calls,
		call{"AsType", func() { ops.AsType(n, array.Float64) }},
		call{"HadamardTransform", func() { ops.HadamardTransform(n) }},
		call{"RollAxes", func() { ops.RollAxes(n, []int{1}, []int{0}) }},
		call{"MaxPool1D", func() { ops.MaxPool1D(n, 2, 2, 0) }},
		call{"AvgPool2D", func() { ops.AvgPool2D(n, [2]int{2, 2}, [2]int{2, 2}, [2]int{}) }},
		call{"MaxPool3D", func() { ops.MaxPool3D(n, [3]int{2, 2, 2}, [3]int{1, 1, 1}, [3]int{}) }},
		call{"Conv2D", func() { ops.Conv2D(n, x, [2]int{1, 1}, [2]int{}, [2]int{1, 1}, 1) }},
		call{"Conv2D", func() { ops.Conv2D(x, n, [2]int{1, 1}, [2]int{}, [2]int{1, 1}, 1) }},
		call{"ConvTranspose1D", func() { ops.ConvTranspose1D(n, x, 1, 0, 1, 0, 1) }},
		call{"ConvGeneral", func() { ops.ConvGeneral(x, n, nil, nil, nil, nil, nil, 1, false) }},
		call{"Partition", func() { ops.Partition(n, 0, 0) }},
		call{"ArgPartition", func() { ops.ArgPartition(n, 0, 0) }},
		call{"SearchSorted", func() { ops.SearchSorted(n, x, "left") }},
		call{"SearchSorted", func() { ops.SearchSorted(x, n, "left") }},
		call{"CountNonzero", func() { ops.CountNonzero(n) }},
		call{"Diff", func() { ops.Diff(n, 1, 0) }},
		call{"Median", func() { ops.Median(n) }},
		call{"Quantile", func() { ops.Quantile(n, 0.5) }},
		call{"Where", func() { ops.Where(n, x, x) }},
		call{"Where", func() { ops.Where(ops.Greater(x, x), n, x) }},
		call{"Where", func() { ops.Where(ops.Greater(x, x), x, n) }},
		call{"VarDDOF", func() { ops.VarDDOF(n, 1) }},
		call{"StdDDOF", func() { ops.StdDDOF(n, 1) }},
		call{"KeepDims", func() { ops.KeepDims(ops.Sum, n, 0) }},
		call{"ArgMax", func() { ops.ArgMax(n, 0) }},
		call{"ArgMin", func() { ops.ArgMin(n, 0) }},
		call{"Reshape", func() { ops.Reshape(n, 4) }},
		call{"Transpose", func() { ops.Transpose(n) }},
		call{"SwapAxes", func() { ops.SwapAxes(n, 0, 1) }},
		call{"MoveAxis", func() { ops.MoveAxis(n, 0, 1) }},
		call{"BroadcastTo", func() { ops.BroadcastTo(n, 2, 2) }},
		call{"ExpandDims", func() { ops.ExpandDims(n, 0) }},
		call{"Squeeze", func() { ops.Squeeze(n) }},
		call{"Slice", func() { ops.Slice(n, ops.R(0, 1)) }},
		call{"SliceAxis", func() { ops.SliceAxis(n, 0, ops.R(0, 1)) }},
		call{"Concatenate", func() { ops.Concatenate([]*array.Array{x, n}, 0) }},
		call{"Stack", func() { ops.Stack([]*array.Array{n, x}, 0) }},
		call{"Split", func() { ops.Split(n, 2, 0) }},
		call{"SplitAt", func() { ops.SplitAt(n, []int{1}, 0) }},
		call{"Tile", func() { ops.Tile(n, 2) }},
		call{"Repeat", func() { ops.Repeat(n, 2, 0) }},
		call{"Pad", func() { ops.Pad(n, [][2]int{{1, 1}, {0, 0}}, 0) }},
		call{"Take", func() { ops.Take(n, idx, 0) }},
		call{"Take", func() { ops.Take(x, n, 0) }},
		call{"TakeAlongAxis", func() { ops.TakeAlongAxis(n, idx, 0) }},
		call{"TakeAlongAxis", func() { ops.TakeAlongAxis(x, n, 0) }},
		call{"PutAlongAxis", func() { ops.PutAlongAxis(n, idx, x, 0) }},
		call{"PutAlongAxis", func() { ops.PutAlongAxis(x, n, x, 0) }},
		call{"PutAlongAxis", func() { ops.PutAlongAxis(x, idx, n, 0) }},
		call{"Sort", func() { ops.Sort(n, 0) }},
		call{"ArgSort", func() { ops.ArgSort(n, 0) }},
		call{"TopK", func() { ops.TopK(n, 1, 0) }},
		call{"Tensordot", func() { ops.Tensordot(n, x, []int{1}, []int{0}) }},
		call{"Tensordot", func() { ops.Tensordot(x, n, []int{1}, []int{0}) }},
		call{"LinalgInv", func() { ops.LinalgInv(n) }},
		call{"LinalgSolve", func() { ops.LinalgSolve(n, x) }},
		call{"LinalgSolve", func() { ops.LinalgSolve(x, n) }},
		call{"LinalgSolveTriangular", func() { ops.LinalgSolveTriangular(n, x, true, false) }},
		call{"LinalgSolveTriangular", func() { ops.LinalgSolveTriangular(x, n, true, false) }},
		call{"LinalgLUFactor", func() { ops.LinalgLUFactor(n) }},
		call{"LinalgLUSolve", func() { ops.LinalgLUSolve(n, ops.Zeros([]int{2}, array.Int32), x) }},
		call{"LinalgLUSolve", func() { ops.LinalgLUSolve(x, n, x) }},
		call{"LinalgLUSolve", func() { ops.LinalgLUSolve(x, ops.Zeros([]int{2}, array.Int32), n) }},
		call{"LinalgCholesky", func() { ops.LinalgCholesky(n, false) }},
		call{"LinalgCholeskyInv", func() { ops.LinalgCholeskyInv(n, true) }},
		call{"LinalgQR", func() { ops.LinalgQR(n, false) }},
		call{"LinalgSVD", func() { ops.LinalgSVD(n, true) }},
		call{"LinalgSVDVals", func() { ops.LinalgSVDVals(n) }},
		call{"LinalgEigh", func() { ops.LinalgEigh(n, false) }},
		call{"LinalgEigvalsh", func() { ops.LinalgEigvalsh(n, true) }},
		call{"LinalgEig", func() { ops.LinalgEig(n) }},
		call{"LinalgEigvals", func() { ops.LinalgEigvals(n) }},
		call{"FFT", func() { ops.FFT(n, []int{0}, false, 1) }},
		call{"RFFT", func() { ops.RFFT(n, []int{0}, 1) }},
		call{"IRFFT", func() { ops.IRFFT(n, []int{0}, 2, 1) }},
	)
	for _, c := range calls {
		err := tryAll(c.f)
		var e *array.Error
		if !errors.As(err, &e) {
			t.Errorf("%s with a nil array: got %v, want an *array.Error", c.op, err)
			continue
		}
		if !strings.Contains(e.Error(), "ops."+c.op) {
			t.Errorf("%s with a nil array: error %q does not name ops.%s", c.op, e, c.op)
		}
	}
}

// tryAll is array.Try that also turns other panics into errors, so one
// bad operation does not hide the rest.
func tryAll(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return array.Try(f)
}
