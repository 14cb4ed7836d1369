//go:build fathom_mslharness

package ops_test

import (
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// TestFastGPUMatchesCPU runs the fast family on the GPU, forward and
// through its gradients (attention's backward kernels, the norms' and
// RoPE's derivatives), and compares them with the CPU.
func TestFastGPUMatchesCPU(t *testing.T) {
	cases := []struct {
		name   string
		shapes [][]int
		f      func(x []*array.Array) *array.Array
	}{
		{"LayerNorm", [][]int{{3, 4, 40}, {40}, {40}}, func(x []*array.Array) *array.Array { return ops.LayerNorm(x[0], x[1], x[2], 1e-5) }},
		{"LayerNorm plain", [][]int{{5, 300}}, func(x []*array.Array) *array.Array { return ops.LayerNorm(x[0], nil, nil, 1e-5) }},
		{"RMSNorm", [][]int{{3, 4, 40}, {40}}, func(x []*array.Array) *array.Array { return ops.RMSNorm(x[0], x[1], 1e-5) }},
		{"RoPE", [][]int{{2, 3, 6, 16}}, func(x []*array.Array) *array.Array { return ops.RoPE(x[0], 16, false, 10000, 1, 4) }},
		{"RoPE traditional", [][]int{{2, 6, 10}}, func(x []*array.Array) *array.Array { return ops.RoPE(x[0], 8, true, 100, 0.5, 0) }},
		{"ScaledDotProductAttention", [][]int{{2, 4, 5, 16}, {2, 2, 7, 16}, {2, 2, 7, 8}}, func(x []*array.Array) *array.Array {
			return ops.ScaledDotProductAttention(x[0], x[1], x[2], 0.25, nil, true)
		}},
		{"ScaledDotProductAttention masked", [][]int{{2, 2, 5, 16}, {2, 2, 7, 16}, {2, 2, 7, 16}, {5, 7}}, func(x []*array.Array) *array.Array {
			return ops.ScaledDotProductAttention(x[0], x[1], x[2], 0.25, x[3], false)
		}},
	}
	for _, dt := range []array.DType{array.Float32, array.Float16, array.BFloat16} {
		for _, c := range cases {
			t.Run(dt.String()+"/"+c.name, func(t *testing.T) {
				gpuMatchesCPU(t, dt, c.shapes, func(x []*array.Array) []*array.Array { return []*array.Array{c.f(x)} })
			})
		}
	}
	for _, c := range cases {
		t.Run("grad/"+c.name, func(t *testing.T) {
			gpuMatchesCPU(t, array.Float32, c.shapes, func(x []*array.Array) []*array.Array {
				loss := func(in ...*array.Array) *array.Array { return ops.Sum(ops.Square(c.f(in))) }
				argnums := make([]int, len(x))
				for i := range argnums {
					argnums[i] = i
				}
				return graph.Grad(loss, argnums...)(x...)
			})
		})
	}
}

// TestFastGPUFloat64IsAnError pins the GPU's refusal of float64.
func TestFastGPUFloat64IsAnError(t *testing.T) {
	if err := array.SetDefaultDevice(array.GPU); err != nil {
		t.Fatal(err)
	}
	defer array.SetDefaultDevice(array.CPU)
	x := ops.Ones([]int{2, 4}, array.Float64)
	for name, y := range map[string]*array.Array{
		"LayerNorm": ops.LayerNorm(x, nil, nil, 1e-5),
		"RoPE":      ops.RoPE(x, 4, false, 10000, 1, 0),
		"ScaledDotProductAttention": ops.ScaledDotProductAttention(ops.Reshape(x, 1, 1, 2, 4), ops.Reshape(x, 1, 1, 2, 4),
			ops.Reshape(x, 1, 1, 2, 4), 1, nil, false),
	} {
		if err := y.Eval(); err == nil {
			t.Errorf("%s of float64 on the GPU: no error", name)
		}
	}
}
