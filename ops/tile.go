package ops

import (
	"math"
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
)

// Tile repeats a reps[i] times along axis i (numpy's tile). If reps is
// shorter than a's shape it is padded with leading 1s; if it is longer, a
// gains leading size-1 axes.
func Tile(a *array.Array, reps ...int) *array.Array {
	requireNonNil("ops.Tile", a)
	const op = "ops.Tile"
	for _, r := range reps {
		if r < 0 {
			array.Panicf(op, "negative repetition in %v", reps)
		}
	}
	nd := max(len(reps), a.Ndim())
	shape := slices.Concat(slices.Repeat([]int{1}, nd-a.Ndim()), a.Shape())
	rs := slices.Concat(slices.Repeat([]int{1}, nd-len(reps)), reps)
	// The view (1, s0, 1, s1, ...) broadcast to (r0, s0, r1, s1, ...) holds
	// the tiles in order; merging each pair of axes lays them out.
	inter := make([]int, 2*nd)
	bcast := make([]int, 2*nd)
	final := make([]int, nd)
	for i := range nd {
		inter[2*i], inter[2*i+1] = 1, shape[i]
		bcast[2*i], bcast[2*i+1] = rs[i], shape[i]
		if shape[i] != 0 && rs[i] > math.MaxInt/shape[i] {
			array.Panicf(op, "reps %v of shape %v repeat axis %d (size %d) %d times: too many elements for an int", reps, a.Shape(), i-(nd-a.Ndim()), shape[i], rs[i])
		}
		final[i] = rs[i] * shape[i]
	}
	// The broadcast view has as many elements as the result: checking
	// the result here names Tile rather than the view.
	if _, p := sizeProblem(final, a.DType()); p != "" {
		array.Panicf(op, "reps %v of shape %v give shape %v, which %s", reps, a.Shape(), final, p)
	}
	if equalInts(final, a.Shape()) {
		return a
	}
	if a.Size() == 0 {
		// Nothing to repeat. The broadcast view's shape interleaves reps
		// and dimensions, and its running product can overflow before
		// it reaches a 0 that the result's does not.
		return Reshape(a, final...)
	}
	return Reshape(BroadcastTo(Reshape(a, inter...), bcast...), final...)
}

// Repeat repeats each element of a repeats times along axis (numpy's
// repeat with an axis): [1 2] repeated twice is [1 1 2 2].
func Repeat(a *array.Array, repeats, axis int) *array.Array {
	requireNonNil("ops.Repeat", a)
	const op = "ops.Repeat"
	ax := normAxis(op, axis, a.Ndim())
	if repeats < 0 {
		array.Panicf(op, "negative repeats %d", repeats)
	}
	shape := a.Shape()
	bcast := slices.Insert(slices.Clone(shape), ax+1, repeats)
	if d := shape[ax]; d != 0 && repeats > math.MaxInt/d {
		array.Panicf(op, "%d repeats of axis %d (size %d) of shape %v: too many elements for an int", repeats, axis, d, a.Shape())
	}
	shape[ax] *= repeats
	if _, p := sizeProblem(shape, a.DType()); p != "" {
		array.Panicf(op, "%d repeats along axis %d of shape %v give shape %v, which %s", repeats, axis, a.Shape(), shape, p)
	}
	if repeats == 1 {
		return a
	}
	return Reshape(BroadcastTo(ExpandDims(a, ax+1), bcast...), shape...)
}

// padPrim pads its input with Value: Widths[i] elements before and after
// along axis i.
type padPrim struct {
	Widths [][2]int
	Value  float64
}

