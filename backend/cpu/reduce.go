package cpu

import (
	"cmp"
	"math"
	"runtime"
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/opset"
)

// Reduce folds in over axes (sorted, distinct) with op and writes the
// result to out, whose shape is in's with those axes removed (the caller
// has checked both) and whose dtype is op.Result(in.DType). Both may be strided, and in may
// broadcast. No axes copies in (converting the dtype if needed).
//
// Empty folds give the identity: 0 for Sum, 1 for Prod, true for All,
// false for Any. Max and Min have none, so an empty fold is an error.
// Integers wrap like numpy's with the same dtype; float16 and bfloat16
// accumulate in float32 and round once on store. Floating-point sums are
// pairwise over contiguous runs (numpy's algorithm) and blocked over rows,
// and work is split over cores in parts of fixed size, so a result does not
// depend on the number of cores.
func Reduce(op opset.ReduceOp, out, in Buf, axes []int) error {
	const name = "cpu.Reduce"
	want, ok := op.Result(in.DType)
	if !ok {
		return array.Errorf(name, "%v of %v is not supported", op, in.DType)
	}
	if out.DType != want {
		return array.Errorf(name, "%v of %v gives %v, not %v", op, in.DType, want, out.DType)
	}
	p := newRedPlan(in, out, axes)
	if p.outs == 0 {
		return nil
	}
	if p.n == 0 && (op == opset.Max || op == opset.Min) {
		return array.Errorf(name, "%v over an empty axis of shape %v has no identity", op, in.Shape)
	}
	switch {
	case op == opset.All || op == opset.Any:
		k := ordKernel[uint8](opset.Max)
		if op == opset.All {
			k = ordKernel[uint8](opset.Min)
			k.ident = 1
		}
		k.io.o = elems[uint8](out)
		if in.DType == array.Bool {
			k.io.x = elems[uint8](in)
		} else {
			k.io.load = redLoadNonzero(in)
		}
		redRun(p, &k)
	case in.DType == array.Bool && (op == opset.Sum || op == opset.Prod):
		k := numKernel[int32](op)
		k.io = redIO[int32]{load: redLoadBoolInt(in), o: elems[int32](out)}
		redRun(p, &k)
	case in.DType == array.Bool:
		// bool is one byte holding 0 or 1, so max is "any" and min "all".
		k := ordKernel[uint8](op)
		if op == opset.Min {
			k.ident = 1
		}
		redDirect(p, &k, out, in)
	case in.DType == array.Float16 || in.DType == array.BFloat16:
		k := ordKernel[float32](op)
		k.io = redIO[float32]{load: redLoadHalf(in), store: redStoreHalf(out)}
		redRun(p, &k)
	case (op == opset.Sum || op == opset.Prod) && want != in.DType:
		// int8 and int16 accumulate in int32, uint8 and uint16 in uint32
		switch in.DType {
		case array.Int8:
			redWiden[int8, int32](p, op, out, in)
		case array.Int16:
			redWiden[int16, int32](p, op, out, in)
		case array.Uint8:
			redWiden[uint8, uint32](p, op, out, in)
		default:
			redWiden[uint16, uint32](p, op, out, in)
		}
	case in.DType == array.Uint8:
		k := ordKernel[uint8](op)
		redDirect(p, &k, out, in)
	case in.DType == array.Int8:
		k := ordKernel[int8](op)
		redDirect(p, &k, out, in)
	case in.DType == array.Int16:
		k := ordKernel[int16](op)
		redDirect(p, &k, out, in)
	case in.DType == array.Uint16:
		k := ordKernel[uint16](op)
		redDirect(p, &k, out, in)
	case in.DType == array.Uint32:
		k := ordKernel[uint32](op)
		redDirect(p, &k, out, in)
	case in.DType == array.Uint64:
		k := ordKernel[uint64](op)
		redDirect(p, &k, out, in)
	case in.DType == array.Int32:
		k := ordKernel[int32](op)
		redDirect(p, &k, out, in)
	case in.DType == array.Int64:
		k := ordKernel[int64](op)
		redDirect(p, &k, out, in)
	case in.DType == array.Float32:
		k := ordKernel[float32](op)
		redDirect(p, &k, out, in)
	case in.DType == array.Float64:
		k := ordKernel[float64](op)
		redDirect(p, &k, out, in)
	default:
		k := numKernel[complex64](op)
		redDirect(p, &k, out, in)
	}
	return nil
}

