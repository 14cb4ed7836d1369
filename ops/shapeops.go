package ops

import (
	"math"
	"slices"

	"github.com/fathom-go/fathom/array"
)

// Roll shifts a's elements by shift positions along each of axes,
// wrapping those that fall off one end round to the other (numpy's and
// MLX's roll with one shift for every axis; a repeated axis rolls twice).
// With no axes a is rolled as if flattened and keeps its shape. A
// negative shift rolls towards the front. The result is a copy. RollAxes
// takes a shift per axis.
func Roll(a *array.Array, shift int, axes ...int) *array.Array {
	const op = "ops.Roll"
	requireNonNil(op, a)
	return roll(op, a, []int{shift}, axes)
}

// RollAxes rolls a by shifts[i] positions along axes[i] (numpy's roll
// with tuples of shifts and axes). As in numpy the two broadcast against
// each other: they have the same length, or one of them has length 1 and
// applies to every entry of the other. The shifts along a repeated axis
// add up. With no axes a is rolled as if flattened, by the sum of shifts.
func RollAxes(a *array.Array, shifts, axes []int) *array.Array {
	const op = "ops.RollAxes"
	requireNonNil(op, a)
	if len(shifts) == 0 {
		array.Panicf(op, "no shifts for axes %v of shape %v", axes, a.Shape())
	}
	if len(axes) > 0 && len(shifts) != len(axes) && len(shifts) != 1 && len(axes) != 1 {
		array.Panicf(op, "%d shifts %v and %d axes %v of shape %v do not broadcast", len(shifts), shifts, len(axes), axes, a.Shape())
	}
	return roll(op, a, shifts, axes)
}

// roll adds the shifts up per axis, modulo the axis's length so that no
// sum overflows, and rolls each axis once.
func roll(op string, a *array.Array, shifts, axes []int) *array.Array {
	sh := a.Shape()
	if len(axes) == 0 {
		n := a.Size()
		k := 0
		for _, s := range shifts {
			k = addMod(k, s, n)
		}
		return Reshape(rollAxis(Flatten(a), k, 0), sh...)
	}
	ks := make([]int, len(sh))
	for i := range max(len(shifts), len(axes)) {
		ax := axisIn(op, axes[min(i, len(axes)-1)], sh)
		ks[ax] = addMod(ks[ax], shifts[min(i, len(shifts)-1)], sh[ax])
	}
	for ax, k := range ks {
		a = rollAxis(a, k, ax)
	}
	return a
}

// addMod returns (k + s) mod n in [0, n) for k in [0, n); 0 when n is 0.
func addMod(k, s, n int) int {
	if n == 0 {
		return 0
	}
	s %= n
	if s < 0 {
		s += n
	}
	if k >= n-s {
		return k - (n - s)
	}
	return k + s
}

// rollAxis rolls by k in [0, n) along axis ax of length n: the last k
// elements move to the front, so two slices joined the other way round
// make the result.
func rollAxis(a *array.Array, k, ax int) *array.Array {
	if k == 0 {
		return a
	}
	n := a.Dim(ax)
	return Concatenate([]*array.Array{SliceAxis(a, ax, R(n-k, None)), SliceAxis(a, ax, R(0, n-k))}, ax)
}

// axisIn turns a possibly negative axis of an array of shape sh into one
// in [0, len(sh)), or panics naming op, the axis and the shape.
func axisIn(op string, axis int, sh []int) int {
	if axis < -len(sh) || axis >= len(sh) {
		array.Panicf(op, "axis %d out of range for shape %v", axis, sh)
	}
	return normAxis(op, axis, len(sh))
}

// Flip returns a view of a with the order of the elements reversed along
// each of axes (numpy's flip); with no axes, along every axis. The view
// has negative strides on the flipped axes. A repeated axis is an error,
// as in numpy.
func Flip(a *array.Array, axes ...int) *array.Array {
	const op = "ops.Flip"
	requireNonNil(op, a)
	sh := a.Shape()
	rs := make([]Range, len(sh))
	for i := range rs {
		rs[i] = Whole()
	}
	if len(axes) == 0 {
		for i := range rs {
			rs[i] = R(None, None, -1)
		}
	}
	for _, ax := range axes {
		i := axisIn(op, ax, sh)
		if rs[i].Step == -1 {
			array.Panicf(op, "axis %d repeated in %v for shape %v", ax, axes, sh)
		}
		rs[i] = R(None, None, -1)
	}
	return Slice(a, rs...)
}

