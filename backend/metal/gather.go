package metal

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/fathom-go/fathom/internal/opset"
	"github.com/fathom-go/fathom/internal/strided"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal/internal/plan"
)

// IndexCheck is how gathers and scatters report an index out of range,
// which only the kernels see. Their plans return one with the launches:
// the kernels share its small scratch buffer, where the first thread to
// meet a bad index sets a flag and stores the index (the kernel goes on
// and leaves the output unspecified). After the launches have run (the
// host's Synchronize), Err turns the flag into the same *array.Error the
// CPU backend returns. A caller that runs the plan asynchronously checks
// it when it next waits for the GPU, before results are read.
type IndexCheck struct {
	mem        Memory
	op         string
	axis, size int
	// slots, when set, name the axis and size of each index array of a
	// multi-array plan; the kernels store the array's number with the
	// bad index.
	slots [][2]int
}

// newIndexCheck allocates the flag beside the operands (newScratch) and
// clears it: the buffer is fresh, so no queued GPU work uses it.
func newIndexCheck(op string, axis, size int, near ...View) (*IndexCheck, error) {
	mem, err := newScratch(16, near...)
	if err != nil {
		return nil, err
	}
	clear(mem.Bytes())
	return &IndexCheck{mem: mem, op: op, axis: axis, size: size}, nil
}

// arg binds the error buffer (kernels write it atomically).
func (c *IndexCheck) arg() bufArg { return bufArg{Mem: c.mem, Write: true} }

// Err returns nil if every index was in range, or an *array.Error naming
// a bad index, the axis and its size. It is valid once the launches have
// run.
func (c *IndexCheck) Err() error {
	if c == nil {
		return nil
	}
	b := c.mem.Bytes()
	if binary.LittleEndian.Uint32(b) == 0 {
		return nil
	}
	v := int64(binary.LittleEndian.Uint32(b[4:])) | int64(binary.LittleEndian.Uint32(b[8:]))<<32
	axis, size := c.axis, c.size
	if k := int(binary.LittleEndian.Uint32(b[12:])); k < len(c.slots) {
		axis, size = c.slots[k][0], c.slots[k][1]
	}
	return array.Errorf(c.op, "index %d out of range for axis %d of size %d", v, axis, size)
}

func checkIndexView(op string, idx View) error {
	if err := idx.check(op, "indices"); err != nil {
		return err
	}
	if !idx.DType.IsInteger() {
		return array.Errorf(op, "indices have dtype %v, not an integer dtype", idx.DType)
	}
	return nil
}

// Take plans gathering a's elements at positions idx along axis (numpy's
// take), as cpu.Take: out has shape a.Shape[:axis] + idx.Shape +
// a.Shape[axis+1:] and a's dtype; idx has any integer dtype; negative
// indices count from the end. One thread moves each element (any dtype,
// as a word of its size); an index out of range is reported through the
// returned IndexCheck.
func Take(out, a, idx View, axis int) ([]Launch, *IndexCheck, error) {
	const op = "metal.Take"
	if err := checkGatherViews(op, out, a, idx); err != nil {
		return nil, nil, err
	}
	if out.DType != a.DType {
		return nil, nil, array.Errorf(op, "out dtype %v differs from a's %v", out.DType, a.DType)
	}
	ni := len(idx.Shape)
	want := out.Shape
	nd := len(want)
	is, ss := make([]int, nd), make([]int, nd)
	copy(is[axis:], idx.Strides)
	copy(ss, a.Strides[:axis])
	copy(ss[axis+ni:], a.Strides[axis+1:])
	iv := View{Mem: idx.Mem, DType: idx.DType, Shape: want, Strides: is, Offset: idx.Offset}
	sv := View{Mem: a.Mem, DType: a.DType, Shape: want, Strides: ss, Offset: a.Offset}
	return gatherPlan(op, out, sv, iv, a, axis)
}

