package cpu

import (
	"sync/atomic"
	"unsafe"

	"github.com/fathom-go/fathom/array"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// operandCopies counts float32/float64 operands that MatMul copied
// because BLAS could not read them in place. Transposed views must not
// add to it; the tests hold the kernel to that.
var operandCopies atomic.Int64

// gemmBlock and gemmMinParBlocks mirror gonum's blocking: gonum splits one
// Gemm over cores only when it has at least that many blocks of C, so
// smaller matrices of a batch are spread over cores here instead.
const (
	gemmBlock        = 64
	gemmMinParBlocks = 4
)

// MatMul computes out = a @ b over the last two axes: a is [..., M, K], b
// is [..., K, N] and out is row-major [..., M, N]. The batch axes of a and
// b are already broadcast to out's (zero strides allowed). float32 and
// float64 go to gonum's Gemm, reading row-major and transposed
// (column-major) matrices in place; float16 and bfloat16 compute in
// float32 and round; integers, bool (or of ands, as numpy) and complex64
// use plain loops. K = 0 gives zeros.
func MatMul(out, a, b Buf) error {
	nd := len(out.Shape)
	if nd < 2 || len(a.Shape) != nd || len(b.Shape) != nd {
		return array.Errorf("cpu.MatMul", "shapes %v @ %v -> %v need equal ranks of at least 2", a.Shape, b.Shape, out.Shape)
	}
	m, n, k := out.Shape[nd-2], out.Shape[nd-1], a.Shape[nd-1]
	if a.Shape[nd-2] != m || b.Shape[nd-2] != k || b.Shape[nd-1] != n ||
		!equalShape(a.Shape[:nd-2], out.Shape[:nd-2]) || !equalShape(b.Shape[:nd-2], out.Shape[:nd-2]) {
		return array.Errorf("cpu.MatMul", "shapes %v @ %v do not give %v", a.Shape, b.Shape, out.Shape)
	}
	if a.DType != out.DType || b.DType != out.DType {
		return array.Errorf("cpu.MatMul", "dtypes %v @ %v -> %v differ", a.DType, b.DType, out.DType)
	}
	if !out.RowMajor() {
		return array.Errorf("cpu.MatMul", "out of shape %v is not row-major", out.Shape)
	}
	size := out.Size()
	if size == 0 {
		return nil
	}
	if k == 0 {
		es := out.DType.Size()
		clear(out.Data[out.Offset*es : (out.Offset+size)*es])
		return nil
	}
	if out.DType == array.Float16 || out.DType == array.BFloat16 {
		tmp := Contiguous(scratch(size*4), array.Float32, out.Shape)
		gemm(newMatmulPlan(tmp, compactCopy(a, array.Float32), compactCopy(b, array.Float32)), gemm32)
		return Copy(out, tmp)
	}
	mm := newMatmulPlan(out, a, b)
	switch out.DType {
	case array.Float32:
		gemm(mm, gemm32)
	case array.Float64:
		gemm(mm, gemm64)
	case array.Bool:
		matmulBool(mm)
	case array.Uint8:
		matmulLoop[uint8](mm)
	case array.Int32:
		matmulLoop[int32](mm)
	case array.Int64:
		matmulLoop[int64](mm)
	case array.Complex64:
		matmulLoop[complex64](mm)
	default:
		return array.Errorf("cpu.MatMul", "dtype %v not supported", out.DType)
	}
	return nil
}

// matmulPlan is one MatMul call: operands, sizes, and each batch
// matrix's storage offset in a and b (out is row-major).
type matmulPlan struct {
	out, a, b    Buf
	m, n, k      int
	batches      int
	aOffs, bOffs []int
}

func newMatmulPlan(out, a, b Buf) *matmulPlan {
	nd := len(out.Shape)
	p := &matmulPlan{out: out, a: a, b: b, m: out.Shape[nd-2], n: out.Shape[nd-1], k: a.Shape[nd-1]}
	p.batches = 1
	for _, d := range out.Shape[:nd-2] {
		p.batches *= d
	}
	p.setOffsets()
	return p
}

func (p *matmulPlan) setOffsets() {
	nd := len(p.out.Shape)
	batch := p.out.Shape[:nd-2]
	p.aOffs = make([]int, 0, p.batches)
	p.bOffs = make([]int, 0, p.batches)
	array.ForEachOffset(batch, p.a.Strides[:nd-2], p.a.Offset, func(off int) { p.aOffs = append(p.aOffs, off) })
	array.ForEachOffset(batch, p.b.Strides[:nd-2], p.b.Offset, func(off int) { p.bOffs = append(p.bOffs, off) })
}

// matStrides returns the row and column strides of buf's matrices.
func matStrides(b Buf) (rs, cs int) {
	nd := len(b.Shape)
	return b.Strides[nd-2], b.Strides[nd-1]
}

// bufLayout is blasLayout for the matrices of b.
func bufLayout(b Buf) (t blas.Transpose, ld int, ok bool) {
	nd := len(b.Shape)
	rs, cs := matStrides(b)
	return blasLayout(b.Shape[nd-2], b.Shape[nd-1], rs, cs)
}

// blasLayout says how BLAS reads a rows×cols matrix with strides (rs, cs)
// in place: row-major with leading dimension ld (NoTrans), or
// column-major, which BLAS reads as the transpose of a cols×rows row-major
// matrix (Trans). ok is false when neither fits (broadcast or negative
// strides, overlapping rows): then the matrix must be copied. Strides of
// a dimension of size 1 never matter.
func blasLayout(rows, cols, rs, cs int) (t blas.Transpose, ld int, ok bool) {
	if (cols == 1 || cs == 1) && (rows == 1 || rs >= max(cols, 1)) {
		if rows == 1 {
			return blas.NoTrans, max(cols, 1), true
		}
		return blas.NoTrans, rs, true
	}
	if (rows == 1 || rs == 1) && (cols == 1 || cs >= max(rows, 1)) {
		if cols == 1 {
			return blas.Trans, max(rows, 1), true
		}
		return blas.Trans, cs, true
	}
	return blas.NoTrans, 0, false
}

// gemmFunc computes c = a @ b for one matrix of a batch: a and b are read
// as BLAS describes them (ta, lda / tb, ldb); c is row-major m×n.
type gemmFunc[T float32 | float64] func(ta, tb blas.Transpose, m, n, k int, a []T, lda int, b []T, ldb int, c []T)

func gemm32(ta, tb blas.Transpose, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32) {
	blas32.Gemm(ta, tb, 1,
		blas32.General{Rows: rowsStored(ta, m, k), Cols: colsStored(ta, m, k), Stride: lda, Data: a},
		blas32.General{Rows: rowsStored(tb, k, n), Cols: colsStored(tb, k, n), Stride: ldb, Data: b},
		0, blas32.General{Rows: m, Cols: n, Stride: n, Data: c})
}

func gemm64(ta, tb blas.Transpose, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64) {
	blas64.Gemm(ta, tb, 1,
		blas64.General{Rows: rowsStored(ta, m, k), Cols: colsStored(ta, m, k), Stride: lda, Data: a},
		blas64.General{Rows: rowsStored(tb, k, n), Cols: colsStored(tb, k, n), Stride: ldb, Data: b},
		0, blas64.General{Rows: m, Cols: n, Stride: n, Data: c})
}

// rowsStored and colsStored give the shape of the stored matrix behind an
// r×c operand read with transpose t.
func rowsStored(t blas.Transpose, r, c int) int {
	if t == blas.NoTrans {
		return r
	}
	return c
}

func colsStored(t blas.Transpose, r, c int) int {
	if t == blas.NoTrans {
		return c
	}
	return r
}

func gemm[T float32 | float64](p *matmulPlan, f gemmFunc[T]) {
	ta, lda, ok := bufLayout(p.a)
	if !ok {
		operandCopies.Add(1)
		p.a = compactCopy(p.a, p.a.DType)
		p.setOffsets()
		ta, lda, _ = bufLayout(p.a)
	}
	tb, ldb, ok := bufLayout(p.b)
	if !ok {
		operandCopies.Add(1)
		p.b = compactCopy(p.b, p.b.DType)
		p.setOffsets()
		tb, ldb, _ = bufLayout(p.b)
	}
	A, B, C := Elems[T](p.a), Elems[T](p.b), Elems[T](p.out)
	mn := p.m * p.n
	one := func(i int) {
		c := p.out.Offset + i*mn
		f(ta, tb, p.m, p.n, p.k, A[p.aOffs[i]:], lda, B[p.bOffs[i]:], ldb, C[c:c+mn])
	}
	blocks := ((p.m + gemmBlock - 1) / gemmBlock) * ((p.n + gemmBlock - 1) / gemmBlock)
	if p.batches == 1 || blocks >= gemmMinParBlocks {
		for i := 0; i < p.batches; i++ {
			one(i)
		}
		return
	}
	ParallelFor(p.batches, max(1, Grain/(mn*p.k)), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			one(i)
		}
	})
}

