package metal

import (
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/fathom-go/fathom/internal/strided"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal/internal/plan"
	"github.com/fathom-go/fathom/internal/opset"
)

// This file holds the reductions and the pieces the other line-wise
// families (arg reductions, softmax, scans, sorts, scatters) share: the
// parameter block of kernels/reduce.metal-style kernels, the layout of
// lines along an axis, and scratch memory.

// maxDims is MAXD in the kernels: the dims a kernel parameter block holds
// for one view after merging. Merging makes more than a handful rare.
const maxDims = 8

// scratchMem is scratch memory of a plan whose operands are all host
// memory (the conformance suite's, on the harness): the harness runs it
// as is, and a Metal host would stage it like any host memory. It starts
// zeroed.
type scratchMem []byte

// Bytes returns the memory.
func (m scratchMem) Bytes() []byte { return m }

// newScratch returns n bytes for a plan's intermediate results (partial
// sums, sort runs, scatter accumulators, an index error flag), from the
// allocator of the first operand in near that is device memory, so the GPU
// uses it in place and it returns to the buffer cache once the launches
// that hold it have run and are dropped. The ops layer's outputs always
// are device memory. Only when no operand is (the harness's conformance
// suite) is it host memory. Its contents are arbitrary: the kernels write
// it before they read it, or the plan clears it.
func newScratch(n int, near ...View) (Memory, error) {
	for _, v := range near {
		if b := deviceBuf(v.Mem); b != nil && b.cache != nil {
			return b.cache.allocWaiting(n)
		}
	}
	return make(scratchMem, n), nil
}

// params builds a kernel parameter block: a struct of longs, arrays of
// maxDims padded with zeros.
type params []int64

func (p params) add(v ...int) params {
	for _, x := range v {
		p = append(p, int64(x))
	}
	return p
}

// dims appends one array field.
func (p params) dims(v []int) params {
	p = p.add(v...)
	for range maxDims - len(v) {
		p = append(p, 0)
	}
	return p
}

func (p params) bytes() []byte { return packParams(p) }

// bindAt binds v's memory at the lowest element v reaches and returns
// the offset of v's first element from there (>= 0 with negative
// strides), as the kernels expect.
func bindAt(v View, write bool) (bufArg, int) {
	lo, _ := v.span()
	return bufArg{Mem: v.Mem, Offset: lo * v.DType.Size(), Write: write}, v.Offset - lo
}

// without returns s without element i.
func without(s []int, i int) []int {
	return append(slices.Clone(s[:i]), s[i+1:]...)
}

// lines describes the lines of a view along one axis: the kept dims
// (merged across every operand, with each operand's strides) and the
// length n. Operand strides along the axis are kept by the caller.
type lines struct {
	outs, n int
	shape   []int
	strides [][]int
}

// newLines merges the dims other than axis of views that share shape on
// them (their own sizes along axis may differ).
func newLines(op string, shape []int, axis int, views ...View) (lines, error) {
	vs := make([]View, len(views))
	for k, v := range views {
		vs[k] = View{Strides: without(v.Strides, axis)}
	}
	kept := without(shape, axis)
	l := collapse(kept, vs...)
	out := lines{outs: 1, n: shape[axis], shape: l.shape, strides: l.strides}
	for _, d := range kept {
		out.outs *= d
	}
	if len(l.shape) > maxDims {
		return out, array.Errorf(op, "shape %v has more than %d dims that cannot be merged", shape, maxDims)
	}
	return out, nil
}

// gridGroups caps the threadgroups of kernels that loop over their work
// (grid-stride loops), keeping grids within 32 bits. Tests lower it to
// exercise the loops.
var gridGroups atomic.Int64

func init() { gridGroups.Store(1 << 20) }

// cappedGroups returns min(n, gridGroups).
func cappedGroups(n int) int { return int(min(int64(n), gridGroups.Load())) }

// perSimdMax is the longest line (or fold) given to one simdgroup rather
// than a whole threadgroup.
const perSimdMax = 256

// lineGrid returns the launch geometry of a kernel that takes items one
// per simdgroup (n short) or one per threadgroup, whether it is the
// former, and how the launch fits a pipeline that allows fewer threads
// (the kernels read their group size from attributes and loop over their
// items, so any multiple of the SIMD width works).
func lineGrid(items, n int) (grid, group [3]int, perSimd bool, fit plan.Fit) {
	if n <= perSimdMax {
		groups := cappedGroups((items + 7) / 8)
		return [3]int{groups * 256, 1, 1}, [3]int{256, 1, 1}, true, plan.FitSimd
	}
	tg := 256
	if n > 8192 {
		tg = 1024
	}
	groups := cappedGroups(items)
	return [3]int{groups * tg, 1, 1}, [3]int{tg, 1, 1}, false, plan.FitGroups
}

// accDType is the dtype partial results are kept in between the passes
// of a split reduction to r: float32 for the 16-bit floats (which
// accumulate in float32), else r.
func accDType(r array.DType) array.DType {
	if r == array.Float16 || r == array.BFloat16 {
		return array.Float32
	}
	return r
}

