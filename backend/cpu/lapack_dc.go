package cpu

import (
	"cmp"
	"math"
	"slices"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack/gonum"
)

// dcLeaf is the order at and below which tridiagDC hands a block to the
// QL iteration: below it the rank-one merges cost more than the QL's
// rotations.
const dcLeaf = 32

// tridiagDC finds the eigenvalues and eigenvectors of the symmetric
// tridiagonal matrix with diagonal d and off-diagonal e[:n-1] by
// Cuppen's divide and conquer, as LAPACK's dstedc: split the matrix in
// two by a rank-one correction, solve the halves, and merge them by the
// roots of the secular equation. The vectors of each merge come from
// Löwner's formula on the computed roots (Gu and Eisenstat), which makes
// them orthogonal however close the roots are, and are multiplied into
// the halves' vectors by GEMM, where nearly all of its time goes.
//
// On return d holds the eigenvalues in ascending order and the columns
// of z (n×n, row-major) the eigenvectors of the tridiagonal matrix; e is
// overwritten. It reports false if a QL leaf or a secular root did not
// converge.
func tridiagDC(d, e, z []float64, n int, sc *decScratch) bool {
	clear(z[:n*n])
	w := dcWork{n: n, z: z, op: sc.op}
	return w.solve(d, e, 0, n)
}

// dcWork is the state shared by the merges of one tridiagDC: the
// eigenvector matrix, whose diagonal block [lo:hi, lo:hi] is the
// subproblem lo..hi's, and the op that scratch allocations name. Each
// leaf and merge takes its scratch from the pool and gives it back when
// it ends, for the next to reuse.
type dcWork struct {
	n  int
	z  []float64
	op string
}

func (w *dcWork) solve(d, e []float64, lo, hi int) bool {
	k := hi - lo
	if k <= dcLeaf {
		return w.leaf(d, e, lo, hi)
	}
	mid := lo + k/2
	// T = diag(T1, T2) + rho·u·uᵀ with u = e_{mid-1} + sign(beta)·e_mid
	beta := e[mid-1]
	rho := math.Abs(beta)
	d[mid-1] -= rho
	d[mid] -= rho
	if !w.solve(d, e, lo, mid) || !w.solve(d, e, mid, hi) {
		return false
	}
	return w.merge(d, lo, mid, hi, rho, math.Copysign(1, beta))
}

// leaf solves a small block by the QL iteration on the identity.
func (w *dcWork) leaf(d, e []float64, lo, hi int) bool {
	k := hi - lo
	sc := &decScratch{op: w.op}
	defer sc.release()
	q, ee := sc.get(k*k), sc.get(k)
	decEye(q, k, k, k)
	copy(ee, e[lo:hi-1])
	ee[k-1] = 0
	if !tridiagQL(d[lo:hi], ee, q, k, sc) {
		return false
	}
	for r := range k {
		copy(w.z[(lo+r)*w.n+lo:(lo+r)*w.n+hi], q[r*k:(r+1)*k])
	}
	return true
}

// The bits of a column's kind in a merge's block: nonzero in the first
// half's rows, in the second's; a column that a deflating rotation mixed
// with one of the other half has both.
const (
	dcTop = 1
	dcBot = 2
)

