package cpu

import (
	"math"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/opset"
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
// with sums in float64; float64 computes in float64. The float32 vector
// kernels first add the exponentials a few at a time in float32 (four
// vectors pairwise along a line, smBlock rows of a panel), which keeps the
// relative error of a sum below 2^-21 however long the line: the terms
// are positive, so those roundings cannot cancel.

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
	l := newRedLines(in, out, axis, kind != smLogSumExp)
	if l.count == 0 || (l.n == 0 && kind != smLogSumExp) {
		return nil
	}
	switch in.DType {
	case array.Float32:
		smRun(kind, l, redIO[float32]{x: elems[float32](in), o: elems[float32](out)}, smFloat32)
	case array.Float64:
		smRun(kind, l, redIO[float64]{x: elems[float64](in), o: elems[float64](out)}, smFloat64)
	default:
		smRun(kind, l, redIO[float32]{load: redLoadHalf(in), store: redStoreHalf(out)}, smFloat32)
	}
	return nil
}

type smFloat interface{ float32 | float64 }

// smOps are the loops the softmax family is made of, for one element
// type: vector kernels for float32 where the machine has them, Go loops
// otherwise. They are the only loops over elements.
type smOps[C smFloat] struct {
	// max is the largest element of x, NaN if x holds one, -inf if x is
	// empty.
	max func(x []C) C
	// expScale sets o[i] = exp(x[i]-m)*c and returns the sum of the
	// exp(x[i]-m); o nil computes the sum only.
	expScale func(o, x []C, m, c C) float64
	// affine sets o[i] = ((x[i]-a)*c)-b, rounding each operation.
	affine func(o, x []C, a, c, b C)
	// The panel loops work element by element across lines: maxEach sets
	// m[i] to the larger of m[i] and x[i] or the NaN among them, expEach
	// sets o[i] = exp(x[i]-m[i]), add, mul and sub are o = a op b.
	maxEach       func(m, x []C)
	expEach       func(o, x, m []C)
	add, mul, sub func(o, a, b []C)
}

// smBlock is how many rows of a panel are summed in C before joining the
// float64 totals.
const smBlock = 8

// smRun runs one kind over every line: neighbouring lines together when
// they interleave in memory (smColumns), a few long lines in parts
// (smSplit), or one line at a time, each in three passes: the maximum,
// the shifted exponentials and their sum (stored for Softmax), then the
// results.
func smRun[C smFloat](kind smKind, l *redLines, io redIO[C], ops *smOps[C]) {
	switch {
	case l.columnar(8):
		smColumns(kind, l, io, ops)
	case l.count < redFewTasks && l.n >= 2*redPart && io.load == nil && io.store == nil && l.sIn == 1 && (kind == smLogSumExp || l.sOut == 1):
		smSplit(kind, l, io, ops)
	default:
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
				m := ops.max(x)
				if kind == smLogSumExp {
					m = smShift(m)
					ob[0] = C(math.Log(ops.expScale(nil, x, m, 1)) + float64(m))
					io.write(outOff, 1, ob[:1])
					return
				}
				o := io.target(outOff, l.n, l.sOut, ob)
				if kind == smSoftmax {
					s := ops.expScale(o, x, m, 1)
					ops.affine(o, o, 0, C(1/s), 0)
				} else {
					m = smShift(m)
					ls := math.Log(ops.expScale(nil, x, m, 1))
					ops.affine(o, x, m, 1, C(ls))
				}
				io.write(outOff, l.sOut, o)
			}
		})
	}
}

