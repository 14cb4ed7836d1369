package ops_test

import (
	"errors"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/opset"
	"github.com/fathom-go/fathom/internal/refcase"
	"github.com/fathom-go/fathom/ops"
)

var unaryFuncs = map[string]func(*array.Array) *array.Array{
	"Neg": ops.Neg, "Abs": ops.Abs, "Sign": ops.Sign, "Exp": ops.Exp, "Expm1": ops.Expm1, "Log": ops.Log,
	"Log1p": ops.Log1p, "Log2": ops.Log2, "Sqrt": ops.Sqrt, "Rsqrt": ops.Rsqrt, "Square": ops.Square,
	"Reciprocal": ops.Reciprocal, "Sin": ops.Sin, "Cos": ops.Cos, "Tan": ops.Tan, "ArcSin": ops.ArcSin,
	"ArcCos": ops.ArcCos, "ArcTan": ops.ArcTan, "Sinh": ops.Sinh, "Cosh": ops.Cosh, "Tanh": ops.Tanh,
	"Sigmoid": ops.Sigmoid, "Erf": ops.Erf, "ErfInv": ops.ErfInv, "Floor": ops.Floor, "Ceil": ops.Ceil,
	"Round": ops.Round, "LogicalNot": ops.LogicalNot, "IsNaN": ops.IsNaN, "IsInf": ops.IsInf,
	"Log10": ops.Log10, "ArcSinh": ops.ArcSinh, "ArcCosh": ops.ArcCosh, "ArcTanh": ops.ArcTanh,
	"Trunc": ops.Trunc, "Invert": ops.Invert, "IsFinite": ops.IsFinite, "IsPosInf": ops.IsPosInf,
	"IsNegInf": ops.IsNegInf, "Degrees": ops.Degrees, "Radians": ops.Radians, "Real": ops.Real,
	"Imag": ops.Imag, "Conj": ops.Conj, "Angle": ops.Angle,
}

var binaryFuncs = map[string]func(a, b *array.Array) *array.Array{
	"Add": ops.Add, "Sub": ops.Sub, "Mul": ops.Mul, "Div": ops.Div, "FloorDivide": ops.FloorDivide,
	"Remainder": ops.Remainder, "Pow": ops.Pow, "Maximum": ops.Maximum, "Minimum": ops.Minimum,
	"Equal": ops.Equal, "NotEqual": ops.NotEqual, "Less": ops.Less, "LessEqual": ops.LessEqual,
	"Greater": ops.Greater, "GreaterEqual": ops.GreaterEqual, "LogicalAnd": ops.LogicalAnd,
	"LogicalOr": ops.LogicalOr, "LogAddExp": ops.LogAddExp, "ArcTan2": ops.ArcTan2,
	"LogicalXor": ops.LogicalXor, "Hypot": ops.Hypot, "BitwiseAnd": ops.BitwiseAnd, "BitwiseOr": ops.BitwiseOr,
	"BitwiseXor": ops.BitwiseXor, "LeftShift": ops.LeftShift, "RightShift": ops.RightShift,
}

var scalarFuncs = map[string]func(*array.Array, float64) *array.Array{
	"AddScalar": ops.AddScalar, "SubScalar": ops.SubScalar, "MulScalar": ops.MulScalar,
	"DivScalar": ops.DivScalar, "PowScalar": ops.PowScalar, "MaximumScalar": ops.MaximumScalar,
	"MinimumScalar": ops.MinimumScalar, "FloorDivideScalar": ops.FloorDivideScalar,
	"RemainderScalar": ops.RemainderScalar, "EqualScalar": ops.EqualScalar, "NotEqualScalar": ops.NotEqualScalar,
	"LessScalar": ops.LessScalar, "LessEqualScalar": ops.LessEqualScalar, "GreaterScalar": ops.GreaterScalar,
	"GreaterEqualScalar": ops.GreaterEqualScalar, "LogAddExpScalar": ops.LogAddExpScalar,
	"ArcTan2Scalar": ops.ArcTan2Scalar, "HypotScalar": ops.HypotScalar, "BitwiseAndScalar": ops.BitwiseAndScalar,
	"BitwiseOrScalar": ops.BitwiseOrScalar, "BitwiseXorScalar": ops.BitwiseXorScalar,
	"LeftShiftScalar": ops.LeftShiftScalar, "RightShiftScalar": ops.RightShiftScalar,
}

