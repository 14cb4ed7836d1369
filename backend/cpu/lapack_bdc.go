package cpu

import (
	"cmp"
	"math"
	"slices"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack/gonum"
)

// bdcLeaf is the order at and below which bidiagDC hands a block to
// Dbdsqr: below it the merges' secular equations and copies cost more
// than the QR iteration's rotations.
const bdcLeaf = 32

// A mid-row column in a merge's U block: the unit vector of the row
// that joins the two halves (dcTop and dcBot mark the halves' columns).
const bdcMid = 4

// bidiagDC finds the singular value decomposition B = U·diag(d)·Vᵀ of
// the n×n upper bidiagonal matrix with diagonal d and superdiagonal
// e[:n-1] by divide and conquer, as LAPACK's dbdsdc (dlasd0..dlasd4):
// the row in the middle splits B into an upper block with one column
// more than rows, that row, and a lower block; the halves are solved
// the same way, and their SVDs joined by the roots of a secular
// equation, with Gu and Eisenstat's vectors multiplied into the halves'
// by GEMM, where nearly all of the time goes. It shares the secular
// solver and the products with tridiagDC, since BᵀB's merge is the
// rank-one update of the squared singular values; it never forms BᵀB
// or the 2n×2n Golub-Kahan matrix, whose eigenvectors are wrong for
// repeated zero singular values.
//
// On return d holds the singular values in descending order and the
// columns of u and v (n×n, row-major) the left and right singular
// vectors; e is left as it was. It reports false if a leaf's QR
// iteration or a secular root did not converge.
func bidiagDC(d, e, u, v []float64, n int, sc *decScratch) bool {
	clear(u[:n*n])
	clear(v[:n*n])
	w := bdcWork{n: n, u: u, v: v, op: sc.op}
	return w.solve(d, e, 0, n, 0)
}

// bdcWork is the state shared by the merges of one bidiagDC. A
// subproblem is rows lo..hi of B and columns lo..hi+sqre (sqre is 1 for
// every upper half, which keeps the column of the row that joins it to
// its sibling): its U is the block [lo:hi, lo:hi] of u, its V the block
// [lo:hi+sqre, lo:hi+sqre] of v, with the extra column, when sqre is 1,
// a vector of its null space. The blocks of siblings and the row and
// column between them are disjoint.
type bdcWork struct {
	n    int
	u, v []float64
	op   string
}

func (w *bdcWork) solve(d, e []float64, lo, hi, sqre int) bool {
	k := hi - lo
	if k <= bdcLeaf {
		return w.leaf(d, e, lo, hi, sqre)
	}
	mid := lo + k/2
	alpha, beta := d[mid], e[mid]
	if !w.solve(d, e, lo, mid, 1) || !w.solve(d, e, mid+1, hi, sqre) {
		return false
	}
	return w.merge(d, lo, mid, hi, sqre, alpha, beta)
}

// leaf solves a small block by Dbdsqr. A block with an extra column is
// first made lower bidiagonal and square by plane rotations from the
// right, which chase the superdiagonal into the subdiagonal and leave
// the last column zero: its rotated unit vector is the null vector.
func (w *bdcWork) leaf(d, e []float64, lo, hi, sqre int) bool {
	k, mc := hi-lo, hi-lo+sqre
	sc := &decScratch{op: w.op}
	defer sc.release()
	dl, el := d[lo:hi], sc.get(max(k, 1))
	vt, c, work := sc.get(mc*mc), sc.get(k*k), sc.get(max(4*k, 1))
	decEye(vt, mc, mc, mc)
	decEye(c, k, k, k)
	uplo := blas.Upper
	ne := k - 1 + sqre
	copy(el, e[lo:lo+ne])
	// Dbdsqr's thresholds have an absolute floor near the underflow
	// threshold, so a block of tiny entries is solved at norm 1.
	scale := 0.0
	for i := range k {
		scale = max(scale, math.Abs(dl[i]))
	}
	for i := range ne {
		scale = max(scale, math.Abs(el[i]))
	}
	if scale == 0 {
		scale = 1
	}
	for i := range k {
		dl[i] /= scale
	}
	for i := range ne {
		el[i] /= scale
	}
	if sqre == 1 {
		uplo = blas.Lower
		for i := range k {
			r := math.Hypot(dl[i], el[i])
			cs, sn := 1.0, 0.0
			if r != 0 {
				cs, sn = dl[i]/r, el[i]/r
			}
			dl[i] = r
			if i+1 < k {
				el[i] = sn * dl[i+1]
				dl[i+1] *= cs
			}
			x, y := vt[i*mc:(i+1)*mc], vt[(i+1)*mc:(i+2)*mc]
			for j := range mc {
				x[j], y[j] = cs*x[j]+sn*y[j], cs*y[j]-sn*x[j]
			}
		}
	}
	// C = I collects Uᵀ: Dbdsqr rotates C's rows, contiguous here.
	if !(gonum.Implementation{}).Dbdsqr(uplo, k, mc, 0, k, dl, el, vt, mc, nil, 1, c, k, work) {
		return false
	}
	for i := range k {
		dl[i] *= scale
	}
	n := w.n
	decTranspose(w.u[lo*n+lo:], n, c, k, k, k)
	decTranspose(w.v[lo*n+lo:], n, vt, mc, mc, mc)
	return true
}