// TakeAlongAxis plans out[..., i, ...] = a[..., idx[..., i, ...], ...]
// along axis (numpy's take_along_axis), as cpu.TakeAlongAxis: idx has
// out's shape, a has it on every other axis. Bad indices are reported
// through the returned IndexCheck.
func TakeAlongAxis(out, a, idx View, axis int) ([]Launch, *IndexCheck, error) {
	const op = "metal.TakeAlongAxis"
	if err := checkGatherViews(op, out, a, idx); err != nil {
		return nil, nil, err
	}
	if out.DType != a.DType {
		return nil, nil, array.Errorf(op, "out dtype %v differs from a's %v", out.DType, a.DType)
	}
	ss := append([]int(nil), a.Strides...)
	ss[axis] = 0
	sv := View{Mem: a.Mem, DType: a.DType, Shape: out.Shape, Strides: ss, Offset: a.Offset}
	return gatherPlan(op, out, sv, idx, a, axis)
}

func checkGatherViews(op string, out, a, idx View) error {
	if err := a.check(op, "array"); err != nil {
		return err
	}
	if err := out.check(op, "output"); err != nil {
		return err
	}
	return checkIndexView(op, idx)
}

// gatherPlan launches gather: out[e] = src[e] + wrap(idx[e]) * step, src
// and idx being views of out's shape; a is the source array, whose axis
// is indexed.
func gatherPlan(op string, out, src, idx, a View, axis int) ([]Launch, *IndexCheck, error) {
	chk, err := newIndexCheck(op, axis, a.Shape[axis], out, a, idx)
	if err != nil {
		return nil, nil, err
	}
	total := out.Size()
	if total == 0 {
		return nil, chk, nil
	}
	l := collapse(out.Shape, out, idx, src)
	if len(l.shape) > maxDims {
		return nil, nil, array.Errorf(op, "shape %v has more than %d dims that cannot be merged", out.Shape, maxDims)
	}
	outArg, outOff := bindAt(out, true)
	srcArg, _ := bindAt(a, false)
	srcLo, _ := a.span()
	idxArg, idxOff := bindAt(idx, false)
	// src is bound where a's lowest element is: every gathered element lies
	// at or above it.
	p := params{}.add(total, len(l.shape), a.Shape[axis], a.Strides[axis], outOff, idxOff, src.Offset-srcLo)
	p = p.dims(l.shape).dims(l.strides[0]).dims(l.strides[1]).dims(l.strides[2])
	groups := cappedGroups((total + 255) / 256)
	return []Launch{{
		Library: "gather.metal", Kernel: "gather_" + wordBits(out.DType) + "_" + idx.DType.String(),
		Buffers: []bufArg{outArg, srcArg, idxArg, chk.arg()}, Params: p.bytes(),
		Grid: [3]int{groups * 256, 1, 1}, Group: [3]int{256, 1, 1}, Fit: plan.FitThreads,
	}}, chk, nil
}

// wordBits names the word a dtype moves as ("32" for float32).
func wordBits(dt array.DType) string {
	return map[int]string{1: "8", 2: "16", 4: "32", 8: "64"}[dt.Size()]
}

