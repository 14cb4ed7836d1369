package cpu

import (
	"math"
	"math/cmplx"
	"sync"
	"unsafe"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/opset"
)

// Binary computes out = op(a, b) elementwise. a and b have one dtype and
// out's shape (broadcast operands have zero strides; any may be strided);
// out's dtype must be op.Result(a.DType). The caller has checked the
// shapes.
//
// Integer semantics follow numpy: FloorDivide floors and Remainder takes
// the sign of the divisor. Where numpy warns and gives 0 for an integer
// division or remainder by zero, Binary gives 0 silently. Pow of integers
// with a negative exponent gives 0, except for bases 1 and -1, where
// numpy raises an error. Shifts by a negative count or one of at least
// the width give 0 (-1 for a right shift of a negative value), as numpy's. Float16 and BFloat16 compute in float32 and
// round on store, as numpy does.
func Binary(op opset.BinaryOp, out, a, b Buf) error {
	if a.DType != b.DType {
		return array.Errorf("cpu.Binary", "%v: dtypes %v and %v differ", op, a.DType, b.DType)
	}
	want, ok := op.Result(a.DType)
	if !ok {
		return array.Errorf("cpu.Binary", "%v is not defined for dtype %v", op, a.DType)
	}
	if out.DType != want {
		return array.Errorf("cpu.Binary", "%v of %v gives %v, not %v", op, a.DType, want, out.DType)
	}
	switch a.DType {
	case array.Float16:
		halfBinary[array.F16](op, out, a, b)
		return nil
	case array.BFloat16:
		halfBinary[array.BF16](op, out, a, b)
		return nil
	case array.Float32:
		if k := vecArithNT[op]; k.vv != nil && streamed(out) {
			runBinary(out, a, b, fixedBin(k))
			return nil
		}
	}
	binKernelOf(op, a.DType).run(out, a, b)
	return nil
}

// Flat is an operand of BinaryFlat: Data holds its elements one after
// another, or, with Repeat, the one element that every position reads.
type Flat struct {
	Data   []byte
	Repeat bool
}

// BinaryFlat computes n elements of out = op(a, b), where out and each
// operand are contiguous (or a repeated element): Binary for the layout
// of most operands of elementwise operations, without Buf's shapes and
// strides or the kernel's construction, which on small arrays cost more
// than the arithmetic. a and b have dtype dt; out has op.Result(dt).
func BinaryFlat(op opset.BinaryOp, dt array.DType, n int, out []byte, a, b Flat) error {
	want, ok := op.Result(dt)
	if !ok {
		return array.Errorf("cpu.BinaryFlat", "%v is not defined for dtype %v", op, dt)
	}
	k := binKernelOf(op, dt)
	if n > grain || k == nil {
		return Binary(op, flatBuf(out, want, n, false), flatBuf(a.Data, dt, n, a.Repeat), flatBuf(b.Data, dt, n, b.Repeat))
	}
	flatLen("cpu.BinaryFlat", out, want, n)
	a.check(dt, n)
	b.check(dt, n)
	k.flat(n, out, a, b)
	return nil
}

// check panics unless f holds the elements BinaryFlat reads.
func (f Flat) check(dt array.DType, n int) {
	if f.Repeat {
		n = min(n, 1)
	}
	flatLen("cpu.BinaryFlat", f.Data, dt, n)
}

// flatLen panics unless b holds n elements of dt: the flat kernels index
// memory without Buf's checks.
func flatLen(op string, b []byte, dt array.DType, n int) {
	if len(b) < n*dt.Size() {
		array.Panicf(op, "%d bytes hold fewer than %d elements of %v", len(b), n, dt)
	}
}

// flatBuf is the 1-D Buf of a flat operand.
func flatBuf(data []byte, dt array.DType, n int, repeat bool) Buf {
	st := 1
	if repeat {
		st = 0
	}
	return Buf{Data: data, DType: dt, Shape: []int{n}, Strides: []int{st}}
}