// Meshgrid returns coordinate arrays for the grid spanned by the 1-D
// vectors xs (numpy's meshgrid; inputs of other shapes are flattened).
// With indexing "ij" result i varies along axis i; with "xy" (Cartesian)
// the first two axes are swapped, so for two vectors of lengths m and n
// the results have shape [n m]. With sparse each result keeps size-1 axes
// where it does not vary; otherwise the results are broadcast views of
// the full grid. Each result has its vector's dtype.
func Meshgrid(xs []*array.Array, indexing string, sparse bool) []*array.Array {
	const op = "ops.Meshgrid"
	if indexing != "xy" && indexing != "ij" {
		array.Panicf(op, "indexing %q is neither \"xy\" nor \"ij\"", indexing)
	}
	nd := len(xs)
	out := make([]*array.Array, nd)
	for i, x := range xs {
		if x == nil {
			array.Panicf(op, "array %d is nil", i)
		}
		shape := slices.Repeat([]int{1}, nd)
		shape[i] = x.Size()
		if indexing == "xy" && nd > 1 {
			shape[0], shape[1] = shape[1], shape[0]
		}
		out[i] = Reshape(x, shape...)
	}
	if sparse || nd == 0 {
		return out
	}
	return broadcastArrays(op, out)
}

// BroadcastArrays returns views of xs broadcast against each other to
// one shape (numpy's broadcast_arrays).
func BroadcastArrays(xs ...*array.Array) []*array.Array {
	const op = "ops.BroadcastArrays"
	for i, x := range xs {
		if x == nil {
			array.Panicf(op, "array %d is nil", i)
		}
	}
	return broadcastArrays(op, xs)
}

func broadcastArrays(op string, xs []*array.Array) []*array.Array {
	shapes := make([][]int, len(xs))
	for i, x := range xs {
		shapes[i] = x.Shape()
	}
	shape := BroadcastShapes(op, shapes...)
	out := make([]*array.Array, len(xs))
	for i, x := range xs {
		out[i] = BroadcastTo(x, shape...)
	}
	return out
}

// Unflatten returns a view of a with axis split into the axes of shape,
// whose product must be the axis's length; one entry of shape may be -1,
// inferred from the others (MLX's unflatten).
func Unflatten(a *array.Array, axis int, shape ...int) *array.Array {
	const op = "ops.Unflatten"
	requireNonNil(op, a)
	sh := a.Shape()
	ax := axisIn(op, axis, sh)
	if len(shape) == 0 {
		array.Panicf(op, "no shape to unflatten axis %d of shape %v into", axis, sh)
	}
	infer, known := -1, 1
	for i, d := range shape {
		switch {
		case d == -1 && infer < 0:
			infer = i
		case d < 0:
			array.Panicf(op, "shape %v for axis %d of shape %v has a negative dimension or more than one -1", shape, axis, sh)
		case d != 0 && known > math.MaxInt/d:
			array.Panicf(op, "shape %v has too many elements", shape)
		default:
			known *= d
		}
	}
	ns := slices.Clone(shape)
	n := sh[ax]
	if infer >= 0 {
		if known == 0 || n%known != 0 {
			array.Panicf(op, "cannot unflatten axis %d (size %d) of shape %v into %v", axis, n, sh, shape)
		}
		ns[infer] = n / known
	} else if known != n {
		array.Panicf(op, "cannot unflatten axis %d (size %d) of shape %v into %v (%d elements)", axis, n, sh, shape, known)
	}
	return Reshape(a, slices.Concat(sh[:ax], ns, sh[ax+1:])...)
}

// Unstack returns the slices of a along axis, each a view without that
// axis (the inverse of Stack; MLX's unstack, numpy's unstack). An empty
// axis gives no arrays.
func Unstack(a *array.Array, axis int) []*array.Array {
	const op = "ops.Unstack"
	requireNonNil(op, a)
	if a.Ndim() == 0 {
		array.Panicf(op, "cannot unstack a 0-d array (shape %v)", a.Shape())
	}
	ax := axisIn(op, axis, a.Shape())
	out := make([]*array.Array, a.Dim(ax))
	for i := range out {
		out[i] = Squeeze(SliceAxis(a, ax, R(i, i+1)), ax)
	}
	return out
}

