package cpu

//go:generate go run ./internal/asmgen/vecmath -out vecmath_amd64.s -go vecmath_amd64.go

import (
	"unsafe"

	"github.com/fathom-go/fathom/internal/opset"
)

// Vectorised float32 math. Each function below sets dst[i] = f(src[i])
// for i < len(dst) (src may be dst itself) with the kernel set chosen at
// start-up: AVX-512 (16 lanes), else AVX2+FMA (8 lanes), else the pure-Go
// fallback of vecmath_fallback.go, which is also what builds for other
// architectures or with -tags noasm use. NaN, ±Inf, subnormals, overflow
// and underflow come out as package math gives them (the sign of a zero
// included).
//
// The error quoted for each function is the largest, in ulps of the
// float32 result against float64 math, over all 2^32 float32 inputs (go
// test -run VecMathSweep -vecmath.stride=1, see vecmath_test.go): that of
// the kernels, which compute alike in AVX2 and AVX-512, then in
// parentheses that of the pure-Go fallback, whose multiply-adds round
// twice on amd64.

// vecOp indexes the vectorised functions.
type vecOp uint8

const (
	vecExp     vecOp = iota // e^x: 0.99 ulp (0.96)
	vecExpm1                // e^x - 1: 1.44 ulp (1.48)
	vecLog                  // the natural logarithm: 0.83 ulp (0.83)
	vecLog1p                // log(1 + x): 1.44 ulp (1.44)
	vecTanh                 // tanh x: 0.99 ulp (0.99)
	vecSigmoid              // 1 / (1 + e^-x): 2.40 ulp (2.40)
	vecErf                  // erf x: 1.19 ulp (1.20)
	vecSin                  // sin x: 1.49 ulp (1.49)
	vecCos                  // cos x: 1.49 ulp (1.49)
	vecSqrt                 // √x: correctly rounded (0.5 ulp)
	numVecOps
)

// vecKernel computes one function over dst. It returns how many elements
// it wrote, fewer than len(dst) when it stopped before a vector with a
// lane it leaves to scalar code (sin and cos of arguments beyond
// sinCosMax).
type vecKernel func(dst, src []float32) int

// vecBinKernel computes one binary operation over the whole vectors of
// dst and returns how many elements it wrote.
type vecBinKernel func(dst, a, b []float32) int

// vecRedKernel folds the whole vectors of x into the first width lanes
// of acc, each lane its own reduction, and returns how many elements of x
// it read.
type vecRedKernel func(acc *[16]float32, x []float32) int

