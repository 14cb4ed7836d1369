package ops

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal"
)

// metalParams returns the parameters as the Metal kernels take them.
func (p convParams) metalParams() metal.ConvParams {
	c := p.cpu()
	return metal.ConvParams{Stride: c.Stride, PadLo: c.PadLo, PadHi: c.PadHi, KernelDilation: c.KernelDilation,
		InputDilation: c.InputDilation, Groups: c.Groups, Flip: c.Flip}
}

// convGPU queues conv(in[0], in[1]) with p into out on s: convPrim's
// evalGPU, kept beside the Metal types it uses.
func convGPU(s array.Stream, in, out []*array.Array, p convParams) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		return metal.Conv(o, viewOf(in[0]), viewOf(in[1]), p.metalParams())
	})
}
