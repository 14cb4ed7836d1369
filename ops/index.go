package ops

import (
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
)

// IndexMarker is an index item that selects no elements itself:
// NewAxis or Ellipsis.
type IndexMarker int

const (
	// NewAxis inserts an axis of size 1 (numpy's None / np.newaxis).
	NewAxis IndexMarker = iota + 1
	// Ellipsis stands for as many whole axes as the other items leave
	// (numpy's ...). At most one may appear.
	Ellipsis
)

// indexItem is one item of an index after the ellipsis is expanded.
type indexItem struct {
	kind  int // itemInt, itemRange, itemNew, itemArray
	i     int
	r     Range
	arr   *array.Array
	axis  int // the axis of a it indexes (not for itemNew)
	order int // position among the items, to tell adjacent arrays
}

const (
	itemInt = iota
	itemRange
	itemNew
	itemArray
)

// parseIndex expands idx against a's shape. Ints are bounds-checked here:
// they are known at the call.
func parseIndex(op string, a *array.Array, idx []any) []indexItem {
	var items []indexItem
	ellipsis := -1
	used := 0
	for k, x := range idx {
		switch v := x.(type) {
		case IndexMarker:
			switch v {
			case NewAxis:
				items = append(items, indexItem{kind: itemNew})
			case Ellipsis:
				if ellipsis >= 0 {
					array.Panicf(op, "more than one Ellipsis in the index")
				}
				ellipsis = len(items)
			default:
				array.Panicf(op, "index item %d is IndexMarker(%d), neither NewAxis nor Ellipsis", k, v)
			}
		case Range:
			items = append(items, indexItem{kind: itemRange, r: v})
			used++
		case *array.Array:
			if v == nil {
				array.Panicf(op, "index item %d is a nil array", k)
			}
			if v.DType() == array.Bool {
				array.Panicf(op, "index item %d is a bool array of shape %v: a mask selects a data-dependent number of elements, which a lazy op cannot know; use Where(mask, a, other) instead", k, v.Shape())
			}
			checkIndices(op, v)
			items = append(items, indexItem{kind: itemArray, arr: v})
			used++
		default:
			i, ok := intOf(x)
			if !ok {
				array.Panicf(op, "index item %d has type %T; want an integer, Range, NewAxis, Ellipsis or *array.Array", k, x)
			}
			items = append(items, indexItem{kind: itemInt, i: i})
			used++
		}
	}
	nd := a.Ndim()
	if used > nd {
		array.Panicf(op, "%d indexed axes for array of shape %v", used, a.Shape())
	}
	fill := make([]indexItem, nd-used)
	for i := range fill {
		fill[i] = indexItem{kind: itemRange, r: Whole()}
	}
	if ellipsis < 0 {
		items = append(items, fill...)
	} else {
		items = slices.Insert(items, ellipsis, fill...)
	}
	ax := 0
	for k := range items {
		items[k].order = k
		if items[k].kind == itemNew {
			continue
		}
		items[k].axis = ax
		if items[k].kind == itemInt {
			n := a.Dim(ax)
			j := items[k].i
			if j < 0 {
				j += n
			}
			if j < 0 || j >= n {
				array.Panicf(op, "index %d out of range for axis %d of size %d", items[k].i, ax, n)
			}
			items[k].i = j
		}
		ax++
	}
	return items
}

func intOf(x any) (int, bool) {
	switch v := x.(type) {
	case int:
		return v, true
	case int8:
		return int(v), true
	case int16:
		return int(v), true
	case int32:
		return int(v), true
	case int64:
		return int(v), true
	case uint8:
		return int(v), true
	case uint16:
		return int(v), true
	case uint32:
		return int(v), true
	case uint64:
		if v > uint64(^uint(0)>>1) {
			return 0, false
		}
		return int(v), true
	case uint:
		if v > ^uint(0)>>1 {
			return 0, false
		}
		return int(v), true
	}
	return 0, false
}

