package cpu

import (
	"errors"
	"math"
	"testing"
	"unsafe"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/opset"
)

// ewBytes returns s's memory as bytes (shared, not copied).
func ewBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(z)))
}

func ewView[T any](s []T, dt array.DType, shape, strides []int, off int) Buf {
	return Buf{Data: ewBytes(s), DType: dt, Shape: shape, Strides: strides, Offset: off}
}

// ewAt returns the storage offset of the row-major flat index i of b.
func ewAt(b Buf, i int) int {
	off := b.Offset
	for d := len(b.Shape) - 1; d >= 0; d-- {
		off += (i % b.Shape[d]) * b.Strides[d]
		i /= b.Shape[d]
	}
	return off
}

// ewLayouts are views of shape [3, 4] over 32-element storage: contiguous,
// transposed, offset with steps, and broadcast rows, columns and a scalar.
var ewLayouts = []struct {
	name    string
	strides []int
	offset  int
}{
	{"contiguous", []int{4, 1}, 0},
	{"transposed", []int{1, 3}, 0},
	{"stepped", []int{9, 2}, 3},
	{"row", []int{0, 1}, 5},
	{"column", []int{1, 0}, 7},
	{"scalar", []int{0, 0}, 11},
	{"reversed", []int{-4, -1}, 31},
}

var ewShape34 = []int{3, 4}

func ewF64s(n int, f func(i int) float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = f(i)
	}
	return s
}

func ewClose(got, want, rtol float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	if math.IsInf(want, 0) {
		return got == want
	}
	return math.Abs(got-want) <= rtol*(math.Abs(want)+1)
}

func TestUnaryLayoutsFloat64(t *testing.T) {
	ref := map[opset.UnaryOp]func(float64) float64{
		opset.Neg: func(x float64) float64 { return -x }, opset.Abs: math.Abs, opset.Exp: math.Exp, opset.Expm1: math.Expm1,
		opset.Log: math.Log, opset.Log1p: math.Log1p, opset.Log2: math.Log2, opset.Sqrt: math.Sqrt,
		opset.Rsqrt: func(x float64) float64 { return 1 / math.Sqrt(x) }, opset.Square: func(x float64) float64 { return x * x },
		opset.Reciprocal: func(x float64) float64 { return 1 / x }, opset.Sin: math.Sin, opset.Cos: math.Cos, opset.Tan: math.Tan,
		opset.ArcSin: math.Asin, opset.ArcCos: math.Acos, opset.ArcTan: math.Atan, opset.Sinh: math.Sinh, opset.Cosh: math.Cosh,
		opset.Tanh: math.Tanh, opset.Sigmoid: func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, opset.Erf: math.Erf,
		opset.Floor: math.Floor, opset.Ceil: math.Ceil, opset.Round: math.RoundToEven,
		opset.Log10: math.Log10, opset.ArcSinh: math.Asinh, opset.ArcCosh: math.Acosh, opset.ArcTanh: math.Atanh,
		opset.Trunc: math.Trunc, opset.Angle: func(x float64) float64 { return math.Atan2(0, x) },
		opset.Sign: func(x float64) float64 {
			switch {
			case x > 0:
				return 1
			case x < 0:
				return -1
			}
			return x
		},
	}
	src := ewF64s(32, func(i int) float64 { return float64(i)/16 - 1 + 1.0/64 })
	for op, f := range ref {
		for _, l := range ewLayouts {
			x := ewView(src, array.Float64, ewShape34, l.strides, l.offset)
			o := make([]float64, 12)
			if err := Unary(op, ewView(o, array.Float64, ewShape34, []int{4, 1}, 0), x); err != nil {
				t.Fatalf("%v/%s: %v", op, l.name, err)
			}
			for i := range o {
				if want := f(src[ewAt(x, i)]); !ewClose(o[i], want, 1e-15) {
					t.Errorf("%v/%s: element %d = %v, want %v", op, l.name, i, o[i], want)
				}
			}
		}
	}
}

