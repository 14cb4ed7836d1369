package ops

import (
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
)

// gatherPrim takes one slice of its first input per index position
// (MLX's gather). Its other inputs are the indices, broadcast to one
// shape; Axes are the axes they index and Sizes the slice's size along
// every axis.
type gatherPrim struct{ Axes, Sizes []int }

func (p *gatherPrim) Name() string { return "Gather" }
func (p *gatherPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *gatherPrim) evalCPU(in, out []*array.Array) error {
	idx := make([]cpu.Buf, len(in)-1)
	for k, x := range in[1:] {
		idx[k] = bufOf(x)
	}
	return kernelError(cpu.Gather(alloc(out[0]), bufOf(in[0]), idx, p.Axes, p.Sizes), "ops.Gather")
}

func (p *gatherPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	o, err := allocGPU(out[0])
	if err != nil {
		return err
	}
	ls, chk, err := metal.Gather(o, viewOf(in[0]), viewsOf(in[1:]), p.Axes, p.Sizes)
	return runChecked(s, "ops.Gather", ls, chk, err)
}

func viewsOf(xs []*array.Array) []metal.View {
	v := make([]metal.View, len(xs))
	for k, x := range xs {
		v[k] = viewOf(x)
	}
	return v
}
func (p *gatherPrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*gatherPrim)
	return ok && equalInts(p.Axes, q.Axes) && equalInts(p.Sizes, q.Sizes)
}

// VJP adds the cotangent back into zeros at the gathered slices: repeated
// indices collect the cotangent of every use.
func (p *gatherPrim) VJP(in, _, cots []*array.Array, argnums []int) []*array.Array {
	return indexGradFirst(argnums, func() *array.Array {
		return scatterNode(Zeros(in[0].Shape(), cots[0].DType()), in[1:], cots[0], p.Axes, cpu.ScatterSum)
	})
}

// JVP gathers the tangent at the same slices.
func (p *gatherPrim) JVP(in, _, tans []*array.Array, argnums []int) []*array.Array {
	return []*array.Array{gatherNode(indexTangent(0, tans, argnums), in[1:], p.Axes, p.Sizes)}
}

// Vmap takes the batch axis whole when only the array is batched. When
// indices are batched, every member's indices must pick from its own
// array: an extra index, the member's number, selects it.
func (p *gatherPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	n := indexBatchSize(in, axes)
	r := indexRank(in[1:], axes[1:])
	if !slices.ContainsFunc(axes[1:], func(ax int) bool { return ax >= 0 }) {
		a := batchFront(in[0], axes[0])
		return []*array.Array{gatherNode(a, in[1:], shiftAxes(p.Axes), slices.Insert(slices.Clone(p.Sizes), 0, n))}, []int{r}
	}
	idx := batchIndices(in[1:], axes[1:], n, r)
	if axes[0] < 0 {
		return []*array.Array{gatherNode(in[0], idx, p.Axes, p.Sizes)}, []int{0}
	}
	a := batchFront(in[0], axes[0])
	idx = append([]*array.Array{memberIndex(n, idx[0].Shape())}, idx...)
	out := gatherNode(a, idx, append([]int{0}, shiftAxes(p.Axes)...), slices.Insert(slices.Clone(p.Sizes), 0, 1))
	return []*array.Array{Squeeze(out, r+1)}, []int{0}
}

// indexRank is the rank of unbatched indices (all have one shape).
func indexRank(idx []*array.Array, axes []int) int {
	switch {
	case len(idx) == 0:
		return 0
	case axes[0] < 0:
		return idx[0].Ndim()
	}
	return idx[0].Ndim() - 1
}

// batchIndices puts every index's batch axis first, broadcasting the
// unbatched ones to the batch.
func batchIndices(idx []*array.Array, axes []int, n, r int) []*array.Array {
	out := make([]*array.Array, len(idx))
	for k, x := range idx {
		if axes[k] >= 0 {
			out[k] = batchFront(x, axes[k])
		} else {
			out[k] = BroadcastTo(ExpandDims(x, 0), append([]int{n}, x.Shape()...)...)
		}
	}
	return out
}

