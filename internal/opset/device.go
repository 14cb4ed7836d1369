package opset

import "github.com/fathom-go/fathom/array"

// HasDType reports whether device d computes with dtype dt at all: Metal
// has no double, so float64 is CPU only.
func HasDType(d array.DeviceType, dt array.DType) bool {
	return dt.Valid() && !(d == array.DeviceGPU && dt == array.Float64)
}
