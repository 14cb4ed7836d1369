package metal_test

import (
	"fmt"
	"math/rand"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
)

// Cases of the fast family: LayerNorm and RMSNorm with and without weight
// and bias, rows shorter and longer than a threadgroup, on every input
// layout; RoPE in both pairings, rotating all or part of the features;
// attention forward and backward with grouped heads, L != S, causal and
// both kinds of mask; and the plans' refusals.

func init() { registerFamily("fast", fastCases) }

func fastCases() []Case {
	unit := func(r *rand.Rand, _ int) float64 { return 2*r.Float64() - 1 }
	var cs []Case
	// norms: a missing weight or bias is a View or Buf without memory
	opt := func(in []metal.View, i int) metal.View {
		if i < len(in) {
			return in[i]
		}
		return metal.View{}
	}
	optCPU := func(in []cpu.Buf, i int) cpu.Buf {
		if i < len(in) {
			return in[i]
		}
		return cpu.Buf{}
	}
	shapes := []struct {
		shape  []int
		layout Layout
	}{
		{[]int{3, 5, 37}, Contig},
		{[]int{3, 5, 37}, Transposed},
		{[]int{3, 5, 37}, Sliced},
		{[]int{4, 8}, Broadcast},
		{[]int{2, 1031}, Contig},
		{[]int{7, 1}, Contig},
		{[]int{0, 16}, Contig},
	}
	for _, dt := range floatDTypes {
		for _, s := range shapes {
			n := s.shape[len(s.shape)-1]
			for _, aff := range []struct {
				name string
				w, b bool
			}{{"plain", false, false}, {"weight", true, false}, {"weight+bias", true, true}} {
				in := []Operand{Op(dt, s.shape...).With(s.layout).Values(unit)}
				if aff.w {
					in = append(in, Op(dt, n).With(Sliced).Values(unit))
				}
				if aff.b {
					in = append(in, Op(dt, n).Values(unit))
				}
				cs = append(cs, Case{
					Name: fmt.Sprintf("LayerNorm/%v/%v/%v/%s", dt, s.shape, s.layout, aff.name),
					In:   in,
					Out:  []Operand{Op(dt, s.shape...)},
					GPU: func(out, in []metal.View) ([]metal.Launch, error) {
						return metal.LayerNorm(out[0], in[0], opt(in, 1), opt(in, 2), 1e-5)
					},
					CPU: func(out, in []cpu.Buf) error {
						return cpu.LayerNorm(out[0], in[0], optCPU(in, 1), optCPU(in, 2), 1e-5)
					},
				})
				if aff.b {
					continue
				}
				cs = append(cs, Case{
					Name: fmt.Sprintf("RMSNorm/%v/%v/%v/%s", dt, s.shape, s.layout, aff.name),
					In:   in,
					Out:  []Operand{Op(dt, s.shape...)},
					GPU: func(out, in []metal.View) ([]metal.Launch, error) {
						return metal.RMSNorm(out[0], in[0], opt(in, 1), 1e-5)
					},
					CPU: func(out, in []cpu.Buf) error { return cpu.RMSNorm(out[0], in[0], optCPU(in, 1), 1e-5) },
				})
			}
		}
	}
	cs = append(cs, Case{
		Name: "LayerNorm/refused/float64",
		In:   []Operand{Op(array.Float64, 2, 4)},
		Out:  []Operand{Op(array.Float64, 2, 4)},
		GPU: func(out, in []metal.View) ([]metal.Launch, error) {
			return metal.LayerNorm(out[0], in[0], metal.View{}, metal.View{}, 1e-5)
		},
		WantErr: "float64",
	}, Case{
		Name:    "RMSNorm/refused/weight length",
		In:      []Operand{Op(array.Float32, 2, 4), Op(array.Float32, 3)},
		Out:     []Operand{Op(array.Float32, 2, 4)},
		GPU:     func(out, in []metal.View) ([]metal.Launch, error) { return metal.RMSNorm(out[0], in[0], in[1], 1e-5) },
		WantErr: "weight",
	})
	// RoPE
	for _, dt := range floatDTypes {
		for _, r := range []struct {
			shape       []int
			layout      Layout
			dims        int
			traditional bool
			offset      int
		}{
			{[]int{2, 3, 5, 16}, Contig, 16, false, 0},
			{[]int{2, 3, 5, 16}, Transposed, 16, true, 3},
			{[]int{2, 3, 5, 16}, Sliced, 8, false, 7},
			{[]int{4, 6, 10}, Broadcast, 6, true, 0},
			{[]int{33, 64}, Contig, 64, false, 20},
			{[]int{0, 8}, Contig, 8, false, 0},
		} {
			cs = append(cs, Case{
				Name: fmt.Sprintf("RoPE/%v/%v/%v/dims=%d/traditional=%v/offset=%d", dt, r.shape, r.layout, r.dims, r.traditional, r.offset),
				In:   []Operand{Op(dt, r.shape...).With(r.layout).Values(unit)},
				Out:  []Operand{Op(dt, r.shape...)},
				GPU: func(out, in []metal.View) ([]metal.Launch, error) {
					return metal.RoPE(out[0], in[0], r.dims, r.traditional, 10000, 0.5, r.offset)
				},
				CPU: func(out, in []cpu.Buf) error {
					return cpu.RoPE(out[0], in[0], r.dims, r.traditional, 10000, 0.5, r.offset)
				},
				// float32 angles of positions up to 50
				Tol: 4,
			})
		}
	}
	cs = append(cs, Case{
		Name: "RoPE/refused/odd dims",
		In:   []Operand{Op(array.Float32, 2, 8)},
		Out:  []Operand{Op(array.Float32, 2, 8)},
		GPU: func(out, in []metal.View) ([]metal.Launch, error) {
			return metal.RoPE(out[0], in[0], 3, false, 10000, 1, 0)
		},
		WantErr: "dims 3",
	})
	// attention
	type attnShape struct {
		name                   string
		b, hq, hk, l, s, d, dv int
		mask                   int // 0 none, 1 bool, 2 additive
		maskLayout             Layout
		causal                 bool
	}
	for _, a := range []attnShape{
		{"plain", 2, 2, 2, 5, 5, 8, 8, 0, Contig, false},
		{"grouped, L<S", 2, 4, 2, 3, 7, 40, 6, 0, Contig, false},
		{"causal, L>S", 1, 2, 1, 6, 4, 8, 8, 0, Contig, true},
		{"bool mask broadcast", 2, 2, 2, 5, 6, 8, 8, 1, Broadcast, false},
		{"additive mask causal", 2, 4, 2, 5, 7, 8, 70, 2, Sliced, true},
		{"empty", 1, 2, 1, 0, 3, 4, 4, 0, Contig, false},
	} {
		qShape, kShape, vShape := []int{a.b, a.hq, a.l, a.d}, []int{a.b, a.hk, a.s, a.d}, []int{a.b, a.hk, a.s, a.dv}
		oShape, lShape := []int{a.b, a.hq, a.l, a.dv}, []int{a.b, a.hq, a.l}
		in := []Operand{Op(array.Float32, qShape...).With(Transposed).Values(unit), Op(array.Float32, kShape...).Values(unit),
			Op(array.Float32, vShape...).With(Sliced).Values(unit)}
		switch a.mask {
		case 1:
			in = append(in, Op(array.Bool, a.b, a.hq, a.l, a.s).With(a.maskLayout))
		case 2:
			in = append(in, Op(array.Float32, a.b, a.hq, a.l, a.s).With(a.maskLayout).Values(unit))
		}
		nm := len(in)
		views := func(in []metal.View) metal.AttentionViews {
			v := metal.AttentionViews{Q: in[0], K: in[1], V: in[2], Scale: 0.4, Causal: a.causal}
			if nm == 4 {
				v.Mask = in[3]
			}
			return v
		}
		bufs := func(in []cpu.Buf) cpu.AttentionBufs {
			b := cpu.AttentionBufs{Q: in[0], K: in[1], V: in[2], Scale: 0.4, Causal: a.causal}
			if nm == 4 {
				b.Mask = in[3]
			}
			return b
		}
		cs = append(cs, Case{
			Name: "Attention/" + a.name,
			In:   in,
			Out:  []Operand{Op(array.Float32, oShape...), Op(array.Float32, lShape...)},
			GPU: func(out, in []metal.View) ([]metal.Launch, error) {
				return metal.Attention(out[0], out[1], views(in))
			},
			CPU: func(out, in []cpu.Buf) error { return cpu.Attention(out[0], out[1], bufs(in)) },
			Tol: 8,
		})
		// the backward pass on any out, lse and g: it is a function of them
		back := append(append([]Operand{}, in...), Op(array.Float32, oShape...).Values(unit),
			Op(array.Float32, lShape...).With(Sliced).Values(unit), Op(array.Float32, oShape...).With(Transposed).Values(unit))
		cs = append(cs, Case{
			Name: "AttentionVJP/" + a.name,
			In:   back,
			Out:  []Operand{Op(array.Float32, qShape...), Op(array.Float32, kShape...), Op(array.Float32, vShape...)},
			GPU: func(out, in []metal.View) ([]metal.Launch, error) {
				return metal.AttentionVJP(out[0], out[1], out[2], views(in), in[nm], in[nm+1], in[nm+2])
			},
			CPU: func(out, in []cpu.Buf) error {
				return cpu.AttentionVJP(out[0], out[1], out[2], bufs(in), in[nm], in[nm+1], in[nm+2])
			},
			Tol: 8,
		})
	}
	attn := func(out, in []metal.View) ([]metal.Launch, error) {
		return metal.Attention(out[0], out[1], metal.AttentionViews{Q: in[0], K: in[1], V: in[2], Scale: 1})
	}
	cs = append(cs, Case{
		Name:    "Attention/refused/heads",
		In:      []Operand{Op(array.Float32, 1, 3, 2, 4), Op(array.Float32, 1, 2, 2, 4), Op(array.Float32, 1, 2, 2, 4)},
		Out:     []Operand{Op(array.Float32, 1, 3, 2, 4), Op(array.Float32, 1, 3, 2)},
		GPU:     attn,
		WantErr: "do not fit",
	}, Case{
		Name:    "Attention/refused/long head",
		In:      []Operand{Op(array.Float32, 1, 1, 2, 300), Op(array.Float32, 1, 1, 2, 300), Op(array.Float32, 1, 1, 2, 4)},
		Out:     []Operand{Op(array.Float32, 1, 1, 2, 4), Op(array.Float32, 1, 1, 2)},
		GPU:     attn,
		WantErr: "longer than 256",
	}, Case{
		Name:    "Attention/refused/float16",
		In:      []Operand{Op(array.Float16, 1, 1, 2, 4), Op(array.Float16, 1, 1, 2, 4), Op(array.Float16, 1, 1, 2, 4)},
		Out:     []Operand{Op(array.Float16, 1, 1, 2, 4), Op(array.Float16, 1, 1, 2)},
		GPU:     attn,
		WantErr: "float32 only",
	})
	return cs
}