// PutAlongAxis plans setting out to a with values scattered along axis at
// idx (numpy's put_along_axis), as cpu.PutAlongAxis: idx and values share
// one shape, equal to a's on every axis but axis; when an index repeats,
// the later value wins. out is row-major and must not alias a or values.
// It copies a into out (as words); then, one thread per (line, index)
// pair, each pair claims its place with an atomic maximum of its position
// in a zeroed scratch of out's lines (4 bytes per element of out), and
// the pairs that won write their values: the result does not depend on
// the order the threads run in.
// Bad indices are reported through the returned IndexCheck.
func PutAlongAxis(out, a, idx, values View, axis int) ([]Launch, *IndexCheck, error) {
	const op = "metal.PutAlongAxis"
	if err := checkGatherViews(op, out, a, idx); err != nil {
		return nil, nil, err
	}
	if err := values.check(op, "values"); err != nil {
		return nil, nil, err
	}
	if values.DType != a.DType || out.DType != a.DType {
		return nil, nil, array.Errorf(op, "out dtype %v and values dtype %v differ from a's %v", out.DType, values.DType, a.DType)
	}
	chk, err := newIndexCheck(op, axis, out.Shape[axis], out, a, idx, values)
	if err != nil {
		return nil, nil, err
	}
	ls, err := copyWords(op, out, a, chk.mem)
	if err != nil {
		return nil, nil, err
	}
	l, err := newLines(op, idx.Shape, axis, out, idx, values)
	if err != nil {
		return nil, nil, err
	}
	if l.outs == 0 || l.n == 0 {
		return ls, chk, nil
	}
	if l.n >= math.MaxUint32 {
		return nil, nil, array.Errorf(op, "%d indices along axis %d: at most %d", l.n, axis, math.MaxUint32-1)
	}
	n := out.Shape[axis]
	own, err := newScratch(l.outs*n*4, out, a, idx, values)
	if err != nil {
		return nil, nil, err
	}
	zero, err := zeroWords(op, own, l.outs*n, out, a, idx, values)
	if err != nil {
		return nil, nil, err
	}
	ls = append(ls, zero...)
	outArg, outOff := bindAt(out, true)
	idxArg, idxOff := bindAt(idx, false)
	valArg, valOff := bindAt(values, false)
	p := scatterParams(l, n, out, idx, values, axis, outOff, idxOff, valOff)
	grid, group := scatterGrid(l)
	it := idx.DType.String()
	return append(ls, Launch{
		Library: "gather.metal", Kernel: "scatter_claim_" + it,
		Buffers: []bufArg{idxArg, {Mem: own, Write: true}, chk.arg()}, Params: p,
		Grid: grid, Group: group, Fit: plan.FitThreads,
	}, Launch{
		Library: "gather.metal", Kernel: "scatter_put_" + wordBits(out.DType) + "_" + it,
		Buffers: []bufArg{outArg, idxArg, valArg, {Mem: own}}, Params: p,
		Grid: grid, Group: group, Fit: plan.FitThreads,
	}), chk, nil
}

// ScatterAddAlongAxis plans setting out to zeros plus updates added along
// axis at idx (out[..., idx[..., j, ...], ...] += updates[..., j, ...]),
// as cpu.ScatterAddAlongAxis: repeated indices accumulate. One thread per
// (line, index) pair adds its update atomically: into out itself for
// float32 and the 32- and 64-bit integers (zeroed first), into a zeroed
// scratch accumulator for float16 and bfloat16 (float32, rounded once when
// it is copied to out) and the 8- and 16-bit integers (int32, wrapping,
// whose low bits are the sum). Integer results are exact; float sums run in an unspecified
// order, so they agree with the CPU's within rounding. Bad indices are
// reported through the returned IndexCheck.
func ScatterAddAlongAxis(out, idx, updates View, axis int) ([]Launch, *IndexCheck, error) {
	const op = "metal.ScatterAddAlongAxis"
	if err := out.check(op, "output"); err != nil {
		return nil, nil, err
	}
	if err := updates.check(op, "updates"); err != nil {
		return nil, nil, err
	}
	if err := checkIndexView(op, idx); err != nil {
		return nil, nil, err
	}
	if updates.DType != out.DType {
		return nil, nil, array.Errorf(op, "updates dtype %v differs from out's %v", updates.DType, out.DType)
	}
	if out.DType == array.Bool || out.DType == array.Complex64 {
		return nil, nil, array.Errorf(op, "cannot add dtype %v on the GPU", out.DType)
	}
	chk, err := newIndexCheck(op, axis, out.Shape[axis], out, idx, updates)
	if err != nil {
		return nil, nil, err
	}
	if out.Size() == 0 {
		return nil, chk, nil
	}
	// acc is where the kernel adds: out, or a scratch accumulator laid
	// out as out's lines (axis innermost), copied to out at the end.
	acc, accDT := out, out.DType
	switch out.DType {
	case array.Float16, array.BFloat16:
		accDT = array.Float32
	case array.Uint8, array.Int8, array.Int16, array.Uint16:
		accDT = array.Int32
	}
	if accDT != out.DType {
		n := out.Shape[axis]
		mem, err := newScratch(out.Size()*accDT.Size(), out, idx, updates)
		if err != nil {
			return nil, nil, err
		}
		kept := without(out.Shape, axis)
		rs := strided.RowMajor(kept)
		st := make([]int, 0, len(out.Shape))
		for _, s := range rs {
			st = append(st, s*n)
		}
		st = slices.Insert(st, axis, 1)
		acc = View{Mem: mem, DType: accDT, Shape: out.Shape, Strides: st}
	}
	ls, err := Fill(acc, 0)
	if err != nil {
		return nil, nil, err
	}
	l, err := newLines(op, idx.Shape, axis, acc, idx, updates)
	if err != nil {
		return nil, nil, err
	}
	if l.outs > 0 && l.n > 0 {
		accArg, accOff := bindAt(acc, true)
		idxArg, idxOff := bindAt(idx, false)
		updArg, updOff := bindAt(updates, false)
		grid, group := scatterGrid(l)
		ls = append(ls, Launch{
			Library: "gather.metal", Kernel: "scatter_add_" + out.DType.String() + "_" + idx.DType.String(),
			Buffers: []bufArg{accArg, idxArg, updArg, chk.arg()},
			Params:  scatterParams(l, out.Shape[axis], acc, idx, updates, axis, accOff, idxOff, updOff),
			Grid:    grid, Group: group, Fit: plan.FitThreads,
		})
	}
	if accDT != out.DType {
		c, err := Copy(out, acc)
		if err != nil {
			return nil, nil, err
		}
		ls = append(ls, c...)
	}
	return ls, chk, nil
}