var creationOps = []string{"Zeros", "Ones", "Full", "ZerosLike", "OnesLike", "FullLike", "Arange", "Linspace", "Eye"}

// paramOps are the elementwise ops with parameters or several results,
// which elementwiseResults calls by name.
var paramOps = []string{"RoundDecimals", "NanToNum", "Clip", "ClipScalar", "IsClose", "AllClose", "ArrayEqual", "DivMod"}

// elementwiseFiles are the reference files of the elementwise ops:
// gen_elementwise.py's and gen_elementwise_more.py's.
var elementwiseFiles = []string{"elementwise.json", "elementwise_more.json"}

// elementwiseResults runs a reference case's op on inputs and returns
// its results: one, but for DivMod's two.
func elementwiseResults(t *testing.T, c refCase, inputs []*array.Array) []*array.Array {
	t.Helper()
	var decimals int
	var equalNaN bool
	var open string
	c.Param(t, "decimals", &decimals)
	c.Param(t, "equal_nan", &equalNaN)
	c.Param(t, "open", &open)
	rtol, atol := c.FloatParam(t, "rtol"), c.FloatParam(t, "atol")
	switch c.Op {
	case "RoundDecimals":
		return []*array.Array{ops.RoundDecimals(inputs[0], decimals)}
	case "NanToNum":
		return []*array.Array{ops.NanToNum(inputs[0], c.FloatParam(t, "nan"), c.FloatParam(t, "posinf"), c.FloatParam(t, "neginf"))}
	case "Clip":
		switch open {
		case "lo":
			return []*array.Array{ops.Clip(inputs[0], nil, inputs[1])}
		case "hi":
			return []*array.Array{ops.Clip(inputs[0], inputs[1], nil)}
		}
		return []*array.Array{ops.Clip(inputs[0], inputs[1], inputs[2])}
	case "ClipScalar":
		return []*array.Array{ops.ClipScalar(inputs[0], c.FloatParam(t, "lo"), c.FloatParam(t, "hi"))}
	case "IsClose":
		return []*array.Array{ops.IsClose(inputs[0], inputs[1], rtol, atol, equalNaN)}
	case "AllClose":
		return []*array.Array{ops.AllClose(inputs[0], inputs[1], rtol, atol, equalNaN)}
	case "ArrayEqual":
		return []*array.Array{ops.ArrayEqual(inputs[0], inputs[1], equalNaN)}
	case "DivMod":
		q, r := ops.DivMod(inputs[0], inputs[1])
		return []*array.Array{q, r}
	}
	return []*array.Array{elementwiseResult(t, c, inputs)}
}

// checkResults compares every result of a case with its expected arrays.
func checkResults(t *testing.T, name string, got []*array.Array, want []refArray) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d results, want %d", name, len(got), len(want))
	}
	for i := range got {
		n := name
		if len(got) > 1 {
			n += "/" + strconv.Itoa(i)
		}
		checkArray(t, n, got[i], want[i])
	}
}

// elementwiseResult runs a reference case's op on inputs (the case's
// inputs, or the same values in another layout).
func elementwiseResult(t *testing.T, c refCase, inputs []*array.Array) *array.Array {
	t.Helper()
	var start, stop, step float64
	var shape []int
	var n, m, k int
	var dtName string
	v := c.FloatParam(t, "v")
	c.Param(t, "shape", &shape)
	c.Param(t, "start", &start)
	c.Param(t, "stop", &stop)
	c.Param(t, "step", &step)
	c.Param(t, "n", &n)
	c.Param(t, "m", &m)
	c.Param(t, "k", &k)
	var dt array.DType
	if c.Param(t, "dtype", &dtName) {
		dt = refcase.ParseDType(t, dtName)
	}
	if shape == nil {
		shape = []int{}
	}
	if f, ok := unaryFuncs[c.Op]; ok {
		return f(inputs[0])
	}
	if f, ok := binaryFuncs[c.Op]; ok {
		return f(inputs[0], inputs[1])
	}
	if f, ok := scalarFuncs[c.Op]; ok {
		return f(inputs[0], v)
	}
	switch c.Op {
	case "Where":
		return ops.Where(inputs[0], inputs[1], inputs[2])
	case "Zeros":
		return ops.Zeros(shape, dt)
	case "Ones":
		return ops.Ones(shape, dt)
	case "Full":
		return ops.Full(shape, v, dt)
	case "ZerosLike":
		return ops.ZerosLike(inputs[0])
	case "OnesLike":
		return ops.OnesLike(inputs[0])
	case "FullLike":
		return ops.FullLike(inputs[0], v)
	case "Arange":
		return ops.Arange(start, stop, step, dt)
	case "Linspace":
		return ops.Linspace(start, stop, n, dt)
	case "Eye":
		return ops.Eye(n, m, k, dt)
	case "AsType":
		return ops.AsType(inputs[0], dt)
	}
	t.Fatalf("%s: unknown op %q", c.Name, c.Op)
	return nil
}

