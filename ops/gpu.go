package ops

import (
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
)

// The GPU kernels of the primitives. Each mirrors the primitive's evalCPU:
// it describes its operands as metal.Views (the same strided windows as
// the CPU's Bufs, built by the same helpers), asks backend/metal for the
// plan (a list of kernel launches), and queues it on the stream. Results
// are ready when array.Eval returns, which waits for the GPU.

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
	strides := array.RowMajorStrides(out.Shape())
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

func (p *Unary) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		return metal.Unary(p.Op.String(), o, viewOf(in[0]))
	})
}

func (p *Binary) evalGPU(s array.Stream, in, out []*array.Array) error {
	shape := out[0].Shape()
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		return metal.Binary(p.Op.String(), o, bcastViewOf(in[0], shape), bcastViewOf(in[1], shape))
	})
}

func (p *WherePrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	shape := out[0].Shape()
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		return metal.Where(o, bcastViewOf(in[0], shape), bcastViewOf(in[1], shape), bcastViewOf(in[2], shape))
	})
}

func copyGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) { return metal.Copy(o, viewOf(in[0])) })
}

func (p *AsTypePrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return copyGPU(s, in, out)
}
func (p *CopyPrim) evalGPU(s array.Stream, in, out []*array.Array) error { return copyGPU(s, in, out) }

func (p *FullPrim) evalGPU(s array.Stream, _, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) { return metal.Fill(o, p.Value) })
}

func (p *ArangePrim) evalGPU(s array.Stream, _, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) { return metal.Arange(o, p.Start, p.Step) })
}

func (p *LinspacePrim) evalGPU(s array.Stream, _, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		if p.N <= 1 {
			return metal.Arange(o, p.Start, 0)
		}
		ls, err := metal.Arange(o, p.Start, (p.Stop-p.Start)/float64(p.N-1))
		if err != nil {
			return nil, err
		}
		last := o
		last.Shape, last.Strides, last.Offset = []int{}, []int{}, p.N-1
		end, err := metal.Fill(last, p.Stop)
		return append(ls, end...), err
	})
}

func (p *EyePrim) evalGPU(s array.Stream, _, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) { return metal.Eye(o, p.K) })
}

func (p *ReshapePrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		o.Shape = in[0].Shape()
		o.Strides = array.RowMajorStrides(o.Shape)
		return metal.Copy(o, viewOf(in[0]))
	})
}

func (p *ConcatenatePrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		var ls []metal.Launch
		pos := 0
		for _, x := range in {
			if x.Size() > 0 {
				sub := o
				sub.Shape = x.Shape()
				sub.Offset = pos * o.Strides[p.Axis]
				l, err := metal.Copy(sub, viewOf(x))
				if err != nil {
					return nil, err
				}
				ls = append(ls, l...)
			}
			pos += x.Shape()[p.Axis]
		}
		return ls, nil
	})
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

func (p *PadPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		return fillThenCopy(o, p.Value, in[0], func(o metal.View) metal.View {
			sub := o
			sub.Shape = in[0].Shape()
			for j := range sub.Shape {
				sub.Offset += p.Widths[j][0] * o.Strides[j]
			}
			return sub
		})
	})
}

func (p *SliceScatterPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		return fillThenCopy(o, 0, in[0], func(o metal.View) metal.View {
			sub := o
			sub.Shape = in[0].Shape()
			off, strides := sliceView(p.Start, p.Step, o.Strides)
			sub.Offset += off
			sub.Strides = strides
			return sub
		})
	})
}

func (p *ReducePrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		return metal.Reduce(p.Name(), o, viewOf(in[0]), p.Axes)
	})
}

func (p *ArgReducePrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		return metal.ArgReduce(p.Name(), o, viewOf(in[0]), p.Axis)
	})
}

func (p *ScanPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		return metal.Scan(p.Name(), o, viewOf(in[0]), p.Axis, p.Reverse, p.Inclusive)
	})
}

func (p *SoftmaxPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) { return metal.Softmax(o, viewOf(in[0]), p.Axis) })
}

func (p *LogSoftmaxPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		return metal.LogSoftmax(o, viewOf(in[0]), p.Axis)
	})
}

func (p *LogSumExpPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		return metal.LogSumExp(o, viewOf(in[0]), p.Axis)
	})
}

func (p *SortPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) { return metal.Sort(o, viewOf(in[0]), p.Axis) })
}

func (p *ArgSortPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) { return metal.ArgSort(o, viewOf(in[0]), p.Axis) })
}

func (p *TopKPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		return metal.TopK(o, viewOf(in[0]), p.Axis, p.K)
	})
}

func (p *MatMulPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	am, bm := matShape(in[0].Shape(), true), matShape(in[1].Shape(), false)
	batch := matBatch(am, bm)
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		o.Shape = append(slices.Clone(batch), am[len(am)-2], bm[len(bm)-1])
		o.Strides = array.RowMajorStrides(o.Shape)
		return metal.MatMul(o, toView(matBuf(in[0], true, batch), in[0].Storage()), toView(matBuf(in[1], false, batch), in[1].Storage()))
	})
}

func (p *TakePrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	o, err := allocGPU(out[0])
	if err != nil {
		return err
	}
	ls, chk, err := metal.Take(o, viewOf(in[0]), viewOf(in[1]), p.Axis)
	return runChecked(s, "ops.Take", ls, chk, err)
}

func (p *TakeAlongAxisPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	shape := out[0].Shape()
	ashape := slices.Clone(shape)
	ashape[p.Axis] = in[0].Shape()[p.Axis]
	o, err := allocGPU(out[0])
	if err != nil {
		return err
	}
	ls, chk, err := metal.TakeAlongAxis(o, bcastViewOf(in[0], ashape), bcastViewOf(in[1], shape), p.Axis)
	return runChecked(s, "ops.TakeAlongAxis", ls, chk, err)
}

func (p *PutAlongAxisPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	shape := out[0].Shape()
	shape[p.Axis] = in[1].Shape()[p.Axis]
	o, err := allocGPU(out[0])
	if err != nil {
		return err
	}
	ls, chk, err := metal.PutAlongAxis(o, viewOf(in[0]), bcastViewOf(in[1], shape), bcastViewOf(in[2], shape), p.Axis)
	return runChecked(s, "ops.PutAlongAxis", ls, chk, err)
}

func (p *ScatterAddPrim) evalGPU(s array.Stream, in, out []*array.Array) error {
	o, err := allocGPU(out[0])
	if err != nil {
		return err
	}
	ls, chk, err := metal.ScatterAddAlongAxis(o, viewOf(in[0]), viewOf(in[1]), p.Axis)
	return runChecked(s, "ops.ScatterAdd", ls, chk, err)
}