// scatterParams is the ScatterParams block of the scatter kernels over
// lines l of n places: out is where they write (out, or an accumulator),
// idx and values what they read, the offsets from bindAt.
func scatterParams(l lines, n int, out, idx, values View, axis, outOff, idxOff, valOff int) []byte {
	p := params{}.add(l.outs, len(l.shape), l.n, n, out.Strides[axis], idx.Strides[axis], values.Strides[axis], outOff, idxOff, valOff)
	return p.dims(l.shape).dims(l.strides[0]).dims(l.strides[1]).dims(l.strides[2]).bytes()
}

// scatterGrid is the grid of the scatter kernels: one thread per (line,
// index) pair, in a grid-stride loop.
func scatterGrid(l lines) (grid, group [3]int) {
	groups := cappedGroups((l.outs*l.n + 255) / 256)
	return [3]int{groups * 256, 1, 1}, [3]int{256, 1, 1}
}

// ScatterMode is how Scatter combines an update with the element it lands
// on (opset's modes, which the CPU backend shares).
type ScatterMode = opset.ScatterMode

// The scatter modes (see opset.ScatterMode).
const (
	ScatterSet  = opset.ScatterSet
	ScatterSum  = opset.ScatterSum
	ScatterProd = opset.ScatterProd
	ScatterMax  = opset.ScatterMax
	ScatterMin  = opset.ScatterMin
)

// sliceIndex is the first part of a Gather or Scatter plan: the offset of
// every position's slice, in base, computed by one index_offsets launch
// per index array.
type sliceIndex struct {
	launches []Launch
	chk      *IndexCheck
	base     Memory
	np       int  // positions of the indices' shape
	has      bool // whether base holds offsets (there are index arrays)
}

