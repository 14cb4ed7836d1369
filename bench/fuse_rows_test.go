package bench

import (
	"fmt"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/internal/workload"
	"github.com/fathom-go/fathom/ops"
)

// The row functions of issue 22 written by hand from Max, Sum, Mean,
// Var and elementwise ops, keepdims over the last axis: compiled, they
// fuse row-wise (docs/compile.md, "What fuses").

func rowSoftmax(in ...*array.Array) []*array.Array {
	x := in[0]
	e := ops.Exp(ops.Sub(x, ops.KeepDims(ops.Max, x, -1)))
	return []*array.Array{ops.Div(e, ops.KeepDims(ops.Sum, e, -1))}
}

func rowLogSoftmax(in ...*array.Array) []*array.Array {
	x := in[0]
	d := ops.Sub(x, ops.KeepDims(ops.Max, x, -1))
	return []*array.Array{ops.Sub(d, ops.Log(ops.KeepDims(ops.Sum, ops.Exp(d), -1)))}
}

func rowLayerNorm(in ...*array.Array) []*array.Array {
	x, w, b := in[0], in[1], in[2]
	mu := ops.KeepDims(ops.Mean, x, -1)
	v := ops.KeepDims(ops.Var, x, -1)
	y := ops.Div(ops.Sub(x, mu), ops.Sqrt(ops.AddScalar(v, 1e-5)))
	return []*array.Array{ops.Add(ops.Mul(y, w), b)}
}

func rowRMSNorm(in ...*array.Array) []*array.Array {
	x, w := in[0], in[1]
	ms := ops.KeepDims(ops.Mean, ops.Square(x), -1)
	return []*array.Array{ops.Mul(ops.Mul(x, ops.Rsqrt(ops.AddScalar(ms, 1e-6))), w)}
}

// fuseRowsCase is one function measured three ways in one run: as
// written (uncompiled), compiled, and the built-in op it spells out.
type fuseRowsCase struct {
	name    string
	f       func(in ...*array.Array) []*array.Array
	builtin func(in ...*array.Array) *array.Array // nil where there is none
}

func fuseRowsCases() []fuseRowsCase {
	return []fuseRowsCase{
		{"softmax", rowSoftmax, func(in ...*array.Array) *array.Array { return ops.Softmax(in[0], -1) }},
		{"logsoftmax", rowLogSoftmax, func(in ...*array.Array) *array.Array { return ops.LogSoftmax(in[0], -1) }},
		{"layernorm", rowLayerNorm, func(in ...*array.Array) *array.Array { return ops.LayerNorm(in[0], in[1], in[2], 1e-5) }},
		{"rmsnorm", rowRMSNorm, func(in ...*array.Array) *array.Array { return ops.RMSNorm(in[0], in[1], 1e-6) }},
	}
}

// runFuseRows measures c on rows x cols float32: bytes are one read of x
// and one write of the result, the least any implementation moves.
func runFuseRows(b *testing.B, c fuseRowsCase, rows, cols int) {
	n := rows * cols
	in := []*array.Array{
		array.FromSlice(workload.RandF32(n, 1), rows, cols),
		array.FromSlice(workload.RandF32(cols, 2), cols),
		array.FromSlice(workload.RandF32(cols, 3), cols),
	}
	size := fmt.Sprintf("%dx%d", rows, cols)
	b.Run(c.name+"/uncompiled/"+size, func(b *testing.B) {
		b.SetBytes(int64(2 * 4 * n))
		for b.Loop() {
			mustEval(b, c.f(in...)[0])
		}
	})
	f := compile.Compile(c.f)
	defer f.Release()
	b.Run(c.name+"/compiled/"+size, func(b *testing.B) {
		b.SetBytes(int64(2 * 4 * n))
		for b.Loop() {
			mustEval(b, f.Call(in...)[0])
		}
	})
	if c.builtin != nil {
		b.Run(c.name+"/builtin/"+size, func(b *testing.B) {
			b.SetBytes(int64(2 * 4 * n))
			for b.Loop() {
				mustEval(b, c.builtin(in...))
			}
		})
	}
}

// BenchmarkFuseRows is the case (a hand-written softmax on
// 1024x1024 float32 ran slower compiled than uncompiled) and its
// siblings: the compiled form should be within 1.3x of the built-in op.
func BenchmarkFuseRows(b *testing.B) {
	for _, c := range fuseRowsCases() {
		runFuseRows(b, c, 1024, 1024)
	}
}

// BenchmarkFuseRowsShort measures rows around compile's minRowLen, below
// which rows are not fused row-wise: compiling must not be slower than
// not compiling at any row length.
func BenchmarkFuseRowsShort(b *testing.B) {
	c := fuseRowsCases()[0]
	for _, cols := range []int{10, 64, 128, 256} {
		runFuseRows(b, c, (1<<20)/cols, cols)
	}
}

// BenchmarkFuseRowsColumns is the softmax over axis 0, which is not
// rows: only its elementwise work fuses, and compiling must still not be
// slower than not compiling.
func BenchmarkFuseRowsColumns(b *testing.B) {
	c := fuseRowsCase{"softmax-axis0", func(in ...*array.Array) []*array.Array {
		x := in[0]
		e := ops.Exp(ops.Sub(x, ops.KeepDims(ops.Max, x, 0)))
		return []*array.Array{ops.Div(e, ops.KeepDims(ops.Sum, e, 0))}
	}, func(in ...*array.Array) *array.Array { return ops.Softmax(in[0], 0) }}
	runFuseRows(b, c, 1024, 1024)
}
