package metal_test

import (
	"fmt"
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
)

// Cases of Sort, ArgSort and TopK: lines that fit one threadgroup's
// bitonic sort, and longer ones merged in one pass ([1, 2500]) or several
// ([2, 5000], which also merges scratch runs into scratch).

func init() { registerFamily("sort", sortCases) }

func sortCases() []Case {
	var cs []Case
	shapes := []axisShape{
		{OddShape, 2, Contig},
		{OddShape, 2, Sliced},
		{OddShape, 0, Transposed},
		{OddShape, 1, Broadcast},
		{[]int{2, 1031}, 1, Contig},
		{[]int{1, 2500}, 1, Sliced},
		{[]int{2, 5000}, 1, Contig},
		{[]int{5, 0}, 1, Contig},
		{[]int{0, 5}, 1, Contig},
	}
	for _, dt := range lineDTypes {
		for _, s := range shapes {
			n := s.shape[s.axis]
			in := Op(dt, s.shape...).With(s.layout)
			if dt.IsFloat() {
				in = in.Values(fewValues)
			}
			name := fmt.Sprintf("%v/%v/axis%d/%v", dt, s.shape, s.axis, s.layout)
			cs = append(cs, Case{
				Name: "Sort/" + name,
				In:   []Operand{in},
				Out:  []Operand{Op(dt, s.shape...)},
				GPU:  func(out, in []metal.View) ([]metal.Launch, error) { return metal.Sort(out[0], in[0], s.axis) },
				CPU:  func(out, in []cpu.Buf) error { return cpu.Sort(out[0], in[0], s.axis) },
			}, Case{
				Name: "ArgSort/" + name,
				In:   []Operand{in},
				Out:  []Operand{Op(array.Int32, s.shape...)},
				GPU:  func(out, in []metal.View) ([]metal.Launch, error) { return metal.ArgSort(out[0], in[0], s.axis) },
				CPU:  func(out, in []cpu.Buf) error { return cpu.ArgSort(out[0], in[0], s.axis) },
			})
			for _, k := range slices.Compact([]int{min(n, 1), min(n, 5), n}) {
				oshape := append([]int{}, s.shape...)
				oshape[s.axis] = k
				cs = append(cs, Case{
					Name: fmt.Sprintf("TopK/k=%d/%s", k, name),
					In:   []Operand{in},
					Out:  []Operand{Op(dt, oshape...)},
					GPU: func(out, in []metal.View) ([]metal.Launch, error) {
						return metal.TopK(out[0], in[0], s.axis, k)
					},
					CPU: func(out, in []cpu.Buf) error { return cpu.TopK(out[0], in[0], s.axis, k) },
				})
			}
		}
	}
	cs = append(cs, Case{
		Name: "error/complex", In: []Operand{Op(array.Complex64, 3, 4)}, Out: []Operand{Op(array.Complex64, 3, 4)}, WantErr: "complex64",
		GPU: func(out, in []metal.View) ([]metal.Launch, error) { return metal.Sort(out[0], in[0], 1) },
	})
	return cs
}