// redWiden runs Sum or Prod of elements of type S in the wider
// accumulator type A, which is out's.
func redWiden[S, A ewInt](p *redPlan, op opset.ReduceOp, out, in Buf) {
	k := numKernel[A](op)
	src := elems[S](in)
	k.io = redIO[A]{load: func(dst []A, off, stride int) {
		for i := range dst {
			dst[i] = A(src[off+i*stride])
		}
	}, o: elems[A](out)}
	redRun(p, &k)
}

func redDirect[A any](p *redPlan, k *redKernel[A], out, in Buf) {
	k.io.x, k.io.o = elems[A](in), elems[A](out)
	redRun(p, k)
}

// Tuning constants. Parts and tiles are fixed sizes rather than a share
// of the cores so that results are reproducible on every machine.
const (
	redTile     = 1024    // elements converted or staged at a time; columns per task
	redPart     = 1 << 16 // elements of one output's fold computed as one part
	redMaxParts = 64      // parts of one column fold
	redFewTasks = 16      // below this many outputs (or column tiles), folds are split into parts
	redBlock    = 128     // rows folded into a fresh accumulator before joining the total
	pairLeaf    = 128     // pairwise summation adds runs up to this long directly
)

// redPlan is a reduction's iteration space: the kept axes (with their
// input and output strides) and the folded axes. Size-1 axes are dropped
// and neighbours that step through memory together are merged. The order
// of the folded axes does not change the mathematical result, so they are
// sorted by decreasing stride first, which merges a transposed but dense
// input into one contiguous run.
type redPlan struct {
	outs, n       int   // output elements; input elements folded into each
	ks, kin, kout []int // kept axes: sizes, input strides, output strides
	rs, rin       []int // folded axes: sizes, input strides
	inOff, outOff int
}

func newRedPlan(in, out Buf, axes []int) *redPlan {
	p := &redPlan{outs: 1, n: 1, inOff: in.Offset, outOff: out.Offset}
	type dim struct{ size, stride int }
	var red []dim
	j := 0
	for i, d := range in.Shape {
		s := in.Strides[i]
		if slices.Contains(axes, i) {
			p.n *= d
			if d != 1 {
				red = append(red, dim{d, s})
			}
			continue
		}
		p.outs *= d
		so := out.Strides[j]
		j++
		if d == 1 {
			continue
		}
		if k := len(p.ks) - 1; k >= 0 && p.kin[k] == s*d && p.kout[k] == so*d {
			p.ks[k] *= d
			p.kin[k], p.kout[k] = s, so
			continue
		}
		p.ks, p.kin, p.kout = append(p.ks, d), append(p.kin, s), append(p.kout, so)
	}
	slices.SortStableFunc(red, func(a, b dim) int { return cmp.Compare(redAbs(b.stride), redAbs(a.stride)) })
	for _, r := range red {
		if k := len(p.rs) - 1; k >= 0 && p.rin[k] == r.stride*r.size {
			p.rs[k] *= r.size
			p.rin[k] = r.stride
			continue
		}
		p.rs, p.rin = append(p.rs, r.size), append(p.rin, r.stride)
	}
	return p
}

func redAbs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// redOffsets returns the offsets along two sets of strides of the element
// at row-major flat index flat of shape.
func redOffsets(shape, s1, s2 []int, flat int) (int, int) {
	a, b := 0, 0
	for d := len(shape) - 1; d >= 0; d-- {
		i := flat % shape[d]
		flat /= shape[d]
		a += i * s1[d]
		b += i * s2[d]
	}
	return a, b
}

