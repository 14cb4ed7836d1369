package ops

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/internal/opset"
)

// outAlloc gives out an output's memory and returns the CPU's view of it.
// A kernel that runs on the host on both streams (linear algebra, FFT
// lengths Metal has no kernel for) takes one, so that its outputs live
// where the stream's arrays live.
type outAlloc func(out *array.Array) (cpu.Buf, error)

// cpuAlloc is the CPU stream's outAlloc.
func cpuAlloc(out *array.Array) (cpu.Buf, error) { return alloc(out), nil }

// onHost runs a host kernel for the GPU stream s, as MLX runs its linear
// algebra: Apple silicon's GPU memory is the host's, so once the work
// queued so far has finished the kernel reads its inputs where they are
// and writes its outputs into GPU storage, with no copy either way.
func onHost(s array.Stream, run func(alloc outAlloc) error) error {
	if err := metal.Synchronize(s); err != nil {
		return err
	}
	return run(func(out *array.Array) (cpu.Buf, error) {
		v, err := allocGPU(out)
		if err != nil {
			return cpu.Buf{}, err
		}
		return cpu.Buf{Data: out.Storage().Bytes(), DType: v.DType, Shape: v.Shape, Strides: v.Strides}, nil
	})
}

// hostKernel is a primitive whose kernel runs on the host for both
// streams, writing the outputs that alloc gives it.
type hostKernel interface {
	array.Primitive
	host(alloc outAlloc, in, out []*array.Array) error
}

// evalHostCPU runs p's host kernel for the CPU stream.
func evalHostCPU(p hostKernel, in, out []*array.Array) error { return p.host(cpuAlloc, in, out) }

// evalHostGPU runs p's host kernel for the GPU stream into GPU storage.
// It refuses float64 there, as every GPU kernel does, though the host
// could compute it: its result would live where no GPU kernel can read
// it.
func evalHostGPU(p hostKernel, s array.Stream, in, out []*array.Array) error {
	for _, x := range in {
		if err := opset.CheckDTypes("ops."+p.Name(), array.DeviceGPU, x.DType()); err != nil {
			return err
		}
	}
	return onHost(s, func(a outAlloc) error { return p.host(a, in, out) })
}
