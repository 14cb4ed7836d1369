//go:build fathom_mslharness

package ops_test

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/ops"
)

// gpuDTypeNames are the dtypes the GPU's kernels take.
var gpuDTypeNames = map[string]bool{"bool": true, "uint8": true, "int32": true, "int64": true, "float16": true,
	"bfloat16": true, "float32": true, "complex64": true}

// TestShapeOpsReferenceOnGPU runs shapeops.json with the GPU (the MSL
// harness) as the default device, so Roll's Concatenate, PadMode's Take,
// HadamardTransform's kernel and the creation kernels run through their
// evalGPU, on every layout; cases with a dtype the GPU lacks are left to
// the CPU test.
func TestShapeOpsReferenceOnGPU(t *testing.T) {
	if err := array.SetDefaultDevice(array.GPU); err != nil {
		t.Fatal(err)
	}
	defer array.SetDefaultDevice(array.CPU)
	ran := map[string]int{}
	for _, c := range loadCases(t, "shapeops.json") {
		ok := true
		for _, r := range append(append([]refArray{}, c.Inputs...), c.Expected...) {
			ok = ok && gpuDTypeNames[r.DType]
		}
		var dt string
		if c.Param(t, "dtype", &dt) {
			ok = ok && gpuDTypeNames[dt]
		}
		if !ok {
			continue
		}
		ran[c.Op]++
		t.Run(c.Op, func(t *testing.T) { shapeOpsCheck(t, c) })
	}
	for _, op := range shapeOpsWant {
		if ran[op] == 0 {
			t.Errorf("no case of %s ran on the GPU", op)
		}
	}
	if got := ops.HadamardTransform(ops.Zeros([]int{4}, array.Float32)); got.Stream().Device != array.GPU {
		t.Errorf("HadamardTransform was recorded on %v, want the GPU", got.Stream().Device)
	}
}

// TestHadamardTransformLongLinesOnGPU compares the GPU with the CPU for
// lines longer than the kernel's limit, which the GPU transforms as rows
// then columns of a matrix, and checks that float64, which Metal lacks,
// is an error from Eval.
func TestHadamardTransformLongLinesOnGPU(t *testing.T) {
	defer array.SetDefaultDevice(array.CPU)
	for _, c := range []struct {
		shape []int
		dt    array.DType
	}{
		{[]int{2, 8192}, array.Float32},
		{[]int{1 << 14}, array.Float32},
		{[]int{3, 1 << 13}, array.Float16},
		{[]int{2, 4096}, array.BFloat16},
	} {
		n := 1
		for _, d := range c.shape {
			n *= d
		}
		run := func(dev array.Device) *array.Array {
			if err := array.SetDefaultDevice(dev); err != nil {
				t.Fatal(err)
			}
			x := ops.AsType(array.FromSlice(harnessData(n, 3), c.shape...), c.dt)
			y := ops.AsType(ops.HadamardTransform(x, 0.01), array.Float32)
			if err := y.Eval(); err != nil {
				t.Fatalf("%v %v on %v: %v", c.shape, c.dt, dev, err)
			}
			return y
		}
		want, got := run(array.CPU), run(array.GPU)
		tol := arraytest.DefaultTol(c.dt)
		// The GPU rounds a 16-bit line between its two passes.
		if d := cmp.Diff(want, got, arraytest.Approx(4*tol.Rtol, 4*tol.Atol+1e-4)); d != "" {
			t.Errorf("%v %v: GPU differs from CPU (-CPU +GPU):\n%s", c.shape, c.dt, d)
		}
	}
	if err := array.SetDefaultDevice(array.GPU); err != nil {
		t.Fatal(err)
	}
	// Lines of 16 are 16·√8192 ≈ 1448 after the transform, well inside
	// float16, though an unscaled rows pass would reach 65536.
	sixteens := make([]array.F16, 8192)
	for i := range sixteens {
		sixteens[i] = array.NewF16(16)
	}
	ones, err := array.ToSlice[float32](ops.AsType(ops.HadamardTransform(array.FromSlice(sixteens)), array.Float32))
	if err != nil {
		t.Fatal(err)
	}
	if want := float32(16 * math.Sqrt(8192)); math.Abs(float64(ones[0]-want)) > 2e-3*float64(want) || ones[1] != 0 {
		t.Errorf("float16 ones·16 of length 8192: %v, %v, ...; want %v, 0, ...", ones[0], ones[1], want)
	}
	err = ops.HadamardTransform(ops.Zeros([]int{4}, array.Float64)).Eval()
	if err == nil {
		t.Error("float64 HadamardTransform on the GPU: no error")
	}
}
