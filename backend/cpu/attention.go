package cpu

import (
	"math"
	"runtime"

	"github.com/fathom-go/fathom/array"
)

// Attention is computed as FlashAttention computes it (Dao et al., 2022,
// and its second version, 2023): the scores of a block of queries against
// a block of keys at a time, never the whole L×S matrix. The forward pass
// keeps each query's running maximum m and sum l of exp(score - m),
// rescaling its output accumulator when the maximum grows, and saves the
// log-sum-exp m + log l; the backward pass recomputes each block's
// probabilities exp(score - lse) from it. The block products go through
// the package's GEMM, reading q, k and v through their strides.

const (
	attnQueryBlock   = 128 // queries a work item takes (forward) or a step covers (backward)
	attnKeyBlock     = 256 // keys of one block of scores
	attnItemsPerCore = 2   // below this many work items a core, the GEMMs split instead
)

// AttentionBufs are the operands of Attention and AttentionVJP, all of
// one float dtype (float32 or float64): Q [B, Hq, L, D], K [B, Hk, S, D]
// and V [B, Hk, S, Dv] with Hq a multiple of Hk, and Mask either without
// Data (no mask), a Bool array (true keeps a score) or an additive array
// of the operands' dtype, viewed with the shape [B, Hq, L, S] (broadcast
// axes have stride 0). Causal masks key j for query i unless
// j <= i + S - L. Scale multiplies the scores.
type AttentionBufs struct {
	Q, K, V, Mask Buf
	Scale         float64
	Causal        bool
}

// attnGeom is the geometry of one call.
type attnGeom struct {
	b, hq, hk, l, s, d, dv int
}

func (a AttentionBufs) geom() attnGeom {
	return attnGeom{b: a.Q.Shape[0], hq: a.Q.Shape[1], hk: a.K.Shape[1], l: a.Q.Shape[2], s: a.K.Shape[2], d: a.Q.Shape[3], dv: a.V.Shape[3]}
}

func (a AttentionBufs) check(name string) error {
	dt := a.Q.DType
	if dt != array.Float32 && dt != array.Float64 {
		return array.Errorf(name, "dtype %v: want float32 or float64", dt)
	}
	if a.K.DType != dt || a.V.DType != dt {
		return array.Errorf(name, "dtypes %v, %v, %v differ", dt, a.K.DType, a.V.DType)
	}
	if a.Mask.Data != nil && a.Mask.DType != dt && a.Mask.DType != array.Bool {
		return array.Errorf(name, "mask dtype %v: want bool or %v", a.Mask.DType, dt)
	}
	return nil
}

// Attention writes softmax(Scale·Q·Kᵀ + mask)·V to out ([B, Hq, L, Dv],
// the operands' dtype) and each query's log-sum-exp of its masked, scaled
// scores to lse ([B, Hq, L], the same dtype). A query that keeps no key
// gets NaN in both.
func Attention(out, lse Buf, a AttentionBufs) error {
	if err := a.check("cpu.Attention"); err != nil {
		return err
	}
	if a.Q.DType == array.Float32 {
		attnForward(out, lse, a, fast32)
	} else {
		attnForward(out, lse, a, fast64)
	}
	return nil
}

// AttentionVJP writes the cotangents dq, dk and dv (shaped and typed as
// Q, K and V, row-major) of Attention's output given its cotangent do,
// from the forward pass's out and lse.
func AttentionVJP(dq, dk, dv Buf, a AttentionBufs, out, lse, do Buf) error {
	if err := a.check("cpu.AttentionVJP"); err != nil {
		return err
	}
	if a.Q.DType == array.Float32 {
		attnBackward(dq, dk, dv, a, out, lse, do, fast32)
	} else {
		attnBackward(dq, dk, dv, a, out, lse, do, fast64)
	}
	return nil
}

// attnSplit runs n work items: over the cores, each item's GEMMs on one,
// when there are enough items to keep them busy; else one after another
// with the GEMMs split.
func attnSplit(n int, item func(it int, parallelGEMM bool)) {
	if n >= attnItemsPerCore*runtime.GOMAXPROCS(0) {
		ParallelFor(n, 1, func(lo, hi int) {
			for it := lo; it < hi; it++ {
				item(it, false)
			}
		})
		return
	}
	for it := range n {
		item(it, true)
	}
}

// attnScratch hands out a work item's scratch from the GEMM's buffer
// pool, where it goes back when the item ends: fresh memory costs more
// to touch than an item's arithmetic on it.
type attnScratch[C smFloat] struct{ held []*[]C }

// get returns n elements of scratch, not cleared.
func (s *attnScratch[C]) get(n int) []C {
	b := poolFor[C]().get(max(n, 1))
	s.held = append(s.held, b)
	return (*b)[:n]
}

func (s *attnScratch[C]) release() {
	for _, b := range s.held {
		poolFor[C]().put(b)
	}
}