// binRunner is one dtype's kernel of one op, ready to run over Bufs or
// flat operands.
type binRunner interface {
	run(out, a, b Buf)
	flat(n int, out []byte, a, b Flat)
}

func (k binKernel[T, D]) run(out, a, b Buf) { runBinary(out, a, b, fixedBin(k)) }

func (k binKernel[T, D]) flat(n int, out []byte, a, b Flat) {
	o := flatElems[D](out, n)
	switch {
	case !a.Repeat && !b.Repeat:
		k.vv(o, flatElems[T](a.Data, n), flatElems[T](b.Data, n))
	case !a.Repeat && k.vs != nil:
		k.vs(o, flatElems[T](a.Data, n), flatElems[T](b.Data, 1)[0])
	case !b.Repeat && k.sv != nil:
		k.sv(o, flatElems[T](a.Data, 1)[0], flatElems[T](b.Data, n))
	default:
		m := tileFor(n)
		ta, tb := make([]T, m), make([]T, m)
		for i := 0; i < n; i += m {
			m := min(m, n-i)
			k.vv(o[i:i+m], flatTile(a, i, ta[:m]), flatTile(b, i, tb[:m]))
		}
	}
	k.done()
}

// flatTile returns the elements of f from i on, as many as tile holds:
// f's own memory, or its element repeated in tile.
func flatTile[T any](f Flat, i int, tile []T) []T {
	if !f.Repeat {
		return flatElems[T](f.Data, i+len(tile))[i:]
	}
	v := flatElems[T](f.Data, 1)[0]
	for j := range tile {
		tile[j] = v
	}
	return tile
}

// flatElems returns the first n elements of b as a []T.
func flatElems[T any](b []byte, n int) []T {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// binKernels holds each dtype's kernel of each binary op.
var binKernels = kernelTable[opset.BinaryOp, binRunner]{n: opset.NumBinaryOps, build: makeBinKernel}

func binKernelOf(op opset.BinaryOp, dt array.DType) binRunner { return binKernels.of(op, dt) }

// kernelOp is the op of a kernelTable: opset.BinaryOp or opset.UnaryOp.
type kernelOp interface {
	~uint8
	Result(array.DType) (array.DType, bool)
}

// kernelTable holds each dtype's kernel R of each of the n ops O, made
// on first use: making one allocates closures, which cost more than a
// small array's arithmetic. A dtype has none for the ops it does not
// define, and build gives none for Float16 and BFloat16 (they widen in
// tiles of their own).
type kernelTable[O kernelOp, R any] struct {
	once  sync.Once
	n     O
	build func(O, array.DType) R
	k     [maxDTypes][]R
}

// maxDTypes bounds the dtypes' numbers, for tables indexed by dtype.
const maxDTypes = 16

// of returns the kernel of op for dt, or R's zero value.
func (t *kernelTable[O, R]) of(op O, dt array.DType) R {
	t.once.Do(func() {
		for dt := array.DType(0); dt.Valid(); dt++ {
			t.k[dt] = make([]R, t.n)
			for op := range t.n {
				if _, ok := op.Result(dt); ok {
					t.k[dt][op] = t.build(op, dt)
				}
			}
		}
	})
	if op >= t.n || int(dt) >= maxDTypes || t.k[dt] == nil {
		var zero R
		return zero
	}
	return t.k[dt][op]
}

func makeBinKernel(op opset.BinaryOp, dt array.DType) binRunner {
	switch dt {
	case array.Bool:
		return boolBinary(op)
	case array.Uint8:
		return realKernel[uint8](op)
	case array.Int32:
		return realKernel[int32](op)
	case array.Int64:
		return realKernel[int64](op)
	case array.Int8:
		return realKernel[int8](op)
	case array.Int16:
		return realKernel[int16](op)
	case array.Uint16:
		return realKernel[uint16](op)
	case array.Uint32:
		return realKernel[uint32](op)
	case array.Uint64:
		return realKernel[uint64](op)
	case array.Float32:
		return realKernel[float32](op)
	case array.Float64:
		return realKernel[float64](op)
	case array.Complex64:
		return complexKernel(op)
	}
	return nil
}

// binKernel is one operation over slices. vv takes two slices; vs and sv,
// when not nil, take a slice and a broadcast scalar, which spares the
// runner from filling a tile with the scalar. flush, when not nil, runs
// after each parallel chunk's slices: kernels that store around the
// caches fence their stores there.
type binKernel[T, D any] struct {
	vv    func(d []D, a, b []T)
	vs    func(d []D, a []T, b T)
	sv    func(d []D, a T, b []T)
	flush func()
}

// done runs flush, if any, after a chunk.
func (k binKernel[T, D]) done() {
	if k.flush != nil {
		k.flush()
	}
}

func fixedBin[T, D any](k binKernel[T, D]) func(int) binKernel[T, D] {
	return func(int) binKernel[T, D] { return k }
}

// elementwise makes a kernel of a per-element function, for the
// operations whose arithmetic costs more than the call.
func elementwise[T, D any](f func(a, b T) D) binKernel[T, D] {
	return binKernel[T, D]{
		vv: func(d []D, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = f(a[i], b[i])
			}
		},
		vs: func(d []D, a []T, b T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = f(a[i], b)
			}
		},
		sv: func(d []D, a T, b []T) {
			b = b[:len(d)]
			for i := range d {
				d[i] = f(a, b[i])
			}
		},
	}
}

