package ops_test

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// Sizes for the size-limit table. Every case is refused before any
// memory is touched: shapes that overflow are refused at the op call,
// and the smallest allocation asked for at Eval is 2^40 bytes (4 TiB for
// 2^40 float32), far above the memory of any machine these tests run on,
// so the refusal does not depend on how much memory is free.
const (
	tera  = 1 << 40 // elements of a result refused at Eval
	g31   = 1 << 31
	e62   = "4611686018427387904" // 2^62 elements of float32: 2^64 bytes
	e61   = "2305843009213693952" // 2^61
	half  = math.MaxInt/2 + 1     // two of these overflow an int
	slack = 1 << 28               // the most the test's heap may grow
)

// shp formats a shape as the messages do.
func shp(d ...int) string { return fmt.Sprint(d) }

// hugeF32 and the other helpers return views of a scalar broadcast to a
// huge shape: they have no memory of their own.
func hugeF32(shape ...int) *array.Array {
	return ops.BroadcastTo(array.Scalar(float32(1)), shape...)
}
func hugeU8(shape ...int) *array.Array { return ops.BroadcastTo(array.Scalar(uint8(1)), shape...) }
func hugeIdx(shape ...int) *array.Array {
	return ops.BroadcastTo(array.Scalar(int32(0)), shape...)
}

// sizeCase is an op applied to arguments that give a result too large:
// Op is the *array.Error's Op and Parts the text its message must hold
// (the shapes or values involved and what is wrong with them).
type sizeCase struct {
	name  string
	op    string
	parts []string
	build func() *array.Array
}

// tooMany is the message of a shape whose element count overflows.
func tooMany(shape string) []string { return []string{shape, "too many elements"} }

// tooBig is the message of a shape whose byte count overflows: the shape,
// the element count and the dtype.
func tooBig(shape, n, dt string) []string { return []string{shape, n, dt, "bytes"} }

