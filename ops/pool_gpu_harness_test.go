//go:build fathom_mslharness

package ops_test

import (
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// TestPoolGPUMatchesCPU runs max and average pooling on the GPU, forward,
// through their gradients (AvgPoolGrad and MaxPoolScatter) and their
// forward derivatives (MaxPoolGather), and compares them with the CPU.
func TestPoolGPUMatchesCPU(t *testing.T) {
	cases := []struct {
		name  string
		shape []int
		f     func(x *array.Array) *array.Array
	}{
		{"MaxPool1D", []int{2, 11, 3}, func(x *array.Array) *array.Array { return ops.MaxPool1D(x, 3, 2, 1) }},
		{"MaxPool2D", []int{2, 6, 6, 4}, func(x *array.Array) *array.Array {
			return ops.MaxPool2D(x, [2]int{2, 2}, [2]int{2, 2}, [2]int{0, 0})
		}},
		{"MaxPool2D overlapping", []int{1, 5, 7, 3}, func(x *array.Array) *array.Array {
			return ops.MaxPool2D(x, [2]int{3, 3}, [2]int{1, 2}, [2]int{1, 1})
		}},
		{"MaxPool3D", []int{1, 4, 3, 4, 2}, func(x *array.Array) *array.Array {
			return ops.MaxPool3D(x, [3]int{2, 2, 2}, [3]int{1, 1, 2}, [3]int{1, 0, 1})
		}},
		{"AvgPool1D", []int{2, 9, 3}, func(x *array.Array) *array.Array { return ops.AvgPool1D(x, 3, 2, 1) }},
		{"AvgPool2D", []int{2, 6, 5, 3}, func(x *array.Array) *array.Array {
			return ops.AvgPool2D(x, [2]int{3, 2}, [2]int{2, 1}, [2]int{1, 1})
		}},
		{"AvgPool3D", []int{1, 4, 4, 3, 2}, func(x *array.Array) *array.Array {
			return ops.AvgPool3D(x, [3]int{2, 2, 2}, [3]int{2, 2, 1}, [3]int{0, 1, 1})
		}},
	}
	for _, dt := range []array.DType{array.Float32, array.Float16, array.BFloat16} {
		for _, c := range cases {
			t.Run(dt.String()+"/"+c.name, func(t *testing.T) {
				gpuMatchesCPU(t, dt, [][]int{c.shape}, func(x []*array.Array) []*array.Array { return []*array.Array{c.f(x[0])} })
			})
		}
	}
	for _, c := range cases {
		t.Run("grad/"+c.name, func(t *testing.T) {
			gpuMatchesCPU(t, array.Float32, [][]int{c.shape, c.shape}, func(x []*array.Array) []*array.Array {
				f := func(in ...*array.Array) []*array.Array { return []*array.Array{c.f(in[0])} }
				_, jvps := graph.JVP(f, x[:1], x[1:])
				loss := func(in ...*array.Array) *array.Array { return ops.Sum(ops.Square(c.f(in[0]))) }
				return append(graph.Grad(loss)(x[0]), jvps[0])
			})
		})
	}
	t.Run("MaxPool2D int32", func(t *testing.T) {
		gpuMatchesCPU(t, array.Int32, [][]int{{2, 5, 5, 3}}, func(x []*array.Array) []*array.Array {
			return []*array.Array{ops.MaxPool2D(ops.MulScalar(x[0], 10), [2]int{2, 3}, [2]int{2, 2}, [2]int{1, 1})}
		})
	})
}
