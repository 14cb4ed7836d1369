package cpu

import "math"

// The scalar float32 functions below are the pure-Go form of the vector
// kernels in vecmath_amd64.s: the same range reductions, polynomials and
// special-value handling, one element at a time. They serve builds
// without the assembly (other architectures, -tags noasm). The kernels
// fuse multiply-adds where these round twice, so the two may differ in
// the last bit; vecmath_test.go bounds both against package math.
//
// The log polynomial is Cephes' (Moshier). The others were fitted in
// float64 as weighted minimax approximations (Lawson's algorithm) and
// rounded to float32, coefficient by coefficient, refitting the rest after
// each rounding.

// The generator of the kernels (internal/asmgen/vecmath) reads the
// constants and coefficient tables below from this file, so that the two
// implementations cannot drift apart.
const (
	log2e        = 1.44269504088896341
	ln2Hi        = 0.693359375      // ln 2 to 9 bits: n*ln2Hi is exact for every n exp meets
	ln2Lo        = -2.12194440e-4   // ln 2 - ln2Hi
	roundMagic   = 12582912         // 1.5 * 2^23: x + roundMagic - roundMagic rounds |x| < 2^22 to an integer
	expLo        = -104             // exp(-104) < 2^-150 rounds to 0
	expHi        = 88.8             // exp(88.8) > MaxFloat32 overflows
	expm1Lo      = -18              // expm1(-18) rounds to -1
	tinyArg      = 0x1p-25          // below this, expm1 and log1p are the identity
	tanhMax      = 12               // |x| is clamped to this; tanh rounds to 1 from 9.01 on
	tanhBase     = 0x3d800000 >> 22 // bits>>22 of 2^-4, in tanhTab's first interval, [0, 1.5*2^-4)
	erfSmall     = 0.875            // below this, erf is its odd polynomial
	erfHi        = 4                // erf(4) rounds to 1
	sqrtHalf     = 0x3f3504f3       // bits of sqrt(1/2)
	sinCosMax    = 71476.0625       // above this, sin and cos reduce with package math
	twoOverPi    = 0.636619772367581343
	pio2Hi       = 1.5707963267341256     // π/2 to 33 bits, so n*pio2Hi is exact
	pio2Lo       = 6.0771005065061922e-11 // π/2 - pio2Hi
	roundMagic64 = 6755399441055744       // 1.5 * 2^52, roundMagic for float64
)

// expP approximates (e^r - 1 - r) / r² on [-ln2/2, ln2/2], for exp and
// expm1 alike.
var expP = [...]float32{0.5, 0.166666672, 0.0416664556, 0.00833328441, 0.00139345438, 0.000199089016}

// logP is Cephes' logf polynomial: log(1+f) = f - f²/2 + f³ logP(f) for
// f in [sqrt(1/2)-1, sqrt(2)-1].
var logP = [...]float32{
	3.3333331174e-1, -2.4999993993e-1, 2.0000714765e-1, -1.6668057665e-1, 1.4249322787e-1,
	-1.2420140846e-1, 1.1676998740e-1, -1.1514610310e-1, 7.0376836292e-2,
}

// tanhTab holds, for each of 16 intervals of |x|, a center c and the
// coefficients of the polynomial p with tanh(c + t) = p(t): row
// {c, p0, ..., p7}. Interval i holds the |x| whose bits shifted right by
// 22 (exponent and first mantissa bit) are tanhBase+i, half a binade from
// 2^-4 on; the first reaches down to 0 (an odd polynomial there), the last
// up to tanhMax, where tanh rounds to 1. Each center is one whose tanh is
// within a hundredth of an ulp of a float32, p0.
var tanhTab = [16][9]float32{
	{0, 0, 1, 0, -0.333333343, 0, 0.133335963, 0, -0.0539613478},
	{0.109226078, 0.108793773, 0.988163888, -0.107506298, -0.317520231, 0.071428895, 0, 0, 0},
	{0.1560269, 0.154772982, 0.97604531, -0.151065201, -0.301859289, 0.096773535, 0, 0, 0},
	{0.218745515, 0.215322062, 0.953636408, -0.205338746, -0.273590654, 0.127045631, 0, 0, 0},
	{0.312009484, 0.302264094, 0.908636391, -0.274648041, -0.219845295, 0.157719776, 0.0430165678, 0, 0},
	{0.437508523, 0.411577135, 0.830604315, -0.341857523, -0.136206657, 0.169712707, 0, 0, 0},
	{0.625106633, 0.554673553, 0.692337275, -0.384021133, -0.017782649, 0.137857869, -0.0541450419, -0.02359787, 0},
	{0.875141978, 0.703977227, 0.504416049, -0.355098695, 0.0818431601, 0.0610289015, -0.0587007403, 0, 0},
	{1.24871969, 0.847924232, 0.281024367, -0.238287523, 0.108391076, -0.0124598425, -0.0198197458, 0.015108238, 0},
	{1.74804819, 0.94115299, 0.114230998, -0.107508861, 0.0631119609, -0.0235587638, 0.00345863122, 0.00210238923, 0},
	{2.50221896, 0.986673176, 0.0264760498, -0.0261230748, 0.0169493668, -0.00801912881, 0.0028521975, -0.000698016724, 5.92835095e-05},
	{3.50319934, 0.998189509, 0.00361777097, -0.00361121539, 0.00239650579, -0.00118954468, 0.000487199432, -0.000157629533, 0},
	{5.0053792, 0.999910176, 0.000179632771, -0.00017973737, 0.000119824952, -5.91630924e-05, 2.36128108e-05, -9.11078132e-06, 2.61579476e-06},
	{6.99823713, 0.999998331, 3.34447577e-06, -3.26669578e-06, 2.17642719e-06, -1.33652384e-06, 5.31641547e-07, 0, 0},
	{10.0190725, 1, 2.91320146e-09, -4.74366901e-09, 1.20551364e-08, -5.67076075e-09, 0, 0, 0},
	{14, 1, 0, 0, 0, 0, 0, 0, 0},
}

