package cpu

import (
	"sync/atomic"

	"github.com/fathom-go/fathom/array"
)

// Gathers and scatters move elements without looking at them, so they
// are written once per element size (word) and per index dtype rather
// than per dtype: complex64 moves as a uint64, bool as a uint8.
type word interface {
	uint8 | uint16 | uint32 | uint64
}

// indexElem is the Go type of every dtype that can index.
type indexElem interface{ ewInt }

// firstError keeps the first error of a parallel loop; the other
// goroutines see it and stop early.
type firstError struct{ p atomic.Pointer[array.Error] }

func (f *firstError) set(e *array.Error) { f.p.CompareAndSwap(nil, e) }
func (f *firstError) failed() bool       { return f.p.Load() != nil }
func (f *firstError) err() error {
	if e := f.p.Load(); e != nil {
		return e
	}
	return nil
}

// wrapIndex turns a numpy-style index (negative counts from the end) into
// a position in [0, n).
func wrapIndex[I indexElem](v I, n int) (int, bool) {
	j := int(v)
	switch {
	case v < 0:
		j += n
	case j < 0: // a uint64 beyond int's range
		return j, false
	}
	return j, j >= 0 && j < n
}

func indexError(op string, v int64, axis, n int) *array.Error {
	return array.Errorf(op, "index %d out of range for axis %d of size %d", v, axis, n)
}

// gatherPlan describes out[e] = src[srcOff(e) + wrap(idx[e])*step] over
// out's shape: idx and src are views of out's shape (with zero strides
// where they do not vary), and step and n are the stride and size of the
// source axis being indexed.
type gatherPlan struct {
	op       string
	out, idx Buf
	src      Buf
	step, n  int
	axis     int
}

func (g *gatherPlan) run() error {
	switch g.out.DType.Size() {
	case 1:
		return gatherWord[uint8](g)
	case 2:
		return gatherWord[uint16](g)
	case 4:
		return gatherWord[uint32](g)
	default:
		return gatherWord[uint64](g)
	}
}

func gatherWord[T word](g *gatherPlan) error {
	switch g.idx.DType {
	case array.Uint8:
		return gatherRuns[T, uint8](g)
	case array.Int32:
		return gatherRuns[T, int32](g)
	case array.Int8:
		return gatherRuns[T, int8](g)
	case array.Int16:
		return gatherRuns[T, int16](g)
	case array.Uint16:
		return gatherRuns[T, uint16](g)
	case array.Uint32:
		return gatherRuns[T, uint32](g)
	case array.Uint64:
		return gatherRuns[T, uint64](g)
	default:
		return gatherRuns[T, int64](g)
	}
}

func gatherRuns[T word, I indexElem](g *gatherPlan) error {
	o, ix, s := elems[T](g.out), elems[I](g.idx), elems[T](g.src)
	w := newWalker(g.out.Shape, g.out.Strides, g.idx.Strides, g.src.Strides)
	st := w.InnerStrides()
	so, si, ss := st[0], st[1], st[2]
	step, n := g.step, g.n
	var fe firstError
	bad := func(v I) { fe.set(indexError(g.op, int64(v), g.axis, n)) }
	ParallelFor(w.Size(), grain, func(lo, hi int) {
		if fe.failed() {
			return
		}
		w.Runs(lo, hi, []int{g.out.Offset, g.idx.Offset, g.src.Offset}, func(offs []int, m int) {
			a, b, c := offs[0], offs[1], offs[2]
			if si == 0 {
				// One index for the whole run (Take of rows, say): a
				// plain strided copy.
				j, ok := wrapIndex(ix[b], n)
				if !ok {
					bad(ix[b])
					return
				}
				c += j * step
				if so == 1 && ss == 1 {
					copy(o[a:a+m], s[c:c+m])
					return
				}
				for i := 0; i < m; i++ {
					o[a+i*so] = s[c+i*ss]
				}
				return
			}
			for i := 0; i < m; i++ {
				v := ix[b+i*si]
				j, ok := wrapIndex(v, n)
				if !ok {
					bad(v)
					return
				}
				o[a+i*so] = s[c+i*ss+j*step]
			}
		})
	})
	return fe.err()
}

