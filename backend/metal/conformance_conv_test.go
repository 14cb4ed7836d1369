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

// Cases of Conv: both kernels (conv_gemm for groups of 16 output channels
// or more, conv_direct below), every parameter cpu.Conv takes (strides,
// per-side and negative padding, kernel and input dilation, groups and
// depthwise, flip) over 1 to 3 spatial axes, several tiles of rows,
// channels and K, every float dtype, and strided inputs and outputs.
// Values lie in [-1, 1]: sums of products of the specials would compare
// NaN and Inf patterns that depend on which padding terms a kernel
// multiplies, which neither backend promises.

func init() { registerFamily("conv", convCases) }

// convGeom is a convolution problem: input and weight shapes and the
// parameters.
type convGeom struct {
	name string
	x, w []int
	p    metal.ConvParams
}

// convOut returns the output shape of g, as cpu.Conv wants it.
func convOut(g convGeom) []int {
	d := len(g.x) - 2
	out := []int{g.x[0]}
	for i := range d {
		in, k := g.x[1+i], g.w[1+i]
		span := (in-1)*g.p.InputDilation[i] + 1 + g.p.PadLo[i] + g.p.PadHi[i] - (k-1)*g.p.KernelDilation[i]
		out = append(out, (span-1)/g.p.Stride[i]+1)
	}
	return append(out, g.w[0])
}

func (g convGeom) cpu() cpu.ConvParams {
	return cpu.ConvParams{Stride: g.p.Stride, PadLo: g.p.PadLo, PadHi: g.p.PadHi, KernelDilation: g.p.KernelDilation,
		InputDilation: g.p.InputDilation, Groups: g.p.Groups, Flip: g.p.Flip}
}

// cp builds parameters for d spatial axes from one value per field, the
// same on every axis.
func cp(d, stride, lo, hi, kdil, idil, groups int, flip bool) metal.ConvParams {
	rep := func(v int) []int { return slices.Repeat([]int{v}, d) }
	return metal.ConvParams{Stride: rep(stride), PadLo: rep(lo), PadHi: rep(hi), KernelDilation: rep(kdil), InputDilation: rep(idil), Groups: groups, Flip: flip}
}

var convGeoms = []convGeom{
	{"1d", []int{2, 9, 3}, []int{5, 3, 3}, cp(1, 1, 1, 1, 1, 1, 1, false)},
	{"1d/gemm/stride2", []int{2, 37, 5}, []int{20, 4, 5}, cp(1, 2, 2, 1, 1, 1, 1, false)},
	{"2d/gemm/pad1", []int{2, 7, 6, 9}, []int{18, 3, 3, 9}, cp(2, 1, 1, 1, 1, 1, 1, false)},
	{"2d/gemm/tiles", []int{1, 11, 9, 13}, []int{70, 2, 3, 13}, cp(2, 1, 0, 1, 1, 1, 1, false)},
	{"2d/gemm/groups", []int{1, 6, 5, 8}, []int{32, 3, 2, 4}, cp(2, 1, 1, 0, 1, 1, 2, false)},
	{"2d/gemm/dilated", []int{1, 9, 8, 4}, []int{16, 3, 3, 4}, cp(2, 2, 1, 2, 2, 1, 1, false)},
	{"2d/gemm/input-dilation-flip", []int{2, 4, 5, 3}, []int{17, 3, 2, 3}, cp(2, 1, 2, 1, 1, 2, 1, true)},
	{"2d/gemm/crop", []int{1, 9, 10, 5}, []int{16, 2, 3, 5}, cp(2, 1, -1, -2, 1, 1, 1, false)},
	{"2d/direct/depthwise", []int{2, 7, 8, 6}, []int{6, 3, 3, 1}, cp(2, 1, 1, 1, 1, 1, 6, false)},
	{"2d/direct/depthwise-multiplier", []int{1, 6, 5, 4}, []int{8, 3, 3, 1}, cp(2, 2, 1, 1, 1, 1, 4, false)},
	{"2d/direct/everything", []int{1, 5, 6, 6}, []int{6, 2, 3, 2}, cp(2, 2, 2, -1, 2, 2, 3, true)},
	{"3d/gemm", []int{1, 4, 5, 3, 3}, []int{16, 2, 3, 2, 3}, cp(3, 1, 1, 0, 1, 1, 1, false)},
	{"3d/direct/flip-dilated", []int{2, 5, 4, 4, 2}, []int{3, 2, 2, 2, 2}, cp(3, 2, 1, 1, 2, 1, 1, true)},
	{"empty-batch", []int{0, 5, 3}, []int{16, 3, 3}, cp(1, 1, 0, 0, 1, 1, 1, false)},
	{"no-input-channels", []int{2, 5, 0}, []int{4, 3, 0}, cp(1, 1, 1, 1, 1, 1, 1, false)},
}

