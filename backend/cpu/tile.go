package cpu

import (
	"unsafe"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/opset"
)

// gatherRange copies the elements of src whose row-major flat index lies
// in [lo, hi) into dst, contiguously, in that order. w must be
// newWalker(src.Shape, src.Strides); callers reuse one walker for the
// many ranges of one array (the fused interpreter's tiles).
func gatherRange(w *walker, dst []byte, src Buf, lo, hi int) {
	switch src.DType.Size() {
	case 1:
		gatherRangeOf[uint8](w, dst, src, lo, hi)
	case 2:
		gatherRangeOf[uint16](w, dst, src, lo, hi)
	case 4:
		gatherRangeOf[uint32](w, dst, src, lo, hi)
	default:
		gatherRangeOf[uint64](w, dst, src, lo, hi)
	}
}

func gatherRangeOf[T any](w *walker, dst []byte, src Buf, lo, hi int) {
	d := elems[T](Buf{Data: dst})
	s := elems[T](src)
	st := w.InnerStrides()[0]
	i := 0
	w.Runs(lo, hi, []int{src.Offset}, func(offs []int, n int) {
		o := offs[0]
		switch st {
		case 1:
			copy(d[i:i+n], s[o:o+n])
		case 0:
			v := s[o]
			for j := range n {
				d[i+j] = v
			}
		default:
			for j := range n {
				d[i+j] = s[o+j*st]
			}
		}
		i += n
	})
}

// unaryTileFunc returns op's kernel over contiguous runs of dtype dt,
// for float32 and float64 functions whose result keeps the dtype, or nil.
// The fused interpreter calls it on each tile directly, without the shape
// checks and dispatch of Unary, which cost more than a small tile's
// arithmetic.
func unaryTileFunc(op opset.UnaryOp, dt array.DType) func(dst, src []byte) {
	if out, ok := op.Result(dt); !ok || out != dt {
		return nil
	}
	switch dt {
	case array.Float32:
		k := floatKernel[float32](op)
		return func(d, s []byte) { k(asSlice[float32](d), asSlice[float32](s)) }
	case array.Float64:
		k := floatKernel[float64](op)
		return func(d, s []byte) { k(asSlice[float64](d), asSlice[float64](s)) }
	}
	return nil
}

// binaryTileFunc returns the kernel of an arithmetic op (Add, Sub, Mul,
// Div, Maximum, Minimum) over contiguous float32 or float64 runs, or nil;
// see unaryTileFunc.
func binaryTileFunc(op opset.BinaryOp, dt array.DType) func(dst, a, b []byte) {
	if !isArith(op) {
		return nil
	}
	switch dt {
	case array.Float32:
		k := arithKernel[float32](op).vv
		return func(d, a, b []byte) { k(asSlice[float32](d), asSlice[float32](a), asSlice[float32](b)) }
	case array.Float64:
		k := arithKernel[float64](op).vv
		return func(d, a, b []byte) { k(asSlice[float64](d), asSlice[float64](a), asSlice[float64](b)) }
	}
	return nil
}

// isArith reports whether op is one of the arithmetic ops of the tile
// functions.
func isArith(op opset.BinaryOp) bool {
	switch op {
	case opset.Add, opset.Sub, opset.Mul, opset.Div, opset.Maximum, opset.Minimum:
		return true
	}
	return false
}

// asSlice views b as a slice of T.
func asSlice[T any](b []byte) []T {
	return elems[T](Buf{Data: b})
}

// binaryScalarTileFuncs returns the kernels of an arithmetic op (see
// binaryTileFunc) with one scalar operand, or nils: vs computes
// dst[i] = a[i] op s and sv computes dst[i] = s op a[i], where s holds
// the scalar's bytes. The fused interpreter uses them for constants, which
// would otherwise take a whole tile of L1 each and a load per element.
func binaryScalarTileFuncs(op opset.BinaryOp, dt array.DType) (vs, sv func(dst, a, s []byte)) {
	if !isArith(op) {
		return nil, nil
	}
	switch dt {
	case array.Float32:
		return scalarTileFuncs(arithKernel[float32](op))
	case array.Float64:
		return scalarTileFuncs(arithKernel[float64](op))
	}
	return nil, nil
}

func scalarTileFuncs[T float32 | float64](k binKernel[T, T]) (vs, sv func(dst, a, s []byte)) {
	vs = func(d, a, s []byte) { k.vs(asSlice[T](d), asSlice[T](a), asSlice[T](s)[0]) }
	sv = func(d, a, s []byte) { k.sv(asSlice[T](d), asSlice[T](s)[0], asSlice[T](a)) }
	return vs, sv
}

