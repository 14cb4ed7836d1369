package cpu

import (
	"runtime"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/opset"
)

// ScatterMode is how Scatter combines an update with the element it
// lands on (opset's modes, which the Metal backend shares).
type ScatterMode = opset.ScatterMode

// The scatter modes (see opset.ScatterMode).
const (
	ScatterSet  = opset.ScatterSet
	ScatterSum  = opset.ScatterSum
	ScatterProd = opset.ScatterProd
	ScatterMax  = opset.ScatterMax
	ScatterMin  = opset.ScatterMin
)

// offsetPool keeps sliceOffsets' buffers: a million indices take 8 MB,
// whose fresh pages would cost more than computing the offsets
// (docs/performance.md, Memory).
var offsetPool bufPool[int]

// sliceOffsets returns, for every position p of the indices' common
// shape, the offset in a buffer of strides st of the slice that the
// index tuple (idx[0][p], ..., idx[k][p]) starts: the sum of
// wrap(idx[k][p]) * st[axes[k]]. idx are views of one shape (broadcast
// already). An index out of range is an *array.Error naming op. The
// caller returns buf to offsetPool when it is done with the offsets.
func sliceOffsets(op string, idx []Buf, axes []int, shape, st []int) (base []int, buf *[]int, err error) {
	n := 1
	if len(idx) > 0 {
		n = idx[0].Size()
	}
	buf = offsetPool.get(n)
	base = (*buf)[:n]
	if len(idx) == 0 {
		clear(base)
	}
	for k, b := range idx {
		if err = checkIndexDType(op, b); err != nil {
			break
		}
		first := k == 0
		switch b.DType {
		case array.Uint8:
			err = addOffsets[uint8](op, base, b, axes[k], shape[axes[k]], st[axes[k]], first)
		case array.Int8:
			err = addOffsets[int8](op, base, b, axes[k], shape[axes[k]], st[axes[k]], first)
		case array.Int16:
			err = addOffsets[int16](op, base, b, axes[k], shape[axes[k]], st[axes[k]], first)
		case array.Uint16:
			err = addOffsets[uint16](op, base, b, axes[k], shape[axes[k]], st[axes[k]], first)
		case array.Int32:
			err = addOffsets[int32](op, base, b, axes[k], shape[axes[k]], st[axes[k]], first)
		case array.Uint32:
			err = addOffsets[uint32](op, base, b, axes[k], shape[axes[k]], st[axes[k]], first)
		case array.Uint64:
			err = addOffsets[uint64](op, base, b, axes[k], shape[axes[k]], st[axes[k]], first)
		default:
			err = addOffsets[int64](op, base, b, axes[k], shape[axes[k]], st[axes[k]], first)
		}
		if err != nil {
			break
		}
	}
	if err != nil {
		offsetPool.put(buf)
		return nil, nil, err
	}
	return base, buf, nil
}

// addOffsets adds wrap(index) * step into base, or with first stores it
// (base then holds whatever a reused buffer held).
func addOffsets[I indexElem](op string, base []int, b Buf, axis, n, step int, first bool) error {
	ix := elems[I](b)
	w := newWalker(b.Shape, b.Strides)
	si := w.InnerStrides()[0]
	var fe firstError
	ParallelFor(len(base), grain, func(lo, hi int) {
		p := lo
		w.Runs(lo, hi, []int{b.Offset}, func(offs []int, m int) {
			for i := 0; i < m; i++ {
				v := ix[offs[0]+i*si]
				j, ok := wrapIndex(v, n)
				if !ok {
					fe.set(indexError(op, int64(v), axis, n))
					return
				}
				if first {
					base[p+i] = j * step
				} else {
					base[p+i] += j * step
				}
			}
			p += m
		})
	})
	return fe.err()
}

// Gather sets out to the slices of a that the indices start (MLX's
// gather): out has shape idx.Shape + sliceSizes, row-major, and
// out[p, s...] = a[i_0 + s_0, ...] where i_d is wrap(idx[k][p]) on axis
// d = axes[k] and 0 on the other axes. idx are views of one shape and any
// integer dtypes; sliceSizes has one size per axis of a, at most a's.
// An index out of range is an *array.Error.
func Gather(out, a Buf, idx []Buf, axes, sliceSizes []int) error {
	const op = "cpu.Gather"
	if out.DType != a.DType {
		return array.Errorf(op, "out dtype %v differs from a's %v", out.DType, a.DType)
	}
	base, buf, err := sliceOffsets(op, idx, axes, a.Shape, a.Strides)
	if err != nil {
		return err
	}
	defer offsetPool.put(buf)
	switch a.DType.Size() {
	case 1:
		gatherSlices[uint8](out, a, base, sliceSizes)
	case 2:
		gatherSlices[uint16](out, a, base, sliceSizes)
	case 4:
		gatherSlices[uint32](out, a, base, sliceSizes)
	default:
		gatherSlices[uint64](out, a, base, sliceSizes)
	}
	return nil
}