// memberIndex is each batch member's number, broadcast to shape (whose
// first axis is the batch).
func memberIndex(n int, shape []int) *array.Array {
	one := indexOnes(len(shape))
	one[0] = n
	return BroadcastTo(Reshape(Arange(0, float64(n), 1, array.Int32), one...), shape...)
}

func shiftAxes(axes []int) []int {
	out := make([]int, len(axes))
	for i, a := range axes {
		out[i] = a + 1
	}
	return out
}

// gatherNode builds a gather over checked operands.
func gatherNode(a *array.Array, idx []*array.Array, axes, sizes []int) *array.Array {
	var shape []int
	if len(idx) > 0 {
		shape = slices.Clone(idx[0].Shape())
	}
	shape = append(shape, sizes...)
	return node(shape, a.DType(), &gatherPrim{Axes: slices.Clone(axes), Sizes: slices.Clone(sizes)}, append([]*array.Array{a}, idx...)...)
}

// scatterPrim combines its last input (updates) into a copy of its first
// at the slices that the indices between start (MLX's scatter). The
// updates have the indices' shape followed by the slice's shape.
type scatterPrim struct {
	Axes []int
	Mode cpu.ScatterMode
}

var scatterNames = [...]string{cpu.ScatterSet: "Scatter", cpu.ScatterSum: "ScatterAdd", cpu.ScatterProd: "ScatterProd",
	cpu.ScatterMax: "ScatterMax", cpu.ScatterMin: "ScatterMin"}

func (p *scatterPrim) Name() string { return scatterNames[p.Mode] }
func (p *scatterPrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}
func (p *scatterPrim) evalCPU(in, out []*array.Array) error {
	k := len(in) - 2
	idx := make([]cpu.Buf, k)
	for i, x := range in[1 : k+1] {
		idx[i] = bufOf(x)
	}
	err := cpu.Scatter(alloc(out[0]), bufOf(in[0]), idx, bufOf(in[k+1]), p.Axes, p.Mode)
	return kernelError(err, "ops."+p.Name())
}

func (p *scatterPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	o, err := allocGPU(out[0])
	if err != nil {
		return err
	}
	k := len(in) - 2
	ls, chk, err := metal.Scatter(o, viewOf(in[0]), viewsOf(in[1:k+1]), viewOf(in[k+1]), p.Axes, p.Mode)
	return runChecked(s, "ops."+p.Name(), ls, chk, err)
}
func (p *scatterPrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*scatterPrim)
	return ok && p.Mode == q.Mode && equalInts(p.Axes, q.Axes)
}

func (p *scatterPrim) parts(in []*array.Array) (a *array.Array, idx []*array.Array, upd *array.Array, slice []int) {
	k := len(in) - 2
	a, idx, upd = in[0], in[1:k+1], in[k+1]
	us := upd.Shape()
	return a, idx, upd, us[len(us)-a.Ndim():]
}

// VJP: a sum passes the cotangent to a and gathers it for the updates;
// a set zeroes what was overwritten and gives each update the cotangent
// of its place if it won it; max and min route the cotangent to the
// values equal to the result, shared equally among ties (as JAX); a
// product gives each factor the product of the others.
func (p *scatterPrim) VJP(in, outs, cots []*array.Array, argnums []int) []*array.Array {
	a, idx, upd, slice := p.parts(in)
	g := cots[0]
	gather := func(x *array.Array) *array.Array { return gatherNode(x, idx, p.Axes, slice) }
	out := make([]*array.Array, len(argnums))
	last := len(in) - 1
	for k, j := range argnums {
		if j != 0 && j != last {
			continue
		}
		switch p.Mode {
		case cpu.ScatterSum:
			if j == 0 {
				out[k] = g
			} else {
				out[k] = gather(g)
			}
		case cpu.ScatterSet:
			if j == 0 {
				out[k] = scatterNode(g, idx, ZerosLike(upd), p.Axes, cpu.ScatterSet)
			} else {
				out[k] = Where(p.won(a, idx, upd, slice), gather(g), scalarOf(0, g.DType()))
			}
		case cpu.ScatterMax, cpu.ScatterMin:
			ya, yu, cnt := p.ties(a, idx, upd, outs[0], slice)
			share := Div(g, cnt)
			if j == 0 {
				out[k] = Where(ya, share, scalarOf(0, g.DType()))
			} else {
				out[k] = Where(yu, gather(share), scalarOf(0, g.DType()))
			}
		default:
			if j == 0 {
				out[k] = Mul(g, scatterNode(OnesLike(a), idx, upd, p.Axes, cpu.ScatterProd))
			} else {
				out[k] = Mul(gather(g), p.others(a, idx, upd, slice))
			}
		}
	}
	return out
}

