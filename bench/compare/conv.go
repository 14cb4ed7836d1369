package main

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// convTasks are issue 20's speed rows, against PyTorch's CPU convolution
// and pooling (oneDNN) on the same data in NCHW; numpy has no
// convolution. workloads.py builds the same shapes.
func convTasks() []task {
	conv := func(x, w *array.Array, stride, pad, groups int) *array.Array {
		return ops.Conv2D(x, w, [2]int{stride, stride}, [2]int{pad, pad}, [2]int{1, 1}, groups)
	}
	// flops of a forward convolution: 2 per multiply-add
	flops := func(n, ho, wo, cout, k, cin int) float64 { return 2 * float64(n*ho*wo*cout*k*k*cin) }
	ready := func(xs ...*array.Array) {
		for _, x := range xs {
			eval(x)
		}
	}
	return []task{
		{name: "conv7x7s2/224", flops: flops(32, 112, 112, 64, 7, 3), setup: func() func() {
			x, w := randF32(1, 32, 224, 224, 3), randF32(2, 64, 7, 7, 3)
			ready(x, w)
			return func() { eval(conv(x, w, 2, 3, 1)) }
		}},
		{name: "conv3x3/56", flops: flops(32, 56, 56, 64, 3, 64), setup: func() func() {
			x, w := randF32(1, 32, 56, 56, 64), randF32(2, 64, 3, 3, 64)
			ready(x, w)
			return func() { eval(conv(x, w, 1, 1, 1)) }
		}},
		// forward and both gradients: three convolutions' flops
		{name: "conv3x3-fwdbwd/56", flops: 3 * flops(32, 56, 56, 64, 3, 64), setup: func() func() {
			x, w, g := randF32(1, 32, 56, 56, 64), randF32(2, 64, 3, 3, 64), randF32(3, 32, 56, 56, 64)
			ready(x, w, g)
			f := func(in ...*array.Array) []*array.Array { return []*array.Array{conv(in[0], in[1], 1, 1, 1)} }
			return func() {
				outs, grads := graph.VJP(f, []*array.Array{x, w}, []*array.Array{g})
				if err := array.Eval(outs[0], grads[0], grads[1]); err != nil {
					panic(err)
				}
			}
		}},
		{name: "depthwise3x3/56", flops: flops(32, 56, 56, 128, 3, 1), setup: func() func() {
			x, w := randF32(1, 32, 56, 56, 128), randF32(2, 128, 3, 3, 1)
			ready(x, w)
			return func() { eval(conv(x, w, 1, 1, 128)) }
		}},
		// bytes: the input read and the output written
		{name: "maxpool2x2/112", bytes: 4 * 32 * 112 * 112 * 64 * 1.25, setup: func() func() {
			x := randF32(1, 32, 112, 112, 64)
			ready(x)
			return func() { eval(ops.MaxPool2D(x, [2]int{2, 2}, [2]int{2, 2}, [2]int{})) }
		}},
		// forward, then the input's gradient: the input read twice, the
		// cotangent read, the gradient written
		{name: "maxpool2x2-fwdbwd/112", bytes: 4 * 32 * 112 * 112 * 64 * 3.5, setup: func() func() {
			x, g := randF32(1, 32, 112, 112, 64), randF32(2, 32, 56, 56, 64)
			ready(x, g)
			f := func(in ...*array.Array) []*array.Array {
				return []*array.Array{ops.MaxPool2D(in[0], [2]int{2, 2}, [2]int{2, 2}, [2]int{})}
			}
			return func() {
				outs, grads := graph.VJP(f, []*array.Array{x}, []*array.Array{g})
				if err := array.Eval(outs[0], grads[0]); err != nil {
					panic(err)
				}
			}
		}},
	}
}