// AtLeast1D returns a view of a with at least one axis: a 0-d array
// becomes shape [1] (numpy's atleast_1d).
func AtLeast1D(a *array.Array) *array.Array {
	requireNonNil("ops.AtLeast1D", a)
	if a.Ndim() == 0 {
		return Reshape(a, 1)
	}
	return a
}

// AtLeast2D returns a view of a with at least two axes: 0-d becomes
// [1 1] and [n] becomes [1 n] (numpy's atleast_2d).
func AtLeast2D(a *array.Array) *array.Array {
	requireNonNil("ops.AtLeast2D", a)
	switch a.Ndim() {
	case 0:
		return Reshape(a, 1, 1)
	case 1:
		return Reshape(a, 1, a.Dim(0))
	}
	return a
}

// AtLeast3D returns a view of a with at least three axes: 0-d becomes
// [1 1 1], [n] becomes [1 n 1] and [m n] becomes [m n 1] (numpy's
// atleast_3d).
func AtLeast3D(a *array.Array) *array.Array {
	requireNonNil("ops.AtLeast3D", a)
	switch a.Ndim() {
	case 0:
		return Reshape(a, 1, 1, 1)
	case 1:
		return Reshape(a, 1, a.Dim(0), 1)
	case 2:
		return Reshape(a, a.Dim(0), a.Dim(1), 1)
	}
	return a
}

// viewPrim reinterprets its input's bytes as DType, of the same element
// size: a bitcast that shares the input's memory.
type viewPrim struct{ DType array.DType }

func (p *viewPrim) Name() string { return "View" }
func (p *viewPrim) Eval(_ array.Stream, in, out []*array.Array) error {
	out[0].SetData(in[0].Storage(), in[0].Strides(), in[0].Offset())
	return nil
}
func (p *viewPrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// OutputShapes keeps the input's shape.
func (p *viewPrim) OutputShapes(in []*array.Array) ([][]int, error) { return sameShape(in) }

// VJP is zero (nil): the bits of a value reinterpreted as another type
// do not vary smoothly with it.
func (p *viewPrim) VJP(_, _, _ []*array.Array, _ []int) []*array.Array {
	return []*array.Array{nil}
}

// JVP is zero, for the same reason.
func (p *viewPrim) JVP(_, _, _ []*array.Array, _ []int) []*array.Array {
	return []*array.Array{nil}
}

// Vmap reinterprets the whole batch.
func (p *viewPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	return []*array.Array{View(in[0], p.DType)}, axes
}

// View returns a's memory reinterpreted as dtype dt, which must have the
// same element size as a's (MLX's view, numpy's ndarray.view): a bitcast,
// not a conversion, sharing a's memory. Viewing as Bool is refused
// unless a is Bool, since bytes other than 0 and 1 are not Go bools.
// Its derivative is zero.
func View(a *array.Array, dt array.DType) *array.Array {
	const op = "ops.View"
	requireNonNil(op, a)
	checkCreateDType(op, dt)
	if dt == a.DType() {
		return a
	}
	if dt.Size() != a.DType().Size() {
		array.Panicf(op, "cannot view %v (%d bytes) of shape %v as %v (%d bytes): the element sizes differ",
			a.DType(), a.DType().Size(), a.Shape(), dt, dt.Size())
	}
	if dt == array.Bool {
		array.Panicf(op, "cannot view %v of shape %v as bool: its bytes need not be 0 or 1", a.DType(), a.Shape())
	}
	return node(a.Shape(), dt, &viewPrim{DType: dt}, a)
}

// asStridedPrim views its 1-D input with Shape and Strides (in elements
// of the input) from element Offset on. AsStrided has checked that every
// element the view reaches lies inside the input.
type asStridedPrim struct {
	Shape, Strides []int
	Offset         int
}

func (p *asStridedPrim) Name() string { return "AsStrided" }

// Eval composes the view with the input's own stride, which Flatten
// leaves as any step through memory (negative after a reversal, 0 after
// a broadcast), so no copy is ever needed.
func (p *asStridedPrim) Eval(_ array.Stream, in, out []*array.Array) error {
	s := in[0].Strides()[0] // the input is always Flatten's 1-D view
	st := make([]int, len(p.Strides))
	for i, v := range p.Strides {
		st[i] = v * s
	}
	out[0].SetData(in[0].Storage(), st, in[0].Offset()+p.Offset*s)
	return nil
}
func (p *asStridedPrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*asStridedPrim)
	return ok && equalInts(q.Shape, p.Shape) && equalInts(q.Strides, p.Strides) && q.Offset == p.Offset
}

