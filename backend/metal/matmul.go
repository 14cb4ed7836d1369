package metal

import (
	"github.com/fathom-go/fathom/array"
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
// output reading a's rows (N = 1), or a thread per output reading along
// b's rows (M = 1). Anything else runs a tiled GEMM: each threadgroup
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
	p := params{}.add(m, n, k, batches, len(bl.shape), aOff, bOff, oOff,
		a.Strides[nd-2], a.Strides[nd-1], b.Strides[nd-2], b.Strides[nd-1], out.Strides[nd-2], out.Strides[nd-1])
	p = p.dims(bl.shape).dims(bl.strides[0]).dims(bl.strides[1]).dims(bl.strides[2])
	l := Launch{Library: "matmul.metal", Buffers: []bufArg{aArg, bArg, oArg}, Params: p.bytes()}
	dt := out.DType.String()
	switch {
	case n == 1:
		l.Kernel = "gemv_" + dt
		l.Grid, l.Group = [3]int{(m + 7) / 8 * 256, batches, 1}, [3]int{256, 1, 1}
	case m == 1:
		l.Kernel = "gemv_t_" + dt
		l.Grid, l.Group = [3]int{(n + 255) / 256 * 256, batches, 1}, [3]int{256, 1, 1}
	default:
		l.Kernel = "gemm_" + dt
		l.Grid, l.Group = [3]int{(n + 63) / 64 * 16, (m + 63) / 64 * 16, batches}, [3]int{16, 16, 1}
	}
	return []Launch{l}, nil
}
