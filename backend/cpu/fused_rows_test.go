package cpu_test

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/internal/fused"
	"github.com/fathom-go/fathom/internal/opset"
	"github.com/fathom-go/fathom/internal/strided"
	"github.com/fathom-go/fathom/internal/workload"
)

// softmaxRows is the program compile makes of a softmax written with Max,
// Sub, Exp, Sum and Div over the last axis.
func softmaxRows(dt array.DType) *fused.Program {
	return fused.NewRows([]array.DType{dt}, []bool{false}, 1, []fused.Instr{
		{Kind: fused.Reduce, Op: uint8(opset.Max), Args: []int{0}, DType: dt},
		{Kind: fused.Binary, Op: uint8(opset.Sub), Args: []int{0, 1}, DType: dt},
		{Kind: fused.Unary, Op: uint8(opset.Exp), Args: []int{2}, DType: dt},
		{Kind: fused.Reduce, Op: uint8(opset.Sum), Args: []int{3}, DType: dt},
		{Kind: fused.Binary, Op: uint8(opset.Div), Args: []int{3, 4}, DType: dt},
	}, []int{5})
}

// BenchmarkFusedRowsSoftmax compares the row runner with cpu.Softmax on
// the same rows: the kernels alone, without graph or eval.
func BenchmarkFusedRowsSoftmax(b *testing.B) {
	const rows, cols = 1024, 1024
	x := bufOf(workload.RandF64(rows*cols, 1), array.Float32, []int{rows, cols})
	out := bufOf(make([]float64, rows*cols), array.Float32, []int{rows, cols})
	p := softmaxRows(array.Float32)
	b.Run("rows", func(b *testing.B) {
		b.SetBytes(2 * 4 * rows * cols)
		for b.Loop() {
			if err := cpu.RunFusedRows(p, []int{rows, cols}, []cpu.Buf{out}, []cpu.Buf{x}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("softmax", func(b *testing.B) {
		b.SetBytes(2 * 4 * rows * cols)
		for b.Loop() {
			if err := cpu.Softmax(out, x, 1); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// layerNormRows is the program compile makes of a layer norm written
// with Mean, Var and elementwise ops over the last axis: x, eps (per
// row), w, b.
func layerNormRows(dt array.DType) *fused.Program {
	bin := func(op opset.BinaryOp, a, b int) fused.Instr {
		return fused.Instr{Kind: fused.Binary, Op: uint8(op), Args: []int{a, b}, DType: dt}
	}
	sum := func(a int) fused.Instr {
		return fused.Instr{Kind: fused.Reduce, Op: uint8(opset.Sum), Args: []int{a}, DType: dt}
	}
	return fused.NewRows([]array.DType{dt, dt, dt, dt}, []bool{false, true, false, false}, 1, []fused.Instr{
		sum(0), {Kind: fused.Count, DType: dt}, bin(opset.Div, 4, 5), bin(opset.Sub, 0, 6),
		{Kind: fused.Unary, Op: uint8(opset.Square), Args: []int{7}, DType: dt}, sum(8), {Kind: fused.Count, DType: dt},
		bin(opset.Div, 9, 10), bin(opset.Add, 11, 1), {Kind: fused.Unary, Op: uint8(opset.Sqrt), Args: []int{12}, DType: dt},
		bin(opset.Div, 7, 13), bin(opset.Mul, 14, 2), bin(opset.Add, 15, 3),
	}, []int{16})
}

// BenchmarkFusedRowsLayerNorm compares the row runner with cpu.LayerNorm
// on the same rows, as BenchmarkFusedRowsSoftmax.
func BenchmarkFusedRowsLayerNorm(b *testing.B) {
	const rows, cols = 1024, 1024
	x := bufOf(workload.RandF64(rows*cols, 1), array.Float32, []int{rows, cols})
	eps := bufOf([]float64{1e-5}, array.Float32, []int{})
	w := bufOf(workload.RandF64(cols, 2), array.Float32, []int{cols})
	bias := bufOf(workload.RandF64(cols, 3), array.Float32, []int{cols})
	out := bufOf(make([]float64, rows*cols), array.Float32, []int{rows, cols})
	p := layerNormRows(array.Float32)
	b.Run("rows", func(b *testing.B) {
		b.SetBytes(2 * 4 * rows * cols)
		for b.Loop() {
			if err := cpu.RunFusedRows(p, []int{rows, cols}, []cpu.Buf{out}, []cpu.Buf{x, eps, w, bias}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("layernorm", func(b *testing.B) {
		b.SetBytes(2 * 4 * rows * cols)
		for b.Loop() {
			if err := cpu.LayerNorm(out, x, w, bias, 1e-5); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// refRows evaluates row-wise program p over rows of length l in float64,
// one row at a time and one instruction at a time: the plain meaning the
// runner's passes, kept values, fused kernels and reciprocals must agree
// with. ins are row-major float64 values broadcast to rows x l (per-row
// inputs have rows values).
func refRows(p *fused.Program, rows, l int, ins [][]float64) [][]float64 {
	nIn := len(p.InDTypes)
	outs := make([][]float64, len(p.Outputs))
	for r := range rows {
		regs := make([][]float64, nIn+len(p.Instrs))
		for i, v := range ins {
			if p.InRow[i] {
				regs[i] = []float64{v[r%len(v)]}
			} else if len(v) == l {
				regs[i] = v
			} else {
				regs[i] = v[r*l : (r+1)*l]
			}
		}
		at := func(a, j int) float64 {
			if len(regs[a]) == 1 {
				return regs[a][0]
			}
			return regs[a][j]
		}
		for k, in := range p.Instrs {
			x := nIn + k
			if in.Kind == fused.Count {
				regs[x] = []float64{float64(max(l-in.N, 0))}
				continue
			}
			if in.Kind == fused.Reduce {
				acc := map[opset.ReduceOp]float64{opset.Sum: 0, opset.Prod: 1, opset.Max: math.Inf(-1), opset.Min: math.Inf(1)}[opset.ReduceOp(in.Op)]
				for j := range l {
					v := at(in.Args[0], j)
					switch opset.ReduceOp(in.Op) {
					case opset.Sum:
						acc += v
					case opset.Prod:
						acc *= v
					case opset.Max:
						acc = math.Max(acc, v)
					case opset.Min:
						acc = math.Min(acc, v)
					}
				}
				regs[x] = []float64{acc}
				continue
			}
			n := 1
			if !p.RowLevel(x) {
				n = l
			}
			regs[x] = make([]float64, n)
			for j := range n {
				a := at(in.Args[0], j)
				var v float64
				switch {
				case in.Kind == fused.Unary && opset.UnaryOp(in.Op) == opset.Exp:
					v = math.Exp(a)
				case in.Kind == fused.Unary && opset.UnaryOp(in.Op) == opset.Square:
					v = a * a
				case in.Kind == fused.Unary && opset.UnaryOp(in.Op) == opset.Rsqrt:
					v = 1 / math.Sqrt(a)
				case in.Kind == fused.Unary && opset.UnaryOp(in.Op) == opset.Sqrt:
					v = math.Sqrt(a)
				case in.Kind == fused.Unary && opset.UnaryOp(in.Op) == opset.Log:
					v = math.Log(a)
				case in.Kind == fused.Binary:
					b := at(in.Args[1], j)
					v = map[opset.BinaryOp]float64{opset.Add: a + b, opset.Sub: a - b, opset.Mul: a * b, opset.Div: a / b}[opset.BinaryOp(in.Op)]
				default:
					panic("refRows: " + in.Name())
				}
				regs[x][j] = v
			}
		}
		for i, o := range p.Outputs {
			outs[i] = append(outs[i], regs[o]...)
		}
	}
	return outs
}

// TestFusedRowsMatchFloat64Reference runs row programs that take each of
// the runner's paths (a shifted Exp summed in its kernel, a value kept in
// an output's row or a row buffer or computed again, products done by
// their readers, a division by a per-row value, per-row outputs, counts)
// in float32 and float64 against refRows.
func TestFusedRowsMatchFloat64Reference(t *testing.T) {
	for _, dt := range []array.DType{array.Float32, array.Float64} {
		un := func(op opset.UnaryOp, a int) fused.Instr {
			return fused.Instr{Kind: fused.Unary, Op: uint8(op), Args: []int{a}, DType: dt}
		}
		bin := func(op opset.BinaryOp, a, b int) fused.Instr {
			return fused.Instr{Kind: fused.Binary, Op: uint8(op), Args: []int{a, b}, DType: dt}
		}
		fold := func(op opset.ReduceOp, a int) fused.Instr {
			return fused.Instr{Kind: fused.Reduce, Op: uint8(op), Args: []int{a}, DType: dt}
		}
		progs := map[string]*fused.Program{
			"softmax": softmaxRows(dt),
			// as compile writes it: the centred values computed again in
			// the last pass, by chains where the machine has them
			"layernorm-compiled": layerNormRows(dt),
			// layer norm: x, eps (per row), w, b; outputs y, mean, count
			"layernorm": fused.NewRows([]array.DType{dt, dt, dt, dt}, []bool{false, true, false, false}, 1, []fused.Instr{
				fold(opset.Sum, 0), {Kind: fused.Count, DType: dt}, bin(opset.Div, 4, 5), bin(opset.Sub, 0, 6),
				un(opset.Square, 7), fold(opset.Sum, 8), {Kind: fused.Count, DType: dt, N: 1}, bin(opset.Div, 9, 10),
				bin(opset.Add, 11, 1), un(opset.Rsqrt, 12), bin(opset.Mul, 7, 13), bin(opset.Mul, 14, 2), bin(opset.Add, 15, 3),
			}, []int{16, 6, 10}),
			// a value read two passes later, and a product with a per-row
			// factor
			"three-passes": fused.NewRows([]array.DType{dt, dt}, []bool{false, false}, 1, []fused.Instr{
				un(opset.Exp, 0), fold(opset.Max, 2), bin(opset.Div, 2, 3), fold(opset.Sum, 4), bin(opset.Mul, 2, 5),
				bin(opset.Add, 6, 1), fold(opset.Min, 7), un(opset.Log, 8), bin(opset.Mul, 4, 9), bin(opset.Add, 10, 0),
			}, []int{11, 8}),
		}
		for name, p := range progs {
			for _, l := range []int{300, 3000, 40000} { // one tile, several, past the row buffers
				const rows = 7
				r := rand.New(rand.NewPCG(uint64(l), 3))
				ins := make([][]float64, len(p.InDTypes))
				bufs := make([]cpu.Buf, len(p.InDTypes))
				for i := range ins {
					n := rows * l
					shape := []int{rows, l}
					switch {
					case p.InRow[i]:
						n, shape = 1, []int{}
					case i > 1:
						n, shape = l, []int{l}
					}
					ins[i] = make([]float64, n)
					for j := range ins[i] {
						ins[i][j] = 2*r.Float64() - 1
						if p.InRow[i] {
							ins[i][j] = 1e-3
						}
					}
					bufs[i] = bufOf(ins[i], dt, shape)
				}
				want := refRows(p, rows, l, ins)
				outs := make([]cpu.Buf, len(p.Outputs))
				for i, o := range p.Outputs {
					n := rows * l
					if p.RowLevel(o) {
						n = len(want[i])
					}
					outs[i] = bufOf(make([]float64, n), dt, []int{n})
				}
				if err := cpu.RunFusedRows(p, []int{rows, l}, outs, bufs); err != nil {
					t.Fatalf("%s/%v/%d: %v", name, dt, l, err)
				}
				tol := 1e-10
				if dt == array.Float32 {
					tol = 2e-4
				}
				for i := range outs {
					got := valuesOf(outs[i])
					for j, w := range want[i] {
						if math.Abs(got[j]-w) > tol*math.Max(1, math.Abs(w)) {
							t.Fatalf("%s/%v/%d: output %d element %d = %v, want %v", name, dt, l, i, j, got[j], w)
						}
					}
				}
			}
		}
	}
}

// TestFusedRowsLayerNormLargeMean runs layer norm over rows of 1e4 plus
// noise against numpy's in float64 (testdata/gen_rows_precision.py): the
// variance is taken from the centred values, as the program says, so
// the normalised values keep float32's precision of the noise.
func TestFusedRowsLayerNormLargeMean(t *testing.T) {
	raw, err := os.ReadFile("testdata/rows_precision.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Rows, Cols int
		Eps        float64
		X, W, B, Y []float64
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	f32 := array.Float32
	shape := []int{ref.Rows, ref.Cols}
	out := bufOf(make([]float64, len(ref.Y)), f32, shape)
	ins := []cpu.Buf{bufOf(ref.X, f32, shape), bufOf([]float64{ref.Eps}, f32, []int{}), bufOf(ref.W, f32, []int{ref.Cols}), bufOf(ref.B, f32, []int{ref.Cols})}
	if err := cpu.RunFusedRows(layerNormRows(f32), shape, []cpu.Buf{out}, ins); err != nil {
		t.Fatal(err)
	}
	builtin := bufOf(make([]float64, len(ref.Y)), f32, shape)
	if err := cpu.LayerNorm(builtin, ins[0], ins[2], ins[3], ref.Eps); err != nil {
		t.Fatal(err)
	}
	worst := func(b cpu.Buf) (float64, int) {
		e, at := 0.0, 0
		for i, v := range valuesOf(b) {
			if d := math.Abs(v - ref.Y[i]); d > e {
				e, at = d, i
			}
		}
		return e, at
	}
	got, at := worst(out)
	want, _ := worst(builtin)
	// the values are about 1: float32 sums of 1e4s put the mean off by
	// up to ~1e-3 of the noise, the built-in's error too
	if got > 5e-3 || got > 2*want+1e-4 {
		t.Errorf("element %d off numpy by %.3g (ops.LayerNorm's worst: %.3g)", at, got, want)
	}
}

func bufOf(v []float64, dt array.DType, shape []int) cpu.Buf {
	b := make([]byte, dt.Size()*len(v))
	for i, x := range v {
		if dt == array.Float32 {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(x)))
		} else {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
		}
	}
	return cpu.Buf{Data: b, DType: dt, Shape: shape, Strides: strided.RowMajor(shape)}
}

func valuesOf(b cpu.Buf) []float64 {
	v := make([]float64, b.Size())
	for i := range v {
		if b.DType == array.Float32 {
			v[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b.Data[4*i:])))
		} else {
			v[i] = math.Float64frombits(binary.LittleEndian.Uint64(b.Data[8*i:]))
		}
	}
	return v
}

func TestFusedRowsEdgeCases(t *testing.T) {
	p := softmaxRows(array.Float32)
	empty := bufOf(nil, array.Float32, []int{3, 0})
	if err := cpu.RunFusedRows(p, []int{3, 0}, []cpu.Buf{empty}, []cpu.Buf{empty}); err == nil || !strings.Contains(err.Error(), "no identity") {
		t.Errorf("Max over empty rows: %v, want an error", err)
	}
	none := bufOf(nil, array.Float32, []int{0, 5})
	if err := cpu.RunFusedRows(p, []int{0, 5}, []cpu.Buf{none}, []cpu.Buf{none}); err != nil {
		t.Errorf("no rows: %v", err)
	}
	x := bufOf(make([]float64, 10), array.Float32, []int{10})
	if err := cpu.RunFusedRows(fused.NewRows(p.InDTypes, p.InRow, 2, p.Instrs, p.Outputs), []int{10}, []cpu.Buf{x}, []cpu.Buf{x}); err == nil {
		t.Errorf("2 row axes of a 1-d shape: no error")
	}
	// a sum over empty rows is 0, and its count 0
	f32 := array.Float32
	sum := fused.NewRows([]array.DType{f32}, []bool{false}, 1, []fused.Instr{
		{Kind: fused.Reduce, Op: uint8(opset.Sum), Args: []int{0}, DType: f32},
		{Kind: fused.Count, DType: f32},
		{Kind: fused.Binary, Op: uint8(opset.Add), Args: []int{1, 2}, DType: f32},
	}, []int{3})
	out := bufOf([]float64{7, 7, 7}, f32, []int{3})
	if err := cpu.RunFusedRows(sum, []int{3, 0}, []cpu.Buf{out}, []cpu.Buf{empty}); err != nil {
		t.Fatal(err)
	}
	if v := valuesOf(out); v[0] != 0 || v[1] != 0 || v[2] != 0 {
		t.Errorf("sum plus count of empty rows = %v, want zeros", v)
	}
}