// redIO reads the input and writes the output of a kernel whose
// arithmetic runs on elements of type A: directly when the buffers hold As,
// or through a loader and a storer that convert (float16 is read into
// float32, bool into int32, ...). Kernels see contiguous slices only;
// strided data is gathered into a scratch buffer and scattered back.
type redIO[A any] struct {
	x     []A                            // input elements, when they are As
	load  func(dst []A, off, stride int) // otherwise converts len(dst) elements
	o     []A                            // output elements, when they are As
	store func(off, stride int, src []A) // otherwise converts len(src) elements
}

// read returns the n elements at off, stride apart, as a contiguous slice:
// the input itself when it can, else a copy in buf.
func (io *redIO[A]) read(off, n, stride int, buf []A) []A {
	if n == 0 {
		return nil
	}
	if io.load != nil {
		b := buf[:n]
		io.load(b, off, stride)
		return b
	}
	if stride == 1 {
		return io.x[off : off+n]
	}
	b := buf[:n]
	for i := range b {
		b[i] = io.x[off+i*stride]
	}
	return b
}

// target returns where to compute n results bound for off, stride apart:
// the output itself when it is contiguous, else buf (then call write).
func (io *redIO[A]) target(off, n, stride int, buf []A) []A {
	if io.store == nil && stride == 1 && n > 0 {
		return io.o[off : off+n]
	}
	return buf[:n]
}

// write stores v at off, stride apart, unless v already is that part of
// the output (see target).
func (io *redIO[A]) write(off, stride int, v []A) {
	switch {
	case len(v) == 0:
	case io.store != nil:
		io.store(off, stride, v)
	case stride == 1:
		if &io.o[off] != &v[0] {
			copy(io.o[off:off+len(v)], v)
		}
	default:
		for i, x := range v {
			io.o[off+i*stride] = x
		}
	}
}

// redKernel is one reduction on accumulators of type A. run and vec see
// contiguous data; vec folds rows rows of len(acc) elements, the first at
// x[off] and the next rowStride further each.
type redKernel[A any] struct {
	ident A
	run   func(acc A, x []A) A
	vec   func(acc, x []A, off, rows, rowStride int)
	io    redIO[A]
}

// runAt folds n input elements at off, stride apart, into acc.
func (k *redKernel[A]) runAt(acc A, off, n, stride int, buf []A) A {
	if n == 0 {
		return acc
	}
	if k.io.load == nil && stride == 1 {
		return k.run(acc, k.io.x[off:off+n])
	}
	for n > 0 {
		m := min(n, len(buf))
		acc = k.run(acc, k.io.read(off, m, stride, buf))
		off += m * stride
		n -= m
	}
	return acc
}

// redRun picks the loop order: one output at a time (rows), or, when the
// kept axes step through memory faster than the folded ones (a column sum),
// whole rows of outputs accumulated together so the input is read in
// order.
func redRun[A any](p *redPlan, k *redKernel[A]) {
	if len(p.ks) > 0 && len(p.rs) > 0 && p.n > 1 {
		last := len(p.ks) - 1
		w, kIn := p.ks[last], p.kin[last]
		direct := k.io.load == nil && kIn == 1
		if (direct || w >= 16) && redAbs(kIn) < redAbs(p.rin[len(p.rs)-1]) {
			redColumns(p, k)
			return
		}
	}
	redRows(p, k)
}