// operand returns the m elements of src at off, off+st, ...: a subslice
// of src when they are contiguous, else a copy in tile.
func operand[T any](src []T, off, st, m int, tile []T) []T {
	if st == 1 {
		return src[off : off+m]
	}
	t := tile[:m]
	if st == 0 {
		v := src[off]
		for i := range t {
			t[i] = v
		}
		return t
	}
	for i := range t {
		t[i] = src[off+i*st]
	}
	return t
}

// runBinary applies a kernel over out, a and b, one run at a time. mk is
// called once per parallel chunk with the chunk's length, so kernels that
// need scratch get their own.
func runBinary[T, D any](out, a, b Buf, mk func(n int) binKernel[T, D]) {
	if n := out.Size(); n <= grain && flat(out) {
		k := mk(n)
		o := elems[D](out)[out.Offset : out.Offset+n]
		switch {
		case flat(a, b):
			k.vv(o, elems[T](a)[a.Offset:a.Offset+n], elems[T](b)[b.Offset:b.Offset+n])
			k.done()
			return
		case flat(a) && repeated(b) && k.vs != nil:
			k.vs(o, elems[T](a)[a.Offset:a.Offset+n], elems[T](b)[b.Offset])
			k.done()
			return
		case repeated(a) && flat(b) && k.sv != nil:
			k.sv(o, elems[T](a)[a.Offset], elems[T](b)[b.Offset:b.Offset+n])
			k.done()
			return
		}
	}
	w := newWalker(out.Shape, out.Strides, a.Strides, b.Strides)
	o, x, y := elems[D](out), elems[T](a), elems[T](b)
	st := w.InnerStrides()
	so, sa, sb := st[0], st[1], st[2]
	base := []int{out.Offset, a.Offset, b.Offset}
	ParallelFor(w.Size(), grain, func(lo, hi int) {
		k := mk(hi - lo)
		var ta, tb []T
		var td []D
		w.Runs(lo, hi, base, func(offs []int, n int) {
			po, pa, pb := offs[0], offs[1], offs[2]
			if so == 1 {
				switch {
				case sa == 1 && sb == 1:
					k.vv(o[po:po+n], x[pa:pa+n], y[pb:pb+n])
					return
				case sa == 1 && sb == 0 && k.vs != nil:
					k.vs(o[po:po+n], x[pa:pa+n], y[pb])
					return
				case sa == 0 && sb == 1 && k.sv != nil:
					k.sv(o[po:po+n], x[pa], y[pb:pb+n])
					return
				}
			}
			if ta == nil {
				m := tileFor(hi - lo)
				ta, tb, td = make([]T, m), make([]T, m), make([]D, m)
			}
			for i := 0; i < n; i += len(ta) {
				m := min(len(ta), n-i)
				va := operand(x, pa+i*sa, sa, m, ta)
				vb := operand(y, pb+i*sb, sb, m, tb)
				if so == 1 {
					k.vv(o[po+i:po+i+m], va, vb)
					continue
				}
				k.vv(td[:m], va, vb)
				for j := range m {
					o[po+(i+j)*so] = td[j]
				}
			}
		})
		k.done()
	})
}

