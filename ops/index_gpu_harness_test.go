//go:build fathom_mslharness

package ops_test

import (
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// TestIndexReferenceOnGPU runs the numpy table of Index, At, Gather,
// Scatter and TakeFlat (testdata/index.json) on the GPU device, through
// the MSL harness, on every input layout: every case but those of
// float64, which Metal lacks.
func TestIndexReferenceOnGPU(t *testing.T) {
	defer array.SetDefaultDevice(array.CPU)
	n := 0
	for _, c := range loadCases(t, "index.json") {
		if strings.Contains(c.Name, "float64") {
			continue
		}
		n++
		for _, l := range refLayouts {
			// The layouts are made on the CPU: only the op under test
			// runs on the GPU.
			if err := array.SetDefaultDevice(array.CPU); err != nil {
				t.Fatal(err)
			}
			ins := make([]*array.Array, len(c.Inputs))
			for i, r := range c.Inputs {
				ins[i] = l.of(r.Build(t))
			}
			if err := array.Eval(ins...); err != nil {
				t.Fatal(err)
			}
			if err := array.SetDefaultDevice(array.GPU); err != nil {
				t.Fatal(err)
			}
			got := indexRunCase(t, c, ins)
			if err := array.Eval(got); err != nil {
				t.Fatalf("%s (%s): %v", c.Name, l.name, err)
			}
			// Index with only an Ellipsis returns its input, made on the CPU.
			if got != ins[0] && got.Stream().Device != array.GPU {
				t.Fatalf("%s: result on %v, not the GPU", c.Name, got.Stream().Device)
			}
			checkArray(t, c.Name+" ("+l.name+")", got, c.Expected[0])
		}
	}
	if n < 400 {
		t.Errorf("only %d cases ran", n)
	}
}

// TestIndexOutOfRangeOnGPU checks that an index out of range on the GPU
// is the CPU's *array.Error, naming the axis of the index array that
// holds it when there are several.
func TestIndexOutOfRangeOnGPU(t *testing.T) {
	defer array.SetDefaultDevice(array.CPU)
	a := ops.Reshape(ops.Arange(0, 12, 1, array.Float32), 3, 4)
	good := array.FromSlice([]int64{0, -1}, 2)
	bad := array.FromSlice([]int16{1, -5}, 2)
	for name, f := range map[string]func() *array.Array{
		"Index second array": func() *array.Array { return ops.Index(a, good, bad) },
		"Gather":             func() *array.Array { return ops.Gather(a, []*array.Array{bad}, []int{1}, []int{3, 1}) },
		"At.Add":             func() *array.Array { return ops.At(a, bad).Add(ops.Ones([]int{4}, array.Float32)) },
		"ScatterMax": func() *array.Array {
			return ops.ScatterMax(a, []*array.Array{good, bad}, ops.Zeros([]int{2, 1, 1}, array.Float32), []int{0, 1})
		},
		"Scatter": func() *array.Array {
			return ops.Scatter(a, []*array.Array{bad}, ops.Zeros([]int{2, 1, 4}, array.Float32), []int{0})
		},
	} {
		var errs [2]error
		for k, dev := range []array.Device{array.CPU, array.GPU} {
			if err := array.SetDefaultDevice(dev); err != nil {
				t.Fatal(err)
			}
			errs[k] = array.Eval(f())
		}
		if errs[0] == nil || errs[1] == nil || errs[0].Error() != errs[1].Error() {
			t.Errorf("%s: CPU error %v, GPU error %v", name, errs[0], errs[1])
		}
		if _, ok := errs[1].(*array.Error); !ok {
			t.Errorf("%s: GPU error %T is not an *array.Error", name, errs[1])
		}
	}
}