// atCall are refused when the op is called: (a) the element count
// overflows, or (b) the byte count does though the element count fits.
var atCall = []sizeCase{
	// creation
	{"Zeros/elems", "ops.Zeros", tooMany(shp(1<<32, 1<<32)), func() *array.Array { return ops.Zeros([]int{1 << 32, 1 << 32}, array.Float32) }},
	{"Zeros/bytes", "ops.Zeros", tooBig(shp(g31, g31), e62, "float32"), func() *array.Array { return ops.Zeros([]int{g31, g31}, array.Float32) }},
	{"Ones/elems", "ops.Ones", tooMany(shp(1<<62, 4)), func() *array.Array { return ops.Ones([]int{1 << 62, 4}, array.Int32) }},
	{"Ones/bytes", "ops.Ones", tooBig(shp(1<<62), e62, "float32"), func() *array.Array { return ops.Ones([]int{1 << 62}, array.Float32) }},
	{"Full/elems", "ops.Full", tooMany(shp(3, 1<<62)), func() *array.Array { return ops.Full([]int{3, 1 << 62}, 7, array.Float32) }},
	{"Full/bytes", "ops.Full", tooBig(shp(1<<61), e61, "complex64"), func() *array.Array { return ops.Full([]int{1 << 61}, 7, array.Complex64) }},
	{"Arange/count", "ops.Arange", []string{"1e+300", "too many elements"}, func() *array.Array { return ops.Arange(0, 1e300, 1, array.Float32) }},
	{"Arange/tinystep", "ops.Arange", []string{"1e-300", "too many elements"}, func() *array.Array { return ops.Arange(0, 1, 1e-300, array.Float64) }},
	{"Arange/infrange", "ops.Arange", []string{"-1e+308", "too many elements"}, func() *array.Array { return ops.Arange(-1e308, 1e308, 1, array.Uint8) }},
	{"Arange/past2^53", "ops.Arange", []string{"too many elements"}, func() *array.Array { return ops.Arange(0, 1<<62, 1, array.Uint8) }},
	{"Linspace/bytes", "ops.Linspace", tooBig(shp(1<<61), e61, "float64"), func() *array.Array { return ops.Linspace(0, 1, 1<<61, array.Float64) }},
	{"Linspace/maxint", "ops.Linspace", tooBig(shp(math.MaxInt), strconv.Itoa(math.MaxInt), "float32"), func() *array.Array { return ops.Linspace(0, 1, math.MaxInt, array.Float32) }},
	{"Eye/elems", "ops.Eye", tooMany(shp(1<<32, 1<<32)), func() *array.Array { return ops.Eye(1<<32, 1<<32, 0, array.Float32) }},
	{"Eye/bytes", "ops.Eye", tooBig(shp(g31, g31), e62, "float32"), func() *array.Array { return ops.Eye(g31, g31, 0, array.Float32) }},

	// broadcasts and elementwise ops on them
	{"BroadcastTo/elems", "ops.BroadcastTo", tooMany(shp(1<<32, 1<<32)), func() *array.Array { return hugeF32(1<<32, 1<<32) }},
	{"BroadcastTo/bytes", "ops.BroadcastTo", tooBig(shp(g31, g31), e62, "float32"), func() *array.Array { return hugeF32(g31, g31) }},
	{"Add/elems", "Add", tooMany(shp(tera, tera)), func() *array.Array { return ops.Add(hugeU8(tera, 1), hugeU8(1, tera)) }},
	{"Add/bytes", "Add", tooBig(shp(g31, g31), e62, "float32"), func() *array.Array { return ops.Add(hugeF32(g31, 1), hugeF32(1, g31)) }},
	{"Where/elems", "Where", tooMany(shp(tera, tera)), func() *array.Array {
		return ops.Where(ops.BroadcastTo(array.Scalar(true), tera, 1), hugeF32(1, tera), array.Scalar(float32(0)))
	}},
	{"AsType/bytes", "AsType", tooBig(shp(1<<62), e62, "float32"), func() *array.Array { return ops.AsType(hugeU8(1<<62), array.Float32) }},

	// products
	{"MatMul/elems", "ops.MatMul", tooMany(shp(tera, tera, 2, 2)), func() *array.Array { return ops.MatMul(hugeF32(tera, 1, 2, 2), hugeF32(1, tera, 2, 2)) }},
	{"MatMul/bytes", "ops.MatMul", tooBig(shp(1<<30, 1<<30, 2, 2), e62, "float32"), func() *array.Array {
		return ops.MatMul(hugeF32(1<<30, 1, 2, 2), hugeF32(1, 1<<30, 2, 2))
	}},
	{"Outer/elems", "ops.Outer", tooMany(shp(tera, tera)), func() *array.Array { return ops.Outer(hugeF32(tera), hugeF32(tera)) }},
	{"Outer/bytes", "ops.Outer", tooBig(shp(g31, g31), e62, "float32"), func() *array.Array { return ops.Outer(hugeF32(g31), hugeF32(g31)) }},
	{"Tensordot/elems", "ops.Tensordot", tooMany(shp(tera, tera)), func() *array.Array {
		return ops.Tensordot(hugeF32(tera, 2), hugeF32(2, tera), []int{1}, []int{0})
	}},
	// a is empty, so its size fits, but the product of its free axes
	// does not: it must not wrap to a negative matrix size.
	{"Tensordot/emptyfree", "ops.Tensordot", tooMany(shp(3, 1<<62, 2)), func() *array.Array {
		return ops.Tensordot(ops.Zeros([]int{0, 3, 1 << 62}, array.Float32), ops.Zeros([]int{0, 2}, array.Float32), []int{0}, []int{0})
	}},

	// joins
	{"Concatenate/sum", "ops.Concatenate", []string{shp(half), "too many elements"}, func() *array.Array {
		return ops.Concatenate([]*array.Array{hugeU8(half), hugeU8(half)}, 0)
	}},
	{"Concatenate/elems", "ops.Concatenate", tooMany(shp(4, 1<<61)), func() *array.Array {
		return ops.Concatenate([]*array.Array{hugeU8(2, 1<<61), hugeU8(2, 1<<61)}, 0)
	}},
	{"Concatenate/bytes", "ops.Concatenate", tooBig(shp(1<<61), e61, "float32"), func() *array.Array {
		return ops.Concatenate([]*array.Array{hugeF32(1 << 60), hugeF32(1 << 60)}, 0)
	}},
	{"Stack/elems", "ops.Stack", tooMany(shp(2, half)), func() *array.Array { return ops.Stack([]*array.Array{hugeU8(half), hugeU8(half)}, 0) }},
	{"Stack/bytes", "ops.Stack", tooBig(shp(2, 1<<60), e61, "float32"), func() *array.Array {
		return ops.Stack([]*array.Array{hugeF32(1 << 60), hugeF32(1 << 60)}, 0)
	}},

	// derived dimensions
	{"Pad/sum", "ops.Pad", []string{"[[1 1]]", shp(math.MaxInt - 1), "too many elements"}, func() *array.Array {
		return ops.Pad(hugeU8(math.MaxInt-1), [][2]int{{1, 1}}, 0)
	}},
	{"Pad/widths", "ops.Pad", []string{fmt.Sprint([][2]int{{math.MaxInt, math.MaxInt}}), "too many elements"}, func() *array.Array {
		return ops.Pad(ops.Zeros([]int{2}, array.Float32), [][2]int{{math.MaxInt, math.MaxInt}}, 0)
	}},
	{"Pad/elems", "ops.Pad", tooMany(shp(tera+2, tera+2)), func() *array.Array {
		return ops.Pad(ops.Zeros([]int{2, 2}, array.Float32), [][2]int{{tera, 0}, {0, tera}}, 0)
	}},
	{"Pad/bytes", "ops.Pad", tooBig(shp(1<<61+2), strconv.Itoa(1<<61+2), "float32"), func() *array.Array {
		return ops.Pad(ops.Zeros([]int{2}, array.Float32), [][2]int{{1 << 61, 0}}, 0)
	}},
	{"Tile/axis", "ops.Tile", []string{"reps [4611686018427387904]", shp(3), "too many elements"}, func() *array.Array {
		return ops.Tile(ops.Ones([]int{3}, array.Float32), 1<<62)
	}},
	{"Tile/elems", "ops.Tile", append(tooMany(shp(2*tera, 2*tera)), shp(tera, tera)), func() *array.Array {
		return ops.Tile(ops.Ones([]int{2, 2}, array.Float32), tera, tera)
	}},
	{"Tile/bytes", "ops.Tile", append(tooBig(shp(1<<62), e62, "float32"), shp(1<<61)), func() *array.Array {
		return ops.Tile(ops.Ones([]int{2}, array.Float32), 1<<61)
	}},
	{"Repeat/axis", "ops.Repeat", []string{"4611686018427387904 repeats", shp(3), "too many elements"}, func() *array.Array {
		return ops.Repeat(ops.Ones([]int{3}, array.Float32), 1<<62, 0)
	}},
	{"Repeat/elems", "ops.Repeat", tooMany(shp(g31, tera)), func() *array.Array { return ops.Repeat(hugeF32(2, tera), 1<<30, 0) }},
	{"Repeat/bytes", "ops.Repeat", tooBig(shp(1<<62), e62, "float32"), func() *array.Array {
		return ops.Repeat(ops.Ones([]int{2}, array.Float32), 1<<61, 0)
	}},
	{"Reshape/elems", "ops.Reshape", tooMany(shp(tera, tera)), func() *array.Array { return ops.Reshape(array.Scalar(float32(1)), tera, tera) }},

	// gathers and scatters
	{"Take/elems", "ops.Take", tooMany(shp(1<<30, tera)), func() *array.Array { return ops.Take(hugeU8(2, tera), hugeIdx(1<<30), 0) }},
	{"Take/bytes", "ops.Take", tooBig(shp(g31, g31), e62, "float32"), func() *array.Array { return ops.Take(hugeF32(2, g31), hugeIdx(g31), 0) }},
	{"TakeAlongAxis/elems", "ops.TakeAlongAxis", tooMany(shp(tera, tera)), func() *array.Array {
		return ops.TakeAlongAxis(hugeU8(tera, 1), hugeIdx(1, tera), 1)
	}},
	{"TakeAlongAxis/bytes", "ops.TakeAlongAxis", tooBig(shp(g31, g31), e62, "float32"), func() *array.Array {
		return ops.TakeAlongAxis(hugeF32(g31, 1), hugeIdx(1, g31), 1)
	}},
	// a is empty along the axis, so its size fits; the indices broadcast
	// with it do not, and must not wrap to an empty index set.
	{"PutAlongAxis/elems", "ops.PutAlongAxis", tooMany(shp(tera, tera)), func() *array.Array {
		return ops.PutAlongAxis(ops.Zeros([]int{tera, 0}, array.Float32), hugeIdx(1, tera), array.Scalar(float32(1)), 1)
	}},

	// reductions of empty arrays whose other axes are huge
	{"Sum/elems", "Sum", tooMany(shp(tera, tera)), func() *array.Array { return ops.Sum(ops.Zeros([]int{0, tera, tera}, array.Float32), 0) }},
	{"Sum/bytes", "Sum", tooBig(shp(g31, g31), e62, "float32"), func() *array.Array { return ops.Sum(ops.Zeros([]int{0, g31, g31}, array.Float32), 0) }},
	{"KeepDims/elems", "Sum", tooMany(shp(tera, tera)), func() *array.Array {
		return ops.KeepDims(ops.Sum, ops.Zeros([]int{0, tera, tera}, array.Float32), 0)
	}},
}

