package cpu

import (
	"math"

	"github.com/fathom-go/fathom/array"
)

// The softmax family follows scipy.special's formulas exactly, which makes
// them stable for large inputs and fixes what happens at the edges:
//
//	softmax(x)     = exp(x - m) / sum(exp(x - m))           m = max(x)
//	logsumexp(x)   = log(sum(exp(x - m'))) + m'             m' = m, or 0 if m is not finite
//	log_softmax(x) = (x - m') - log(sum(exp(x - m')))
//
// So a line that is all -inf gives NaN from Softmax and LogSoftmax and -inf
// from LogSumExp; a +inf gives NaN from Softmax and LogSoftmax and +inf from
// LogSumExp; a NaN anywhere gives NaN. The logsumexp of an empty line is
// -inf (scipy raises). float32, float16 and bfloat16 compute in float32
// with sums in float64; float64 computes in float64.

type smKind uint8

const (
	smSoftmax smKind = iota
	smLogSoftmax
	smLogSumExp
)

// Softmax writes exp(x - max) / sum(exp(x - max)) along axis of in to out
// (same shape and dtype, a float dtype).
func Softmax(out, in Buf, axis int) error {
	return softmaxFamily("cpu.Softmax", smSoftmax, out, in, axis)
}

// LogSoftmax writes the logarithm of Softmax, computed without forming
// the softmax (see the formulas above).
func LogSoftmax(out, in Buf, axis int) error {
	return softmaxFamily("cpu.LogSoftmax", smLogSoftmax, out, in, axis)
}

// LogSumExp writes log(sum(exp(x))) along axis of in to out (in's shape
// without the axis, in's float dtype), shifted by the maximum so large
// inputs do not overflow.
func LogSumExp(out, in Buf, axis int) error {
	return softmaxFamily("cpu.LogSumExp", smLogSumExp, out, in, axis)
}

func softmaxFamily(name string, kind smKind, out, in Buf, axis int) error {
	if !in.DType.IsFloat() {
		return array.Errorf(name, "dtype %v is not a float dtype", in.DType)
	}
	if out.DType != in.DType {
		return array.Errorf(name, "output dtype %v, want %v", out.DType, in.DType)
	}
	if err := checkAxisBufs(name, out, in, axis, kind == smLogSumExp); err != nil {
		return err
	}
	l := newRedLines(in, out, axis, kind != smLogSumExp)
	if l.count == 0 || (l.n == 0 && kind != smLogSumExp) {
		return nil
	}
	switch in.DType {
	case array.Float32:
		smRun(kind, l, redIO[float32]{x: Elems[float32](in), o: Elems[float32](out)}, expShift32, expShiftVec32)
	case array.Float64:
		smRun(kind, l, redIO[float64]{x: Elems[float64](in), o: Elems[float64](out)}, expShift64, expShiftVec64)
	default:
		smRun(kind, l, redIO[float32]{load: redLoadHalf(in), store: redStoreHalf(out)}, expShift32, expShiftVec32)
	}
	return nil
}

type smFloat interface{ float32 | float64 }

// smRun runs one kind over every line. expShift sets o[i] = exp(x[i]-m)
// and returns the sum of those (o nil: only the sum); expShiftVec sets
// o[i] = exp(x[i]-m[i]). They are the only loops that call exp, so they
// are written per type and everything else is shared.
func smRun[C smFloat](kind smKind, l *redLines, io redIO[C], expShift func(o, x []C, m C) float64, expShiftVec func(o, x, m []C)) {
	if l.columnar(8) {
		l.panels(redTile, func() func(inOff, outOff, w, kIn, kOut int) {
			m, e, xb, ob := make([]C, redTile), make([]C, redTile), make([]C, redTile), make([]C, redTile)
			s := make([]float64, redTile)
			return func(inOff, outOff, w, kIn, kOut int) {
				smPanel(kind, l, &io, expShiftVec, inOff, outOff, w, kIn, kOut, m[:w], s[:w], e[:w], xb, ob)
			}
		})
		return
	}
	l.each(func() func(inOff, outOff int) {
		var xb, ob []C
		if io.load != nil || l.sIn != 1 {
			xb = make([]C, l.n)
		}
		if kind != smLogSumExp || io.store != nil || l.sOut != 1 {
			ob = make([]C, max(l.n, 1))
		}
		return func(inOff, outOff int) {
			x := io.read(inOff, l.n, l.sIn, xb)
			if kind == smLogSumExp {
				m := smShift(smMax(x))
				v := C(math.Log(expShift(nil, x, m)) + float64(m))
				ob[0] = v
				io.write(outOff, 1, ob[:1])
				return
			}
			o := io.target(outOff, l.n, l.sOut, ob)
			m := smMax(x)
			if kind == smSoftmax {
				inv := 1 / expShift(o, x, m)
				for i, v := range o {
					o[i] = C(float64(v) * inv)
				}
			} else {
				m = smShift(m)
				// o holds the exponentials only until they are summed.
				ls := math.Log(expShift(o, x, m))
				for i, v := range x {
					o[i] = C(float64(v-m) - ls)
				}
			}
			io.write(outOff, l.sOut, o)
		}
	})
}