// ewNum is the set of element types with Go arithmetic.
type ewNum interface{ ewReal | complex64 }

func addKernel[T ewNum]() binKernel[T, T] {
	return binKernel[T, T]{
		vv: func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] + b[i]
			}
		},
		vs: func(d, a []T, b T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = a[i] + b
			}
		},
		sv: func(d []T, a T, b []T) {
			b = b[:len(d)]
			for i := range d {
				d[i] = a + b[i]
			}
		},
	}
}

func subKernel[T ewNum]() binKernel[T, T] {
	return binKernel[T, T]{
		vv: func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] - b[i]
			}
		},
		vs: func(d, a []T, b T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = a[i] - b
			}
		},
		sv: func(d []T, a T, b []T) {
			b = b[:len(d)]
			for i := range d {
				d[i] = a - b[i]
			}
		},
	}
}

func mulKernel[T ewNum]() binKernel[T, T] {
	return binKernel[T, T]{
		vv: func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] * b[i]
			}
		},
		vs: func(d, a []T, b T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = a[i] * b
			}
		},
		sv: func(d []T, a T, b []T) {
			b = b[:len(d)]
			for i := range d {
				d[i] = a * b[i]
			}
		},
	}
}

// divKernel is only used for inexact types: opset rejects Div of
// integers.
func divKernel[T ewNum]() binKernel[T, T] {
	return binKernel[T, T]{
		vv: func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] / b[i]
			}
		},
		vs: func(d, a []T, b T) {
			a = a[:len(d)]
			for i := range d {
				d[i] = a[i] / b
			}
		},
		sv: func(d []T, a T, b []T) {
			b = b[:len(d)]
			for i := range d {
				d[i] = a / b[i]
			}
		},
	}
}

// maxKernel propagates NaN from either side like numpy's maximum: b wins
// when it is larger or NaN, a otherwise (so a NaN a stays).
func maxKernel[T ewReal]() binKernel[T, T] {
	return binKernel[T, T]{
		vv: func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				x, y := a[i], b[i]
				if x < y || y != y {
					x = y
				}
				d[i] = x
			}
		},
		vs: func(d, a []T, b T) {
			a = a[:len(d)]
			if b != b {
				for i := range d {
					d[i] = b
				}
				return
			}
			for i := range d {
				x := a[i]
				if x < b {
					x = b
				}
				d[i] = x
			}
		},
		sv: func(d []T, a T, b []T) {
			b = b[:len(d)]
			for i := range d {
				x, y := a, b[i]
				if x < y || y != y {
					x = y
				}
				d[i] = x
			}
		},
	}
}

func minKernel[T ewReal]() binKernel[T, T] {
	return binKernel[T, T]{
		vv: func(d, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				x, y := a[i], b[i]
				if x > y || y != y {
					x = y
				}
				d[i] = x
			}
		},
		vs: func(d, a []T, b T) {
			a = a[:len(d)]
			if b != b {
				for i := range d {
					d[i] = b
				}
				return
			}
			for i := range d {
				x := a[i]
				if x > b {
					x = b
				}
				d[i] = x
			}
		},
		sv: func(d []T, a T, b []T) {
			b = b[:len(d)]
			for i := range d {
				x, y := a, b[i]
				if x > y || y != y {
					x = y
				}
				d[i] = x
			}
		},
	}
}

