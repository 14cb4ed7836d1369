package cpu

import (
	"unsafe"

	"github.com/fathom-go/fathom/array"
)

// Pool is a pooling window over the spatial axes of a channels-last array
// (N, spatial..., C): one entry per spatial axis in each field. Padding
// is symmetric. The kernels trust the caller (package ops) for the
// shapes: every window overlaps the input, since the padding is less than
// the kernel.
type Pool struct {
	Kernel, Stride, Pad []int
}

// poolGeom is a pooling problem with 1-D and 2-D pools widened to 3-D by
// leading spatial axes of size 1, so that one set of loops serves all.
type poolGeom struct {
	n, c             int
	in, out, k, s, p [3]int
	rows             int // output positions: n·out[0]·out[1]·out[2]
}

func newPoolGeom(x, y []int, p Pool) poolGeom {
	g := poolGeom{n: x[0], c: x[len(x)-1]}
	g.in, g.out, g.k, g.s = [3]int{1, 1, 1}, [3]int{1, 1, 1}, [3]int{1, 1, 1}, [3]int{1, 1, 1}
	lead := 3 - len(p.Kernel)
	for i := range p.Kernel {
		g.in[lead+i], g.out[lead+i] = x[1+i], y[1+i]
		g.k[lead+i], g.s[lead+i], g.p[lead+i] = p.Kernel[i], p.Stride[i], p.Pad[i]
	}
	g.rows = g.n * g.out[0] * g.out[1] * g.out[2]
	return g
}

// overlapping reports whether two windows can share an input element, so
// that scattering into the input must not run windows of one image in
// parallel.
func (g *poolGeom) overlapping() bool {
	return g.s[0] < g.k[0] || g.s[1] < g.k[1] || g.s[2] < g.k[2]
}

// offsets appends to buf the element offset (of channel 0) of every
// input position of output row r that lies inside the input, in row-major
// window order, so the first is the first element on ties. It is never
// empty: every window overlaps the input.
func (g *poolGeom) offsets(r int, buf []int) []int {
	ow := r % g.out[2]
	t := r / g.out[2]
	oh := t % g.out[1]
	t /= g.out[1]
	od := t % g.out[0]
	n := t / g.out[0]
	for kd := range g.k[0] {
		id := od*g.s[0] - g.p[0] + kd
		if id < 0 || id >= g.in[0] {
			continue
		}
		for kh := range g.k[1] {
			ih := oh*g.s[1] - g.p[1] + kh
			if ih < 0 || ih >= g.in[1] {
				continue
			}
			base := ((n*g.in[0]+id)*g.in[1] + ih) * g.in[2]
			for kw := range g.k[2] {
				iw := ow*g.s[2] - g.p[2] + kw
				if iw < 0 || iw >= g.in[2] {
					continue
				}
				buf = append(buf, (base+iw)*g.c)
			}
		}
	}
	return buf
}

// window is the size of a whole window, the capacity offsets needs.
func (g *poolGeom) window() int { return g.k[0] * g.k[1] * g.k[2] }

// rowGrain is how many output rows a chunk of ParallelFor takes: enough
// that a chunk reads some 16K elements.
func (g *poolGeom) rowGrain() int {
	return max(1, (1<<14)/max(1, g.c*g.window()))
}

// computeDType is the dtype a pooling kernel works in: float16 and
// bfloat16 compute in float32 and round on store.
func computeDType(dt array.DType) array.DType {
	if dt == array.Float16 || dt == array.BFloat16 {
		return array.Float32
	}
	return dt
}

// dense returns b's elements as a row-major buffer of float dtype dt
// starting at element 0: b itself when it already is one, otherwise a
// converted copy in a buffer from the package's pool (strided views and
// 16-bit floats), which release returns.
func dense(b Buf, dt array.DType) (d Buf, release func(), err error) {
	if b.DType == dt && b.RowMajor() && b.Offset == 0 {
		return b, func() {}, nil
	}
	d, release = poolScratch(dt, b.Shape)
	return d, release, Copy(d, b)
}