// vecImpl is one instruction set's kernels: the functions, the binary
// operations and reductions, and the kernels of argreduce.go and
// softmax.go, documented with their declarations in vecmath_amd64.go.
type vecImpl struct {
	name    string
	width   int
	kernels [numVecOps]vecKernel
	// kernelsNT are kernels' twins that store around the caches, for
	// dst aligned to a vector (see vecApplyStream).
	kernelsNT [numVecOps]vecKernel
	binary    map[opset.BinaryOp]vecBinKernel
	binaryNT  map[opset.BinaryOp]vecBinKernel // binary's twins, as kernelsNT
	reduce    map[opset.ReduceOp]vecRedKernel // Max and Min, for vecReduce
	sumRed    vecRedKernel                    // for vecSum

	argMax, argMin         func(x []float32) (n int, best float32, at int)
	argMax64, argMin64     func(x []float64) (n int, best float64, at int)
	argMaxRows, argMinRows func(best []float32, idx []int32, x []float32, stride, rows, t0 int)
	expScale               func(dst, src []float32, m, c float32) float64
	expSum                 func(src []float32, m float32) float64
	affine                 func(dst, src []float32, a, c, b float32)

	addVS, subVS, subSV, mulVS, divVS, divSV, maxVS, maxSV, minVS, minSV func(dst, a []float32, b float32) int
	// their twins that store around the caches, as kernelsNT
	addVSNT, subVSNT, subSVNT, mulVSNT, divVSNT, divSVNT, maxVSNT, maxSVNT, minVSNT, minSVNT func(dst, a []float32, b float32) int
	mulAdd, mulMul                                                                           tripleKernel
	mulAddS, mulMulS                                                                         tripleKernelS
	mulAddNT, mulMulNT                                                                       tripleKernel
	mulAddSNT, mulMulSNT                                                                     tripleKernelS
	// chainCodes are the opcodes of the chain kernel (chainKernel), nil
	// without it: it is AVX-512 only.
	chainCodes map[chainStep]uint32
	prefetch   func(p []byte)
	copyNT     func(dst, src []float32) int
	storeFence func()

	cmpEqVV, cmpNeVV, cmpLtVV, cmpLeVV, cmpGtVV, cmpGeVV             func(dst []bool, a, b []float32) int
	cmpEqVS, cmpNeVS, cmpLtVS, cmpLeVS, cmpGtVS, cmpGeVS             func(dst []bool, a []float32, b float32) int
	cmpEqVV64, cmpNeVV64, cmpLtVV64, cmpLeVV64, cmpGtVV64, cmpGeVV64 func(dst []bool, a, b []float64) int
	cmpEqVS64, cmpNeVS64, cmpLtVS64, cmpLeVS64, cmpGtVS64, cmpGeVS64 func(dst []bool, a []float64, b float64) int
	u8ToF32                                                          func(dst []float32, src []uint8) int
	u8ToF64                                                          func(dst []float64, src []uint8) int
}

// vecScalar are the pure-Go functions, for the fallback and for the lanes
// a kernel leaves.
var vecScalar = [numVecOps]func(float32) float32{
	vecExp: goExp, vecExpm1: goExpm1, vecLog: goLog, vecLog1p: goLog1p, vecTanh: goTanh,
	vecSigmoid: goSigmoid, vecErf: goErf, vecSin: goSin, vecCos: goCos,
	vecSqrt: goSqrt,
}

// vecBest is the fastest kernel set this CPU runs, nil without one.
var vecBest = func() *vecImpl {
	if impls := asmImpls(); len(impls) > 0 {
		return &impls[0]
	}
	return nil
}()

// vecUnary maps the unary operations with a float32 vector function to
// it.
var vecUnary = map[opset.UnaryOp]vecOp{
	opset.Exp: vecExp, opset.Expm1: vecExpm1, opset.Log: vecLog, opset.Log1p: vecLog1p, opset.Tanh: vecTanh,
	opset.Sigmoid: vecSigmoid, opset.Erf: vecErf, opset.Sin: vecSin, opset.Cos: vecCos,
	opset.Sqrt: vecSqrt,
}

// vecFuncs are the vector functions over slices with vecBest's kernels:
// vecFuncs[op](dst, src) is vecApply(vecBest, op, dst, src).
var vecFuncs = func() (fs [numVecOps]func(dst, src []float32)) {
	for op := range numVecOps {
		fs[op] = func(dst, src []float32) { vecApply(vecBest, op, dst, src) }
	}
	return fs
}()

// vecArith holds, indexed by op, binKernel's loops of the float32
// binary operations with vector kernels on this machine, to run in place
// of binary.go's: the kernel over the whole vectors, binary.go's loop
// over the rest. The loops of the other ops, and of all without kernels,
// are nil. The vv loops beat the Go loops at every size, most on
// operands in L1 or L2 (BenchmarkVecBinary; docs/performance.md).
var vecArith = vecArithLoops(vecBest, false)

// vecArithNT are vecArith's loops with the stores of the whole vectors
// from dst's first 64-byte boundary on going around the caches, for
// results of streamFrom bytes or more (see vecApplyStream), which no
// cache would keep for their reader. Their flush fences the stores.
var vecArithNT = vecArithLoops(vecBest, true)

