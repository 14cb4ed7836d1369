package ops

import (
	"fmt"
	"math"
	"slices"

	"github.com/fathom-go/fathom/internal/strided"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
)

// reshapePrim gives its input a new shape, keeping the elements in
// row-major order. It is a view whenever the input's strides allow one
// (always when only size-1 axes are added or removed) and a copy
// otherwise.
type reshapePrim struct{ Shape []int }

func (p *reshapePrim) Name() string { return "Reshape" }
func (p *reshapePrim) Eval(s array.Stream, in, out []*array.Array) error {
	if st, ok := reshapeStrides(in[0].Shape(), in[0].Strides(), p.Shape); ok {
		out[0].SetData(in[0].Storage(), st, in[0].Offset())
		return nil
	}
	return dispatch(p, s, in, out)
}
func (p *reshapePrim) evalCPU(in, out []*array.Array) error {
	// Both sides are row-major, so copying into the output's memory seen
	// with the input's shape lays the elements out in the new shape.
	o := alloc(out[0])
	o.Shape = in[0].Shape()
	o.Strides = strided.RowMajor(o.Shape)
	return cpu.Copy(o, bufOf(in[0]))
}
func (p *reshapePrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		o.Shape = in[0].Shape()
		o.Strides = strided.RowMajor(o.Shape)
		return metal.Copy(o, viewOf(in[0]))
	})
}
func (p *reshapePrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*reshapePrim)
	return ok && equalInts(q.Shape, p.Shape)
}

// VJP reshapes the cotangent back to the input's shape.
func (p *reshapePrim) VJP(in, _, cots []*array.Array, _ []int) []*array.Array {
	return []*array.Array{Reshape(cots[0], in[0].Shape()...)}
}

// JVP reshapes the tangent like the input.
func (p *reshapePrim) JVP(_, _, tans []*array.Array, _ []int) []*array.Array {
	return []*array.Array{Reshape(tans[0], p.Shape...)}
}

// Vmap puts the batch axis first and keeps it in front of the new shape.
func (p *reshapePrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	x := batchFront(in[0], axes[0])
	return []*array.Array{Reshape(x, append([]int{x.Dim(0)}, p.Shape...)...)}, []int{0}
}

// reshapeStrides returns strides that show memory laid out with
// oldShape/oldStrides as newShape, if there are any (numpy's
// _attempt_nocopy_reshape). Size-1 axes are ignored on both sides, so
// adding or removing them always succeeds; otherwise each group of old
// axes that merges into or splits from a group of new axes must be
// contiguous within itself.
func reshapeStrides(oldShape, oldStrides, newShape []int) ([]int, bool) {
	size := 1
	for _, d := range oldShape {
		size *= d
	}
	if size == 0 {
		return strided.RowMajor(newShape), true
	}
	var od, os []int
	for i, d := range oldShape {
		if d != 1 {
			od = append(od, d)
			os = append(os, oldStrides[i])
		}
	}
	var nd []int // positions of the new shape's axes that are not size 1
	for i, d := range newShape {
		if d != 1 {
			nd = append(nd, i)
		}
	}
	st := make([]int, len(newShape))
	oi, ni := 0, 0
	for oi < len(od) && ni < len(nd) {
		// Grow the groups od[oi:oj] and new[ni:nj] until their sizes
		// agree; with no size-1 axes left this always terminates, since
		// both shapes hold the same number of elements.
		oj, nj := oi+1, ni+1
		op, np := od[oi], newShape[nd[ni]]
		for op != np {
			if np < op {
				np *= newShape[nd[nj]]
				nj++
			} else {
				op *= od[oj]
				oj++
			}
		}
		for k := oi; k < oj-1; k++ {
			if os[k] != od[k+1]*os[k+1] {
				return nil, false
			}
		}
		st[nd[nj-1]] = os[oj-1]
		for k := nj - 1; k > ni; k-- {
			st[nd[k-1]] = st[nd[k]] * newShape[nd[k]]
		}
		oi, ni = oj, nj
	}
	// A size-1 axis's stride is never used to step; giving it the span of
	// the axes after it keeps a contiguous result recognisably row-major.
	for i := len(newShape) - 1; i >= 0; i-- {
		if newShape[i] != 1 {
			continue
		}
		st[i] = 1
		if i+1 < len(newShape) {
			st[i] = st[i+1] * newShape[i+1]
		}
	}
	return st, true
}