// smSplit runs one kind over a few long contiguous lines, each cut into
// parts of redPart elements that are computed in parallel, pass by pass;
// the parts' maxima and sums are joined in order. Softmax takes the
// exponentials a second time in its last pass rather than storing them in
// the second, which saves writing and reading back a line too long for
// the caches.
func smSplit[C smFloat](kind smKind, l *redLines, io redIO[C], ops *smOps[C]) {
	parts := (l.n + redPart - 1) / redPart
	pm, ps := make([]C, l.count*parts), make([]float64, l.count*parts)
	l.eachPart(parts, func(t, in, _, n int) { pm[t] = ops.max(io.x[in : in+n]) })
	m, ls := make([]C, l.count), make([]float64, l.count)
	for line := range m {
		m[line] = ops.max(pm[line*parts : (line+1)*parts])
		if kind != smSoftmax {
			m[line] = smShift(m[line])
		}
	}
	l.eachPart(parts, func(t, in, _, n int) { ps[t] = ops.expScale(nil, io.x[in:in+n], m[t/parts], 1) })
	for line := range ls {
		s := 0.0
		for _, v := range ps[line*parts : (line+1)*parts] {
			s += v
		}
		if kind == smSoftmax {
			ls[line] = 1 / s
		} else {
			ls[line] = math.Log(s)
		}
	}
	if kind == smLogSumExp {
		for line, v := range ls {
			_, out := redOffsets(l.shape, l.kin, l.kout, line)
			io.o[l.outOff+out] = C(v + float64(m[line]))
		}
		return
	}
	l.eachPart(parts, func(t, in, out, n int) {
		x, o := io.x[in:in+n], io.o[out:out+n]
		if kind == smSoftmax {
			ops.expScale(o, x, m[t/parts], C(ls[t/parts]))
		} else {
			ops.affine(o, x, m[t/parts], 1, C(ls[t/parts]))
		}
	})
}

