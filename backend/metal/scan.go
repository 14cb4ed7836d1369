package metal

import (
	"github.com/fathom-go/fathom/array"
)

// Scan plans the running op ("CumSum", "CumProd", "CumMax", "CumMin")
// of in along axis into out (same shape; dtype in's, int32 for CumSum and
// CumProd of bool), as cpu.Scan: inclusive scans include each element in
// its own result, exclusive ones start from the identity; reverse runs
// from the end of the axis. Each line is scanned by a simdgroup (short
// lines) or a threadgroup, a chunk of as many elements as threads at a
// time.
func Scan(op string, out, in View, axis int, reverse, inclusive bool) ([]Launch, error) {
	const name = "metal.Scan"
	kop := map[string]string{"CumSum": "cumsum", "CumProd": "cumprod", "CumMax": "cummax", "CumMin": "cummin"}[op]
	if kop == "" {
		return nil, array.Errorf(name, "unknown scan %q", op)
	}
	if err := checkLineViews(name, out, in, axis, false); err != nil {
		return nil, err
	}
	if err := checkGPUDType(name, in.DType); err != nil {
		return nil, err
	}
	want := in.DType
	if want == array.Bool && (op == "CumSum" || op == "CumProd") {
		want = array.Int32
	}
	if out.DType != want {
		return nil, array.Errorf(name, "%s of %v gives %v, not %v", op, in.DType, want, out.DType)
	}
	if out.Size() == 0 {
		return nil, nil
	}
	return lineLaunch(name, "scan.metal", kop+"_"+in.DType.String(), out, in, axis, false, []int{b2i(reverse), b2i(inclusive)})
}