// checkedElems returns the number of elements of shape, panicking with a
// *array.Error naming op if a dimension is negative or the count
// overflows.
func checkedElems(op string, shape []int) int {
	n := 1
	for _, d := range shape {
		if d < 0 {
			array.Panicf(op, "negative dimension in shape %v", shape)
		}
		if d != 0 && n > math.MaxInt/d {
			array.Panicf(op, "shape %v has too many elements", shape)
		}
		n *= d
	}
	return n
}

// checkedBytes returns the number of elements of shape, panicking with a
// *array.Error naming op if a dimension is negative, if the count
// overflows int, or if the size in bytes of that many elements of dtype
// dt does. array.New refuses such shapes too, but names the primitive,
// which for a composite op (Tile is a Reshape of a broadcast) is not the
// function the caller used. dt must be valid.
func checkedBytes(op string, shape []int, dt array.DType) int {
	n := checkedElems(op, shape)
	if p := bytesProblem(n, dt); p != "" {
		array.Panicf(op, "shape %v %s", shape, p)
	}
	return n
}

// sizeProblem returns the number of elements of shape and, if an array
// of dtype dt cannot have that shape, why not, as a predicate of the
// shape: "has too many elements" (for an int to count), or too many
// bytes. shape must have no negative dimension.
func sizeProblem(shape []int, dt array.DType) (int, string) {
	n, p := elemsProblem(shape)
	if p != "" {
		return 0, p
	}
	return n, bytesProblem(n, dt)
}

// elemsProblem returns the number of elements of shape, or "has too many
// elements" if an int cannot count them. shape must have no negative
// dimension.
func elemsProblem(shape []int) (int, string) {
	n := 1
	for _, d := range shape {
		if d != 0 && n > math.MaxInt/d {
			return 0, "has too many elements"
		}
		n *= d
	}
	return n, ""
}

// bytesProblem returns, as a predicate of a shape of n elements, why an
// array of dtype dt cannot have it (its size in bytes overflows int), or
// "".
func bytesProblem(n int, dt array.DType) string {
	if es := dt.Size(); es > 1 && n > math.MaxInt/es {
		return fmt.Sprintf("has %d elements of %v (%d bytes each), more bytes than an int counts", n, dt, es)
	}
	return ""
}

// Reshape returns a with a new shape holding the same elements in
// row-major order. One dimension may be -1: it is inferred from the
// others. The result is a view of a's memory whenever a's layout allows
// it, and a copy otherwise.
func Reshape(a *array.Array, shape ...int) *array.Array {
	requireNonNil("ops.Reshape", a)
	const op = "ops.Reshape"
	ns := slices.Clone(shape)
	if ns == nil {
		ns = []int{}
	}
	infer := -1
	known := 1
	for i, d := range ns {
		switch {
		case d == -1 && infer >= 0:
			array.Panicf(op, "shape %v has more than one -1", shape)
		case d == -1:
			infer = i
		case d < 0:
			array.Panicf(op, "negative dimension in shape %v", shape)
		case d != 0 && known > math.MaxInt/d:
			array.Panicf(op, "shape %v has too many elements", shape)
		default:
			known *= d
		}
	}
	if infer >= 0 {
		if known == 0 || a.Size()%known != 0 {
			array.Panicf(op, "cannot reshape array of shape %v (%d elements) into shape %v", a.Shape(), a.Size(), shape)
		}
		ns[infer] = a.Size() / known
	} else if known != a.Size() {
		array.Panicf(op, "cannot reshape array of shape %v (%d elements) into shape %v (%d elements)", a.Shape(), a.Size(), shape, known)
	}
	if equalInts(ns, a.Shape()) {
		return a
	}
	return node(ns, a.DType(), &reshapePrim{Shape: ns}, a)
}

// Flatten returns a as a 1-D array (a 0-d array becomes one element).
func Flatten(a *array.Array) *array.Array {
	requireNonNil("ops.Flatten", a)
	return Reshape(a, -1)
}

// transposePrim permutes the axes of its input: output axis i is input
// axis Axes[i]. Always a view.
type transposePrim struct{ Axes []int }

func (p *transposePrim) Name() string { return "Transpose" }
func (p *transposePrim) Eval(s array.Stream, in, out []*array.Array) error {
	st := in[0].Strides()
	ns := make([]int, len(p.Axes))
	for i, ax := range p.Axes {
		ns[i] = st[ax]
	}
	out[0].SetData(in[0].Storage(), ns, in[0].Offset())
	return nil
}
func (p *transposePrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*transposePrim)
	return ok && equalInts(q.Axes, p.Axes)
}