// merge finds the eigensystem of diag(D1, D2) + rho·u·uᵀ in the block
// lo..hi, where d[lo:mid], d[mid:hi] and the block's diagonal sub-blocks
// hold the halves' eigensystems (LAPACK's dlaed1..dlaed4).
func (w *dcWork) merge(d []float64, lo, mid, hi int, rho, sign float64) bool {
	const eps = 0x1p-53
	n, k, m1 := w.n, hi-lo, mid-lo
	sc := &decScratch{op: w.op}
	defer sc.release()
	zb := w.z[lo*n+lo:]
	at := func(r, c int) int { return r*n + c }
	dd, z := d[lo:hi], sc.get(k)
	kind := make([]uint8, k)
	// z = diag(Q1, Q2)ᵀ·u, scaled to unit norm (‖u‖ = √2)
	for j := range k {
		if j < m1 {
			z[j] = zb[at(m1-1, j)] / math.Sqrt2
			kind[j] = dcTop
		} else {
			z[j] = sign * zb[at(m1, j)] / math.Sqrt2
			kind[j] = dcBot
		}
	}
	rho *= 2
	perm := make([]int, k)
	for j := range perm {
		perm[j] = j
	}
	slices.SortStableFunc(perm, func(a, b int) int { return cmp.Compare(dd[a], dd[b]) })
	dmax, zmax := 0.0, 0.0
	for j := range k {
		dmax, zmax = max(dmax, math.Abs(dd[j])), max(zmax, math.Abs(z[j]))
	}
	tol := 8 * eps * max(dmax, rho*zmax)

	// Deflation: a component of z below tol leaves its pole an
	// eigenvalue, and two poles closer than tol (weighted) are rotated so
	// that one of them does.
	kept, defl := make([]int, 0, k), make([]int, 0, k)
	pj := -1
	for _, j := range perm {
		if rho*math.Abs(z[j]) <= tol {
			defl = append(defl, j)
			continue
		}
		if pj < 0 {
			pj = j
			continue
		}
		s, c := z[pj], z[j]
		tau := math.Hypot(c, s)
		t := dd[j] - dd[pj]
		c /= tau
		s = -s / tau
		if math.Abs(t*c*s) > tol {
			kept = append(kept, pj)
			pj = j
			continue
		}
		z[j], z[pj] = tau, 0
		dcRotCols(zb, n, k, pj, j, c, s)
		kind[pj] |= kind[j]
		kind[j] = kind[pj]
		t = dd[pj]*c*c + dd[j]*s*s
		dd[j] = dd[pj]*s*s + dd[j]*c*c
		dd[pj] = t
		defl = append(defl, pj)
		pj = j
	}
	if pj >= 0 {
		kept = append(kept, pj)
	}

	kk := len(kept)
	lam := sc.get(k) // the new eigenvalues, by column of out
	out := sc.get(k * k)
	if kk > 0 {
		dl, zl := sc.get(kk), sc.get(kk)
		for i, j := range kept {
			dl[i], zl[i] = dd[j], z[j]
		}
		delta, zh := sc.get(kk*kk), sc.get(kk)
		if !dcSecular(dl, zl, rho, false, lam, delta, zh) {
			return false
		}
		// u (kk×kk, row i, column j) = zh[i]/(dl[i]-λ_j), columns normalised
		u := sc.get(kk * kk)
		ParallelFor(kk, max(1, 4096/kk), func(a, b int) {
			for j := a; j < b; j++ {
				col := delta[j*kk : (j+1)*kk]
				s := 0.0
				for i := range kk {
					v := zh[i] / col[i]
					col[i] = v
					s += v * v
				}
				s = 1 / math.Sqrt(s)
				for i := range kk {
					u[i*kk+j] = col[i] * s
				}
			}
		})
		// out[:, :kk] = Z[:, kept]·u, each half of the rows from the
		// columns nonzero there
		kinds := make([]uint8, kk)
		for i, j := range kept {
			kinds[i] = kind[j]
		}
		dcProduct(sc, out, k, zb, n, u, kept, kinds, 0, m1, dcTop)
		dcProduct(sc, out, k, zb, n, u, kept, kinds, m1, k, dcBot)
	}
	for x, j := range defl {
		lam[kk+x] = dd[j]
		for r := range k {
			out[r*k+kk+x] = zb[at(r, j)]
		}
	}
	order := dcSort(dd, lam, false)
	dcGather(zb, n, out, k, order)
	return true
}