func vecArithLoops(impl *vecImpl, nt bool) (loops [opset.NumBinaryOps]binKernel[float32, float32]) {
	if impl == nil {
		return loops
	}
	// each op's kernels with the scalar second and first, storing the
	// ordinary way and around the caches
	type scalarKernel = func(dst, a []float32, b float32) int
	scalar := map[opset.BinaryOp][2][2]scalarKernel{
		opset.Add:     {{impl.addVS, impl.addVS}, {impl.addVSNT, impl.addVSNT}},
		opset.Sub:     {{impl.subVS, impl.subSV}, {impl.subVSNT, impl.subSVNT}},
		opset.Mul:     {{impl.mulVS, impl.mulVS}, {impl.mulVSNT, impl.mulVSNT}},
		opset.Div:     {{impl.divVS, impl.divSV}, {impl.divVSNT, impl.divSVNT}},
		opset.Maximum: {{impl.maxVS, impl.maxSV}, {impl.maxVSNT, impl.maxSVNT}},
		opset.Minimum: {{impl.minVS, impl.minSV}, {impl.minVSNT, impl.minSVNT}},
	}
	binary, form := impl.binary, 0
	if nt {
		binary, form = impl.binaryNT, 1
	}
	for op, k := range scalar {
		g := goBinaryKernel(op)
		vv, vs, sv := binary[op], k[form][0], k[form][1]
		if vv == nil || vs == nil || sv == nil {
			continue
		}
		// the Go loop takes the elements before the kernel's (see
		// streamHead) and after its whole vectors
		loops[op] = binKernel[float32, float32]{
			vv: func(d, a, b []float32) {
				a, b = a[:len(d)], b[:len(d)]
				n := streamHead(d, nt)
				g.vv(d[:n], a[:n], b[:n])
				n += vv(d[n:], a[n:], b[n:])
				g.vv(d[n:], a[n:], b[n:])
			},
			vs: func(d, a []float32, b float32) {
				a = a[:len(d)]
				n := streamHead(d, nt)
				g.vs(d[:n], a[:n], b)
				n += vs(d[n:], a[n:], b)
				g.vs(d[n:], a[n:], b)
			},
			sv: func(d []float32, a float32, b []float32) {
				b = b[:len(d)]
				n := streamHead(d, nt)
				g.sv(d[:n], a, b[:n])
				n += sv(d[n:], b[n:], a)
				g.sv(d[n:], a, b[n:])
			},
		}
		if nt {
			loops[op].flush = storeFence
		}
	}
	return loops
}

// streamHead returns where in d a kernel starts: at 0, or with nt (a
// kernel that stores around the caches, which needs whole vectors
// aligned) at alignHead(d). The elements before it are left to Go.
func streamHead(d []float32, nt bool) int {
	if nt {
		return alignHead(d)
	}
	return 0
}

// alignHead returns how many elements of d come before its first 64-byte
// boundary: all of them when d's elements are not 4-byte aligned.
func alignHead(d []float32) int {
	a := uintptr(unsafe.Pointer(unsafe.SliceData(d)))
	if a%4 != 0 {
		return len(d)
	}
	return min(len(d), int(-a%64/4))
}

// goBinaryLoop returns binary.go's float32 loop of op.
func goBinaryLoop(op opset.BinaryOp) func(d, a, b []float32) { return goBinaryKernel(op).vv }

// goBinaryKernel returns binary.go's float32 kernel of op.
func goBinaryKernel(op opset.BinaryOp) binKernel[float32, float32] {
	switch op {
	case opset.Add:
		return addKernel[float32]()
	case opset.Sub:
		return subKernel[float32]()
	case opset.Mul:
		return mulKernel[float32]()
	case opset.Div:
		return divKernel[float32]()
	case opset.Maximum:
		return maxKernel[float32]()
	default: // Minimum
		return minKernel[float32]()
	}
}

