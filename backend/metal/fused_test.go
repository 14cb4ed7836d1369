package metal_test

import (
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/internal/strided"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/backend/metal/internal/mslcpu"
	"github.com/fathom-go/fathom/internal/fused"
	"github.com/fathom-go/fathom/internal/opset"
)

// Operations whose float results are correctly rounded on both backends
// (or are integer, bool or selection operations): programs of these are
// compared exactly, so comparisons, Floor and Where may follow any of
// them without amplifying a rounding difference.
var (
	exactUnary = []opset.UnaryOp{opset.Neg, opset.Abs, opset.Sign, opset.Square, opset.Sqrt, opset.Reciprocal,
		opset.Floor, opset.Ceil, opset.Round, opset.LogicalNot, opset.IsNaN, opset.IsInf}
	exactBinary = []opset.BinaryOp{opset.Add, opset.Sub, opset.Mul, opset.Div, opset.FloorDivide, opset.Remainder,
		opset.Maximum, opset.Minimum, opset.Equal, opset.NotEqual, opset.Less, opset.LessEqual, opset.Greater,
		opset.GreaterEqual, opset.LogicalAnd, opset.LogicalOr}
	// Smooth operations: results within a few ulps, compared with a
	// tolerance, and no discontinuous operation after them.
	smoothUnary = []opset.UnaryOp{opset.Neg, opset.Abs, opset.Exp, opset.Tanh, opset.Sigmoid, opset.Sin, opset.Cos,
		opset.ArcTan, opset.Erf, opset.Square}
	smoothBinary = []opset.BinaryOp{opset.Add, opset.Sub, opset.Mul, opset.Maximum, opset.Minimum, opset.LogAddExp}
)

// progGen builds a random program one instruction at a time.
type progGen struct {
	r        *rand.Rand
	inDTypes []array.DType
	instrs   []fused.Instr
	regs     []array.DType
}

func (g *progGen) emit(in fused.Instr) int {
	g.instrs = append(g.instrs, in)
	g.regs = append(g.regs, in.DType)
	return len(g.regs) - 1
}

// as returns register a converted to dt (a itself if it has dtype dt).
func (g *progGen) as(a int, dt array.DType) int {
	if g.regs[a] == dt {
		return a
	}
	return g.emit(fused.Instr{Kind: fused.AsType, Args: []int{a}, DType: dt})
}

func (g *progGen) pick() int { return g.r.Intn(len(g.regs)) }

// randomProgram returns a program of 2 to 10 operations over 1 to 4
// inputs of dtypes drawn from dts, using the given operations.
func randomProgram(r *rand.Rand, dts []array.DType, unary []opset.UnaryOp, binary []opset.BinaryOp, withWhere bool) *fused.Program {
	g := &progGen{r: r}
	for range 1 + r.Intn(4) {
		dt := dts[r.Intn(len(dts))]
		g.inDTypes = append(g.inDTypes, dt)
		g.regs = append(g.regs, dt)
	}
	for range 2 + r.Intn(9) {
		switch k := r.Intn(10); {
		case k < 4:
			a := g.pick()
			var ok []opset.UnaryOp
			for _, op := range unary {
				if op.Supported(array.DeviceGPU, g.regs[a]) {
					ok = append(ok, op)
				}
			}
			if len(ok) == 0 {
				a = g.as(a, dts[0])
				ok = []opset.UnaryOp{unary[0]}
			}
			op := ok[r.Intn(len(ok))]
			dt, _ := op.Result(g.regs[a])
			g.emit(fused.Instr{Kind: fused.Unary, Op: uint8(op), Args: []int{a}, DType: dt})
		case k < 8 || !withWhere:
			a := g.pick()
			op := binary[r.Intn(len(binary))]
			if !op.Supported(array.DeviceGPU, g.regs[a]) {
				a = g.as(a, dts[0])
				if op == opset.LogicalAnd || op == opset.LogicalOr {
					a = g.as(a, array.Bool)
				}
				if !op.Supported(array.DeviceGPU, g.regs[a]) {
					op = binary[0]
				}
			}
			b := g.as(g.pick(), g.regs[a])
			dt, _ := op.Result(g.regs[a])
			g.emit(fused.Instr{Kind: fused.Binary, Op: uint8(op), Args: []int{a, b}, DType: dt})
		default:
			c := g.as(g.pick(), array.Bool)
			x := g.pick()
			y := g.as(g.pick(), g.regs[x])
			g.emit(fused.Instr{Kind: fused.Where, Args: []int{c, x, y}, DType: g.regs[x]})
		}
	}
	last := len(g.regs) - 1
	outputs := []int{last}
	if nIn := len(g.inDTypes); last > nIn && r.Intn(3) == 0 {
		outputs = append(outputs, nIn+r.Intn(last-nIn))
	}
	return fused.New(g.inDTypes, g.instrs, outputs)
}

