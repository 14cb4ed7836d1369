package metal_test

import (
	"fmt"
	"math/rand"
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/internal/strided"
)

// Cases of ConvWeightGrad: every parameter of the convolution (strides,
// per-side and negative padding, kernel and input dilation, groups and
// depthwise, flip) over 1 to 3 spatial axes, several tiles of output
// channels and patch columns, more rows than one step of the kernel's
// loop, rows split in parts (conv_wgrad_part and conv_wgrad_sum), every
// float dtype, and strided inputs and outputs. Values lie in
// [-1, 1], as for Conv.

func init() { registerFamily("conv_wgrad", wgradCases) }

// wgradGeom is a weight-gradient problem: the convolution's input and
// weight shapes and its parameters.
type wgradGeom struct {
	name string
	x, w []int
	p    metal.ConvParams
}

// cot returns the shape of the convolution's output, g's shape.
func (g wgradGeom) cot() []int {
	d := len(g.x) - 2
	out := []int{g.x[0]}
	for i := range d {
		span := (g.x[1+i]-1)*g.p.InputDilation[i] + 1 + g.p.PadLo[i] + g.p.PadHi[i] - (g.w[1+i]-1)*g.p.KernelDilation[i]
		out = append(out, (span-1)/g.p.Stride[i]+1)
	}
	return append(out, g.w[0])
}

// wgp builds parameters for d spatial axes from one value per field, the
// same on every axis.
func wgp(d, stride, lo, hi, kdil, idil, groups int, flip bool) metal.ConvParams {
	rep := func(v int) []int { return slices.Repeat([]int{v}, d) }
	return metal.ConvParams{Stride: rep(stride), PadLo: rep(lo), PadHi: rep(hi), KernelDilation: rep(kdil), InputDilation: rep(idil), Groups: groups, Flip: flip}
}

var wgradGeoms = []wgradGeom{
	{"1d", []int{2, 9, 3}, []int{5, 3, 3}, wgp(1, 1, 1, 1, 1, 1, 1, false)},
	{"1d/stride2", []int{2, 37, 5}, []int{20, 4, 5}, wgp(1, 2, 2, 1, 1, 1, 1, false)},
	{"2d/pad1", []int{2, 7, 6, 9}, []int{18, 3, 3, 9}, wgp(2, 1, 1, 1, 1, 1, 1, false)},
	{"2d/tiles", []int{1, 5, 4, 40}, []int{70, 2, 2, 40}, wgp(2, 1, 0, 1, 1, 1, 1, false)},
	{"2d/groups", []int{1, 6, 5, 8}, []int{32, 3, 2, 4}, wgp(2, 1, 1, 0, 1, 1, 2, false)},
	{"2d/dilated", []int{1, 9, 8, 4}, []int{16, 3, 3, 4}, wgp(2, 2, 1, 2, 2, 1, 1, false)},
	{"2d/input-dilation-flip", []int{2, 4, 5, 3}, []int{17, 3, 2, 3}, wgp(2, 1, 2, 1, 1, 2, 1, true)},
	{"2d/crop", []int{1, 9, 10, 5}, []int{16, 2, 3, 5}, wgp(2, 1, -1, -2, 1, 1, 1, false)},
	{"2d/depthwise", []int{2, 7, 8, 6}, []int{6, 3, 3, 1}, wgp(2, 1, 1, 1, 1, 1, 6, false)},
	{"2d/everything", []int{1, 5, 6, 6}, []int{6, 2, 3, 2}, wgp(2, 2, 2, -1, 2, 2, 3, true)},
	{"3d", []int{1, 4, 5, 3, 3}, []int{16, 2, 3, 2, 3}, wgp(3, 1, 1, 0, 1, 1, 1, false)},
	{"3d/flip-dilated", []int{2, 5, 4, 4, 2}, []int{3, 2, 2, 2, 2}, wgp(3, 2, 1, 1, 2, 1, 1, true)},
	{"2d/rows-in-parts", []int{2, 30, 30, 3}, []int{4, 3, 3, 3}, wgp(2, 1, 1, 1, 1, 1, 1, false)},
	{"1d/rows-in-parts-groups-flip", []int{3, 2000, 4}, []int{4, 5, 2}, wgp(1, 2, 2, 1, 1, 1, 2, true)},
	{"empty-batch", []int{0, 5, 3}, []int{4, 3, 3}, wgp(1, 1, 0, 0, 1, 1, 1, false)},
	{"no-input-channels", []int{2, 5, 0}, []int{4, 3, 0}, wgp(1, 1, 1, 1, 1, 1, 1, false)},
}

