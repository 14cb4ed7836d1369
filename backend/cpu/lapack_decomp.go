package cpu

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	lapackjob "gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/gonum"

	"github.com/fathom-go/fathom/array"
)

// The decompositions (Cholesky, QR, SVD, symmetric and general
// eigenproblems) call gonum's LAPACK once per matrix of a batch. gonum's
// LAPACK is row-major and float64 only: each matrix is copied into a
// float64 row-major scratch matrix from the pool (which also makes any
// input layout, transposed, strided or broadcast, one case), computed
// in place, and written to the row-major outputs in their dtype, so a
// float32 input is computed in float64 and rounded once. Eigh's vectors
// are the exception to gonum: the tridiagonal eigensolvers are
// fathom's (tridiagQL, and tridiagDC in lapack_dc.go), for speed.
//
// A matrix holding a NaN or an infinity never reaches LAPACK, whose
// iterations are not written for them: each kernel gives the result
// numpy gives for it (NaN, or, where numpy raises, an error).

// The kinds of the errors the decompositions return, for errors.Is; a
// singular Cholesky factor wraps ErrSingular.
var (
	// ErrNotPositiveDefinite: Cholesky of a matrix that is not symmetric
	// positive definite (numpy raises LinAlgError).
	ErrNotPositiveDefinite = errors.New("matrix is not positive definite")
	// ErrNoConvergence: the SVD or an eigensolver did not converge, which
	// for the SVD includes a matrix with a NaN or an infinity (numpy
	// raises LinAlgError "SVD did not converge").
	ErrNoConvergence = errors.New("decomposition did not converge")
	// ErrNotFinite: Eig of a matrix with a NaN or an infinity (numpy
	// raises LinAlgError "Array must not contain infs or NaNs").
	ErrNotFinite = errors.New("matrix holds a NaN or an infinity")
)

// decFail is the failure of matrix index of a batch.
type decFail struct {
	index  int
	kind   error
	reason string
}

// decError is f as the error of op on a of shape shape: which matrix of
// the batch, the shape, what is wrong, and the kind for errors.Is.
func decError(op string, shape []int, f *decFail) error {
	where := ""
	if len(shape) > 2 {
		where = fmt.Sprintf(" at batch index %v", batchIndex(shape, 2, f.index))
	}
	return &array.Error{Op: op, Err: f.kind, Msg: fmt.Sprintf("the matrix%s of shape %v %s", where, shape, f.reason)}
}

// decMats is the batch of matrices of a Buf of shape [..., rows, cols].
type decMats struct {
	b             Buf
	rows, cols    int
	rs, cs        int // strides of the last two axes
	lead, leadStr []int
	count         int
}

func newDecMats(b Buf) decMats {
	nd := len(b.Shape)
	m := decMats{b: b, rows: b.Shape[nd-2], cols: b.Shape[nd-1], rs: b.Strides[nd-2], cs: b.Strides[nd-1],
		lead: b.Shape[:nd-2], leadStr: b.Strides[:nd-2], count: 1}
	for _, d := range m.lead {
		m.count *= d
	}
	return m
}

// offset is the element offset of matrix i.
func (m decMats) offset(i int) int {
	off := m.b.Offset
	for k := len(m.lead) - 1; k >= 0; k-- {
		off += (i % m.lead[k]) * m.leadStr[k]
		i /= m.lead[k]
	}
	return off
}

// load copies matrix i into dst, row-major with leading dimension ld.
func (m decMats) load(i int, dst []float64, ld int) {
	off := m.offset(i)
	switch m.b.DType {
	case array.Float32:
		decLoad(elems[float32](m.b), off, m, dst, ld)
	default:
		decLoad(elems[float64](m.b), off, m, dst, ld)
	}
}

func decLoad[T float32 | float64](src []T, off int, m decMats, dst []float64, ld int) {
	for r := range m.rows {
		p := off + r*m.rs
		row := dst[r*ld : r*ld+m.cols]
		if m.cs == 1 {
			for c, v := range src[p : p+m.cols] {
				row[c] = float64(v)
			}
			continue
		}
		for c := range row {
			row[c] = float64(src[p+c*m.cs])
		}
	}
}