func TestUnaryStridedOutput(t *testing.T) {
	src := ewF64s(12, func(i int) float64 { return float64(i) - 5.5 })
	o := make([]float32, 24)
	x := make([]float32, 12)
	for i, v := range src {
		x[i] = float32(v)
	}
	// out transposed and offset, so results are scattered
	out := ewView(o, array.Float32, ewShape34, []int{1, 3}, 12)
	if err := Unary(opset.Abs, out, ewView(x, array.Float32, ewShape34, []int{4, 1}, 0)); err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		if got, want := o[ewAt(out, i)], float32(math.Abs(src[i])); got != want {
			t.Errorf("element %d = %v, want %v", i, got, want)
		}
	}
	for i := range 12 {
		if o[i] != 0 {
			t.Errorf("wrote outside the ewView ewAt %d", i)
		}
	}
}

func TestUnaryHalfTiles(t *testing.T) {
	// longer than a tile and strided, through the float32 widening path
	n := 3*tileLen + 7
	src := make([]array.F16, 2*n)
	bsrc := make([]array.BF16, 2*n)
	for i := range src {
		src[i] = array.NewF16(float32(i%97) / 8)
		bsrc[i] = array.NewBF16(float32(i%97) / 8)
	}
	o := make([]array.F16, n)
	bo := make([]array.BF16, n)
	if err := Unary(opset.Sqrt, ewView(o, array.Float16, []int{n}, []int{1}, 0), ewView(src, array.Float16, []int{n}, []int{2}, 1)); err != nil {
		t.Fatal(err)
	}
	if err := Unary(opset.Sqrt, ewView(bo, array.BFloat16, []int{n}, []int{1}, 0), ewView(bsrc, array.BFloat16, []int{n}, []int{2}, 1)); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		x := src[1+2*i].Float32()
		want := array.NewF16(float32(math.Sqrt(float64(x))))
		if o[i] != want {
			t.Fatalf("f16 element %d: sqrt(%v) = %v, want %v", i, x, o[i], want)
		}
		bwant := array.NewBF16(float32(math.Sqrt(float64(bsrc[1+2*i].Float32()))))
		if bo[i] != bwant {
			t.Fatalf("bf16 element %d = %v, want %v", i, bo[i], bwant)
		}
	}
	isnan := make([]bool, 4)
	in := []array.F16{array.NewF16(float32(math.NaN())), array.NewF16(1), array.NewF16(float32(math.Inf(-1))), 0x8000}
	if err := Unary(opset.IsNaN, ewView(isnan, array.Bool, []int{4}, []int{1}, 0), ewView(in, array.Float16, []int{4}, []int{1}, 0)); err != nil {
		t.Fatal(err)
	}
	if want := []bool{true, false, false, false}; !ewEqualBools(isnan, want) {
		t.Errorf("IsNaN(f16) = %v, want %v", isnan, want)
	}
	if err := Unary(opset.LogicalNot, ewView(isnan, array.Bool, []int{4}, []int{1}, 0), ewView(in, array.Float16, []int{4}, []int{1}, 0)); err != nil {
		t.Fatal(err)
	}
	if want := []bool{false, false, false, true}; !ewEqualBools(isnan, want) {
		t.Errorf("LogicalNot(f16) = %v, want %v (-0 is zero)", isnan, want)
	}
}