// kernelName is op's name in the kernels of the line-wise families
// ("sum", "cumsum", "argmax").
func kernelName(op fmt.Stringer) string { return strings.ToLower(op.String()) }

// checkGPUDType rejects dtypes the line-wise kernels without an opset
// enum (softmax, sorts, scatters) do not handle: float64 (no double in
// Metal) and complex64.
func checkGPUDType(op string, dt array.DType) error {
	if err := checkDType(op, dt); err != nil {
		return err
	}
	if dt == array.Complex64 {
		return array.Errorf(op, "complex64 is not supported on the GPU")
	}
	return nil
}

// Reduction tuning: a fold of at least splitMin elements with fewer than
// splitOuts outputs is split into parts of about splitChunk elements
// reduced in a first pass, so that enough threadgroups run.
const (
	splitMin   = 8192
	splitOuts  = 256
	splitChunk = 4096
	splitParts = 256
)

// Reduce plans folding in over axes (sorted, distinct) with op into out,
// whose shape is in's without those axes (the caller has checked both)
// and whose dtype is op.Result(in.DType), as cpu.Reduce; the GPU has no
// complex64 reductions. Both may be strided and in may
// broadcast. Empty folds give the identity, except for Max and Min, where
// they are an error.
//
// The kept dims and the folded dims are each merged as far as the strides
// allow. When the kept dims are the contiguous ones (a column sum of a
// row-major matrix) reduce_cols gives each lane its own output; otherwise
// reduce_rows folds each output with a simdgroup (short folds) or a
// threadgroup, lanes reading neighbouring elements. Few long folds are
// split in two passes through scratch memory (the whole-array reduction
// is the case of one output).
func Reduce(op opset.ReduceOp, out, in View, axes []int) ([]Launch, error) {
	const name = "metal.Reduce"
	if err := in.check(name, "input"); err != nil {
		return nil, err
	}
	if err := out.check(name, "output"); err != nil {
		return nil, err
	}
	want, ok := op.Result(in.DType)
	if !ok || !op.Supported(array.DeviceGPU, in.DType) {
		return nil, unsupported(name, op, in.DType, ok)
	}
	if out.DType != want {
		return nil, array.Errorf(name, "%v of %v gives %v, not %v", op, in.DType, want, out.DType)
	}
	kop := kernelName(op)
	var keptShape, keptIn, redShape, redIn []int
	for i, d := range in.Shape {
		if slices.Contains(axes, i) {
			redShape, redIn = append(redShape, d), append(redIn, in.Strides[i])
		} else {
			keptShape, keptIn = append(keptShape, d), append(keptIn, in.Strides[i])
		}
	}
	outs, n := out.Size(), 1
	for _, d := range redShape {
		n *= d
	}
	if outs == 0 {
		return nil, nil
	}
	if n == 0 && (op == opset.Max || op == opset.Min) {
		return nil, array.Errorf(name, "%v over an empty axis of shape %v has no identity", op, in.Shape)
	}
	k := collapse(keptShape, View{Strides: keptIn}, out)
	r := foldDims(redShape, redIn)
	if len(k.shape) > maxDims || len(r.shape) > maxDims {
		return nil, array.Errorf(name, "shape %v reduced over %v has more than %d dims that cannot be merged", in.Shape, axes, maxDims)
	}
	inArg, inOff := bindAt(in, false)
	outArg, outOff := bindAt(out, true)
	pass := func(kernel string, parts, chunk int, src, dst bufArg, srcOff, dstOff int, kin, kout []int, n int, r layout) Launch {
		items := outs * parts
		grid, group, perSimd, fit := lineGrid(items, min(n, chunk))
		p := params{}.add(n, outs, parts, chunk, b2i(perSimd), srcOff, dstOff, len(k.shape), len(r.shape))
		p = p.dims(k.shape).dims(kin).dims(kout).dims(r.shape).dims(r.strides[0])
		return Launch{Library: "reduce.metal", Kernel: kernel, Buffers: []bufArg{src, dst}, Params: p.bytes(), Grid: grid, Group: group, Fit: fit}
	}
	rows := func(from, to array.DType) string {
		return "reduce_rows_" + kop + "_" + from.String() + "_" + to.String()
	}
	kin, kout := k.strides[0], k.strides[1]
	innerContig := kin[len(kin)-1] == 1 && k.shape[len(k.shape)-1] > 1
	foldContig := len(r.shape) == 1 && r.strides[0][0] == 1
	switch {
	case n >= splitMin && outs < splitOuts:
		parts := min((n+splitChunk-1)/splitChunk, splitParts)
		chunk := (n + parts - 1) / parts
		acc := accDType(want)
		mem, err := newScratch(outs*parts*acc.Size(), out, in)
		if err != nil {
			return nil, err
		}
		tmp := bufArg{Mem: mem, Write: true}
		first := pass(rows(in.DType, acc), parts, chunk, inArg, tmp, inOff, 0, kin, kout, n, r)
		// The second pass folds the [outs, parts] partials: its kept dims
		// are the first pass's with row-major strides scaled by parts.
		sin := strided.RowMajor(k.shape)
		for i := range sin {
			sin[i] *= parts
		}
		pr := layout{shape: []int{parts}, strides: [][]int{{1}}}
		tmp.Write = false
		second := pass(rows(acc, out.DType), 1, parts, tmp, outArg, 0, outOff, sin, kout, parts, pr)
		return []Launch{first, second}, nil
	case innerContig && !foldContig && int64((outs+31)/32*32) <= maxGridDim.Load():
		p := params{}.add(n, outs, 1, n, 0, inOff, outOff, len(k.shape), len(r.shape))
		p = p.dims(k.shape).dims(kin).dims(kout).dims(r.shape).dims(r.strides[0])
		return []Launch{{
			Library: "reduce.metal", Kernel: "reduce_cols_" + kop + "_" + in.DType.String() + "_" + out.DType.String(),
			Buffers: []bufArg{inArg, outArg}, Params: p.bytes(),
			// The kernel's layout is 32x8 threads: no Fit (a pipeline
			// allowing fewer than 256 threads is an error).
			Grid: [3]int{(outs + 31) / 32 * 32, 8, 1}, Group: [3]int{32, 8, 1},
		}}, nil
	}
	return []Launch{pass(rows(in.DType, out.DType), 1, max(n, 1), inArg, outArg, inOff, outOff, kin, kout, n, r)}, nil
}

