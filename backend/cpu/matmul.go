package cpu

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/strided"
)

// MatMul computes out = a @ b over the last two axes: a is [..., M, K], b
// is [..., K, N] and out is row-major [..., M, N]. The batch axes of a and
// b are already broadcast to out's (zero strides allowed). float32 and
// float64 go to the packed GEMM of gemm.go, whose packing reads any
// strides, so transposed, strided and broadcast matrices are never
// copied; float16 and bfloat16 are widened to float32 while packing,
// accumulate in float32 and round once; integers, bool (or of ands, as
// numpy) and complex64 use plain loops. K = 0 gives zeros.
func MatMul(out, a, b Buf) error {
	k := a.Shape[len(a.Shape)-1]
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
	mm := newMatmulPlan(out, a, b)
	switch out.DType {
	case array.Float32:
		matmulFloat[float32](mm)
	case array.Float64:
		matmulFloat[float64](mm)
	case array.Float16:
		matmulHalf(mm, array.NewF16)
	case array.BFloat16:
		matmulHalf(mm, array.NewBF16)
	case array.Bool:
		matmulBool(mm)
	case array.Uint8:
		matmulLoop[uint8](mm)
	case array.Int32:
		matmulLoop[int32](mm)
	case array.Int64:
		matmulLoop[int64](mm)
	case array.Int8:
		matmulLoop[int8](mm)
	case array.Int16:
		matmulLoop[int16](mm)
	case array.Uint16:
		matmulLoop[uint16](mm)
	case array.Uint32:
		matmulLoop[uint32](mm)
	case array.Uint64:
		matmulLoop[uint64](mm)
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
	batch := out.Shape[:nd-2]
	p.aOffs = make([]int, 0, p.batches)
	p.bOffs = make([]int, 0, p.batches)
	strided.ForEachOffset(batch, a.Strides[:nd-2], a.Offset, func(off int) { p.aOffs = append(p.aOffs, off) })
	strided.ForEachOffset(batch, b.Strides[:nd-2], b.Offset, func(off int) { p.bOffs = append(p.bOffs, off) })
	return p
}

// matStrides returns the row and column strides of buf's matrices.
func matStrides(b Buf) (rs, cs int) {
	nd := len(b.Shape)
	return b.Strides[nd-2], b.Strides[nd-1]
}

func (p *matmulPlan) aStrides() (int, int) { return matStrides(p.a) }
func (p *matmulPlan) bStrides() (int, int) { return matStrides(p.b) }

// eachBatch calls f for every batch matrix. A product big enough to
// split runs one batch after another, each spread over cores (parallel
// true); smaller ones are spread over cores a batch at a time instead.
func (p *matmulPlan) eachBatch(f func(i int, parallel bool)) {
	flops := 2 * p.m * p.n * p.k
	if p.batches == 1 || flops >= parallelFlops {
		for i := 0; i < p.batches; i++ {
			f(i, true)
		}
		return
	}
	ParallelFor(p.batches, max(1, parallelFlops/flops), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			f(i, false)
		}
	})
}

func matmulFloat[T float32 | float64](p *matmulPlan) {
	A, B, C := elems[T](p.a), elems[T](p.b), elems[T](p.out)
	ars, acs := p.aStrides()
	brs, bcs := p.bStrides()
	mn := p.m * p.n
	p.eachBatch(func(i int, parallel bool) {
		c := p.out.Offset + i*mn
		gemm(p.m, p.n, p.k, mat[T]{A, p.aOffs[i], ars, acs}, mat[T]{B, p.bOffs[i], brs, bcs}, C[c:c+mn], p.n, parallel)
	})
}

// matmulHalf sums each batch matrix in float32 and rounds it into out.
func matmulHalf[S half](p *matmulPlan, round func(float32) S) {
	A, B, O := elems[S](p.a), elems[S](p.b), elems[S](p.out)
	ars, acs := p.aStrides()
	brs, bcs := p.bStrides()
	mn := p.m * p.n
	p.eachBatch(func(i int, parallel bool) {
		buf := pool32.get(mn)
		sums := (*buf)[:mn]
		gemmHalf(p.m, p.n, p.k, mat[S]{A, p.aOffs[i], ars, acs}, mat[S]{B, p.bOffs[i], brs, bcs}, sums, p.n, parallel)
		o := O[p.out.Offset+i*mn : p.out.Offset+(i+1)*mn]
		store := func(lo, hi int) {
			for j, v := range sums[lo:hi] {
				o[lo+j] = round(v)
			}
		}
		if parallel {
			ParallelFor(mn, grain, store)
		} else {
			store(0, mn)
		}
		pool32.put(buf)
	})
}

// matmulLoop is the plain i-k-j product for types without BLAS. Rows of
// out are independent and split over cores.
func matmulLoop[T ewInt | complex64](p *matmulPlan) {
	O, A, B := elems[T](p.out), elems[T](p.a), elems[T](p.b)
	ars, acs := p.aStrides()
	brs, bcs := p.bStrides()
	m, n, k := p.m, p.n, p.k
	ParallelFor(p.batches*m, max(1, grain/(n*k)), func(lo, hi int) {
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
	O, A, B := elems[bool](p.out), elems[bool](p.a), elems[bool](p.b)
	ars, acs := p.aStrides()
	brs, bcs := p.bStrides()
	m, n, k := p.m, p.n, p.k
	ParallelFor(p.batches*m, max(1, grain/(n*k)), func(lo, hi int) {
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