// dcSort writes vals to dst sorted ascending, or descending with desc,
// and returns the stable order it took them in: dst[c] = vals[order[c]].
func dcSort(dst, vals []float64, desc bool) []int {
	order := make([]int, len(vals))
	for j := range order {
		order[j] = j
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if desc {
			a, b = b, a
		}
		return cmp.Compare(vals[a], vals[b])
	})
	for c, j := range order {
		dst[c] = vals[j]
	}
	return order
}

// dcGather writes the rows×len(order) row-major src, its columns taken
// in order, to the first columns of dst's rows (leading dimension ld).
func dcGather(dst []float64, ld int, src []float64, rows int, order []int) {
	k := len(order)
	for r := range rows {
		row, s := dst[r*ld:r*ld+k], src[r*k:(r+1)*k]
		for c, j := range order {
			row[c] = s[j]
		}
	}
}

// dcProduct writes rows r0..r1 of out[:, :len(cols)] (leading
// dimension ld): the columns cols of src (rows lds apart) whose kinds
// have the bit, the others being zero in those rows, times the matching
// rows of coef (len(cols)×len(cols)). Leaving out the columns that are
// zero in a half of the rows halves a merge's GEMM while nothing has
// deflated across the halves.
func dcProduct(sc *decScratch, out []float64, ld int, src []float64, lds int, coef []float64, cols []int, kinds []uint8, r0, r1 int, bit uint8) {
	kk, rows := len(cols), r1-r0
	var sel []int
	for i, k := range kinds {
		if k&bit != 0 {
			sel = append(sel, i)
		}
	}
	if len(sel) == 0 {
		for r := r0; r < r1; r++ {
			clear(out[r*ld : r*ld+kk])
		}
		return
	}
	ns := len(sel)
	g, cs := sc.get(rows*ns), sc.get(ns*kk)
	for r := range rows {
		row := src[(r0+r)*lds:]
		for c, i := range sel {
			g[r*ns+c] = row[cols[i]]
		}
	}
	for c, i := range sel {
		copy(cs[c*kk:(c+1)*kk], coef[i*kk:(i+1)*kk])
	}
	BLAS{}.Dgemm(blas.NoTrans, blas.NoTrans, rows, kk, ns, 1, g, ns, cs, kk, 0, out[r0*ld:], ld)
}

// dcRotCols rotates columns i and j of the first rows rows of a (rows
// ld apart) by the plane rotation (c, s): a_i ← c·a_i + s·a_j,
// a_j ← c·a_j - s·a_i, LAPACK's drot.
func dcRotCols(a []float64, ld, rows, i, j int, c, s float64) {
	for r := range rows {
		x, y := a[r*ld+i], a[r*ld+j]
		a[r*ld+i], a[r*ld+j] = c*x+s*y, c*y-s*x
	}
}

// dcSecular finds the kk = len(dl) roots of the secular equation
// 1/rho + Σ z_i²/(p_i - λ) = 0 (dcRoot), in parallel, and Löwner's
// z-hat for them: the weights for which the computed roots are the
// exact eigenvalues of diag(p) + rho·ẑ·ẑᵀ, from which Gu and Eisenstat's
// vectors are orthogonal however close the roots. The poles p are dl,
// or dl² when sv (dl then holds singular values and the roots are
// returned as σ = √λ). It writes the roots to lam, p_i - λ_j to
// delta[j*kk+i] and ẑ to zh; it reports false if a root did not
// converge.
func dcSecular(dl, zl []float64, rho float64, sv bool, lam, delta, zh []float64) bool {
	kk := len(dl)
	var failed atomic.Bool
	ParallelFor(kk, max(1, 4096/kk), func(a, b int) {
		for j := a; j < b; j++ {
			o, tau, conv := dcRoot(dl, zl, rho, j, delta[j*kk:(j+1)*kk], sv)
			if sv {
				lam[j] = dl[o] + svShift(dl[o], tau)
			} else {
				lam[j] = dl[o] + tau
			}
			if !conv {
				failed.Store(true)
			}
		}
	})
	if failed.Load() {
		return false
	}
	ParallelFor(kk, max(1, 4096/kk), func(a, b int) {
		for i := a; i < b; i++ {
			p := -delta[i*kk+i] / rho
			for j := range kk {
				if j == i {
					continue
				}
				gap := dl[i] - dl[j]
				if sv {
					gap *= dl[i] + dl[j]
				}
				p *= delta[j*kk+i] / gap
			}
			zh[i] = math.Copysign(math.Sqrt(math.Abs(p)), zl[i])
		}
	})
	return true
}

