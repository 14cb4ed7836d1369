package metal_test

import (
	"fmt"
	"math/rand"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
)

// Cases of MatMul: the tiled GEMM on sizes that fill no tile evenly,
// transposed, sliced and broadcast operands and batches, and the two
// GEMVs.

func init() { registerFamily("matmul", matmulCases) }

// unitValues draws floats in [-1, 1): no NaNs or infinities, so sums in
// another order stay close.
func unitValues(r *rand.Rand, _ int) float64 { return 2*r.Float64() - 1 }

func matmulCases() []Case {
	var cs []Case
	shapes := []struct {
		batch   []int
		m, k, n int
		la, lb  Layout
		out     Layout
	}{
		{nil, 37, 29, 45, Contig, Contig, Contig},
		{nil, 70, 33, 65, Transposed, Sliced, Contig},
		{[]int{3}, 5, 17, 9, Broadcast, Contig, Contig},
		{[]int{2}, 64, 16, 64, Contig, Transposed, Contig},
		{nil, 37, 29, 1, Contig, Contig, Contig},          // gemv
		{[]int{2}, 40, 300, 1, Sliced, Broadcast, Contig}, // gemv, batched
		{nil, 1, 29, 45, Contig, Transposed, Contig},      // gemv_t
		{[]int{3}, 1, 7, 300, Broadcast, Sliced, Contig},
		{nil, 1, 1500, 45, Contig, Transposed, Contig},    // gemv_t, K split in parts
		{[]int{2}, 1, 700, 33, Broadcast, Sliced, Contig}, // gemv_t, K split, batched
		{nil, 1, 200000, 3, Contig, Contig, Contig},       // gemv_t, K split in the most parts
		{nil, 3, 0, 4, Contig, Contig, Contig},            // K = 0: zeros
		{nil, 0, 5, 4, Contig, Contig, Contig},
	}
	for _, dt := range lineDTypes {
		for _, s := range shapes {
			a := Op(dt, append(append([]int{}, s.batch...), s.m, s.k)...).With(s.la)
			b := Op(dt, append(append([]int{}, s.batch...), s.k, s.n)...).With(s.lb)
			if dt.IsFloat() {
				a, b = a.Values(unitValues), b.Values(unitValues)
			}
			cs = append(cs, Case{
				Name: fmt.Sprintf("%v/%v/%dx%dx%d/%v@%v->%v", dt, s.batch, s.m, s.k, s.n, s.la, s.lb, s.out),
				In:   []Operand{a, b},
				Out:  []Operand{Op(dt, append(append([]int{}, s.batch...), s.m, s.n)...).With(s.out)},
				GPU:  func(out, in []metal.View) ([]metal.Launch, error) { return metal.MatMul(out[0], in[0], in[1]) },
				CPU:  func(out, in []cpu.Buf) error { return cpu.MatMul(out[0], in[0], in[1]) },
				Tol:  max(1, float64(s.k)/10),
			})
		}
	}
	cs = append(cs, Case{
		Name: "error/complex", In: []Operand{Op(array.Complex64, 3, 4), Op(array.Complex64, 4, 2)}, Out: []Operand{Op(array.Complex64, 3, 2)},
		WantErr: "complex64 is not supported",
		GPU:     func(out, in []metal.View) ([]metal.Launch, error) { return metal.MatMul(out[0], in[0], in[1]) },
	})
	return cs
}
