//go:build fathom_mslharness

package ops_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// TestLinalgSolveGPUMatchesCPU runs the solvers and the LU factorisation
// on the GPU stream, where they run on the host into GPU storage
// (onHost), together with the GPU kernels around them (the shift, the
// gather of LUSolve, the products of the gradients), and compares them
// with the CPU.
func TestLinalgSolveGPUMatchesCPU(t *testing.T) {
	well := func(a *array.Array) *array.Array {
		n := a.Dim(-1)
		return ops.Add(a, ops.MulScalar(ops.Eye(n, n, 0, a.DType()), float64(3*n)))
	}
	cases := []struct {
		name   string
		shapes [][]int
		f      func(x []*array.Array) []*array.Array
	}{
		{"Inv", [][]int{{2, 4, 4}}, func(x []*array.Array) []*array.Array {
			return []*array.Array{ops.LinalgInv(well(x[0]))}
		}},
		{"Solve broadcast", [][]int{{3, 3}, {2, 3, 2}}, func(x []*array.Array) []*array.Array {
			return []*array.Array{ops.LinalgSolve(well(x[0]), x[1])}
		}},
		{"SolveTriangular", [][]int{{4, 4}, {4}}, func(x []*array.Array) []*array.Array {
			return []*array.Array{ops.LinalgSolveTriangular(well(x[0]), x[1], true, false)}
		}},
		{"LUFactor", [][]int{{2, 3, 5}}, func(x []*array.Array) []*array.Array {
			lu, piv, rows := ops.LinalgLUFactor(x[0])
			return []*array.Array{lu, piv, rows}
		}},
		{"LUSolve", [][]int{{4, 4}, {4, 3}}, func(x []*array.Array) []*array.Array {
			lu, piv, _ := ops.LinalgLUFactor(well(x[0]))
			return []*array.Array{ops.LinalgLUSolve(lu, piv, x[1])}
		}},
		{"Solve gradient", [][]int{{3, 3}, {3}}, func(x []*array.Array) []*array.Array {
			loss := func(in ...*array.Array) *array.Array { return ops.Sum(ops.LinalgSolve(well(in[0]), in[1])) }
			return graph.Grad(loss, 0, 1)(x...)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { gpuMatchesCPU(t, array.Float32, c.shapes, c.f) })
	}
}

// TestLinalgSolveGPUSingular: a singular matrix is the same error on the
// GPU stream as on the CPU's.
func TestLinalgSolveGPUSingular(t *testing.T) {
	if err := array.SetDefaultDevice(array.GPU); err != nil {
		t.Fatal(err)
	}
	defer array.SetDefaultDevice(array.CPU)
	x := ops.LinalgInv(array.FromSlice([]float32{1, 2, 2, 4}, 2, 2))
	if err := x.Eval(); !errors.Is(err, cpu.ErrSingular) {
		t.Errorf("Inv of a singular matrix on the GPU: %v, want ErrSingular", err)
	}
	// float64 is refused on the GPU, as by every GPU kernel.
	err := ops.LinalgInv(array.FromSlice([]float64{1, 0, 0, 1}, 2, 2)).Eval()
	if err == nil || !strings.Contains(err.Error(), "ops.LinalgInv") || !strings.Contains(err.Error(), "float64") {
		t.Errorf("Inv of float64 on the GPU: %v, want an error naming ops.LinalgInv and float64", err)
	}
}