// OutputShapes permutes the input's new shape, which must have as many
// axes as the permutation.
func (p *transposePrim) OutputShapes(in []*array.Array) ([][]int, error) {
	s := in[0].Shape()
	if len(s) != len(p.Axes) {
		return nil, array.Errorf("ops.Transpose", "permutation %v for shape %v", p.Axes, s)
	}
	out := make([]int, len(s))
	for i, a := range p.Axes {
		out[i] = s[a]
	}
	return [][]int{out}, nil
}

// VJP applies the inverse permutation to the cotangent.
func (p *transposePrim) VJP(_, _, cots []*array.Array, _ []int) []*array.Array {
	inv := make([]int, len(p.Axes))
	for i, ax := range p.Axes {
		inv[ax] = i
	}
	return []*array.Array{applyPerm(cots[0], inv)}
}

// JVP permutes the tangent like the input.
func (p *transposePrim) JVP(_, _, tans []*array.Array, _ []int) []*array.Array {
	return []*array.Array{applyPerm(tans[0], p.Axes)}
}

// Vmap puts the batch axis first and leaves it there, shifting the
// permuted axes past it.
func (p *transposePrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	perm := make([]int, len(p.Axes)+1)
	for i, ax := range p.Axes {
		perm[i+1] = ax + 1
	}
	return []*array.Array{applyPerm(batchFront(in[0], axes[0]), perm)}, []int{0}
}

// Transpose permutes a's axes: axis i of the result is axis axes[i] of a.
// With no axes it reverses them (a matrix transpose for 2-D). The result
// is a view.
func Transpose(a *array.Array, axes ...int) *array.Array {
	requireNonNil("ops.Transpose", a)
	nd := a.Ndim()
	perm := make([]int, nd)
	if len(axes) == 0 {
		for i := range perm {
			perm[i] = nd - 1 - i
		}
	} else {
		if len(axes) != nd {
			array.Panicf("ops.Transpose", "axes %v are not a permutation of the %d axes of shape %v", axes, nd, a.Shape())
		}
		seen := make([]bool, nd)
		for i, ax := range axes {
			p := ax
			if p < 0 {
				p += nd
			}
			if p < 0 || p >= nd || seen[p] {
				array.Panicf("ops.Transpose", "axes %v are not a permutation of the %d axes of shape %v", axes, nd, a.Shape())
			}
			seen[p] = true
			perm[i] = p
		}
	}
	return applyPerm(a, perm)
}

// applyPerm applies a checked permutation.
func applyPerm(a *array.Array, perm []int) *array.Array {
	identity := true
	for i, p := range perm {
		identity = identity && p == i
	}
	if identity {
		return a
	}
	sh := a.Shape()
	ns := make([]int, len(perm))
	for i, p := range perm {
		ns[i] = sh[p]
	}
	return node(ns, a.DType(), &transposePrim{Axes: perm}, a)
}

// SwapAxes returns a view of a with axes i and j exchanged.
func SwapAxes(a *array.Array, i, j int) *array.Array {
	requireNonNil("ops.SwapAxes", a)
	nd := a.Ndim()
	i = normAxis("ops.SwapAxes", i, nd)
	j = normAxis("ops.SwapAxes", j, nd)
	perm := make([]int, nd)
	for k := range perm {
		perm[k] = k
	}
	perm[i], perm[j] = j, i
	return applyPerm(a, perm)
}

// MoveAxis returns a view of a with axis src moved to position dst, the
// other axes keeping their order (numpy's moveaxis).
func MoveAxis(a *array.Array, src, dst int) *array.Array {
	requireNonNil("ops.MoveAxis", a)
	nd := a.Ndim()
	src = normAxis("ops.MoveAxis", src, nd)
	dst = normAxis("ops.MoveAxis", dst, nd)
	perm := make([]int, 0, nd)
	for k := 0; k < nd; k++ {
		if k != src {
			perm = append(perm, k)
		}
	}
	perm = slices.Insert(perm, dst, src)
	return applyPerm(a, perm)
}

// broadcastPrim broadcasts its input to Shape (numpy's rule). Always a
// view: repeated axes get stride 0.
type broadcastPrim struct{ Shape []int }

func (p *broadcastPrim) Name() string { return "Broadcast" }
func (p *broadcastPrim) Eval(s array.Stream, in, out []*array.Array) error {
	sh, st := in[0].Shape(), in[0].Strides()
	ns := make([]int, len(p.Shape))
	off := len(p.Shape) - len(sh)
	for i, d := range sh {
		if d == p.Shape[i+off] {
			ns[i+off] = st[i]
		}
	}
	out[0].SetData(in[0].Storage(), ns, in[0].Offset())
	return nil
}
func (p *broadcastPrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*broadcastPrim)
	return ok && equalInts(q.Shape, p.Shape)
}

