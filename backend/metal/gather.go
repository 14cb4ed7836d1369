package metal

import (
	"encoding/binary"
	"math"
	"slices"

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
// the later value wins. out must not alias a or values. It copies a into
// out; then, one thread per (line, index) pair, each pair claims its place
// with an atomic maximum of its position in a zeroed scratch of out's
// lines (4 bytes per element of out), and the pairs that won write their
// values: the result does not depend on the order the threads run in.
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
	ls, err := Copy(out, a)
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
	zero, err := Fill(View{Mem: own, DType: array.Int32, Shape: []int{l.outs * n}, Strides: []int{1}}, 0)
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