// productTileFuncs returns kernels of dst[i] = (a[i]*b[i]) op c[i] over
// contiguous float32 or float64 runs, for op Add or Mul, or nils: vvv with
// b a run, vsv with b a scalar's bytes. The product is rounded first, as
// Mul then op round it, so fusing the two in the interpreter (one pass
// over the tile instead of two) does not change a result.
func productTileFuncs(op opset.BinaryOp, dt array.DType) (vvv, vsv func(dst, a, b, c []byte)) {
	switch {
	case op == opset.Add && dt == array.Float32:
		return productTileFuncsOf[float32](vecMulAdd, vecMulAddS)
	case op == opset.Add && dt == array.Float64:
		return productTileFuncsOf[float64](mulAdd[float64], mulAddScalar[float64])
	case op == opset.Mul && dt == array.Float32:
		return productTileFuncsOf[float32](vecMulMul, vecMulMulS)
	case op == opset.Mul && dt == array.Float64:
		return productTileFuncsOf[float64](mulMul[float64], mulMulScalar[float64])
	}
	return nil, nil
}

func productTileFuncsOf[T float32 | float64](vvv func(d, a, b, c []T), vsv func(d, a []T, b T, c []T)) (func(dst, a, b, c []byte), func(dst, a, b, c []byte)) {
	return func(d, a, b, c []byte) { vvv(asSlice[T](d), asSlice[T](a), asSlice[T](b), asSlice[T](c)) },
		func(d, a, b, c []byte) { vsv(asSlice[T](d), asSlice[T](a), asSlice[T](b)[0], asSlice[T](c)) }
}

// unaryTileFuncNT, binaryTileFuncNT, binaryScalarTileFuncsNT and
// productTileFuncsNT are the twins of the tile functions that store the
// whole vectors from dst's first 64-byte boundary on around the caches,
// for the fused interpreter's results of 32 MiB and more: it computes such
// a result straight into the output instead of into a tile it then copies
// there with storeStream, which saves that copy. They
// are float32 only, and nil where this machine has no such kernel. As
// with storeStream, call storeFence before another goroutine reads dst.
func unaryTileFuncNT(op opset.UnaryOp, dt array.DType) func(dst, src []byte) {
	v, ok := vecUnary[op]
	if dt != array.Float32 || !ok || vecBest == nil || vecBest.kernelsNT[v] == nil {
		return nil
	}
	return func(d, s []byte) { vecApplyStream(vecBest, v, asSlice[float32](d), asSlice[float32](s)) }
}

// binaryTileFuncNT is binaryTileFunc's twin; see unaryTileFuncNT.
func binaryTileFuncNT(op opset.BinaryOp, dt array.DType) func(dst, a, b []byte) {
	if dt != array.Float32 || !isArith(op) || vecArithNT[op].vv == nil {
		return nil
	}
	k := vecArithNT[op].vv
	return func(d, a, b []byte) { k(asSlice[float32](d), asSlice[float32](a), asSlice[float32](b)) }
}

// binaryScalarTileFuncsNT is binaryScalarTileFuncs' twin; see
// unaryTileFuncNT.
func binaryScalarTileFuncsNT(op opset.BinaryOp, dt array.DType) (vs, sv func(dst, a, s []byte)) {
	if dt != array.Float32 || !isArith(op) || vecArithNT[op].vv == nil {
		return nil, nil
	}
	return scalarTileFuncs(vecArithNT[op])
}

// productTileFuncsNT is productTileFuncs' twin; see unaryTileFuncNT.
func productTileFuncsNT(op opset.BinaryOp, dt array.DType) (vvv, vsv func(dst, a, b, c []byte)) {
	switch {
	case dt != array.Float32 || vecBest == nil:
		return nil, nil
	case op == opset.Add:
		return productTileFuncsOf[float32](tripleLoops(vecBest, opset.Add, true))
	case op == opset.Mul:
		return productTileFuncsOf[float32](tripleLoops(vecBest, opset.Mul, true))
	}
	return nil, nil
}

// mulMul and mulMulScalar are the pure-Go products of three; see mulAdd.
func mulMul[T float32 | float64](d, a, b, c []T) {
	a, b, c = a[:len(d)], b[:len(d)], c[:len(d)]
	for i := range d {
		d[i] = T(a[i]*b[i]) * c[i]
	}
}

func mulMulScalar[T float32 | float64](d, a []T, b T, c []T) {
	a, c = a[:len(d)], c[:len(d)]
	for i := range d {
		d[i] = T(a[i]*b) * c[i]
	}
}