func wgradCases() []Case {
	unit := func(r *rand.Rand, _ int) float64 { return 2*r.Float64() - 1 }
	var cs []Case
	for _, dt := range floatDTypes {
		for _, g := range wgradGeoms {
			layouts := [][3]Layout{{Contig, Contig, Contig}}
			if dt == array.Float32 {
				layouts = append(layouts, [3]Layout{Transposed, Sliced, Contig}, [3]Layout{Sliced, Transposed, Sliced}, [3]Layout{Broadcast, Contig, Transposed})
			}
			cp := cpu.ConvParams(g.p)
			// Each element is a sum over the rows of g, in another order
			// on each backend: the tolerance grows with them, as MatMul's
			// does with K.
			cot := g.cot()
			rows := 1
			for _, v := range cot[:len(cot)-1] {
				rows *= v
			}
			for _, l := range layouts {
				cs = append(cs, Case{
					Name: fmt.Sprintf("ConvWeightGrad/%v/%s/%v-%v-%v", dt, g.name, l[0], l[1], l[2]),
					In:   []Operand{Op(dt, g.x...).With(l[0]).Values(unit), Op(dt, cot...).With(l[1]).Values(unit)},
					Out:  []Operand{Op(dt, g.w...).With(l[2])},
					GPU: func(out, in []metal.View) ([]metal.Launch, error) {
						return metal.ConvWeightGrad(out[0], in[0], in[1], g.p)
					},
					CPU: func(out, in []cpu.Buf) error {
						if l[2] == Contig {
							return cpu.ConvWeightGrad(out[0], in[0], in[1], cp)
						}
						return wgradRowMajor(out[0], func(o cpu.Buf) error { return cpu.ConvWeightGrad(o, in[0], in[1], cp) })
					},
					Tol: max(4, float64(rows)/10),
				})
			}
		}
	}
	for _, bad := range []struct {
		name  string
		x, g  Operand
		w     []int
		p     metal.ConvParams
		want  string
		dtype array.DType
	}{
		{"integer", Op(array.Int32, 1, 5, 2), Op(array.Int32, 1, 3, 2), []int{2, 3, 2}, wgp(1, 1, 0, 0, 1, 1, 1, false), "convolution is for floats", array.Int32},
		{"float64", Op(array.Float64, 1, 5, 2), Op(array.Float64, 1, 3, 2), []int{2, 3, 2}, wgp(1, 1, 0, 0, 1, 1, 1, false), "float64 is not supported", array.Float64},
		{"groups", Op(array.Float32, 1, 5, 3), Op(array.Float32, 1, 3, 2), []int{2, 3, 3}, wgp(1, 1, 0, 0, 1, 1, 2, false), "do not fit 2 groups", array.Float32},
		{"cotangent size", Op(array.Float32, 1, 5, 2), Op(array.Float32, 1, 4, 2), []int{2, 3, 2}, wgp(1, 1, 0, 0, 1, 1, 1, false), "want 3", array.Float32},
		{"four spatial axes", Op(array.Float32, 1, 2, 2, 2, 2, 1), Op(array.Float32, 1, 2, 2, 2, 2, 1), []int{1, 1, 1, 1, 1, 1}, wgp(4, 1, 0, 0, 1, 1, 1, false), "1 to 3 spatial axes", array.Float32},
	} {
		cs = append(cs, Case{
			Name: "ConvWeightGrad/refused/" + bad.name,
			In:   []Operand{bad.x, bad.g},
			Out:  []Operand{Op(bad.dtype, bad.w...)},
			GPU: func(out, in []metal.View) ([]metal.Launch, error) {
				return metal.ConvWeightGrad(out[0], in[0], in[1], bad.p)
			},
			WantErr: bad.want,
		})
	}
	return cs
}

// wgradRowMajor runs a CPU kernel that writes row-major results only
// into a row-major buffer and copies the result into out's layout.
func wgradRowMajor(out cpu.Buf, run func(o cpu.Buf) error) error {
	o := cpu.Buf{Data: make([]byte, out.Size()*out.DType.Size()), DType: out.DType, Shape: out.Shape, Strides: strided.RowMajor(out.Shape)}
	if err := run(o); err != nil {
		return err
	}
	return cpu.Copy(out, o)
}