// merge joins the SVDs of rows lo..mid and mid+1..hi (in d and the
// blocks of u and v) through row mid, whose entries were alpha at
// column mid and beta at mid+1, into the SVD of rows lo..hi (LAPACK's
// dlasd1..dlasd3). In the halves' singular bases the block is the
// arrow matrix whose first row is z = (alpha·(last row of V1),
// beta·(first row of V2)) and whose diagonal holds the halves' singular
// values, after a rotation of the two null columns folds them into one
// (and, with an extra column, leaves the other the block's null
// vector). Its squared singular values are the roots of
// 1 + Σ z_i²/(d_i² - σ²) = 0, with d_0 = 0 for the joining row.
func (w *bdcWork) merge(d []float64, lo, mid, hi, sqre int, alpha, beta float64) bool {
	const eps = 0x1p-53
	n, ns, nl := w.n, hi-lo, mid-lo
	ms := ns + sqre
	sc := &decScratch{op: w.op}
	defer sc.release()
	ub, vb := w.u[lo*n+lo:], w.v[lo*n+lo:]
	at := func(r, c int) int { return r*n + c }
	ub[at(nl, nl)] = 1
	// Scaling the block to norm about 1 keeps the squares in range.
	scale := max(math.Abs(alpha), math.Abs(beta))
	for i := lo; i < hi; i++ {
		if i != mid {
			scale = max(scale, math.Abs(d[i]))
		}
	}
	if scale == 0 {
		// A zero block: its halves' bases serve, the joining row's
		// singular value is 0, and every value is 0, so in order.
		d[mid] = 0
		return true
	}
	alpha, beta = alpha/scale, beta/scale

	// Pair p: pole dd[p], weight z[p], column col[p] of the U and of the
	// V block, and in which rows of each block that column is nonzero.
	dd, z := sc.get(ns), sc.get(ns)
	col := make([]int, ns)
	ukind, vkind := make([]uint8, ns), make([]uint8, ns)
	dd[0] = 0
	for p := 1; p < ns; p++ {
		c, kind, zp := p-1, uint8(dcTop), alpha*vb[at(nl, p-1)]
		if p > nl {
			c, kind, zp = p, dcBot, beta*vb[at(nl+1, p)]
		}
		z[p] = zp
		col[p], ukind[p], vkind[p] = c, kind, kind
		dd[p] = d[lo+c] / scale
	}
	dmax := 0.0
	for p := range ns {
		dmax = max(dmax, dd[p])
	}
	tol := 8 * eps * max(dmax, math.Abs(alpha), math.Abs(beta))
	col[0], ukind[0], vkind[0] = nl, bdcMid, dcTop
	z[0] = alpha * vb[at(nl, nl)]
	if sqre == 1 {
		// Fold the halves' null columns (nl and ms-1 of V) into one.
		z2 := beta * vb[at(nl+1, ms-1)]
		r := math.Hypot(z[0], z2)
		c, s := 1.0, 0.0
		if r > tol {
			c, s = z[0]/r, z2/r
			vkind[0] |= dcBot
		}
		z[0] = r
		dcRotCols(vb, n, ms, nl, ms-1, c, s)
	}
	// A tiny z_0 is raised to tol, which perturbs B by no more than the
	// deflations below, and keeps the joining row's pole in the equation.
	if math.Abs(z[0]) <= tol {
		z[0] = tol
	}

	// Deflation (dlasd2): a weight below tol leaves its pole a singular
	// value, and of two poles closer than tol one is rotated out.
	perm := make([]int, ns-1)
	for i := range perm {
		perm[i] = i + 1
	}
	slices.SortStableFunc(perm, func(a, b int) int { return cmp.Compare(dd[a], dd[b]) })
	kept, defl := append(make([]int, 0, ns), 0), make([]int, 0, ns)
	pj := -1
	for _, j := range perm {
		if math.Abs(z[j]) <= tol {
			defl = append(defl, j)
			continue
		}
		if pj < 0 {
			pj = j
			continue
		}
		if dd[j]-dd[pj] > tol {
			kept = append(kept, pj)
			pj = j
			continue
		}
		s, c := z[pj], z[j]
		tau := math.Hypot(c, s)
		c /= tau
		s = -s / tau
		z[j], z[pj] = tau, 0
		cu, cv := col[pj], col[j]
		dcRotCols(ub, n, ns, cu, cv, c, s)
		dcRotCols(vb, n, ms, cu, cv, c, s)
		ukind[pj] |= ukind[j]
		ukind[j] = ukind[pj]
		vkind[pj] |= vkind[j]
		vkind[j] = vkind[pj]
		defl = append(defl, pj)
		pj = j
	}
	if pj >= 0 {
		kept = append(kept, pj)
	}

	kk := len(kept)
	sig := sc.get(ns) // the new singular values, by column of ou and ov
	ou, ov := sc.get(ns*ns), sc.get(ms*ns)
	dl, zl := sc.get(kk), sc.get(kk)
	cols := make([]int, kk)
	uk, vk := make([]uint8, kk), make([]uint8, kk)
	for i, p := range kept {
		dl[i], zl[i], cols[i], uk[i], vk[i] = dd[p], z[p], col[p], ukind[p], vkind[p]
	}
	// the smallest pole but the joining row's 0 kept tol/2 away from it
	if kk > 1 {
		dl[1] = max(dl[1], tol/2)
	}
	delta, zh := sc.get(kk*kk), sc.get(kk)
	if !dcSecular(dl, zl, 1, true, sig, delta, zh) {
		return false
	}
	// Column j of the arrow matrix's right vectors is ẑ_i/(d_i² - σ_j²),
	// of its left ones d_i·ẑ_i/(d_i² - σ_j²) but -1 in the joining row,
	// each normalised.
	vr, ul := sc.get(kk*kk), sc.get(kk*kk)
	ParallelFor(kk, max(1, 4096/kk), func(a, b int) {
		for j := a; j < b; j++ {
			dj := delta[j*kk : (j+1)*kk]
			sv, su := 0.0, 1.0
			for i := range kk {
				x := zh[i] / dj[i]
				dj[i] = x
				sv += x * x
				if i > 0 {
					su += (dl[i] * x) * (dl[i] * x)
				}
			}
			sv, su = 1/math.Sqrt(sv), 1/math.Sqrt(su)
			ul[j] = -su
			for i := range kk {
				vr[i*kk+j] = dj[i] * sv
				if i > 0 {
					ul[i*kk+j] = dl[i] * dj[i] * su
				}
			}
		}
	})
	dcProduct(sc, ou, ns, ub, n, ul, cols, uk, 0, nl, dcTop)
	dcProduct(sc, ou, ns, ub, n, ul, cols, uk, nl, nl+1, bdcMid)
	dcProduct(sc, ou, ns, ub, n, ul, cols, uk, nl+1, ns, dcBot)
	dcProduct(sc, ov, ns, vb, n, vr, cols, vk, 0, nl+1, dcTop)
	dcProduct(sc, ov, ns, vb, n, vr, cols, vk, nl+1, ms, dcBot)
	for i := range kk {
		sig[i] *= scale
	}
	for x, p := range defl {
		sig[kk+x] = dd[p] * scale
		for r := range ns {
			ou[r*ns+kk+x] = ub[at(r, col[p])]
		}
		for r := range ms {
			ov[r*ns+kk+x] = vb[at(r, col[p])]
		}
	}
	order := dcSort(d[lo:], sig, true)
	dcGather(ub, n, ou, ns, order)
	dcGather(vb, n, ov, ms, order)
	return true
}
