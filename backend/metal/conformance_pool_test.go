package metal_test

import (
	"fmt"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
)

// Cases of the pooling kernels and their derivatives: windows that tile
// the input, overlap, pad, and differ per axis, over 1 to 3 spatial axes,
// on every dtype each kernel takes (max pooling integers too) and on
// strided inputs and outputs. The default values include NaN, ±Inf, ±0
// and ties, where the maxima must be the CPU's (the first, or the first
// NaN).

func init() { registerFamily("pool", poolCases) }

type poolGeom struct {
	name string
	x    []int
	p    metal.Pool
}

var poolGeoms = []poolGeom{
	{"1d/k3s2p1", []int{2, 11, 5}, metal.Pool{Kernel: []int{3}, Stride: []int{2}, Pad: []int{1}}},
	{"2d/k2s2/tiles", []int{2, 6, 4, 3}, metal.Pool{Kernel: []int{2, 2}, Stride: []int{2, 2}, Pad: []int{0, 0}}},
	{"2d/k3s1p1/overlap", []int{1, 5, 6, 4}, metal.Pool{Kernel: []int{3, 3}, Stride: []int{1, 1}, Pad: []int{1, 1}}},
	{"2d/mixed", []int{2, 7, 5, 3}, metal.Pool{Kernel: []int{3, 2}, Stride: []int{2, 1}, Pad: []int{1, 0}}},
	{"3d/k2s1p1", []int{1, 3, 4, 3, 2}, metal.Pool{Kernel: []int{2, 2, 2}, Stride: []int{1, 2, 1}, Pad: []int{1, 1, 0}}},
	{"2d/wide-channels", []int{1, 4, 4, 300}, metal.Pool{Kernel: []int{2, 2}, Stride: []int{2, 2}, Pad: []int{1, 1}}},
	{"empty", []int{0, 4, 3}, metal.Pool{Kernel: []int{2}, Stride: []int{1}, Pad: []int{0}}},
}

// pooled returns the output shape of g.
func pooled(g poolGeom) []int {
	out := []int{g.x[0]}
	for i, k := range g.p.Kernel {
		out = append(out, (g.x[1+i]+2*g.p.Pad[i]-k)/g.p.Stride[i]+1)
	}
	return append(out, g.x[len(g.x)-1])
}

func (g poolGeom) cpu() cpu.Pool {
	return cpu.Pool{Kernel: g.p.Kernel, Stride: g.p.Stride, Pad: g.p.Pad}
}