// planSliceIndex plans the offsets of the slices that idx (views of one
// shape) start in an array of shape and strides st.
func planSliceIndex(op string, shape, st []int, idx []View, axes []int, near ...View) (sliceIndex, error) {
	var s sliceIndex
	if len(idx) != len(axes) {
		return s, array.Errorf(op, "%d index arrays for axes %v", len(idx), axes)
	}
	var b []int
	slots := make([][2]int, len(idx))
	for k, x := range idx {
		if err := checkIndexView(op, x); err != nil {
			return s, err
		}
		if k == 0 {
			b = x.Shape
		} else if !slices.Equal(x.Shape, b) {
			return s, array.Errorf(op, "index arrays of shapes %v and %v: they must be broadcast to one shape", b, x.Shape)
		}
		if axes[k] < 0 || axes[k] >= len(shape) {
			return s, array.Errorf(op, "axis %d out of range for shape %v", axes[k], shape)
		}
		slots[k] = [2]int{axes[k], shape[axes[k]]}
	}
	s.np, s.has = 1, len(idx) > 0
	for _, d := range b {
		s.np *= d
	}
	near = append(near, idx...)
	mem, err := newScratch(16, near...)
	if err != nil {
		return s, err
	}
	clear(mem.Bytes())
	s.chk = &IndexCheck{mem: mem, op: op, slots: slots}
	if len(slots) > 0 {
		s.chk.axis, s.chk.size = slots[0][0], slots[0][1]
	}
	if s.base, err = newScratch(max(1, s.np)*8, near...); err != nil {
		return s, err
	}
	if !s.has || s.np == 0 {
		return s, nil
	}
	groups := cappedGroups((s.np + 255) / 256)
	for k, x := range idx {
		l := collapse(b, x)
		if len(l.shape) > maxDims {
			return s, array.Errorf(op, "indices of shape %v have more than %d dims that cannot be merged", b, maxDims)
		}
		idxArg, idxOff := bindAt(x, false)
		first := 0
		if k == 0 {
			first = 1
		}
		p := params{}.add(s.np, len(l.shape), shape[axes[k]], st[axes[k]], idxOff, first, k).dims(l.shape).dims(l.strides[0])
		s.launches = append(s.launches, Launch{
			Library: "gather.metal", Kernel: "index_offsets_" + x.DType.String(),
			Buffers: []bufArg{{Mem: s.base, Write: true}, idxArg, s.chk.arg()}, Params: p.bytes(),
			Grid: [3]int{groups * 256, 1, 1}, Group: [3]int{256, 1, 1}, Fit: plan.FitThreads,
		})
	}
	return s, nil
}

// sliceParams is the SliceParams block: np positions of slices of shape
// slice, with strides dst in the destination and upd (slice part) and
// updB (positions' part over bshape) in the updates.
func (s sliceIndex) sliceParams(op string, slice, dst, upd, bshape, updB []int, dstOff, updOff int, mode ScatterMode) ([]byte, int, error) {
	m := 1
	for _, d := range slice {
		m *= d
	}
	ls := collapse(slice, View{Strides: dst}, View{Strides: upd})
	lb := collapse(bshape, View{Strides: updB})
	if len(ls.shape) > maxDims || len(lb.shape) > maxDims {
		return nil, 0, array.Errorf(op, "slices of shape %v at indices of shape %v have more than %d dims that cannot be merged", slice, bshape, maxDims)
	}
	has := 0
	if s.has {
		has = 1
	}
	p := params{}.add(s.np*m, s.np, m, len(ls.shape), len(lb.shape), has, dstOff, updOff, int(mode))
	p = p.dims(ls.shape).dims(ls.strides[0]).dims(ls.strides[1]).dims(lb.shape).dims(lb.strides[0])
	return p.bytes(), m, nil
}

// Gather plans MLX's gather, as cpu.Gather: out (row-major) has shape
// B + sliceSizes, where B is the shape of the index views idx (broadcast
// already), and out[p, s...] = a[i_0 + s_0, ...], i_d being wrap(idx[k][p])
// on axis d = axes[k] and 0 on the other axes. One launch per index array
// finds each position's slice; then one thread moves each element. Bad
// indices are reported through the returned IndexCheck, naming the axis
// of the array that holds them.
func Gather(out, a View, idx []View, axes, sliceSizes []int) ([]Launch, *IndexCheck, error) {
	const op = "metal.Gather"
	if err := a.check(op, "array"); err != nil {
		return nil, nil, err
	}
	if err := out.check(op, "output"); err != nil {
		return nil, nil, err
	}
	if out.DType != a.DType {
		return nil, nil, array.Errorf(op, "out dtype %v differs from a's %v", out.DType, a.DType)
	}
	if !rowMajor(out) {
		return nil, nil, array.Errorf(op, "output of shape %v and strides %v is not row-major", out.Shape, out.Strides)
	}
	if len(sliceSizes) != len(a.Shape) {
		return nil, nil, array.Errorf(op, "%d slice sizes for array of shape %v", len(sliceSizes), a.Shape)
	}
	si, err := planSliceIndex(op, a.Shape, a.Strides, idx, axes, out, a)
	if err != nil {
		return nil, nil, err
	}
	if out.Size() == 0 {
		// The indices are still checked, as the CPU checks them.
		return si.launches, si.chk, nil
	}
	outArg, _ := bindAt(out, true)
	srcArg, srcOff := bindAt(a, false)
	p, m, err := si.sliceParams(op, sliceSizes, a.Strides, make([]int, len(sliceSizes)), nil, nil, srcOff, 0, 0)
	if err != nil {
		return nil, nil, err
	}
	groups := cappedGroups((si.np*m + 255) / 256)
	return append(si.launches, Launch{
		Library: "gather.metal", Kernel: "gather_slices_" + wordBits(out.DType),
		Buffers: []bufArg{outArg, srcArg, {Mem: si.base}}, Params: p,
		Grid: [3]int{groups * 256, 1, 1}, Group: [3]int{256, 1, 1}, Fit: plan.FitThreads,
	}), si.chk, nil
}

