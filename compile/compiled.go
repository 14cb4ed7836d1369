package compile

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/internal/fused"
	"github.com/fathom-go/fathom/internal/strided"
	"github.com/fathom-go/fathom/ops"
)

// Compiled is the primitive of a fused group of elementwise operations:
// a small program over registers that runs in one pass over its output,
// whatever the number of operations. Every output has the shape that its
// inputs broadcast to. The backends run the program: the CPU as a blocked
// interpreter (cpu.RunFused), the GPU as one generated Metal kernel
// (metal.Fused).
type Compiled struct {
	prog *fused.Program
}

func newCompiled(inDTypes []array.DType, instrs []fused.Instr, outputs []int) *Compiled {
	return &Compiled{prog: fused.New(inDTypes, instrs, outputs)}
}

// Name returns "Compiled".
func (c *Compiled) Name() string { return "Compiled" }

// Program returns the fused program. Its text form (String) is stable
// across runs.
func (c *Compiled) Program() *fused.Program { return c.prog }

// Equivalent reports whether o runs the same program.
func (c *Compiled) Equivalent(o array.Primitive) bool {
	d, ok := o.(*Compiled)
	return ok && d != nil && d.prog.Hash() == c.prog.Hash() && d.prog.String() == c.prog.String()
}

// OutputShapes returns, for every output, the shape the inputs broadcast
// to, which lets a shapeless trace replay a fused group on new shapes.
func (c *Compiled) OutputShapes(in []*array.Array) ([][]int, error) {
	shapes := make([][]int, len(in))
	for i, x := range in {
		if x == nil {
			return nil, array.Errorf("compile.Compiled", "input %d is nil", i)
		}
		shapes[i] = x.Shape()
	}
	var shape []int
	if err := array.Try(func() { shape = ops.BroadcastShapes("compile.Compiled", shapes...) }); err != nil {
		return nil, err
	}
	out := make([][]int, len(c.prog.Outputs))
	for i := range out {
		out[i] = shape
	}
	return out, nil
}

// Eval runs the program on the stream's device.
func (c *Compiled) Eval(s array.Stream, in, out []*array.Array) error {
	if s.Device.Type != array.DeviceCPU {
		return c.evalGPU(s, in, out)
	}
	return c.evalCPU(in, out)
}

func (c *Compiled) evalGPU(s array.Stream, in, out []*array.Array) error {
	shape := out[0].Shape()
	outs := make([]metal.View, len(out))
	for i, o := range out {
		st, err := metal.Alloc(o.NBytes())
		if err != nil {
			return err
		}
		strides := strided.RowMajor(shape)
		o.SetData(st, strides, 0)
		outs[i] = metal.View{Mem: st, DType: o.DType(), Shape: shape, Strides: strides}
	}
	ins := make([]metal.View, len(in))
	for i, x := range in {
		ins[i] = metal.View{Mem: x.Storage(), DType: x.DType(), Shape: x.Shape(), Strides: x.Strides(), Offset: x.Offset()}
	}
	ls, err := metal.Fused(c.prog, outs, ins)
	if err != nil {
		return err
	}
	return metal.Run(s, ls)
}

func (c *Compiled) evalCPU(in, out []*array.Array) error {
	shape := out[0].Shape()
	// The operands of most programs fit on the stack (RunFused keeps no
	// slice of them): a small call allocates no more than its results.
	var inBufs, outBufs [8]cpu.Buf
	ins, outs := inBufs[:0], outBufs[:0]
	for _, x := range in {
		ins = append(ins, cpu.Buf{Data: x.Storage().Bytes(), DType: x.DType(), Shape: x.Shape(), Strides: x.Strides(), Offset: x.Offset()})
	}
	strides := strided.RowMajor(shape)
	for _, o := range out {
		st := array.AllocCPU(o.NBytes())
		o.SetData(st, strides, 0)
		outs = append(outs, cpu.Buf{Data: st.Bytes(), DType: o.DType(), Shape: shape, Strides: strides})
	}
	return cpu.RunFused(c.prog, outs, ins)
}