// positions returns the input element each output element reads, in
// row-major order.
func (p *asStridedPrim) positions() []int64 {
	n := 1
	for _, d := range p.Shape {
		n *= d
	}
	pos := make([]int64, n)
	idx := make([]int, len(p.Shape))
	for k := range pos {
		v := p.Offset
		for i, j := range idx {
			v += j * p.Strides[i]
		}
		pos[k] = int64(v)
		for i := len(idx) - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < p.Shape[i] {
				break
			}
			idx[i] = 0
		}
	}
	return pos
}

// VJP adds each cotangent element into the input element it was read
// from: elements the view reaches more than once collect every use.
func (p *asStridedPrim) VJP(in, _, cots []*array.Array, _ []int) []*array.Array {
	pos := p.positions()
	g := Reshape(cots[0], len(pos))
	return []*array.Array{scatterAdd(array.FromSlice(pos), g, 0, in[0].Size())}
}

// JVP views the tangent the same way.
func (p *asStridedPrim) JVP(_, _, tans []*array.Array, _ []int) []*array.Array {
	t := Flatten(tans[0])
	return []*array.Array{node(slices.Clone(p.Shape), t.DType(), p, t)}
}

// Vmap views each batch member's elements, which lie one member's size
// apart once the batch axis is in front.
func (p *asStridedPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	x := batchFront(in[0], axes[0])
	b, n := x.Dim(0), 1
	for _, d := range x.Shape()[1:] {
		n *= d
	}
	q := &asStridedPrim{Shape: slices.Insert(slices.Clone(p.Shape), 0, b), Strides: slices.Insert(slices.Clone(p.Strides), 0, n),
		Offset: p.Offset}
	return []*array.Array{node(slices.Clone(q.Shape), x.DType(), q, Flatten(x))}, []int{0}
}

// AsStrided returns a view of a's elements, taken in row-major order as
// one flat run, with the given shape and strides (counted in elements,
// not bytes) starting at element offset (MLX's as_strided). It is as
// unsafe as numpy's as_strided in one way: strides may make elements of
// the view overlap, so one element of a appears several times (and the
// gradient adds up every appearance). It is safe in the other: a view
// that would reach outside a's elements is refused with *array.Error.
// The result is always a view.
func AsStrided(a *array.Array, shape, strides []int, offset int) *array.Array {
	const op = "ops.AsStrided"
	requireNonNil(op, a)
	if len(shape) != len(strides) {
		array.Panicf(op, "shape %v and strides %v have different lengths", shape, strides)
	}
	m := checkedBytes(op, shape, a.DType())
	n := a.Size()
	if m > 0 {
		// Each step keeps lo and hi within [0, n), so the sums cannot
		// overflow however large the strides.
		outside := func() {
			array.Panicf(op, "shape %v with strides %v from offset %d reaches outside the %d elements of shape %v",
				shape, strides, offset, n, a.Shape())
		}
		if offset < 0 || offset >= n {
			outside()
		}
		lo, hi := offset, offset
		for i, d := range shape {
			st := strides[i]
			if st != 0 && d-1 > n/absInt(st) {
				outside()
			}
			if st > 0 {
				hi += (d - 1) * st
			} else {
				lo += (d - 1) * st
			}
			if lo < 0 || hi >= n {
				outside()
			}
		}
	}
	p := &asStridedPrim{Shape: slices.Clone(shape), Strides: slices.Clone(strides), Offset: offset}
	if m == 0 {
		p.Strides = make([]int, len(shape))
		p.Offset = 0
	}
	return node(slices.Clone(p.Shape), a.DType(), p, Flatten(a))
}

func absInt(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
