package bench

import (
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/internal/workload"
	"github.com/fathom-go/fathom/ops"
)

// BenchmarkGPUConv2D runs issue 20's convolution workloads (the shapes of
// BenchmarkConv2D) on the Metal kernels, float32, reporting GFLOP/s as
// BenchmarkConv2D does; forward and backward counts three times the
// forward's flops. It needs a Mac and skips elsewhere.
func BenchmarkGPUConv2D(b *testing.B) {
	onGPU(b)
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
		x := gpuArray(b, workload.RandF32(numElems(c.x), 1), c.x...)
		w := gpuArray(b, workload.RandF32(numElems(c.w), 2), c.w...)
		conv := func(in ...*array.Array) *array.Array {
			return ops.Conv2D(in[0], in[1], [2]int{c.stride, c.stride}, [2]int{c.pad, c.pad}, [2]int{1, 1}, c.groups)
		}
		flops := convFLOPs(conv(x, w).Shape(), c.w)
		b.Run(c.name, func(b *testing.B) {
			if !c.forwardBackward {
				for b.Loop() {
					mustEval(b, conv(x, w))
				}
				reportFLOPs(b, flops)
				return
			}
			vg := graph.ValueAndGrad(func(in ...*array.Array) *array.Array { return ops.Sum(conv(in...)) }, 0, 1)
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

// BenchmarkGPUMaxPool2D is BenchmarkMaxPool2D on the Metal kernels: 2×2
// windows, stride 2, on 32×112×112×64 float32, in bytes moved.
func BenchmarkGPUMaxPool2D(b *testing.B) {
	onGPU(b)
	const n, h, w, c = 32, 112, 112, 64
	in := n * h * w * c
	out := in / 4
	x := gpuArray(b, workload.RandF32(in, 1), n, h, w, c)
	g := gpuArray(b, workload.RandF32(out, 2), n, h/2, w/2, c)
	pool := func(x *array.Array) *array.Array {
		return ops.MaxPool2D(x, [2]int{2, 2}, [2]int{2, 2}, [2]int{})
	}
	b.Run("forward", func(b *testing.B) {
		b.SetBytes(int64(4 * (in + out)))
		for b.Loop() {
			mustEval(b, pool(x))
		}
	})
	b.Run("backward", func(b *testing.B) {
		b.SetBytes(int64(4 * (2*in + out)))
		for b.Loop() {
			_, vjps := graph.VJP(func(in ...*array.Array) []*array.Array { return []*array.Array{pool(in[0])} },
				[]*array.Array{x}, []*array.Array{g})
			mustEval(b, vjps[0])
		}
	})
}

// numElems is the number of elements of shape.
func numElems(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}
