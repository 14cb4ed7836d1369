package cpu

import (
	"math"
	"math/cmplx"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/opset"
)

// Unary computes out = op(x) elementwise. x has out's shape (the caller
// has checked it) and may be strided or broadcast (zero strides); out's
// dtype must be op.Result(x.DType). Float16 and BFloat16 compute in float32 and
// round on store. Float32 Exp, Expm1, Log, Log1p, Tanh, Sigmoid, Erf, Sin
// and Cos run the vector kernels of vecmath.go (a few ulps); the other
// float32 transcendental functions compute in float64.
func Unary(op opset.UnaryOp, out, x Buf) error {
	want, ok := op.Result(x.DType)
	if !ok {
		return array.Errorf("cpu.Unary", "%v is not defined for dtype %v", op, x.DType)
	}
	if out.DType != want {
		return array.Errorf("cpu.Unary", "%v of %v gives %v, not %v", op, x.DType, want, out.DType)
	}
	switch x.DType {
	case array.Float16:
		halfUnary[array.F16](op, out, x)
		return nil
	case array.BFloat16:
		halfUnary[array.BF16](op, out, x)
		return nil
	case array.Float32:
		if v, ok := vecUnary[op]; ok && streamUnary(v, out, x) {
			return nil
		}
	}
	unaryKernelOf(op, x.DType).run(out, x)
	return nil
}

// UnaryFlat computes n elements of out = op(x), where out and x are
// contiguous: Unary for the layout of most operands, without Buf's shapes
// and strides or the kernel's construction (see BinaryFlat). x has dtype
// dt; out has op.Result(dt).
func UnaryFlat(op opset.UnaryOp, dt array.DType, n int, out, x []byte) error {
	want, ok := op.Result(dt)
	if !ok {
		return array.Errorf("cpu.UnaryFlat", "%v is not defined for dtype %v", op, dt)
	}
	k := unaryKernelOf(op, dt)
	if n > grain || k == nil {
		return Unary(op, flatBuf(out, want, n, false), flatBuf(x, dt, n, false))
	}
	flatLen("cpu.UnaryFlat", out, want, n)
	flatLen("cpu.UnaryFlat", x, dt, n)
	k.flat(n, out, x)
	return nil
}

// unaryRunner is one dtype's kernel of one op, ready to run over Bufs or
// contiguous memory.
type unaryRunner interface {
	run(out, x Buf)
	flat(n int, out, x []byte)
}

// unaryKernel is a kernel without scratch state: d[i] = f(s[i]).
type unaryKernel[S, D any] func(d []D, s []S)

func (k unaryKernel[S, D]) run(out, x Buf) { runUnary(out, x, fixed((func(d []D, s []S))(k))) }

func (k unaryKernel[S, D]) flat(n int, out, x []byte) { k(flatElems[D](out, n), flatElems[S](x, n)) }

// unaryKernels holds each dtype's kernel of each unary op, as
// binKernels does.
var unaryKernels = kernelTable[opset.UnaryOp, unaryRunner]{n: opset.NumUnaryOps, build: makeUnaryKernel}

func unaryKernelOf(op opset.UnaryOp, dt array.DType) unaryRunner { return unaryKernels.of(op, dt) }

func makeUnaryKernel(op opset.UnaryOp, dt array.DType) unaryRunner {
	switch dt {
	case array.Bool:
		switch op {
		case opset.LogicalNot, opset.IsNaN, opset.IsInf:
			return unaryKernel[bool, bool](boolPredicate(op))
		case opset.Invert:
			return unaryKernel[bool, bool](boolPredicate(opset.LogicalNot))
		}
		// Abs, Sign, Square, Floor, Ceil, Round, Trunc: 0 and 1 are fixed points
		return unaryKernel[bool, bool](copyKernel[bool])
	case array.Uint8:
		return intUnary[uint8](op)
	case array.Int32:
		return intUnary[int32](op)
	case array.Int64:
		return intUnary[int64](op)
	case array.Int8:
		return intUnary[int8](op)
	case array.Int16:
		return intUnary[int16](op)
	case array.Uint16:
		return intUnary[uint16](op)
	case array.Uint32:
		return intUnary[uint32](op)
	case array.Uint64:
		return intUnary[uint64](op)
	case array.Float32:
		return floatUnary[float32](op)
	case array.Float64:
		return floatUnary[float64](op)
	case array.Complex64:
		return complexUnary(op)
	}
	return nil
}