func ewEqualBools(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestUnarySpecialValues(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		op   opset.UnaryOp
		in   []float64
		want []float64
	}{
		{opset.Round, []float64{0.5, 1.5, 2.5, -0.5, -1.5, 2.4999, -2.6}, []float64{0, 2, 2, 0, -2, 2, -3}},
		{opset.Sign, []float64{nan, -0.0, 3, -inf}, []float64{nan, 0, 1, -1}},
		{opset.ErfInv, []float64{1, -1, 1.5, nan, 0}, []float64{inf, -inf, nan, nan, 0}},
		{opset.ErfInv, []float64{0.5, -0.9, 0.999999, 0.9999999999, 0.3}, []float64{0.4769362762044699, -1.1630871536766743, 3.458910737275499, 4.572824958544925, 0.2724627147267543}},
		{opset.Sigmoid, []float64{-inf, inf, 0, -800}, []float64{0, 1, 0.5, 0}},
		{opset.Rsqrt, []float64{0, 4, -1}, []float64{inf, 0.5, nan}},
	}
	for _, tt := range tests {
		o := make([]float64, len(tt.in))
		n := []int{len(tt.in)}
		if err := Unary(tt.op, ewView(o, array.Float64, n, []int{1}, 0), ewView(tt.in, array.Float64, n, []int{1}, 0)); err != nil {
			t.Fatal(err)
		}
		for i := range o {
			if !ewClose(o[i], tt.want[i], 1e-14) {
				t.Errorf("%v(%v) = %v, want %v", tt.op, tt.in[i], o[i], tt.want[i])
			}
		}
	}
}

func TestErfInvInvertsErf(t *testing.T) {
	for i := -999; i <= 999; i++ {
		y := float64(i) / 1000 * 5
		x := math.Erf(y)
		if math.Abs(x) == 1 {
			continue
		}
		got := erfInv(x)
		// erfinv is ill-conditioned near ±1: allow the error of x itself
		// magnified by the derivative.
		tol := 4e-16 * (math.Abs(y) + math.Abs(x)*math.SqrtPi/2*math.Exp(y*y))
		if math.Abs(got-y) > tol {
			t.Errorf("erfInv(erf(%v)) = %v, off by %.3g (tolerance %.3g)", y, got, got-y, tol)
		}
	}
}

func TestUnaryIntegers(t *testing.T) {
	in := []int32{math.MinInt32, -7, -1, 0, 1, 5, math.MaxInt32}
	tests := []struct {
		op   opset.UnaryOp
		want []int32
	}{
		{opset.Neg, []int32{math.MinInt32, 7, 1, 0, -1, -5, -math.MaxInt32}},
		{opset.Abs, []int32{math.MinInt32, 7, 1, 0, 1, 5, math.MaxInt32}},
		{opset.Sign, []int32{-1, -1, -1, 0, 1, 1, 1}},
		{opset.Square, []int32{0, 49, 1, 0, 1, 25, 1}},
		{opset.Floor, in},
		{opset.Round, in},
	}
	n := []int{len(in)}
	for _, tt := range tests {
		o := make([]int32, len(in))
		if err := Unary(tt.op, ewView(o, array.Int32, n, []int{1}, 0), ewView(in, array.Int32, n, []int{1}, 0)); err != nil {
			t.Fatal(err)
		}
		for i := range o {
			if o[i] != tt.want[i] {
				t.Errorf("%v(%d) = %d, want %d", tt.op, in[i], o[i], tt.want[i])
			}
		}
	}
	u := []uint8{0, 1, 200}
	o := make([]uint8, 3)
	if err := Unary(opset.Neg, ewView(o, array.Uint8, []int{3}, []int{1}, 0), ewView(u, array.Uint8, []int{3}, []int{1}, 0)); err != nil {
		t.Fatal(err)
	}
	if o[0] != 0 || o[1] != 255 || o[2] != 56 {
		t.Errorf("Neg(uint8 %v) = %v, want [0 255 56]", u, o)
	}
}

func TestUnaryComplex(t *testing.T) {
	in := []complex64{3 + 4i, -1 + 0i, 0}
	abs := make([]float32, 3)
	if err := Unary(opset.Abs, ewView(abs, array.Float32, []int{3}, []int{1}, 0), ewView(in, array.Complex64, []int{3}, []int{1}, 0)); err != nil {
		t.Fatal(err)
	}
	if abs[0] != 5 || abs[1] != 1 || abs[2] != 0 {
		t.Errorf("Abs(%v) = %v", in, abs)
	}
	sq := make([]complex64, 3)
	if err := Unary(opset.Sqrt, ewView(sq, array.Complex64, []int{3}, []int{1}, 0), ewView(in, array.Complex64, []int{3}, []int{1}, 0)); err != nil {
		t.Fatal(err)
	}
	if sq[0] != 2+1i || sq[1] != 1i || sq[2] != 0 {
		t.Errorf("Sqrt(%v) = %v", in, sq)
	}
}