// Index returns a[idx...] with numpy's indexing rules. An item is an
// integer (negative counts from the end; out of range panics at the call),
// a Range (R(start, stop, step), negative steps included), NewAxis,
// Ellipsis, or an integer *array.Array (any integer dtype). Axes that no
// item reaches are taken whole.
//
// Without arrays (basic indexing) the result is a view of a, as Slice
// is. With arrays (advanced indexing) the arrays, and the integers with
// them, broadcast together to a shape B, and the result is a copy:
// if the array and integer items are adjacent, B's axes stand where
// they were; if a Range, NewAxis or Ellipsis separates them, B's axes
// come first, then the others. An index array's element out of range is
// an *array.Error from Eval.
//
// Boolean masks are refused with an error: a mask selects a number of
// elements that depends on its values, which a lazy graph cannot know
// when it is built. Use Where(mask, a, other) to keep a's shape.
func Index(a *array.Array, idx ...any) *array.Array {
	const op = "ops.Index"
	requireNonNil(op, a)
	items := parseIndex(op, a, idx)
	return applyIndex(op, a, items)
}

func applyIndex(op string, a *array.Array, items []indexItem) *array.Array {
	hasArray := slices.ContainsFunc(items, func(it indexItem) bool { return it.kind == itemArray })
	ranges := make([]Range, a.Ndim())
	for _, it := range items {
		switch it.kind {
		case itemRange:
			ranges[it.axis] = it.r
		case itemInt:
			if hasArray {
				ranges[it.axis] = Whole()
			} else {
				ranges[it.axis] = R(it.i, it.i+1)
			}
		case itemArray:
			ranges[it.axis] = Whole()
		}
	}
	v := Slice(a, ranges...)
	// v's axes, with the new axes inserted, in item order.
	var newAxes, advAxes []int
	var advIdx []*array.Array
	var dropped []int
	for pos, it := range items {
		switch {
		case it.kind == itemNew:
			newAxes = append(newAxes, pos)
		case it.kind == itemInt && !hasArray:
			dropped = append(dropped, pos)
		case it.kind == itemInt:
			advAxes = append(advAxes, pos)
			advIdx = append(advIdx, scalarOf(float64(it.i), array.Int64))
		case it.kind == itemArray:
			advAxes = append(advAxes, pos)
			advIdx = append(advIdx, it.arr)
		}
	}
	v = ExpandDims(v, newAxes...)
	if !hasArray {
		if len(dropped) == 0 {
			// Squeeze without axes would drop every size-1 axis.
			return v
		}
		return Squeeze(v, dropped...)
	}
	_, bidx, b := gatherIndices(op, v, advIdx, advAxes)
	sizes := v.Shape()
	for _, ax := range advAxes {
		sizes[ax] = 1
	}
	if _, pr := sizeProblem(append(slices.Clone(b), sizes...), a.DType()); pr != "" {
		array.Panicf(op, "indices broadcast to %v give a result that %s", b, pr)
	}
	out := gatherNode(v, bidx, advAxes, sizes)
	sq := make([]int, len(advAxes))
	for i, ax := range advAxes {
		sq[i] = len(b) + ax
	}
	out = Squeeze(out, sq...)
	adjacent := advAxes[len(advAxes)-1]-advAxes[0] == len(advAxes)-1
	if !adjacent || advAxes[0] == 0 || len(b) == 0 {
		return out
	}
	// Adjacent arrays keep B where they stood: after the advAxes[0] axes
	// before them.
	nb, first := len(b), advAxes[0]
	perm := make([]int, 0, out.Ndim())
	for i := range first {
		perm = append(perm, nb+i)
	}
	for i := range nb {
		perm = append(perm, i)
	}
	for i := nb + first; i < out.Ndim(); i++ {
		perm = append(perm, i)
	}
	return Transpose(out, perm...)
}

// TakeFlat returns the elements of a, read as a flat row-major array, at
// the positions in indices (numpy's take without an axis): the result has
// indices' shape. Negative indices count from the end; one out of range
// is an *array.Error from Eval.
func TakeFlat(a, indices *array.Array) *array.Array {
	requireNonNil("ops.TakeFlat", a, indices)
	return Take(Flatten(a), indices, 0)
}

// IndexUpdate is an indexed place in an array, to be updated functionally
// (MLX's and JAX's a.at[idx]): At(a, idx...).Add(v) returns a copy of a
// with v added at a[idx...]. The index takes what Index takes. Every
// update is out of place; a itself never changes.
//
// Where an index repeats, Add, Mul, Max and Min apply every update (as
// numpy's np.add.at, np.multiply.at, np.maximum.at, np.minimum.at), and
// Set keeps the update that comes last in the row-major order of the
// index's result (on the CPU and the GPU; MLX and JAX leave the choice
// open).
type IndexUpdate struct {
	a     *array.Array
	items []indexItem
}

