package ops

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/internal/strided"
)

// Helpers of the primitives' GPU kernels (evalGPU), each of which sits
// beside its evalCPU and mirrors it: it describes its operands as
// metal.Views (the same strided windows as the CPU's Bufs, built by the
// same helpers), asks backend/metal for the plan (a list of kernel
// launches), and queues it on the stream. Results are ready when
// array.Eval returns, which waits for the GPU.

// toView turns a CPU-style buffer description of memory mem into a View.
func toView(b cpu.Buf, mem metal.Memory) metal.View {
	return metal.View{Mem: mem, DType: b.DType, Shape: b.Shape, Strides: b.Strides, Offset: b.Offset}
}

func viewOf(a *array.Array) metal.View { return toView(bufOf(a), a.Storage()) }

func bcastViewOf(a *array.Array, shape []int) metal.View {
	return toView(bcastBufOf(a, shape), a.Storage())
}

// allocGPU gives out fresh row-major GPU memory and returns its view.
func allocGPU(out *array.Array) (metal.View, error) {
	st, err := metal.Alloc(out.NBytes())
	if err != nil {
		return metal.View{}, err
	}
	strides := strided.RowMajor(out.Shape())
	out.SetData(st, strides, 0)
	return metal.View{Mem: st, DType: out.DType(), Shape: out.Shape(), Strides: strides}, nil
}

// run queues a plan on s.
func run(s array.Stream, ls []metal.Launch, err error) error {
	if err != nil {
		return err
	}
	return metal.Run(s, ls)
}

// runChecked queues a plan whose kernels report bad index values, waits
// for it, and returns what they reported, named for op.
func runChecked(s array.Stream, op string, ls []metal.Launch, chk *metal.IndexCheck, err error) error {
	if err := run(s, ls, err); err != nil {
		return kernelError(err, op)
	}
	if err := metal.Synchronize(s); err != nil {
		return err
	}
	return kernelError(chk.Err(), op)
}

// gpuOut allocates out and calls plan with its view.
func gpuOut(s array.Stream, out *array.Array, plan func(o metal.View) ([]metal.Launch, error)) error {
	o, err := allocGPU(out)
	if err != nil {
		return err
	}
	ls, err := plan(o)
	return run(s, ls, err)
}

// fillThenCopy fills o with v and copies x into the window of o that
// place gives: the GPU form of Pad and of a slice's scatter.
func fillThenCopy(o metal.View, v float64, x *array.Array, place func(o metal.View) metal.View) ([]metal.Launch, error) {
	if o.Size() == 0 {
		return nil, nil
	}
	ls, err := metal.Fill(o, v)
	if err != nil || x.Size() == 0 {
		return ls, err
	}
	l, err := metal.Copy(place(o), viewOf(x))
	return append(ls, l...), err
}
