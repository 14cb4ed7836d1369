package ops

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
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