// VJP sums the cotangent over the repeated axes.
func (p *broadcastPrim) VJP(in, _, cots []*array.Array, _ []int) []*array.Array {
	return []*array.Array{sumToShape(cots[0], in[0].Shape())}
}

// JVP broadcasts the tangent like the input.
func (p *broadcastPrim) JVP(_, _, tans []*array.Array, _ []int) []*array.Array {
	return []*array.Array{BroadcastTo(tans[0], p.Shape...)}
}

// Vmap puts the batch axis first, then gives the input the size-1 axes
// that broadcasting would have added in front of it, so they land after
// the batch axis rather than before it.
func (p *broadcastPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	x := batchFront(in[0], axes[0])
	s := x.Shape()
	b := s[0]
	lead := make([]int, 1+len(p.Shape)-(len(s)-1))
	lead[0] = b
	for i := 1; i < len(lead); i++ {
		lead[i] = 1
	}
	x = Reshape(x, append(lead, s[1:]...)...)
	return []*array.Array{BroadcastTo(x, append([]int{b}, p.Shape...)...)}, []int{0}
}

// BroadcastTo returns a view of a broadcast to shape: a's axes are
// aligned with the last axes of shape, and each must equal the target
// dimension or be 1.
func BroadcastTo(a *array.Array, shape ...int) *array.Array {
	requireNonNil("ops.BroadcastTo", a)
	const op = "ops.BroadcastTo"
	ns := slices.Clone(shape)
	if ns == nil {
		ns = []int{}
	}
	checkedBytes(op, ns, a.DType())
	sh := a.Shape()
	if len(sh) > len(ns) {
		array.Panicf(op, "cannot broadcast shape %v to %v", sh, shape)
	}
	off := len(ns) - len(sh)
	for i, d := range sh {
		if d != 1 && d != ns[i+off] {
			array.Panicf(op, "cannot broadcast shape %v to %v", sh, shape)
		}
	}
	if equalInts(ns, sh) {
		return a
	}
	return node(ns, a.DType(), &broadcastPrim{Shape: ns}, a)
}

// ExpandDims returns a view of a with a size-1 axis inserted at each of
// axes, which index the result (negative ones count from its end).
func ExpandDims(a *array.Array, axes ...int) *array.Array {
	requireNonNil("ops.ExpandDims", a)
	if len(axes) == 0 {
		return a
	}
	const op = "ops.ExpandDims"
	nd := a.Ndim() + len(axes)
	ins := make([]bool, nd)
	for _, ax := range axes {
		p := ax
		if p < 0 {
			p += nd
		}
		if p < 0 || p >= nd {
			array.Panicf(op, "axis %d out of range for %d dimensions (shape %v with %d new axes)", ax, nd, a.Shape(), len(axes))
		}
		if ins[p] {
			array.Panicf(op, "axis %d repeated in %v", ax, axes)
		}
		ins[p] = true
	}
	var at []int
	for i, in := range ins {
		if in {
			at = append(at, i)
		}
	}
	return expandDims(a, at)
}

// expandDims inserts size-1 axes at the sorted, distinct result positions
// at, which must fit a's rank.
func expandDims(a *array.Array, at []int) *array.Array {
	return node(insertOnes(a.Shape(), at), a.DType(), &expandDimsPrim{Axes: at}, a)
}

// insertOnes returns shape with a 1 inserted at each of the sorted result
// positions at.
func insertOnes(shape, at []int) []int {
	ns := make([]int, len(shape)+len(at))
	j, k := 0, 0
	for i := range ns {
		if k < len(at) && at[k] == i {
			ns[i] = 1
			k++
			continue
		}
		ns[i] = shape[j]
		j++
	}
	return ns
}

// expandDimsPrim inserts size-1 axes at Axes (sorted positions in the
// result). Unlike a Reshape, its result shape follows from the input's,
// so shapeless compilation can replay it, and with it KeepDims, Var and
// Std, on inputs of new shapes.
type expandDimsPrim struct{ Axes []int }

func (p *expandDimsPrim) Name() string { return "ExpandDims" }

// Eval is always a view: only size-1 axes are added.
func (p *expandDimsPrim) Eval(_ array.Stream, in, out []*array.Array) error {
	st, _ := reshapeStrides(in[0].Shape(), in[0].Strides(), out[0].Shape())
	out[0].SetData(in[0].Storage(), st, in[0].Offset())
	return nil
}
func (p *expandDimsPrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*expandDimsPrim)
	return ok && equalInts(q.Axes, p.Axes)
}