// headMat is the [rows, cols] matrix of head (b, h) of a 4-D buf from row
// r0 on.
func headMat[C smFloat](x Buf, b, h, r0 int) mat[C] {
	return mat[C]{data: elems[C](x), off: x.Offset + b*x.Strides[0] + h*x.Strides[1] + r0*x.Strides[2], rs: x.Strides[2], cs: x.Strides[3]}
}

// transposed is m's transpose, a view.
func (m mat[S]) transposed() mat[S] {
	m.rs, m.cs = m.cs, m.rs
	return m
}

// attnMask applies the mask and the causal rule to scores sc (rows of
// width w, queries i0.. of head (b, h), keys j0..j0+w).
func attnMask[C smFloat](a AttentionBufs, g attnGeom, sc []C, rows, w, b, h, i0, j0 int) {
	neg := C(math.Inf(-1))
	if m := a.Mask; m.Data != nil {
		base := m.Offset + b*m.Strides[0] + h*m.Strides[1] + j0*m.Strides[3]
		sl, ss := m.Strides[2], m.Strides[3]
		if m.DType == array.Bool {
			keep := elems[bool](m)
			for r := range rows {
				row, off := sc[r*w:(r+1)*w], base+(i0+r)*sl
				for j := range row {
					if !keep[off+j*ss] {
						row[j] = neg
					}
				}
			}
		} else {
			add := elems[C](m)
			for r := range rows {
				row, off := sc[r*w:(r+1)*w], base+(i0+r)*sl
				for j := range row {
					row[j] += add[off+j*ss]
				}
			}
		}
	}
	if a.Causal {
		for r := range rows {
			// keys past i + S - L are masked
			first := max(0, i0+r+g.s-g.l+1-j0)
			if first < w {
				row := sc[r*w : (r+1)*w]
				for j := first; j < w; j++ {
					row[j] = neg
				}
			}
		}
	}
}

// attnKeys is the number of keys the causal rule lets any of queries
// i0..i1-1 see: all S without it.
func attnKeys(a AttentionBufs, g attnGeom, i1 int) int {
	if !a.Causal {
		return g.s
	}
	return max(0, min(g.s, i1-1+g.s-g.l+1))
}

// scaledRows copies rows of head (b, h) of x, from r0 on, into dst
// (row-major, cols wide) times scale.
func scaledRows[C smFloat](dst []C, x Buf, b, h, r0, rows, cols int, scale C) {
	m := headMat[C](x, b, h, r0)
	for r := range rows {
		for c := range cols {
			dst[r*cols+c] = m.data[m.off+r*m.rs+c*m.cs] * scale
		}
	}
}

func attnForward[C smFloat](out, lse Buf, a AttentionBufs, ops *fastOps[C]) {
	g := a.geom()
	if g.b*g.hq*g.l == 0 || g.dv == 0 {
		return
	}
	o, ls := elems[C](out), elems[C](lse)
	chunks := ceilDiv(g.l, attnQueryBlock)
	group := g.hq / g.hk
	attnSplit(g.b*g.hq*chunks, func(it int, par bool) {
		b, h, i0 := it/(g.hq*chunks), it/chunks%g.hq, it%chunks*attnQueryBlock
		rows := min(attnQueryBlock, g.l-i0)
		bc := min(g.s, attnKeyBlock)
		var sp attnScratch[C]
		defer sp.release()
		qs, sc := sp.get(rows*g.d), sp.get(rows*max(bc, 1))
		acc, pv, m := sp.get(rows*g.dv), sp.get(rows*g.dv), sp.get(rows)
		l := make([]float64, rows)
		clear(acc)
		for r := range m {
			m[r] = C(math.Inf(-1))
		}
		scaledRows(qs, a.Q, b, h, i0, rows, g.d, C(a.Scale))
		hk := h / group
		keys := attnKeys(a, g, i0+rows)
		for j0 := 0; j0 < keys; j0 += bc {
			w := min(bc, keys-j0)
			s := sc[:rows*w]
			gemm(rows, w, g.d, mat[C]{data: qs, rs: g.d, cs: 1}, headMat[C](a.K, b, hk, j0).transposed(), s, w, par)
			attnMask(a, g, s, rows, w, b, h, i0, j0)
			for r := range rows {
				row := s[r*w : (r+1)*w]
				mx := ops.max(row)
				mnew := max(m[r], mx)
				if mx != mx {
					mnew = mx
				}
				if math.IsInf(float64(mnew), -1) {
					clear(row)
					continue
				}
				sum := ops.expScale(row, row, mnew, 1)
				if mnew != m[r] {
					alpha := C(math.Exp(float64(m[r] - mnew)))
					ar := acc[r*g.dv : (r+1)*g.dv]
					ops.affine(ar, ar, 0, alpha, 0)
					l[r] *= float64(alpha)
					m[r] = mnew
				}
				l[r] += sum
			}
			gemm(rows, g.dv, w, mat[C]{data: s, rs: w, cs: 1}, headMat[C](a.V, b, hk, j0), pv, g.dv, par)
			ops.add(acc, acc, pv)
		}
		base := (b*g.hq+h)*g.l + i0
		nan := C(math.NaN())
		for r := range rows {
			dst := o[(base+r)*g.dv : (base+r+1)*g.dv]
			if l[r] == 0 {
				for i := range dst {
					dst[i] = nan
				}
				ls[base+r] = nan
				continue
			}
			ops.affine(dst, acc[r*g.dv:(r+1)*g.dv], 0, C(1/l[r]), 0)
			ls[base+r] = C(float64(m[r]) + math.Log(l[r]))
		}
	})
}