// erfP approximates erf(x)/x - 1 in x² for |x| < erfSmall.
var erfP = [...]float32{
	0.128379166, -0.376126349, 0.11283733, -0.0268615838, 0.00520674745, -0.000821110385, 8.67539202e-05,
}

// erfQ approximates log(erfc(x)) for x in [erfSmall, erfHi], weighted by
// erfc(x)/erf(x) so that erf = 1 - e^erfQ(x) keeps its relative accuracy.
var erfQ = [...]float32{
	0.000138788324, -1.12931764, -0.633812487, -0.107664123, 0.0246201009, -0.00391721632, 0.00035546135,
	-7.33854677e-06, -1.02589775e-06,
}

// sinP and cosP give sin(r) = r + r³ sinP(r²) and cos(r) = cosP(r²)
// for |r| <= π/4.
var (
	sinP = [...]float32{-0.166666672, 0.00833332911, -0.000198393274, 2.71823728e-06}
	cosP = [...]float32{1, -0.5, 0.0416666456, -0.00138873095, 2.44324128e-05}
)

// horner evaluates the polynomial c[0] + c[1] x + ... at x.
func horner(c []float32, x float32) float32 {
	p := c[len(c)-1]
	for i := len(c) - 2; i >= 0; i-- {
		p = p*x + c[i]
	}
	return p
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// withSign returns y with the sign bit of y xor the sign bit of x: the
// odd functions compute on |x| and take x's sign last, which also keeps
// f(-0) = -0.
func withSign(y, x float32) float32 {
	return math.Float32frombits(math.Float32bits(y) ^ math.Float32bits(x)&(1<<31))
}

// clamp returns x limited to [lo, hi], and NaN for NaN, like the
// kernels' min and max; branches here beat Go's min and max, which order
// zeros and NaNs at a cost the kernels do not need.
func clamp(x, lo, hi float32) float32 {
	if x < lo {
		return lo
	}
	if x > hi {
		return hi
	}
	return x
}

// pow2 returns 2^n for n in [-126, 127].
func pow2(n int32) float32 { return math.Float32frombits(uint32(n+127) << 23) }

// expReduce splits x (already clamped) as n ln2 + r with |r| <= ln2/2
// (a hair more when x*log2e rounds across a half).
func expReduce(x float32) (n, r float32) {
	n = x*log2e + roundMagic - roundMagic
	r = x - n*ln2Hi
	r = r - n*ln2Lo
	return n, r
}

// goExp is e^x. The scale 2^n is applied in two halves so that results
// in the subnormal range and near overflow round once, like math.Exp.
func goExp(x float32) float32 {
	n, r := expReduce(clamp(x, expLo, expHi))
	y := horner(expP[:], r)*(r*r) + r + 1
	k := int32(n)
	k1 := k >> 1
	return y * pow2(k1) * pow2(k-k1)
}

// goExpm1 is e^x - 1 computed as 2^n expm1(r) + (2^n - 1): the
// polynomial keeps expm1(r) accurate near 0, and 2^(n-1) halves keep
// every scale factor finite up to overflow.
func goExpm1(x float32) float32 {
	if abs32(x) < tinyArg {
		return x
	}
	n, r := expReduce(clamp(x, expm1Lo, expHi))
	t := horner(expP[:], r)*(r*r) + r
	s := pow2(int32(n) - 1)
	return 2 * (s*t + (s - 0.5))
}

// goLog is the natural logarithm: x = 2^k m with m in [sqrt(1/2),
// sqrt(2)), log x = k ln2 + log m. Subnormal x is scaled by 2^23 first.
func goLog(x float32) float32 {
	switch {
	case x < 0:
		return float32(math.NaN())
	case x == 0:
		return float32(math.Inf(-1))
	case !(x < float32(math.Inf(1))): // +Inf and NaN
		return x
	}
	var k int32
	if x < 0x1p-126 {
		x *= 0x1p23
		k = -23
	}
	ix := math.Float32bits(x) - sqrtHalf
	k += int32(ix) >> 23
	f := math.Float32frombits(ix&(1<<23-1)+sqrtHalf) - 1
	z := f * f
	y := horner(logP[:], f) * f * z
	fk := float32(k)
	y = fk*ln2Lo + y
	y = z*-0.5 + y
	y = f + y
	return fk*ln2Hi + y
}

// goLog1p is log(1+x): log(u) of the rounded u = 1+x plus err/u, the
// first-order term of the rounding error err = (1+x) - u, which TwoSum
// gives exactly.
func goLog1p(x float32) float32 {
	switch {
	case abs32(x) < tinyArg:
		return x
	case x == -1:
		return float32(math.Inf(-1))
	case x == float32(math.Inf(1)):
		return x
	}
	u := 1 + x
	b := u - 1
	a := u - b
	err := (1 - a) + (x - b)
	return goLog(u) + err/u
}

// goTanh is tanh x: the polynomial of |x|'s interval in tanhTab, with
// x's sign.
func goTanh(x float32) float32 {
	a := clamp(abs32(x), 0, tanhMax)
	// a NaN a indexes some interval and stays NaN
	c := &tanhTab[max(int32(math.Float32bits(a)>>22)-tanhBase, 0)&15]
	return withSign(horner(c[1:], a-c[0]), x)
}

// goSigmoid is 1/(1+e^-x), as e/(1+e) with e = e^x for negative x so
// that e never overflows and tiny results keep their precision.
func goSigmoid(x float32) float32 {
	e := goExp(-abs32(x))
	// the numerator, 1 or e, chosen by x's sign bit without a branch, which
	// mixed signs would mispredict (for -0, e is 1 either way)
	neg := uint32(int32(math.Float32bits(x)) >> 31)
	num := math.Float32frombits(math.Float32bits(e)&neg | math.Float32bits(1)&^neg)
	return num / (1 + e)
}

// goErf is the error function: x + x erfP(x²) below erfSmall, else
// 1 - e^erfQ(|x|).
func goErf(x float32) float32 {
	a := abs32(x)
	var y float32
	if a < erfSmall {
		y = horner(erfP[:], a*a)*a + a
	} else {
		y = 1 - goExp(horner(erfQ[:], clamp(a, 0, erfHi)))
	}
	return withSign(y, x)
}

// sinCosReduce splits a in [0, sinCosMax] as n π/2 + r with |r| <= π/4
// (a hair more at rounding ties). The kernels reduce in float32 with
// fused multiply-adds; without them the exact steps need float64.
func sinCosReduce(a float32) (r float32, n int32) {
	d := float64(a)
	fn := d*twoOverPi + roundMagic64 - roundMagic64
	d = d - fn*pio2Hi
	d = d - fn*pio2Lo
	return float32(d), int32(fn)
}

// sinCosPoly returns sin(n π/2 + r).
func sinCosPoly(r float32, n int32) float32 {
	z := r * r
	var y float32
	if n&1 == 0 {
		y = horner(sinP[:], z)*z*r + r
	} else {
		y = horner(cosP[:], z)
	}
	if n&2 != 0 {
		y = -y
	}
	return y
}

// goSin is sin x: sin(|x|) by quadrant, with x's sign. Arguments beyond
// sinCosMax (and ±Inf) go to math.Sin, whose reduction is exact.
func goSin(x float32) float32 {
	a := abs32(x)
	if a > sinCosMax {
		return float32(math.Sin(float64(x)))
	}
	r, n := sinCosReduce(a)
	return withSign(sinCosPoly(r, n), x)
}

// goSqrt is √x, rounded once: float64's square root of a float32 has
// enough bits that rounding it to float32 gives the correctly rounded
// float32 root, as the kernels' VSQRTPS.
func goSqrt(x float32) float32 { return float32(math.Sqrt(float64(x))) }

// goCos is cos x = sin(|x| + π/2).
func goCos(x float32) float32 {
	a := abs32(x)
	if a > sinCosMax {
		return float32(math.Cos(float64(x)))
	}
	r, n := sinCosReduce(a)
	return sinCosPoly(r, n+1)
}