func convCases() []Case {
	unit := func(r *rand.Rand, _ int) float64 { return 2*r.Float64() - 1 }
	var cs []Case
	for _, dt := range floatDTypes {
		for _, g := range convGeoms {
			layouts := [][3]Layout{{Contig, Contig, Contig}}
			if dt == array.Float32 {
				layouts = append(layouts, [3]Layout{Transposed, Sliced, Contig}, [3]Layout{Sliced, Transposed, Sliced}, [3]Layout{Broadcast, Contig, Transposed})
			}
			for _, l := range layouts {
				cs = append(cs, Case{
					Name: fmt.Sprintf("Conv/%v/%s/%v-%v-%v", dt, g.name, l[0], l[1], l[2]),
					In:   []Operand{Op(dt, g.x...).With(l[0]).Values(unit), Op(dt, g.w...).With(l[1]).Values(unit)},
					Out:  []Operand{Op(dt, convOut(g)...).With(l[2])},
					GPU: func(out, in []metal.View) ([]metal.Launch, error) {
						return metal.Conv(out[0], in[0], in[1], g.p)
					},
					CPU: func(out, in []cpu.Buf) error {
						if l[2] == Contig {
							return cpu.Conv(out[0], in[0], in[1], g.cpu())
						}
						return viaRowMajor(out[0], func(o cpu.Buf) error { return cpu.Conv(o, in[0], in[1], g.cpu()) })
					},
					Tol: 4,
				})
			}
		}
	}
	// Negative strides on the batch and spatial axes: both sides read the
	// same inputs through views mirrored on those axes.
	for _, g := range []convGeom{convGeoms[5], convGeoms[8], convGeoms[12]} {
		cs = append(cs, Case{
			Name: fmt.Sprintf("Conv/float32/%s/mirrored-views", g.name),
			In:   []Operand{Op(array.Float32, g.x...).Values(unit), Op(array.Float32, g.w...).Values(unit)},
			Out:  []Operand{Op(array.Float32, convOut(g)...)},
			GPU: func(out, in []metal.View) ([]metal.Launch, error) {
				x, w := in[0], in[1]
				x.Strides, x.Offset = mirror(x.Shape, x.Strides, x.Offset)
				w.Strides, w.Offset = mirror(w.Shape, w.Strides, w.Offset)
				return metal.Conv(out[0], x, w, g.p)
			},
			CPU: func(out, in []cpu.Buf) error {
				x, w := in[0], in[1]
				x.Strides, x.Offset = mirror(x.Shape, x.Strides, x.Offset)
				w.Strides, w.Offset = mirror(w.Shape, w.Strides, w.Offset)
				return cpu.Conv(out[0], x, w, g.cpu())
			},
			Tol: 4,
		})
	}
	for _, bad := range []struct {
		name string
		x, w Operand
		out  []int
		p    metal.ConvParams
		want string
	}{
		{"integer", Op(array.Int32, 1, 5, 2), Op(array.Int32, 2, 3, 2), []int{1, 3, 2}, cp(1, 1, 0, 0, 1, 1, 1, false), "convolution is for floats"},
		{"float64", Op(array.Float64, 1, 5, 2), Op(array.Float64, 2, 3, 2), []int{1, 3, 2}, cp(1, 1, 0, 0, 1, 1, 1, false), "float64 is not supported"},
		{"groups", Op(array.Float32, 1, 5, 3), Op(array.Float32, 2, 3, 3), []int{1, 3, 2}, cp(1, 1, 0, 0, 1, 1, 2, false), "do not fit 2 groups"},
		{"output size", Op(array.Float32, 1, 5, 2), Op(array.Float32, 2, 3, 2), []int{1, 4, 2}, cp(1, 1, 0, 0, 1, 1, 1, false), "want 3"},
		{"four spatial axes", Op(array.Float32, 1, 2, 2, 2, 2, 1), Op(array.Float32, 1, 1, 1, 1, 1, 1), []int{1, 2, 2, 2, 2, 1}, cp(4, 1, 0, 0, 1, 1, 1, false), "1 to 3 spatial axes"},
	} {
		cs = append(cs, Case{
			Name:    "Conv/refused/" + bad.name,
			In:      []Operand{bad.x, bad.w},
			Out:     []Operand{Op(bad.x.DType, bad.out...)},
			GPU:     func(out, in []metal.View) ([]metal.Launch, error) { return metal.Conv(out[0], in[0], in[1], bad.p) },
			WantErr: bad.want,
		})
	}
	return cs
}

// viaRowMajor runs a CPU kernel that writes row-major outputs only into
// a row-major buffer and copies the result into out's layout.
func viaRowMajor(out cpu.Buf, run func(o cpu.Buf) error) error {
	n := out.Size()
	o := cpu.Buf{Data: make([]byte, n*out.DType.Size()), DType: out.DType, Shape: out.Shape, Strides: strided.RowMajor(out.Shape)}
	if err := run(o); err != nil {
		return err
	}
	return cpu.Copy(out, o)
}

// mirror returns the strides and offset of a view reversed on every axis
// but the last (the batch or output channel, and the spatial axes).
func mirror(shape, strides []int, offset int) ([]int, int) {
	st := slices.Clone(strides)
	for i := range len(shape) - 1 {
		if shape[i] > 0 {
			offset += st[i] * (shape[i] - 1)
			st[i] = -st[i]
		}
	}
	return st, offset
}
