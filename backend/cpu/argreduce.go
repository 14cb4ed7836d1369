package cpu

import (
	"math"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/opset"
)

// ArgReduce writes to out (int32, in's shape without axis; the caller has
// checked the shapes) the index along
// axis of each line's largest (ArgMax) or smallest (ArgMin) element. Ties
// go to the first; a NaN beats every number, so the first NaN's index is
// the answer (numpy). The axis must not be empty unless out is. Complex
// inputs are not supported.
func ArgReduce(op opset.ArgOp, out, in Buf, axis int) error {
	const name = "cpu.ArgReduce"
	if _, ok := op.Result(in.DType); !ok {
		return array.Errorf(name, "%v of %v is not supported", op, in.DType)
	}
	if out.DType != array.Int32 {
		return array.Errorf(name, "output dtype %v, want int32", out.DType)
	}
	l := newRedLines(in, out, axis, false)
	if l.count == 0 {
		return nil
	}
	if l.n == 0 {
		return array.Errorf(name, "%v over an empty axis %d of shape %v", op, axis, in.Shape)
	}
	o := elems[int32](out)
	isMax := op == opset.ArgMax
	switch in.DType {
	case array.Bool, array.Uint8:
		argRun(l, redIO[uint8]{x: elems[uint8](in)}, o, isMax)
	case array.Int32:
		argRun(l, redIO[int32]{x: elems[int32](in)}, o, isMax)
	case array.Int64:
		argRun(l, redIO[int64]{x: elems[int64](in)}, o, isMax)
	case array.Int8:
		argRun(l, redIO[int8]{x: elems[int8](in)}, o, isMax)
	case array.Int16:
		argRun(l, redIO[int16]{x: elems[int16](in)}, o, isMax)
	case array.Uint16:
		argRun(l, redIO[uint16]{x: elems[uint16](in)}, o, isMax)
	case array.Uint32:
		argRun(l, redIO[uint32]{x: elems[uint32](in)}, o, isMax)
	case array.Uint64:
		argRun(l, redIO[uint64]{x: elems[uint64](in)}, o, isMax)
	case array.Float16, array.BFloat16:
		argRun(l, redIO[float32]{load: redLoadHalf(in)}, o, isMax)
	case array.Float32:
		argRun(l, redIO[float32]{x: elems[float32](in)}, o, isMax)
	default:
		argRun(l, redIO[float64]{x: elems[float64](in)}, o, isMax)
	}
	return nil
}

// argRun finds the best of every line: neighbouring lines together when
// they interleave in memory, a few long lines in parts of redPart
// elements (so that few lines still spread over the cores; parts are
// joined exactly, in order, so results do not depend on how many cores
// there are), or one line at a time.
func argRun[A redOrdered](l *redLines, io redIO[A], o []int32, isMax bool) {
	scan := argScanFunc[A](vecBest)
	switch {
	case l.columnar(8):
		argColumns(l, io, o, isMax)
	case l.count < redFewTasks && l.n >= 2*redPart:
		argSplit(l, io, o, isMax, scan)
	default:
		l.each(func() func(inOff, outOff int) {
			var buf []A
			if io.load != nil || l.sIn != 1 {
				buf = make([]A, l.n)
			}
			return func(inOff, outOff int) {
				_, at, _ := scan(io.read(inOff, l.n, l.sIn, buf), isMax)
				o[outOff] = int32(at)
			}
		})
	}
}

// argBest is the result of a scan: the best value and its index, or the
// first NaN's index when nan is set.
type argBest[A redOrdered] struct {
	v   A
	at  int
	nan bool
}

// argSplit scans each of a few long lines in parts, in parallel, and
// joins the parts in order.
func argSplit[A redOrdered](l *redLines, io redIO[A], o []int32, isMax bool, scan func([]A, bool) (A, int, bool)) {
	parts := (l.n + redPart - 1) / redPart
	res := make([]argBest[A], l.count*parts)
	bufs := newRedScratch(func() []A {
		if io.load == nil && l.sIn == 1 {
			return nil
		}
		return make([]A, redPart)
	})
	l.eachPart(parts, func(t, in, _, n int) {
		buf := bufs.get()
		defer bufs.put(buf)
		v, at, nan := scan(io.read(in, n, l.sIn, buf), isMax)
		res[t] = argBest[A]{v, t%parts*redPart + at, nan}
	})
	for line := range l.count {
		b := res[line*parts]
		for _, p := range res[line*parts+1 : (line+1)*parts] {
			if b.nan {
				break
			}
			if p.nan || (isMax && p.v > b.v) || (!isMax && p.v < b.v) {
				b = p
			}
		}
		_, outOff := redOffsets(l.shape, l.kin, l.kout, line)
		o[l.outOff+outOff] = int32(b.at)
	}
}

