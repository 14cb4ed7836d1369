package opset

import "github.com/fathom-go/fathom/array"

// HasDType reports whether device d computes with dtype dt at all: Metal
// has no double, so float64 is CPU only, and Metal's kernels do not yet
// take int8, int16, uint16, uint32 or uint64.
func HasDType(d array.DeviceType, dt array.DType) bool {
	if !dt.Valid() {
		return false
	}
	if d == array.DeviceGPU {
		return dt != array.Float64 && !gpuLacks(dt)
	}
	return true
}

// gpuLacks reports whether dt is one of the integer dtypes Metal's
// kernels do not take yet.
func gpuLacks(dt array.DType) bool {
	switch dt {
	case array.Int8, array.Int16, array.Uint16, array.Uint32, array.Uint64:
		return true
	}
	return false
}

// CheckDTypes returns an *array.Error naming op when device d does not
// compute with one of dts: "uint32 is not supported on the GPU yet", or
// Metal's lack of float64. It returns nil when d has them all.
func CheckDTypes(op string, d array.DeviceType, dts ...array.DType) error {
	for _, dt := range dts {
		switch {
		case !dt.Valid():
			return array.Errorf(op, "invalid dtype %v", dt)
		case d == array.DeviceGPU && dt == array.Float64:
			return array.Errorf(op, "float64 is not supported on the GPU (Metal has no double)")
		case d == array.DeviceGPU && gpuLacks(dt):
			return array.Errorf(op, "%v is not supported on the GPU yet", dt)
		}
	}
	return nil
}
