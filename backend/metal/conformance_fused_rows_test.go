package metal_test

// Row-wise fused programs (fused.NewRows, what package compile makes of a
// softmax or a layer norm written by hand): metal.FusedRows on the
// harness against cpu.RunFusedRows, on every input layout.

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/backend/metal/internal/mslcpu"
	"github.com/fathom-go/fathom/internal/fused"
	"github.com/fathom-go/fathom/internal/opset"
)

// rowProg is a row-wise program and how its inputs and outputs are
// shaped: "x" the elementwise shape, "w" its row, "s" 0-d, "r" one value
// per row, "c" a 0-d count.
type rowProg struct {
	name string
	p    *fused.Program
	ins  string
	outs string
}

func rowProgs(dt array.DType, rows int) []rowProg {
	un := func(op opset.UnaryOp, a int) fused.Instr {
		return fused.Instr{Kind: fused.Unary, Op: uint8(op), Args: []int{a}, DType: dt}
	}
	bin := func(op opset.BinaryOp, a, b int) fused.Instr {
		return fused.Instr{Kind: fused.Binary, Op: uint8(op), Args: []int{a, b}, DType: dt}
	}
	fold := func(op opset.ReduceOp, a int) fused.Instr {
		return fused.Instr{Kind: fused.Reduce, Op: uint8(op), Args: []int{a}, DType: dt}
	}
	count := func(ddof int) fused.Instr { return fused.Instr{Kind: fused.Count, DType: dt, N: ddof} }
	d1 := []array.DType{dt}
	return []rowProg{
		{"softmax", fused.NewRows(d1, []bool{false}, rows, []fused.Instr{
			fold(opset.Max, 0), bin(opset.Sub, 0, 1), un(opset.Exp, 2), fold(opset.Sum, 3), bin(opset.Div, 3, 4),
		}, []int{5}), "x", "x"},
		// layer norm with its mean and count as outputs too
		{"layernorm", fused.NewRows([]array.DType{dt, dt, dt, dt}, []bool{false, true, false, false}, rows, []fused.Instr{
			fold(opset.Sum, 0),    // r4
			count(0),              // r5
			bin(opset.Div, 4, 5),  // r6 mean
			bin(opset.Sub, 0, 6),  // r7
			un(opset.Square, 7),   // r8
			fold(opset.Sum, 8),    // r9
			count(1),              // r10
			bin(opset.Div, 9, 10), // r11 var
			bin(opset.Add, 11, 1), // r12
			un(opset.Rsqrt, 12),   // r13
			bin(opset.Mul, 7, 13), // r14
			bin(opset.Mul, 14, 2), // r15
			bin(opset.Add, 15, 3), // r16
		}, []int{16, 6, 5}), "xswx", "xrc"},
		// min, prod and a comparison against a per-row value
		{"min-prod-where", fused.NewRows([]array.DType{dt, dt}, []bool{false, true}, rows, []fused.Instr{
			fold(opset.Min, 0),   // r2
			un(opset.Tanh, 0),    // r3
			bin(opset.Add, 3, 1), // r4
			fold(opset.Prod, 4),  // r5
			{Kind: fused.Binary, Op: uint8(opset.Greater), Args: []int{0, 2}, DType: array.Bool}, // r6
			{Kind: fused.Where, Args: []int{6, 4, 5}, DType: dt},                                 // r7
			{Kind: fused.AsType, Args: []int{7}, DType: array.Float32},                           // r8
		}, []int{8, 5}), "xs", "xr"},
	}
}

// rowShapes are the elementwise shapes and their row axes.
var rowShapes = []struct {
	shape []int
	rows  int
}{
	{[]int{5, 300}, 1},
	{[]int{3, 4, 70}, 2},
	{[]int{2, 1031}, 1}, // more than a threadgroup's threads
}