// store writes src (row-major, leading dimension ld) to matrix i,
// rounding to the Buf's dtype.
func (m decMats) store(i int, src []float64, ld int) {
	off := m.offset(i)
	switch m.b.DType {
	case array.Float32:
		decStore(elems[float32](m.b), off, m, src, ld)
	default:
		decStore(elems[float64](m.b), off, m, src, ld)
	}
}

func decStore[T float32 | float64](dst []T, off int, m decMats, src []float64, ld int) {
	for r := range m.rows {
		p := off + r*m.rs
		for c, v := range src[r*ld : r*ld+m.cols] {
			dst[p+c*m.cs] = T(v)
		}
	}
}

// decVecs is the batch of vectors of a Buf of shape [..., n].
type decVecs struct{ m decMats }

func newDecVecs(b Buf) decVecs {
	nd := len(b.Shape)
	shape := append(append([]int(nil), b.Shape...), 1)
	strides := append(append([]int(nil), b.Strides[:nd]...), 1)
	return decVecs{newDecMats(Buf{Data: b.Data, DType: b.DType, Shape: shape, Strides: strides, Offset: b.Offset})}
}

func (v decVecs) store(i int, src []float64) { v.m.store(i, src, 1) }

// finite reports whether the first rows×cols block of a (leading
// dimension ld) holds no NaN or infinity; tri restricts it to the lower
// (tri < 0) or upper (tri > 0) triangle, the part a symmetric routine
// reads.
func decFinite(a []float64, rows, cols, ld, tri int) bool {
	for r := range rows {
		lo, hi := 0, cols
		switch {
		case tri < 0:
			hi = min(r+1, cols)
		case tri > 0:
			lo = r
		}
		for _, v := range a[r*ld+lo : r*ld+max(lo, hi)] {
			if v-v != 0 {
				return false
			}
		}
	}
	return true
}

// decFill sets the rows×cols block of a to v.
func decFill(a []float64, rows, cols, ld int, v float64) {
	for r := range rows {
		row := a[r*ld : r*ld+cols]
		for c := range row {
			row[c] = v
		}
	}
}

// decZeroTri zeroes the strict lower (lower) or upper triangle of the
// n×n matrix a.
func decZeroTri(a []float64, n int, lower bool) {
	for r := range n {
		if lower {
			clear(a[r*n : r*n+r])
		} else {
			clear(a[r*n+r+1 : r*n+n])
		}
	}
}

// decEye sets the rows×cols block of a to the identity's first columns.
func decEye(a []float64, rows, cols, ld int) {
	decFill(a, rows, cols, ld, 0)
	for i := range min(rows, cols) {
		a[i*ld+i] = 1
	}
}

// decScratch hands out float64 scratch slices from the package's pool and
// gives them all back at once. A slice of decBig bytes or more comes from
// array.AllocCPU instead, which refuses with an *array.Error what the
// machine cannot give: one matrix of a broadcast view can be far larger
// than the results (the eigenvalues of an n×n matrix are n numbers).
type decScratch struct {
	op    string
	shape []int // the batch's, for the error of a refused slice
	held  []*[]float64
	big   []*array.Storage
}

const decBig = poolBytes

func (s *decScratch) get(n int) []float64 {
	if n >= decBig/8 {
		var st *array.Storage
		if err := array.Try(func() { st = array.AllocCPU(n * 8) }); err != nil {
			var e *array.Error
			errors.As(err, &e)
			panic(&array.Error{Op: s.op, Msg: fmt.Sprintf("cannot allocate the float64 copy of one matrix of %v: %s", s.shape, e.Msg), Err: e.Err})
		}
		s.big = append(s.big, st)
		return unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(st.Bytes()))), n)
	}
	b := poolFor[float64]().get(max(n, 1))
	s.held = append(s.held, b)
	return (*b)[:n]
}

