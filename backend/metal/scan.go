package metal

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/opset"
)

// Scan plans the running op of in along axis into out (same shape, which
// the caller has checked; dtype op.Result(in.DType)), as cpu.Scan:
// inclusive scans include each element in its own result, exclusive ones
// start from the identity; reverse runs from the end of the axis. The GPU
// has no complex64 scans. Each line is scanned by a simdgroup (short
// lines) or a threadgroup, a chunk of as many elements as threads at a
// time.
func Scan(op opset.ScanOp, out, in View, axis int, reverse, inclusive bool) ([]Launch, error) {
	const name = "metal.Scan"
	if err := checkLineViews(name, out, in); err != nil {
		return nil, err
	}
	want, ok := op.Result(in.DType)
	if !ok || !op.Supported(array.DeviceGPU, in.DType) {
		return nil, unsupported(name, op, in.DType, ok)
	}
	if out.DType != want {
		return nil, array.Errorf(name, "%v of %v gives %v, not %v", op, in.DType, want, out.DType)
	}
	if out.Size() == 0 {
		return nil, nil
	}
	return lineLaunch(name, "scan.metal", kernelName(op)+"_"+in.DType.String(), out, in, axis, false, []int{b2i(reverse), b2i(inclusive)})
}