// foldDims merges the folded dims of a reduction. The order of folding
// does not change the mathematical result, so they are sorted by
// decreasing stride first, which merges a transposed but dense input
// into one contiguous run.
func foldDims(shape, strides []int) layout {
	idx := make([]int, len(shape))
	for i := range idx {
		idx[i] = i
	}
	abs := func(x int) int { return max(x, -x) }
	slices.SortStableFunc(idx, func(a, b int) int { return abs(strides[b]) - abs(strides[a]) })
	s, st := make([]int, len(shape)), make([]int, len(shape))
	for i, j := range idx {
		s[i], st[i] = shape[j], strides[j]
	}
	return collapse(s, View{Strides: st})
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ArgReduce plans writing to out (int32, in's shape without axis) the
// index along axis of each line's largest (ArgMax) or smallest (ArgMin)
// element, as cpu.ArgReduce: ties go to the first, and the
// first NaN beats every number. The axis must not be empty unless out is.
// Each line is folded by a simdgroup (short lines) or a threadgroup.
func ArgReduce(op opset.ArgOp, out, in View, axis int) ([]Launch, error) {
	const name = "metal.ArgReduce"
	if err := checkLineViews(name, out, in); err != nil {
		return nil, err
	}
	if _, ok := op.Result(in.DType); !ok || !op.Supported(array.DeviceGPU, in.DType) {
		return nil, unsupported(name, op, in.DType, ok)
	}
	if out.DType != array.Int32 {
		return nil, array.Errorf(name, "output dtype %v, want int32", out.DType)
	}
	if out.Size() == 0 {
		return nil, nil
	}
	if in.Shape[axis] == 0 {
		return nil, array.Errorf(name, "%v over an empty axis %d of shape %v", op, axis, in.Shape)
	}
	return lineLaunch(name, "arg_reduce.metal", kernelName(op)+"_"+in.DType.String(), out, in, axis, true, nil)
}

// checkLineViews validates the operands of a kernel along an axis; the
// caller has checked their shapes.
func checkLineViews(name string, out, in View) error {
	if err := in.check(name, "input"); err != nil {
		return err
	}
	return out.check(name, "output")
}

// lineLaunch is the launch of a line kernel (arg_reduce, softmax_lines,
// scan_lines): one line of in along axis per simdgroup or threadgroup,
// with the parameter block
//
//	n, outs, in_step, out_step, per_simd, extra..., in_off, out_off, nk, kshape, kin, kout
//
// where out_step is 0 for reduced outputs and extra holds the kernel's
// flags.
func lineLaunch(name, lib, kernel string, out, in View, axis int, reduced bool, extra []int) ([]Launch, error) {
	ov := out
	if reduced {
		// A reduced output is a view with a zero-stride axis, which
		// merges like the input's kept dims.
		ov = View{Strides: append(append(append([]int{}, out.Strides[:axis]...), 0), out.Strides[axis:]...)}
	}
	l, err := newLines(name, in.Shape, axis, in, ov)
	if err != nil {
		return nil, err
	}
	inArg, inOff := bindAt(in, false)
	outArg, outOff := bindAt(out, true)
	grid, group, perSimd, fit := lineGrid(l.outs, l.n)
	outStep := 0
	if !reduced {
		outStep = out.Strides[axis]
	}
	p := params{}.add(l.n, l.outs, in.Strides[axis], outStep, b2i(perSimd)).add(extra...).add(inOff, outOff, len(l.shape))
	p = p.dims(l.shape).dims(l.strides[0]).dims(l.strides[1])
	return []Launch{{Library: lib, Kernel: kernel, Buffers: []bufArg{inArg, outArg}, Params: p.bytes(), Grid: grid, Group: group, Fit: fit}}, nil
}