func fusedRowsCases() []Case {
	finite := func(r *rand.Rand, _ int) float64 { return 4*r.Float64() - 2 }
	var cs []Case
	for _, dt := range floatDTypes {
		for _, sh := range rowShapes {
			nd := len(sh.shape)
			row := sh.shape[nd-sh.rows:]
			outer := sh.shape[:nd-sh.rows]
			for _, rp := range rowProgs(dt, sh.rows) {
				for _, layout := range []Layout{Contig, Transposed, Sliced, Broadcast} {
					c := Case{Name: fmt.Sprintf("FusedRows/%s/%v/%v/%v", rp.name, dt, sh.shape, layout), Tol: 8}
					for _, k := range rp.ins {
						var o Operand
						switch k {
						case 'x':
							o = Op(dt, sh.shape...).With(layout)
						case 'w':
							o = Op(dt, row...)
						case 's':
							o = Op(dt).With(Scalar)
						}
						c.In = append(c.In, o.Values(finite))
					}
					for i, k := range rp.outs {
						odt := rp.p.DType(rp.p.Outputs[i])
						switch k {
						case 'x':
							c.Out = append(c.Out, Op(odt, sh.shape...))
						case 'r':
							c.Out = append(c.Out, Op(odt, outer...))
						case 'c':
							c.Out = append(c.Out, Op(odt))
						}
					}
					p, shape := rp.p, sh.shape
					c.GPU = func(out, in []metal.View) ([]metal.Launch, error) { return metal.FusedRows(p, shape, out, in) }
					c.CPU = func(out, in []cpu.Buf) error { return cpu.RunFusedRows(p, shape, out, in) }
					cs = append(cs, c)
				}
			}
		}
	}
	return cs
}

func TestFusedRowsMatchTheCPU(t *testing.T) {
	requireHarness(t)
	cs := fusedRowsCases()
	// One binary for every generated library.
	seen := map[string]bool{}
	var libs []mslcpu.Library
	for _, c := range cs {
		_, gpuIn := materializeAll(rand.New(rand.NewSource(1)), c.In, false)
		_, gpuOut := materializeAll(rand.New(rand.NewSource(1)), c.Out, true)
		ls, err := c.GPU(views(gpuOut), views(gpuIn))
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if !seen[ls[0].Library] {
			seen[ls[0].Library] = true
			libs = append(libs, mslcpu.Library{Name: ls[0].Library, Source: ls[0].Source})
		}
	}
	if err := mslcpu.Prepare(libs...); err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		runCase(t, c)
		if t.Failed() {
			t.FailNow()
		}
	}
}

func TestFusedRowsRejectsBadPlans(t *testing.T) {
	p := rowProgs(array.Float32, 1)[0].p
	in := views(materializeOuts([]Operand{Op(array.Float32, 4, 300)}))
	for _, c := range []struct {
		name  string
		p     *fused.Program
		shape []int
		out   []Operand
		want  string
	}{
		{"too many row axes", rowProgs(array.Float32, 2)[0].p, []int{300}, []Operand{Op(array.Float32, 4, 300)}, "row axes"},
		{"short output", p, []int{4, 300}, []Operand{Op(array.Float32, 4, 30)}, "row-major elements"},
		{"output dtype", p, []int{4, 300}, []Operand{Op(array.Float16, 4, 300)}, "dtype"},
	} {
		_, err := metal.FusedRows(c.p, c.shape, views(materializeOuts(c.out)), in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
	// a fold in an elementwise program
	bad := fused.New([]array.DType{array.Float32}, []fused.Instr{{Kind: fused.Reduce, Op: uint8(opset.Sum), Args: []int{0}, DType: array.Float32}}, []int{1})
	out := views(materializeOuts([]Operand{Op(array.Float32, 4, 300)}))
	if _, err := metal.Fused(bad, out, in); err == nil || !strings.Contains(err.Error(), "elementwise program") {
		t.Errorf("a fold in an elementwise program: %v", err)
	}
}
