//go:build fathom_mslharness

package ops_test

import (
	"testing"

	"github.com/fathom-go/fathom/array"
)

// TestElementwiseReferenceOnGPU runs the numpy cases of
// elementwise_more.json (the elementwise ops of issue 19, the complex
// parts and the weak-scalar forms) on the GPU device, the MSL harness
// here: the ops, their compositions, the plans and the MSL kernels end to
// end. Cases with float64 operands are left out (Metal has no float64).
func TestElementwiseReferenceOnGPU(t *testing.T) {
	if err := array.SetDefaultDevice(array.GPU); err != nil {
		t.Fatal(err)
	}
	defer array.SetDefaultDevice(array.CPU)
	ran := 0
	for _, c := range loadCases(t, "elementwise_more.json") {
		if !onGPU(c) {
			continue
		}
		ran++
		checkResults(t, c.Name, elementwiseResults(t, c, caseInputs(t, c)), c.Expected)
	}
	if ran < 1000 {
		t.Errorf("only %d cases ran on the GPU", ran)
	}
}

// onGPU reports whether a case's operands and results are all of dtypes
// the GPU computes with.
func onGPU(c refCase) bool {
	for _, rs := range [][]refArray{c.Inputs, c.Expected} {
		for _, r := range rs {
			if r.DType == "float64" {
				return false
			}
		}
	}
	return true
}