// evalProgram runs p instruction by instruction with the CPU kernels, on
// inputs broadcast to shape: the semantics of cpu.Fused.
func evalProgram(p *fused.Program, ins []cpu.Buf, shape []int) ([]cpu.Buf, error) {
	regs := make([]cpu.Buf, 0, len(ins)+len(p.Instrs))
	for _, b := range ins {
		regs = append(regs, broadcastBuf(b, shape))
	}
	n := 1
	for _, d := range shape {
		n *= d
	}
	for _, in := range p.Instrs {
		out := cpu.Buf{Data: make([]byte, n*in.DType.Size()), DType: in.DType, Shape: shape, Strides: strided.RowMajor(shape)}
		var err error
		switch in.Kind {
		case fused.Unary:
			err = cpu.Unary(opset.UnaryOp(in.Op), out, regs[in.Args[0]])
		case fused.Binary:
			err = cpu.Binary(opset.BinaryOp(in.Op), out, regs[in.Args[0]], regs[in.Args[1]])
		case fused.Where:
			err = cpu.Where(out, regs[in.Args[0]], regs[in.Args[1]], regs[in.Args[2]])
		case fused.AsType:
			err = cpu.Copy(out, regs[in.Args[0]])
		}
		if err != nil {
			return nil, err
		}
		regs = append(regs, out)
	}
	outs := make([]cpu.Buf, len(p.Outputs))
	for k, o := range p.Outputs {
		outs[k] = regs[o]
	}
	return outs, nil
}

func broadcastBuf(b cpu.Buf, shape []int) cpu.Buf {
	b.Strides, _ = strided.Broadcast(b.Shape, b.Strides, shape)
	b.Shape = shape
	return b
}

// fusedCase is a program with its operand layouts.
type fusedCase struct {
	name  string
	p     *fused.Program
	ins   []Operand
	outs  []Operand
	shape []int
	tol   float64
}

// fusedInput picks how an input of a fused case is given: full and
// contiguous, a broadcast row, a 0-d scalar, transposed, sliced.
func fusedInput(r *rand.Rand, dt array.DType, shape []int, strided bool) Operand {
	k := r.Intn(3)
	if strided {
		k = r.Intn(5)
	}
	switch k {
	case 1:
		return Op(dt, shape[len(shape)-1])
	case 2:
		return Op(dt)
	case 3:
		return Op(dt, shape...).With(Transposed)
	case 4:
		return Op(dt, shape...).With(Sliced)
	}
	return Op(dt, shape...)
}

func fusedCases() []fusedCase {
	r := rand.New(rand.NewSource(5))
	var cs []fusedCase
	exactDTypes := []array.DType{array.Float32, array.Float32, array.Float16, array.BFloat16, array.Int32, array.Uint8,
		array.Int64, array.Bool}
	for i := range 40 {
		exact := i%3 != 2
		var p *fused.Program
		tol := 0.0
		if exact {
			p = randomProgram(r, exactDTypes, exactUnary, exactBinary, true)
		} else {
			p = randomProgram(r, floatDTypes, smoothUnary, smoothBinary, false)
			tol = 10
		}
		shape := [][]int{OddShape, {7, 37}, {300}}[i%3]
		strided := i%2 == 1
		c := fusedCase{name: fmt.Sprintf("program%d", i), p: p, shape: shape, tol: tol}
		for _, dt := range p.InDTypes {
			c.ins = append(c.ins, fusedInput(r, dt, shape, strided))
		}
		for _, o := range p.Outputs {
			out := Op(p.DType(o), shape...)
			if strided && r.Intn(2) == 0 {
				out = out.With(Sliced)
			}
			c.outs = append(c.outs, out)
		}
		cs = append(cs, c)
	}
	return cs
}