func redRows[A any](p *redPlan, k *redKernel[A]) {
	rw := newWalker(p.rs, p.rin)
	rst := rw.InnerStrides()[0]
	single := len(rw.shape) == 1
	fold := func(base, lo, hi int, buf []A) A {
		if single {
			return k.runAt(k.ident, base+lo*rst, hi-lo, rst, buf)
		}
		acc := k.ident
		rw.Runs(lo, hi, []int{base}, func(offs []int, n int) {
			acc = k.runAt(acc, offs[0], n, rst, buf)
		})
		return acc
	}
	newBuf := func() []A {
		if k.io.load == nil && rst == 1 {
			return nil
		}
		return make([]A, min(redTile, max(p.n, 1)))
	}
	if p.outs >= redFewTasks || p.n < 2*redPart {
		kw := newWalker(p.ks, p.kin, p.kout)
		kst := kw.InnerStrides()
		ParallelFor(p.outs, max(1, grain/max(p.n, 1)), func(lo, hi int) {
			buf := newBuf()
			res := make([]A, min(hi-lo, redTile))
			kw.Runs(lo, hi, []int{p.inOff, p.outOff}, func(offs []int, m int) {
				for j := 0; j < m; j += len(res) {
					r := res[:min(len(res), m-j)]
					for i := range r {
						r[i] = fold(offs[0]+(j+i)*kst[0], 0, p.n, buf)
					}
					k.io.write(offs[1]+j*kst[1], kst[1], r)
				}
			})
		})
		return
	}
	// Few outputs with long folds (a sum of everything): each fold is cut
	// into parts computed in parallel and joined in order.
	parts := (p.n + redPart - 1) / redPart
	partial := make([]A, p.outs*parts)
	bufs := newRedScratch(newBuf)
	ParallelFor(len(partial), 1, func(lo, hi int) {
		buf := bufs.get()
		defer bufs.put(buf)
		for t := lo; t < hi; t++ {
			o, q := t/parts, t%parts
			inOff, _ := redOffsets(p.ks, p.kin, p.kout, o)
			partial[t] = fold(p.inOff+inOff, q*redPart, min(p.n, (q+1)*redPart), buf)
		}
	})
	for o := 0; o < p.outs; o++ {
		acc := partial[o*parts : (o+1)*parts]
		k.vec(acc[:1], acc, 1, parts-1, 1)
		_, outOff := redOffsets(p.ks, p.kin, p.kout, o)
		k.io.write(p.outOff+outOff, 1, acc[:1])
	}
}

func redColumns[A any](p *redPlan, k *redKernel[A]) {
	last := len(p.ks) - 1
	outerShape := p.ks[:last]
	w, kIn, kOut := p.ks[last], p.kin[last], p.kout[last]
	tw := min(w, redTile)
	tiles := (w + tw - 1) / tw
	cols := p.outs / w * tiles
	rw := newWalker(p.rs, p.rin)
	rst := rw.InnerStrides()[0]
	rowsPer := p.n
	if cols < redFewTasks && p.n*tw >= 2*redPart {
		rowsPer = max(redPart/tw, (p.n+redMaxParts-1)/redMaxParts)
	}
	parts := (p.n + rowsPer - 1) / rowsPer
	var partial []A
	if parts > 1 {
		partial = make([]A, cols*parts*tw)
	}
	direct := k.io.load == nil && kIn == 1
	ParallelFor(cols*parts, max(1, grain/(rowsPer*tw)), func(lo, hi int) {
		acc, blk := make([]A, tw), make([]A, tw)
		var buf []A
		if !direct {
			buf = make([]A, tw)
		}
		for t := lo; t < hi; t++ {
			c, q := t/parts, t%parts
			inBase, outBase := redOffsets(outerShape, p.kin, p.kout, c/tiles)
			c0 := c % tiles * tw
			a := acc[:min(tw, w-c0)]
			b := blk[:len(a)]
			for i := range a {
				a[i] = k.ident
			}
			rw.Runs(q*rowsPer, min(p.n, (q+1)*rowsPer), []int{p.inOff + inBase + c0*kIn}, func(offs []int, n int) {
				// Blocks of rows start from the identity and are then joined
				// to the total, which keeps float sums accurate over long
				// columns.
				for r := 0; r < n; r += redBlock {
					m := min(redBlock, n-r)
					off := offs[0] + r*rst
					for i := range b {
						b[i] = k.ident
					}
					if direct {
						k.vec(b, k.io.x, off, m, rst)
					} else {
						for j := 0; j < m; j++ {
							k.vec(b, k.io.read(off+j*rst, len(b), kIn, buf), 0, 1, 0)
						}
					}
					k.vec(a, b, 0, 1, 0)
				}
			})
			if parts == 1 {
				k.io.write(p.outOff+outBase+c0*kOut, kOut, a)
			} else {
				copy(partial[t*tw:], a)
			}
		}
	})
	for c := 0; c < cols && parts > 1; c++ {
		_, outBase := redOffsets(outerShape, p.kin, p.kout, c/tiles)
		c0 := c % tiles * tw
		a := partial[c*parts*tw:][:min(tw, w-c0)]
		k.vec(a, partial, (c*parts+1)*tw, parts-1, tw)
		k.io.write(p.outOff+outBase+c0*kOut, kOut, a)
	}
}