// Inserted returns the size-1 axes ExpandDims inserts, as positions of
// its result: package compile fuses a KeepDims row-wise through it.
func (p *expandDimsPrim) Inserted() []int { return p.Axes }

// OutputShapes inserts the size-1 axes into the input's new shape.
func (p *expandDimsPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	nd := in[0].Ndim() + len(p.Axes)
	if err := checkAxes("ops.ExpandDims", p.Axes, nd); err != nil {
		return nil, err
	}
	return [][]int{insertOnes(in[0].Shape(), p.Axes)}, nil
}

// VJP removes the inserted axes from the cotangent.
func (p *expandDimsPrim) VJP(_, _, cots []*array.Array, _ []int) []*array.Array {
	return []*array.Array{Squeeze(cots[0], p.Axes...)}
}

// JVP inserts the same axes into the tangent.
func (p *expandDimsPrim) JVP(_, _, tans []*array.Array, _ []int) []*array.Array {
	return []*array.Array{expandDims(tans[0], p.Axes)}
}

// Vmap puts the batch axis first and shifts the inserted axes past it.
func (p *expandDimsPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	return []*array.Array{expandDims(batchFront(in[0], axes[0]), reduceShift(p.Axes))}, []int{0}
}

// Squeeze returns a view of a without the given axes, which must have
// size 1; with no axes it removes every size-1 axis.
func Squeeze(a *array.Array, axes ...int) *array.Array {
	requireNonNil("ops.Squeeze", a)
	const op = "ops.Squeeze"
	sh := a.Shape()
	drop := make([]bool, len(sh))
	if len(axes) == 0 {
		for i, d := range sh {
			drop[i] = d == 1
		}
	} else {
		for _, ax := range normAxes(op, axes, len(sh)) {
			if sh[ax] != 1 {
				array.Panicf(op, "cannot squeeze axis %d of size %d in shape %v", ax, sh[ax], sh)
			}
			drop[ax] = true
		}
	}
	var at []int
	for i, d := range drop {
		if d {
			at = append(at, i)
		}
	}
	if len(at) == 0 {
		return a
	}
	return node(dropAxes(sh, at), a.DType(), &squeezePrim{Axes: at}, a)
}

// dropAxes returns shape without the sorted positions at.
func dropAxes(shape, at []int) []int {
	ns := []int{}
	for i, d := range shape {
		if !slices.Contains(at, i) {
			ns = append(ns, d)
		}
	}
	return ns
}

// squeezePrim removes the size-1 axes Axes (sorted), with a shape rule
// like expandDimsPrim's, whose cotangents it carries back.
type squeezePrim struct{ Axes []int }

func (p *squeezePrim) Name() string { return "Squeeze" }

// Eval is always a view: only size-1 axes are removed.
func (p *squeezePrim) Eval(_ array.Stream, in, out []*array.Array) error {
	st, _ := reshapeStrides(in[0].Shape(), in[0].Strides(), out[0].Shape())
	out[0].SetData(in[0].Storage(), st, in[0].Offset())
	return nil
}
func (p *squeezePrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*squeezePrim)
	return ok && equalInts(q.Axes, p.Axes)
}

// OutputShapes drops the axes from the input's new shape, where they must
// still have size 1.
func (p *squeezePrim) OutputShapes(in []*array.Array) ([][]int, error) {
	sh := in[0].Shape()
	if err := checkAxes("ops.Squeeze", p.Axes, len(sh)); err != nil {
		return nil, err
	}
	for _, ax := range p.Axes {
		if sh[ax] != 1 {
			return nil, array.Errorf("ops.Squeeze", "cannot squeeze axis %d of size %d in shape %v", ax, sh[ax], sh)
		}
	}
	return [][]int{dropAxes(sh, p.Axes)}, nil
}

// VJP puts the removed axes back into the cotangent.
func (p *squeezePrim) VJP(_, _, cots []*array.Array, _ []int) []*array.Array {
	return []*array.Array{expandDims(cots[0], p.Axes)}
}

// JVP removes the same axes from the tangent.
func (p *squeezePrim) JVP(_, _, tans []*array.Array, _ []int) []*array.Array {
	return []*array.Array{Squeeze(tans[0], p.Axes...)}
}

// Vmap puts the batch axis first and shifts the removed axes past it.
func (p *squeezePrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	return []*array.Array{Squeeze(batchFront(in[0], axes[0]), reduceShift(p.Axes)...)}, []int{0}
}