func TestFusedRandomProgramsMatchTheCPU(t *testing.T) {
	requireHarness(t)
	cs := fusedCases()
	// One binary for all the generated libraries: one compile instead of
	// one per program.
	var libs []mslcpu.Library
	for _, c := range cs {
		ls, err := metal.Fused(c.p, views(materializeOuts(c.outs)), views(materializeOuts(c.ins)))
		if err != nil {
			t.Fatalf("%s:\n%s\n%v", c.name, c.p, err)
		}
		libs = append(libs, mslcpu.Library{Name: ls[0].Library, Source: ls[0].Source})
	}
	if err := mslcpu.Prepare(libs...); err != nil {
		t.Fatal(err)
	}
	variants := map[string]int{}
	for _, c := range cs {
		var kernel string
		runCase(t, Case{
			Name: c.name,
			In:   c.ins,
			Out:  c.outs,
			Tol:  c.tol,
			GPU: func(out, in []metal.View) ([]metal.Launch, error) {
				ls, err := metal.Fused(c.p, out, in)
				if err == nil {
					kernel = ls[0].Kernel
				}
				return ls, err
			},
			CPU: func(out, in []cpu.Buf) error {
				res, err := evalProgram(c.p, in, c.shape)
				if err != nil {
					return err
				}
				for k := range out {
					if err := cpu.Copy(out[k], res[k]); err != nil {
						return err
					}
				}
				return nil
			},
		})
		variants[kernel]++
		if t.Failed() {
			t.Fatalf("program:\n%s", c.p)
		}
	}
	if variants["fused_contig"] == 0 || variants["fused_strided"] == 0 {
		t.Errorf("kernel variants run: %v, want both", variants)
	}
}

// materializeOuts lays out operands without random values (enough to
// plan).
func materializeOuts(ops []Operand) []operandData {
	_, d := materializeAll(rand.New(rand.NewSource(1)), ops, true)
	return d
}

func TestFusedSourceIsCachedByProgram(t *testing.T) {
	f32 := []array.DType{array.Float32, array.Float32}
	mul := fused.Instr{Kind: fused.Binary, Op: uint8(opset.Mul), Args: []int{0, 1}, DType: array.Float32}
	p := fused.New(f32, []fused.Instr{mul, {Kind: fused.Unary, Op: uint8(opset.Tanh), Args: []int{2}, DType: array.Float32}}, []int{3})
	plan := func(p *fused.Program) metal.Launch {
		t.Helper()
		in := views(materializeOuts([]Operand{Op(array.Float32, 4), Op(array.Float32, 4)}))
		out := views(materializeOuts([]Operand{Op(array.Float32, 4)}))
		ls, err := metal.Fused(p, out, in)
		if err != nil || len(ls) != 1 {
			t.Fatalf("Fused: %v, %d launches", err, len(ls))
		}
		return ls[0]
	}
	a, b := plan(p), plan(p)
	if a.Library != b.Library || a.Source != b.Source || !strings.HasPrefix(a.Library, "gen:") {
		t.Errorf("the same program gave libraries %q and %q", a.Library, b.Library)
	}
	if !strings.Contains(a.Source, "r3 = Tanh(r2)") {
		t.Errorf("the source does not quote the program:\n%s", a.Source)
	}
	q := fused.New(f32, []fused.Instr{mul, {Kind: fused.Unary, Op: uint8(opset.Sigmoid), Args: []int{2}, DType: array.Float32}}, []int{3})
	if c := plan(q); c.Library == a.Library {
		t.Errorf("different programs share library %q", c.Library)
	}
}