func caseInputs(t *testing.T, c refCase) []*array.Array {
	t.Helper()
	in := make([]*array.Array, len(c.Inputs))
	for i, r := range c.Inputs {
		in[i] = r.Build(t)
	}
	return in
}

// TestElementwiseReference runs every numpy case of gen_elementwise.py and
// checks that every op has cases.
func TestElementwiseReference(t *testing.T) {
	seen := map[string]bool{}
	for _, file := range elementwiseFiles {
		for _, c := range loadCases(t, file) {
			seen[c.Op] = true
			checkResults(t, c.Name, elementwiseResults(t, c, caseInputs(t, c)), c.Expected)
		}
	}
	var all []string
	for name := range unaryFuncs {
		all = append(all, name)
	}
	for name := range binaryFuncs {
		all = append(all, name)
	}
	for name := range scalarFuncs {
		all = append(all, name)
	}
	all = append(all, creationOps...)
	all = append(all, paramOps...)
	all = append(all, "Where")
	sort.Strings(all)
	for _, name := range all {
		if !seen[name] {
			t.Errorf("no reference case for %s", name)
		}
	}
}

// relayout returns a with the same values in another memory layout:
// column-major (through two transposes) or every other element of a
// repeated copy (a stepped slice).
func relayout(a *array.Array, kind string) *array.Array {
	if a.Ndim() != 2 {
		return a
	}
	switch kind {
	case "transposed":
		return ops.Transpose(ops.Copy(ops.Transpose(a)))
	default:
		return ops.Slice(ops.Repeat(a, 2, 1), ops.Whole(), ops.R(0, ops.None, 2))
	}
}

// TestElementwiseLayouts reruns the 2-D unary, binary and Where cases on
// transposed and stepped inputs.
func TestElementwiseLayouts(t *testing.T) {
	var cases []refCase
	for _, file := range elementwiseFiles {
		cases = append(cases, loadCases(t, file)...)
	}
	for _, c := range cases {
		if len(c.Inputs) == 0 {
			continue
		}
		for _, kind := range []string{"transposed", "stepped"} {
			in := caseInputs(t, c)
			changed := false
			for i, a := range in {
				if a.Ndim() != 2 {
					continue
				}
				in[i] = relayout(a, kind)
				changed = true
				if err := in[i].Eval(); err != nil {
					t.Fatal(err)
				}
				if in[i].RowMajor() && a.Dim(0) > 1 && a.Dim(1) > 1 {
					t.Fatalf("%s: %s input %d is still row-major", c.Name, kind, i)
				}
			}
			if !changed {
				continue
			}
			checkResults(t, c.Name+"/"+kind, elementwiseResults(t, c, in), c.Expected)
		}
	}
}