// won is true for the updates that a set keeps: the last writer of each
// place, found by scattering the update positions themselves.
func (p *scatterPrim) won(a *array.Array, idx []*array.Array, upd *array.Array, slice []int) *array.Array {
	us := upd.Shape()
	np := shapeSize(us[:len(us)-len(slice)])
	pos := Reshape(Arange(0, float64(np), 1, array.Int32), append(slices.Clone(us[:len(us)-len(slice)]), indexOnes(len(slice))...)...)
	pos = BroadcastTo(pos, us...)
	winner := scatterNode(Full(a.Shape(), -1, array.Int32), idx, pos, p.Axes, cpu.ScatterSet)
	return Equal(gatherNode(winner, idx, p.Axes, slice), pos)
}

// ties returns where a, and where the updates, equal the result, and how
// many values equal it at each place.
func (p *scatterPrim) ties(a *array.Array, idx []*array.Array, upd, y *array.Array, slice []int) (ya, yu, cnt *array.Array) {
	dt := y.DType()
	ya = Equal(a, y)
	yu = Equal(upd, gatherNode(y, idx, p.Axes, slice))
	cnt = Add(AsType(ya, dt), scatterNode(Zeros(a.Shape(), dt), idx, AsType(yu, dt), p.Axes, cpu.ScatterSum))
	return ya, yu, cnt
}

// others is, for each update, the product of everything else multiplied
// into its place (a's element and the other updates), without dividing
// by zero: zeros are counted apart.
func (p *scatterPrim) others(a *array.Array, idx []*array.Array, upd *array.Array, slice []int) *array.Array {
	dt := upd.DType()
	zero := Equal(upd, scalarOf(0, dt))
	zeros := scatterNode(Zeros(a.Shape(), dt), idx, AsType(zero, dt), p.Axes, cpu.ScatterSum)
	nonzero := scatterNode(a, idx, Where(zero, scalarOf(1, dt), upd), p.Axes, cpu.ScatterProd)
	gz := gatherNode(zeros, idx, p.Axes, slice)
	gp := gatherNode(nonzero, idx, p.Axes, slice)
	safe := Where(zero, scalarOf(1, dt), upd)
	none := Equal(gz, scalarOf(0, dt))
	one := Equal(gz, scalarOf(1, dt))
	return Where(zero, Where(one, gp, scalarOf(0, dt)), Where(none, Div(gp, safe), scalarOf(0, dt)))
}

// JVP is the VJP's linear map applied forward.
func (p *scatterPrim) JVP(in, outs, tans []*array.Array, argnums []int) []*array.Array {
	a, idx, upd, slice := p.parts(in)
	ta, tu := indexTangent(0, tans, argnums), indexTangent(len(in)-1, tans, argnums)
	if ta == nil {
		ta = ZerosLike(a)
	}
	if tu == nil {
		tu = ZerosLike(upd)
	}
	switch p.Mode {
	case cpu.ScatterSum, cpu.ScatterSet:
		return []*array.Array{scatterNode(ta, idx, tu, p.Axes, p.Mode)}
	case cpu.ScatterMax, cpu.ScatterMin:
		ya, yu, cnt := p.ties(a, idx, upd, outs[0], slice)
		zero := scalarOf(0, ta.DType())
		sum := Add(Where(ya, ta, zero), scatterNode(ZerosLike(a), idx, Where(yu, tu, zero), p.Axes, cpu.ScatterSum))
		return []*array.Array{Div(sum, cnt)}
	}
	prod := scatterNode(ta, idx, upd, p.Axes, cpu.ScatterProd)
	return []*array.Array{Add(prod, scatterNode(ZerosLike(a), idx, Mul(tu, p.others(a, idx, upd, slice)), p.Axes, cpu.ScatterSum))}
}