// mulAdd and mulAddScalar are the pure-Go multiply-adds. The conversion
// rounds the product: without it the compiler may contract a*b+c into one
// fused multiply-add, which rounds once.
func mulAdd[T float32 | float64](d, a, b, c []T) {
	a, b, c = a[:len(d)], b[:len(d)], c[:len(d)]
	for i := range d {
		d[i] = T(a[i]*b[i]) + c[i]
	}
}

func mulAddScalar[T float32 | float64](d, a []T, b T, c []T) {
	a, c = a[:len(d)], c[:len(d)]
	for i := range d {
		d[i] = T(a[i]*b) + c[i]
	}
}

// prefetch asks for the cache lines of b to be brought into L2 without
// waiting for them. The fused interpreter names the inputs of a tile a few
// tiles ahead: it reads them in bursts with long gaps, which the hardware
// prefetchers do not follow far enough. Without vector kernels it does
// nothing.
func prefetch(b []byte) {
	if vecBest != nil && len(b) > 0 {
		vecBest.prefetch(b)
	}
}

// storeStream copies src to dst (float32 elements, the same length) with
// stores that bypass the caches when dst is 64-byte aligned and this
// machine has the kernel, else as copy does. For a result larger than the
// last-level cache it saves the read of every line that an ordinary store
// fetches before overwriting it; a result that is read again soon should
// be stored the ordinary way. The stores are weakly ordered: call
// storeFence after the last of a batch, before anything that lets another
// goroutine read dst.
func storeStream(dst, src []byte) {
	if vecBest == nil || uintptr(unsafe.Pointer(unsafe.SliceData(dst)))%64 != 0 {
		copy(dst, src)
		return
	}
	d, s := asSlice[float32](dst), asSlice[float32](src)
	n := vecBest.copyNT(d, s[:len(d)])
	copy(dst[4*n:], src[4*n:])
}

// storeFence orders the storeStream stores before it before every store
// after it. It is one fence for a batch: each waits for the stores before
// it to reach memory.
func storeFence() {
	if vecBest != nil {
		vecBest.storeFence()
	}
}

// convertTileFunc returns the conversion of contiguous runs from dtype
// from to dtype to when it is a plain Go conversion to a float dtype (from
// bool, an integer type, float32 or float64), or nil. These are the
// common conversions (a comparison's mask to float, float32 to float64
// and back), which would otherwise go through float64 one element at a
// time.
func convertTileFunc(from, to array.DType) func(dst, src []byte) {
	switch to {
	case array.Float32:
		return directTo[float32](from)
	case array.Float64:
		return directTo[float64](from)
	}
	return nil
}

func directTo[D float32 | float64](from array.DType) func(dst, src []byte) {
	switch from {
	case array.Bool, array.Uint8: // Go stores a bool as the byte 0 or 1
		if vecBest != nil {
			return u8ToFloat[D]
		}
		return convertSlice[uint8, D]
	case array.Int32:
		return convertSlice[int32, D]
	case array.Int64:
		return convertSlice[int64, D]
	case array.Int8:
		return convertSlice[int8, D]
	case array.Int16:
		return convertSlice[int16, D]
	case array.Uint16:
		return convertSlice[uint16, D]
	case array.Uint32:
		return convertSlice[uint32, D]
	case array.Uint64:
		return convertSlice[uint64, D]
	case array.Float32:
		return convertSlice[float32, D]
	case array.Float64:
		return convertSlice[float64, D]
	}
	return nil
}

// u8ToFloat converts bytes to float32 or float64 with the vector kernel,
// then the Go loop over the elements after its whole vectors.
func u8ToFloat[D float32 | float64](dst, src []byte) {
	d := asSlice[D](dst)
	var n int
	switch d := any(d).(type) {
	case []float32:
		n = vecBest.u8ToF32(d, src[:len(d)])
	case []float64:
		n = vecBest.u8ToF64(d, src[:len(d)])
	}
	var z D
	convertSlice[uint8, D](dst[n*int(unsafe.Sizeof(z)):], src[n:])
}

func convertSlice[S numeric, D float32 | float64](dst, src []byte) {
	d, s := asSlice[D](dst), asSlice[S](src)
	s = s[:len(d)]
	for i := range d {
		d[i] = D(s[i])
	}
}

// Triad sets a[i] = b[i] + s·c[i], STREAM's triad, split across cores in
// chunks of 1<<16 with the multiply-add kernel of the fused interpreter
// (a scalar Go loop is bound by its instructions, not by memory). It is
// the bandwidth probe that package bench reads memory-bound results
// against. The slices have one length and a does not overlap b or c.
func Triad(a, b, c []float32, s float32) {
	ParallelFor(len(a), 1<<16, func(lo, hi int) {
		vecMulAddS(a[lo:hi], c[lo:hi], s, b[lo:hi])
	})
}