// svShift is σ - d for the σ with σ² = d² + tau, formed without the
// cancellation of √(d²+tau) - d when tau is small beside d².
func svShift(d, tau float64) float64 {
	if tau == 0 {
		return 0
	}
	return tau / (d + math.Sqrt(max(d*d+tau, 0)))
}

// dcRoot finds root j (0-based, ascending) of the secular equation
// 1/rho + Σ z_i²/(p_i - λ) = 0 for ascending poles p and rho > 0: the
// root in (p_j, p_j+1), or above p_{k-1} for the last. The poles are d,
// or d² when sv, for the singular values of an arrow matrix, whose
// differences p_i - λ are then formed as (d_i - σ)(d_i + σ) so that
// they keep their digits. It returns the root as p[o] + tau, with o the
// pole nearer to it, so that λ's distance to that pole is known to full
// relative precision, and fills delta with p_i - λ. The iteration fits
// each half of the sum (the poles below the root and those above) by
// one pole and its constant, matched in value and slope (Bunch, Nielsen
// and Sorensen), solves that model's quadratic, and keeps a bracket in
// which it bisects whenever the model steps outside; it reports false
// if 200 steps did not settle it.
func dcRoot(d, z []float64, rho float64, j int, delta []float64, sv bool) (int, float64, bool) {
	const eps = 0x1p-53
	k := len(d)
	last := j == k-1
	f := func(o int, tau float64) (fv, psi, dpsi, phi, dphi, size float64) {
		size = 1 / rho
		t := 0.0
		if sv {
			t = svShift(d[o], tau)
		}
		for i := range k {
			di := (d[i] - d[o]) - tau
			if sv {
				di = (d[i] - d[o] - t) * (d[i] + d[o] + t)
			}
			delta[i] = di
			t := z[i] / di
			if i <= j {
				psi += z[i] * t
				dpsi += t * t
			} else {
				phi += z[i] * t
				dphi += t * t
			}
			size += math.Abs(z[i] * t)
		}
		return 1/rho + psi + phi, psi, dpsi, phi, dphi, size
	}
	var o int
	var lo, hi float64
	if last {
		zz := 0.0
		for _, v := range z {
			zz += v * v
		}
		o, lo, hi = j, 0, rho*zz
	} else {
		gap := d[j+1] - d[j]
		if sv {
			gap *= d[j+1] + d[j]
		}
		if fv, _, _, _, _, _ := f(j, gap/2); fv >= 0 {
			o, lo, hi = j, 0, gap/2
		} else {
			o, lo, hi = j+1, gap/2-gap, 0
		}
	}
	tau := lo + (hi-lo)/2
	for iter := range 200 {
		fv, psi, dpsi, phi, dphi, size := f(o, tau)
		if math.Abs(fv) <= 8*eps*size {
			return o, tau, true
		}
		if fv < 0 {
			lo = tau
		} else {
			hi = tau
		}
		a := delta[j]
		var x float64
		next := math.NaN()
		if last {
			// c + q/(a - x) = 0
			q := dpsi * a * a
			if c := 1/rho + psi - q/a; c > 0 {
				x = a + q/c
				next = tau + x
			}
		} else {
			b := delta[j+1]
			q, s := dpsi*a*a, dphi*b*b
			c := 1/rho + (psi - q/a) + (phi - s/b)
			next = tau + dcQuadStep(a, b, c, q, s, lo-tau, hi-tau)
		}
		if !(next > lo && next < hi) || iter%8 == 7 {
			next = lo + (hi-lo)/2
		}
		if math.Abs(next-tau) <= 2*eps*math.Abs(tau) || hi-lo <= 4*eps*max(math.Abs(lo), math.Abs(hi)) {
			f(o, next)
			return o, next, true
		}
		tau = next
	}
	return o, tau, false
}