func (p *padPrim) Name() string                                      { return "Pad" }
func (p *padPrim) Eval(s array.Stream, in, out []*array.Array) error { return dispatch(p, s, in, out) }
func (p *padPrim) evalCPU(in, out []*array.Array) error {
	o := alloc(out[0])
	inShape := in[0].Shape()
	// The value goes through cpu.Copy's conversion, so it becomes the
	// output dtype exactly as numpy's astype would make it.
	fill := array.Scalar(p.Value)
	// Fill the border one slab per axis and side: along axis k, the slab
	// spans the interior of the axes before k and the whole of the axes
	// after it, so the slabs cover the border exactly once.
	for k := range inShape {
		for side := range 2 {
			sub := o
			sub.Shape = slices.Clone(o.Shape)
			sub.Offset = 0
			for j := range k {
				sub.Shape[j] = inShape[j]
				sub.Offset += p.Widths[j][0] * o.Strides[j]
			}
			sub.Shape[k] = p.Widths[k][side]
			if side == 1 {
				sub.Offset += (p.Widths[k][0] + inShape[k]) * o.Strides[k]
			}
			if err := copyRegion(sub, bcastBufOf(fill, sub.Shape)); err != nil {
				return err
			}
		}
	}
	sub := o
	sub.Shape = inShape
	for j := range inShape {
		sub.Offset += p.Widths[j][0] * o.Strides[j]
	}
	return copyRegion(sub, bufOf(in[0]))
}
func (p *padPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		return fillThenCopy(o, p.Value, in[0], func(o metal.View) metal.View {
			sub := o
			sub.Shape = in[0].Shape()
			for j := range sub.Shape {
				sub.Offset += p.Widths[j][0] * o.Strides[j]
			}
			return sub
		})
	})
}
func (p *padPrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*padPrim)
	return ok && slices.Equal(q.Widths, p.Widths) && sameFloat(q.Value, p.Value)
}

// OutputShapes widens the input's new shape, which must have one pair of
// widths per axis.
func (p *padPrim) OutputShapes(in []*array.Array) ([][]int, error) {
	s := in[0].Shape()
	if len(s) != len(p.Widths) {
		return nil, array.Errorf("ops.Pad", "%d widths for shape %v", len(p.Widths), s)
	}
	for d, w := range p.Widths {
		s[d] += w[0] + w[1]
	}
	return [][]int{s}, nil
}

// VJP cuts the border off the cotangent: the padding value is a constant.
func (p *padPrim) VJP(in, _, cots []*array.Array, _ []int) []*array.Array {
	rs := make([]Range, len(p.Widths))
	for i, w := range p.Widths {
		rs[i] = R(w[0], w[0]+in[0].Dim(i))
	}
	return []*array.Array{Slice(cots[0], rs...)}
}

// JVP pads the tangent with zeros.
func (p *padPrim) JVP(_, _, tans []*array.Array, _ []int) []*array.Array {
	return []*array.Array{Pad(tans[0], p.Widths, 0)}
}

// Vmap puts the batch axis first and leaves it unpadded.
func (p *padPrim) Vmap(in []*array.Array, axes []int) ([]*array.Array, []int) {
	widths := slices.Insert(slices.Clone(p.Widths), 0, [2]int{})
	return []*array.Array{Pad(batchFront(in[0], axes[0]), widths, p.Value)}, []int{0}
}

// copyRegion copies in to out unless the region is empty, where an
// offset may point past the end of the memory.
func copyRegion(out, in cpu.Buf) error {
	if out.Size() == 0 {
		return nil
	}
	return cpu.Copy(out, in)
}

// Pad returns a padded with value (converted to a's dtype): widths[i]
// gives the number of elements added before and after along axis i, one
// pair for every axis.
func Pad(a *array.Array, widths [][2]int, value float64) *array.Array {
	requireNonNil("ops.Pad", a)
	const op = "ops.Pad"
	sh := a.Shape()
	if len(widths) != len(sh) {
		array.Panicf(op, "%d pad widths for shape %v", len(widths), sh)
	}
	ns := slices.Clone(sh)
	pad := false
	for i, w := range widths {
		if w[0] < 0 || w[1] < 0 {
			array.Panicf(op, "negative pad widths %v for shape %v", widths, sh)
		}
		if w[0] > math.MaxInt-ns[i] || w[1] > math.MaxInt-ns[i]-w[0] {
			array.Panicf(op, "pad widths %v of shape %v give too many elements", widths, sh)
		}
		ns[i] += w[0] + w[1]
		pad = pad || w != [2]int{}
	}
	if _, p := sizeProblem(ns, a.DType()); p != "" {
		array.Panicf(op, "pad widths %v of shape %v give shape %v, which %s", widths, sh, ns, p)
	}
	if !pad {
		return a
	}
	return node(ns, a.DType(), &padPrim{Widths: slices.Clone(widths), Value: value}, a)
}