// TestUnaryComplexParts checks Conj, Real, Imag and Angle of complex64,
// with the signed zeros and infinities that decide Angle, contiguous and
// strided.
func TestUnaryComplexParts(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	in := []complex64{3 + 4i, -1, complex(-1, negZero), complex(0, -2), 0, complex(float32(math.Inf(-1)), 1),
		complex(1, float32(math.NaN())), -0.5 - 0.5i}
	tests := []struct {
		op   opset.UnaryOp
		want func(z complex64) complex128
	}{
		{opset.Conj, func(z complex64) complex128 { return complex(float64(real(z)), -float64(imag(z))) }},
		{opset.Real, func(z complex64) complex128 { return complex(float64(real(z)), 0) }},
		{opset.Imag, func(z complex64) complex128 { return complex(float64(imag(z)), 0) }},
		{opset.Angle, func(z complex64) complex128 {
			return complex(float64(float32(math.Atan2(float64(imag(z)), float64(real(z))))), 0)
		}},
	}
	for _, tt := range tests {
		want, _ := tt.op.Result(array.Complex64)
		for _, stride := range []int{1, 2} {
			src := make([]complex64, len(in)*stride)
			for i, z := range in {
				src[i*stride] = z
			}
			x := ewView(src, array.Complex64, []int{len(in)}, []int{stride}, 0)
			var got []complex128
			if want == array.Complex64 {
				o := make([]complex64, len(in))
				if err := Unary(tt.op, ewView(o, want, []int{len(in)}, []int{1}, 0), x); err != nil {
					t.Fatal(err)
				}
				for _, v := range o {
					got = append(got, complex128(v))
				}
			} else {
				o := make([]float32, len(in))
				if err := Unary(tt.op, ewView(o, want, []int{len(in)}, []int{1}, 0), x); err != nil {
					t.Fatal(err)
				}
				for _, v := range o {
					got = append(got, complex(float64(v), 0))
				}
			}
			for i, z := range in {
				w := tt.want(z)
				same := func(a, b float64) bool { return a == b || (a != a && b != b) }
				if !same(real(got[i]), real(w)) || !same(imag(got[i]), imag(w)) {
					t.Errorf("%v(%v), stride %d = %v, want %v", tt.op, z, stride, got[i], w)
				}
			}
		}
	}
}

type ewBinCase struct {
	op  opset.BinaryOp
	ref func(a, b float64) float64
}

var ewFloatBinRefs = []ewBinCase{
	{opset.Add, func(a, b float64) float64 { return a + b }},
	{opset.Sub, func(a, b float64) float64 { return a - b }},
	{opset.Mul, func(a, b float64) float64 { return a * b }},
	{opset.Div, func(a, b float64) float64 { return a / b }},
	{opset.Maximum, func(a, b float64) float64 {
		if math.IsNaN(a) || math.IsNaN(b) {
			return math.NaN()
		}
		return math.Max(a, b)
	}},
	{opset.Minimum, func(a, b float64) float64 {
		if math.IsNaN(a) || math.IsNaN(b) {
			return math.NaN()
		}
		return math.Min(a, b)
	}},
	{opset.Pow, math.Pow},
	{opset.ArcTan2, math.Atan2},
	{opset.FloorDivide, func(a, b float64) float64 { return math.Floor(a / b) }},
	{opset.Remainder, func(a, b float64) float64 { return a - b*math.Floor(a/b) }},
	{opset.LogAddExp, func(a, b float64) float64 { return math.Log(math.Exp(a) + math.Exp(b)) }},
	{opset.Hypot, math.Hypot},
}

