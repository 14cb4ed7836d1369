package cpu

import (
	"errors"
	"fmt"
	"sync"

	"gonum.org/v1/gonum/blas"
	lapackgo "gonum.org/v1/gonum/lapack/gonum"

	"github.com/fathom-go/fathom/array"
)

// ErrSingular is the kind of the error a solve or an inverse returns for
// a matrix whose LU factorisation has an exactly zero pivot (LAPACK's
// info > 0, where numpy raises LinAlgError "Singular matrix").
var ErrSingular = errors.New("singular matrix")

// The kernels of this file solve linear systems and factor matrices with
// gonum's LAPACK, which is float64 only and row-major (lda is the row
// stride). Each matrix of a batch is copied into float64 row-major
// scratch from the pool, which also reads strided and broadcast views and
// widens float32, computed there, and copied into the output, narrowing
// float32 on the way. The copies cost O(n²) against the O(n³) of the
// factorisation. The leading axes of every operand are the batch, equal
// in all of them (package ops broadcasts them with zero strides); the
// last two are the matrix.

var slvLAPACK lapackgo.Implementation

// slvElem returns the i-th element of b's batch: the view of b's last
// inner axes at batch index i (row-major over the other axes).
func slvElem(b Buf, i, inner int) Buf {
	nd := len(b.Shape)
	off := b.Offset
	for d := nd - inner - 1; d >= 0; d-- {
		off += (i % b.Shape[d]) * b.Strides[d]
		i /= b.Shape[d]
	}
	return Buf{Data: b.Data, DType: b.DType, Shape: b.Shape[nd-inner:], Strides: b.Strides[nd-inner:], Offset: off}
}

// slvCount is the number of matrices (inner = 2) or vectors (inner = 1)
// in b.
func slvCount(b Buf, inner int) int {
	n := 1
	for _, d := range b.Shape[:len(b.Shape)-inner] {
		n *= d
	}
	return n
}

// batchIndex spells batch element i of shape (whose last inner axes are
// not the batch's) as a multi-index, for error messages.
func batchIndex(shape []int, inner, i int) []int {
	lead := shape[:len(shape)-inner]
	idx := make([]int, len(lead))
	for d := len(lead) - 1; d >= 0; d-- {
		idx[d] = i % lead[d]
		i /= lead[d]
	}
	return idx
}

// slvLoad copies the matrix src (float32 or float64, any strides) into
// the row-major float64 scratch dst, through decMats's own loops rather
// than Copy, whose walker allocates: for a batch of small matrices that
// was most of the time.
func slvLoad(dst []float64, src Buf) { newDecMats(src).load(0, dst, src.Shape[1]) }

// slvStore copies the row-major float64 scratch src into the matrix dst
// (float32 or float64, any strides), rounding to float32 once.
func slvStore(dst Buf, src []float64) { newDecMats(dst).store(0, src, dst.Shape[1]) }

// slvErr keeps the error of the lowest batch element, so that the error
// Eval reports does not depend on how the batch was split over cores.
type slvErr struct {
	mu  sync.Mutex
	at  int
	err error
}

func (e *slvErr) set(i int, err error) {
	e.mu.Lock()
	if e.err == nil || i < e.at {
		e.at, e.err = i, err
	}
	e.mu.Unlock()
}

// slvBatch runs body over the batch's n matrices, each about flops
// floating-point operations, on decBatch, which splits them over cores
// when there are enough to pay for it and names a failure's batch index
// in shape. body gets float64 scratch of at least words elements and int
// scratch of ints elements, both its chunk's, and returns the failure of
// matrix i or nil. A single large matrix runs on the calling goroutine:
// its LAPACK spends its time in the BLAS.
func slvBatch(op string, shape []int, n, flops, words, ints int, body func(i int, scratch []float64, iscratch []int) *decFail) error {
	// A LAPACK call on a tiny matrix costs about as much as a couple of
	// thousand flops of arithmetic (checks, scratch, copies), so chunks
	// of small matrices hold many of them.
	grain := max(1, (1<<16)/(flops+2048))
	return decBatch(op, shape, n, grain, func(lo, hi int, sc *decScratch) *decFail {
		buf, is := sc.get(max(1, words)), make([]int, ints)
		for i := lo; i < hi; i++ {
			if f := body(i, buf, is); f != nil {
				return f
			}
		}
		return nil
	})
}

