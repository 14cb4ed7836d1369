//go:build fathom_mslharness

package ops_test

import (
	"slices"
	"testing"

	"github.com/fathom-go/fathom/array"
)

// gpuSelectDTypes are the dtypes Metal's sort, scan and elementwise
// kernels take, which the ops of select.json are built from.
var gpuSelectDTypes = []string{"float32", "float16", "bfloat16", "int32", "int64", "uint8", "bool"}

// TestSelectReferenceOnGPU runs the numpy cases of select.json whose
// inputs the GPU takes on the GPU device (the MSL harness here): the
// composed ops run through gpu.go, the plans and the MSL kernels.
func TestSelectReferenceOnGPU(t *testing.T) {
	if err := array.SetDefaultDevice(array.GPU); err != nil {
		t.Fatal(err)
	}
	defer array.SetDefaultDevice(array.CPU)
	runSelectCases(t, func(c refCase) bool {
		for _, in := range c.Inputs {
			if !slices.Contains(gpuSelectDTypes, in.DType) {
				return false
			}
		}
		return true
	})
}