func checkIndexDType(op string, idx Buf) error {
	if !idx.DType.IsInteger() {
		return array.Errorf(op, "indices have dtype %v, not an integer dtype", idx.DType)
	}
	return nil
}

// Take gathers a's elements at positions idx along axis (numpy's take):
// out has shape a.Shape[:axis] + idx.Shape + a.Shape[axis+1:] and a's
// dtype. idx may have any integer dtype; negative indices count from the
// end. An index out of range is an *array.Error naming it and the axis
// size.
func Take(out, a, idx Buf, axis int) error {
	const op = "cpu.Take"
	if err := checkIndexDType(op, idx); err != nil {
		return err
	}
	if out.DType != a.DType {
		return array.Errorf(op, "out dtype %v differs from a's %v", out.DType, a.DType)
	}
	ni := len(idx.Shape)
	want := out.Shape
	nd := len(want)
	is := make([]int, nd)
	ss := make([]int, nd)
	copy(is[axis:], idx.Strides)
	copy(ss, a.Strides[:axis])
	copy(ss[axis+ni:], a.Strides[axis+1:])
	g := gatherPlan{
		op:   op,
		out:  out,
		idx:  Buf{Data: idx.Data, DType: idx.DType, Shape: want, Strides: is, Offset: idx.Offset},
		src:  Buf{Data: a.Data, DType: a.DType, Shape: want, Strides: ss, Offset: a.Offset},
		step: a.Strides[axis], n: a.Shape[axis], axis: axis,
	}
	return g.run()
}

// TakeAlongAxis sets out[..., i, ...] = a[..., idx[..., i, ...], ...]
// along axis (numpy's take_along_axis). idx has out's shape (broadcast
// already); a has out's shape on every other axis. Negative indices count
// from the end; one out of range is an *array.Error.
func TakeAlongAxis(out, a, idx Buf, axis int) error {
	const op = "cpu.TakeAlongAxis"
	if err := checkIndexDType(op, idx); err != nil {
		return err
	}
	if out.DType != a.DType {
		return array.Errorf(op, "out dtype %v differs from a's %v", out.DType, a.DType)
	}
	ss := append([]int(nil), a.Strides...)
	ss[axis] = 0
	g := gatherPlan{
		op:   op,
		out:  out,
		idx:  idx,
		src:  Buf{Data: a.Data, DType: a.DType, Shape: out.Shape, Strides: ss, Offset: a.Offset},
		step: a.Strides[axis], n: a.Shape[axis], axis: axis,
	}
	return g.run()
}

// PutAlongAxis sets out to a with values scattered along axis at idx
// (numpy's put_along_axis): out[..., idx[..., j, ...], ...] =
// values[..., j, ...]. idx and values have one shape, equal to a's on every
// axis but axis. When an index repeats, the later write (higher j) wins.
// Negative indices count from the end; one out of range is an
// *array.Error. out must not alias a or values.
func PutAlongAxis(out, a, idx, values Buf, axis int) error {
	const op = "cpu.PutAlongAxis"
	if err := checkIndexDType(op, idx); err != nil {
		return err
	}
	if values.DType != a.DType || out.DType != a.DType {
		return array.Errorf(op, "out dtype %v and values dtype %v differ from a's %v", out.DType, values.DType, a.DType)
	}
	if err := Copy(out, a); err != nil {
		return err
	}
	switch out.DType.Size() {
	case 1:
		return scatterWord[uint8](out, idx, values, axis)
	case 2:
		return scatterWord[uint16](out, idx, values, axis)
	case 4:
		return scatterWord[uint32](out, idx, values, axis)
	default:
		return scatterWord[uint64](out, idx, values, axis)
	}
}