// vecCompare and vecCompare64 hold, indexed by op, binKernel's loops of
// the float32 and float64 comparisons where this machine has vector
// kernels: the kernel over the whole vectors, the Go loop over the rest. A
// comparison with a scalar first runs the converse kernel with it second.
// The kernels store a vector's bytes at once where the Go loops store a
// byte an element, so they are several times faster on operands in the
// caches and no slower from memory (BenchmarkVecCompare;
// docs/performance.md).
var (
	vecCompare   = vecCompareLoops(vecBest, compareKernels32)
	vecCompare64 = vecCompareLoops(vecBest, compareKernels64)
)

func compareKernels32(m *vecImpl) map[opset.BinaryOp]cmpKernels[float32] {
	return map[opset.BinaryOp]cmpKernels[float32]{
		opset.Equal: {m.cmpEqVV, m.cmpEqVS}, opset.NotEqual: {m.cmpNeVV, m.cmpNeVS},
		opset.Less: {m.cmpLtVV, m.cmpLtVS}, opset.LessEqual: {m.cmpLeVV, m.cmpLeVS},
		opset.Greater: {m.cmpGtVV, m.cmpGtVS}, opset.GreaterEqual: {m.cmpGeVV, m.cmpGeVS},
	}
}

func compareKernels64(m *vecImpl) map[opset.BinaryOp]cmpKernels[float64] {
	return map[opset.BinaryOp]cmpKernels[float64]{
		opset.Equal: {m.cmpEqVV64, m.cmpEqVS64}, opset.NotEqual: {m.cmpNeVV64, m.cmpNeVS64},
		opset.Less: {m.cmpLtVV64, m.cmpLtVS64}, opset.LessEqual: {m.cmpLeVV64, m.cmpLeVS64},
		opset.Greater: {m.cmpGtVV64, m.cmpGtVS64}, opset.GreaterEqual: {m.cmpGeVV64, m.cmpGeVS64},
	}
}

// cmpKernels are one comparison's kernels: with a second operand, and
// with a scalar second.
type cmpKernels[T float32 | float64] struct {
	vv func(dst []bool, a, b []T) int
	vs func(dst []bool, a []T, b T) int
}

// converse is the comparison that holds for (b, a) where op holds for
// (a, b).
var converse = map[opset.BinaryOp]opset.BinaryOp{
	opset.Equal: opset.Equal, opset.NotEqual: opset.NotEqual, opset.Less: opset.Greater, opset.LessEqual: opset.GreaterEqual, opset.Greater: opset.Less, opset.GreaterEqual: opset.LessEqual,
}

func vecCompareLoops[T float32 | float64](impl *vecImpl, kernels func(*vecImpl) map[opset.BinaryOp]cmpKernels[T]) (loops [opset.NumBinaryOps]binKernel[T, bool]) {
	if impl == nil {
		return loops
	}
	ks := kernels(impl)
	for op, k := range ks {
		g, f, sv := goCompareKernel[T](op).vv, compareFunc[T](op), ks[converse[op]].vs
		loops[op] = binKernel[T, bool]{
			vv: func(d []bool, a, b []T) {
				a, b = a[:len(d)], b[:len(d)]
				n := k.vv(d, a, b)
				g(d[n:], a[n:], b[n:])
			},
			vs: func(d []bool, a []T, b T) {
				a = a[:len(d)]
				for i := k.vs(d, a, b); i < len(d); i++ {
					d[i] = f(a[i], b)
				}
			},
			sv: func(d []bool, a T, b []T) {
				b = b[:len(d)]
				for i := sv(d, b, a); i < len(d); i++ {
					d[i] = f(a, b[i])
				}
			},
		}
	}
	return loops
}

// compareFunc returns the comparison op of two elements, for the few a
// kernel leaves after its whole vectors.
func compareFunc[T float32 | float64](op opset.BinaryOp) func(a, b T) bool {
	switch op {
	case opset.Equal:
		return func(a, b T) bool { return a == b }
	case opset.NotEqual:
		return func(a, b T) bool { return a != b }
	case opset.Less:
		return func(a, b T) bool { return a < b }
	case opset.LessEqual:
		return func(a, b T) bool { return a <= b }
	case opset.Greater:
		return func(a, b T) bool { return a > b }
	}
	return func(a, b T) bool { return a >= b }
}

