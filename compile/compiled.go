package compile

import (
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/internal/fused"
	"github.com/fathom-go/fathom/internal/strided"
	"github.com/fathom-go/fathom/ops"
)

// Compiled is the primitive of a fused group: a small program over
// registers. An elementwise program runs in one pass over its output,
// whatever the number of operations, and every output has the shape that
// its inputs broadcast to. A row-wise program (Program().Rows > 0) folds
// rows of the trailing axes of that shape and does the elementwise work
// before and after the folds row by row, while each row is in cache; its
// per-row outputs have that shape with the row axes kept as 1s or
// dropped, as the operations it replaces had them. The backends run the
// program: the CPU as a blocked interpreter (cpu.RunFused,
// cpu.RunFusedRows), the GPU as one generated Metal kernel (metal.Fused,
// metal.FusedRows).
type Compiled struct {
	prog *fused.Program
	// form says, for each output of a row-wise program, which shape it
	// has
	form []outForm
}

// outForm is the shape of an output of a row-wise program: the
// elementwise shape, that shape with the row axes kept as 1s or dropped,
// or 0-d (a count, the same for every row).
type outForm uint8

const (
	elemForm outForm = iota
	keepForm
	dropForm
	scalarForm
)

func newCompiled(inDTypes []array.DType, instrs []fused.Instr, outputs []int) *Compiled {
	return &Compiled{prog: fused.New(inDTypes, instrs, outputs)}
}

// newRowCompiled returns the step of row-wise program p over the
// elementwise shape elem, whose outputs have shapes outs.
func newRowCompiled(p *fused.Program, elem []int, outs [][]int) *Compiled {
	c := &Compiled{prog: p, form: make([]outForm, len(outs))}
	for i, s := range outs {
		switch {
		case !p.RowLevel(p.Outputs[i]):
			c.form[i] = elemForm
		case len(s) == 0 && len(elem) != p.Rows:
			c.form[i] = scalarForm
		case len(s) == len(elem):
			c.form[i] = keepForm
		default:
			c.form[i] = dropForm
		}
	}
	return c
}

// Name returns "Compiled".
func (c *Compiled) Name() string { return "Compiled" }

// Program returns the fused program. Its text form (String) is stable
// across runs.
func (c *Compiled) Program() *fused.Program { return c.prog }

// Equivalent reports whether o runs the same program.
func (c *Compiled) Equivalent(o array.Primitive) bool {
	d, ok := o.(*Compiled)
	return ok && d != nil && d.prog.Hash() == c.prog.Hash() && d.prog.String() == c.prog.String() && slices.Equal(d.form, c.form)
}

// OutputShapes returns, for every output, the shape the inputs broadcast
// to, or for a per-row output of a row-wise program that shape with its
// row axes kept as 1s or dropped, which lets a shapeless trace replay a
// fused group on new shapes.
func (c *Compiled) OutputShapes(in []*array.Array) ([][]int, error) {
	shape, err := c.elemShape(in)
	if err != nil {
		return nil, err
	}
	out := make([][]int, len(c.prog.Outputs))
	for i := range out {
		out[i] = shape
		if c.prog.Rows > 0 {
			switch c.form[i] {
			case keepForm, dropForm:
				out[i] = rowShape(shape, c.prog.Rows, c.form[i] == keepForm)
			case scalarForm:
				out[i] = []int{}
			}
		}
	}
	return out, nil
}

// elemShape returns the shape the inputs broadcast to. For a row-wise
// program it checks that it has the row axes and that the per-row inputs
// are 1 along them.
func (c *Compiled) elemShape(in []*array.Array) ([]int, error) {
	const op = "compile.Compiled"
	shapes := make([][]int, len(in))
	for i, x := range in {
		if x == nil {
			return nil, array.Errorf(op, "input %d is nil", i)
		}
		shapes[i] = x.Shape()
	}
	var shape []int
	if err := array.Try(func() { shape = ops.BroadcastShapes(op, shapes...) }); err != nil {
		return nil, err
	}
	if k := c.prog.Rows; k > 0 {
		if len(shape) < k {
			return nil, array.Errorf(op, "inputs of shapes %v broadcast to %v, which has no %d row axes", shapes, shape, k)
		}
		for i, s := range shapes {
			if c.prog.InRow[i] && !perRowShape(s, shape, k) {
				return nil, array.Errorf(op, "input %d of shape %v has more than one value per row of the last %d axes of %v", i, s, k, shape)
			}
		}
	}
	return shape, nil
}

// Eval runs the program on the stream's device.
func (c *Compiled) Eval(s array.Stream, in, out []*array.Array) error {
	if s.Device.Type != array.DeviceCPU {
		return c.evalGPU(s, in, out)
	}
	return c.evalCPU(in, out)
}

func (c *Compiled) evalGPU(s array.Stream, in, out []*array.Array) error {
	outs := make([]metal.View, len(out))
	for i, o := range out {
		st, err := metal.Alloc(o.NBytes())
		if err != nil {
			return err
		}
		shape := o.Shape()
		strides := strided.RowMajor(shape)
		o.SetData(st, strides, 0)
		outs[i] = metal.View{Mem: st, DType: o.DType(), Shape: shape, Strides: strides}
	}
	ins := make([]metal.View, len(in))
	for i, x := range in {
		ins[i] = metal.View{Mem: x.Storage(), DType: x.DType(), Shape: x.Shape(), Strides: x.Strides(), Offset: x.Offset()}
	}
	var ls []metal.Launch
	var err error
	if c.prog.Rows > 0 {
		var shape []int
		if shape, err = c.elemShape(in); err == nil {
			ls, err = metal.FusedRows(c.prog, shape, outs, ins)
		}
	} else {
		ls, err = metal.Fused(c.prog, outs, ins)
	}
	if err != nil {
		return err
	}
	return metal.Run(s, ls)
}

func (c *Compiled) evalCPU(in, out []*array.Array) error {
	// The operands of most programs fit on the stack (RunFused keeps no
	// slice of them): a small call allocates no more than its results.
	var inBufs, outBufs [8]cpu.Buf
	ins, outs := inBufs[:0], outBufs[:0]
	// The kernels only read the shapes: RawShape's saves a copy each.
	for _, x := range in {
		ins = append(ins, cpu.Buf{Data: x.Storage().Bytes(), DType: x.DType(), Shape: x.RawShape(), Strides: x.Strides(), Offset: x.Offset()})
	}
	for _, o := range out {
		st := array.AllocCPU(o.NBytes())
		o.SetRowMajorData(st)
		outs = append(outs, cpu.Buf{Data: st.Bytes(), DType: o.DType(), Shape: o.RawShape(), Strides: o.Strides()})
	}
	if c.prog.Rows > 0 {
		shape, err := c.elemShape(in)
		if err != nil {
			return err
		}
		return cpu.RunFusedRows(c.prog, shape, outs, ins)
	}
	return cpu.RunFused(c.prog, outs, ins)
}