// gatherSlices copies one slice per index position, positions split
// over the workers (a row of a 4096-wide matrix is one contiguous copy).
func gatherSlices[T word](out, a Buf, base, sliceSizes []int) {
	o, s := elems[T](out), elems[T](a)
	m := Buf{Shape: sliceSizes}.Size()
	if m == 0 || len(base) == 0 {
		return
	}
	ost := out.Strides[len(out.Strides)-len(sliceSizes):]
	w := newWalker(sliceSizes, a.Strides, ost)
	inner := w.InnerStrides()
	sa, so := inner[0], inner[1]
	run := func(x, y, n int) {
		if sa == 1 && so == 1 {
			copy(o[y:y+n], s[x:x+n])
			return
		}
		for i := 0; i < n; i++ {
			o[y+i*so] = s[x+i*sa]
		}
	}
	// One merged run (a scalar or a contiguous row) needs no walk, as in
	// scatterRun: Runs gives each call's cursor to fn, so it allocates.
	single := len(w.shape) == 1
	ParallelFor(len(base), max(1, grain/m), func(lo, hi int) {
		for p := lo; p < hi; p++ {
			if single {
				run(a.Offset+base[p], p*m, m)
				continue
			}
			w.Runs(0, m, []int{a.Offset + base[p], p * m}, func(offs []int, n int) { run(offs[0], offs[1], n) })
		}
	})
}

// Scatter sets out to a with updates combined into the slices that the
// indices start (MLX's scatter): updates has shape idx.Shape +
// sliceShape (one size per axis of a, at most a's), and
// out[i_0 + s_0, ...] = mode(out[...], updates[p, s...]) where i_d is
// wrap(idx[k][p]) on axis d = axes[k] and 0 on the other axes. Updates
// apply in the order of p, so with ScatterSet the later of repeated
// indices wins, and every mode gives the result of numpy's sequential
// ufunc.at. out is row-major and must not alias a, idx or updates.
// float16 and bfloat16 combine in float32 and round after each update,
// as numpy's float16 does. bool sums as "or" and multiplies as "and".
// complex64 has no Max or Min. An index out of range is an *array.Error.
func Scatter(out, a Buf, idx []Buf, updates Buf, axes []int, mode ScatterMode) error {
	const op = "cpu.Scatter"
	if out.DType != a.DType || updates.DType != a.DType {
		return array.Errorf(op, "out dtype %v and updates dtype %v differ from a's %v", out.DType, updates.DType, a.DType)
	}
	if a.DType == array.Complex64 && (mode == ScatterMax || mode == ScatterMin) {
		return array.Errorf(op, "cannot take the maximum or minimum of dtype %v", a.DType)
	}
	if err := Copy(out, a); err != nil {
		return err
	}
	base, buf, err := sliceOffsets(op, idx, axes, out.Shape, out.Strides)
	if err != nil {
		return err
	}
	defer offsetPool.put(buf)
	nd := len(out.Shape)
	slice := updates.Shape[len(updates.Shape)-nd:]
	// Distinct index tuples start disjoint slices when the slices are one
	// element long on every indexed axis: then the work splits by
	// destination without two workers ever touching one element.
	disjoint := true
	for _, ax := range axes {
		disjoint = disjoint && slice[ax] == 1
	}
	s := scatterJob{out: out, upd: updates, base: base, slice: slice, mode: mode, disjoint: disjoint}
	switch out.DType {
	case array.Bool:
		scatterRun(&s, combineBool)
	case array.Uint8:
		scatterRun(&s, combineNum[uint8])
	case array.Int8:
		scatterRun(&s, combineNum[int8])
	case array.Int16:
		scatterRun(&s, combineNum[int16])
	case array.Uint16:
		scatterRun(&s, combineNum[uint16])
	case array.Int32:
		scatterRun(&s, combineNum[int32])
	case array.Uint32:
		scatterRun(&s, combineNum[uint32])
	case array.Int64:
		scatterRun(&s, combineNum[int64])
	case array.Uint64:
		scatterRun(&s, combineNum[uint64])
	case array.Float32:
		scatterRun(&s, combineNum[float32])
	case array.Float64:
		scatterRun(&s, combineNum[float64])
	case array.Complex64:
		scatterRun(&s, combineComplex)
	case array.Float16:
		scatterRun(&s, combineHalf(array.F16.Float32, array.NewF16))
	case array.BFloat16:
		scatterRun(&s, combineHalf(array.BF16.Float32, array.NewBF16))
	default:
		return array.Errorf(op, "cannot scatter dtype %v", out.DType)
	}
	return nil
}