// tileLen is the length of the scratch tiles that strided operands are
// gathered into and 16-bit floats are widened into: small enough to stay
// in L1 next to the output.
const tileLen = 512

// fixed wraps a kernel without scratch state as a per-chunk factory.
func fixed[S, D any](k func(d []D, s []S)) func(int) func(d []D, s []S) {
	return func(int) func(d []D, s []S) { return k }
}

// tileFor returns the length of the tiles a chunk of n elements needs.
func tileFor(n int) int { return min(tileLen, n) }

// runUnary applies a slice kernel d[i] = f(s[i]) over out and x. mk is
// called once per parallel chunk with the chunk's length, so kernels that
// need scratch memory get their own, no larger than needed. Contiguous
// runs go to the kernel directly; a broadcast operand is computed once per
// run; other runs are gathered into a tile.
func runUnary[S, D any](out, x Buf, mk func(n int) func(d []D, s []S)) {
	if n := out.Size(); n <= grain && flat(out, x) {
		mk(n)(elems[D](out)[out.Offset:out.Offset+n], elems[S](x)[x.Offset:x.Offset+n])
		return
	}
	w := newWalker(out.Shape, out.Strides, x.Strides)
	o, src := elems[D](out), elems[S](x)
	st := w.InnerStrides()
	so, sx := st[0], st[1]
	base := []int{out.Offset, x.Offset}
	ParallelFor(w.Size(), grain, func(lo, hi int) {
		k := mk(hi - lo)
		var ts []S
		var td []D
		w.Runs(lo, hi, base, func(offs []int, n int) {
			po, px := offs[0], offs[1]
			if so == 1 && sx == 1 {
				k(o[po:po+n], src[px:px+n])
				return
			}
			if td == nil {
				ts, td = make([]S, tileFor(hi-lo)), make([]D, tileFor(hi-lo))
			}
			if sx == 0 {
				k(td[:1], src[px:px+1])
				v := td[0]
				for i := 0; i < n; i++ {
					o[po+i*so] = v
				}
				return
			}
			for i := 0; i < n; i += len(ts) {
				m := min(len(ts), n-i)
				for j := range m {
					ts[j] = src[px+(i+j)*sx]
				}
				if so == 1 {
					k(o[po+i:po+i+m], ts[:m])
					continue
				}
				k(td[:m], ts[:m])
				for j := range m {
					o[po+(i+j)*so] = td[j]
				}
			}
		})
	})
}

func copyKernel[T any](d, s []T) { copy(d, s) }

// ewFloat is the set of Go float types the kernels compute in.
type ewFloat interface{ float32 | float64 }

// ewInt is the set of integer element types.
type ewInt interface {
	int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64
}

// ewReal is the set of real element types with Go arithmetic.
type ewReal interface{ ewInt | ewFloat }

func floatUnary[T ewFloat](op opset.UnaryOp) unaryRunner {
	switch op {
	case opset.LogicalNot, opset.IsNaN, opset.IsInf:
		return unaryKernel[T, bool](floatPredicate[T](op))
	}
	return unaryKernel[T, T](floatKernel[T](op))
}

// streamFrom is the size of result, in bytes, from which elementwise
// kernels store it around the caches: the last-level cache could not
// keep it for its reader anyway (compile's interpreter streams from the
// same size).
var streamFrom = 32 << 20

// streamed reports whether out, a float32 result, is one to store around
// the caches: row-major and of streamFrom bytes or more.
func streamed(out Buf) bool { return 4*out.Size() >= streamFrom && out.RowMajor() }

// streamUnary computes the float32 function op into a streamed out, from
// a row-major x, with vecApplyStream, and reports whether it did: only
// functions with kernels that store around the caches (the cheaper ones,
// see the vecmath generator's fn.stream).
func streamUnary(op vecOp, out, x Buf) bool {
	if vecBest == nil || vecBest.kernelsNT[op] == nil || !streamed(out) || !x.RowMajor() {
		return false
	}
	n := out.Size()
	o, s := elems[float32](out)[out.Offset:out.Offset+n], elems[float32](x)[x.Offset:x.Offset+n]
	ParallelFor(n, grain, func(lo, hi int) {
		vecApplyStream(vecBest, op, o[lo:hi], s[lo:hi])
		storeFence()
	})
	return true
}