// withVec returns vecArith's loops of op in place of k's when T is
// float32 and this machine has them. It runs on every arithmetic Binary
// call, hence the single index and assertion; the pointer keeps the
// assertion from copying the struct into an interface.
func withVec[T ewReal](op opset.BinaryOp, k binKernel[T, T]) binKernel[T, T] {
	if v, ok := any(&vecArith[op]).(*binKernel[T, T]); ok && v.vv != nil {
		return *v
	}
	return k
}

// vecMulAdd, vecMulAddS, vecMulMul and vecMulMulS are the float32
// kernels of tile.go's productTileFuncs: the vector
// kernels over the whole vectors and the Go loops over the rest, or the Go
// loops alone without kernels.
var (
	vecMulAdd, vecMulAddS = tripleLoops(vecBest, opset.Add, false)
	vecMulMul, vecMulMulS = tripleLoops(vecBest, opset.Mul, false)
)

type (
	tripleKernel  func(dst, a, b, c []float32) int
	tripleKernelS func(dst, a []float32, b float32, c []float32) int
)

// tripleLoops returns impl's multiply-adds (second Add) or products of
// three (second Mul); with nt, those that store around the caches from
// dst's first 64-byte boundary on (see vecApplyStream).
func tripleLoops(impl *vecImpl, second opset.BinaryOp, nt bool) (func(d, a, b, c []float32), func(d, a []float32, b float32, c []float32)) {
	vvv, vsv := mulAdd[float32], mulAddScalar[float32]
	if second == opset.Mul {
		vvv, vsv = mulMul[float32], mulMulScalar[float32]
	}
	if impl == nil {
		return vvv, vsv
	}
	kv, ks := impl.mulAdd, impl.mulAddS
	switch {
	case second == opset.Mul && nt:
		kv, ks = impl.mulMulNT, impl.mulMulSNT
	case second == opset.Mul:
		kv, ks = impl.mulMul, impl.mulMulS
	case nt:
		kv, ks = impl.mulAddNT, impl.mulAddSNT
	}
	return func(d, a, b, c []float32) {
			a, b, c = a[:len(d)], b[:len(d)], c[:len(d)]
			n := streamHead(d, nt)
			vvv(d[:n], a[:n], b[:n], c[:n])
			n += kv(d[n:], a[n:], b[n:], c[n:])
			vvv(d[n:], a[n:], b[n:], c[n:])
		}, func(d, a []float32, b float32, c []float32) {
			a, c = a[:len(d)], c[:len(d)]
			n := streamHead(d, nt)
			vsv(d[:n], a[:n], b, c[:n])
			n += ks(d[n:], a[n:], b, c[n:])
			vsv(d[n:], a[n:], b, c[n:])
		}
}

// vecSum is the float32 pairwise sum with the vector kernel at its
// leaves, or nil without kernels. Each of the kernel's lanes adds at most
// sumLeaf/(4*width) elements in order (32 under AVX-512) before the lanes
// and the leaves are added pairwise, so its error bound is close to that
// of pairwiseSum, whose leaves add 16 in order in each of 8 accumulators.
var vecSum = vecSumFunc(vecBest)

const sumLeaf = 2048

func vecSumFunc(impl *vecImpl) func(x []float32) float32 {
	if impl == nil {
		return nil
	}
	k, w := impl.sumRed, impl.width
	// lanes is the kernel's accumulator for every leaf: the kernel is
	// called through a func value, so a lanes array declared per leaf
	// would escape to the heap once per 2048 elements (docs/performance.md)
	var pairwise func(x []float32, lanes *[16]float32) float32
	pairwise = func(x []float32, lanes *[16]float32) float32 {
		if len(x) > sumLeaf {
			h := len(x) / 2 &^ 63
			return pairwise(x[:h], lanes) + pairwise(x[h:], lanes)
		}
		if len(x) < 4*w {
			return pairwiseSum(x)
		}
		*lanes = [16]float32{}
		n := k(lanes, x)
		return pairwiseSum(lanes[:w]) + pairwiseSum(x[n:])
	}
	return func(x []float32) float32 {
		if len(x) < 4*w {
			return pairwiseSum(x)
		}
		return pairwise(x, new([16]float32))
	}
}

