package ops

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal"
)

// poolGPU queues p's kernel on s: poolPrim's evalGPU, kept beside the
// Metal types it uses.
func poolGPU(s array.Stream, p *poolPrim, in, out []*array.Array) error {
	mp := metal.Pool{Kernel: p.Kernel[:p.Nd], Stride: p.Stride[:p.Nd], Pad: p.Pad[:p.Nd]}
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		switch p.Kind {
		case poolMax:
			return metal.MaxPool(o, viewOf(in[0]), mp)
		case poolAvg:
			return metal.AvgPool(o, viewOf(in[0]), mp)
		case poolAvgGrad:
			return metal.AvgPoolGrad(o, viewOf(in[0]), mp)
		case poolMaxGather:
			return metal.MaxPoolGather(o, viewOf(in[0]), viewOf(in[1]), mp)
		default:
			return metal.MaxPoolScatter(o, viewOf(in[0]), viewOf(in[1]), mp)
		}
	})
}