// redNumber is the accumulator types of Sum and Prod, redOrdered those of
// Max and Min.
type redNumber interface {
	ewInt | float32 | float64 | complex64
}

type redOrdered interface {
	ewInt | float32 | float64
}

func numKernel[A redNumber](op opset.ReduceOp) redKernel[A] {
	if op == opset.Prod {
		return redKernel[A]{ident: 1, run: prodRun[A], vec: prodVec[A]}
	}
	k := redKernel[A]{run: sumRun[A], vec: sumVec[A]}
	// float32 sums take the vector kernels where this machine has them
	if sum, ok := any(vecSum).(func([]A) A); ok && sum != nil {
		k.run = func(acc A, x []A) A { return acc + sum(x) }
	}
	if add, ok := any(vecArith[opset.Add].vv).(func(d, a, b []A)); ok && add != nil {
		k.vec = func(acc, x []A, off, rows, rowStride int) {
			w := len(acc)
			if w < 64 {
				// a kernel call a row costs more than a short row's adds
				sumVec(acc, x, off, rows, rowStride)
				return
			}
			for r := range rows {
				o := off + r*rowStride
				add(acc, acc, x[o:o+w])
			}
		}
	}
	return k
}

func ordKernel[A redOrdered](op opset.ReduceOp) redKernel[A] {
	var k redKernel[A]
	switch op {
	case opset.Max:
		k = redKernel[A]{ident: redLowest[A](), run: maxRun[A], vec: maxVec[A]}
	case opset.Min:
		k = redKernel[A]{ident: redHighest[A](), run: minRun[A], vec: minVec[A]}
	default:
		return numKernel[A](op)
	}
	// float32 runs take the vector kernel where this machine has one
	if run, ok := any(vecReduce[op]).(func(A, []A) A); ok && run != nil {
		k.run = run
	}
	return k
}

// redLowest and redHighest are the identities of max and min.
func redLowest[A redOrdered]() A {
	var z A
	switch p := any(&z).(type) {
	case *int8:
		*p = math.MinInt8
	case *int16:
		*p = math.MinInt16
	case *int32:
		*p = math.MinInt32
	case *int64:
		*p = math.MinInt64
	case *float32:
		*p = float32(math.Inf(-1))
	case *float64:
		*p = math.Inf(-1)
	}
	return z
}

func redHighest[A redOrdered]() A {
	var z A
	switch p := any(&z).(type) {
	case *uint8:
		*p = math.MaxUint8
	case *uint16:
		*p = math.MaxUint16
	case *uint32:
		*p = math.MaxUint32
	case *uint64:
		*p = math.MaxUint64
	case *int8:
		*p = math.MaxInt8
	case *int16:
		*p = math.MaxInt16
	case *int32:
		*p = math.MaxInt32
	case *int64:
		*p = math.MaxInt64
	case *float32:
		*p = float32(math.Inf(1))
	case *float64:
		*p = math.Inf(1)
	}
	return z
}

func sumRun[A redNumber](acc A, x []A) A { return acc + pairwiseSum(x) }