func scatterWord[T word](out, idx, values Buf, axis int) error {
	switch idx.DType {
	case array.Uint8:
		return scatterLines[T, uint8](out, idx, values, axis)
	case array.Int32:
		return scatterLines[T, int32](out, idx, values, axis)
	case array.Int8:
		return scatterLines[T, int8](out, idx, values, axis)
	case array.Int16:
		return scatterLines[T, int16](out, idx, values, axis)
	case array.Uint16:
		return scatterLines[T, uint16](out, idx, values, axis)
	case array.Uint32:
		return scatterLines[T, uint32](out, idx, values, axis)
	case array.Uint64:
		return scatterLines[T, uint64](out, idx, values, axis)
	default:
		return scatterLines[T, int64](out, idx, values, axis)
	}
}

// scatterLines walks the lines along axis in parallel: distinct lines
// write distinct parts of out, and inside a line the writes go in order,
// so the later of two writes to one place wins.
func scatterLines[T word, I indexElem](out, idx, values Buf, axis int) error {
	o, ix, v := elems[T](out), elems[I](idx), elems[T](values)
	n, m := out.Shape[axis], idx.Shape[axis]
	so, si, sv := out.Strides[axis], idx.Strides[axis], values.Strides[axis]
	var fe firstError
	forLines(idx.Shape, axis, m, []Buf{out, idx, values}, func() func(offs []int) {
		return func(offs []int) {
			if fe.failed() {
				return
			}
			a, b, c := offs[0], offs[1], offs[2]
			for j := 0; j < m; j++ {
				x := ix[b+j*si]
				t, ok := wrapIndex(x, n)
				if !ok {
					fe.set(indexError("cpu.PutAlongAxis", int64(x), axis, n))
					return
				}
				o[a+t*so] = v[c+j*sv]
			}
		}
	})
	return fe.err()
}

// forLines visits the lines of shape along axis: every position of the
// other axes. For each it calls the function made by perChunk with each
// operand's offset of the line's first element. perChunk runs once per
// parallel chunk, so it can hold scratch memory for its lines. lineWork
// is the cost of one line in elements, to size the chunks.
func forLines(shape []int, axis, lineWork int, bufs []Buf, perChunk func() func(offs []int)) {
	rest := make([]int, 0, len(shape))
	rest = append(append(rest, shape[:axis]...), shape[axis+1:]...)
	strides := make([][]int, len(bufs))
	base := make([]int, len(bufs))
	for k, b := range bufs {
		st := make([]int, 0, len(shape))
		strides[k] = append(append(st, b.Strides[:axis]...), b.Strides[axis+1:]...)
		base[k] = b.Offset
	}
	w := newWalker(rest, strides...)
	inner := w.InnerStrides()
	ParallelFor(w.Size(), max(1, grain/max(1, lineWork)), func(lo, hi int) {
		line := perChunk()
		offs := make([]int, len(bufs))
		w.Runs(lo, hi, base, func(start []int, n int) {
			for i := 0; i < n; i++ {
				for k := range offs {
					offs[k] = start[k] + i*inner[k]
				}
				line(offs)
			}
		})
	})
}

// ScatterAddAlongAxis sets out to zeros plus updates added along axis at
// idx: out[..., idx[..., j, ...], ...] += updates[..., j, ...]. It is the
// transpose of TakeAlongAxis, so repeated indices accumulate. idx and
// updates have one shape, equal to out's on every axis but axis. Negative
// indices count from the end; one out of range is an *array.Error.
// float16 and bfloat16 sum in float32 and round once per element. out
// must not alias idx or updates.
func ScatterAddAlongAxis(out, idx, updates Buf, axis int) error {
	const op = "cpu.ScatterAddAlongAxis"
	if err := checkIndexDType(op, idx); err != nil {
		return err
	}
	if updates.DType != out.DType {
		return array.Errorf(op, "updates dtype %v differs from out's %v", updates.DType, out.DType)
	}
	switch idx.DType {
	case array.Uint8:
		return scatterAddIndex[uint8](out, idx, updates, axis)
	case array.Int32:
		return scatterAddIndex[int32](out, idx, updates, axis)
	case array.Int8:
		return scatterAddIndex[int8](out, idx, updates, axis)
	case array.Int16:
		return scatterAddIndex[int16](out, idx, updates, axis)
	case array.Uint16:
		return scatterAddIndex[uint16](out, idx, updates, axis)
	case array.Uint32:
		return scatterAddIndex[uint32](out, idx, updates, axis)
	case array.Uint64:
		return scatterAddIndex[uint64](out, idx, updates, axis)
	default:
		return scatterAddIndex[int64](out, idx, updates, axis)
	}
}

