package cpu

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/gonum"
)

// svdWork computes SVDs with vectors of m×n row-major matrices into u
// (m×uc, uc = m or min(m, n)) and vt (vr×n, vr = n or min(m, n)), with
// scratch taken once for a run of matrices.
//
// gonum's Dgesvd spends most of its time (80% at 512 on a random
// matrix) in Dbdsqr's plane rotations of U: on a row-major U each
// rotation walks two columns, a stride of a row per element. Here U is
// handed to Dbdsqr transposed, as its C (Dbdsqr returns Qᵀ·C = (U·Q)ᵀ),
// so that its rotations, like VT's, run along contiguous rows; from
// bdcMin divide and conquer replaces Dbdsqr (tallDC). A wide
// matrix is decomposed through its transpose (Aᵀ = U'·S·V'ᵀ gives
// A = V'·S·U'ᵀ), so the bidiagonal is always upper.
type svdWork struct {
	m, n, uc, vr int
	// the tall problem: rows ≥ cols, its u tu×tuc, its vt cols×cols
	rows, cols, tuc        int
	xt, tu, tvt            []float64 // the wide case's transposes
	e, tauQ, tauP, c, work []float64
	ub, vb, pt             []float64 // the bidiagonal's vectors and Pᵀ, from bdcMin
	sc                     *decScratch
}

func newSVDWork(m, n, uc, vr int, sc *decScratch) *svdWork {
	w := &svdWork{m: m, n: n, uc: uc, vr: vr, rows: m, cols: n, tuc: uc, sc: sc}
	if m < n {
		w.rows, w.cols, w.tuc = n, m, vr
		w.xt, w.tu, w.tvt = sc.get(m*n), sc.get(n*vr), sc.get(m*m)
	}
	r, c, tuc := w.rows, w.cols, w.tuc
	w.e, w.tauQ, w.tauP, w.c = sc.get(max(c-1, 1)), sc.get(c), sc.get(c), sc.get(c*r)
	impl := gonum.Implementation{}
	query := []float64{0}
	impl.Dgebrd(r, c, nil, c, nil, w.e, w.tauQ, w.tauP, query, -1)
	lwork := int(query[0])
	impl.Dorgbr(lapack.GenerateQ, r, tuc, c, w.c, tuc, w.tauQ, query, -1)
	lwork = max(lwork, int(query[0]))
	impl.Dorgbr(lapack.GeneratePT, c, c, c, w.c, c, w.tauP, query, -1)
	lwork = max(lwork, int(query[0]))
	if c >= bdcMin {
		w.ub, w.vb, w.pt = sc.get(c*c), sc.get(c*c), sc.get(c*c)
	}
	w.work = sc.get(max(lwork, 4*(c-1), 1))
	return w
}

// run decomposes x (overwritten) into s, u and vt; it reports whether
// the bidiagonal iteration converged.
func (w *svdWork) run(x, s, u, vt []float64) bool {
	if w.m >= w.n {
		return w.tall(x, s, u, vt)
	}
	decTranspose(w.xt, w.m, x, w.n, w.m, w.n)
	if !w.tall(w.xt, s, w.tu, w.tvt) {
		return false
	}
	decTranspose(u, w.m, w.tvt, w.m, w.m, w.m)
	decTranspose(vt, w.n, w.tu, w.vr, w.n, w.vr)
	return true
}

// tall is run for rows ≥ cols, where vt is cols×cols.
func (w *svdWork) tall(x, s, u, vt []float64) bool {
	impl := gonum.Implementation{}
	r, c, uc, work := w.rows, w.cols, w.tuc, w.work
	impl.Dgebrd(r, c, x, c, s, w.e, w.tauQ, w.tauP, work, len(work))
	if c >= bdcMin {
		return w.tallDC(x, s, u, vt)
	}
	w.formQP(x, u, vt)
	// The bidiagonal's rotations act on U's first c columns: C's rows.
	decTranspose(w.c, r, u, uc, r, c)
	if !bdsqrSplit(c, r, s, w.e, vt, w.c, work) {
		return false
	}
	decTranspose(u, uc, w.c, r, c, r)
	return true
}

// formQP forms, from Dgebrd's output in x, Q (r×uc) in u from the
// reflectors below the diagonal and Pᵀ (c×c) in pt from those above.
func (w *svdWork) formQP(x, u, pt []float64) {
	impl := gonum.Implementation{}
	r, c, uc, work := w.rows, w.cols, w.tuc, w.work
	for i := range r {
		copy(u[i*uc:i*uc+c], x[i*c:i*c+c])
	}
	impl.Dorgbr(lapack.GenerateQ, r, uc, c, u, uc, w.tauQ, work, len(work))
	copy(pt[:c*c], x[:c*c])
	impl.Dorgbr(lapack.GeneratePT, c, c, c, pt, c, w.tauP, work, len(work))
}

