package cpu

import (
	"math"
	"os"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
)

// BLAS is gonum's BLAS with its general matrix products (Dgemm, Sgemm)
// computed by fathom's GEMM, its triangular solves and products (Dtrsm,
// Strsm, Dtrmm, Strmm) blocked over that GEMM, its symmetric rank-k and
// rank-2k updates (Dsyrk, Ssyrk, Dsyr2k) made of GEMM strips, and the
// level-2 routines of the tridiagonal and bidiagonal reductions (Dsymv,
// Dgemv) split over cores; every other routine is gonum's own. It
// implements blas.Float64 and blas.Float32.
//
// gonum's blocked LAPACK (lapack/gonum) spends most of its time in
// these: Dgemm in the trailing updates of LU, Cholesky and QR and in the
// block reflectors of QR, the eigensolvers and the SVD; Dtrmm in the
// triangular inverse behind Inv; Dtrsm in the solves with many
// right-hand sides; Dsymv and Dsyr2k in Dsytrd (Eigh), Dgemv in Dgebrd
// (SVD). It finds its BLAS through blas64's registered implementation,
// so giving it fathom's kernels is a registration: see UseBLAS and
// EnsureBLAS.
type BLAS struct{ gonum.Implementation }

var (
	_ blas.Float64 = BLAS{}
	_ blas.Float32 = BLAS{}
)

// EnvGonumBLAS names the environment variable that keeps gonum's own BLAS
// registered: with FATHOM_GONUM_BLAS=gonum, EnsureBLAS registers nothing.
const EnvGonumBLAS = "FATHOM_GONUM_BLAS"

// blasChoice records whether the registration has been decided, by
// EnsureBLAS, UseBLAS or UseGonumBLAS: the first decision stands until
// one of the Use functions is called again.
var blasChoice struct {
	mu      sync.Mutex
	decided bool
}

// EnsureBLAS registers BLAS with blas64.Use and blas32.Use the first time
// it is called, unless FATHOM_GONUM_BLAS=gonum is set or UseGonumBLAS (or
// UseBLAS) was called before. fathom's LAPACK kernels call it before they
// run, so a program that never uses linear algebra leaves gonum as it
// found it. The registration is process-wide: gonum code the program
// runs itself (mat.Dense.Mul, its own LAPACK calls) uses fathom's GEMM
// from then on.
func EnsureBLAS() {
	blasChoice.mu.Lock()
	defer blasChoice.mu.Unlock()
	if blasChoice.decided {
		return
	}
	blasChoice.decided = true
	if os.Getenv(EnvGonumBLAS) == "gonum" {
		return
	}
	register(BLAS{})
}

// UseBLAS registers BLAS with gonum's blas64 and blas32 now. Like
// blas64.Use it must not run while another goroutine is in gonum.
func UseBLAS() {
	blasChoice.mu.Lock()
	defer blasChoice.mu.Unlock()
	blasChoice.decided = true
	register(BLAS{})
}

// UseGonumBLAS registers gonum's own implementation with blas64 and
// blas32, undoing UseBLAS or EnsureBLAS, and keeps EnsureBLAS from
// registering fathom's later. Like blas64.Use it must not run while
// another goroutine is in gonum.
func UseGonumBLAS() {
	blasChoice.mu.Lock()
	defer blasChoice.mu.Unlock()
	blasChoice.decided = true
	register(gonum.Implementation{})
}

type blasImpl interface {
	blas.Float64
	blas.Float32
}

func register(impl blasImpl) {
	blas64.Use(impl)
	blas32.Use(impl)
}

// blasMinWork is the product size (m·n·k) below which the routines stay
// with gonum's code: packing costs more than it saves on products that
// fit in L1, and LAPACK's unblocked panels make many of those. Tests
// set it to 0 to run gonum's suites through fathom's GEMM.
var blasMinWork = 32 * 32 * 32