func TestBinaryLayoutsFloat64(t *testing.T) {
	sa := ewF64s(32, func(i int) float64 { return float64(i%11)/4 + 0.125 })
	sb := ewF64s(32, func(i int) float64 { return float64(i%7)/2 - 1.25 })
	sa[9] = math.NaN()
	for _, bc := range ewFloatBinRefs {
		for _, la := range ewLayouts {
			for _, lb := range ewLayouts {
				a := ewView(sa, array.Float64, ewShape34, la.strides, la.offset)
				b := ewView(sb, array.Float64, ewShape34, lb.strides, lb.offset)
				o := make([]float64, 12)
				if err := Binary(bc.op, ewView(o, array.Float64, ewShape34, []int{4, 1}, 0), a, b); err != nil {
					t.Fatal(err)
				}
				for i := range o {
					x, y := sa[ewAt(a, i)], sb[ewAt(b, i)]
					if want := bc.ref(x, y); !ewClose(o[i], want, 1e-14) {
						t.Errorf("%v %s/%s: %v, %v gives %v, want %v", bc.op, la.name, lb.name, x, y, o[i], want)
					}
				}
			}
		}
	}
}

// TestBinaryFloat32Paths covers the slice, slice-scalar, scalar-slice and
// gathered paths of the float32 kernels, over more than one parallel
// chunk.
func TestBinaryFloat32Paths(t *testing.T) {
	rows, cols := 5, grain/2+3 // more than 2*grain elements: several chunks
	n := rows * cols
	sa := make([]float32, 2*n)
	sb := make([]float32, 2*n)
	for i := range sa {
		sa[i] = float32(i%1000)/8 - 60
		sb[i] = float32(i%777)/4 - 90
	}
	shape := []int{rows, cols}
	ops := []ewBinCase{ewFloatBinRefs[0], ewFloatBinRefs[1], ewFloatBinRefs[3], ewFloatBinRefs[4], ewFloatBinRefs[5]}
	bLayouts := []struct {
		name    string
		strides []int
		off     int
	}{
		{"contiguous", []int{cols, 1}, 0}, {"scalar", []int{0, 0}, 5}, {"column", []int{1, 0}, 2},
		{"row", []int{0, 1}, 0}, {"stepped", []int{1, 2}, 1},
	}
	for _, bc := range ops {
		for _, lb := range bLayouts {
			for _, swap := range []bool{false, true} {
				a := ewView(sa, array.Float32, shape, []int{cols, 1}, 0)
				b := ewView(sb, array.Float32, shape, lb.strides, lb.off)
				if swap {
					a, b = b, a
				}
				o := make([]float32, n)
				if err := Binary(bc.op, ewView(o, array.Float32, shape, []int{cols, 1}, 0), a, b); err != nil {
					t.Fatal(err)
				}
				xa, xb := elems[float32](a), elems[float32](b)
				for i := range o {
					want := float32(bc.ref(float64(xa[ewAt(a, i)]), float64(xb[ewAt(b, i)])))
					if o[i] != want && !(want != want && o[i] != o[i]) {
						t.Fatalf("%v %s swap=%v: element %d = %v, want %v", bc.op, lb.name, swap, i, o[i], want)
					}
				}
			}
		}
	}
}

func TestBinaryHalf(t *testing.T) {
	a := []array.F16{array.NewF16(1), array.NewF16(2.5), array.NewF16(65504), array.NewF16(-3)}
	b := []array.F16{array.NewF16(0.0009765625), array.NewF16(0.5)}
	o := make([]array.F16, 8)
	// a as a column, b as a row: a 4x2 outer sum
	if err := Binary(opset.Add, ewView(o, array.Float16, []int{4, 2}, []int{2, 1}, 0),
		ewView(a, array.Float16, []int{4, 2}, []int{1, 0}, 0), ewView(b, array.Float16, []int{4, 2}, []int{0, 1}, 0)); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		for j := range 2 {
			want := array.NewF16(a[i].Float32() + b[j].Float32())
			if o[2*i+j] != want {
				t.Errorf("%v + %v = %v, want %v", a[i], b[j], o[2*i+j], want)
			}
		}
	}
	lt := make([]bool, 4)
	if err := Binary(opset.Less, ewView(lt, array.Bool, []int{4}, []int{1}, 0),
		ewView(a, array.Float16, []int{4}, []int{1}, 0), ewView(b, array.Float16, []int{4}, []int{0}, 1)); err != nil {
		t.Fatal(err)
	}
	if want := []bool{false, false, false, true}; !ewEqualBools(lt, want) {
		t.Errorf("Less(%v, 0.5) = %v, want %v", a, lt, want)
	}
}