func scatterAddIndex[I indexElem](out, idx, upd Buf, axis int) error {
	switch out.DType {
	case array.Uint8:
		return scatterAddLines[uint8, I](out, idx, upd, axis)
	case array.Int32:
		return scatterAddLines[int32, I](out, idx, upd, axis)
	case array.Int64:
		return scatterAddLines[int64, I](out, idx, upd, axis)
	case array.Int8:
		return scatterAddLines[int8, I](out, idx, upd, axis)
	case array.Int16:
		return scatterAddLines[int16, I](out, idx, upd, axis)
	case array.Uint16:
		return scatterAddLines[uint16, I](out, idx, upd, axis)
	case array.Uint32:
		return scatterAddLines[uint32, I](out, idx, upd, axis)
	case array.Uint64:
		return scatterAddLines[uint64, I](out, idx, upd, axis)
	case array.Float32:
		return scatterAddLines[float32, I](out, idx, upd, axis)
	case array.Float64:
		return scatterAddLines[float64, I](out, idx, upd, axis)
	case array.Complex64:
		return scatterAddLines[complex64, I](out, idx, upd, axis)
	case array.Float16:
		return scatterAddHalf[array.F16, I](out, idx, upd, axis, array.F16.Float32, array.NewF16)
	case array.BFloat16:
		return scatterAddHalf[array.BF16, I](out, idx, upd, axis, array.BF16.Float32, array.NewBF16)
	default:
		return array.Errorf("cpu.ScatterAddAlongAxis", "cannot add dtype %v", out.DType)
	}
}

// scatterAddLines accumulates each line along axis straight into out:
// distinct lines own distinct parts of out, so they run in parallel.
func scatterAddLines[T ewInt | float32 | float64 | complex64, I indexElem](out, idx, upd Buf, axis int) error {
	o, ix, v := elems[T](out), elems[I](idx), elems[T](upd)
	n, m := out.Shape[axis], idx.Shape[axis]
	so, si, sv := out.Strides[axis], idx.Strides[axis], upd.Strides[axis]
	var fe firstError
	forLines(idx.Shape, axis, n+m, []Buf{out, idx, upd}, func() func(offs []int) {
		return func(offs []int) {
			a, b, c := offs[0], offs[1], offs[2]
			for t := 0; t < n; t++ {
				o[a+t*so] = 0
			}
			for j := 0; j < m; j++ {
				x := ix[b+j*si]
				t, ok := wrapIndex(x, n)
				if !ok {
					fe.set(indexError("cpu.ScatterAddAlongAxis", int64(x), axis, n))
					return
				}
				o[a+t*so] += v[c+j*sv]
			}
		}
	})
	return fe.err()
}

// scatterAddHalf sums a line in float32 scratch and rounds once on store.
func scatterAddHalf[H array.F16 | array.BF16, I indexElem](out, idx, upd Buf, axis int, load func(H) float32, store func(float32) H) error {
	o, ix, v := elems[H](out), elems[I](idx), elems[H](upd)
	n, m := out.Shape[axis], idx.Shape[axis]
	so, si, sv := out.Strides[axis], idx.Strides[axis], upd.Strides[axis]
	var fe firstError
	forLines(idx.Shape, axis, n+m, []Buf{out, idx, upd}, func() func(offs []int) {
		acc := make([]float32, n)
		return func(offs []int) {
			a, b, c := offs[0], offs[1], offs[2]
			clear(acc)
			for j := 0; j < m; j++ {
				x := ix[b+j*si]
				t, ok := wrapIndex(x, n)
				if !ok {
					fe.set(indexError("cpu.ScatterAddAlongAxis", int64(x), axis, n))
					return
				}
				acc[t] += load(v[c+j*sv])
			}
			for t, s := range acc {
				o[a+t*so] = store(s)
			}
		}
	})
	return fe.err()
}