func poolCases() []Case {
	var cs []Case
	type kernel struct {
		name  string
		ints  bool
		in    func(g poolGeom) [][]int // input shapes
		out   func(g poolGeom) []int
		gpu   func(out metal.View, in []metal.View, p metal.Pool) ([]metal.Launch, error)
		cpuFn func(out cpu.Buf, in []cpu.Buf, p cpu.Pool) error
	}
	xOnly := func(g poolGeom) [][]int { return [][]int{g.x} }
	kernels := []kernel{
		{"MaxPool", true, xOnly, pooled,
			func(o metal.View, in []metal.View, p metal.Pool) ([]metal.Launch, error) {
				return metal.MaxPool(o, in[0], p)
			},
			func(o cpu.Buf, in []cpu.Buf, p cpu.Pool) error { return cpu.MaxPool(o, in[0], p) }},
		{"AvgPool", false, xOnly, pooled,
			func(o metal.View, in []metal.View, p metal.Pool) ([]metal.Launch, error) {
				return metal.AvgPool(o, in[0], p)
			},
			func(o cpu.Buf, in []cpu.Buf, p cpu.Pool) error { return cpu.AvgPool(o, in[0], p) }},
		{"AvgPoolGrad", false, func(g poolGeom) [][]int { return [][]int{pooled(g)} }, func(g poolGeom) []int { return g.x },
			func(o metal.View, in []metal.View, p metal.Pool) ([]metal.Launch, error) {
				return metal.AvgPoolGrad(o, in[0], p)
			},
			func(o cpu.Buf, in []cpu.Buf, p cpu.Pool) error { return cpu.AvgPoolGrad(o, in[0], p) }},
		{"MaxPoolGather", false, func(g poolGeom) [][]int { return [][]int{g.x, g.x} }, pooled,
			func(o metal.View, in []metal.View, p metal.Pool) ([]metal.Launch, error) {
				return metal.MaxPoolGather(o, in[0], in[1], p)
			},
			func(o cpu.Buf, in []cpu.Buf, p cpu.Pool) error { return cpu.MaxPoolGather(o, in[0], in[1], p) }},
		{"MaxPoolScatter", false, func(g poolGeom) [][]int { return [][]int{g.x, pooled(g)} }, func(g poolGeom) []int { return g.x },
			func(o metal.View, in []metal.View, p metal.Pool) ([]metal.Launch, error) {
				return metal.MaxPoolScatter(o, in[0], in[1], p)
			},
			func(o cpu.Buf, in []cpu.Buf, p cpu.Pool) error { return cpu.MaxPoolScatter(o, in[0], in[1], p) }},
	}
	for _, k := range kernels {
		dts := floatDTypes
		if k.ints {
			dts = append(append([]array.DType{}, floatDTypes...), intDTypes...)
		}
		for _, dt := range dts {
			for _, g := range poolGeoms {
				layouts := [][2]Layout{{Contig, Contig}}
				if dt == array.Float32 || dt == array.Int64 {
					layouts = append(layouts, [2]Layout{Transposed, Sliced}, [2]Layout{Sliced, Transposed}, [2]Layout{Broadcast, Contig})
				}
				for _, l := range layouts {
					var in []Operand
					for _, s := range k.in(g) {
						in = append(in, Op(dt, s...).With(l[0]))
					}
					cs = append(cs, Case{
						Name: fmt.Sprintf("%s/%v/%s/%v-%v", k.name, dt, g.name, l[0], l[1]),
						In:   in,
						Out:  []Operand{Op(dt, k.out(g)...).With(l[1])},
						GPU:  func(out, in []metal.View) ([]metal.Launch, error) { return k.gpu(out[0], in, g.p) },
						CPU:  func(out, in []cpu.Buf) error { return k.cpuFn(out[0], in, g.cpu()) },
					})
				}
			}
		}
	}
	p2 := metal.Pool{Kernel: []int{2}, Stride: []int{2}, Pad: []int{0}}
	for _, bad := range []struct {
		name   string
		in     Operand
		out    []int
		plan   func(out, in metal.View) ([]metal.Launch, error)
		wanted string
	}{
		{"avg of integers", Op(array.Int32, 1, 4, 2), []int{1, 2, 2},
			func(o, x metal.View) ([]metal.Launch, error) { return metal.AvgPool(o, x, p2) }, "dtype int32 is not supported"},
		{"bool", Op(array.Bool, 1, 4, 2), []int{1, 2, 2},
			func(o, x metal.View) ([]metal.Launch, error) { return metal.MaxPool(o, x, p2) }, "dtype bool is not supported"},
		{"float64", Op(array.Float64, 1, 4, 2), []int{1, 2, 2},
			func(o, x metal.View) ([]metal.Launch, error) { return metal.MaxPool(o, x, p2) }, "float64 is not supported"},
		{"output shape", Op(array.Float32, 1, 4, 2), []int{1, 3, 2},
			func(o, x metal.View) ([]metal.Launch, error) { return metal.MaxPool(o, x, p2) }, "do not fit the pool"},
		{"scatter shapes", Op(array.Float32, 1, 4, 2), []int{1, 2, 2},
			func(o, x metal.View) ([]metal.Launch, error) { return metal.MaxPoolScatter(o, x, o, p2) }, "shapes [1 4 2] and [1 2 2] differ"},
	} {
		cs = append(cs, Case{
			Name:    "Pool/refused/" + bad.name,
			In:      []Operand{bad.in},
			Out:     []Operand{Op(bad.in.DType, bad.out...)},
			GPU:     func(out, in []metal.View) ([]metal.Launch, error) { return bad.plan(out[0], in[0]) },
			WantErr: bad.wanted,
		})
	}
	return cs
}