// floatKernel returns the slice kernel of op for a float type: a vector
// kernel for float32 where vecmath.go has one; else float32 functions
// from package math compute in float64 and round once.
func floatKernel[T ewFloat](op opset.UnaryOp) func(d, s []T) {
	if v, ok := vecUnary[op]; ok {
		if k, ok := any(vecFuncs[v]).(func(d, s []T)); ok {
			return k
		}
	}
	if mul, ok := any(vecArith[opset.Mul].vv).(func(d, a, b []T)); ok && mul != nil && op == opset.Square {
		return func(d, s []T) { mul(d, s, s) }
	}
	switch op {
	case opset.Neg:
		return func(d, s []T) {
			s = s[:len(d)]
			for i, v := range s {
				d[i] = -v
			}
		}
	case opset.Abs:
		return func(d, s []T) {
			s = s[:len(d)]
			for i, v := range s {
				d[i] = T(math.Abs(float64(v)))
			}
		}
	case opset.Sign:
		return func(d, s []T) {
			s = s[:len(d)]
			for i, v := range s {
				switch {
				case v > 0:
					d[i] = 1
				case v < 0:
					d[i] = -1
				case v == 0:
					d[i] = 0
				default:
					d[i] = v
				}
			}
		}
	case opset.Square:
		return func(d, s []T) {
			s = s[:len(d)]
			for i, v := range s {
				d[i] = v * v
			}
		}
	case opset.Reciprocal:
		return func(d, s []T) {
			s = s[:len(d)]
			for i, v := range s {
				d[i] = 1 / v
			}
		}
	case opset.Sqrt:
		// float64 (float32 has vecSqrt): a direct loop, which the
		// compiler makes one SQRTSD an element, where the call through
		// mathFuncs costs more than the sqrt
		return func(d, s []T) {
			s = s[:len(d)]
			for i, v := range s {
				d[i] = T(math.Sqrt(float64(v)))
			}
		}
	case opset.Rsqrt:
		return func(d, s []T) {
			s = s[:len(d)]
			for i, v := range s {
				d[i] = T(1 / math.Sqrt(float64(v)))
			}
		}
	case opset.Sigmoid:
		return func(d, s []T) {
			s = s[:len(d)]
			for i, v := range s {
				d[i] = T(1 / (1 + math.Exp(-float64(v))))
			}
		}
	case opset.ErfInv:
		return func(d, s []T) {
			s = s[:len(d)]
			for i, v := range s {
				d[i] = T(erfInv(float64(v)))
			}
		}
	}
	f := mathFuncs[op]
	return func(d, s []T) {
		s = s[:len(d)]
		for i, v := range s {
			d[i] = T(f(float64(v)))
		}
	}
}

// mathFuncs are the unary operations that are one function of package
// math. Their cost dwarfs the indirect call.
var mathFuncs = map[opset.UnaryOp]func(float64) float64{
	opset.Exp: math.Exp, opset.Expm1: math.Expm1, opset.Log: math.Log, opset.Log1p: math.Log1p, opset.Log2: math.Log2,
	opset.Sqrt: math.Sqrt, opset.Sin: math.Sin, opset.Cos: math.Cos, opset.Tan: math.Tan, opset.ArcSin: math.Asin,
	opset.ArcCos: math.Acos, opset.ArcTan: math.Atan, opset.Sinh: math.Sinh, opset.Cosh: math.Cosh, opset.Tanh: math.Tanh,
	opset.Erf: math.Erf, opset.Floor: math.Floor, opset.Ceil: math.Ceil, opset.Round: math.RoundToEven,
	opset.Log10: math.Log10, opset.ArcSinh: math.Asinh, opset.ArcCosh: math.Acosh, opset.ArcTanh: math.Atanh,
	opset.Trunc: math.Trunc, opset.Angle: angle,
}

