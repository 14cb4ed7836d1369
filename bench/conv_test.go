package bench

import (
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// The convolution speed goals of issue 20, float32 on the CPU, with the
// issue's shapes (channels last). GFLOP/s count 2·N·out·C_out·k·C_in/groups
// for the forward pass and three times that for forward and backward
// (the input's and the weight's cotangents are each a convolution of the
// same size).

// convFLOPs is the forward pass's flop count for output shape out and a
// weight of shape w.
func convFLOPs(out, w []int) float64 {
	f := 2.0
	for _, d := range out {
		f *= float64(d)
	}
	for _, d := range w[1:] {
		f *= float64(d)
	}
	return f
}

func BenchmarkConv2D(b *testing.B) {
	for _, c := range []struct {
		name            string
		x, w            []int
		stride, pad     int
		groups          int
		forwardBackward bool
	}{
		{"7x7s2/32x224x224x3->64", []int{32, 224, 224, 3}, []int{64, 7, 7, 3}, 2, 3, 1, false},
		{"3x3/32x56x56x64->64", []int{32, 56, 56, 64}, []int{64, 3, 3, 64}, 1, 1, 1, false},
		{"3x3-fwd-bwd/32x56x56x64->64", []int{32, 56, 56, 64}, []int{64, 3, 3, 64}, 1, 1, 1, true},
		{"depthwise3x3/32x56x56x128", []int{32, 56, 56, 128}, []int{128, 3, 3, 1}, 1, 1, 128, false},
	} {
		x, w := randF32(1, c.x...), randF32(2, c.w...)
		conv := func(in ...*array.Array) *array.Array {
			return ops.Conv2D(in[0], in[1], [2]int{c.stride, c.stride}, [2]int{c.pad, c.pad}, [2]int{1, 1}, c.groups)
		}
		y := conv(x, w)
		flops := convFLOPs(y.Shape(), c.w)
		b.Run(c.name, func(b *testing.B) {
			if !c.forwardBackward {
				for b.Loop() {
					mustEval(b, conv(x, w))
				}
				reportFLOPs(b, flops)
				return
			}
			loss := func(in ...*array.Array) *array.Array { return ops.Sum(conv(in...)) }
			vg := graph.ValueAndGrad(loss, 0, 1)
			for b.Loop() {
				v, g := vg(x, w)
				if err := array.Eval(v, g[0], g[1]); err != nil {
					b.Fatal(err)
				}
			}
			reportFLOPs(b, 3*flops)
		})
	}
}

// BenchmarkConv2DGrad times each cotangent of a convolution on its own,
// from a given output cotangent: the weight's (one product of the
// patches with the cotangent, its depth the N·out rows) and the input's
// (a convolution of the cotangent with the mirrored kernel). Each has
// the forward pass's flop count.
func BenchmarkConv2DGrad(b *testing.B) {
	for _, c := range []struct {
		name        string
		x, w        []int
		stride, pad int
		groups      int
	}{
		{"3x3/32x56x56x64->64", []int{32, 56, 56, 64}, []int{64, 3, 3, 64}, 1, 1, 1},
		{"7x7s2/32x224x224x3->64", []int{32, 224, 224, 3}, []int{64, 7, 7, 3}, 2, 3, 1},
		{"depthwise3x3/32x56x56x128", []int{32, 56, 56, 128}, []int{128, 3, 3, 1}, 1, 1, 128},
	} {
		x, w := randF32(1, c.x...), randF32(2, c.w...)
		conv := func(x, w *array.Array) *array.Array {
			return ops.Conv2D(x, w, [2]int{c.stride, c.stride}, [2]int{c.pad, c.pad}, [2]int{1, 1}, c.groups)
		}
		shape := conv(x, w).Shape()
		g := randF32(3, shape...)
		flops := convFLOPs(shape, c.w)
		b.Run("weight/"+c.name, func(b *testing.B) {
			f := func(in ...*array.Array) []*array.Array { return []*array.Array{conv(x, in[0])} }
			for b.Loop() {
				_, grads := graph.VJP(f, []*array.Array{w}, []*array.Array{g})
				mustEval(b, grads[0])
			}
			reportFLOPs(b, flops)
		})
		b.Run("input/"+c.name, func(b *testing.B) {
			f := func(in ...*array.Array) []*array.Array { return []*array.Array{conv(in[0], w)} }
			for b.Loop() {
				_, grads := graph.VJP(f, []*array.Array{x}, []*array.Array{g})
				mustEval(b, grads[0])
			}
			reportFLOPs(b, flops)
		})
	}
}
