package metal

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal/internal/plan"
)

// MatMul plans out = a @ b over the last two axes, as cpu.MatMul: a is
// [..., M, K], b is [..., K, N] and out [..., M, N] (the caller has
// checked the shapes); the batch axes of a and b are already broadcast to
// out's (zero strides allowed), and any
// strides work (a transposed operand is read in place). float32, float16
// and bfloat16 accumulate in float32 (rounding once); integers wrap, and
// bool is an or of ands. K = 0 gives zeros.
//
// A matrix-vector product (N = 1, or M = 1) runs a GEMV: a simdgroup per
// output reading a's rows (N = 1), or a thread per output and part of K
// reading along b's rows, the parts added by a second pass (M = 1, see
// gemvT). Anything else runs a tiled GEMM: each threadgroup
// computes a 64x64 block of out, staging 64x16 and 16x64 tiles of a and b
// in threadgroup memory, each of its 256 threads accumulating 4x4
// outputs. msl_compat.h has no simdgroup_matrix, so the GEMM does not use
// it: it could not be checked here.
func MatMul(out, a, b View) ([]Launch, error) {
	const name = "metal.MatMul"
	for _, v := range []struct {
		v    View
		what string
	}{{a, "a"}, {b, "b"}, {out, "output"}} {
		if err := v.v.check(name, v.what); err != nil {
			return nil, err
		}
	}
	nd := len(out.Shape)
	m, n, k := out.Shape[nd-2], out.Shape[nd-1], a.Shape[nd-1]
	if a.DType != out.DType || b.DType != out.DType {
		return nil, array.Errorf(name, "dtypes %v @ %v -> %v differ", a.DType, b.DType, out.DType)
	}
	if err := checkGPUDType(name, out.DType); err != nil {
		return nil, err
	}
	if out.Size() == 0 {
		return nil, nil
	}
	batch := out.Shape[:nd-2]
	bl := collapse(batch, View{Strides: a.Strides[:nd-2]}, View{Strides: b.Strides[:nd-2]}, View{Strides: out.Strides[:nd-2]})
	if len(bl.shape) > maxDims {
		return nil, array.Errorf(name, "batch shape %v has more than %d dims that cannot be merged", batch, maxDims)
	}
	batches := 1
	for _, d := range batch {
		batches *= d
	}
	aArg, aOff := bindAt(a, false)
	bArg, bOff := bindAt(b, false)
	oArg, oOff := bindAt(out, true)
	mk := func(parts, chunk int) []byte {
		p := params{}.add(m, n, k, batches, len(bl.shape), aOff, bOff, oOff,
			a.Strides[nd-2], a.Strides[nd-1], b.Strides[nd-2], b.Strides[nd-1], out.Strides[nd-2], out.Strides[nd-1], parts, chunk)
		return p.dims(bl.shape).dims(bl.strides[0]).dims(bl.strides[1]).dims(bl.strides[2]).bytes()
	}
	l := Launch{Library: "matmul.metal", Buffers: []bufArg{aArg, bArg, oArg}, Params: mk(1, max(k, 1))}
	dt := out.DType.String()
	switch {
	case n == 1:
		l.Kernel = "gemv_" + dt
		l.Grid, l.Group, l.Fit = [3]int{(m + 7) / 8 * 256, batches, 1}, [3]int{256, 1, 1}, plan.FitSimd
	case m == 1:
		return gemvT(l, mk, out, a, b, n, k, batches)
	default:
		l.Kernel = "gemm_" + dt
		// 16x16 threads, each with its share of the tiles: no Fit.
		l.Grid, l.Group = [3]int{(n + 63) / 64 * 16, (m + 63) / 64 * 16, batches}, [3]int{16, 16, 1}
	}
	return []Launch{l}, nil
}

// gemvT tuning: K is split into parts of at least gemvTChunk elements, at
// most gemvTParts of them, so that no thread loops over a long K (a GPU
// that drives a display stops kernels that run for seconds).
const (
	gemvTChunk = 512
	gemvTParts = 256
)

// gemvT finishes the plan of a product with M = 1 (l has the buffers): one
// thread per output and part of K, then, if K has several parts, one per
// output adding the partial sums (in the accumulator's dtype: float32 for
// the floats) from scratch memory in order.
func gemvT(l Launch, mk func(parts, chunk int) []byte, out, a, b View, n, k, batches int) ([]Launch, error) {
	dt := out.DType.String()
	parts := min((k+gemvTChunk-1)/gemvTChunk, gemvTParts)
	chunk := max(k, 1)
	if parts > 1 {
		chunk = (k + parts - 1) / parts
		parts = (k + chunk - 1) / chunk
	} else {
		parts = 1
	}
	l.Kernel, l.Params = "gemv_t_"+dt, mk(parts, chunk)
	l.Grid, l.Group, l.Fit = [3]int{(n + 255) / 256 * 256, parts, batches}, [3]int{256, 1, 1}, plan.FitThreads
	if parts == 1 {
		// The partial-sum binding is unused: out again, unwritten.
		l.Buffers = append(l.Buffers, bufArg{Mem: l.Buffers[2].Mem, Offset: l.Buffers[2].Offset})
		return []Launch{l}, nil
	}
	acc := gemvAccSize(out.DType)
	part, err := newScratch(batches*parts*n*acc, out, a, b)
	if err != nil {
		return nil, err
	}
	oArg := l.Buffers[2]
	l.Buffers[2].Write = false // unused with several parts
	l.Buffers = append(l.Buffers, bufArg{Mem: part, Write: true})
	sum := Launch{
		Library: "matmul.metal", Kernel: "gemv_t_sum_" + dt, Buffers: []bufArg{{Mem: part}, oArg}, Params: l.Params,
		Grid: [3]int{(n + 255) / 256 * 256, batches, 1}, Group: [3]int{256, 1, 1}, Fit: plan.FitThreads,
	}
	return []Launch{l, sum}, nil
}

// gemvAccSize is the size of the accumulator of a matmul of dtype dt
// (MatMul's kernels: float for the 16-bit floats, int or uint for bool
// and the 8- and 16-bit integers but uint8).
func gemvAccSize(dt array.DType) int {
	switch dt {
	case array.Float16, array.BFloat16, array.Bool, array.Int8, array.Int16, array.Uint16:
		return 4
	}
	return dt.Size()
}