func (s *decScratch) release() {
	for _, b := range s.held {
		poolFor[float64]().put(b)
	}
	s.held, s.big = nil, nil
}

// decRun runs body over chunks of the matrices of a on the package's
// workers, each chunk with its own scratch, and returns the failure of
// the lowest-numbered matrix that failed as op's error. flops is the
// rough cost of one matrix, which with a fixed cost for the copies and
// calls sets how many matrices a chunk takes: a single large matrix runs
// on the calling goroutine, where its LAPACK spends its time in the BLAS
// (fathom's GEMM, once EnsureBLAS has registered it).
func decRun(op string, a decMats, flops int, body func(lo, hi int, sc *decScratch) *decFail) error {
	return decBatch(op, a.b.Shape, a.count, max(1, (1<<18)/(flops+4096)), body)
}

// decBatch is the batch runner of this file's kernels and of
// lapack_solve.go's: body runs over chunks of grain or more of the n
// matrices, each chunk with its own decScratch, and the failure of the
// lowest-numbered matrix that failed is op's error on a batch of shape
// shape, so that it does not depend on how the batch was split.
func decBatch(op string, shape []int, n, grain int, body func(lo, hi int, sc *decScratch) *decFail) error {
	EnsureBLAS()
	var mu sync.Mutex
	var first *decFail
	ParallelFor(n, grain, func(lo, hi int) {
		sc := decScratch{op: op, shape: shape}
		defer sc.release()
		if f := body(lo, hi, &sc); f != nil {
			mu.Lock()
			if first == nil || f.index < first.index {
				first = f
			}
			mu.Unlock()
		}
	})
	if first != nil {
		return decError(op, shape, first)
	}
	return nil
}

// decCheck rejects dtypes the kernels do not take: the inputs are float32
// or float64 and the outputs in has's dtype (or complex64, for eig).
func decCheck(op string, in Buf, outs ...Buf) error {
	if in.DType != array.Float32 && in.DType != array.Float64 {
		return array.Errorf(op, "dtype %v, want float32 or float64", in.DType)
	}
	for _, o := range outs {
		if o.DType != in.DType && o.DType != array.Complex64 {
			return array.Errorf(op, "output dtype %v for input dtype %v", o.DType, in.DType)
		}
	}
	return nil
}

func decUplo(upper bool) blas.Uplo {
	if upper {
		return blas.Upper
	}
	return blas.Lower
}

func decTri(upper bool) int {
	if upper {
		return 1
	}
	return -1
}

// Cholesky writes the Cholesky factor of each matrix of a ([..., n, n])
// to out: L with a = L·Lᵀ, or U with a = Uᵀ·U when upper, reading only
// that triangle of a; the other triangle of out is zero. A matrix that is
// not positive definite is an error wrapping ErrNotPositiveDefinite that
// names its batch index; one with a NaN or an infinity in the triangle
// read gives NaN in the factor's triangle.
func Cholesky(out, a Buf, upper bool) error {
	if err := decCheck("cpu.Cholesky", a, out); err != nil {
		return err
	}
	am, om := newDecMats(a), newDecMats(out)
	n := am.rows
	if n == 0 {
		return nil
	}
	impl := gonum.Implementation{}
	return decRun("linalg.Cholesky", am, n*n*n/3, func(lo, hi int, sc *decScratch) *decFail {
		s := sc.get(n * n)
		for i := lo; i < hi; i++ {
			am.load(i, s, n)
			switch {
			case !decFinite(s, n, n, n, decTri(upper)):
				decFill(s, n, n, n, math.NaN())
			case !impl.Dpotrf(decUplo(upper), n, s, n):
				return &decFail{i, ErrNotPositiveDefinite, "is not positive definite"}
			}
			decZeroTri(s, n, upper)
			om.store(i, s, n)
		}
		return nil
	})
}

