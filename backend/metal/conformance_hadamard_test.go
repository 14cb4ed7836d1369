package metal_test

import (
	"fmt"
	"math/rand"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
)

// Cases of HadamardTransform: line lengths from 1 to the kernel's limit
// of 4096 (more lines than threadgroups for the short ones), on every
// input layout, with values in [-1, 1] so that the sums stay well inside
// every float dtype; and the plan's refusals.

func init() { registerFamily("hadamard", hadamardCases) }

func hadamardCases() []Case {
	unit := func(r *rand.Rand, _ int) float64 { return 2*r.Float64() - 1 }
	var cs []Case
	shapes := []struct {
		shape  []int
		layout Layout
	}{
		{[]int{3, 5, 32}, Contig},
		{[]int{3, 5, 32}, Transposed},
		{[]int{3, 5, 32}, Sliced},
		{[]int{4, 8}, Broadcast},
		{[]int{7, 1}, Contig},
		{[]int{2}, Contig},
		{[]int{}, Contig},
		{[]int{1031, 4}, Contig},
		{[]int{2, 4096}, Sliced},
		{[]int{0, 16}, Contig},
	}
	for _, dt := range floatDTypes {
		for _, s := range shapes {
			for _, scale := range []float64{1, 0.125} {
				cs = append(cs, Case{
					Name: fmt.Sprintf("HadamardTransform/%v/%v/%v/scale=%g", dt, s.shape, s.layout, scale),
					In:   []Operand{Op(dt, s.shape...).With(s.layout).Values(unit)},
					Out:  []Operand{Op(dt, s.shape...)},
					GPU: func(out, in []metal.View) ([]metal.Launch, error) {
						return metal.HadamardTransform(out[0], in[0], scale)
					},
					CPU: func(out, in []cpu.Buf) error { return cpu.HadamardTransform(out[0], in[0], scale) },
				})
			}
		}
	}
	for _, bad := range []struct {
		name string
		in   Operand
		want string
	}{
		{"not a power of two", Op(array.Float32, 2, 12), "not a power of two"},
		{"too long", Op(array.Float32, 8192), "at most 4096"},
		{"integer", Op(array.Int32, 2, 8), "not a float dtype"},
	} {
		cs = append(cs, Case{
			Name:    "HadamardTransform/refused/" + bad.name,
			In:      []Operand{bad.in},
			Out:     []Operand{Op(bad.in.DType, bad.in.Shape...)},
			GPU:     func(out, in []metal.View) ([]metal.Launch, error) { return metal.HadamardTransform(out[0], in[0], 1) },
			WantErr: bad.want,
		})
	}
	return cs
}