// bdcMin is the order from which svdWork finds the bidiagonal's SVD by
// divide and conquer and multiplies its vectors into Q and Pᵀ, instead
// of rotating Q and Pᵀ by Dbdsqr: BenchmarkBidiagSVD has divide and
// conquer 3× ahead at 48 and level at 32, where it is one leaf.
const bdcMin = 48

// tallDC finishes tall from Dgebrd's output in x: u = Q·diag(U_B, I)
// and vt = V_Bᵀ·Pᵀ for B = U_B·S·V_Bᵀ. Forming Q and Pᵀ (Dorgbr) and
// multiplying by GEMM takes half the time of applying the reflectors to
// U_B and V_Bᵀ with Dormbr, whose blocked updates are smaller products.
// The bidiagonal's SVD and the forming of Q and Pᵀ are independent and
// run side by side: each has serial stretches (the secular equations
// and leaves, the unblocked panels) that the other fills.
func (w *svdWork) tallDC(x, s, u, vt []float64) bool {
	r, c, uc := w.rows, w.cols, w.tuc
	ok := true
	ParallelFor(2, 1, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if i == 0 {
				ok = bidiagDC(s, w.e, w.ub, w.vb, c, w.sc)
				continue
			}
			w.formQP(x, u, w.pt)
		}
	})
	if !ok {
		return false
	}
	q := w.c[:r*c]
	for i := range r {
		copy(q[i*c:(i+1)*c], u[i*uc:i*uc+c])
	}
	BLAS{}.Dgemm(blas.NoTrans, blas.NoTrans, r, c, c, 1, q, c, w.ub, c, 0, u, uc)
	BLAS{}.Dgemm(blas.Trans, blas.NoTrans, c, c, c, 1, w.vb, c, w.pt, c, 0, vt, c)
	return true
}

// decTranspose writes the transpose of the r×c row-major src (rows lds
// apart) to dst (rows ldd apart).
func decTranspose(dst []float64, ldd int, src []float64, lds, r, c int) {
	for i := range r {
		for j := range c {
			dst[j*ldd+i] = src[i*lds+j]
		}
	}
}

// bdsqrSplit is Dbdsqr on the n×n upper bidiagonal (d, e), applying its
// right rotations to vt (n×n) and its left ones to c (n×ncc), with the
// columns of vt and c shared out over the cores. The rotations are the
// O(n³) part of the SVD, and each column's are independent of the
// others': every part reruns the O(n²) iteration on its own copy of d
// and e, which takes the same steps (the same arithmetic on the same
// numbers) and so rotates and sorts its columns as one call would.
func bdsqrSplit(n, ncc int, d, e, vt, c, work []float64) bool {
	impl := gonum.Implementation{}
	const parts = 2 // per matrix: two cores, and no more to wait for
	if n < 64 {
		return impl.Dbdsqr(blas.Upper, n, n, 0, ncc, d, e, vt, n, nil, 1, c, ncc, work)
	}
	type part struct {
		vt, c  bool
		lo, hi int
	}
	var ps []part
	for i := range parts {
		ps = append(ps, part{vt: true, lo: i * n / parts, hi: (i + 1) * n / parts},
			part{c: true, lo: i * ncc / parts, hi: (i + 1) * ncc / parts})
	}
	ok := make([]bool, len(ps))
	var d0 []float64 // part 0's d: every part's is the same
	ParallelFor(len(ps), 1, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			p := ps[i]
			dd, ee, wk := append([]float64(nil), d[:n]...), append([]float64(nil), e[:n-1]...), make([]float64, 4*(n-1))
			if p.vt {
				ok[i] = impl.Dbdsqr(blas.Upper, n, p.hi-p.lo, 0, 0, dd, ee, vt[p.lo:], n, nil, 1, nil, 1, wk)
			} else {
				ok[i] = impl.Dbdsqr(blas.Upper, n, 0, 0, p.hi-p.lo, dd, ee, nil, 1, nil, 1, c[p.lo:], ncc, wk)
			}
			if i == 0 {
				d0 = dd
			}
		}
	})
	for i := range ps {
		if !ok[i] {
			return false
		}
	}
	copy(d, d0)
	return true
}
