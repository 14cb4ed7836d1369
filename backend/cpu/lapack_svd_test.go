package cpu

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/gonum"
)

// TestSVDWorkMatchesDgesvd checks svdWork against gonum's Dgesvd on tall,
// wide and square random matrices, full and thin: the same singular
// values, u·diag(s)·vt = a, and orthonormal u and vt. Below bdcMin the
// matrices take many sweeps of the bidiagonal iteration, which rotate
// the transposed U; from it they go through divide and conquer.
func TestSVDWorkMatchesDgesvd(t *testing.T) {
	for _, c := range []struct{ m, n int }{{47, 47}, {47, 23}, {23, 47}, {2, 1}, {1, 3}, {48, 48}, {80, 80}, {97, 70}, {70, 97}, {200, 49}} {
		for _, full := range []bool{true, false} {
			m, n, k := c.m, c.n, min(c.m, c.n)
			uc, vr := k, k
			if full {
				uc, vr = m, n
			}
			a := make([]float64, m*n)
			for i := range a {
				a[i] = math.Sin(float64(3*i+1)) * math.Cos(float64(i*i%17))
			}
			sc := &decScratch{op: "test"}
			x := append([]float64(nil), a...)
			s, u, vt := make([]float64, k), make([]float64, m*uc), make([]float64, vr*n)
			if !newSVDWork(m, n, uc, vr, sc).run(x, s, u, vt) {
				t.Fatalf("%dx%d full=%v: no convergence", m, n, full)
			}
			sc.release()

			ref, want := append([]float64(nil), a...), make([]float64, k)
			work := make([]float64, 1)
			impl := gonum.Implementation{}
			impl.Dgesvd(lapack.SVDNone, lapack.SVDNone, m, n, ref, n, want, nil, 1, nil, 1, work, -1)
			work = make([]float64, int(work[0]))
			impl.Dgesvd(lapack.SVDNone, lapack.SVDNone, m, n, ref, n, want, nil, 1, nil, 1, work, len(work))
			for i := range k {
				if math.Abs(s[i]-want[i]) > 1e-12*want[0] {
					t.Errorf("%dx%d full=%v: s[%d] = %v, Dgesvd %v", m, n, full, i, s[i], want[i])
				}
			}
			for i := range m {
				for j := range n {
					var r float64
					for l := range k {
						r += u[i*uc+l] * s[l] * vt[l*n+j]
					}
					if math.Abs(r-a[i*n+j]) > 1e-12*want[0]*float64(k) {
						t.Fatalf("%dx%d full=%v: (u·s·vt)[%d,%d] = %v, a %v", m, n, full, i, j, r, a[i*n+j])
					}
				}
			}
			orthonormal := func(name string, q []float64, rows, cols int, byRows bool) {
				dim, length := cols, rows
				if byRows {
					dim, length = rows, cols
				}
				for p := range dim {
					for r := range dim {
						var d float64
						for l := range length {
							if byRows {
								d += q[p*cols+l] * q[r*cols+l]
							} else {
								d += q[l*cols+p] * q[l*cols+r]
							}
						}
						want := 0.0
						if p == r {
							want = 1
						}
						if math.Abs(d-want) > 1e-12 {
							t.Fatalf("%dx%d full=%v: %s vectors %d·%d = %v", m, n, full, name, p, r, d)
						}
					}
				}
			}
			orthonormal("u", u, m, uc, false)
			orthonormal("vt", vt, vr, n, true)
		}
	}
}