func TestBinaryIntegers(t *testing.T) {
	a := []int32{7, -7, 7, -7, 5, math.MinInt32, 0, 3}
	b := []int32{2, 2, -2, -2, 0, -1, 0, -1}
	tests := []struct {
		op   opset.BinaryOp
		want []int32
	}{
		{opset.FloorDivide, []int32{3, -4, -4, 3, 0, math.MinInt32, 0, -3}},
		{opset.Remainder, []int32{1, 1, -1, -1, 0, 0, 0, 0}},
		{opset.Pow, []int32{49, 49, 0, 0, 1, 0, 1, 0}},
		{opset.Add, []int32{9, -5, 5, -9, 5, math.MaxInt32, 0, 2}},
		{opset.Maximum, []int32{7, 2, 7, -2, 5, -1, 0, 3}},
	}
	n := []int{len(a)}
	for _, tt := range tests {
		o := make([]int32, len(a))
		if err := Binary(tt.op, ewView(o, array.Int32, n, []int{1}, 0), ewView(a, array.Int32, n, []int{1}, 0), ewView(b, array.Int32, n, []int{1}, 0)); err != nil {
			t.Fatal(err)
		}
		for i := range o {
			if o[i] != tt.want[i] {
				t.Errorf("%v(%d, %d) = %d, want %d", tt.op, a[i], b[i], o[i], tt.want[i])
			}
		}
	}
	pa := []int64{1, -1, -1, 2, 3, -2}
	pb := []int64{-5, -3, -4, -1, 40, 63}
	// 3^40 wraps modulo 2^64; (-2)^63 is exactly the most negative int64
	want := []int64{1, -1, 1, 0, 12157665459056928801 - 1<<64, math.MinInt64}
	o := make([]int64, len(pa))
	n = []int{len(pa)}
	if err := Binary(opset.Pow, ewView(o, array.Int64, n, []int{1}, 0), ewView(pa, array.Int64, n, []int{1}, 0), ewView(pb, array.Int64, n, []int{1}, 0)); err != nil {
		t.Fatal(err)
	}
	for i := range o {
		if o[i] != want[i] {
			t.Errorf("Pow(%d, %d) = %d, want %d", pa[i], pb[i], o[i], want[i])
		}
	}
	ua, ub := []uint8{7, 200, 3}, []uint8{2, 100, 0}
	uo := make([]uint8, 3)
	for _, tt := range []struct {
		op   opset.BinaryOp
		want []uint8
	}{{opset.Add, []uint8{9, 44, 3}}, {opset.Sub, []uint8{5, 100, 3}}, {opset.FloorDivide, []uint8{3, 2, 0}}, {opset.Remainder, []uint8{1, 0, 0}}} {
		if err := Binary(tt.op, ewView(uo, array.Uint8, []int{3}, []int{1}, 0), ewView(ua, array.Uint8, []int{3}, []int{1}, 0), ewView(ub, array.Uint8, []int{3}, []int{1}, 0)); err != nil {
			t.Fatal(err)
		}
		for i := range uo {
			if uo[i] != tt.want[i] {
				t.Errorf("%v(uint8 %d, %d) = %d, want %d", tt.op, ua[i], ub[i], uo[i], tt.want[i])
			}
		}
	}
}