// TestElementwiseDTypes checks result dtypes that the reference cases
// take from fathom's rules rather than numpy's.
func TestElementwiseDTypes(t *testing.T) {
	i32 := array.FromSlice([]int32{1, 2})
	u8 := array.FromSlice([]uint8{1, 2})
	b := array.FromSlice([]bool{true, false})
	f16 := array.FromSlice([]array.F16{array.NewF16(1), array.NewF16(2)})
	bf16 := array.FromSlice([]array.BF16{array.NewBF16(1), array.NewBF16(2)})
	i64 := array.FromSlice([]int64{1, 2})
	f32 := array.FromSlice([]float32{1, 2})
	f64 := array.FromSlice([]float64{1, 2})
	c64 := array.FromSlice([]complex64{1, 2i})
	tests := []struct {
		name string
		got  *array.Array
		want array.DType
	}{
		{"Exp(int32)", ops.Exp(i32), array.Float32},
		{"Sqrt(bool)", ops.Sqrt(b), array.Float32},
		{"Floor(int32)", ops.Floor(i32), array.Int32},
		{"Abs(complex64)", ops.Abs(c64), array.Float32},
		{"Abs(bool)", ops.Abs(b), array.Bool},
		{"Neg(uint8)", ops.Neg(u8), array.Uint8},
		{"IsNaN(int32)", ops.IsNaN(i32), array.Bool},
		{"LogicalNot(float32)", ops.LogicalNot(f32), array.Bool},
		{"Div(int32, int32)", ops.Div(i32, i32), array.Float32},
		{"FloorDivide(bool, bool)", ops.FloorDivide(b, b), array.Int32},
		{"Add(bool, bool)", ops.Add(b, b), array.Bool},
		{"Add(int64, float32)", ops.Add(i64, f32), array.Float32},
		{"Add(int32, float16)", ops.Add(i32, f16), array.Float16},
		{"Add(float16, bfloat16)", ops.Add(f16, bf16), array.Float32},
		{"Add(complex64, float64)", ops.Add(c64, f64), array.Complex64},
		{"Less(float64, int32)", ops.Less(f64, i32), array.Bool},
		{"LogicalAnd(float32, int32)", ops.LogicalAnd(f32, i32), array.Bool},
		{"ArcTan2(uint8, int32)", ops.ArcTan2(u8, i32), array.Float32},
		{"AddScalar(int32, 2)", ops.AddScalar(i32, 2), array.Int32},
		{"AddScalar(int32, 2.5)", ops.AddScalar(i32, 2.5), array.Float32},
		{"MulScalar(float16, 1e6)", ops.MulScalar(f16, 1e6), array.Float16},
		{"AddScalar(bool, 1)", ops.AddScalar(b, 1), array.Int32},
		{"DivScalar(uint8, 2)", ops.DivScalar(u8, 2), array.Float32},
		{"PowScalar(int64, 3)", ops.PowScalar(i64, 3), array.Int64},
		{"MaximumScalar(bfloat16, 0)", ops.MaximumScalar(bf16, 0), array.BFloat16},
		{"Where(bool, int32, float16)", ops.Where(b, i32, f16), array.Float16},
		{"Log10(int32)", ops.Log10(i32), array.Float32},
		{"Trunc(uint8)", ops.Trunc(u8), array.Uint8},
		{"Invert(bool)", ops.Invert(b), array.Bool},
		{"IsFinite(complex64)", ops.IsFinite(c64), array.Bool},
		{"Degrees(int64)", ops.Degrees(i64), array.Float32},
		{"RoundDecimals(int32, -1)", ops.RoundDecimals(i32, -1), array.Int32},
		{"Real(complex64)", ops.Real(c64), array.Float32},
		{"Real(int32)", ops.Real(i32), array.Int32},
		{"Imag(bfloat16)", ops.Imag(bf16), array.BFloat16},
		{"Conj(float64)", ops.Conj(f64), array.Float64},
		{"Angle(complex64)", ops.Angle(c64), array.Float32},
		{"Angle(uint8)", ops.Angle(u8), array.Float32},
		{"Angle(float16)", ops.Angle(f16), array.Float16},
		{"Hypot(int32, float16)", ops.Hypot(i32, f16), array.Float16},
		{"LeftShift(bool, bool)", ops.LeftShift(b, b), array.Int32},
		{"BitwiseAnd(uint8, int32)", ops.BitwiseAnd(u8, i32), array.Int32},
		{"Clip(int32, float32, nil)", ops.Clip(i32, f32, nil), array.Float32},
		{"ClipScalar(int32, 0.5, 3)", ops.ClipScalar(i32, 0.5, 3), array.Float32},
		{"ClipScalar(int64, -Inf, Inf)", ops.ClipScalar(i64, math.Inf(-1), math.Inf(1)), array.Int64},
		{"IsClose(int32, int32)", ops.IsClose(i32, i32, 0, 0, false), array.Bool},
		{"LessScalar(int32, 2.5)", ops.LessScalar(i32, 2.5), array.Bool},
		{"EqualScalar(uint8, 300)", ops.EqualScalar(u8, 300), array.Bool},
		{"FloorDivideScalar(int32, 2.5)", ops.FloorDivideScalar(i32, 2.5), array.Float32},
		{"BitwiseOrScalar(bool, 1)", ops.BitwiseOrScalar(b, 1), array.Int32},
	}
	for _, tt := range tests {
		if tt.got.DType() != tt.want {
			t.Errorf("%s has dtype %v, want %v", tt.name, tt.got.DType(), tt.want)
		}
	}
}