// atEval build without complaint and fail at Eval with an *array.Error
// wrapping ErrOutOfMemory: each asks for at least 2^40 bytes. Op is the
// primitive that allocates: for composite ops (Tile and Repeat are a
// Reshape of a broadcast, Stack a Concatenate, Outer and Tensordot a
// MatMul, Mean a Sum) it is not the function called. Parts hold the
// result's shape.
var atEval = []sizeCase{
	// creation from a scalar: filling these would take hours
	{"Zeros", "Full", []string{shp(tera)}, func() *array.Array { return ops.Zeros([]int{tera}, array.Float32) }},
	// the most bytes an int counts: the size class the pool rounds
	// this up to must not overflow on the way to the refusal
	{"Zeros/maxint", "Full", []string{shp(math.MaxInt), "uint8"}, func() *array.Array { return ops.Zeros([]int{math.MaxInt}, array.Uint8) }},
	{"Ones", "Full", []string{shp(tera, 4), "int32"}, func() *array.Array { return ops.Ones([]int{tera, 4}, array.Int32) }},
	{"Full", "Full", []string{shp(tera), "float64"}, func() *array.Array { return ops.Full([]int{tera}, 3, array.Float64) }},
	{"ZerosLike", "FullLike", []string{shp(tera)}, func() *array.Array { return ops.ZerosLike(hugeF32(tera)) }},
	{"OnesLike", "FullLike", []string{shp(tera)}, func() *array.Array { return ops.OnesLike(hugeF32(tera)) }},
	{"FullLike", "FullLike", []string{shp(tera)}, func() *array.Array { return ops.FullLike(hugeF32(tera), 5) }},
	{"Arange", "Arange", []string{shp(tera)}, func() *array.Array { return ops.Arange(0, tera, 1, array.Float32) }},
	{"Arange/2^53", "Arange", []string{shp(1 << 53)}, func() *array.Array { return ops.Arange(0, 1<<53, 1, array.Uint8) }},
	{"Linspace", "Linspace", []string{shp(tera)}, func() *array.Array { return ops.Linspace(0, 1, tera, array.Float32) }},
	{"Eye", "Eye", []string{shp(1<<20, 1<<20)}, func() *array.Array { return ops.Eye(1<<20, 1<<20, 0, array.Float32) }},

	// selection and order statistics, through the ops they are built on
	{"Partition", "Sort", []string{shp(tera)}, func() *array.Array { return ops.Partition(hugeF32(tera), 3, 0) }},
	{"ArgPartition", "ArgSort", []string{shp(tera)}, func() *array.Array { return ops.ArgPartition(hugeF32(tera), 3, 0) }},
	{"Median", "Sort", []string{shp(tera, 2)}, func() *array.Array { return ops.Median(hugeF32(2, tera), 0) }},
	{"Quantile", "Sort", []string{shp(tera, 2)}, func() *array.Array { return ops.Quantile(hugeF32(2, tera), 0.3, 0) }},
	{"Diff", "Sub", []string{shp(tera - 1)}, func() *array.Array { return ops.Diff(hugeF32(tera), 1, 0) }},
	{"LogCumSumExp", "LogCumSumExp", []string{shp(tera)}, func() *array.Array { return ops.LogCumSumExp(hugeF32(tera), 0, false, true) }},

	// copies of broadcasts
	{"Copy", "Copy", []string{shp(tera)}, func() *array.Array { return ops.Copy(hugeF32(tera)) }},
	{"Add", "Add", []string{shp(tera)}, func() *array.Array { return ops.Add(hugeF32(tera), array.Scalar(float32(1))) }},
	{"AddScalar", "Add", []string{shp(tera)}, func() *array.Array { return ops.AddScalar(hugeF32(tera), 2) }},
	{"Where", "Where", []string{shp(tera)}, func() *array.Array {
		return ops.Where(ops.BroadcastTo(array.Scalar(true), tera), array.Scalar(float32(1)), array.Scalar(float32(2)))
	}},
	{"AsType", "AsType", []string{shp(tera), "float64"}, func() *array.Array { return ops.AsType(hugeU8(tera), array.Float64) }},
	{"Exp", "Exp", []string{shp(tera)}, func() *array.Array { return ops.Exp(hugeF32(tera)) }},

	// products
	{"MatMul/batch", "MatMul", []string{shp(tera, 2, 2)}, func() *array.Array {
		return ops.MatMul(ops.BroadcastTo(ops.Ones([]int{1, 2, 2}, array.Float32), tera, 2, 2), ops.Ones([]int{2, 2}, array.Float32))
	}},
	{"Outer", "MatMul", []string{shp(1<<20, 1<<20)}, func() *array.Array { return ops.Outer(hugeF32(1<<20), hugeF32(1<<20)) }},
	{"Tensordot", "MatMul", []string{shp(1<<20, 1<<20)}, func() *array.Array {
		return ops.Tensordot(hugeF32(1<<20, 2), hugeF32(2, 1<<20), []int{1}, []int{0})
	}},

	// joins and derived dimensions
	{"Concatenate", "Concatenate", []string{shp(tera)}, func() *array.Array {
		return ops.Concatenate([]*array.Array{hugeF32(tera / 2), hugeF32(tera / 2)}, 0)
	}},
	{"Stack", "Concatenate", []string{shp(2, tera/2)}, func() *array.Array {
		return ops.Stack([]*array.Array{hugeF32(tera / 2), hugeF32(tera / 2)}, 0)
	}},
	{"Pad", "Pad", []string{shp(tera + 2)}, func() *array.Array {
		return ops.Pad(ops.Zeros([]int{2}, array.Float32), [][2]int{{tera, 0}}, 0)
	}},
	{"Tile", "Reshape", []string{shp(2 * tera)}, func() *array.Array { return ops.Tile(ops.Ones([]int{2}, array.Float32), tera) }},
	{"Repeat", "Reshape", []string{shp(2 * tera)}, func() *array.Array { return ops.Repeat(ops.Ones([]int{2}, array.Float32), tera, 0) }},
	{"Reshape", "Reshape", []string{shp(2 * tera)}, func() *array.Array {
		return ops.Reshape(ops.BroadcastTo(ops.Ones([]int{1, 2}, array.Float32), tera, 2), -1)
	}},

	// gathers and scatters with huge index shapes
	{"Take", "Take", []string{shp(tera)}, func() *array.Array { return ops.Take(ops.Ones([]int{4}, array.Float32), hugeIdx(tera), 0) }},
	{"TakeAlongAxis", "TakeAlongAxis", []string{shp(tera, 1)}, func() *array.Array {
		return ops.TakeAlongAxis(hugeF32(tera, 4), hugeIdx(tera, 1), 1)
	}},
	{"PutAlongAxis", "PutAlongAxis", []string{shp(tera, 4)}, func() *array.Array {
		return ops.PutAlongAxis(hugeF32(tera, 4), hugeIdx(tera, 1), array.Scalar(float32(1)), 1)
	}},

	// reductions, scans and sorts with huge results
	{"Sum", "Sum", []string{shp(tera)}, func() *array.Array { return ops.Sum(hugeF32(2, tera), 0) }},
	{"KeepDims", "Sum", []string{shp(tera)}, func() *array.Array { return ops.KeepDims(ops.Sum, hugeF32(2, tera), 0) }},
	{"Mean", "Sum", []string{shp(tera)}, func() *array.Array { return ops.Mean(hugeF32(2, tera), 0) }},
	{"Max", "Max", []string{shp(tera)}, func() *array.Array { return ops.Max(hugeF32(2, tera), 0) }},
	{"ArgMax", "ArgMax", []string{shp(tera), "int32"}, func() *array.Array { return ops.ArgMax(hugeF32(2, tera), 0) }},
	{"LogSumExp", "LogSumExp", []string{shp(tera)}, func() *array.Array { return ops.LogSumExp(hugeF32(tera, 2), 1) }},
	{"CumSum", "CumSum", []string{shp(tera)}, func() *array.Array { return ops.CumSum(hugeF32(tera), 0, false, true) }},
	{"Softmax", "Softmax", []string{shp(tera)}, func() *array.Array { return ops.Softmax(hugeF32(tera)) }},
	{"Sort", "Sort", []string{shp(tera)}, func() *array.Array { return ops.Sort(hugeF32(tera), 0) }},
	{"ArgSort", "ArgSort", []string{shp(tera)}, func() *array.Array { return ops.ArgSort(hugeF32(tera), 0) }},
	{"TopK", "TopK", []string{shp(tera, 2)}, func() *array.Array { return ops.TopK(hugeF32(tera, 4), 2, 1) }},

	// linear algebra: results, and float64 scratch for one huge matrix
	// (a broadcast input is a huge matrix with no memory of its own)
	{"LinalgInv", "LinalgInv", []string{shp(tera, 2, 2)}, func() *array.Array { return ops.LinalgInv(ops.BroadcastTo(array.Scalar(1.0), tera, 2, 2)) }},
	{"LinalgSolve/scratch", "linalg.Solve", []string{shp(1<<20, 1<<20), "float64 copy of one matrix"}, func() *array.Array {
		return ops.LinalgSolve(ops.BroadcastTo(array.Scalar(1.0), 1<<20, 1<<20), ops.Ones([]int{1 << 20}, array.Float64))
	}},
	{"LinalgSolveTriangular", "LinalgSolveTriangular", []string{shp(tera, 2, 1)}, func() *array.Array {
		return ops.LinalgSolveTriangular(ops.BroadcastTo(array.Scalar(1.0), 2, 2), ops.BroadcastTo(array.Scalar(1.0), tera, 2, 1), true, false)
	}},
	{"LinalgLUFactor", "LinalgLUFactor", []string{shp(1<<21, 1<<20)}, func() *array.Array {
		lu, _, _ := ops.LinalgLUFactor(ops.BroadcastTo(array.Scalar(1.0), 1<<21, 1<<20))
		return lu
	}},
	{"LinalgCholesky", "LinalgCholesky", []string{shp(1<<38, 2, 2)}, func() *array.Array { return ops.LinalgCholesky(hugeF32(1<<38, 2, 2), false) }},
	{"LinalgSVD", "LinalgSVD", []string{shp(1<<38, 2, 2)}, func() *array.Array { u, _, _ := ops.LinalgSVD(hugeF32(1<<38, 2, 2), true); return u }},
	{"LinalgEig", "LinalgEig", []string{shp(1<<38, 2, 2), "complex64"}, func() *array.Array { w, _ := ops.LinalgEig(hugeF32(1<<38, 2, 2)); return w }},
	{"LinalgEigvalsh/scratch", "linalg.Eigvalsh", []string{shp(1<<21, 1<<21), "float64 copy of one matrix"}, func() *array.Array { return ops.LinalgEigvalsh(hugeF32(1<<21, 1<<21), false) }},
}