// compareKernel returns the kernel of a comparison for a real type:
// vecCompare's or vecCompare64's loops for float32 and float64 where this
// machine has them.
func compareKernel[T ewReal](op opset.BinaryOp) binKernel[T, bool] {
	if v, ok := any(&vecCompare[op]).(*binKernel[T, bool]); ok && v.vv != nil {
		return *v
	}
	if v, ok := any(&vecCompare64[op]).(*binKernel[T, bool]); ok && v.vv != nil {
		return *v
	}
	return goCompareKernel[T](op)
}

// goCompareKernel returns the Go loop of a comparison.
func goCompareKernel[T ewReal](op opset.BinaryOp) binKernel[T, bool] {
	var vv func(d []bool, a, b []T)
	switch op {
	case opset.Equal:
		vv = func(d []bool, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] == b[i]
			}
		}
	case opset.NotEqual:
		vv = func(d []bool, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] != b[i]
			}
		}
	case opset.Less:
		vv = func(d []bool, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] < b[i]
			}
		}
	case opset.LessEqual:
		vv = func(d []bool, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] <= b[i]
			}
		}
	case opset.Greater:
		vv = func(d []bool, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] > b[i]
			}
		}
	default:
		vv = func(d []bool, a, b []T) {
			a, b = a[:len(d)], b[:len(d)]
			for i := range d {
				d[i] = a[i] >= b[i]
			}
		}
	}
	return binKernel[T, bool]{vv: vv}
}

// arithKernel returns the kernel of a non-comparison op for a real type.
func arithKernel[T ewReal](op opset.BinaryOp) binKernel[T, T] {
	var z T
	isFloat := false
	switch any(z).(type) {
	case float32, float64:
		isFloat = true
	}
	switch op {
	case opset.Add:
		return withVec(op, addKernel[T]())
	case opset.Sub:
		return withVec(op, subKernel[T]())
	case opset.Mul:
		return withVec(op, mulKernel[T]())
	case opset.Maximum:
		return withVec(op, maxKernel[T]())
	case opset.Minimum:
		return withVec(op, minKernel[T]())
	case opset.Div:
		return withVec(op, divKernel[T]())
	case opset.FloorDivide:
		if isFloat {
			return elementwise(func(a, b T) T { d, _ := floatDivMod(a, b); return d })
		}
		return intKernel[T](op)
	case opset.Remainder:
		if isFloat {
			return elementwise(func(a, b T) T { _, m := floatDivMod(a, b); return m })
		}
		return intKernel[T](op)
	case opset.Pow:
		if isFloat {
			return elementwise(func(a, b T) T { return T(math.Pow(float64(a), float64(b))) })
		}
		return intKernel[T](op)
	case opset.LogAddExp:
		return elementwise(func(a, b T) T { return T(logAddExp(float64(a), float64(b))) })
	case opset.Hypot:
		return elementwise(func(a, b T) T { return T(math.Hypot(float64(a), float64(b))) })
	case opset.BitwiseAnd, opset.BitwiseOr, opset.BitwiseXor, opset.LeftShift, opset.RightShift:
		return intKernel[T](op)
	default: // ArcTan2
		return elementwise(func(a, b T) T { return T(math.Atan2(float64(a), float64(b))) })
	}
}

// realKernel returns the kernel of op for a real type.
func realKernel[T ewReal](op opset.BinaryOp) binRunner {
	if op.IsComparison() {
		return compareKernel[T](op)
	}
	return arithKernel[T](op)
}