// CholeskyInv writes to out the inverse of L·Lᵀ (or Uᵀ·U when upper) for
// each triangular factor of l ([..., n, n]), of which it reads only that
// triangle: the inverse of the matrix whose Cholesky factor l is. A
// factor with a zero on its diagonal is an error wrapping ErrSingular;
// one with a NaN or an infinity gives NaN.
func CholeskyInv(out, l Buf, upper bool) error {
	if err := decCheck("cpu.CholeskyInv", l, out); err != nil {
		return err
	}
	lm, om := newDecMats(l), newDecMats(out)
	n := lm.rows
	if n == 0 {
		return nil
	}
	impl := gonum.Implementation{}
	return decRun("linalg.CholeskyInv", lm, n*n*n, func(lo, hi int, sc *decScratch) *decFail {
		s := sc.get(n * n)
		for i := lo; i < hi; i++ {
			lm.load(i, s, n)
			switch {
			case !decFinite(s, n, n, n, decTri(upper)):
				decFill(s, n, n, n, math.NaN())
			case !impl.Dpotri(decUplo(upper), n, s, n):
				return &decFail{i, ErrSingular, "is singular: its diagonal has a zero"}
			default:
				// Dpotri leaves the inverse in the factor's triangle
				for r := range n {
					for c := range r {
						if upper {
							s[r*n+c] = s[c*n+r]
						} else {
							s[c*n+r] = s[r*n+c]
						}
					}
				}
			}
			om.store(i, s, n)
		}
		return nil
	})
}

// QR writes the QR decomposition a = q·r of each matrix of a
// ([..., m, n]): q is [..., m, c] with orthonormal columns and r is
// [..., c, n] upper triangular, where c is min(m, n) (the reduced form)
// or m (the complete form, q square). A matrix with a NaN or an infinity
// gives NaN in q and in r's upper triangle, as numpy.
func QR(q, r, a Buf) error {
	if err := decCheck("cpu.QR", a, q, r); err != nil {
		return err
	}
	am, qm, rm := newDecMats(a), newDecMats(q), newDecMats(r)
	m, n := am.rows, am.cols
	k, c := min(m, n), qm.cols
	w := max(n, c, 1) // the scratch's columns: a's, then q's
	impl := gonum.Implementation{}
	return decRun("linalg.QR", am, 2*m*n*k+1, func(lo, hi int, sc *decScratch) *decFail {
		s, rs := sc.get(m*w), sc.get(c*n)
		tau := sc.get(k)
		var work []float64
		if k > 0 {
			query := []float64{0}
			impl.Dgeqrf(m, n, s, w, tau, query, -1)
			lwork := int(query[0])
			impl.Dorgqr(m, c, k, s, w, tau, query, -1)
			lwork = max(lwork, int(query[0]), n, c, 1)
			work = sc.get(lwork)
		}
		for i := lo; i < hi; i++ {
			if k == 0 {
				decEye(s, m, c, w)
				decFill(rs, c, n, n, 0)
				qm.store(i, s, w)
				rm.store(i, rs, n)
				continue
			}
			am.load(i, s, w)
			if !decFinite(s, m, n, w, 0) {
				decFill(s, m, c, w, math.NaN())
				decFill(rs, c, n, n, math.NaN())
				for x := range c {
					clear(rs[x*n : x*n+min(x, n)])
				}
				qm.store(i, s, w)
				rm.store(i, rs, n)
				continue
			}
			impl.Dgeqrf(m, n, s, w, tau, work, len(work))
			for x := range c {
				row := rs[x*n : x*n+n]
				clear(row)
				if x < k {
					copy(row[x:], s[x*w+x:x*w+n])
				}
			}
			impl.Dorgqr(m, c, k, s, w, tau, work, len(work))
			qm.store(i, s, w)
			rm.store(i, rs, n)
		}
		return nil
	})
}

// SVD writes the singular value decomposition a = u·diag(s)·vt of each
// matrix of a ([..., m, n]): s is [..., k] with k = min(m, n), in
// descending order; u is [..., m, m] and vt [..., n, n] (full), or u
// [..., m, k] and vt [..., k, n] (thin). A matrix with a NaN or an
// infinity, or on which the iteration does not converge, is an error
// wrapping ErrNoConvergence, as numpy raises.
func SVD(u, s, vt, a Buf) error {
	if err := decCheck("cpu.SVD", a, u, s, vt); err != nil {
		return err
	}
	return svd("linalg.SVD", newDecMats(u), newDecVecs(s), newDecMats(vt), a, true)
}