// wantSizeError checks that err is an *array.Error of op whose message
// holds every part.
func wantSizeError(t *testing.T, name string, err error, op string, parts []string) {
	t.Helper()
	var e *array.Error
	if !errors.As(err, &e) {
		t.Errorf("%s: got %v, want an *array.Error of %s", name, err, op)
		return
	}
	if e.Op != op {
		t.Errorf("%s: error %q is from %q, want %q", name, e.Error(), e.Op, op)
	}
	for _, p := range parts {
		if !strings.Contains(e.Msg, p) {
			t.Errorf("%s: %q does not mention %q", name, e.Error(), p)
		}
	}
}

// TestHugeSizesAreErrors is the size-limit table: every op that
// allocates, given arguments whose result cannot exist, fails with an
// *array.Error naming the op and the shape — at the call when the
// element or byte count overflows an int, from Eval (wrapping
// ErrOutOfMemory) when it only exceeds the machine's memory — quickly,
// without touching the memory, and leaving the process working.
func TestHugeSizesAreErrors(t *testing.T) {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	slow := func(name string, start time.Time) {
		// A case that got as far as filling memory would take minutes.
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: took %v", name, d)
		}
	}
	for _, c := range atCall {
		start := time.Now()
		var x *array.Array
		err := array.Try(func() { x = c.build() })
		if err == nil {
			t.Errorf("%s: built an array of shape %v", c.name, x.Shape())
			continue
		}
		wantSizeError(t, c.name, err, c.op, c.parts)
		slow(c.name, start)
	}
	for _, c := range atEval {
		start := time.Now()
		var x *array.Array
		if err := array.Try(func() { x = c.build() }); err != nil {
			t.Errorf("%s: refused at the call: %v", c.name, err)
			continue
		}
		err := x.Eval()
		if !errors.Is(err, array.ErrOutOfMemory) {
			t.Errorf("%s: Eval returned %v, want an error wrapping ErrOutOfMemory", c.name, err)
		}
		wantSizeError(t, c.name, err, c.op, c.parts)
		// The failure is recorded: a second Eval reports it again rather
		// than trying once more.
		if err2 := x.Eval(); err2 != err {
			t.Errorf("%s: second Eval returned %v, want %v", c.name, err2, err)
		}
		slow(c.name, start)
	}

	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapSys) - int64(before.HeapSys); grew > slack {
		t.Errorf("the heap grew by %d bytes", grew)
	}

	// The process still works, and so does a pool allocation.
	got, err := array.ToSlice[float32](ops.Add(ops.Arange(0, 4, 1, array.Float32), ops.Ones([]int{4}, array.Float32)))
	if err != nil || !slices.Equal(got, []float32{1, 2, 3, 4}) {
		t.Errorf("after the table: Arange+Ones = %v, %v; want [1 2 3 4]", got, err)
	}
	big, err := array.ToSlice[float32](ops.Full([]int{1 << 20}, 2, array.Float32))
	if err != nil || len(big) != 1<<20 || big[0] != 2 || big[len(big)-1] != 2 {
		t.Errorf("after the table: a 4 MiB Full failed: %v", err)
	}
}