// PadMode pads a like Pad, but fills the border from a's own elements
// by numpy's mode: "edge" repeats the first and last element of each
// axis, "reflect" mirrors about them (not repeating them), "symmetric"
// mirrors including them, "wrap" continues from the other end, and
// "constant" pads with 0 (Pad takes another value). Widths wider than the
// axis keep reflecting (or wrapping), as numpy's do; reflecting an axis
// of one element repeats it. As in numpy a non-constant mode cannot pad
// an empty axis, but may pad the other axes of an empty array. Every
// dtype can be padded. The border is gathered
// (Take) along each padded axis in turn, so the derivative adds the
// border's cotangent back into the elements it came from.
func PadMode(a *array.Array, widths [][2]int, mode string) *array.Array {
	const op = "ops.PadMode"
	requireNonNil(op, a)
	switch mode {
	case "constant", "edge", "reflect", "symmetric", "wrap":
	default:
		array.Panicf(op, "unknown mode %q for shape %v (want \"constant\", \"edge\", \"reflect\", \"symmetric\" or \"wrap\")", mode, a.Shape())
	}
	sh := a.Shape()
	if len(widths) != len(sh) {
		array.Panicf(op, "%d pad widths for shape %v", len(widths), sh)
	}
	ns := slices.Clone(sh)
	for i, w := range widths {
		if w[0] < 0 || w[1] < 0 {
			array.Panicf(op, "negative pad widths %v for shape %v", widths, sh)
		}
		if w[0] > math.MaxInt-ns[i] || w[1] > math.MaxInt-ns[i]-w[0] {
			array.Panicf(op, "pad widths %v of shape %v give too many elements", widths, sh)
		}
		if sh[i] == 0 && w != [2]int{} && mode != "constant" {
			array.Panicf(op, "cannot pad axis %d of shape %v, which is empty, in mode %q", i, sh, mode)
		}
		ns[i] += w[0] + w[1]
	}
	if _, p := sizeProblem(ns, a.DType()); p != "" {
		array.Panicf(op, "pad widths %v of shape %v give shape %v, which %s", widths, sh, ns, p)
	}
	if mode == "constant" {
		return Pad(a, widths, 0)
	}
	for i, w := range widths {
		if w != [2]int{} {
			a = Take(a, padIndices(mode, sh[i], w), i)
		}
	}
	return a
}

// padIndices returns, for each position of a padded axis of length n,
// the position of the element it copies. Reflection is periodic: with
// period 2(n-1) for reflect (the end elements once per period) and 2n
// for symmetric, which is what numpy's repeated reflection of wide pads
// amounts to; wrapping has period n.
func padIndices(mode string, n int, w [2]int) *array.Array {
	idx := make([]int64, n+w[0]+w[1])
	for k := range idx {
		j := k - w[0]
		switch {
		case j >= 0 && j < n:
		case mode == "edge" || (mode == "reflect" && n == 1):
			j = min(max(j, 0), n-1)
		case mode == "wrap":
			j = ((j % n) + n) % n
		case mode == "reflect":
			p := 2 * (n - 1)
			j = ((j % p) + p) % p
			if j >= n {
				j = p - j
			}
		default:
			p := 2 * n
			j = ((j % p) + p) % p
			if j >= n {
				j = p - 1 - j
			}
		}
		idx[k] = int64(j)
	}
	return array.FromSlice(idx)
}