func TestBinaryBoolAndComplex(t *testing.T) {
	a := []bool{true, true, false, false}
	b := []bool{true, false, true, false}
	n := []int{4}
	for _, tt := range []struct {
		op   opset.BinaryOp
		want []bool
	}{
		{opset.Add, []bool{true, true, true, false}}, {opset.Mul, []bool{true, false, false, false}},
		{opset.LogicalOr, []bool{true, true, true, false}}, {opset.LogicalAnd, []bool{true, false, false, false}},
		{opset.Less, []bool{false, false, true, false}}, {opset.GreaterEqual, []bool{true, true, false, true}},
		{opset.NotEqual, []bool{false, true, true, false}},
	} {
		o := make([]bool, 4)
		if err := Binary(tt.op, ewView(o, array.Bool, n, []int{1}, 0), ewView(a, array.Bool, n, []int{1}, 0), ewView(b, array.Bool, n, []int{1}, 0)); err != nil {
			t.Fatal(err)
		}
		if !ewEqualBools(o, tt.want) {
			t.Errorf("%v(%v, %v) = %v, want %v", tt.op, a, b, o, tt.want)
		}
	}
	za := []complex64{1 + 2i, 3 - 1i}
	zb := []complex64{1 - 1i}
	zo := make([]complex64, 2)
	if err := Binary(opset.Mul, ewView(zo, array.Complex64, []int{2}, []int{1}, 0), ewView(za, array.Complex64, []int{2}, []int{1}, 0), ewView(zb, array.Complex64, []int{2}, []int{0}, 0)); err != nil {
		t.Fatal(err)
	}
	if zo[0] != 3+1i || zo[1] != 2-4i {
		t.Errorf("Mul(%v, %v) = %v", za, zb, zo)
	}
	eq := make([]bool, 2)
	if err := Binary(opset.Equal, ewView(eq, array.Bool, []int{2}, []int{1}, 0), ewView(za, array.Complex64, []int{2}, []int{1}, 0), ewView([]complex64{1 + 2i, 3 + 1i}, array.Complex64, []int{2}, []int{1}, 0)); err != nil {
		t.Fatal(err)
	}
	if !eq[0] || eq[1] {
		t.Errorf("Equal = %v, want [true false]", eq)
	}
}

func TestWhereLayouts(t *testing.T) {
	cond := make([]bool, 32)
	for i := range cond {
		cond[i] = i%3 == 0
	}
	sx := ewF64s(32, func(i int) float64 { return float64(i) })
	sy := ewF64s(32, func(i int) float64 { return -float64(i) })
	for _, lc := range ewLayouts {
		for _, lx := range ewLayouts {
			c := ewView(cond, array.Bool, ewShape34, lc.strides, lc.offset)
			x := ewView(sx, array.Float64, ewShape34, lx.strides, lx.offset)
			y := ewView(sy, array.Float64, ewShape34, []int{1, 3}, 2)
			o := make([]float64, 12)
			if err := Where(ewView(o, array.Float64, ewShape34, []int{4, 1}, 0), c, x, y); err != nil {
				t.Fatal(err)
			}
			for i := range o {
				want := sy[ewAt(y, i)]
				if cond[ewAt(c, i)] {
					want = sx[ewAt(x, i)]
				}
				if o[i] != want {
					t.Errorf("%s/%s: element %d = %v, want %v", lc.name, lx.name, i, o[i], want)
				}
			}
		}
	}
	h := []array.F16{1, 2, 3}
	ho := make([]array.F16, 3)
	if err := Where(ewView(ho, array.Float16, []int{3}, []int{1}, 0), ewView([]bool{true, false, true}, array.Bool, []int{3}, []int{1}, 0),
		ewView(h, array.Float16, []int{3}, []int{1}, 0), ewView(h, array.Float16, []int{3}, []int{0}, 1)); err != nil {
		t.Fatal(err)
	}
	if ho[0] != 1 || ho[1] != 2 || ho[2] != 3 {
		t.Errorf("Where(f16) = %v", ho)
	}
}