// SVDVals writes the singular values of each matrix of a ([..., m, n])
// to s ([..., min(m, n)]), in descending order; errors as SVD.
func SVDVals(s, a Buf) error {
	if err := decCheck("cpu.SVDVals", a, s); err != nil {
		return err
	}
	return svd("linalg.SVDVals", decMats{}, newDecVecs(s), decMats{}, a, false)
}

func svd(op string, um decMats, sv decVecs, vm decMats, a Buf, vectors bool) error {
	am := newDecMats(a)
	m, n := am.rows, am.cols
	k := min(m, n)
	jobU, jobVT := lapackjob.SVDNone, lapackjob.SVDNone
	uc, vr := 1, 1
	if vectors {
		uc, vr = um.cols, vm.rows
		jobU, jobVT = lapackjob.SVDStore, lapackjob.SVDStore
		if uc == m {
			jobU = lapackjob.SVDAll
		}
		if vr == n {
			jobVT = lapackjob.SVDAll
		}
	}
	impl := gonum.Implementation{}
	return decRun(op, am, 12*m*n*k+1, func(lo, hi int, sc *decScratch) *decFail {
		x, sx := sc.get(m*max(n, 1)), sc.get(k)
		var us, vts []float64
		if vectors {
			us, vts = sc.get(m*uc), sc.get(vr*n)
		}
		var work []float64
		var sw *svdWork
		switch {
		case k > 0 && vectors:
			sw = newSVDWork(m, n, uc, vr, sc)
		case k > 0:
			query := []float64{0}
			impl.Dgesvd(jobU, jobVT, m, n, x, n, sx, us, max(uc, 1), vts, max(n, 1), query, -1)
			work = sc.get(max(int(query[0]), 3*k+max(m, n), 5*k))
		}
		for i := lo; i < hi; i++ {
			if k == 0 {
				if vectors {
					decEye(us, m, uc, uc)
					decEye(vts, vr, n, n)
					um.store(i, us, uc)
					vm.store(i, vts, n)
				}
				continue
			}
			am.load(i, x, n)
			if !decFinite(x, m, n, n, 0) {
				return &decFail{i, ErrNoConvergence, "holds a NaN or an infinity: the SVD does not converge"}
			}
			ok := false
			if vectors {
				ok = sw.run(x, sx, us, vts)
			} else {
				ok = impl.Dgesvd(jobU, jobVT, m, n, x, n, sx, us, max(uc, 1), vts, max(n, 1), work, len(work))
			}
			if !ok {
				return &decFail{i, ErrNoConvergence, "did not converge in the SVD"}
			}
			sv.store(i, sx)
			if vectors {
				um.store(i, us, uc)
				vm.store(i, vts, n)
			}
		}
		return nil
	})
}

// Eigh writes the eigenvalues (w, [..., n], ascending) and eigenvectors
// (the columns of v, [..., n, n]) of each symmetric matrix of a
// ([..., n, n]), of which it reads only the lower triangle, or the upper
// when upper. A matrix with a NaN or an infinity in that triangle gives
// NaN, as numpy; one on which the iteration does not converge is an
// error wrapping ErrNoConvergence.
func Eigh(w, v, a Buf, upper bool) error {
	if err := decCheck("cpu.Eigh", a, w, v); err != nil {
		return err
	}
	return eigh("linalg.Eigh", newDecVecs(w), newDecMats(v), a, upper, true)
}

// Eigvalsh writes the eigenvalues of each symmetric matrix of a to w, as
// Eigh without the eigenvectors.
func Eigvalsh(w, a Buf, upper bool) error {
	if err := decCheck("cpu.Eigvalsh", a, w); err != nil {
		return err
	}
	return eigh("linalg.Eigvalsh", newDecVecs(w), decMats{}, a, upper, false)
}

