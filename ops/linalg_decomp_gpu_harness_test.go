//go:build fathom_mslharness

package ops_test

import (
	"errors"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// TestLinalgDecompGPUMatchesCPU runs the decompositions on the GPU
// stream, where they run on the host into GPU storage (onHost), with the
// GPU kernels around them (the shift that makes a matrix positive
// definite, the products of the gradients), and compares them with the
// CPU.
func TestLinalgDecompGPUMatchesCPU(t *testing.T) {
	spd := func(a *array.Array) *array.Array {
		n := a.Dim(-1)
		return ops.Add(ops.MatMul(a, ops.SwapAxes(a, -1, -2)), ops.MulScalar(ops.Eye(n, n, 0, a.DType()), float64(n)))
	}
	cases := []struct {
		name   string
		shapes [][]int
		f      func(x []*array.Array) []*array.Array
	}{
		{"Cholesky", [][]int{{2, 4, 4}}, func(x []*array.Array) []*array.Array {
			return []*array.Array{ops.LinalgCholesky(spd(x[0]), false), ops.LinalgCholesky(spd(x[0]), true)}
		}},
		{"CholeskyInv", [][]int{{3, 3}}, func(x []*array.Array) []*array.Array {
			return []*array.Array{ops.LinalgCholeskyInv(ops.LinalgCholesky(spd(x[0]), false), false)}
		}},
		{"QR", [][]int{{2, 5, 3}}, func(x []*array.Array) []*array.Array {
			q, r := ops.LinalgQR(x[0], false)
			qc, rc := ops.LinalgQR(x[0], true)
			return []*array.Array{q, r, qc, rc}
		}},
		{"SVD", [][]int{{3, 5}}, func(x []*array.Array) []*array.Array {
			u, s, vt := ops.LinalgSVD(x[0], true)
			return []*array.Array{u, s, vt, ops.LinalgSVDVals(x[0])}
		}},
		{"Eigh", [][]int{{2, 4, 4}}, func(x []*array.Array) []*array.Array {
			w, v := ops.LinalgEigh(x[0], true)
			return []*array.Array{w, v, ops.LinalgEigvalsh(x[0], false)}
		}},
		{"Eig", [][]int{{4, 4}}, func(x []*array.Array) []*array.Array {
			w, v := ops.LinalgEig(x[0])
			return []*array.Array{w, v, ops.LinalgEigvals(x[0])}
		}},
		{"Cholesky and Eigh gradients", [][]int{{3, 3}}, func(x []*array.Array) []*array.Array {
			loss := func(in ...*array.Array) *array.Array {
				w, _ := ops.LinalgEigh(in[0], false)
				return ops.Add(ops.Sum(ops.LinalgCholesky(spd(in[0]), false)), ops.Sum(w))
			}
			return graph.Grad(loss)(x...)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { gpuMatchesCPU(t, array.Float32, c.shapes, c.f) })
	}
}

// TestLinalgDecompGPUErrors: a failure is the same error on the GPU
// stream as on the CPU's, and float64, which Metal lacks, is an error.
func TestLinalgDecompGPUErrors(t *testing.T) {
	if err := array.SetDefaultDevice(array.GPU); err != nil {
		t.Fatal(err)
	}
	defer array.SetDefaultDevice(array.CPU)
	l := ops.LinalgCholesky(array.FromSlice([]float32{1, 2, 2, 1}, 2, 2), false)
	if err := l.Eval(); !errors.Is(err, cpu.ErrNotPositiveDefinite) {
		t.Errorf("Cholesky of a matrix that is not positive definite on the GPU: %v", err)
	}
	s := ops.LinalgSVDVals(array.FromSlice([]float64{1, 2, 3, 4}, 2, 2))
	if err := s.Eval(); err == nil {
		t.Errorf("float64 SVDVals on the GPU gave %v, want an error", s)
	}
}