// angle is the argument of a real number, as numpy's angle: 0 for x > 0
// and +0, π for x < 0 and -0, NaN for NaN.
func angle(x float64) float64 { return math.Atan2(0, x) }

func floatPredicate[T ewFloat](op opset.UnaryOp) func(d []bool, s []T) {
	switch op {
	case opset.IsNaN:
		return func(d []bool, s []T) {
			s = s[:len(d)]
			for i, v := range s {
				d[i] = v != v
			}
		}
	case opset.IsInf:
		return func(d []bool, s []T) {
			s = s[:len(d)]
			for i, v := range s {
				d[i] = math.IsInf(float64(v), 0)
			}
		}
	}
	return func(d []bool, s []T) {
		s = s[:len(d)]
		for i, v := range s {
			d[i] = v == 0
		}
	}
}

// erfInv is the inverse error function: math.Erfinv's rational
// approximation refined by one Newton step, which brings it to within an
// ulp or two in float64. Near ±1 the step solves erfc(|y|) = 1-|x|
// instead of erf(y) = x: there erf has lost the digits that decide y,
// while 1-|x| is exact and erfc keeps them.
func erfInv(x float64) float64 {
	y := math.Erfinv(x)
	if math.IsInf(y, 0) || math.IsNaN(y) || y == 0 {
		return y
	}
	d := 2 / math.SqrtPi * math.Exp(-y*y) // erf'(y)
	if ax := math.Abs(x); ax > 0.5 {
		ay := math.Abs(y)
		ay += (math.Erfc(ay) - (1 - ax)) / d
		return math.Copysign(ay, x)
	}
	return y - (math.Erf(y)-x)/d
}

// halfFloat is the set of 16-bit float element types, which compute in
// float32.
type halfFloat interface{ array.F16 | array.BF16 }

// halfLoad widens s into d (len(d) elements).
func halfLoad[H halfFloat](d []float32, s []H) {
	switch s := any(s).(type) {
	case []array.F16:
		s = s[:len(d)]
		for i, v := range s {
			d[i] = v.Float32()
		}
	case []array.BF16:
		s = s[:len(d)]
		for i, v := range s {
			d[i] = v.Float32()
		}
	}
}

// halfStore rounds s into d (len(d) elements), ties to even.
func halfStore[H halfFloat](d []H, s []float32) {
	switch d := any(d).(type) {
	case []array.F16:
		s = s[:len(d)]
		for i, v := range s {
			d[i] = array.NewF16(v)
		}
	case []array.BF16:
		s = s[:len(d)]
		for i, v := range s {
			d[i] = array.NewBF16(v)
		}
	}
}

func halfUnary[H halfFloat](op opset.UnaryOp, out, x Buf) {
	switch op {
	case opset.LogicalNot, opset.IsNaN, opset.IsInf:
		k := floatPredicate[float32](op)
		runUnary(out, x, func(n int) func(d []bool, s []H) {
			t := make([]float32, tileFor(n))
			return func(d []bool, s []H) {
				for i := 0; i < len(d); i += len(t) {
					m := min(len(t), len(d)-i)
					halfLoad(t[:m], s[i:i+m])
					k(d[i:i+m], t[:m])
				}
			}
		})
		return
	}
	k := floatKernel[float32](op)
	runUnary(out, x, func(n int) func(d, s []H) {
		t := make([]float32, tileFor(n))
		return func(d, s []H) {
			for i := 0; i < len(d); i += len(t) {
				m := min(len(t), len(d)-i)
				halfLoad(t[:m], s[i:i+m])
				k(t[:m], t[:m])
				halfStore(d[i:i+m], t[:m])
			}
		}
	})
}