// Dgemm computes C = alpha·op(A)·op(B) + beta·C as gonum's Dgemm does,
// with fathom's GEMM for products above a few thousand multiply-adds.
func (impl BLAS) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if !gemmFits(tA, tB, m, n, k, alpha, len(a), lda, len(b), ldb, len(c), ldc) {
		impl.Implementation.Dgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	blasGemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Sgemm is Dgemm for float32.
func (impl BLAS) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if !gemmFits(tA, tB, m, n, k, float64(alpha), len(a), lda, len(b), ldb, len(c), ldc) {
		impl.Implementation.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	blasGemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// gemmFits reports whether a product is one for fathom's GEMM: valid (an
// invalid one goes to gonum, which panics with its own message), large
// enough, and with a nonzero alpha (where BLAS reads neither A nor B).
func gemmFits(tA, tB blas.Transpose, m, n, k int, alpha float64, la, lda, lb, ldb, lc, ldc int) bool {
	if !validTrans(tA) || !validTrans(tB) || m < 0 || n < 0 || k < 0 {
		return false
	}
	if m*n*k < blasMinWork || alpha == 0 {
		return false
	}
	ar, ac := m, k
	if tA != blas.NoTrans {
		ar, ac = k, m
	}
	br, bc := k, n
	if tB != blas.NoTrans {
		br, bc = n, k
	}
	return lda >= ac && ldb >= bc && ldc >= n &&
		la >= (ar-1)*lda+ac && lb >= (br-1)*ldb+bc && lc >= (m-1)*ldc+n
}

func validTrans(t blas.Transpose) bool {
	return t == blas.NoTrans || t == blas.Trans || t == blas.ConjTrans
}

// view returns op(X) for a row-major X with rows ld apart as a strided
// matrix: a transpose swaps the strides.
func view[T float32 | float64](t blas.Transpose, x []T, ld int) mat[T] {
	if t == blas.NoTrans {
		return mat[T]{data: x, rs: ld, cs: 1}
	}
	return mat[T]{data: x, rs: 1, cs: ld}
}

// blasGemm computes C = alpha·op(A)·op(B) + beta·C for a valid product.
// fathom's GEMM writes a plain product, so anything but alpha = 1 and
// beta = 0 goes through a scratch product merged into C, a strip of rows
// at a time so the strip stays in cache between the two.
func blasGemm[T float32 | float64](tA, tB blas.Transpose, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	av, bv := view(tA, a, lda), view(tB, b, ldb)
	if alpha == 1 && beta == 0 {
		gemm(m, n, k, av, bv, c, ldc, true)
		return
	}
	pool := poolFor[T]()
	rows := min(m, max(1, stripElems/n))
	scratch := pool.get(rows * n)
	defer pool.put(scratch)
	t := *scratch
	for i0 := 0; i0 < m; i0 += rows {
		r := min(rows, m-i0)
		gemm(r, n, k, av.sub(i0, 0), bv, t, n, true)
		ParallelFor(r, max(1, grain/max(n, 1)), func(lo, hi int) {
			for i := lo; i < hi; i++ {
				merge(c[(i0+i)*ldc:(i0+i)*ldc+n], t[i*n:(i+1)*n], alpha, beta)
			}
		})
	}
}

// stripElems bounds the scratch product of blasGemm (2 MiB of float64):
// a strip that the merge reads back from L2/L3 rather than from memory,
// tall enough that repacking B for each strip costs little beside its
// 2·rows·n·k flops.
const stripElems = 256 << 10

// merge sets c = alpha·t + beta·c, reading c only where beta is not zero
// (BLAS's rule: a C of NaNs is overwritten when beta is 0).
func merge[T float32 | float64](c, t []T, alpha, beta T) {
	switch {
	case beta == 0:
		for j, v := range t {
			c[j] = alpha * v
		}
	case beta == 1 && alpha == -1:
		for j, v := range t {
			c[j] -= v
		}
	case beta == 1:
		for j, v := range t {
			c[j] += alpha * v
		}
	default:
		for j, v := range t {
			c[j] = alpha*v + beta*c[j]
		}
	}
}

// triBlock is the order of the diagonal blocks that Dtrsm and Dtrmm
// leave to gonum's code: the rest of the work, all but a triBlock/k
// share of it for a triangle of order k, is products for fathom's GEMM.
// A triangle no larger than a block goes to gonum whole. Tests set it
// small to run gonum's suites through the blocked loops.
var triBlock = 64

// Dtrsm solves op(A)·X = alpha·B (side Left) or X·op(A) = alpha·B
// (Right) for the triangular A, overwriting B with X, as gonum's Dtrsm
// does; with A larger than triBlock, it solves a diagonal block at a time
// and updates the rest of B with fathom's GEMM.
func (impl BLAS) Dtrsm(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	if !triFits(s, ul, tA, d, m, n, float64(alpha), len(a), lda, len(b), ldb) {
		impl.Implementation.Dtrsm(s, ul, tA, d, m, n, alpha, a, lda, b, ldb)
		return
	}
	blockedTri(true, s, ul, tA, d, m, n, alpha, a, lda, b, ldb, impl.Implementation.Dtrsm)
}

// Strsm is Dtrsm for float32.
func (impl BLAS) Strsm(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float32, a []float32, lda int, b []float32, ldb int) {
	if !triFits(s, ul, tA, d, m, n, float64(alpha), len(a), lda, len(b), ldb) {
		impl.Implementation.Strsm(s, ul, tA, d, m, n, alpha, a, lda, b, ldb)
		return
	}
	blockedTri(true, s, ul, tA, d, m, n, alpha, a, lda, b, ldb, impl.Implementation.Strsm)
}

// Dtrmm computes B = alpha·op(A)·B (side Left) or B = alpha·B·op(A)
// (Right) for the triangular A, as gonum's Dtrmm does; with A larger than
// triBlock, a diagonal block at a time, the rest by fathom's GEMM.
func (impl BLAS) Dtrmm(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, a []float64, lda int, b []float64, ldb int) {
	if !triFits(s, ul, tA, d, m, n, float64(alpha), len(a), lda, len(b), ldb) {
		impl.Implementation.Dtrmm(s, ul, tA, d, m, n, alpha, a, lda, b, ldb)
		return
	}
	blockedTri(false, s, ul, tA, d, m, n, alpha, a, lda, b, ldb, impl.Implementation.Dtrmm)
}

// Strmm is Dtrmm for float32.
func (impl BLAS) Strmm(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float32, a []float32, lda int, b []float32, ldb int) {
	if !triFits(s, ul, tA, d, m, n, float64(alpha), len(a), lda, len(b), ldb) {
		impl.Implementation.Strmm(s, ul, tA, d, m, n, alpha, a, lda, b, ldb)
		return
	}
	blockedTri(false, s, ul, tA, d, m, n, alpha, a, lda, b, ldb, impl.Implementation.Strmm)
}

// triFits reports whether a Dtrsm or Dtrmm call is one for the blocked
// loops: valid (an invalid one goes to gonum, which panics with its own
// message), with a triangle larger than a block and a nonzero alpha.
func triFits(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64, la, lda, lb, ldb int) bool {
	if s != blas.Left && s != blas.Right || ul != blas.Upper && ul != blas.Lower || !validTrans(tA) ||
		d != blas.Unit && d != blas.NonUnit || m < 0 || n < 0 || alpha == 0 {
		return false
	}
	k := n
	if s == blas.Left {
		k = m
	}
	return k > triBlock && m*n*k >= blasMinWork && lda >= k && ldb >= n && n > 0 && m > 0 &&
		la >= (k-1)*lda+k && lb >= (m-1)*ldb+n
}

// triRoutine is gonum's Dtrsm, Strsm, Dtrmm or Strmm.
type triRoutine[T float32 | float64] func(s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha T, a []T, lda int, b []T, ldb int)

// blockedTri runs a triangular solve (solve) or product over diagonal
// blocks of triBlock, small running each block's triangle. op(A) is upper
// triangular when A is upper and not transposed or lower and transposed.
// Block I of the result depends on B's blocks on one side of it:
//
//	product, B = op(A)·B:  B_I = op(A)_II·B_I + Σ op(A)_IK·B_K over the K the triangle reaches
//	solve, op(A)·X = B:    X_I = op(A)_II⁻¹·(B_I − Σ op(A)_IK·X_K)
//
// so a product walks the blocks towards the triangle's far side (using
// blocks of B not yet overwritten) and a solve from it (using solved
// ones). Side Right is the same with columns and op(A)_KJ.
func blockedTri[T float32 | float64](solve bool, s blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha T, a []T, lda int, b []T, ldb int, small triRoutine[T]) {
	upper := (ul == blas.Upper) == (tA == blas.NoTrans)
	left := s == blas.Left
	k := n
	if left {
		k = m
	}
	// opBlock is op(A)[i0:, j0:] as a GEMM operand.
	opBlock := func(i0, j0 int) (blas.Transpose, []T) {
		if tA == blas.NoTrans {
			return blas.NoTrans, a[i0*lda+j0:]
		}
		return blas.Trans, a[j0*lda+i0:]
	}
	nb := ceilDiv(k, triBlock)
	// Blocks in increasing order when the work for block I needs the
	// blocks after it untouched (a product) or already done (a solve)...
	forward := upper != solve
	if !left {
		// ...and for Right, op(A)_KJ with K before J for upper.
		forward = !forward
	}
	for q := range nb {
		if !forward {
			q = nb - 1 - q
		}
		p0, p1 := q*triBlock, min((q+1)*triBlock, k)
		// The other blocks the update reads: those the triangle reaches
		// from block I (left) or that reach block J (right).
		o0, o1 := p1, k
		if upper != left {
			o0, o1 = 0, p0
		}
		diag := a[p0*lda+p0:]
		if left {
			bi := b[p0*ldb:]
			rows := p1 - p0
			if !solve {
				small(s, ul, tA, d, rows, n, alpha, diag, lda, bi, ldb)
			}
			if o1 > o0 {
				t, ob := opBlock(p0, o0)
				if solve {
					blasGemm(t, blas.NoTrans, rows, n, o1-o0, -1, ob, lda, b[o0*ldb:], ldb, alpha, bi, ldb)
				} else {
					blasGemm(t, blas.NoTrans, rows, n, o1-o0, alpha, ob, lda, b[o0*ldb:], ldb, 1, bi, ldb)
				}
			}
			if solve {
				small(s, ul, tA, d, rows, n, solveAlpha(o1 > o0, alpha), diag, lda, bi, ldb)
			}
			continue
		}
		bj := b[p0:]
		cols := p1 - p0
		if !solve {
			small(s, ul, tA, d, m, cols, alpha, diag, lda, bj, ldb)
		}
		if o1 > o0 {
			t, ob := opBlock(o0, p0)
			if solve {
				blasGemm(blas.NoTrans, t, m, cols, o1-o0, -1, b[o0:], ldb, ob, lda, alpha, bj, ldb)
			} else {
				blasGemm(blas.NoTrans, t, m, cols, o1-o0, alpha, b[o0:], ldb, ob, lda, 1, bj, ldb)
			}
		}
		if solve {
			small(s, ul, tA, d, m, cols, solveAlpha(o1 > o0, alpha), diag, lda, bj, ldb)
		}
	}
}

// solveAlpha is the alpha of a diagonal block's solve: 1 where the GEMM
// update has already scaled B by alpha.
func solveAlpha[T float32 | float64](updated bool, alpha T) T {
	if updated {
		return 1
	}
	return alpha
}

// syrkStrip is the number of rows of C that Dsyrk computes at once.
const syrkStrip = 256

// Dsyrk computes the triangle ul of C = alpha·A·Aᵀ + beta·C (trans
// NoTrans) or alpha·Aᵀ·A + beta·C as gonum's Dsyrk does, with fathom's
// GEMM: a strip of rows at a time, each the product of the strip with
// the rows the triangle reaches, merged into C's triangle. The part of
// each strip's diagonal block outside the triangle is computed and
// dropped, a share of about syrkStrip/n of the work; Cholesky's Dsyrk is
// one 64×64 block, whose product is twice the triangle's flops and still
// several times faster than gonum's loop of dot products.
func (impl BLAS) Dsyrk(ul blas.Uplo, tA blas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	if !syrkFits(ul, tA, n, k, float64(alpha), len(a), lda, len(c), ldc) {
		impl.Implementation.Dsyrk(ul, tA, n, k, alpha, a, lda, beta, c, ldc)
		return
	}
	blockedSyrk(ul, tA, n, k, alpha, a, lda, beta, c, ldc)
}

// Ssyrk is Dsyrk for float32.
func (impl BLAS) Ssyrk(ul blas.Uplo, tA blas.Transpose, n, k int, alpha float32, a []float32, lda int, beta float32, c []float32, ldc int) {
	if !syrkFits(ul, tA, n, k, float64(alpha), len(a), lda, len(c), ldc) {
		impl.Implementation.Ssyrk(ul, tA, n, k, alpha, a, lda, beta, c, ldc)
		return
	}
	blockedSyrk(ul, tA, n, k, alpha, a, lda, beta, c, ldc)
}

// syrkFits reports whether a Dsyrk call is one for fathom's GEMM: valid,
// large enough and with a nonzero alpha.
func syrkFits(ul blas.Uplo, tA blas.Transpose, n, k int, alpha float64, la, lda, lc, ldc int) bool {
	if ul != blas.Upper && ul != blas.Lower || !validTrans(tA) || n <= 0 || k <= 0 || alpha == 0 {
		return false
	}
	ar, ac := n, k
	if tA != blas.NoTrans {
		ar, ac = k, n
	}
	return n*n*k >= 2*blasMinWork && lda >= ac && ldc >= n &&
		la >= (ar-1)*lda+ac && lc >= (n-1)*ldc+n
}

func blockedSyrk[T float32 | float64](ul blas.Uplo, tA blas.Transpose, n, k int, alpha T, a []T, lda int, beta T, c []T, ldc int) {
	// Row i of op(A) (n×k) is a[i*lda:] for NoTrans, column i for Trans;
	// C = op(A)·op(A)ᵀ.
	av := view(tA, a, lda)
	bt := blas.Trans
	if tA != blas.NoTrans {
		bt = blas.NoTrans
	}
	bv := view(bt, a, lda)
	pool := poolFor[T]()
	scratch := pool.get(min(n, syrkStrip) * n)
	defer pool.put(scratch)
	t := *scratch
	syrkStrips(ul, n, alpha, beta, c, ldc, t, func(i0, i1, j0, w int) {
		gemm(i1-i0, w, k, av.sub(i0, 0), bv.sub(0, j0), t, w, true)
	})
}

// syrkStrips updates the triangle ul of the n×n C a strip of syrkStrip
// rows at a time: strip fills t (i1-i0 rows of w = j1-j0 columns, from
// column j0) with rows i0..i1 of the product over the columns the
// triangle reaches in them, whose part in the triangle is merged into C
// as alpha·t + beta·C.
func syrkStrips[T float32 | float64](ul blas.Uplo, n int, alpha, beta T, c []T, ldc int, t []T, strip func(i0, i1, j0, w int)) {
	for i0 := 0; i0 < n; i0 += syrkStrip {
		i1 := min(n, i0+syrkStrip)
		j0, j1 := 0, i1
		if ul == blas.Upper {
			j0, j1 = i0, n
		}
		w := j1 - j0
		strip(i0, i1, j0, w)
		for i := i0; i < i1; i++ {
			lo, hi := j0, i+1
			if ul == blas.Upper {
				lo, hi = i, j1
			}
			merge(c[i*ldc+lo:i*ldc+hi], t[(i-i0)*w+lo-j0:(i-i0)*w+hi-j0], alpha, beta)
		}
	}
}

// symvMin is the order below which Dsymv stays with gonum's loop. Tests
// set it to 1 to run gonum's suite through the split loop.
var symvMin = 64

// Dsymv computes y = alpha·A·x + beta·y for the symmetric A, of which it
// reads the triangle ul, as gonum's Dsymv does. Above symvMin it reads
// each element of the triangle once for both of its uses (the dot
// product of its row and the update along its column), with the rows
// split over cores in pieces of equal work, each with its own copy of
// y. This is half of the arithmetic of the tridiagonal reduction behind
// Eigh (Dsytrd's Dlatrd calls it once per column).
func (impl BLAS) Dsymv(ul blas.Uplo, n int, alpha float64, a []float64, lda int, x []float64, incX int, beta float64, y []float64, incY int) {
	if ul != blas.Upper && ul != blas.Lower || n < symvMin || lda < n || incX == 0 || incY == 0 || alpha == 0 ||
		len(a) < (n-1)*lda+n || len(x) < 1+(n-1)*absInt(incX) || len(y) < 1+(n-1)*absInt(incY) {
		impl.Implementation.Dsymv(ul, n, alpha, a, lda, x, incX, beta, y, incY)
		return
	}
	pool := poolFor[float64]()
	pieces := 1
	if n >= 256 {
		pieces = 4
	}
	buf := pool.get((pieces + 1) * n)
	defer pool.put(buf)
	xs, acc := (*buf)[:n], (*buf)[n:(pieces+1)*n]
	clear(acc)
	for i := range n {
		xs[i] = x[strideIndex(i, n, incX)]
	}
	// piece p takes the panels whose share of the triangle is about
	// p/pieces to (p+1)/pieces
	bound := func(p int) int {
		if p == pieces {
			return n
		}
		f := float64(p) / float64(pieces)
		b := float64(n) * math.Sqrt(f)
		if ul == blas.Upper {
			b = float64(n) * (1 - math.Sqrt(1-f))
		}
		return min(n, (int(b)+symvPanel/2)/symvPanel*symvPanel)
	}
	ParallelFor(pieces, 1, func(p0, p1 int) {
		for p := p0; p < p1; p++ {
			impl.symvPanels(ul == blas.Upper, a, lda, xs, acc[p*n:(p+1)*n], bound(p), bound(p+1))
		}
	})
	for i := range n {
		s := 0.0
		for p := range pieces {
			s += acc[p*n+i]
		}
		iy := strideIndex(i, n, incY)
		if beta == 0 {
			y[iy] = alpha * s
		} else {
			y[iy] = alpha*s + beta*y[iy]
		}
	}
}

// symvPanel is the height of the panels of rows Dsymv works in: a
// panel of a 512-wide matrix (256 KiB) stays in L2 between its two
// passes.
const symvPanel = 64

// symvPanels adds the rows r0..r1 of the symmetric A's triangle (upper
// or lower) times x into acc, a panel of symvPanel rows at a time: the
// panel's part off the diagonal block is read twice, as a matrix times
// x (its rows' dot products) and transposed (its columns' updates), by
// gonum's vectorised Dgemv, the second time from cache; the diagonal
// block's triangle goes through symvRows.
func (impl BLAS) symvPanels(upper bool, a []float64, lda int, x, acc []float64, r0, r1 int) {
	n := len(x)
	for p0 := r0; p0 < r1; p0 += symvPanel {
		p1 := min(p0+symvPanel, r1)
		rows := p1 - p0
		symvRows(upper, a[p0*lda+p0:], lda, x[p0:p1], acc[p0:p1], 0, rows)
		c0, c1 := 0, p0
		if upper {
			c0, c1 = p1, n
		}
		if c1 == c0 {
			continue
		}
		panel := a[p0*lda+c0:]
		impl.Implementation.Dgemv(blas.NoTrans, rows, c1-c0, 1, panel, lda, x[c0:c1], 1, 1, acc[p0:p1], 1)
		impl.Implementation.Dgemv(blas.Trans, rows, c1-c0, 1, panel, lda, x[p0:p1], 1, 1, acc[c0:c1], 1)
	}
}

// symvRows adds rows r0..r1 of the symmetric A's triangle (upper or
// lower) times x into acc: each row's dot product with x to its own
// element, and the row times its x to the elements of its column. Rows
// go four at a time over the columns they share, so that each element
// of acc is loaded and stored once for four rows' updates.
func symvRows(upper bool, a []float64, lda int, x, acc []float64, r0, r1 int) {
	n := len(x)
	i := r0
	for ; i+4 <= r1; i += 4 {
		// the shared columns: before the rows' diagonal block (lower)
		// or after it (upper)
		c0, c1 := 0, i
		if upper {
			c0, c1 = i+4, n
		}
		a0 := a[i*lda+c0 : i*lda+c1]
		a1 := a[(i+1)*lda+c0 : (i+1)*lda+c1][:len(a0)]
		a2 := a[(i+2)*lda+c0 : (i+2)*lda+c1][:len(a0)]
		a3 := a[(i+3)*lda+c0 : (i+3)*lda+c1][:len(a0)]
		xs, ys := x[c0:c1][:len(a0)], acc[c0:c1][:len(a0)]
		x0, x1, x2, x3 := x[i], x[i+1], x[i+2], x[i+3]
		var s0, s1, s2, s3 float64
		for j, v0 := range a0 {
			v1, v2, v3, xj := a1[j], a2[j], a3[j], xs[j]
			s0 += v0 * xj
			s1 += v1 * xj
			s2 += v2 * xj
			s3 += v3 * xj
			ys[j] += (x0*v0 + x1*v1) + (x2*v2 + x3*v3)
		}
		acc[i] += s0
		acc[i+1] += s1
		acc[i+2] += s2
		acc[i+3] += s3
		// the 4×4 diagonal block's triangle
		for q := range 4 {
			r := i + q
			lo, hi := i, r
			if upper {
				lo, hi = r+1, i+4
			}
			s := a[r*lda+r] * x[r]
			for c := lo; c < hi; c++ {
				v := a[r*lda+c]
				s += v * x[c]
				acc[c] += x[r] * v
			}
			acc[r] += s
		}
	}
	for ; i < r1; i++ {
		var row, xs, ys []float64
		if upper {
			row, xs, ys = a[i*lda+i+1:i*lda+n], x[i+1:n], acc[i+1:n]
		} else {
			row, xs, ys = a[i*lda:i*lda+i], x[:i], acc[:i]
		}
		xs, ys = xs[:len(row)], ys[:len(row)]
		xi, s := x[i], 0.0
		for j, v := range row {
			s += v * xs[j]
			ys[j] += xi * v
		}
		acc[i] += s + a[i*lda+i]*xi
	}
}

// strideIndex is the index in a BLAS vector of stride inc of its element
// i of n: a negative stride runs the vector backwards.
func strideIndex(i, n, inc int) int {
	if inc > 0 {
		return i * inc
	}
	return (n - 1 - i) * -inc
}

func absInt(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// Dsyr2k computes the triangle ul of C = alpha·(A·Bᵀ + B·Aᵀ) + beta·C
// (trans NoTrans) or alpha·(Aᵀ·B + Bᵀ·A) + beta·C as gonum's Dsyr2k does,
// with fathom's GEMM: a strip of rows at a time, the two products of
// the strip with the rows the triangle reaches summed and merged into
// C's triangle, as Dsyrk. Dsytrd's trailing update is one call per
// block of 32 columns, a quarter of Eigh's reduction.
func (impl BLAS) Dsyr2k(ul blas.Uplo, tA blas.Transpose, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if !syrkFits(ul, tA, n, k, alpha, len(a), lda, len(c), ldc) || !syrkFits(ul, tA, n, k, alpha, len(b), ldb, len(c), ldc) {
		impl.Implementation.Dsyr2k(ul, tA, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	at, bt := view(tA, a, lda), view(tA, b, ldb)
	tr := blas.Trans
	if tA != blas.NoTrans {
		tr = blas.NoTrans
	}
	atT, btT := view(tr, a, lda), view(tr, b, ldb)
	pool := poolFor[float64]()
	strip := min(n, syrkStrip)
	s1, s2 := pool.get(strip*n), pool.get(strip*n)
	defer pool.put(s1)
	defer pool.put(s2)
	t1, t2 := *s1, *s2
	syrkStrips(ul, n, alpha, beta, c, ldc, t1, func(i0, i1, j0, w int) {
		gemm(i1-i0, w, k, at.sub(i0, 0), btT.sub(0, j0), t1, w, true)
		gemm(i1-i0, w, k, bt.sub(i0, 0), atT.sub(0, j0), t2, w, true)
		for x, v := range t2[:(i1-i0)*w] {
			t1[x] += v
		}
	})
}

// gemvMin is the matrix size (m·n) from which Dgemv splits over cores.
const gemvMin = 1 << 15

// Dgemv computes y = alpha·op(A)·x + beta·y as gonum's Dgemv does; a
// large product is split over cores, by rows of A (NoTrans) or by its
// columns (Trans), each part an independent piece of y computed by
// gonum's kernel. It is half of the arithmetic of the bidiagonal
// reduction behind SVD (Dgebrd's Dlabrd) and a part of Dsytrd's.
func (impl BLAS) Dgemv(tA blas.Transpose, m, n int, alpha float64, a []float64, lda int, x []float64, incX int, beta float64, y []float64, incY int) {
	if !validTrans(tA) || m*n < gemvMin || lda < n || incX <= 0 || incY <= 0 || len(a) < (m-1)*lda+n {
		impl.Implementation.Dgemv(tA, m, n, alpha, a, lda, x, incX, beta, y, incY)
		return
	}
	lx, ly := n, m
	if tA != blas.NoTrans {
		lx, ly = m, n
	}
	if len(x) < 1+(lx-1)*incX || len(y) < 1+(ly-1)*incY {
		impl.Implementation.Dgemv(tA, m, n, alpha, a, lda, x, incX, beta, y, incY)
		return
	}
	if tA == blas.NoTrans {
		ParallelFor(m, max(16, (1<<14)/n), func(lo, hi int) {
			impl.Implementation.Dgemv(tA, hi-lo, n, alpha, a[lo*lda:], lda, x, incX, beta, y[lo*incY:], incY)
		})
		return
	}
	ParallelFor(n, max(16, (1<<14)/m), func(lo, hi int) {
		impl.Implementation.Dgemv(tA, m, hi-lo, alpha, a[lo:], lda, x, incX, beta, y[lo*incY:], incY)
	})
}