func eigh(op string, wv decVecs, vm decMats, a Buf, upper, vectors bool) error {
	am := newDecMats(a)
	n := am.rows
	if n == 0 {
		return nil
	}
	impl := gonum.Implementation{}
	uplo := decUplo(upper)
	return decRun(op, am, 9*n*n*n, func(lo, hi int, sc *decScratch) *decFail {
		x, ws, e, tau := sc.get(n*n), sc.get(n), sc.get(n), sc.get(max(n-1, 1))
		query := []float64{0}
		impl.Dsyev(lapackjob.EVNone, uplo, n, x, n, ws, query, -1)
		lwork := int(query[0])
		if vectors {
			impl.Dsytrd(uplo, n, x, n, ws, e, tau, query, -1)
			lwork = max(lwork, int(query[0]))
			impl.Dorgtr(uplo, n, x, n, tau, query, -1)
			lwork = max(lwork, int(query[0]))
			if n > 1 {
				impl.Dormqr(blas.Left, blas.NoTrans, n-1, n, n-1, x[n:], n, tau, x[n:], n, query, -1)
				lwork = max(lwork, int(query[0]))
			}
		}
		work := sc.get(max(lwork, 3*n-1, 1))
		for i := lo; i < hi; i++ {
			am.load(i, x, n)
			switch {
			case !decFinite(x, n, n, n, decTri(upper)):
				decFill(x, n, n, n, math.NaN())
				decFill(ws, 1, n, n, math.NaN())
			case !vectors:
				if !impl.Dsyev(lapackjob.EVNone, uplo, n, x, n, ws, work, len(work)) {
					return &decFail{i, ErrNoConvergence, "did not converge in the symmetric eigensolver"}
				}
			default:
				// gonum's Dsyev would find the vectors with Dsteqr, whose
				// rotations walk the columns of a row-major matrix one at
				// a time; eighVectors has tridiagQL apply them a row at a
				// time for small n, and divide and conquer, GEMM-bound,
				// replace them from dcMin.
				sigma := decSymScale(x, n, upper)
				tuplo := eighUplo(uplo, n, x)
				impl.Dsytrd(tuplo, n, x, n, ws, e[:n-1], tau[:n-1], work, len(work))
				e[n-1] = 0
				if !eighVectors(tuplo, n, x, ws, e, tau[:n-1], work, sc) {
					return &decFail{i, ErrNoConvergence, "did not converge in the symmetric eigensolver"}
				}
				for k := range ws {
					ws[k] /= sigma
				}
			}
			wv.store(i, ws)
			if vectors {
				vm.store(i, x, n)
			}
		}
		return nil
	})
}

// decSymScale scales the triangle of the n×n matrix a that is read into
// the range where the QL iteration's squares neither overflow nor
// underflow, as Dsyev does, and returns the factor it applied.
func decSymScale(a []float64, n int, upper bool) float64 {
	const (
		rmin = 0x1p-485 // √(smallest normal / ε), LAPACK's rmin
		rmax = 0x1p485
	)
	anrm := 0.0
	for r := range n {
		lo, hi := 0, r+1
		if upper {
			lo, hi = r, n
		}
		for _, v := range a[r*n+lo : r*n+hi] {
			anrm = max(anrm, math.Abs(v))
		}
	}
	sigma := 1.0
	switch {
	case anrm > 0 && anrm < rmin:
		sigma = rmin / anrm
	case anrm > rmax:
		sigma = rmax / anrm
	default:
		return 1
	}
	for r := range n {
		lo, hi := 0, r+1
		if upper {
			lo, hi = r, n
		}
		for k := lo; k < hi; k++ {
			a[r*n+k] *= sigma
		}
	}
	return sigma
}