// Vmap gives every member its own copy of the array. With unbatched
// indices the batch becomes a whole leading axis of the slices; with
// batched ones an extra index, the member's number, picks the copy.
func (p *scatterPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	n := indexBatchSize(in, axes)
	k := len(in) - 2
	front := func(x *array.Array, ax int) *array.Array {
		if ax < 0 {
			return BroadcastTo(ExpandDims(x, 0), append([]int{n}, x.Shape()...)...)
		}
		return batchFront(x, ax)
	}
	a, upd := front(in[0], axes[0]), front(in[k+1], axes[k+1])
	r := indexRank(in[1:k+1], axes[1:k+1])
	if !slices.ContainsFunc(axes[1:k+1], func(ax int) bool { return ax >= 0 }) {
		return []*array.Array{scatterNode(a, in[1:k+1], MoveAxis(upd, 0, r), shiftAxes(p.Axes), p.Mode)}, []int{0}
	}
	idx := batchIndices(in[1:k+1], axes[1:k+1], n, r)
	idx = append([]*array.Array{memberIndex(n, idx[0].Shape())}, idx...)
	return []*array.Array{scatterNode(a, idx, ExpandDims(upd, r+1), append([]int{0}, shiftAxes(p.Axes)...), p.Mode)}, []int{0}
}

// scatterNode builds a scatter over checked operands.
func scatterNode(a *array.Array, idx []*array.Array, upd *array.Array, axes []int, mode cpu.ScatterMode) *array.Array {
	ins := append(append([]*array.Array{a}, idx...), upd)
	return node(a.Shape(), a.DType(), &scatterPrim{Axes: slices.Clone(axes), Mode: mode}, ins...)
}

// gatherIndices checks indices and the axes they index in a, and returns
// the axes (normalised) and the indices broadcast to their common shape.
func gatherIndices(op string, a *array.Array, indices []*array.Array, axes []int) ([]int, []*array.Array, []int) {
	requireNonNil(op, a)
	requireNonNil(op, indices...)
	if len(indices) != len(axes) {
		array.Panicf(op, "%d index arrays for %d axes %v", len(indices), len(axes), axes)
	}
	nd := a.Ndim()
	ax := make([]int, len(axes))
	seen := make([]bool, nd)
	shapes := make([][]int, len(indices))
	for k, x := range indices {
		if x.DType() == array.Bool {
			array.Panicf(op, "index %d is a bool array of shape %v; a mask selects a data-dependent number of elements, so use Where", k, x.Shape())
		}
		checkIndices(op, x)
		ax[k] = normAxis(op, axes[k], nd)
		if seen[ax[k]] {
			array.Panicf(op, "axis %d repeated in %v", axes[k], axes)
		}
		seen[ax[k]] = true
		shapes[k] = x.Shape()
	}
	b := BroadcastShapes(op, shapes...)
	out := make([]*array.Array, len(indices))
	for k, x := range indices {
		out[k] = BroadcastTo(x, b...)
		if a.Dim(ax[k]) == 0 && shapeSize(b) > 0 {
			array.Panicf(op, "cannot index axis %d of shape %v, which is empty", ax[k], a.Shape())
		}
	}
	return ax, out, b
}

// Gather returns slices of a (MLX's gather): indices[k] indexes axis
// axes[k] of a, the indices broadcast together to a shape B, and each
// position of B starts a slice of shape sliceSizes (one size per axis of
// a, 0 <= size <= the axis, starting at 0 on the axes not indexed). The
// result has shape B + sliceSizes and a's dtype. Indices have any integer
// dtype and count from the end when negative; one out of range is an
// *array.Error from Eval.
func Gather(a *array.Array, indices []*array.Array, axes []int, sliceSizes []int) *array.Array {
	const op = "ops.Gather"
	ax, idx, b := gatherIndices(op, a, indices, axes)
	if len(sliceSizes) != a.Ndim() {
		array.Panicf(op, "%d slice sizes %v for array of shape %v", len(sliceSizes), sliceSizes, a.Shape())
	}
	for d, s := range sliceSizes {
		limit := a.Dim(d)
		if slices.Contains(ax, d) && s > 1 {
			array.Panicf(op, "slice size %d on indexed axis %d: indexed axes take slices of size 0 or 1", s, d)
		}
		if s < 0 || s > limit {
			array.Panicf(op, "slice sizes %v do not fit array of shape %v", sliceSizes, a.Shape())
		}
	}
	shape := append(slices.Clone(b), sliceSizes...)
	if _, pr := sizeProblem(shape, a.DType()); pr != "" {
		array.Panicf(op, "indices of shape %v with slices %v give shape %v, which %s", b, sliceSizes, shape, pr)
	}
	return gatherNode(a, idx, ax, sliceSizes)
}