// copyWords plans out = a (out row-major, a any view) as a gather of one
// slice, the whole of a, with no index: it moves words whatever the dtype.
// base is any buffer; the kernel does not read it.
func copyWords(op string, out, a View, base Memory) ([]Launch, error) {
	if !rowMajor(out) || !slices.Equal(out.Shape, a.Shape) {
		return nil, array.Errorf(op, "output of shape %v and strides %v is not a row-major array of shape %v", out.Shape, out.Strides, a.Shape)
	}
	if a.Size() == 0 {
		return nil, nil
	}
	outArg, _ := bindAt(out, true)
	srcArg, srcOff := bindAt(a, false)
	p, m, err := sliceIndex{np: 1}.sliceParams(op, a.Shape, a.Strides, make([]int, len(a.Shape)), nil, nil, srcOff, 0, 0)
	if err != nil {
		return nil, err
	}
	return []Launch{{
		Library: "gather.metal", Kernel: "gather_slices_" + wordBits(a.DType),
		Buffers: []bufArg{outArg, srcArg, {Mem: base}}, Params: p,
		Grid: [3]int{cappedGroups((m+255)/256) * 256, 1, 1}, Group: [3]int{256, 1, 1}, Fit: plan.FitThreads,
	}}, nil
}

// zeroWords plans clearing n uint32 words of mem: a copy, as words, of
// one zeroed word broadcast (the fresh scratch word is cleared by the
// host; no queued GPU work uses it).
func zeroWords(op string, mem Memory, n int, near ...View) ([]Launch, error) {
	zero, err := newScratch(4, near...)
	if err != nil {
		return nil, err
	}
	clear(zero.Bytes())
	return copyWords(op, View{Mem: mem, DType: array.Uint32, Shape: []int{n}, Strides: []int{1}},
		View{Mem: zero, DType: array.Uint32, Shape: []int{n}, Strides: []int{0}}, zero)
}

// atomicAdd lists the dtypes scatter_slices_add adds atomically in place.
var atomicAdd = map[array.DType]bool{array.Float32: true, array.Int32: true, array.Uint32: true, array.Int64: true, array.Uint64: true}