func (p *matmulPlan) aStrides() (int, int) { return matStrides(p.a) }
func (p *matmulPlan) bStrides() (int, int) { return matStrides(p.b) }

// scratch returns n bytes of temporary memory aligned for any element
// type.
func scratch(n int) []byte {
	w := make([]uint64, (n+7)/8)
	if len(w) == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&w[0])), n)
}

// compactCopy copies b into fresh row-major memory of dtype dt. Batch axes
// that b broadcasts (zero strides) stay broadcast rather than being
// repeated: the copy holds each distinct matrix once.
func compactCopy(b Buf, dt array.DType) Buf {
	nd := len(b.Shape)
	cs := append([]int(nil), b.Shape...)
	for d := 0; d < nd-2; d++ {
		if b.Strides[d] == 0 {
			cs[d] = 1
		}
	}
	n := 1
	for _, d := range cs {
		n *= d
	}
	tmp := Contiguous(scratch(n*dt.Size()), dt, cs)
	src := b
	src.Shape = cs
	// Shapes match by construction; Copy cannot fail.
	_ = Copy(tmp, src)
	st := append([]int(nil), tmp.Strides...)
	for d := 0; d < nd-2; d++ {
		if cs[d] != b.Shape[d] {
			st[d] = 0
		}
	}
	return Buf{Data: tmp.Data, DType: dt, Shape: b.Shape, Strides: st}
}