// tridiagQL finds the eigenvalues and eigenvectors of the symmetric
// tridiagonal matrix with diagonal d and off-diagonal e[:n-1] (e[n-1]
// is 0, and e is overwritten) by the implicit
// QL algorithm with Wilkinson's shift (EISPACK's tql2; Golub and Van
// Loan, §8.3). Each sweep's plane rotations multiply z (n×n, row-major)
// from the right: z = Q on entry gives the eigenvectors of Q·T·Qᵀ in its
// columns. On return d holds the eigenvalues in ascending order and the
// columns of z are ordered with them; it reports false if some
// eigenvalue took more than 30 sweeps.
//
// A sweep's rotations chain along a row (each rotation's output column
// is the next one's input), so applying them a row at a time reads each
// row once, contiguously, and rows split over cores.
func tridiagQL(d, e, z []float64, n int, sc *decScratch) bool {
	const eps = 0x1p-52
	cs, sn := sc.get(n), sc.get(n)
	for l := 0; l < n; l++ {
		for iter := 0; ; iter++ {
			m := l
			for ; m < n-1; m++ {
				dd := math.Abs(d[m]) + math.Abs(d[m+1])
				if math.Abs(e[m]) <= eps*dd {
					break
				}
			}
			if m == l {
				break
			}
			if iter == 30 {
				return false
			}
			// the shift: the eigenvalue of the leading 2×2 block nearer d[l]
			g := (d[l+1] - d[l]) / (2 * e[l])
			r := math.Hypot(g, 1)
			g = d[m] - d[l] + e[l]/(g+math.Copysign(r, g))
			s, c, p := 1.0, 1.0, 0.0
			i := m - 1
			for ; i >= l; i-- {
				f, b := s*e[i], c*e[i]
				r = math.Hypot(f, g)
				e[i+1] = r
				if r == 0 {
					// underflow: the block splits at i+1
					d[i+1] -= p
					e[m] = 0
					break
				}
				s, c = f/r, g/r
				g = d[i+1] - p
				r = (d[i]-g)*s + 2*c*b
				p = s * r
				d[i+1] = g + p
				g = c*r - b
				cs[i], sn[i] = c, s
			}
			tridiagRotate(z, n, cs, sn, i+1, m)
			if r == 0 && i >= l {
				continue
			}
			d[l] -= p
			e[l] = g
			e[m] = 0
		}
	}
	// ascending order, the columns of z with the values
	for i := 0; i < n-1; i++ {
		k := i
		for j := i + 1; j < n; j++ {
			if d[j] < d[k] {
				k = j
			}
		}
		if k != i {
			d[i], d[k] = d[k], d[i]
			for r := range n {
				z[r*n+i], z[r*n+k] = z[r*n+k], z[r*n+i]
			}
		}
	}
	return true
}

// tridiagRotate multiplies z's columns lo..hi from the right by the
// rotations of one sweep, rotation i (on columns i and i+1, with cosine
// cs[i] and sine sn[i]) applied first for i = hi-1 and last for i = lo.
// Along a row each rotation waits for the one before, so four rows go
// through the sweep together, four independent chains.
func tridiagRotate(z []float64, n int, cs, sn []float64, lo, hi int) {
	if hi <= lo {
		return
	}
	cs, sn = cs[lo:hi], sn[lo:hi]
	ParallelFor((n+3)/4, max(4, (1<<12)/(hi-lo+1)), func(q0, q1 int) {
		r := 4 * q0
		for ; r+4 <= min(4*q1, n); r += 4 {
			a0, a1, a2, a3 := z[r*n+lo:r*n+hi+1], z[(r+1)*n+lo:(r+1)*n+hi+1], z[(r+2)*n+lo:(r+2)*n+hi+1], z[(r+3)*n+lo:(r+3)*n+hi+1]
			k := hi - lo
			f0, f1, f2, f3 := a0[k], a1[k], a2[k], a3[k]
			for i := k - 1; i >= 0; i-- {
				c, s := cs[i], sn[i]
				x0, x1, x2, x3 := a0[i], a1[i], a2[i], a3[i]
				a0[i+1], a1[i+1], a2[i+1], a3[i+1] = s*x0+c*f0, s*x1+c*f1, s*x2+c*f2, s*x3+c*f3
				f0, f1, f2, f3 = c*x0-s*f0, c*x1-s*f1, c*x2-s*f2, c*x3-s*f3
			}
			a0[0], a1[0], a2[0], a3[0] = f0, f1, f2, f3
		}
		for ; r < min(4*q1, n); r++ {
			row := z[r*n+lo : r*n+hi+1]
			k := hi - lo
			f := row[k]
			for i := k - 1; i >= 0; i-- {
				c, s, x := cs[i], sn[i], row[i]
				row[i+1] = s*x + c*f
				f = c*x - s*f
			}
			row[0] = f
		}
	})
}

