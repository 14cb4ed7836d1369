package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/opset"
)

func benchInput(n int) []float32 {
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, n)
	for i := range x {
		x[i] = r.Float32()*8 - 4
	}
	return x
}

// BenchmarkVecMath times each function on one core over 16K elements,
// which stay in L1/L2, in every implementation this machine runs, and the
// float64 math loop the kernels replace.
func BenchmarkVecMath(b *testing.B) {
	const n = 1 << 14
	x, y := benchInput(n), make([]float32, n)
	names, impls := vecImplsUnderTest()
	for op := range numVecOps {
		r := vecRef[op]
		for i, impl := range impls {
			b.Run(r.name+"/"+names[i], func(b *testing.B) {
				b.SetBytes(8 * n)
				for b.Loop() {
					vecApply(impl, op, y, x)
				}
			})
		}
		b.Run(r.name+"/math", func(b *testing.B) {
			b.SetBytes(8 * n)
			for b.Loop() {
				for i, v := range x {
					y[i] = float32(r.ref(float64(v)))
				}
			}
		})
	}
}

// BenchmarkUnary16M times Unary, split over the cores, on 16M float32
// elements (64 MiB in, 64 MiB out, beyond the caches) into a reused
// output: the figures to hold against numpy's (bench/numpy_bench.py).
func BenchmarkUnary16M(b *testing.B) {
	const n = 1 << 24
	x := benchInput(n)
	out := make([]float32, n)
	bytes := func(s []float32) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 4*len(s)) }
	in, o := contiguous(bytes(x), array.Float32, []int{n}), contiguous(bytes(out), array.Float32, []int{n})
	for _, op := range []opset.UnaryOp{opset.Exp, opset.Expm1, opset.Log, opset.Log1p, opset.Tanh, opset.Sigmoid, opset.Erf, opset.Sin, opset.Cos} {
		b.Run(op.String(), func(b *testing.B) {
			b.SetBytes(8 * n)
			for b.Loop() {
				if err := Unary(op, o, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkVecBinary times the float32 binary kernels against binary.go's
// loops on one core, at sizes from L1 to beyond the last-level cache.
func BenchmarkVecBinary(b *testing.B) {
	for _, n := range []int{1 << 12, 1 << 16, 1 << 20, 1 << 24} {
		x, y, z := benchInput(n), benchInput(n), make([]float32, n)
		for _, op := range []opset.BinaryOp{opset.Add, opset.Mul, opset.Div, opset.Maximum} {
			loops := map[string]func(d, a, b []float32){"Go": goBinaryLoop(op)}
			if vv := vecArith[op].vv; vv != nil {
				loops["asm"] = vv
			}
			for name, loop := range loops {
				b.Run(fmt.Sprintf("%v/%d/%s", op, n, name), func(b *testing.B) {
					b.SetBytes(int64(12 * n))
					for b.Loop() {
						loop(z, x, y)
					}
				})
			}
		}
	}
}

// BenchmarkVecCompare times Greater over float32 and float64 against
// binary.go's loop on one core, at sizes from L1 to beyond the last-level
// cache.
func BenchmarkVecCompare(b *testing.B) {
	for _, n := range []int{1 << 12, 1 << 16, 1 << 20, 1 << 24} {
		x, y := benchInput(n), benchInput(n)
		benchCompare(b, fmt.Sprintf("float32/%d", n), x, y, vecCompare[opset.Greater])
		x64, y64 := make([]float64, n), make([]float64, n)
		for i := range x {
			x64[i], y64[i] = float64(x[i]), float64(y[i])
		}
		benchCompare(b, fmt.Sprintf("float64/%d", n), x64, y64, vecCompare64[opset.Greater])
	}
}

func benchCompare[T float32 | float64](b *testing.B, name string, x, y []T, vec binKernel[T, bool]) {
	z := make([]bool, len(x))
	loops := map[string]func(d []bool, a, b []T){"Go": goCompareKernel[T](opset.Greater).vv}
	if vec.vv != nil {
		loops["asm"] = vec.vv
	}
	for impl, loop := range loops {
		b.Run(name+"/"+impl, func(b *testing.B) {
			b.SetBytes(int64(len(x) * (2*int(unsafe.Sizeof(x[0])) + 1)))
			for b.Loop() {
				loop(z, x, y)
			}
		})
	}
}