// TestHugeViewsAreFree checks the other side of the limits: views of
// huge shapes (broadcasts, reshapes and slices of them, Tile of one
// element) own no memory, evaluate, and read correctly; and empty results
// whose other dimensions are huge are built with the right shape rather
// than a wrapped one.
func TestHugeViewsAreFree(t *testing.T) {
	ramp := ops.Arange(0, 3, 1, array.Float32)
	cases := []struct {
		name  string
		x     *array.Array
		shape []int
		want  []float32
	}{
		{"slice of broadcast", ops.Slice(ops.BroadcastTo(ramp, tera, 3), ops.R(tera-2, tera)), []int{2, 3}, []float32{0, 1, 2, 0, 1, 2}},
		{"reshape of broadcast", ops.Slice(ops.Reshape(hugeF32(tera), 1<<20, 1<<20), ops.R(5, 6), ops.R(0, 2)), []int{1, 2}, []float32{1, 1}},
		{"tile of one element", ops.Slice(ops.Tile(ops.Full([]int{1}, 4, array.Float32), tera), ops.R(tera-3, tera)), []int{3}, []float32{4, 4, 4}},
		{"transpose of broadcast", ops.Slice(ops.Transpose(ops.BroadcastTo(ramp, tera, 3)), ops.R(2, 3), ops.R(0, 2)), []int{1, 2}, []float32{2, 2}},
		// Empty results: the broadcast Tile builds interleaves reps and
		// dimensions, and Tensordot multiplies free and contracted axes;
		// neither may overflow on the way to a 0.
		{"tile of empty", ops.Tile(ops.Zeros([]int{2, 0}, array.Float32), tera, tera), []int{2 * tera, 0}, []float32{}},
		{"tensordot of empty", ops.Tensordot(ops.Zeros([]int{0, 0}, array.Float32), ops.Zeros([]int{0, 3, 1 << 62}, array.Float32),
			[]int{1}, []int{0}), []int{0, 3, 1 << 62}, []float32{}},
		{"take from empty rows", ops.Take(ops.Zeros([]int{0, tera}, array.Float32), hugeIdx(3), 1), []int{0, 3}, []float32{}},
	}
	for _, c := range cases {
		if !slices.Equal(c.x.Shape(), c.shape) {
			t.Errorf("%s: shape %v, want %v", c.name, c.x.Shape(), c.shape)
			continue
		}
		got, err := array.ToSlice[float32](c.x)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	x := hugeF32(tera, 4)
	if err := x.Eval(); err != nil {
		t.Fatalf("a broadcast view of shape %v: %v", x.Shape(), err)
	}
	if n := len(x.Storage().Bytes()); n != 4 {
		t.Errorf("a broadcast view of shape %v holds %d bytes, want the scalar's 4", x.Shape(), n)
	}
}