type scatterJob struct {
	out, upd Buf
	base     []int
	slice    []int
	mode     ScatterMode
	disjoint bool
}

type realElem interface {
	ewInt | float32 | float64
}

// combineNum is mode(x, u); Max and Min propagate NaN as numpy's
// maximum and minimum do.
func combineNum[T realElem](mode ScatterMode, x, u T) T {
	switch mode {
	case ScatterSet:
		return u
	case ScatterSum:
		return x + u
	case ScatterProd:
		return x * u
	case ScatterMax:
		if x != x || x >= u {
			return x
		}
		return u
	default:
		if x != x || x <= u {
			return x
		}
		return u
	}
}

func combineBool(mode ScatterMode, x, u uint8) uint8 {
	switch mode {
	case ScatterSet:
		return u
	case ScatterSum, ScatterMax:
		return x | u
	default:
		return x & u
	}
}

func combineComplex(mode ScatterMode, x, u complex64) complex64 {
	switch mode {
	case ScatterSet:
		return u
	case ScatterSum:
		return x + u
	default:
		return x * u
	}
}

func combineHalf[H array.F16 | array.BF16](load func(H) float32, store func(float32) H) func(ScatterMode, H, H) H {
	return func(mode ScatterMode, x, u H) H {
		if mode == ScatterSet {
			return u
		}
		return store(combineNum(mode, load(x), load(u)))
	}
}

// scatterRun applies every update in index order. With disjoint slices
// each worker owns the destinations that hash to it and walks all index
// positions, applying only its own: no two workers write one element, no
// partial buffers are needed, and repeated indices still apply in order.
func scatterRun[T any](s *scatterJob, f func(ScatterMode, T, T) T) {
	o, u := elems[T](s.out), elems[T](s.upd)
	n := len(s.base)
	m := Buf{Shape: s.slice}.Size()
	if n == 0 || m == 0 {
		return
	}
	nd := len(s.slice)
	ust := s.upd.Strides[len(s.upd.Strides)-nd:]
	pw := newWalker(s.upd.Shape[:len(s.upd.Shape)-nd], s.upd.Strides[:len(s.upd.Strides)-nd])
	pst := pw.InnerStrides()[0]
	w := newWalker(s.slice, s.out.Strides, ust)
	inner := w.InnerStrides()
	so, su := inner[0], inner[1]
	mode := s.mode
	// One merged run (a scalar or a contiguous row) needs no walk: Runs
	// allocates its cursor on every call.
	single := len(w.shape) == 1
	apply := func(p, uoff int) {
		if single {
			x := s.out.Offset + s.base[p]
			for i := 0; i < m; i++ {
				o[x+i*so] = f(mode, o[x+i*so], u[uoff+i*su])
			}
			return
		}
		w.Runs(0, m, []int{s.out.Offset + s.base[p], uoff}, func(offs []int, k int) {
			x, y := offs[0], offs[1]
			for i := 0; i < k; i++ {
				o[x+i*so] = f(mode, o[x+i*so], u[y+i*su])
			}
		})
	}
	// visit calls fn(p, update offset) for p in [lo, hi).
	visit := func(lo, hi int, fn func(p, uoff int)) {
		p := lo
		pw.Runs(lo, hi, []int{s.upd.Offset}, func(offs []int, k int) {
			for i := 0; i < k; i++ {
				fn(p+i, offs[0]+i*pst)
			}
			p += k
		})
	}
	workers := runtime.GOMAXPROCS(0)
	if !s.disjoint || workers == 1 || n*m < 2*grain {
		visit(0, n, apply)
		return
	}
	if m == 1 && len(pw.shape) == 1 {
		// One element per update (np.add.at's case): a plain loop, each
		// worker owning a contiguous range of out, which keeps its part
		// of out in its own cache.
		span := uint64(len(o))
		u0 := s.upd.Offset
		ParallelFor(workers, 1, func(lo, hi int) {
			for wk := lo; wk < hi; wk++ {
				for p, d := range s.base {
					x := s.out.Offset + d
					if int(uint64(x)*uint64(workers)/span) == wk {
						o[x] = f(mode, o[x], u[u0+p*pst])
					}
				}
			}
		})
		return
	}
	ParallelFor(workers, 1, func(lo, hi int) {
		for wk := lo; wk < hi; wk++ {
			visit(0, n, func(p, uoff int) {
				if owner(s.base[p], workers) == wk {
					apply(p, uoff)
				}
			})
		}
	})
}

// owner spreads destinations over workers by a multiplicative hash, so
// that strided destinations (every row start, say) still spread evenly.
func owner(off, workers int) int {
	return int((uint64(off) * 0x9E3779B97F4A7C15 >> 32) % uint64(workers))
}