// poolScratch is a row-major buffer of dtype dt and shape, from the
// package's pool for float32 and float64: fresh pages cost more than
// pooling them (DESIGN.md).
func poolScratch(dt array.DType, shape []int) (Buf, func()) {
	n := Buf{Shape: shape}.Size()
	switch dt {
	case array.Float32:
		return pooled(poolFor[float32](), n, dt, shape)
	case array.Float64:
		return pooled(poolFor[float64](), n, dt, shape)
	}
	// the integer dtypes of max pooling, for a strided input only
	return contiguous(make([]byte, n*dt.Size()), dt, shape), func() {}
}

func pooled[T float32 | float64](p *bufPool[T], n int, dt array.DType, shape []int) (Buf, func()) {
	b := p.get(n)
	data := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(*b))), n*dt.Size())
	return contiguous(data, dt, shape), func() { p.put(b) }
}

// poolRun runs k over dense inputs in the compute dtype and writes its
// result to out, through a float32 buffer for the 16-bit floats.
func poolRun(out Buf, ins []Buf, k func(y Buf, xs []Buf)) error {
	if out.Size() == 0 {
		return nil
	}
	ct := computeDType(out.DType)
	xs := make([]Buf, len(ins))
	for i, b := range ins {
		x, release, err := dense(b, ct)
		defer release()
		if err != nil {
			return err
		}
		xs[i] = x
	}
	direct := out.DType == ct && out.RowMajor() && out.Offset == 0
	y := out
	if !direct {
		var release func()
		y, release = poolScratch(ct, out.Shape)
		defer release()
	}
	k(y, xs)
	if !direct {
		return Copy(out, y)
	}
	return nil
}

type poolOrdered interface {
	ewInt | float32 | float64
}

type poolFloat interface{ float32 | float64 }

// MaxPool writes the maximum of each window of in (N, spatial..., C) to
// out (N, pooled spatial..., C). Padding counts as -inf: it never wins,
// since every window overlaps the input. A NaN in a window gives NaN.
// Floats and integers.
func MaxPool(out, in Buf, p Pool) error {
	if !in.DType.IsFloat() && !in.DType.IsInteger() {
		return array.Errorf("cpu.MaxPool", "dtype %v is not a float or integer dtype", in.DType)
	}
	g := newPoolGeom(in.Shape, out.Shape, p)
	return poolRun(out, []Buf{in}, func(y Buf, xs []Buf) {
		switch y.DType {
		case array.Float32:
			maxPool[float32](&g, y, xs[0])
		case array.Float64:
			maxPool[float64](&g, y, xs[0])
		case array.Int8:
			maxPool[int8](&g, y, xs[0])
		case array.Int16:
			maxPool[int16](&g, y, xs[0])
		case array.Int32:
			maxPool[int32](&g, y, xs[0])
		case array.Int64:
			maxPool[int64](&g, y, xs[0])
		case array.Uint8:
			maxPool[uint8](&g, y, xs[0])
		case array.Uint16:
			maxPool[uint16](&g, y, xs[0])
		case array.Uint32:
			maxPool[uint32](&g, y, xs[0])
		default:
			maxPool[uint64](&g, y, xs[0])
		}
	})
}

func maxPool[T poolOrdered](g *poolGeom, yb, xb Buf) {
	x, y, c := elems[T](xb), elems[T](yb), g.c
	ParallelFor(g.rows, g.rowGrain(), func(lo, hi int) {
		offs := make([]int, 0, g.window())
		for r := lo; r < hi; r++ {
			offs = g.offsets(r, offs[:0])
			dst := y[r*c : (r+1)*c]
			copy(dst, x[offs[0]:offs[0]+c])
			rest := offs[1:]
			// Two window elements a pass halve the loads and stores of
			// dst; the builtin max keeps a NaN, so it propagates.
			for ; len(rest) >= 2; rest = rest[2:] {
				a, b := x[rest[0]:rest[0]+c], x[rest[1]:rest[1]+c]
				a, b = a[:len(dst)], b[:len(dst)]
				for i, v := range dst {
					dst[i] = max(v, a[i], b[i])
				}
			}
			if len(rest) == 1 {
				a := x[rest[0] : rest[0]+c]
				a = a[:len(dst)]
				for i, v := range dst {
					dst[i] = max(v, a[i])
				}
			}
		}
	})
}