// intKernel returns the FloorDivide, Remainder, Pow, bitwise or shift
// kernel of the integer type T, whose bit operations ewReal does not
// allow.
func intKernel[T ewReal](op opset.BinaryOp) binKernel[T, T] {
	var k any
	switch any(*new(T)).(type) {
	case uint8:
		k = intKernelOf[uint8](op)
	case int32:
		k = intKernelOf[int32](op)
	case int64:
		k = intKernelOf[int64](op)
	case int8:
		k = intKernelOf[int8](op)
	case int16:
		k = intKernelOf[int16](op)
	case uint16:
		k = intKernelOf[uint16](op)
	case uint32:
		k = intKernelOf[uint32](op)
	case uint64:
		k = intKernelOf[uint64](op)
	}
	return k.(binKernel[T, T])
}

func intKernelOf[T ewInt](op opset.BinaryOp) binKernel[T, T] {
	switch op {
	case opset.FloorDivide:
		return elementwise(intFloorDiv[T])
	case opset.Remainder:
		return elementwise(intRemainder[T])
	case opset.BitwiseAnd:
		return elementwise(func(a, b T) T { return a & b })
	case opset.BitwiseOr:
		return elementwise(func(a, b T) T { return a | b })
	case opset.BitwiseXor:
		return elementwise(func(a, b T) T { return a ^ b })
	case opset.LeftShift:
		return elementwise(shiftLeft[T])
	case opset.RightShift:
		return elementwise(shiftRight[T])
	}
	return elementwise(intPow[T])
}

// shiftLeft is numpy's left_shift: a count below 0 or at least the width
// gives 0. Go's shifts give 0 for counts at least the width already; a
// negative count, which would panic, reads as a huge unsigned one.
func shiftLeft[T ewInt](a, b T) T { return a << shiftCount(b) }

// shiftRight is numpy's right_shift: arithmetic for signed types, so a
// count below 0 or at least the width gives 0, or -1 for a negative a.
func shiftRight[T ewInt](a, b T) T { return a >> shiftCount(b) }

// shiftCount is a shift count as an unsigned number: a negative count
// becomes at least 2^63, past every width.
func shiftCount[T ewInt](b T) uint64 {
	if b < 0 {
		return math.MaxUint64
	}
	return uint64(b)
}

// intFloorDiv is numpy's floor_divide for integers, with 0 for a zero
// divisor.
func intFloorDiv[T ewInt](a, b T) T {
	if b == 0 {
		return 0
	}
	q := a / b
	if r := a % b; r != 0 && (r < 0) != (b < 0) {
		q--
	}
	return q
}

// intRemainder is numpy's remainder for integers (the sign of the
// divisor), with 0 for a zero divisor.
func intRemainder[T ewInt](a, b T) T {
	if b == 0 {
		return 0
	}
	r := a % b
	if r != 0 && (r < 0) != (b < 0) {
		r += b
	}
	return r
}

// intPow raises a to b by repeated squaring, wrapping on overflow. A
// negative exponent gives 0, except for the bases 1 and -1.
func intPow[T ewInt](a, b T) T {
	if b < 0 {
		switch {
		case a == 1:
			return 1
		case a+1 == 0: // -1, spelled so that it compiles for uint8
			if b%2 == 0 {
				return 1
			}
			return a
		}
		return 0
	}
	r := T(1)
	for b > 0 {
		if b&1 == 1 {
			r *= a
		}
		a *= a
		b >>= 1
	}
	return r
}

// floatDivMod is numpy's npy_divmod for a float type T: the floored
// quotient and the remainder with the sign of b, computed in T's
// precision so float32 results match numpy's.
func floatDivMod[T ewReal](a, b T) (div, mod T) {
	mod = T(math.Mod(float64(a), float64(b)))
	if b == 0 {
		return a / b, mod
	}
	q := (a - mod) / b
	if mod != 0 {
		if (b < 0) != (mod < 0) {
			mod += b
			q -= 1
		}
	} else {
		mod = T(math.Copysign(0, float64(b)))
	}
	if q != 0 {
		div = T(math.Floor(float64(q)))
		if float64(q-div) > 0.5 {
			div += 1
		}
	} else {
		div = T(math.Copysign(0, float64(a/b)))
	}
	return div, mod
}