func attnBackward[C smFloat](dq, dk, dv Buf, a AttentionBufs, out, lse, do Buf, ops *fastOps[C]) {
	g := a.geom()
	dQ, dK, dV := elems[C](dq), elems[C](dk), elems[C](dv)
	clear(dK[:g.b*g.hk*g.s*g.d])
	clear(dV[:g.b*g.hk*g.s*g.dv])
	if g.b*g.hq*g.l == 0 {
		return
	}
	if g.s == 0 {
		clear(dQ[:g.b*g.hq*g.l*g.d])
		return
	}
	ls := elems[C](lse)
	group := g.hq / g.hk
	attnSplit(g.b*g.hk, func(it int, par bool) {
		b, hk := it/g.hk, it%g.hk
		br, bc := min(g.l, attnQueryBlock), min(g.s, attnKeyBlock)
		var sp attnScratch[C]
		defer sp.release()
		qs, p, ds := sp.get(br*g.d), sp.get(br*bc), sp.get(br*bc)
		delta, lr := sp.get(br), sp.get(br)
		dqAcc, tq, tk := sp.get(br*g.d), sp.get(br*g.d), sp.get(bc*max(g.d, g.dv))
		dkh := dK[(b*g.hk+hk)*g.s*g.d : (b*g.hk+hk+1)*g.s*g.d]
		dvh := dV[(b*g.hk+hk)*g.s*g.dv : (b*g.hk+hk+1)*g.s*g.dv]
		for h := hk * group; h < (hk+1)*group; h++ {
			for i0 := 0; i0 < g.l; i0 += br {
				rows := min(br, g.l-i0)
				base := (b*g.hq+h)*g.l + i0
				scaledRows(qs, a.Q, b, h, i0, rows, g.d, C(a.Scale))
				dO := headMat[C](do, b, h, i0)
				om := headMat[C](out, b, h, i0)
				for r := range rows {
					s := 0.0
					for c := range g.dv {
						s += float64(om.data[om.off+r*om.rs+c*om.cs]) * float64(dO.data[dO.off+r*dO.rs+c*dO.cs])
					}
					delta[r] = C(s)
					lr[r] = ls[lse.Offset+b*lse.Strides[0]+h*lse.Strides[1]+(i0+r)*lse.Strides[2]]
				}
				clear(dqAcc[:rows*g.d])
				keys := attnKeys(a, g, i0+rows)
				for j0 := 0; j0 < keys; j0 += bc {
					w := min(bc, keys-j0)
					pb, db := p[:rows*w], ds[:rows*w]
					kj, vj := headMat[C](a.K, b, hk, j0), headMat[C](a.V, b, hk, j0)
					gemm(rows, w, g.d, mat[C]{data: qs, rs: g.d, cs: 1}, kj.transposed(), pb, w, par)
					attnMask(a, g, pb, rows, w, b, h, i0, j0)
					for r := range rows {
						row := pb[r*w : (r+1)*w]
						ops.expScale(row, row, lr[r], 1)
					}
					// dV += Pᵀ·dO
					t := tk[:w*g.dv]
					gemm(w, g.dv, rows, mat[C]{data: pb, rs: 1, cs: w}, dO, t, g.dv, par)
					ops.add(dvh[j0*g.dv:(j0+w)*g.dv], dvh[j0*g.dv:(j0+w)*g.dv], t)
					// dS = P∘(dO·Vᵀ - delta)
					gemm(rows, w, g.dv, dO, vj.transposed(), db, w, par)
					for r := range rows {
						dr := db[r*w : (r+1)*w]
						ops.affine(dr, dr, delta[r], 1, 0)
						ops.mul(dr, dr, pb[r*w:(r+1)*w])
					}
					// dQ += dS·K (scaled at the end), dK += dSᵀ·(scale·Q)
					gemm(rows, g.d, w, mat[C]{data: db, rs: w, cs: 1}, kj, tq[:rows*g.d], g.d, par)
					ops.add(dqAcc[:rows*g.d], dqAcc[:rows*g.d], tq[:rows*g.d])
					t = tk[:w*g.d]
					gemm(w, g.d, rows, mat[C]{data: db, rs: 1, cs: w}, mat[C]{data: qs, rs: g.d, cs: 1}, t, g.d, par)
					ops.add(dkh[j0*g.d:(j0+w)*g.d], dkh[j0*g.d:(j0+w)*g.d], t)
				}
				ops.affine(dQ[base*g.d:(base+rows)*g.d], dqAcc[:rows*g.d], 0, C(a.Scale), 0)
			}
		}
	})
}