func slvCheck(op string, bufs ...Buf) error {
	for _, b := range bufs {
		if b.DType != array.Float32 && b.DType != array.Float64 {
			return array.Errorf(op, "dtype %v is not supported (float32 and float64 are)", b.DType)
		}
	}
	return nil
}

// slvSingular is the failure of batch element i whose triangular factor
// has its first zero on the diagonal at j.
func slvSingular(i, j int) *decFail {
	return &decFail{i, ErrSingular, fmt.Sprintf("is singular: U[%d,%d] is exactly zero", j, j)}
}

// slvZeroDiag returns the first j with a[j,j] == 0 in the row-major n×n
// matrix a, or -1.
func slvZeroDiag(a []float64, n int) int {
	for j := range n {
		if a[j*n+j] == 0 {
			return j
		}
	}
	return -1
}

// LUFactor computes the LU factorisation with partial pivoting of every
// m×n matrix of a (LAPACK's getrf): lu holds L below the diagonal (its
// unit diagonal implied) and U on and above it; pivots (int32, min(m, n)
// per matrix) are LAPACK's row interchanges, 0-based: row j was swapped
// with row pivots[j]; rows (int32, m per matrix) are the permutation
// they amount to, as row indices p with a = L[p]·U. A singular matrix is
// factored too (U has a zero on its diagonal): it is not an error.
func LUFactor(lu, pivots, rows, a Buf) error {
	if err := slvCheck("linalg.LUFactor", lu, a); err != nil {
		return err
	}
	nd := len(a.Shape)
	m, n := a.Shape[nd-2], a.Shape[nd-1]
	k := min(m, n)
	pv, rw := elems[int32](pivots), elems[int32](rows)
	return slvBatch("linalg.LUFactor", a.Shape, slvCount(a, 2), m*n*k, m*n, k+m, func(i int, scratch []float64, is []int) *decFail {
		w, piv, perm := scratch[:m*n], is[:k], is[k:k+m]
		slvLoad(w, slvElem(a, i, 2))
		slvLAPACK.Dgetrf(m, n, w, max(1, n), piv)
		slvStore(slvElem(lu, i, 2), w)
		pb := slvElem(pivots, i, 1)
		for j, v := range piv {
			pv[pb.Offset+j*pb.Strides[0]] = int32(v)
		}
		for j := range perm {
			perm[j] = j
		}
		for j, v := range piv {
			perm[j], perm[v] = perm[v], perm[j]
		}
		// perm lists the rows of a in the order L·U has them; p is its
		// inverse.
		rb := slvElem(rows, i, 1)
		for j, v := range perm {
			rw[rb.Offset+v*rb.Strides[0]] = int32(j)
		}
		return nil
	})
}

// LUOrder writes, for every vector of LAPACK pivots (int32, k per
// vector, 0-based), the order of the m rows that applying them gives:
// perm with a[perm] = L·U, the rows a solve with the factors takes from
// its right-hand side. A pivot outside [0, m) is an error.
func LUOrder(perm, pivots Buf) error {
	if pivots.DType != array.Int32 || perm.DType != array.Int32 {
		return array.Errorf("linalg.LUSolve", "pivots of dtype %v: want int32", pivots.DType)
	}
	m := perm.Shape[len(perm.Shape)-1]
	k := pivots.Shape[len(pivots.Shape)-1]
	pv, out := elems[int32](pivots), elems[int32](perm)
	var e slvErr
	ParallelFor(slvCount(perm, 1), max(1, grain/max(1, m)), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			pb, ob := slvElem(pivots, i, 1), slvElem(perm, i, 1)
			at := func(j int) *int32 { return &out[ob.Offset+j*ob.Strides[0]] }
			for j := range m {
				*at(j) = int32(j)
			}
			for j := range k {
				v := pv[pb.Offset+j*pb.Strides[0]]
				if v < 0 || int(v) >= m {
					e.set(i, array.Errorf("linalg.LUSolve", "pivot %d of the pivots of shape %v is %d, outside [0, %d)", j, pivots.Shape, v, m))
					break
				}
				a, b := at(j), at(int(v))
				*a, *b = *b, *a
			}
		}
	})
	return e.err
}