// argColumns finds the best of neighbouring lines together, a row across
// them at a time, in panels of up to redTile lines; when there are few
// panels, their rows are cut into parts too, joined in order at the end.
// The parts depend on the shape only, and joining is exact.
func argColumns[A redOrdered](l *redLines, io redIO[A], o []int32, isMax bool) {
	cp := l.colPlan(true)
	kIn, kOut, tw, cols, parts, rowsPer := cp.kIn, cp.kOut, cp.tw, cp.cols, cp.parts, cp.rowsPer
	var partV []A
	var partI []int32
	if parts > 1 {
		partV, partI = make([]A, cols*parts*tw), make([]int32, cols*parts*tw)
	}
	vec := argRowsVec[A](isMax)
	if io.load != nil || kIn != 1 || l.sIn <= 0 {
		vec = nil
	}
	ParallelFor(cols*parts, max(1, grain/(rowsPer*tw)), func(lo, hi int) {
		best, idx := make([]A, tw), make([]int32, tw)
		var buf []A
		if io.load != nil || kIn != 1 {
			buf = make([]A, tw)
		}
		for t := lo; t < hi; t++ {
			p := l.panel(cp, t)
			b, ix := best[:p.w], idx[:p.w]
			in, r0, r1 := p.in, p.r0, p.r1
			copy(b, io.read(in+r0*l.sIn, len(b), kIn, buf))
			for i := range ix {
				ix[i] = int32(r0)
			}
			switch {
			case r1-r0 < 2:
			case vec != nil:
				vec(b, ix, io.x[in+(r0+1)*l.sIn:in+(r1-1)*l.sIn+len(b)], l.sIn, r1-r0-1, r0+1)
			default:
				for r := r0 + 1; r < r1; r++ {
					argRow(b, ix, io.read(in+r*l.sIn, len(b), kIn, buf), nil, int32(r), isMax)
				}
			}
			if parts > 1 {
				copy(partV[t*tw:], b)
				copy(partI[t*tw:], ix)
				continue
			}
			for i, v := range ix {
				o[p.out+i*kOut] = v
			}
		}
	})
	for c := 0; c < cols && parts > 1; c++ {
		p := l.panel(cp, c*parts)
		at := c * parts * tw
		b, ix := partV[at:][:p.w], partI[at:][:p.w]
		for q := 1; q < parts; q++ {
			argRow(b, ix, partV[at+q*tw:], partI[at+q*tw:], 0, isMax)
		}
		for i, v := range ix {
			o[p.out+i*kOut] = v
		}
	}
}

// argRow updates a panel's best values and their indices with row, whose
// indices are rowIdx, or t for all when rowIdx is nil. A larger (smaller)
// value replaces the best, and a NaN replaces a number but not an earlier
// NaN, so the first of equals stays.
func argRow[A redOrdered](best []A, idx []int32, row []A, rowIdx []int32, t int32, isMax bool) {
	row = row[:len(best)]
	idx = idx[:len(best)]
	set := func(i int, v A) {
		best[i], idx[i] = v, t
		if rowIdx != nil {
			idx[i] = rowIdx[i]
		}
	}
	if isMax {
		for i, v := range row {
			if b := best[i]; v > b || (v != v && b == b) {
				set(i, v)
			}
		}
		return
	}
	for i, v := range row {
		if b := best[i]; v < b || (v != v && b == b) {
			set(i, v)
		}
	}
}

// argScanFunc returns the scan of lines of As: argScanGo, with impl's
// kernels when A is float32 or float64 and impl is not nil.
func argScanFunc[A redOrdered](impl *vecImpl) func([]A, bool) (A, int, bool) {
	if impl == nil {
		return argScanGo[A]
	}
	kMax, kMin, lanes := any(impl.argMax), any(impl.argMin), impl.width
	if _, ok := any(A(0)).(float64); ok {
		kMax, kMin, lanes = impl.argMax64, impl.argMin64, impl.width/2
	}
	vMax, ok := kMax.(func([]A) (int, A, int))
	if !ok {
		return argScanGo[A]
	}
	vMin := kMin.(func([]A) (int, A, int))
	return func(x []A, isMax bool) (A, int, bool) {
		if isMax {
			return argScanWith(vMax, lanes, x, true)
		}
		return argScanWith(vMin, lanes, x, false)
	}
}

// argScanGo returns the largest (isMax) or smallest element of x and its
// index, the first of equal ones; or, with nan set, the first NaN and its
// index.
func argScanGo[A redOrdered](x []A, isMax bool) (A, int, bool) {
	best, at := x[0], 0
	if best != best {
		return best, 0, true
	}
	if isMax {
		for i, v := range x {
			if v > best {
				best, at = v, i
			} else if v != v {
				return v, i, true
			}
		}
	} else {
		for i, v := range x {
			if v < best {
				best, at = v, i
			} else if v != v {
				return v, i, true
			}
		}
	}
	return best, at, false
}

// argScanWith is argScanGo with the kernel k, of lanes lanes, over the
// whole vectors of lines of a few vectors and more.
func argScanWith[A redOrdered](k func([]A) (int, A, int), lanes int, x []A, isMax bool) (A, int, bool) {
	if len(x) < 4*lanes || len(x) > math.MaxInt32 {
		return argScanGo(x, isMax)
	}
	n, best, at := k(x)
	if n < len(x)&^(lanes-1) {
		for i, v := range x[n:] {
			if v != v {
				return v, n + i, true
			}
		}
	}
	for i, v := range x[n:] {
		if (isMax && v > best) || (!isMax && v < best) {
			best, at = v, n+i
		} else if v != v {
			return v, n + i, true
		}
	}
	return best, at, false
}

// argRowsVec returns the vector kernel that folds rows into a panel's
// best values and indices (see argRow), when A is float32 and this
// machine has one; else nil.
func argRowsVec[A redOrdered](isMax bool) func(best []A, idx []int32, x []A, stride, rows, t0 int) {
	if vecBest == nil {
		return nil
	}
	k := vecBest.argMaxRows
	if !isMax {
		k = vecBest.argMinRows
	}
	f, _ := any(k).(func([]A, []int32, []A, int, int, int))
	return f
}