// Eig writes the eigenvalues (w, complex64 [..., n]) and right
// eigenvectors (the columns of v, complex64 [..., n, n], each of unit
// norm with its largest component real) of each matrix of a
// ([..., n, n]), in LAPACK's order: a complex conjugate pair is adjacent,
// the one with the positive imaginary part first. A matrix with a NaN or
// an infinity is an error wrapping ErrNotFinite and one on which the
// iteration does not converge ErrNoConvergence, as numpy raises.
func Eig(w, v, a Buf) error {
	if err := decCheck("cpu.Eig", a); err != nil {
		return err
	}
	return eig("linalg.Eig", w, v, a, true)
}

// Eigvals writes the eigenvalues of each matrix of a to w, as Eig without
// the eigenvectors.
func Eigvals(w, a Buf) error {
	if err := decCheck("cpu.Eigvals", a); err != nil {
		return err
	}
	return eig("linalg.Eigvals", w, Buf{}, a, false)
}

func eig(op string, w, v, a Buf, vectors bool) error {
	if w.DType != array.Complex64 || (vectors && v.DType != array.Complex64) {
		return array.Errorf(op, "output dtype %v, want complex64", w.DType)
	}
	am := newDecMats(a)
	n := am.rows
	if n == 0 {
		return nil
	}
	wv := newDecVecs(w)
	var vm decMats
	jobvr := lapackjob.RightEVNone
	if vectors {
		vm = newDecMats(v)
		jobvr = lapackjob.RightEVCompute
	}
	wd, vd := elems[complex64](w), elems[complex64](v)
	impl := gonum.Implementation{}
	return decRun(op, am, 25*n*n*n, func(lo, hi int, sc *decScratch) *decFail {
		x, wr, wi := sc.get(n*n), sc.get(n), sc.get(n)
		var vr []float64
		if vectors {
			vr = sc.get(n * n)
		}
		query := []float64{0}
		impl.Dgeev(lapackjob.LeftEVNone, jobvr, n, x, n, wr, wi, nil, 1, vr, n, query, -1)
		work := sc.get(max(int(query[0]), 4*n, 1))
		for i := lo; i < hi; i++ {
			am.load(i, x, n)
			if !decFinite(x, n, n, n, 0) {
				return &decFail{i, ErrNotFinite, "holds a NaN or an infinity"}
			}
			if impl.Dgeev(lapackjob.LeftEVNone, jobvr, n, x, n, wr, wi, nil, 1, vr, n, work, len(work)) != 0 {
				return &decFail{i, ErrNoConvergence, "did not converge in the eigensolver"}
			}
			off := wv.m.offset(i)
			for j := range n {
				wd[off+j*wv.m.rs] = complex(float32(wr[j]), float32(wi[j]))
			}
			if !vectors {
				continue
			}
			off = vm.offset(i)
			for j := 0; j < n; j++ {
				if wi[j] == 0 || j == n-1 {
					for r := range n {
						vd[off+r*vm.rs+j*vm.cs] = complex(float32(vr[r*n+j]), 0)
					}
					continue
				}
				// a conjugate pair: columns j and j+1 hold the real and
				// imaginary parts of the first vector
				for r := range n {
					re, im := float32(vr[r*n+j]), float32(vr[r*n+j+1])
					vd[off+r*vm.rs+j*vm.cs] = complex(re, im)
					vd[off+r*vm.rs+(j+1)*vm.cs] = complex(re, -im)
				}
				j++
			}
		}
		return nil
	})
}