// Inv writes the inverse of every n×n matrix of a into out: LAPACK's
// getrf, then getrs on the identity, as numpy's inv (gesv) does. That is
// 2n³ flops after the factorisation against getri's 4n³/3, but they are
// triangular solves with n right-hand sides, which the registered BLAS
// runs at the GEMM's speed: with fathom's, gonum's getri took 2.5 times
// as long at n = 1024 (docs/performance.md). A singular matrix is an
// error wrapping ErrSingular that names its batch index.
func Inv(out, a Buf) error {
	const op = "linalg.Inv"
	if err := slvCheck(op, out, a); err != nil {
		return err
	}
	n := a.Shape[len(a.Shape)-1]
	if n == 0 {
		return nil
	}
	return slvBatch(op, a.Shape, slvCount(a, 2), 3*n*n*n, 2*n*n, n, func(i int, scratch []float64, piv []int) *decFail {
		w, x := scratch[:n*n], scratch[n*n:2*n*n]
		slvLoad(w, slvElem(a, i, 2))
		if !slvLAPACK.Dgetrf(n, n, w, n, piv) {
			return slvSingular(i, slvZeroDiag(w, n))
		}
		clear(x)
		for j := range n {
			x[j*n+j] = 1
		}
		slvLAPACK.Dgetrs(blas.NoTrans, n, n, w, n, piv, x, n)
		slvStore(slvElem(out, i, 2), x)
		return nil
	})
}

// Solve writes the solution x of a·x = b for every n×n matrix of a and
// n×k matrix of b into out (LAPACK's getrf and getrs). A singular matrix
// is an error wrapping ErrSingular that names its batch index.
func Solve(out, a, b Buf) error {
	const op = "linalg.Solve"
	if err := slvCheck(op, out, a, b); err != nil {
		return err
	}
	nd := len(b.Shape)
	n, k := b.Shape[nd-2], b.Shape[nd-1]
	if n == 0 || k == 0 {
		return nil
	}
	return slvBatch(op, a.Shape, slvCount(b, 2), n*n*(n+k), n*n+n*k, n, func(i int, scratch []float64, piv []int) *decFail {
		w, x := scratch[:n*n], scratch[n*n:n*n+n*k]
		slvLoad(w, slvElem(a, i, 2))
		if !slvLAPACK.Dgetrf(n, n, w, n, piv) {
			return slvSingular(i, slvZeroDiag(w, n))
		}
		slvLoad(x, slvElem(b, i, 2))
		slvLAPACK.Dgetrs(blas.NoTrans, n, k, w, n, piv, x, k)
		slvStore(slvElem(out, i, 2), x)
		return nil
	})
}

// SolveTriangular writes the solution x of a·x = b for every n×n matrix
// of a and n×k matrix of b into out, reading only a's upper or lower
// triangle (LAPACK's trtrs); with unit, a's diagonal is taken as ones and
// not read. A zero on the diagonal (when it is read) is an error wrapping
// ErrSingular that names its batch index.
func SolveTriangular(out, a, b Buf, upper, unit bool) error {
	const op = "linalg.SolveTriangular"
	if err := slvCheck(op, out, a, b); err != nil {
		return err
	}
	nd := len(b.Shape)
	n, k := b.Shape[nd-2], b.Shape[nd-1]
	if n == 0 || k == 0 {
		return nil
	}
	uplo, diag := blas.Lower, blas.NonUnit
	if upper {
		uplo = blas.Upper
	}
	if unit {
		diag = blas.Unit
	}
	return slvBatch(op, a.Shape, slvCount(b, 2), n*n*k, n*n+n*k, 0, func(i int, scratch []float64, _ []int) *decFail {
		w, x := scratch[:n*n], scratch[n*n:n*n+n*k]
		slvLoad(w, slvElem(a, i, 2))
		if !unit {
			if j := slvZeroDiag(w, n); j >= 0 {
				return slvSingular(i, j)
			}
		}
		slvLoad(x, slvElem(b, i, 2))
		slvLAPACK.Dtrtrs(uplo, blas.NoTrans, diag, n, k, w, n, x, k)
		slvStore(slvElem(out, i, 2), x)
		return nil
	})
}