// At returns the place a[idx...] for an update.
func At(a *array.Array, idx ...any) IndexUpdate {
	const op = "ops.At"
	requireNonNil(op, a)
	return IndexUpdate{a: a, items: parseIndex(op, a, idx)}
}

// Set returns a copy of the array with v (broadcast to a[idx...]'s shape
// and converted to its dtype) written at the place.
func (u IndexUpdate) Set(v *array.Array) *array.Array {
	return u.update("ops.IndexUpdate.Set", v, cpu.ScatterSet)
}

// Add returns a copy of the array with v added at the place.
func (u IndexUpdate) Add(v *array.Array) *array.Array {
	return u.update("ops.IndexUpdate.Add", v, cpu.ScatterSum)
}

// Mul returns a copy of the array with the place multiplied by v.
func (u IndexUpdate) Mul(v *array.Array) *array.Array {
	return u.update("ops.IndexUpdate.Mul", v, cpu.ScatterProd)
}

// Max returns a copy of the array with each element of the place the
// larger of itself and v.
func (u IndexUpdate) Max(v *array.Array) *array.Array {
	return u.update("ops.IndexUpdate.Max", v, cpu.ScatterMax)
}

// Min returns a copy of the array with each element of the place the
// smaller of itself and v.
func (u IndexUpdate) Min(v *array.Array) *array.Array {
	return u.update("ops.IndexUpdate.Min", v, cpu.ScatterMin)
}

// update scatters v into the place. When the index is integer arrays and
// integers on the leading axes with the rest whole, the scatter takes
// slices of a directly; otherwise the place is first turned into the
// flat positions it covers (Index applied to a's positions), which costs
// an index per element of a.
func (u IndexUpdate) update(op string, v *array.Array, mode cpu.ScatterMode) *array.Array {
	requireNonNil(op, v)
	a := u.a
	if (mode == cpu.ScatterMax || mode == cpu.ScatterMin) && a.DType() == array.Complex64 {
		array.Panicf(op, "complex64 has no order")
	}
	if idx, axes, ok := leadingIndex(u.items); ok {
		_, bidx, b := gatherIndices(op, a, idx, axes)
		rest := a.Shape()[len(axes):]
		want := append(slices.Clone(b), rest...)
		checkUpdateShape(op, v, want)
		upd := BroadcastTo(AsType(v, a.DType()), want...)
		upd = Reshape(upd, append(append(slices.Clone(b), indexOnes(len(axes))...), rest...)...)
		return scatterNode(a, bidx, upd, axes, mode)
	}
	dt := array.Int64
	if a.Size() < 1<<31 {
		dt = array.Int32
	}
	pos := applyIndex(op, Reshape(Arange(0, float64(a.Size()), 1, dt), a.Shape()...), u.items)
	checkUpdateShape(op, v, pos.Shape())
	n := pos.Size()
	upd := Reshape(BroadcastTo(AsType(v, a.DType()), pos.Shape()...), n, 1)
	flat := scatterNode(Flatten(a), []*array.Array{Flatten(pos)}, upd, []int{0}, mode)
	return Reshape(flat, a.Shape()...)
}

func checkUpdateShape(op string, v *array.Array, want []int) {
	if vs := v.Shape(); len(vs) > len(want) || !equalInts(broadcastOrNil(vs, want), want) {
		array.Panicf(op, "values of shape %v do not broadcast to the indexed shape %v", vs, want)
	}
}

// leadingIndex reports whether items are integers and arrays on the
// leading axes followed by whole axes, and returns them as index arrays.
func leadingIndex(items []indexItem) ([]*array.Array, []int, bool) {
	var idx []*array.Array
	var axes []int
	for k, it := range items {
		switch it.kind {
		case itemInt:
			idx = append(idx, scalarOf(float64(it.i), array.Int64))
		case itemArray:
			idx = append(idx, it.arr)
		case itemNew:
			return nil, nil, false
		case itemRange:
			if it.r != Whole() {
				return nil, nil, false
			}
			continue
		}
		if k != len(axes) {
			return nil, nil, false
		}
		axes = append(axes, it.axis)
	}
	return idx, axes, len(idx) > 0
}
