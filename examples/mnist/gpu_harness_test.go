//go:build fathom_mslharness

package main

import (
	"math"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/backend/metal/mslharness"
	"github.com/fathom-go/fathom/nn"
)

// With the fathom_mslharness tag the GPU device runs on the CPU through
// the MSL harness.
func TestMain(m *testing.M) { mslharness.Main(m) }

// TestTrainOnGPU runs a few training steps of each model with the GPU the
// default device, as FATHOM_DEVICE=gpu does, and compares the parameters,
// the losses and the test accuracy with the same steps on the CPU.
func TestTrainOnGPU(t *testing.T) {
	for _, args := range [][]string{
		{"-model", "mlp", "-hidden", "32", "-batch", "32", "-train-subset", "256", "-test-subset", "100", "-steps", "10"},
		{"-model", "cnn", "-batch", "16", "-train-subset", "64", "-test-subset", "50", "-steps", "5"},
	} {
		cpu := trainForTest(t, args...)
		if err := array.SetDefaultDevice(array.GPU); err != nil {
			t.Fatal(err)
		}
		gpu := trainForTest(t, args...)
		if err := array.SetDefaultDevice(array.CPU); err != nil {
			t.Fatal(err)
		}
		name := args[1]
		for k, p := range nn.Parameters(gpu.model) {
			if p.Stream().Device != array.GPU {
				t.Errorf("%s: %s is on %v", name, k, p.Stream().Device)
			}
		}
		// rounding may flip one close call, not more
		if d := math.Abs(cpu.accuracy()-gpu.accuracy()) * float64(cpu.test.size()); math.Round(d) > 1 {
			t.Errorf("%s: test accuracy %v on the GPU, %v on the CPU", name, gpu.accuracy(), cpu.accuracy())
		}
		for i, want := range cpu.prog.Loss {
			if got := gpu.prog.Loss[i]; math.Abs(got-want) > 1e-4*(1+math.Abs(want)) {
				t.Errorf("%s: step %d's loss is %v on the GPU, %v on the CPU", name, i+1, got, want)
			}
		}
		want := nn.Parameters(cpu.model)
		for k, p := range nn.Parameters(gpu.model) {
			arraytest.AssertClose(t, want[k], p, arraytest.Tol{Rtol: 1e-4, Atol: 1e-5}, "%s %s on the GPU", name, k)
		}
	}
}