// matmulLoop is the plain i-k-j product for types without BLAS. Rows of
// out are independent and split over cores.
func matmulLoop[T uint8 | int32 | int64 | complex64](p *matmulPlan) {
	O, A, B := Elems[T](p.out), Elems[T](p.a), Elems[T](p.b)
	ars, acs := p.aStrides()
	brs, bcs := p.bStrides()
	m, n, k := p.m, p.n, p.k
	ParallelFor(p.batches*m, max(1, Grain/(n*k)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			bi, i := r/m, r%m
			row := O[p.out.Offset+r*n : p.out.Offset+(r+1)*n]
			clear(row)
			ao, bo := p.aOffs[bi]+i*ars, p.bOffs[bi]
			for kk := 0; kk < k; kk++ {
				x := A[ao+kk*acs]
				bk := bo + kk*brs
				if bcs == 1 {
					for j, y := range B[bk : bk+n] {
						row[j] += x * y
					}
					continue
				}
				for j := range row {
					row[j] += x * B[bk+j*bcs]
				}
			}
		}
	})
}

// matmulBool is numpy's bool matmul: out[i, j] is true when a[i, k] and
// b[k, j] are both true for some k.
func matmulBool(p *matmulPlan) {
	O, A, B := Elems[bool](p.out), Elems[bool](p.a), Elems[bool](p.b)
	ars, acs := p.aStrides()
	brs, bcs := p.bStrides()
	m, n, k := p.m, p.n, p.k
	ParallelFor(p.batches*m, max(1, Grain/(n*k)), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			bi, i := r/m, r%m
			row := O[p.out.Offset+r*n : p.out.Offset+(r+1)*n]
			clear(row)
			ao, bo := p.aOffs[bi]+i*ars, p.bOffs[bi]
			for kk := 0; kk < k; kk++ {
				if !A[ao+kk*acs] {
					continue
				}
				bk := bo + kk*brs
				for j := range row {
					row[j] = row[j] || B[bk+j*bcs]
				}
			}
		}
	})
}