// scatter checks and builds a scatter of the given mode.
func scatter(op string, a *array.Array, indices []*array.Array, updates *array.Array, axes []int, mode cpu.ScatterMode) *array.Array {
	requireNonNil(op, updates)
	ax, idx, b := gatherIndices(op, a, indices, axes)
	us := updates.Shape()
	nd := a.Ndim()
	if len(us) != len(b)+nd {
		array.Panicf(op, "updates of shape %v for indices of shape %v into array of shape %v: updates need %d dims (the indices' and then one per axis of the array)", us, b, a.Shape(), len(b)+nd)
	}
	slice := us[len(b):]
	for d, s := range slice {
		if s > a.Dim(d) || (slices.Contains(ax, d) && s > 1) {
			array.Panicf(op, "update slices of shape %v do not fit array of shape %v (indexed axes %v take slices of size 1)", slice, a.Shape(), ax)
		}
	}
	if !equalInts(broadcastOrNil(us[:len(b)], b), b) {
		array.Panicf(op, "updates of shape %v do not broadcast to indices' shape %v", us, b)
	}
	if (mode == cpu.ScatterMax || mode == cpu.ScatterMin) && a.DType() == array.Complex64 {
		array.Panicf(op, "complex64 has no order")
	}
	upd := BroadcastTo(AsType(updates, a.DType()), append(slices.Clone(b), slice...)...)
	return scatterNode(a, idx, upd, ax, mode)
}

// Scatter returns a copy of a with updates written into the slices that
// the indices start (MLX's scatter): indices[k] indexes axis axes[k], the
// indices broadcast to a shape B, and updates has shape B + one size per
// axis of a (1 on the indexed axes, at most the axis elsewhere): update
// slice p lands at the position its indices give, starting at 0 on the
// other axes. updates are converted to a's dtype. Where indices repeat,
// the update at the later position of B wins (on the CPU and the GPU;
// MLX and JAX leave it unspecified). An index out of range is an
// *array.Error from Eval.
func Scatter(a *array.Array, indices []*array.Array, updates *array.Array, axes []int) *array.Array {
	return scatter("ops.Scatter", a, indices, updates, axes, cpu.ScatterSet)
}

// ScatterAdd is Scatter that adds the updates; every repeated index
// adds (numpy's np.add.at).
func ScatterAdd(a *array.Array, indices []*array.Array, updates *array.Array, axes []int) *array.Array {
	return scatter("ops.ScatterAdd", a, indices, updates, axes, cpu.ScatterSum)
}

// ScatterProd is Scatter that multiplies by the updates, every repeated
// index included (np.multiply.at).
func ScatterProd(a *array.Array, indices []*array.Array, updates *array.Array, axes []int) *array.Array {
	return scatter("ops.ScatterProd", a, indices, updates, axes, cpu.ScatterProd)
}

// ScatterMax is Scatter that keeps the larger of each element and every
// update into it (np.maximum.at; NaN wins).
func ScatterMax(a *array.Array, indices []*array.Array, updates *array.Array, axes []int) *array.Array {
	return scatter("ops.ScatterMax", a, indices, updates, axes, cpu.ScatterMax)
}

// ScatterMin is Scatter that keeps the smaller of each element and every
// update into it (np.minimum.at; NaN wins).
func ScatterMin(a *array.Array, indices []*array.Array, updates *array.Array, axes []int) *array.Array {
	return scatter("ops.ScatterMin", a, indices, updates, axes, cpu.ScatterMin)
}