func intUnary[T ewInt](op opset.UnaryOp) unaryRunner {
	var k func(d, s []T)
	switch op {
	case opset.LogicalNot, opset.IsNaN, opset.IsInf:
		return unaryKernel[T, bool](func(d []bool, s []T) {
			s = s[:len(d)]
			for i, v := range s {
				d[i] = op == opset.LogicalNot && v == 0
			}
		})
	case opset.Neg:
		k = func(d, s []T) {
			s = s[:len(d)]
			for i, v := range s {
				d[i] = -v
			}
		}
	case opset.Abs:
		k = func(d, s []T) {
			s = s[:len(d)]
			for i, v := range s {
				if v < 0 {
					v = -v
				}
				d[i] = v
			}
		}
	case opset.Sign:
		k = func(d, s []T) {
			s = s[:len(d)]
			one := T(1)
			for i, v := range s {
				switch {
				case v > 0:
					d[i] = one
				case v < 0:
					d[i] = -one
				default:
					d[i] = 0
				}
			}
		}
	case opset.Square:
		k = func(d, s []T) {
			s = s[:len(d)]
			for i, v := range s {
				d[i] = v * v
			}
		}
	case opset.Invert:
		k = func(d, s []T) {
			s = s[:len(d)]
			for i, v := range s {
				d[i] = ^v
			}
		}
	default: // Floor, Ceil, Round, Trunc: integers are already whole
		k = copyKernel[T]
	}
	return unaryKernel[T, T](k)
}

func boolPredicate(op opset.UnaryOp) func(d []bool, s []bool) {
	return func(d, s []bool) {
		s = s[:len(d)]
		for i, v := range s {
			d[i] = op == opset.LogicalNot && !v
		}
	}
}

func complexUnary(op opset.UnaryOp) unaryRunner {
	switch op {
	case opset.Abs:
		return unaryKernel[complex64, float32](func(d []float32, s []complex64) {
			s = s[:len(d)]
			for i, v := range s {
				d[i] = float32(math.Hypot(float64(real(v)), float64(imag(v))))
			}
		})
	case opset.LogicalNot, opset.IsNaN, opset.IsInf:
		return unaryKernel[complex64, bool](func(d []bool, s []complex64) {
			s = s[:len(d)]
			for i, v := range s {
				re, im := float64(real(v)), float64(imag(v))
				switch op {
				case opset.LogicalNot:
					d[i] = v == 0
				case opset.IsNaN:
					d[i] = re != re || im != im
				default:
					d[i] = math.IsInf(re, 0) || math.IsInf(im, 0)
				}
			}
		})
	case opset.Neg:
		return unaryKernel[complex64, complex64](func(d, s []complex64) {
			s = s[:len(d)]
			for i, v := range s {
				d[i] = -v
			}
		})
	case opset.Conj:
		return unaryKernel[complex64, complex64](func(d, s []complex64) {
			s = s[:len(d)]
			for i, v := range s {
				d[i] = complex(real(v), -imag(v))
			}
		})
	case opset.Real, opset.Imag, opset.Angle:
		return unaryKernel[complex64, float32](func(d []float32, s []complex64) {
			s = s[:len(d)]
			for i, v := range s {
				switch op {
				case opset.Real:
					d[i] = real(v)
				case opset.Imag:
					d[i] = imag(v)
				default:
					d[i] = float32(math.Atan2(float64(imag(v)), float64(real(v))))
				}
			}
		})
	case opset.Square:
		return unaryKernel[complex64, complex64](func(d, s []complex64) {
			s = s[:len(d)]
			for i, v := range s {
				d[i] = v * v
			}
		})
	}
	f := complexFuncs[op]
	return unaryKernel[complex64, complex64](func(d, s []complex64) {
		s = s[:len(d)]
		for i, v := range s {
			d[i] = complex64(f(complex128(v)))
		}
	})
}

// complexFuncs compute in complex128 and round once.
var complexFuncs = map[opset.UnaryOp]func(complex128) complex128{
	opset.Reciprocal: func(z complex128) complex128 { return 1 / z },
	opset.Sqrt:       cmplx.Sqrt,
	opset.Rsqrt:      func(z complex128) complex128 { return 1 / cmplx.Sqrt(z) },
	opset.Exp:        cmplx.Exp,
	opset.Log:        cmplx.Log,
	opset.Log2:       func(z complex128) complex128 { return cmplx.Log(z) / math.Ln2 },
	opset.Sin:        cmplx.Sin,
	opset.Cos:        cmplx.Cos,
	opset.Tan:        cmplx.Tan,
	opset.Sinh:       cmplx.Sinh,
	opset.Cosh:       cmplx.Cosh,
	opset.Tanh:       cmplx.Tanh,
}