func TestFusedVariants(t *testing.T) {
	p := fused.New([]array.DType{array.Float32, array.Float32},
		[]fused.Instr{{Kind: fused.Binary, Op: uint8(opset.Add), Args: []int{0, 1}, DType: array.Float32}}, []int{2})
	for _, tc := range []struct {
		name   string
		a, b   Operand
		out    Operand
		kernel string
	}{
		{"contiguous", Op(array.Float32, 3, 4), Op(array.Float32, 3, 4), Op(array.Float32, 3, 4), "fused_contig"},
		{"0-d scalar", Op(array.Float32, 3, 4), Op(array.Float32), Op(array.Float32, 3, 4), "fused_contig"},
		{"size-1 broadcast", Op(array.Float32, 1, 1), Op(array.Float32, 3, 4), Op(array.Float32, 3, 4), "fused_contig"},
		{"row broadcast", Op(array.Float32, 3, 4), Op(array.Float32, 4), Op(array.Float32, 3, 4), "fused_strided"},
		{"transposed", Op(array.Float32, 3, 4).With(Transposed), Op(array.Float32, 3, 4), Op(array.Float32, 3, 4), "fused_strided"},
		{"strided output", Op(array.Float32, 3, 4), Op(array.Float32, 3, 4), Op(array.Float32, 3, 4).With(Sliced), "fused_strided"},
	} {
		ls, err := metal.Fused(p, views(materializeOuts([]Operand{tc.out})), views(materializeOuts([]Operand{tc.a, tc.b})))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if ls[0].Kernel != tc.kernel {
			t.Errorf("%s: kernel %s, want %s", tc.name, ls[0].Kernel, tc.kernel)
		}
	}
}

func TestFusedRejectsBadPrograms(t *testing.T) {
	f32 := array.Float32
	add := fused.Instr{Kind: fused.Binary, Op: uint8(opset.Add), Args: []int{0, 1}, DType: f32}
	two := []array.DType{f32, f32}
	for _, tc := range []struct {
		name string
		p    *fused.Program
		ins  []Operand
		want string
	}{
		{"argument not earlier", fused.New(two,
			[]fused.Instr{{Kind: fused.Unary, Op: uint8(opset.Exp), Args: []int{2}, DType: f32}}, []int{2}),
			nil, "not an earlier register"},
		{"wrong result dtype", fused.New(two,
			[]fused.Instr{{Kind: fused.Binary, Op: uint8(opset.Less), Args: []int{0, 1}, DType: f32}}, []int{2}),
			nil, "gives bool"},
		{"mixed operand dtypes", fused.New([]array.DType{f32, array.Int32}, []fused.Instr{add}, []int{2}),
			[]Operand{Op(f32, 3), Op(array.Int32, 3)}, "Add of float32 and int32"},
		{"float64", fused.New([]array.DType{array.Float64, array.Float64},
			[]fused.Instr{{Kind: fused.Binary, Op: uint8(opset.Add), Args: []int{0, 1}, DType: array.Float64}}, []int{2}),
			[]Operand{Op(array.Float64, 3), Op(array.Float64, 3)}, "float64 is not supported on the GPU"},
		{"complex Sin", fused.New([]array.DType{array.Complex64},
			[]fused.Instr{{Kind: fused.Unary, Op: uint8(opset.Sin), Args: []int{0}, DType: array.Complex64}}, []int{1}),
			[]Operand{Op(array.Complex64, 3)}, "Sin of complex64 is not supported on the GPU"},
		{"unknown op", fused.New(two,
			[]fused.Instr{{Kind: fused.Unary, Op: 200, Args: []int{0}, DType: f32}}, []int{2}),
			nil, "UnaryOp(200) is not defined"},
		{"no outputs", fused.New(two, []fused.Instr{add}, nil),
			nil, "no outputs"},
	} {
		ins := tc.ins
		if ins == nil {
			ins = []Operand{Op(f32, 3), Op(f32, 3)}
		}
		_, err := metal.Fused(tc.p, views(materializeOuts([]Operand{Op(f32, 3)})), views(materializeOuts(ins)))
		var ae *array.Error
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "metal.") {
			t.Errorf("%s: error %v, want an *array.Error containing %q", tc.name, err, tc.want)
		}
	}
}
