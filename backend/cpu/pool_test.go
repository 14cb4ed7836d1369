package cpu

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
)

// The pooling kernels are checked against numpy through ops' reference
// cases (ops/testdata/gen_pool.py); these tests cover what ops does not
// reach: the kernels' own dtype errors, strided, offset and 16-bit inputs
// handed to them directly, and the serial path of an overlapping scatter.

func TestMaxPoolKernelStridedInt(t *testing.T) {
	// x is (1, 5, 1) of int16, every other element of a buffer, from offset 1
	data := []int16{99, 3, 99, 7, 99, -2, 99, 7, 99, 1}
	x := viewOf(data, array.Int16, []int{1, 5, 1}, []int{10, 2, 1}, 1)
	got, out := newOut[int16](array.Int16, 99, 1, 3, 1)
	if err := MaxPool(out, x, Pool{Kernel: []int{2}, Stride: []int{2}, Pad: []int{1}}); err != nil {
		t.Fatal(err)
	}
	// windows [-1,0], [1,2], [3,4] of 3 7 -2 7 1; padding never wins
	if want := []int16{3, 7, 7}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestAvgPoolKernelFloat16(t *testing.T) {
	in := []array.F16{array.NewF16(1), array.NewF16(2), array.NewF16(4), array.NewF16(8)}
	x := viewOf(in, array.Float16, []int{1, 2, 2, 1}, nil, 0)
	got, out := newOut[array.F16](array.Float16, 0, 1, 1, 1, 1)
	if err := AvgPool(out, x, Pool{Kernel: []int{2, 2}, Stride: []int{2, 2}, Pad: []int{0, 0}}); err != nil {
		t.Fatal(err)
	}
	if got[0].Float32() != 3.75 {
		t.Errorf("got %v, want 3.75", got[0])
	}
}

func TestMaxPoolScatterOverlappingSerial(t *testing.T) {
	// one image: the overlapping scatter runs it on one worker, adding
	// the windows' gradients where they share a maximum (first on ties)
	x := viewOf([]float64{1, 5, 5, 2, 0}, array.Float64, []int{1, 5, 1}, nil, 0)
	dy := viewOf([]float64{1, 10, 100, 1000}, array.Float64, []int{1, 4, 1}, nil, 0)
	got, dx := newOut[float64](array.Float64, -1, 1, 5, 1)
	if err := MaxPoolScatter(dx, x, dy, Pool{Kernel: []int{2}, Stride: []int{1}, Pad: []int{0}}); err != nil {
		t.Fatal(err)
	}
	// windows [1 5] [5 5] [5 2] [2 0]: maxima at 1, 1 (first of the tie), 2, 3
	if want := []float64{0, 11, 100, 1000, 0}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestPoolKernelDTypeErrors(t *testing.T) {
	p := Pool{Kernel: []int{1}, Stride: []int{1}, Pad: []int{0}}
	b := viewOf([]bool{true}, array.Bool, []int{1, 1, 1}, nil, 0)
	i := viewOf([]int32{1}, array.Int32, []int{1, 1, 1}, nil, 0)
	f := viewOf([]float32{1}, array.Float32, []int{1, 1, 1}, nil, 0)
	for name, err := range map[string]error{
		"cpu.MaxPool":        MaxPool(b, b, p),
		"cpu.AvgPool":        AvgPool(i, i, p),
		"cpu.AvgPoolGrad":    AvgPoolGrad(i, i, p),
		"cpu.MaxPoolGather":  MaxPoolGather(f, f, i, p),
		"cpu.MaxPoolScatter": MaxPoolScatter(i, i, i, p),
	} {
		var ae *array.Error
		if !errors.As(err, &ae) || ae.Op != name || !strings.Contains(err.Error(), "dtype") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestPoolScatterTiled checks the path where windows tile the input and
// the backward writes each window rather than adding to a cleared dx: no
// element may keep the marker newOut fills with.
func TestPoolScatterTiled(t *testing.T) {
	p := Pool{Kernel: []int{2}, Stride: []int{2}, Pad: []int{1}}
	x := viewOf([]float32{1, 3, 2, 0, 4, 4}, array.Float32, []int{1, 6, 1}, nil, 0)
	dy := viewOf([]float32{10, 20, 30, 40}, array.Float32, []int{1, 4, 1}, nil, 0)
	got, dx := newOut[float32](array.Float32, -1, 1, 6, 1)
	if err := MaxPoolScatter(dx, x, dy, p); err != nil {
		t.Fatal(err)
	}
	// windows [pad 1] [3 2] [0 4] [4 pad]
	if want := []float32{10, 20, 0, 0, 30, 40}; !slices.Equal(got, want) {
		t.Errorf("MaxPoolScatter: got %v, want %v", got, want)
	}
	got, dx = newOut[float32](array.Float32, -1, 1, 6, 1)
	if err := AvgPoolGrad(dx, dy, p); err != nil {
		t.Fatal(err)
	}
	if want := []float32{5, 10, 10, 15, 15, 20}; !slices.Equal(got, want) {
		t.Errorf("AvgPoolGrad: got %v, want %v", got, want)
	}
}