// smColumns runs one kind over neighbouring lines together, reading the
// input a row across them at a time, in panels of up to redTile lines,
// in three passes over the rows: the maxima, the sums of the shifted
// exponentials, then the results. When there are few panels, their rows
// are cut into parts too; the parts' maxima and sums are joined in order
// between the passes. The sums are taken smBlock rows at a time in C and
// joined to float64 totals: at most eight roundings of a float32 per
// term, a relative error below 2^-21 however long the lines.
func smColumns[C smFloat](kind smKind, l *redLines, io redIO[C], ops *smOps[C]) {
	cp := l.colPlan(true)
	kIn, kOut, tw, cols, parts, rowsPer := cp.kIn, cp.kOut, cp.tw, cp.cols, cp.parts, cp.rowsPer
	tasks := cols * parts
	// pm holds each task's maxima, then in each column's first task the
	// line maxima (shifted); ps each task's sums; f what the last pass
	// applies: 1/sum or log(sum).
	pm, ps, f := make([]C, tasks*tw), make([]float64, tasks*tw), make([]C, cols*tw)
	scratch := newRedScratch(func() []C { return make([]C, 3*tw) })
	pass := func(body func(t int, p panel, xb, e, blk []C)) {
		ParallelFor(tasks, max(1, grain/(rowsPer*tw)), func(lo, hi int) {
			b := scratch.get()
			defer scratch.put(b)
			for t := lo; t < hi; t++ {
				p := l.panel(cp, t)
				body(t, p, b[:p.w], b[tw:][:p.w], b[2*tw:][:p.w])
			}
		})
	}
	row := func(p panel, r int, xb []C) []C { return io.read(p.in+r*l.sIn, p.w, kIn, xb) }
	// lineMax is the line maxima of task t's panel, w wide.
	lineMax := func(t, w int) []C { return pm[t/parts*parts*tw:][:w] }
	pass(func(t int, p panel, xb, _, _ []C) {
		m := pm[t*tw:][:p.w]
		for i := range m {
			m[i] = C(math.Inf(-1))
		}
		for r := p.r0; r < p.r1; r++ {
			ops.maxEach(m, row(p, r, xb))
		}
	})
	for c := range cols {
		m := lineMax(c*parts, l.panel(cp, c*parts).w)
		for q := 1; q < parts; q++ {
			ops.maxEach(m, pm[(c*parts+q)*tw:][:len(m)])
		}
		if kind != smSoftmax {
			for i, v := range m {
				m[i] = smShift(v)
			}
		}
	}
	pass(func(t int, p panel, xb, e, blk []C) {
		m, s := lineMax(t, p.w), ps[t*tw:][:p.w]
		clear(blk)
		for r := p.r0; r < p.r1; r++ {
			ops.expEach(e, row(p, r, xb), m)
			ops.add(blk, blk, e)
			if (r-p.r0+1)%smBlock == 0 || r == p.r1-1 {
				for i, v := range blk {
					s[i] += float64(v)
				}
				clear(blk)
			}
		}
	})
	for c := range cols {
		p := l.panel(cp, c*parts)
		s, m, fc := ps[c*parts*tw:][:p.w], lineMax(c*parts, p.w), f[c*tw:][:p.w]
		for q := 1; q < parts; q++ {
			for i, v := range ps[(c*parts+q)*tw:][:p.w] {
				s[i] += v
			}
		}
		switch kind {
		case smLogSumExp:
			for i, v := range s {
				fc[i] = C(math.Log(v) + float64(m[i]))
			}
			io.write(p.out, kOut, fc)
		case smSoftmax:
			for i, v := range s {
				fc[i] = C(1 / v)
			}
		default:
			for i, v := range s {
				fc[i] = C(math.Log(v))
			}
		}
	}
	if kind == smLogSumExp {
		return
	}
	pass(func(t int, p panel, xb, ob, _ []C) {
		m, fc := lineMax(t, p.w), f[t/parts*tw:][:p.w]
		for r := p.r0; r < p.r1; r++ {
			x := row(p, r, xb)
			o := io.target(p.out+r*l.sOut, p.w, kOut, ob)
			if kind == smSoftmax {
				ops.expEach(o, x, m)
				ops.mul(o, o, fc)
			} else {
				ops.sub(o, x, m)
				ops.sub(o, o, fc)
			}
			io.write(p.out+r*l.sOut, kOut, o)
		}
	})
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

// smFloat32 and smFloat64 are the loops for float32 and float64.
var (
	smFloat32 = smOps32(vecBest)
	smFloat64 = smGo(expScale64, expEach64)
)

// smGo returns the Go loops, with the exponential loops given.
func smGo[C smFloat](expScale func(o, x []C, m, c C) float64, expEach func(o, x, m []C)) *smOps[C] {
	return &smOps[C]{
		max: smMax[C], expScale: expScale, affine: affineGo[C],
		maxEach: maxEachGo[C], expEach: expEach,
		add: addKernel[C]().vv, mul: mulKernel[C]().vv, sub: subKernel[C]().vv,
	}
}

// smOps32 returns the float32 loops with impl's kernels, or in Go
// without (impl nil).
func smOps32(impl *vecImpl) *smOps[float32] {
	ops := smGo(expScale32, expEach32)
	if impl == nil {
		return ops
	}
	bin := vecArithLoops(impl, false)
	vmax := vecReduceRuns(impl)[opset.Max]
	maximum, sub := bin[opset.Maximum].vv, bin[opset.Sub].vv
	ops.max = func(x []float32) float32 { return vmax(float32(math.Inf(-1)), x) }
	ops.expScale = func(o, x []float32, m, c float32) float64 {
		if o == nil {
			return impl.expSum(x, m)
		}
		return impl.expScale(o[:len(x)], x, m, c)
	}
	ops.affine = func(o, x []float32, a, c, b float32) { impl.affine(o, x[:len(o)], a, c, b) }
	ops.maxEach = func(m, x []float32) { maximum(m, m, x) }
	ops.expEach = func(o, x, m []float32) {
		sub(o, x, m)
		vecApply(impl, vecExp, o, o)
	}
	ops.add, ops.mul, ops.sub = bin[opset.Add].vv, bin[opset.Mul].vv, sub
	return ops
}

func expScale32(o, x []float32, m, c float32) float64 {
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
		o[i] = e * c
		s += float64(e)
	}
	return s
}

func expScale64(o, x []float64, m, c float64) float64 {
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
		o[i] = e * c
		s += e
	}
	return s
}

func affineGo[C smFloat](o, x []C, a, c, b C) {
	x = x[:len(o)]
	for i, v := range x {
		// the conversion keeps the compiler from fusing the multiply and
		// subtract, which the kernels do not
		o[i] = C((v-a)*c) - b
	}
}

func maxEachGo[C smFloat](m, x []C) {
	x = x[:len(m)]
	for i, v := range x {
		if v > m[i] || v != v {
			m[i] = v
		}
	}
}

func expEach32(o, x, m []float32) {
	x, m = x[:len(o)], m[:len(o)]
	for i := range o {
		o[i] = smExp32(x[i] - m[i])
	}
}

func expEach64(o, x, m []float64) {
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
