package metal

import (
	"math"
	"math/bits"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal/internal/plan"
)

// sortBlock is SORT_BLOCK in kernels/sort.metal: the longest line sorted
// in threadgroup memory in one launch.
const sortBlock = 2048

// sortThreads is the most threads a block sort uses: each takes several
// compare-exchanges per step, and a pipeline may not allow 1024 threads.
const sortThreads = 512

// Sort plans sorting in ascending along axis into out (same shape and
// dtype), NaNs last, as cpu.Sort.
//
// Lines of up to sortBlock elements are sorted by one threadgroup each
// with a bitonic network in threadgroup memory. Longer lines are sorted
// in blocks of sortBlock into scratch memory as (key, index) pairs, then
// merged by passes that double the sorted runs (each element finds its
// place in the neighbouring run by binary search) until the last pass
// writes the result.
func Sort(out, in View, axis int) ([]Launch, error) {
	const name = "metal.Sort"
	if err := checkSortViews(name, out, in); err != nil {
		return nil, err
	}
	if out.DType != in.DType {
		return nil, array.Errorf(name, "out dtype %v differs from in's %v", out.DType, in.DType)
	}
	return sortPlan(name, "sort", "sortscratch", out, in, axis, in.Shape[axis])
}

// ArgSort plans writing into out (int32, in's shape) the positions that
// sort in along axis. The sort is stable: equal elements keep their
// order, and NaNs come last in their original order (numpy's
// kind="stable"); the kernels order (key, index) pairs, which makes it so.
func ArgSort(out, in View, axis int) ([]Launch, error) {
	const name = "metal.ArgSort"
	if err := checkSortViews(name, out, in); err != nil {
		return nil, err
	}
	if out.DType != array.Int32 {
		return nil, array.Errorf(name, "out dtype %v is not int32", out.DType)
	}
	if in.Shape[axis] > math.MaxInt32 {
		return nil, array.Errorf(name, "axis %d of size %d does not fit int32 positions", axis, in.Shape[axis])
	}
	return sortPlan(name, "argsort", "sortscratch", out, in, axis, in.Shape[axis])
}

// TopK plans writing into out the k largest elements of in along axis,
// largest first (NaNs count as larger than every number); out has in's
// shape with k along axis. It sorts each line in descending order and
// keeps the first k.
func TopK(out, in View, axis, k int) ([]Launch, error) {
	const name = "metal.TopK"
	if err := checkSortViews(name, out, in); err != nil {
		return nil, err
	}
	if out.DType != in.DType {
		return nil, array.Errorf(name, "out dtype %v differs from in's %v", out.DType, in.DType)
	}
	return sortPlan(name, "topk", "topkscratch", out, in, axis, k)
}

func checkSortViews(name string, out, in View) error {
	if err := in.check(name, "input"); err != nil {
		return err
	}
	if err := out.check(name, "output"); err != nil {
		return err
	}
	return checkGPUDType(name, in.DType)
}

// sortKeySize is the size of the key a dtype sorts by (the key type of
// kernels/sort.metal: float for the floats, uchar for uint8 and bool,
// int or uint for the other integers narrower than 64 bits).
func sortKeySize(dt array.DType) int {
	switch dt {
	case array.Int64, array.Uint64:
		return 8
	case array.Uint8, array.Bool:
		return 1
	}
	return 4
}

// sortPlan sorts the lines of in along axis and writes the first k
// (values or indices) to out: kind names the final kernels, scratch the
// ones writing runs to scratch memory.
func sortPlan(name, kind, scratch string, out, in View, axis, k int) ([]Launch, error) {
	n := in.Shape[axis]
	if out.Size() == 0 {
		return nil, nil
	}
	// The output's lines are placed by its own strides on the kept dims;
	// its length along the axis (k) differs from the input's.
	l, err := newLines(name, in.Shape, axis, in, View{Strides: out.Strides})
	if err != nil {
		return nil, err
	}
	inArg, inOff := bindAt(in, false)
	outArg, outOff := bindAt(out, true)
	dt := in.DType.String()
	mk := func(width int) params {
		p := params{}.add(n, l.outs, k, width, in.Strides[axis], out.Strides[axis], inOff, outOff, len(l.shape))
		return p.dims(l.shape).dims(l.strides[0]).dims(l.strides[1])
	}
	// The final kernels write values or indices through one of their two
	// output bindings; the other is bound to the same memory, unwritten.
	final := []bufArg{outArg, outArg}
	final[1].Write = false
	if kind == "argsort" {
		final[0].Write, final[1].Write = false, true
	}
	if n <= sortBlock {
		b := max(2, 1<<bits.Len(uint(n-1)))
		tpg := max(32, min(sortThreads, b/2))
		return []Launch{{
			Library: "sort.metal", Kernel: "sort_block_" + kind + "_" + dt,
			Buffers: append([]bufArg{inArg}, final...), Params: mk(b).bytes(),
			Grid: [3]int{tpg, l.outs, 1}, Group: [3]int{tpg, 1, 1}, Fit: plan.FitGroups,
		}}, nil
	}
	ks := sortKeySize(in.DType)
	var keys, idx [2]Memory
	for i := range 2 {
		if keys[i], err = newScratch(l.outs*n*ks, out, in); err != nil {
			return nil, err
		}
		if idx[i], err = newScratch(l.outs*n*4, out, in); err != nil {
			return nil, err
		}
	}
	blocks := (n + sortBlock - 1) / sortBlock
	ls := []Launch{{
		Library: "sort.metal", Kernel: "sort_block_" + scratch + "_" + dt,
		Buffers: []bufArg{inArg, {Mem: keys[0], Write: true}, {Mem: idx[0], Write: true}}, Params: mk(sortBlock).bytes(),
		Grid: [3]int{blocks * sortThreads, l.outs, 1}, Group: [3]int{sortThreads, 1, 1}, Fit: plan.FitGroups,
	}}
	cur := 0
	for w := sortBlock; w < n; w *= 2 {
		src := []bufArg{{Mem: keys[cur]}, {Mem: idx[cur]}}
		dst := []bufArg{{Mem: keys[1-cur], Write: true}, {Mem: idx[1-cur], Write: true}}
		kern := "sort_merge_" + scratch + "_" + dt
		if 2*w >= n {
			dst, kern = final, "sort_merge_"+kind+"_"+dt
		}
		ls = append(ls, Launch{
			Library: "sort.metal", Kernel: kern, Buffers: append(src, dst...), Params: mk(w).bytes(),
			Grid: [3]int{(n + 255) / 256 * 256, l.outs, 1}, Group: [3]int{256, 1, 1}, Fit: plan.FitThreads,
		})
		cur = 1 - cur
	}
	return ls, nil
}