// AvgPool writes the mean of each window of in to out, dividing by the
// whole window size: padding counts as zeros (PyTorch's default
// count_include_pad=True, and MLX). Float dtypes.
func AvgPool(out, in Buf, p Pool) error {
	if !in.DType.IsFloat() {
		return array.Errorf("cpu.AvgPool", "dtype %v is not a float dtype", in.DType)
	}
	g := newPoolGeom(in.Shape, out.Shape, p)
	return poolRun(out, []Buf{in}, func(y Buf, xs []Buf) {
		if y.DType == array.Float64 {
			avgPool[float64](&g, y, xs[0])
		} else {
			avgPool[float32](&g, y, xs[0])
		}
	})
}

func avgPool[T poolFloat](g *poolGeom, yb, xb Buf) {
	x, y, c := elems[T](xb), elems[T](yb), g.c
	cnt := T(g.window())
	ParallelFor(g.rows, g.rowGrain(), func(lo, hi int) {
		offs := make([]int, 0, g.window())
		for r := lo; r < hi; r++ {
			offs = g.offsets(r, offs[:0])
			dst := y[r*c : (r+1)*c]
			copy(dst, x[offs[0]:offs[0]+c])
			for _, off := range offs[1:] {
				a := x[off : off+c]
				a = a[:len(dst)]
				for i, v := range a {
					dst[i] += v
				}
			}
			for i := range dst {
				dst[i] /= cnt
			}
		}
	})
}

// AvgPoolGrad writes to dx (the pooled input's shape) the gradient of
// AvgPool from its output gradient dy: each window's dy divided by the
// window size, added over the windows that hold an element.
func AvgPoolGrad(dx, dy Buf, p Pool) error {
	if !dy.DType.IsFloat() {
		return array.Errorf("cpu.AvgPoolGrad", "dtype %v is not a float dtype", dy.DType)
	}
	g := newPoolGeom(dx.Shape, dy.Shape, p)
	return poolRun(dx, []Buf{dy}, func(y Buf, xs []Buf) {
		if y.DType == array.Float64 {
			avgPoolGrad[float64](&g, y, xs[0])
		} else {
			avgPoolGrad[float32](&g, y, xs[0])
		}
	})
}

func avgPoolGrad[T poolFloat](g *poolGeom, dxb, dyb Buf) {
	dx, dy, c := elems[T](dxb), elems[T](dyb), g.c
	inv := 1 / T(g.window())
	g.scatter(dx[:dxb.Size()], func(fresh bool) func(r int) {
		row, offs := make([]T, c), make([]int, 0, g.window())
		return func(r int) {
			for i, v := range dy[r*c : (r+1)*c] {
				row[i] = v * inv
			}
			for _, off := range g.offsets(r, offs[:0]) {
				d := dx[off : off+c]
				if fresh {
					copy(d, row)
					continue
				}
				d = d[:len(row)]
				for i, v := range row {
					d[i] += v
				}
			}
		}
	})
}

// tiles reports whether the windows cover the input exactly once: then
// a scatter can write each window's elements instead of adding to a dx
// cleared beforehand, which saves a pass over dx.
func (g *poolGeom) tiles() bool {
	for i := range 3 {
		if g.s[i] != g.k[i] || g.out[i]*g.k[i] != g.in[i]+2*g.p[i] {
			return false
		}
	}
	return true
}

// scatter runs the rows of newRow's function, which add into dx (or, when
// told fresh, overwrite their windows' elements), in parallel where no
// two rows can touch one element: all rows when windows do not overlap,
// otherwise one image at a time per worker. Unless the windows tile the
// input, dx is cleared first and the rows add. newRow is called once per
// chunk, for its scratch space.
func (g *poolGeom) scatter(dx any, newRow func(fresh bool) func(r int)) {
	fresh := g.tiles()
	if !fresh {
		switch d := dx.(type) {
		case []float32:
			ParallelFor(len(d), grain, func(lo, hi int) { clear(d[lo:hi]) })
		case []float64:
			ParallelFor(len(d), grain, func(lo, hi int) { clear(d[lo:hi]) })
		}
	}
	if !g.overlapping() {
		ParallelFor(g.rows, g.rowGrain(), func(lo, hi int) {
			f := newRow(fresh)
			for r := lo; r < hi; r++ {
				f(r)
			}
		})
		return
	}
	per := g.rows / max(g.n, 1)
	ParallelFor(g.n, 1, func(lo, hi int) {
		f := newRow(false)
		for r := lo * per; r < hi*per; r++ {
			f(r)
		}
	})
}