// dcQuadStep is the step x in (xlo, xhi) that solves the two-pole model
// c + q/(a-x) + s/(b-x) = 0, or NaN if neither root of its quadratic
// c·x² - (c(a+b)+q+s)·x + (c·a·b + q·b + s·a) = 0 lies there.
func dcQuadStep(a, b, c, q, s, xlo, xhi float64) float64 {
	A, B, C := c, -(c*(a+b) + q + s), c*a*b+q*b+s*a
	in := func(x float64) bool { return x > xlo && x < xhi }
	if A == 0 {
		if B == 0 {
			return math.NaN()
		}
		if x := -C / B; in(x) {
			return x
		}
		return math.NaN()
	}
	disc := math.Sqrt(max(B*B-4*A*C, 0))
	r1 := (-B - math.Copysign(disc, B)) / (2 * A)
	r2 := math.NaN()
	if r1 != 0 {
		r2 = C / (A * r1)
	}
	switch {
	case in(r1) && in(r2):
		if math.Abs(r1) < math.Abs(r2) {
			return r1
		}
		return r2
	case in(r1):
		return r1
	case in(r2):
		return r2
	}
	return math.NaN()
}

// dcMin is the order from which Eigh solves its tridiagonal matrix by
// divide and conquer instead of the QL iteration: BenchmarkTridiagEigen
// has divide and conquer ahead from 64 (twice as fast there, 17 times
// at 512), and below it the leaves are most of the matrix.
const dcMin = 64

// eighUplo is the triangle of x (n×n, uplo holding the matrix) that
// Eigh reduces: from dcMin always the lower, with an upper triangle
// first mirrored into it, since gonum has Dormqr to apply the lower
// reduction's reflectors and no Dormql for the upper's.
func eighUplo(uplo blas.Uplo, n int, x []float64) blas.Uplo {
	if n < dcMin || uplo == blas.Lower {
		return uplo
	}
	for r := range n {
		for c := r + 1; c < n; c++ {
			x[c*n+r] = x[r*n+c]
		}
	}
	return blas.Lower
}

// eighVectors finishes Eigh of the matrix that Dsytrd (with uplo) left
// in x as the tridiagonal (d, e) and the reflectors x and tau: the
// eigenvalues in d and the eigenvectors in x's columns. Below dcMin the
// QL iteration's rotations multiply the reflectors' product (Dorgtr);
// from dcMin (where uplo is Lower) divide and conquer finds the
// tridiagonal's vectors and the reflectors are applied to them by
// Dormqr, GEMM-rich, as LAPACK's dsyevd does with dormtr, which skips
// forming the product.
func eighVectors(uplo blas.Uplo, n int, x, d, e, tau, work []float64, sc *decScratch) bool {
	impl := gonum.Implementation{}
	if n < dcMin {
		impl.Dorgtr(uplo, n, x, n, tau, work, len(work))
		return tridiagQL(d, e, x, n, sc)
	}
	zt := sc.get(n * n)
	if !tridiagDC(d, e, zt, n, sc) {
		return false
	}
	// Q = diag(1, H(1)···H(n-1)), the reflectors in x's columns below
	// the subdiagonal
	impl.Dormqr(blas.Left, blas.NoTrans, n-1, n, n-1, x[n:], n, tau, zt[n:], n, work, len(work))
	copy(x[:n*n], zt)
	return true
}