// TestElementwiseBadInput checks that bad arguments panic with an
// *array.Error that names the op.
func TestElementwiseBadInput(t *testing.T) {
	a23 := ops.Zeros([]int{2, 3}, array.Float32)
	a4 := ops.Zeros([]int{4}, array.Float32)
	c := array.FromSlice([]complex64{1, 2})
	b := array.FromSlice([]bool{true})
	tests := []struct {
		name, want string
		f          func()
	}{
		{"Add shapes", "ops.Add: shapes [2 3] and [4] do not broadcast", func() { ops.Add(a23, a4) }},
		{"Less shapes", "ops.Less: shapes [2 3] and [4] do not broadcast", func() { ops.Less(a23, a4) }},
		{"Where shapes", "ops.Where: shapes [2], [2 3] and [4] do not broadcast", func() { ops.Where(ops.Ones([]int{2}, array.Bool), a23, a4) }},
		{"Less complex", "ops.Less: not defined for dtype complex64", func() { ops.Less(c, c) }},
		{"Maximum complex", "ops.Maximum: not defined for dtypes complex64 and float32", func() { ops.Maximum(c, array.Scalar(float32(1))) }},
		{"LogAddExp complex", "ops.LogAddExp", func() { ops.LogAddExp(c, c) }},
		{"FloorDivide complex", "ops.FloorDivide", func() { ops.FloorDivide(c, c) }},
		{"Sub bool", "ops.Sub: not defined for dtype bool", func() { ops.Sub(b, b) }},
		{"Neg bool", "ops.Neg: not defined for dtype bool", func() { ops.Neg(b) }},
		{"Floor complex", "ops.Floor: not defined for dtype complex64", func() { ops.Floor(c) }},
		{"Sign complex", "ops.Sign", func() { ops.Sign(c) }},
		{"ArcSin complex", "ops.ArcSin", func() { ops.ArcSin(c) }},
		{"Erf complex", "ops.Erf", func() { ops.Erf(c) }},
		{"Add nil", "ops.Add: operand 1 is nil", func() { ops.Add(a4, nil) }},
		{"Exp nil", "ops.Exp: operand 0 is nil", func() { ops.Exp(nil) }},
		{"Where nil", "ops.Where", func() { ops.Where(nil, a4, a4) }},
		{"AddScalar nil", "ops.AddScalar", func() { ops.AddScalar(nil, 1) }},
		{"AddScalar range", "ops.AddScalar: 300 does not fit dtype uint8", func() { ops.AddScalar(array.FromSlice([]uint8{1}), 300) }},
		{"SubScalar range", "ops.SubScalar: -1 does not fit dtype uint8", func() { ops.SubScalar(array.FromSlice([]uint8{1}), -1) }},
		{"MulScalar range", "ops.MulScalar", func() { ops.MulScalar(array.FromSlice([]int32{1}), 1e10) }},
		{"Full dtype", "ops.Full: invalid dtype", func() { ops.Full([]int{2}, 1, array.DType(99)) }},
		{"Zeros dtype", "ops.Zeros: invalid dtype", func() { ops.Zeros([]int{2}, array.DType(200)) }},
		{"Ones shape", "ops.Ones: negative dimension in shape [2 -1]", func() { ops.Ones([]int{2, -1}, array.Float32) }},
		{"Full overflow", "ops.Full: shape", func() { ops.Full([]int{math.MaxInt / 2, 3}, 0, array.Uint8) }},
		{"ZerosLike nil", "ops.ZerosLike", func() { ops.ZerosLike(nil) }},
		{"FullLike nil", "ops.FullLike", func() { ops.FullLike(nil, 1) }},
		{"Arange step", "ops.Arange: step is 0", func() { ops.Arange(0, 1, 0, array.Float32) }},
		{"Arange NaN", "ops.Arange: start NaN", func() { ops.Arange(math.NaN(), 1, 1, array.Float32) }},
		{"Arange Inf", "ops.Arange", func() { ops.Arange(0, math.Inf(1), 1, array.Float32) }},
		{"Arange huge", "too many elements", func() { ops.Arange(0, 1e300, 1e-300, array.Float32) }},
		{"Arange dtype", "ops.Arange: invalid dtype", func() { ops.Arange(0, 1, 1, array.DType(99)) }},
		{"Linspace n", "ops.Linspace: negative number of values -1", func() { ops.Linspace(0, 1, -1, array.Float32) }},
		{"Linspace dtype", "ops.Linspace: invalid dtype", func() { ops.Linspace(0, 1, 3, array.DType(42)) }},
		{"Eye n", "ops.Eye: negative dimension in shape [-1 2]", func() { ops.Eye(-1, 2, 0, array.Float32) }},
		{"Eye dtype", "ops.Eye: invalid dtype", func() { ops.Eye(2, 2, 0, array.DType(100)) }},
		{"PowScalar int negative", "ops.PowScalar: integers to negative integer powers are not allowed (dtype int32, exponent -1)", func() { ops.PowScalar(array.FromSlice([]int32{1, 2}), -1) }},
		{"PowScalar bool negative", "ops.PowScalar: integers to negative integer powers", func() { ops.PowScalar(b, -2) }},
		{"Log10 complex", "ops.Log10: not defined for dtype complex64", func() { ops.Log10(c) }},
		{"ArcSinh complex", "ops.ArcSinh: not defined for dtype complex64", func() { ops.ArcSinh(c) }},
		{"ArcCosh complex", "ops.ArcCosh", func() { ops.ArcCosh(c) }},
		{"ArcTanh complex", "ops.ArcTanh", func() { ops.ArcTanh(c) }},
		{"Trunc complex", "ops.Trunc: not defined for dtype complex64", func() { ops.Trunc(c) }},
		{"Invert float", "ops.Invert: not defined for dtype float32", func() { ops.Invert(a4) }},
		{"Invert complex", "ops.Invert: not defined for dtype complex64", func() { ops.Invert(c) }},
		{"IsPosInf complex", "ops.IsPosInf: not defined for dtype complex64", func() { ops.IsPosInf(c) }},
		{"IsNegInf complex", "ops.IsNegInf: not defined for dtype complex64", func() { ops.IsNegInf(c) }},
		{"IsFinite nil", "ops.IsFinite: operand 0 is nil", func() { ops.IsFinite(nil) }},
		{"Degrees complex", "ops.Degrees: not defined for dtype complex64", func() { ops.Degrees(c) }},
		{"Radians complex", "ops.Radians", func() { ops.Radians(c) }},
		{"RoundDecimals complex", "ops.RoundDecimals: not defined for dtype complex64", func() { ops.RoundDecimals(c, 2) }},
		{"NanToNum complex", "ops.NanToNum: not defined for dtype complex64", func() { ops.NanToNum(c, 0, 1, -1) }},
		{"Real nil", "ops.Real: operand 0 is nil", func() { ops.Real(nil) }},
		{"Imag nil", "ops.Imag", func() { ops.Imag(nil) }},
		{"Conj nil", "ops.Conj", func() { ops.Conj(nil) }},
		{"Angle nil", "ops.Angle", func() { ops.Angle(nil) }},
		{"LogicalXor shapes", "ops.LogicalXor: shapes [2 3] and [4] do not broadcast", func() { ops.LogicalXor(a23, a4) }},
		{"DivMod shapes", "ops.DivMod: shapes [2 3] and [4] do not broadcast", func() { ops.DivMod(a23, a4) }},
		{"DivMod complex", "ops.DivMod: not defined for dtype complex64", func() { ops.DivMod(c, c) }},
		{"Clip no bounds", "ops.Clip: both bounds are nil", func() { ops.Clip(a4, nil, nil) }},
		{"Clip shapes", "ops.Clip: shapes [2 3] and [4] do not broadcast", func() { ops.Clip(a23, a4, nil) }},
		{"Clip complex", "ops.Clip: not defined for dtype complex64", func() { ops.Clip(c, c, nil) }},
		{"Clip complex bound", "ops.Clip: not defined for dtypes float32 and complex64", func() { ops.Clip(a4, nil, array.Scalar(complex64(1))) }},
		{"ClipScalar NaN", "ops.ClipScalar: NaN bound", func() { ops.ClipScalar(a4, math.NaN(), 1) }},
		{"IsClose shapes", "ops.IsClose: shapes [2 3] and [4] do not broadcast", func() { ops.IsClose(a23, a4, 1e-5, 1e-8, false) }},
		{"IsClose complex", "ops.IsClose: not defined for dtype complex64", func() { ops.IsClose(c, c, 1e-5, 1e-8, false) }},
		{"IsClose tolerance", "ops.IsClose: tolerances must be non-negative (rtol -1, atol 0)", func() { ops.IsClose(a4, a4, -1, 0, false) }},
		{"AllClose NaN tolerance", "ops.IsClose: tolerances must be non-negative", func() { ops.AllClose(a4, a4, 0, math.NaN(), false) }},
		{"ArrayEqual nil", "ops.ArrayEqual: operand 1 is nil", func() { ops.ArrayEqual(a4, nil, false) }},
		{"Hypot complex", "ops.Hypot: not defined for dtype complex64", func() { ops.Hypot(c, c) }},
		{"Hypot shapes", "ops.Hypot: shapes [2 3] and [4] do not broadcast", func() { ops.Hypot(a23, a4) }},
		{"BitwiseAnd float", "ops.BitwiseAnd: not defined for dtype float32", func() { ops.BitwiseAnd(a4, a4) }},
		{"BitwiseOr uint64 int64", "ops.BitwiseOr: not defined for dtypes uint64 and int64 (promoted to float32)", func() {
			ops.BitwiseOr(array.FromSlice([]uint64{1}), array.FromSlice([]int64{1}))
		}},
		{"BitwiseXor complex", "ops.BitwiseXor", func() { ops.BitwiseXor(c, c) }},
		{"LeftShift float", "ops.LeftShift: not defined for dtype float32", func() { ops.LeftShift(a4, a4) }},
		{"RightShift shapes", "ops.RightShift: shapes [2 3] and [4] do not broadcast", func() {
			ops.RightShift(ops.Zeros([]int{2, 3}, array.Int32), ops.Zeros([]int{4}, array.Int32))
		}},
		{"BitwiseAndScalar fraction", "ops.BitwiseAndScalar: not defined for dtype float32", func() {
			ops.BitwiseAndScalar(array.FromSlice([]int32{1}), 0.5)
		}},
		{"LeftShiftScalar range", "ops.LeftShiftScalar: 300 does not fit dtype uint8", func() { ops.LeftShiftScalar(array.FromSlice([]uint8{1}), 300) }},
		{"HypotScalar complex", "ops.HypotScalar: not defined for dtype complex64", func() { ops.HypotScalar(c, 1) }},
		{"FloorDivideScalar complex", "ops.FloorDivideScalar", func() { ops.FloorDivideScalar(c, 2) }},
		{"LessScalar complex", "ops.LessScalar: not defined for dtype complex64", func() { ops.LessScalar(c, 0) }},
		{"EqualScalar nil", "ops.EqualScalar: operand 0 is nil", func() { ops.EqualScalar(nil, 0) }},
	}
	for _, tt := range tests {
		err := array.Try(tt.f)
		var ae *array.Error
		if !errors.As(err, &ae) {
			t.Errorf("%s: got %v, want *array.Error", tt.name, err)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %q does not contain %q", tt.name, err, tt.want)
		}
	}
}