func TestArangeEye(t *testing.T) {
	o := make([]int32, 5)
	if err := Arange(ewView(o, array.Int32, []int{5}, []int{1}, 0), -2, 1.5); err != nil {
		t.Fatal(err)
	}
	// -2, -0.5, 1, 2.5, 4 truncate toward zero
	if want := []int32{-2, 0, 1, 2, 4}; !ewEqualInt32s(o, want) {
		t.Errorf("Arange(int32) = %v, want %v", o, want)
	}
	f := make([]float64, 7)
	out := ewView(f, array.Float64, []int{3}, []int{-2}, 6) // written backwards, every other element
	if err := Arange(out, 1, 0.5); err != nil {
		t.Fatal(err)
	}
	if f[6] != 1 || f[4] != 1.5 || f[2] != 2 || f[5] != 0 {
		t.Errorf("strided Arange wrote %v", f)
	}
	e := make([]float32, 12)
	if err := Eye(ewView(e, array.Float32, []int{3, 4}, []int{4, 1}, 0), 1); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		for j := range 4 {
			want := float32(0)
			if j == i+1 {
				want = 1
			}
			if e[4*i+j] != want {
				t.Errorf("Eye k=1 [%d,%d] = %v", i, j, e[4*i+j])
			}
		}
	}
	for _, k := range []int{math.MinInt, math.MaxInt, -3, 4} {
		for i := range e {
			e[i] = 7
		}
		if err := Eye(ewView(e, array.Float32, []int{3, 4}, []int{4, 1}, 0), k); err != nil {
			t.Fatal(err)
		}
		for i, v := range e {
			if v != 0 {
				t.Errorf("Eye k=%d: element %d = %v, want 0", k, i, v)
			}
		}
	}
}

func ewEqualInt32s(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestElementwiseEmptyAndScalar(t *testing.T) {
	var none []float32
	empty := ewView(none, array.Float32, []int{0, 3}, []int{3, 1}, 0)
	if err := Binary(opset.Add, empty, empty, ewView([]float32{1, 2, 3}, array.Float32, []int{0, 3}, []int{0, 1}, 0)); err != nil {
		t.Fatal(err)
	}
	if err := Unary(opset.Exp, empty, empty); err != nil {
		t.Fatal(err)
	}
	o := []float32{0}
	if err := Binary(opset.Sub, ewView(o, array.Float32, nil, nil, 0), ewView([]float32{5}, array.Float32, nil, nil, 0), ewView([]float32{7}, array.Float32, nil, nil, 0)); err != nil {
		t.Fatal(err)
	}
	if o[0] != -2 {
		t.Errorf("0-d Sub = %v, want -2", o[0])
	}
}

func TestElementwiseErrors(t *testing.T) {
	f32 := ewView(make([]float32, 6), array.Float32, []int{2, 3}, []int{3, 1}, 0)
	i32 := ewView(make([]int32, 6), array.Int32, []int{2, 3}, []int{3, 1}, 0)
	c64 := ewView(make([]complex64, 6), array.Complex64, []int{2, 3}, []int{3, 1}, 0)
	b := ewView(make([]bool, 6), array.Bool, []int{2, 3}, []int{3, 1}, 0)
	tests := []struct {
		name string
		err  error
	}{
		{"unary int Exp", Unary(opset.Exp, f32, i32)},
		{"unary bool Neg", Unary(opset.Neg, b, b)},
		{"unary out dtype", Unary(opset.Abs, c64, c64)},
		{"unary complex Floor", Unary(opset.Floor, c64, c64)},
		{"unary bad op", Unary(opset.NumUnaryOps, f32, f32)},
		{"binary dtypes", Binary(opset.Add, f32, f32, i32)},
		{"binary complex Less", Binary(opset.Less, b, c64, c64)},
		{"binary int Div", Binary(opset.Div, i32, i32, i32)},
		{"binary bool Sub", Binary(opset.Sub, b, b, b)},
		{"binary out dtype", Binary(opset.Less, f32, f32, f32)},
		{"binary float LogicalAnd", Binary(opset.LogicalAnd, b, f32, f32)},
		{"where cond dtype", Where(f32, f32, f32, f32)},
		{"where dtypes", Where(f32, b, f32, i32)},
	}
	for _, tt := range tests {
		var ae *array.Error
		if !errors.As(tt.err, &ae) {
			t.Errorf("%s: error %v, want *array.Error", tt.name, tt.err)
		}
	}
}
