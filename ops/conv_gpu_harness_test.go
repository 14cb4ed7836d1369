//go:build fathom_mslharness

package ops_test

import (
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// TestConvGPUMatchesCPU runs the convolutions of the public API on the
// GPU, forward and through their gradients (convolutions with input
// dilation, flipped kernels and negative padding), and compares them with
// the CPU.
func TestConvGPUMatchesCPU(t *testing.T) {
	cases := []struct {
		name   string
		shapes [][]int
		f      func(x []*array.Array) *array.Array
	}{
		{"Conv1D", [][]int{{2, 9, 3}, {5, 3, 3}}, func(x []*array.Array) *array.Array { return ops.Conv1D(x[0], x[1], 2, 1, 1, 1) }},
		{"Conv2D", [][]int{{2, 6, 5, 4}, {20, 3, 3, 4}}, func(x []*array.Array) *array.Array {
			return ops.Conv2D(x[0], x[1], [2]int{1, 2}, [2]int{1, 1}, [2]int{1, 1}, 1)
		}},
		{"Conv2D groups dilated", [][]int{{1, 7, 7, 4}, {32, 2, 3, 2}}, func(x []*array.Array) *array.Array {
			return ops.Conv2D(x[0], x[1], [2]int{1, 1}, [2]int{2, 1}, [2]int{2, 2}, 2)
		}},
		{"Conv2D depthwise", [][]int{{2, 6, 6, 5}, {5, 3, 3, 1}}, func(x []*array.Array) *array.Array {
			return ops.Conv2D(x[0], x[1], [2]int{2, 2}, [2]int{1, 1}, [2]int{1, 1}, 5)
		}},
		{"Conv3D", [][]int{{1, 4, 4, 3, 2}, {17, 2, 2, 2, 2}}, func(x []*array.Array) *array.Array {
			return ops.Conv3D(x[0], x[1], [3]int{1, 1, 1}, [3]int{1, 0, 1}, [3]int{1, 1, 1}, 1)
		}},
		{"ConvTranspose2D", [][]int{{1, 4, 3, 6}, {16, 3, 3, 6}}, func(x []*array.Array) *array.Array {
			return ops.ConvTranspose2D(x[0], x[1], [2]int{2, 2}, [2]int{1, 0}, [2]int{1, 1}, [2]int{1, 0}, 1)
		}},
		{"ConvGeneral dilations flip", [][]int{{1, 8, 7, 3}, {4, 2, 2, 3}}, func(x []*array.Array) *array.Array {
			return ops.ConvGeneral(x[0], x[1], []int{1, 2}, []int{0, 1}, []int{2, 0}, []int{2, 1}, []int{1, 2}, 1, true)
		}},
		{"Conv2D of a transposed input", [][]int{{2, 5, 6, 3}, {16, 3, 3, 3}}, func(x []*array.Array) *array.Array {
			xt := ops.Transpose(ops.Transpose(x[0], 0, 2, 1, 3), 0, 2, 1, 3)
			return ops.Conv2D(ops.Transpose(ops.Copy(ops.Transpose(xt, 3, 1, 2, 0)), 3, 1, 2, 0), x[1], [2]int{1, 1}, [2]int{1, 1}, [2]int{1, 1}, 1)
		}},
	}
	for _, dt := range []array.DType{array.Float32, array.Float16, array.BFloat16} {
		for _, c := range cases {
			t.Run(dt.String()+"/"+c.name, func(t *testing.T) {
				gpuMatchesCPU(t, dt, c.shapes, func(x []*array.Array) []*array.Array { return []*array.Array{c.f(x)} })
			})
		}
	}
	t.Run("compiled and vmapped", func(t *testing.T) {
		// A compiled function runs the convolution as its own primitive
		// between fused programs; Vmap over a batch of weights runs one
		// convolution per weight.
		f := compile.Compile(func(in ...*array.Array) []*array.Array {
			y := ops.Conv2D(in[0], in[1], [2]int{1, 1}, [2]int{1, 1}, [2]int{1, 1}, 1)
			return []*array.Array{ops.MaximumScalar(ops.MulScalar(y, 0.5), 0)}
		})
		defer f.Release()
		conv := func(in ...*array.Array) []*array.Array {
			return []*array.Array{ops.Conv1D(in[0], in[1], 1, 1, 1, 1)}
		}
		gpuMatchesCPU(t, array.Float32, [][]int{{2, 5, 5, 3}, {16, 3, 3, 3}, {2, 7, 3}, {4, 16, 2, 3}},
			func(x []*array.Array) []*array.Array {
				return append(f.Call(x[0], x[1]), graph.Vmap(conv, []int{graph.NoAxis, 0}, []int{0})(x[2], x[3])...)
			})
	})
	for _, c := range cases {
		t.Run("grad/"+c.name, func(t *testing.T) {
			gpuMatchesCPU(t, array.Float32, c.shapes, func(x []*array.Array) []*array.Array {
				loss := func(in ...*array.Array) *array.Array { return ops.Sum(ops.Square(c.f(in))) }
				return graph.Grad(loss, 0, 1)(x...)
			})
		})
	}
}
