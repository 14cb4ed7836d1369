package metal

import (
	"encoding/binary"

	"github.com/fathom-go/fathom/array"
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
	mem        scratchMem
	op         string
	axis, size int
}

func newIndexCheck(op string, axis, size int) *IndexCheck {
	return &IndexCheck{mem: make(scratchMem, 16), op: op, axis: axis, size: size}
}

// arg binds the error buffer (kernels write it atomically).
func (c *IndexCheck) arg() bufArg { return bufArg{Mem: c.mem, Write: true} }

// Err returns nil if every index was in range, or an *array.Error naming
// a bad index, the axis and its size. It is valid once the launches have
// run.
func (c *IndexCheck) Err() error {
	if c == nil || binary.LittleEndian.Uint32(c.mem) == 0 {
		return nil
	}
	v := int64(binary.LittleEndian.Uint32(c.mem[4:])) | int64(binary.LittleEndian.Uint32(c.mem[8:]))<<32
	return array.Errorf(c.op, "index %d out of range for axis %d of size %d", v, c.axis, c.size)
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
	chk := newIndexCheck(op, axis, a.Shape[axis])
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
		Grid: [3]int{groups * 256, 1, 1}, Group: [3]int{256, 1, 1},
	}}, chk, nil
}

// wordBits names the word a dtype moves as ("32" for float32).
func wordBits(dt array.DType) string {
	return map[int]string{1: "8", 2: "16", 4: "32", 8: "64"}[dt.Size()]
}

// PutAlongAxis plans setting out to a with values scattered along axis at
// idx (numpy's put_along_axis), as cpu.PutAlongAxis: idx and values share
// one shape, equal to a's on every axis but axis; when an index repeats,
// the later value wins. out must not alias a or values. It copies a into
// out, then one thread writes each line's values in order. Bad indices
// are reported through the returned IndexCheck.
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
	ls, err := Copy(out, a)
	if err != nil {
		return nil, nil, err
	}
	return scatterPlan(op, ls, "scatter_put_"+wordBits(out.DType)+"_"+idx.DType.String(), out, idx, values, axis, false)
}

// ScatterAddAlongAxis plans setting out to zeros plus updates added along
// axis at idx (out[..., idx[..., j, ...], ...] += updates[..., j, ...]),
// as cpu.ScatterAddAlongAxis: repeated indices accumulate. One thread
// zeroes and fills each line of out, adding in the CPU's order, so float
// results agree exactly; float16 and bfloat16 sum in a float32 scratch
// line and round once. Bad indices are reported through the returned
// IndexCheck.
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
	return scatterPlan(op, nil, "scatter_add_"+out.DType.String()+"_"+idx.DType.String(), out, idx, updates, axis, true)
}

// scatterPlan appends the launch of a line-per-thread scatter to ls. add
// is set for scatter_add, which takes a float32 scratch line per line for
// the 16-bit floats (and binds out in its place otherwise).
func scatterPlan(op string, ls []Launch, kernel string, out, idx, values View, axis int, add bool) ([]Launch, *IndexCheck, error) {
	chk := newIndexCheck(op, axis, out.Shape[axis])
	l, err := newLines(op, idx.Shape, axis, out, idx, values)
	if err != nil {
		return nil, nil, err
	}
	// A line of out is written only where idx has lines; with no indices
	// along the axis, ScatterAdd still zeroes out.
	if l.outs == 0 || (!add && l.n == 0) {
		return ls, chk, nil
	}
	outArg, outOff := bindAt(out, true)
	idxArg, idxOff := bindAt(idx, false)
	valArg, valOff := bindAt(values, false)
	p := params{}.add(l.outs, len(l.shape), l.n, out.Shape[axis], out.Strides[axis], idx.Strides[axis], values.Strides[axis], outOff, idxOff, valOff)
	p = p.dims(l.shape).dims(l.strides[0]).dims(l.strides[1]).dims(l.strides[2])
	bufs := []bufArg{outArg, idxArg, valArg, chk.arg()}
	if add {
		acc := bufArg{Mem: out.Mem}
		if out.DType == array.Float16 || out.DType == array.BFloat16 {
			acc = bufArg{Mem: make(scratchMem, l.outs*out.Shape[axis]*4), Write: true}
		}
		bufs = append(bufs, acc)
	}
	return append(ls, Launch{
		Library: "gather.metal", Kernel: kernel, Buffers: bufs, Params: p.bytes(),
		Grid: [3]int{(l.outs + 255) / 256 * 256, 1, 1}, Group: [3]int{256, 1, 1},
	}), chk, nil
}