// pairwiseSum is numpy's pairwise summation: runs up to pairLeaf long are
// added with eight accumulators (for speed: independent adds overlap),
// longer ones are split in halves, so the rounding error grows with the
// log of the length rather than the length.
func pairwiseSum[A redNumber](x []A) A {
	if len(x) > pairLeaf {
		h := len(x) / 2 &^ 7
		return pairwiseSum(x[:h]) + pairwiseSum(x[h:])
	}
	var s0, s1, s2, s3, s4, s5, s6, s7 A
	for len(x) >= 8 {
		s0 += x[0]
		s1 += x[1]
		s2 += x[2]
		s3 += x[3]
		s4 += x[4]
		s5 += x[5]
		s6 += x[6]
		s7 += x[7]
		x = x[8:]
	}
	for _, v := range x {
		s0 += v
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// sumVec adds four rows at a time: one load and store of the
// accumulator per four additions, which is what limits a column sum.
func sumVec[A redNumber](acc, x []A, off, rows, rowStride int) {
	w := len(acc)
	r := 0
	for ; r+4 <= rows; r += 4 {
		o := off + r*rowStride
		x0 := x[o : o+w]
		x1 := x[o+rowStride : o+rowStride+w]
		x2 := x[o+2*rowStride : o+2*rowStride+w]
		x3 := x[o+3*rowStride : o+3*rowStride+w]
		x1, x2, x3 = x1[:len(x0)], x2[:len(x0)], x3[:len(x0)]
		a := acc[:len(x0)]
		for i, v := range x0 {
			a[i] += (v + x1[i]) + (x2[i] + x3[i])
		}
	}
	for ; r < rows; r++ {
		o := off + r*rowStride
		row := x[o : o+w]
		a := acc[:len(row)]
		for i, v := range row {
			a[i] += v
		}
	}
}

func prodRun[A redNumber](acc A, x []A) A {
	p0, p1 := acc, A(1)
	for len(x) >= 2 {
		p0 *= x[0]
		p1 *= x[1]
		x = x[2:]
	}
	for _, v := range x {
		p0 *= v
	}
	return p0 * p1
}

func prodVec[A redNumber](acc, x []A, off, rows, rowStride int) {
	for r := range rows {
		o := off + r*rowStride
		row := x[o : o+len(acc)]
		a := acc[:len(row)]
		for i, v := range row {
			a[i] *= v
		}
	}
}

// The comparisons below are written so that a NaN, once met, stays:
// v > m is false for a NaN m, and v != v catches a NaN v.

func maxRun[A redOrdered](acc A, x []A) A {
	m0, m1, m2, m3 := acc, acc, acc, acc
	for len(x) >= 4 {
		if v := x[0]; v > m0 || v != v {
			m0 = v
		}
		if v := x[1]; v > m1 || v != v {
			m1 = v
		}
		if v := x[2]; v > m2 || v != v {
			m2 = v
		}
		if v := x[3]; v > m3 || v != v {
			m3 = v
		}
		x = x[4:]
	}
	for _, v := range x {
		if v > m0 || v != v {
			m0 = v
		}
	}
	for _, v := range [3]A{m1, m2, m3} {
		if v > m0 || v != v {
			m0 = v
		}
	}
	return m0
}

func minRun[A redOrdered](acc A, x []A) A {
	m0, m1, m2, m3 := acc, acc, acc, acc
	for len(x) >= 4 {
		if v := x[0]; v < m0 || v != v {
			m0 = v
		}
		if v := x[1]; v < m1 || v != v {
			m1 = v
		}
		if v := x[2]; v < m2 || v != v {
			m2 = v
		}
		if v := x[3]; v < m3 || v != v {
			m3 = v
		}
		x = x[4:]
	}
	for _, v := range x {
		if v < m0 || v != v {
			m0 = v
		}
	}
	for _, v := range [3]A{m1, m2, m3} {
		if v < m0 || v != v {
			m0 = v
		}
	}
	return m0
}

func maxVec[A redOrdered](acc, x []A, off, rows, rowStride int) {
	for r := range rows {
		o := off + r*rowStride
		row := x[o : o+len(acc)]
		a := acc[:len(row)]
		for i, v := range row {
			if v > a[i] || v != v {
				a[i] = v
			}
		}
	}
}

func minVec[A redOrdered](acc, x []A, off, rows, rowStride int) {
	for r := range rows {
		o := off + r*rowStride
		row := x[o : o+len(acc)]
		a := acc[:len(row)]
		for i, v := range row {
			if v < a[i] || v != v {
				a[i] = v
			}
		}
	}
}

// Loaders and storers for redIO.

func redLoadHalf(in Buf) func(dst []float32, off, stride int) {
	if in.DType == array.Float16 {
		src := elems[array.F16](in)
		return func(dst []float32, off, stride int) {
			for i := range dst {
				dst[i] = src[off+i*stride].Float32()
			}
		}
	}
	src := elems[array.BF16](in)
	return func(dst []float32, off, stride int) {
		for i := range dst {
			dst[i] = src[off+i*stride].Float32()
		}
	}
}

func redStoreHalf(out Buf) func(off, stride int, src []float32) {
	if out.DType == array.Float16 {
		dst := elems[array.F16](out)
		return func(off, stride int, src []float32) {
			for i, v := range src {
				dst[off+i*stride] = array.NewF16(v)
			}
		}
	}
	dst := elems[array.BF16](out)
	return func(off, stride int, src []float32) {
		for i, v := range src {
			dst[off+i*stride] = array.NewBF16(v)
		}
	}
}

// redLoadBoolInt reads bools as int32 0 and 1.
func redLoadBoolInt(in Buf) func(dst []int32, off, stride int) {
	src := elems[uint8](in)
	return func(dst []int32, off, stride int) {
		for i := range dst {
			dst[i] = int32(src[off+i*stride])
		}
	}
}

// redLoadNonzero reads any dtype as 1 where an element is not zero and 0
// where it is.
func redLoadNonzero(in Buf) func(dst []uint8, off, stride int) {
	switch in.DType {
	case array.Float16, array.BFloat16:
		// -0 is zero: ignore the sign bit.
		return redNonzero(elems[uint16](in), 0x7fff)
	case array.Bool, array.Uint8:
		return redNonzero(elems[uint8](in), 0xff)
	case array.Int32:
		return redNonzero(elems[int32](in), -1)
	case array.Int64, array.Uint64:
		return redNonzero(elems[int64](in), -1)
	case array.Int8:
		return redNonzero(elems[uint8](in), 0xff)
	case array.Int16, array.Uint16:
		return redNonzero(elems[uint16](in), 0xffff)
	case array.Uint32:
		return redNonzero(elems[int32](in), -1)
	case array.Float32:
		return redNonzeroFloat(elems[float32](in))
	case array.Float64:
		return redNonzeroFloat(elems[float64](in))
	}
	return redNonzeroFloat(elems[complex64](in))
}

func redNonzero[T uint8 | uint16 | int32 | int64](src []T, mask T) func(dst []uint8, off, stride int) {
	return func(dst []uint8, off, stride int) {
		for i := range dst {
			dst[i] = 0
			if src[off+i*stride]&mask != 0 {
				dst[i] = 1
			}
		}
	}
}

func redNonzeroFloat[T float32 | float64 | complex64](src []T) func(dst []uint8, off, stride int) {
	return func(dst []uint8, off, stride int) {
		for i := range dst {
			dst[i] = 0
			if src[off+i*stride] != 0 {
				dst[i] = 1
			}
		}
	}
}

// redLines is the set of 1-D lines along one axis that Scan, ArgReduce and
// the softmax family work on: the line length and strides along the axis,
// and the other axes (merged, size-1 ones dropped) that enumerate lines.
type redLines struct {
	n, sIn, sOut     int // sOut is 0 when the output lacks the axis
	shape, kin, kout []int
	inOff, outOff    int
	count            int
}

func newRedLines(in, out Buf, axis int, outHasAxis bool) *redLines {
	l := &redLines{n: in.Shape[axis], sIn: in.Strides[axis], inOff: in.Offset, outOff: out.Offset, count: 1}
	j := 0
	for i, d := range in.Shape {
		if i == axis {
			if outHasAxis {
				l.sOut = out.Strides[j]
				j++
			}
			continue
		}
		s, so := in.Strides[i], out.Strides[j]
		j++
		l.count *= d
		if d == 1 {
			continue
		}
		if k := len(l.shape) - 1; k >= 0 && l.kin[k] == s*d && l.kout[k] == so*d {
			l.shape[k] *= d
			l.kin[k], l.kout[k] = s, so
			continue
		}
		l.shape, l.kin, l.kout = append(l.shape, d), append(l.kin, s), append(l.kout, so)
	}
	return l
}

// columnar reports whether neighbouring lines should be processed
// together, a row across them at a time: when the innermost other axis
// steps through memory faster than the lines do and has at least minW
// lines (below that, the per-row overhead costs more than strided reads).
func (l *redLines) columnar(minW int) bool {
	k := len(l.shape) - 1
	return k >= 0 && l.n > 1 && l.shape[k] >= minW && redAbs(l.kin[k]) < redAbs(l.sIn)
}

// colPlan cuts work on neighbouring lines (columnar) into tasks: panels
// of up to redTile lines, read a row across them at a time, and, when
// rows may be split and there are fewer panels than redFewTasks, parts of
// rowsPer rows each, at least redPart elements, to share out. It depends
// on the shape only, so joining the parts in order gives the same result
// on any number of cores.
type colPlan struct {
	w, kIn, kOut   int // lines in a row of panels, and their strides
	tw, tiles      int // panel width, panels a row
	cols           int // panels in all
	parts, rowsPer int
}

func (l *redLines) colPlan(splitRows bool) colPlan {
	last := len(l.shape) - 1
	c := colPlan{w: l.shape[last], kIn: l.kin[last], kOut: l.kout[last]}
	c.tw = min(c.w, redTile)
	c.tiles = (c.w + c.tw - 1) / c.tw
	c.cols = l.count / c.w * c.tiles
	parts := 1
	if splitRows && c.cols < redFewTasks {
		parts = max(1, min((redFewTasks+c.cols-1)/c.cols, l.n*c.tw/redPart))
	}
	c.rowsPer = (l.n + parts - 1) / parts
	c.parts = (l.n + c.rowsPer - 1) / c.rowsPer
	return c
}

// panel is task t of a colPlan: the offsets of its first line in the
// input and the output, the panel's width, and its rows.
type panel struct {
	in, out, w int
	r0, r1     int
}

func (l *redLines) panel(c colPlan, t int) panel {
	col, q := t/c.parts, t%c.parts
	last := len(l.shape) - 1
	inBase, outBase := redOffsets(l.shape[:last], l.kin, l.kout, col/c.tiles)
	c0 := col % c.tiles * c.tw
	return panel{l.inOff + inBase + c0*c.kIn, l.outOff + outBase + c0*c.kOut, min(c.tw, c.w-c0), q * c.rowsPer, min(l.n, (q+1)*c.rowsPer)}
}

// each calls a body for every line, in parallel. newBody is called once per
// chunk of lines, so bodies can own scratch space.
func (l *redLines) each(newBody func() func(inOff, outOff int)) {
	kw := newWalker(l.shape, l.kin, l.kout)
	st := kw.InnerStrides()
	ParallelFor(l.count, max(1, grain/max(l.n, 1)), func(lo, hi int) {
		body := newBody()
		kw.Runs(lo, hi, []int{l.inOff, l.outOff}, func(offs []int, m int) {
			for j := range m {
				body(offs[0]+j*st[0], offs[1]+j*st[1])
			}
		})
	})
}

// eachPart calls body, in parallel, for every part of every line when
// each line is cut into parts of redPart elements, parts of them: t
// numbers the part among all (line*parts plus its place in the line), in
// and out are the offsets of its first element, n its length.
func (l *redLines) eachPart(parts int, body func(t, in, out, n int)) {
	ParallelFor(l.count*parts, 1, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			start := t % parts * redPart
			in, out := redOffsets(l.shape, l.kin, l.kout, t/parts)
			body(t, l.inOff+in+start*l.sIn, l.outOff+out+start*l.sOut, min(redPart, l.n-start))
		}
	})
}

// redScratch hands scratch space to the bodies of a ParallelFor and takes
// it back, so that a worker makes at most one however many chunks it
// runs.
type redScratch[T any] struct {
	free  chan T
	alloc func() T
}

func newRedScratch[T any](alloc func() T) *redScratch[T] {
	return &redScratch[T]{free: make(chan T, runtime.GOMAXPROCS(0)), alloc: alloc}
}

func (s *redScratch[T]) get() T {
	select {
	case b := <-s.free:
		return b
	default:
		return s.alloc()
	}
}

func (s *redScratch[T]) put(b T) {
	select {
	case s.free <- b:
	default:
	}
}
