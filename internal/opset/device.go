package opset

import "github.com/fathom-go/fathom/array"

// HasDType reports whether device d computes with dtype dt at all: Metal
// has no double, so float64 is CPU only.
func HasDType(d array.DeviceType, dt array.DType) bool {
	if !dt.Valid() {
		return false
	}
	return d != array.DeviceGPU || dt != array.Float64
}

// CheckDTypes returns an *array.Error naming op when device d does not
// compute with one of dts: an invalid dtype, or Metal's lack of float64.
// It returns nil when d has them all.
func CheckDTypes(op string, d array.DeviceType, dts ...array.DType) error {
	for _, dt := range dts {
		switch {
		case !dt.Valid():
			return array.Errorf(op, "invalid dtype %v", dt)
		case d == array.DeviceGPU && dt == array.Float64:
			return array.Errorf(op, "float64 is not supported on the GPU (Metal has no double)")
		}
	}
	return nil
}