// argmax sets best and arg to the maximum of each channel over output
// row r's window of x and its element offset, the first on ties and the
// first NaN if there is one (PyTorch's choice). It returns the window's
// offsets, built in offs.
func argmax[T poolFloat](g *poolGeom, x []T, r int, best []T, arg, offs []int) []int {
	offs = g.offsets(r, offs[:0])
	copy(best, x[offs[0]:offs[0]+len(best)])
	for i := range arg {
		arg[i] = offs[0] + i
	}
	arg = arg[:len(best)]
	for _, off := range offs[1:] {
		src := x[off : off+len(best)]
		src = src[:len(best)]
		for i, v := range src {
			// The builtin max and an integer select keep this free of
			// data-dependent branches but the rare NaN's: with random data
			// a branch on v > b is a coin toss. max keeps the first NaN.
			b, a := best[i], arg[i]
			if v > b {
				a = off + i
			}
			if v != v && b == b {
				a = off + i
			}
			best[i], arg[i] = max(b, v), a
		}
	}
	return offs
}

// MaxPoolGather writes to out (MaxPool's output shape) the element of t
// (x's shape) at the position of each window's maximum in x: the
// derivative of MaxPool in the direction t.
func MaxPoolGather(out, x, t Buf, p Pool) error {
	if !x.DType.IsFloat() || t.DType != x.DType {
		return array.Errorf("cpu.MaxPoolGather", "dtypes %v and %v, want one float dtype", x.DType, t.DType)
	}
	g := newPoolGeom(x.Shape, out.Shape, p)
	return poolRun(out, []Buf{x, t}, func(y Buf, xs []Buf) {
		if y.DType == array.Float64 {
			maxPoolGather[float64](&g, y, xs[0], xs[1])
		} else {
			maxPoolGather[float32](&g, y, xs[0], xs[1])
		}
	})
}

func maxPoolGather[T poolFloat](g *poolGeom, yb, xb, tb Buf) {
	x, t, y, c := elems[T](xb), elems[T](tb), elems[T](yb), g.c
	ParallelFor(g.rows, g.rowGrain(), func(lo, hi int) {
		best, arg, offs := make([]T, c), make([]int, c), make([]int, 0, g.window())
		for r := lo; r < hi; r++ {
			argmax(g, x, r, best, arg, offs)
			dst := y[r*c : (r+1)*c]
			for i, a := range arg {
				dst[i] = t[a]
			}
		}
	})
}

// MaxPoolScatter writes to dx (x's shape) the gradient of MaxPool from
// its output gradient dy: each window's dy goes to the position of its
// maximum in x (the first on ties), added where windows overlap. It finds
// the maxima again rather than storing their indices, so it needs no
// buffer beyond one row of channels per worker.
func MaxPoolScatter(dx, x, dy Buf, p Pool) error {
	if !x.DType.IsFloat() || dy.DType != x.DType {
		return array.Errorf("cpu.MaxPoolScatter", "dtypes %v and %v, want one float dtype", x.DType, dy.DType)
	}
	g := newPoolGeom(x.Shape, dy.Shape, p)
	return poolRun(dx, []Buf{x, dy}, func(y Buf, xs []Buf) {
		if y.DType == array.Float64 {
			maxPoolScatter[float64](&g, y, xs[0], xs[1])
		} else {
			maxPoolScatter[float32](&g, y, xs[0], xs[1])
		}
	})
}

func maxPoolScatter[T poolFloat](g *poolGeom, dxb, xb, dyb Buf) {
	x, dy, dx, c := elems[T](xb), elems[T](dyb), elems[T](dxb), g.c
	g.scatter(dx[:dxb.Size()], func(fresh bool) func(r int) {
		best, arg, offs := make([]T, c), make([]int, c), make([]int, 0, g.window())
		return func(r int) {
			offs = argmax(g, x, r, best, arg, offs)
			if fresh {
				for _, off := range offs {
					clear(dx[off : off+c])
				}
			}
			for i, v := range dy[r*c : (r+1)*c] {
				dx[arg[i]] += v
			}
		}
	})
}
