//go:build fathom_mslharness

package ops_test

import (
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
)

// TestConvWeightGradReferenceOnGPU runs the numpy cases of
// conv_wgrad.json on the GPU device, the MSL harness here: the weight's
// cotangent through convWGradPrim's evalGPU, the plan and the MSL
// kernel. Cases with float64 operands are left out (Metal has no
// float64).
func TestConvWeightGradReferenceOnGPU(t *testing.T) {
	if err := array.SetDefaultDevice(array.GPU); err != nil {
		t.Fatal(err)
	}
	defer array.SetDefaultDevice(array.CPU)
	ran := 0
	for _, c := range loadCases(t, "conv_wgrad.json") {
		if !onGPU(c) {
			continue
		}
		ran++
		t.Run(c.Name, func(t *testing.T) {
			x, g := c.Inputs[0].Build(t), c.Inputs[1].Build(t)
			got := wgradCall(t, c, x, g)
			if err := got.Eval(); err != nil {
				t.Fatal(err)
			}
			if got.Storage().Device() != array.GPU {
				t.Fatalf("result is on %v, not the GPU", got.Storage().Device())
			}
			if got.DType() != array.Float32 {
				checkArray(t, "gpu", got, c.Expected[0])
				return
			}
			tol := arraytest.DefaultTol(array.Float32)
			tol.Atol = max(tol.Atol, 1e-7*float64(g.Size()/g.Shape()[g.Ndim()-1]))
			arraytest.AssertClose(t, c.Expected[0].Build(t), got, tol, "gpu")
		})
	}
	if ran < 8 {
		t.Errorf("only %d cases ran on the GPU", ran)
	}
}