// TestElementwiseEquivalent checks the parameters Equivalent compares.
func TestElementwiseEquivalent(t *testing.T) {
	x := array.FromSlice([]float32{1, 2})
	prim := func(a *array.Array) array.Primitive { return a.Primitive() }
	eq := func(a, b *array.Array) bool {
		return prim(a).(array.Equivalence).Equivalent(prim(b))
	}
	tests := []struct {
		name string
		a, b *array.Array
		want bool
	}{
		{"Exp Exp", ops.Exp(x), ops.Exp(x), true},
		{"Exp Log", ops.Exp(x), ops.Log(x), false},
		{"Add Add", ops.Add(x, x), ops.Add(x, x), true},
		{"Add Sub", ops.Add(x, x), ops.Sub(x, x), false},
		{"Add Exp", ops.Add(x, x), ops.Exp(x), false},
		{"Where Where", ops.Where(ops.Less(x, x), x, x), ops.Where(ops.Less(x, x), x, x), true},
		{"Full same", ops.Full([]int{2}, 1, array.Float32), ops.Full([]int{2}, 1, array.Float32), true},
		{"Full NaN", ops.Full([]int{2}, math.NaN(), array.Float32), ops.Full([]int{2}, math.NaN(), array.Float32), true},
		{"Full value", ops.Full([]int{2}, 1, array.Float32), ops.Full([]int{2}, 2, array.Float32), false},
		{"Full zero sign", ops.Full([]int{2}, 0, array.Float32), ops.Full([]int{2}, math.Copysign(0, -1), array.Float32), false},
		{"Full shape", ops.Full([]int{2}, 1, array.Float32), ops.Full([]int{3}, 1, array.Float32), false},
		{"Full dtype", ops.Full([]int{2}, 1, array.Float32), ops.Full([]int{2}, 1, array.Float64), false},
		{"Arange same", ops.Arange(0, 3, 1, array.Int32), ops.Arange(0, 3, 1, array.Int32), true},
		{"Arange step", ops.Arange(0, 3, 1, array.Int32), ops.Arange(0, 6, 2, array.Int32), false},
		{"Linspace same", ops.Linspace(0, 1, 3, array.Float32), ops.Linspace(0, 1, 3, array.Float32), true},
		{"Linspace stop", ops.Linspace(0, 1, 3, array.Float32), ops.Linspace(0, 2, 3, array.Float32), false},
		{"Eye same", ops.Eye(2, 3, 1, array.Float32), ops.Eye(2, 3, 1, array.Float32), true},
		{"Eye k", ops.Eye(2, 3, 1, array.Float32), ops.Eye(2, 3, 0, array.Float32), false},
		{"Eye Full", ops.Eye(2, 3, 1, array.Float32), ops.Full([]int{2, 3}, 1, array.Float32), false},
	}
	for _, tt := range tests {
		if got := eq(tt.a, tt.b); got != tt.want {
			t.Errorf("%s: Equivalent = %v, want %v", tt.name, got, tt.want)
		}
	}
	for _, p := range []array.Primitive{prim(ops.Exp(x)), prim(ops.Add(x, x)), prim(ops.Where(ops.Less(x, x), x, x)),
		prim(ops.Zeros([]int{1}, array.Int32)), prim(ops.Arange(0, 1, 1, array.Int32)),
		prim(ops.Linspace(0, 1, 2, array.Int32)), prim(ops.Eye(1, 1, 0, array.Int32))} {
		if p.Name() == "" {
			t.Errorf("%T has no name", p)
		}
	}
}