// Scatter plans MLX's scatter, as cpu.Scatter: out (row-major) is a copy
// of a with updates (shape B + one size per axis of a, 1 on the indexed
// axes) combined by mode into the slices that the index views idx (shape
// B) start. out starts as a copy of a, moved as words. Set claims each
// element for the latest position, then the winners write (the CPU's
// "later index wins"); Sum of float32 and the 32- and 64-bit integers
// adds atomically (float sums in an unspecified order, so within
// rounding of the CPU); every other mode and dtype runs one thread per
// slice element over the positions in order, which gives the CPU's
// result exactly (16-bit floats round after each update). Bad indices
// are reported through the returned IndexCheck.
func Scatter(out, a View, idx []View, updates View, axes []int, mode ScatterMode) ([]Launch, *IndexCheck, error) {
	const op = "metal.Scatter"
	if err := a.check(op, "array"); err != nil {
		return nil, nil, err
	}
	if err := out.check(op, "output"); err != nil {
		return nil, nil, err
	}
	if err := updates.check(op, "updates"); err != nil {
		return nil, nil, err
	}
	if out.DType != a.DType || updates.DType != a.DType {
		return nil, nil, array.Errorf(op, "out dtype %v and updates dtype %v differ from a's %v", out.DType, updates.DType, a.DType)
	}
	if !rowMajor(out) || !slices.Equal(out.Shape, a.Shape) {
		return nil, nil, array.Errorf(op, "output of shape %v and strides %v is not a row-major array of a's shape %v", out.Shape, out.Strides, a.Shape)
	}
	if mode < ScatterSet || mode > ScatterMin {
		return nil, nil, array.Errorf(op, "unknown mode %d", mode)
	}
	if a.DType == array.Complex64 && (mode == ScatterMax || mode == ScatterMin) {
		return nil, nil, array.Errorf(op, "cannot take the maximum or minimum of dtype %v", a.DType)
	}
	nd := len(a.Shape)
	if len(updates.Shape) < nd {
		return nil, nil, array.Errorf(op, "updates of shape %v for array of shape %v", updates.Shape, a.Shape)
	}
	nb := len(updates.Shape) - nd
	si, err := planSliceIndex(op, out.Shape, strided.RowMajor(out.Shape), idx, axes, out, a, updates)
	if err != nil {
		return nil, nil, err
	}
	if len(idx) > 0 && !slices.Equal(idx[0].Shape, updates.Shape[:nb]) || len(idx) == 0 && nb != 0 {
		return nil, nil, array.Errorf(op, "updates of shape %v for indices of another shape", updates.Shape)
	}
	ls, err := copyWords(op, out, a, si.base)
	if err != nil {
		return nil, nil, err
	}
	ls = append(ls, si.launches...)
	if si.np == 0 || updates.Size() == 0 {
		return ls, si.chk, nil
	}
	outArg, outOff := bindAt(out, true)
	updArg, updOff := bindAt(updates, false)
	slice, bshape := updates.Shape[nb:], updates.Shape[:nb]
	p, m, err := si.sliceParams(op, slice, strided.RowMajor(out.Shape), updates.Strides[nb:], bshape, updates.Strides[:nb], outOff, updOff, mode)
	if err != nil {
		return nil, nil, err
	}
	grid := func(n int) ([3]int, [3]int) {
		return [3]int{cappedGroups((n+255)/256) * 256, 1, 1}, [3]int{256, 1, 1}
	}
	g, tg := grid(si.np * m)
	baseArg := bufArg{Mem: si.base}
	switch {
	case mode == ScatterSet:
		if si.np >= math.MaxUint32 {
			return nil, nil, array.Errorf(op, "%d index positions: at most %d", si.np, math.MaxUint32-1)
		}
		own, err := newScratch(out.Size()*4, out, a, updates)
		if err != nil {
			return nil, nil, err
		}
		zero, err := zeroWords(op, own, out.Size(), out, a, updates)
		if err != nil {
			return nil, nil, err
		}
		ls = append(ls, zero...)
		ls = append(ls, Launch{
			Library: "gather.metal", Kernel: "scatter_slices_claim",
			Buffers: []bufArg{baseArg, {Mem: own, Write: true}}, Params: p,
			Grid: g, Group: tg, Fit: plan.FitThreads,
		}, Launch{
			Library: "gather.metal", Kernel: "scatter_slices_put_" + wordBits(out.DType),
			Buffers: []bufArg{outArg, updArg, baseArg, {Mem: own}}, Params: p,
			Grid: g, Group: tg, Fit: plan.FitThreads,
		})
	case mode == ScatterSum && atomicAdd[out.DType]:
		ls = append(ls, Launch{
			Library: "gather.metal", Kernel: "scatter_slices_add_" + out.DType.String(),
			Buffers: []bufArg{outArg, updArg, baseArg}, Params: p,
			Grid: g, Group: tg, Fit: plan.FitThreads,
		})
	default:
		g, tg = grid(m)
		ls = append(ls, Launch{
			Library: "gather.metal", Kernel: "scatter_slices_ordered_" + out.DType.String(),
			Buffers: []bufArg{outArg, updArg, baseArg}, Params: p,
			Grid: g, Group: tg, Fit: plan.FitThreads,
		})
	}
	return ls, si.chk, nil
}