// smPanel runs one kind over w neighbouring lines at once, reading the
// input a row at a time: the maximum of every line, then the sums of the
// shifted exponentials, then the results.
func smPanel[C smFloat](kind smKind, l *redLines, io *redIO[C], expShiftVec func(o, x, m []C), inOff, outOff, w, kIn, kOut int, m []C, s []float64, e, xb, ob []C) {
	row := func(t int) []C { return io.read(inOff+t*l.sIn, w, kIn, xb) }
	for i := range m {
		m[i] = C(math.Inf(-1))
	}
	clear(s)
	for t := range l.n {
		for i, v := range row(t) {
			if v > m[i] || v != v {
				m[i] = v
			}
		}
	}
	if kind != smSoftmax {
		for i, v := range m {
			m[i] = smShift(v)
		}
	}
	for t := range l.n {
		expShiftVec(e, row(t), m)
		for i, v := range e {
			s[i] += float64(v)
		}
	}
	switch kind {
	case smLogSumExp:
		o := ob[:w]
		for i := range o {
			o[i] = C(math.Log(s[i]) + float64(m[i]))
		}
		io.write(outOff, kOut, o)
		return
	case smSoftmax:
		for i, v := range s {
			s[i] = 1 / v
		}
	default:
		for i, v := range s {
			s[i] = math.Log(v)
		}
	}
	for t := range l.n {
		x := row(t)
		o := io.target(outOff+t*l.sOut, w, kOut, ob)
		if kind == smSoftmax {
			expShiftVec(o, x, m)
			for i, v := range o {
				o[i] = C(float64(v) * s[i])
			}
		} else {
			for i, v := range x {
				o[i] = C(float64(v-m[i]) - s[i])
			}
		}
		io.write(outOff+t*l.sOut, kOut, o)
	}
}

// smMax is the maximum of x, NaN if x holds one, -inf if x is empty.
func smMax[C smFloat](x []C) C {
	m := C(math.Inf(-1))
	for _, v := range x {
		if v > m {
			m = v
		} else if v != v {
			return v
		}
	}
	return m
}

// smShift is scipy's shift for logsumexp and log_softmax: the maximum, or
// 0 when it is infinite or NaN (m-m is NaN exactly then).
func smShift[C smFloat](m C) C {
	if m-m != 0 {
		return 0
	}
	return m
}

func expShift32(o, x []float32, m float32) float64 {
	s := 0.0
	if o == nil {
		for _, v := range x {
			s += float64(smExp32(v - m))
		}
		return s
	}
	o = o[:len(x)]
	for i, v := range x {
		e := smExp32(v - m)
		o[i] = e
		s += float64(e)
	}
	return s
}

func expShiftVec32(o, x, m []float32) {
	x, m = x[:len(o)], m[:len(o)]
	for i := range o {
		o[i] = smExp32(x[i] - m[i])
	}
}

func expShift64(o, x []float64, m float64) float64 {
	s := 0.0
	if o == nil {
		for _, v := range x {
			s += math.Exp(v - m)
		}
		return s
	}
	o = o[:len(x)]
	for i, v := range x {
		e := math.Exp(v - m)
		o[i] = e
		s += e
	}
	return s
}

func expShiftVec64(o, x, m []float64) {
	x, m = x[:len(o)], m[:len(o)]
	for i := range o {
		o[i] = math.Exp(x[i] - m[i])
	}
}

// smExp32 is exp for float32, correctly rounded but for rare ties (at
// most 0.502 ulp) and small enough to be inlined into the loops above,
// which makes it several times faster than math.Exp. It is the algorithm
// of musl's and ARM's optimized-routines expf: in float64, x·32/ln2 = k + r
// with |r| <= 1/2, 2^(k/32) from a table of 32 powers with the integer part
// of k/32 added to the exponent bits, and 2^(r/32) from a cubic. Clamping
// the scaled argument keeps the exponent bits in range; the final
// conversion to float32 then overflows to +Inf and underflows to 0 or a
// subnormal exactly where exp does. NaN passes through the arithmetic.
func smExp32(x float32) float32 {
	const (
		invLn2N = 0x1.71547652b82fep+0 * 32
		shift   = 0x1.8p+52 // adding it rounds to an integer held in the low bits
		c0      = 0x1.c6af84b912394p-5 / 32 / 32 / 32
		c1      = 0x1.ebfce50fac4f3p-3 / 32 / 32
		c2      = 0x1.62e42ff0c52d6p-1 / 32
	)
	z := invLn2N * float64(x)
	if z < -5100 { // exp(-110) is far below float32's smallest subnormal
		z = -5100
	} else if z > 4700 { // exp(101) is far above float32's largest value
		z = 4700
	}
	kd := z + shift
	r := z - (kd - shift)
	ki := math.Float64bits(kd)
	return float32(((c0*r+c1)*(r*r) + (c2*r + 1)) * math.Float64frombits(smExpTab[ki%32]+ki<<47))
}

// smExpTab holds 2^(i/32) with i/32 taken out of the exponent bits, so
// adding k<<47 to entry k%32 gives 2^(k/32) for any integer k in range.
var smExpTab = func() (t [32]uint64) {
	for i := range t {
		t[i] = math.Float64bits(math.Exp2(float64(i)/32)) - uint64(i)<<47
	}
	return t
}()