// vecReduce holds, for the float32 reductions with a vector kernel on
// this machine (Max and Min), a run to use in place of reduce.go's: the
// kernel over the whole vectors, then reduce.go's run over its lanes and
// the rest. It is empty without kernels.
var vecReduce = vecReduceRuns(vecBest)

func vecReduceRuns(impl *vecImpl) map[opset.ReduceOp]func(acc float32, x []float32) float32 {
	runs := map[opset.ReduceOp]func(acc float32, x []float32) float32{}
	if impl == nil {
		return runs
	}
	for op, k := range impl.reduce {
		tail := maxRun[float32]
		if op == opset.Min {
			tail = minRun[float32]
		}
		w := impl.width
		runs[op] = func(acc float32, x []float32) float32 {
			// below a few vectors, the kernel's set-up and the fold of
			// its lanes cost more than the Go loop
			if len(x) < 4*w {
				return tail(acc, x)
			}
			var lanes [16]float32
			for i := range w {
				lanes[i] = acc
			}
			n := k(&lanes, x)
			return tail(tail(acc, lanes[:w]), x[n:])
		}
	}
	return runs
}

// vecApply runs op over dst and src with impl, or with the scalar
// function when impl is nil.
func vecApply(impl *vecImpl, op vecOp, dst, src []float32) {
	src = src[:len(dst)]
	f := vecScalar[op]
	if impl == nil {
		for i, v := range src {
			dst[i] = f(v)
		}
		return
	}
	vecRun(impl, op, impl.kernels[op], dst, src)
}

// vecApplyStream is vecApply with the stores of the whole vectors from
// dst's first 64-byte boundary on going around the caches, where impl
// has the kernels for it. For a result larger than the last-level cache
// that saves the read of each line an ordinary store fetches first
// (docs/performance.md, Elementwise float32 math). The
// stores are weakly ordered: call storeFence after them, before another
// goroutine may read dst.
func vecApplyStream(impl *vecImpl, op vecOp, dst, src []float32) {
	if impl == nil || impl.kernelsNT[op] == nil {
		vecApply(impl, op, dst, src)
		return
	}
	src = src[:len(dst)]
	head := alignHead(dst)
	vecApply(impl, op, dst[:head], src[:head])
	vecRun(impl, op, impl.kernelsNT[op], dst[head:], src[head:])
}

// vecRun runs k, one of impl's kernels of op, over dst, and the vectors
// it declines as vecDeclined does (with the kernel that stores the
// ordinary way: the vector it writes is on the stack).
func vecRun(impl *vecImpl, op vecOp, k vecKernel, dst, src []float32) {
	for len(dst) > 0 {
		n := k(dst, src)
		if n == len(dst) {
			return
		}
		m := n + min(impl.width, len(dst)-n)
		vecDeclined(impl.kernels[op], vecScalar[op], dst[n:m], src[n:m])
		dst, src = dst[m:], src[m:]
	}
}

// vecDeclined computes a vector the kernel k declined, one with a lane
// beyond sinCosMax: the kernel on a copy with those lanes zeroed, so that
// the others get the same results as anywhere else, and the scalar
// function f on those lanes.
func vecDeclined(k vecKernel, f func(float32) float32, dst, src []float32) {
	var in, out [16]float32
	m := copy(in[:], src)
	for i, v := range in[:m] {
		if abs32(v) > sinCosMax {
			in[i] = 0
		}
	}
	k(out[:m], in[:m])
	for i, v := range src {
		if abs32(v) > sinCosMax {
			out[i] = f(v)
		}
	}
	copy(dst, out[:m])
}