// TestLinspaceEndpoint checks that the last value is stop itself, which
// start + (n-1)*step can miss by rounding.
func TestLinspaceEndpoint(t *testing.T) {
	for _, tt := range []struct{ start, stop float64 }{{0, 0.3}, {0.1, 0.7}, {-1e-3, 1e5}, {1, 1.1}} {
		for _, n := range []int{2, 3, 7, 10, 49} {
			got, err := array.ToSlice[float64](ops.Linspace(tt.start, tt.stop, n, array.Float64))
			if err != nil {
				t.Fatal(err)
			}
			if got[0] != tt.start || got[n-1] != tt.stop {
				t.Errorf("Linspace(%v, %v, %d) runs from %v to %v", tt.start, tt.stop, n, got[0], got[n-1])
			}
		}
	}
}

// TestEveryBinaryOpHasAScalarForm checks issue 19's rule for Go numbers:
// every binary operation has a ...Scalar form with a weakly typed scalar
// (see docs/ops.md), but the logical ones, whose scalar forms would give
// the operand or a constant.
func TestEveryBinaryOpHasAScalarForm(t *testing.T) {
	exempt := map[string]bool{"LogicalAnd": true, "LogicalOr": true}
	for op := range opset.NumBinaryOps {
		name := op.String()
		if _, ok := binaryFuncs[name]; !ok {
			t.Errorf("%s is not in binaryFuncs", name)
		}
		if _, ok := scalarFuncs[name+"Scalar"]; !ok && !exempt[name] {
			t.Errorf("%s has no %sScalar", name, name)
		}
	}
	// the scalar takes the array's dtype: the result is the binary op's
	// with a 0-d array of that dtype, or an error for both
	for _, tt := range []struct {
		x, s *array.Array
		v    float64
	}{
		{array.FromSlice([]float32{-1.5, 2}), array.Scalar(float32(0.5)), 0.5},
		{array.FromSlice([]int32{-3, 2}), array.Scalar(int32(3)), 3},
		{array.FromSlice([]array.F16{array.NewF16(1)}), array.Scalar(array.NewF16(2)), 2},
	} {
		for name, f := range scalarFuncs {
			var got, want *array.Array
			errGot := array.Try(func() { got = f(tt.x, tt.v) })
			errWant := array.Try(func() { want = binaryFuncs[strings.TrimSuffix(name, "Scalar")](tt.x, tt.s) })
			switch {
			case (errGot == nil) != (errWant == nil):
				t.Errorf("%s(%v, %v): error %v, but %v with an array", name, tt.x.DType(), tt.v, errGot, errWant)
			case errGot == nil && got.DType() != want.DType():
				t.Errorf("%s(%v, %v) has dtype %v, want %v", name, tt.x.DType(), tt.v, got.DType(), want.DType())
			}
		}
	}
}