// logAddExp is numpy's npy_logaddexp.
func logAddExp(x, y float64) float64 {
	if x == y {
		// also handles infinities of the same sign
		return x + math.Ln2
	}
	d := x - y
	switch {
	case d > 0:
		return x + math.Log1p(math.Exp(-d))
	case d <= 0:
		return y + math.Log1p(math.Exp(d))
	}
	return d // NaN
}

func boolBinary(op opset.BinaryOp) binKernel[bool, bool] {
	var f func(a, b bool) bool
	switch op {
	case opset.Add, opset.Maximum, opset.LogicalOr:
		f = func(a, b bool) bool { return a || b }
	case opset.Mul, opset.Minimum, opset.LogicalAnd, opset.BitwiseAnd:
		f = func(a, b bool) bool { return a && b }
	case opset.BitwiseOr:
		f = func(a, b bool) bool { return a || b }
	case opset.BitwiseXor:
		f = func(a, b bool) bool { return a != b }
	case opset.Equal:
		f = func(a, b bool) bool { return a == b }
	case opset.NotEqual:
		f = func(a, b bool) bool { return a != b }
	case opset.Less:
		f = func(a, b bool) bool { return !a && b }
	case opset.LessEqual:
		f = func(a, b bool) bool { return !a || b }
	case opset.Greater:
		f = func(a, b bool) bool { return a && !b }
	default: // GreaterEqual
		f = func(a, b bool) bool { return a || !b }
	}
	return elementwise(f)
}

// halfBinary widens tiles of both operands to float32, runs the float32
// kernel and rounds the result on store.
func halfBinary[H halfFloat](op opset.BinaryOp, out, a, b Buf) {
	if op.IsComparison() {
		k := compareKernel[float32](op).vv
		runBinary(out, a, b, func(n int) binKernel[H, bool] {
			ta, tb := make([]float32, tileFor(n)), make([]float32, tileFor(n))
			return binKernel[H, bool]{vv: func(d []bool, x, y []H) {
				for i := 0; i < len(d); i += len(ta) {
					m := min(len(ta), len(d)-i)
					halfLoad(ta[:m], x[i:i+m])
					halfLoad(tb[:m], y[i:i+m])
					k(d[i:i+m], ta[:m], tb[:m])
				}
			}}
		})
		return
	}
	k := arithKernel[float32](op).vv
	runBinary(out, a, b, func(n int) binKernel[H, H] {
		ta, tb := make([]float32, tileFor(n)), make([]float32, tileFor(n))
		return binKernel[H, H]{vv: func(d, x, y []H) {
			for i := 0; i < len(d); i += len(ta) {
				m := min(len(ta), len(d)-i)
				halfLoad(ta[:m], x[i:i+m])
				halfLoad(tb[:m], y[i:i+m])
				k(ta[:m], ta[:m], tb[:m])
				halfStore(d[i:i+m], ta[:m])
			}
		}}
	})
}

func complexKernel(op opset.BinaryOp) binRunner {
	switch op {
	case opset.Add:
		return addKernel[complex64]()
	case opset.Sub:
		return subKernel[complex64]()
	case opset.Mul:
		return mulKernel[complex64]()
	case opset.Div:
		return divKernel[complex64]()
	case opset.Pow:
		return elementwise(func(x, y complex64) complex64 {
			return complex64(cmplx.Pow(complex128(x), complex128(y)))
		})
	case opset.Equal:
		return elementwise(func(x, y complex64) bool { return x == y })
	}
	return elementwise(func(x, y complex64) bool { return x != y }) // NotEqual
}
