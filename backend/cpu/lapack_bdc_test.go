package cpu

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas"
	blasgonum "gonum.org/v1/gonum/blas/gonum"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"

	"github.com/fathom-go/fathom/array"
)

func bdcCases() []dcCase {
	r := rand.New(rand.NewPCG(11, 12))
	var cs []dcCase
	for _, n := range []int{1, 2, 33, 34, 65, 100, 257} {
		d, e := dcFill(n, func(int) float64 { return r.NormFloat64() }, func(int) float64 { return r.NormFloat64() })
		cs = append(cs, dcCase{"random", d, e})
	}
	// graded: entries from 1 down to 1e-12 along the diagonal
	d, e := dcFill(150, func(i int) float64 { return math.Pow(10, -12*float64(i)/149) * (1 + r.Float64()) },
		func(i int) float64 { return math.Pow(10, -12*float64(i)/149) * r.Float64() })
	cs = append(cs, dcCase{"graded", d, e})
	// clustered: singular values within 1e-10 of 1 and of 2
	d, e = dcFill(120, func(i int) float64 { return float64(1+i%2) + 1e-10*r.Float64() }, func(int) float64 { return 1e-11 * r.NormFloat64() })
	cs = append(cs, dcCase{"clustered", d, e})
	// repeated: the identity, and ones broken into blocks by zero and
	// tiny couplings (glued)
	d, e = dcFill(100, func(int) float64 { return 1 }, func(int) float64 { return 0 })
	cs = append(cs, dcCase{"identity", d, e})
	d, e = dcFill(130, func(int) float64 { return 1 }, func(i int) float64 {
		switch i % 40 {
		case 39:
			return 0
		case 19:
			return 1e-15
		}
		return 1
	})
	cs = append(cs, dcCase{"glued", d, e})
	// zero singular values, many of them: zeros on the diagonal, and
	// all of B zero
	d, e = dcFill(90, func(i int) float64 {
		if i%3 == 0 {
			return 0
		}
		return r.NormFloat64()
	}, func(i int) float64 {
		if i%5 == 0 {
			return 0
		}
		return r.NormFloat64()
	})
	cs = append(cs, dcCase{"zero diagonal", d, e})
	d, e = dcFill(80, func(i int) float64 {
		if i < 40 {
			return 0
		}
		return 1
	}, func(int) float64 { return 0 })
	cs = append(cs, dcCase{"repeated zeros", d, e})
	d, e = dcFill(70, func(int) float64 { return 0 }, func(int) float64 { return 0 })
	cs = append(cs, dcCase{"zero", d, e})
	// tiny: entries near the underflow threshold beside ones, and a
	// matrix whose every entry is tiny
	d, e = dcFill(96, func(i int) float64 {
		if i%2 == 0 {
			return 1e-300 * (1 + r.Float64())
		}
		return 1 + r.Float64()
	}, func(int) float64 { return 1e-290 * r.Float64() })
	cs = append(cs, dcCase{"tiny entries", d, e})
	d, e = dcFill(75, func(int) float64 { return 1e-300 * r.NormFloat64() }, func(int) float64 { return 1e-300 * r.NormFloat64() })
	cs = append(cs, dcCase{"tiny", d, e})
	d, e = dcFill(75, func(int) float64 { return 1e300 * r.NormFloat64() }, func(int) float64 { return 1e300 * r.NormFloat64() })
	cs = append(cs, dcCase{"huge", d, e})
	return cs
}

// TestBidiagDC checks divide and conquer against Dbdsqr on the same
// bidiagonal matrices: the same singular values, in descending order,
// orthonormal U and V, and B·V = U·diag(d) to a few ulps of ‖B‖.
func TestBidiagDC(t *testing.T) {
	for _, c := range bdcCases() {
		n := len(c.d)
		sc := decScratch{op: "test"}
		d, e := slices.Clone(c.d), append(slices.Clone(c.e), 0)
		u, v := make([]float64, n*n), make([]float64, n*n)
		if !bidiagDC(d, e, u, v, n, &sc) {
			t.Fatalf("%s %d: no convergence", c.name, n)
		}
		sc.release()
		if !slices.Equal(e[:n-1], c.e) {
			t.Fatalf("%s %d: e was changed", c.name, n)
		}
		want, we := slices.Clone(c.d), append(slices.Clone(c.e), 0)
		if !(lapackgonum.Implementation{}).Dbdsqr(blas.Upper, n, 0, 0, 0, want, we, nil, 1, nil, 1, nil, 1, make([]float64, 4*n)) {
			t.Fatalf("%s %d: Dbdsqr did not converge", c.name, n)
		}
		norm := 0.0
		for i := range n {
			norm = max(norm, math.Abs(c.d[i]))
			if i < n-1 {
				norm = max(norm, math.Abs(c.e[i]))
			}
		}
		tol := 64 * 0x1p-52 * norm * math.Sqrt(float64(n))
		for i := range n {
			if math.Abs(d[i]-want[i]) > tol {
				t.Fatalf("%s %d: singular value %d is %v, Dbdsqr gives %v", c.name, n, i, d[i], want[i])
			}
			if i > 0 && d[i] > d[i-1] {
				t.Fatalf("%s %d: singular values %d, %d out of order", c.name, n, i-1, i)
			}
		}
		bdcCheckVectors(t, fmt.Sprintf("%s %d", c.name, n), c.d, c.e, d, u, v, tol)
	}
}

// bdcCheckVectors checks that u and v (n×n) are orthonormal and that
// B·v = u·diag(s) for the bidiagonal (bd, be), to tol.
func bdcCheckVectors(t *testing.T, name string, bd, be, s, u, v []float64, tol float64) {
	t.Helper()
	n := len(bd)
	ortho := 64 * 0x1p-52 * math.Sqrt(float64(n))
	for i := range n {
		for j := range n {
			uu, vv := 0.0, 0.0
			for k := range n {
				uu += u[k*n+i] * u[k*n+j]
				vv += v[k*n+i] * v[k*n+j]
			}
			if i == j {
				uu--
				vv--
			}
			if math.Abs(uu) > ortho || math.Abs(vv) > ortho {
				t.Fatalf("%s: (UᵀU - I)[%d %d] = %v, (VᵀV - I)[%d %d] = %v", name, i, j, uu, i, j, vv)
			}
			bv := bd[i] * v[i*n+j]
			if i < n-1 {
				bv += be[i] * v[(i+1)*n+j]
			}
			if r := bv - u[i*n+j]*s[j]; math.Abs(r) > tol {
				t.Fatalf("%s: (B·V - U·S)[%d %d] = %v", name, i, j, r)
			}
		}
	}
}

// BenchmarkBidiagSVD times the bidiagonal SVD with vectors on the
// bidiagonal of a random matrix (Dgebrd's, little deflation): Dbdsqr's
// rotations of Vᵀ and of Uᵀ (shared over the cores, as svdWork runs it
// below bdcMin) against divide and conquer, per solve; the orders
// either side of bdcMin set it:
//
//	go test ./backend/cpu -run '^$' -bench BidiagSVD -benchtime 5x
func BenchmarkBidiagSVD(b *testing.B) {
	EnsureBLAS()
	for _, n := range []int{32, 48, 64, 96, 128, 512} {
		r := rand.New(rand.NewPCG(9, 10))
		a := make([]float64, n*n)
		for i := range a {
			a[i] = 2*r.Float64() - 1
		}
		d0, e0, tq, tp := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		work := make([]float64, 64*n)
		lapackgonum.Implementation{}.Dgebrd(n, n, a, n, d0, e0, tq, tp, work, len(work))
		d, e, u, v := make([]float64, n), make([]float64, n), make([]float64, n*n), make([]float64, n*n)
		for _, s := range []struct {
			name  string
			solve func(sc *decScratch) bool
		}{
			{"QR", func(sc *decScratch) bool {
				decEye(u, n, n, n)
				decEye(v, n, n, n)
				return bdsqrSplit(n, n, d, e, v, u, work)
			}},
			{"DC", func(sc *decScratch) bool { return bidiagDC(d, e, u, v, n, sc) }},
		} {
			b.Run(fmt.Sprintf("%s/%d", s.name, n), func(b *testing.B) {
				for b.Loop() {
					copy(d, d0)
					copy(e, e0)
					sc := decScratch{op: "bench"}
					ok := s.solve(&sc)
					sc.release()
					if !ok {
						b.Fatal("no convergence")
					}
				}
			})
		}
	}
}

// svdRefMatrix builds the m×n matrix of testdata/gen_svd_dc.py's kind.
func svdRefMatrix(kind string, m, n int) []float64 {
	a := make([]float64, m*n)
	wave := func(i, j int) float64 { return math.Sin(0.37*float64(i+1)*float64(j+2) + float64(i)) }
	k := min(m, n)
	switch kind {
	case "wave", "tiny", "rowgraded":
		for i := range m {
			for j := range n {
				v := wave(i, j)
				switch kind {
				case "tiny":
					v *= 1e-300
				case "rowgraded":
					v *= math.Pow(10, -10*float64(i)/float64(m-1))
				}
				a[i*n+j] = v
			}
		}
		return a
	case "glued":
		for i := range k {
			a[i*n+i] = 1
		}
		for r := range min(m, n-1) {
			v := 1.0
			switch r % 40 {
			case 39:
				v = 0
			case 19:
				v = 1e-15
			}
			a[r*n+r+1] = v
		}
		return a
	}
	for i := range k {
		x := float64(i)
		switch kind {
		case "graded":
			a[i*n+i] = math.Pow(10, -12*x/float64(k-1))
		case "clustered":
			a[i*n+i] = 1 + float64(i%2) + 1e-12*x
		case "repeated":
			a[i*n+i] = []float64{3, 2, 1}[i*3/k]
		case "rankdef":
			if i < k/2 {
				a[i*n+i] = 1 + x/float64(k)
			}
		}
	}
	// three Householder reflectors on each side, as the script applies them
	v, w := make([]float64, max(m, n)), make([]float64, max(m, n))
	for p := range 3 {
		reflect := func(len int, f func(float64) float64, left bool) {
			vv := 0.0
			for i := range len {
				v[i] = f(float64(i))
				vv += v[i] * v[i]
			}
			s := 2 / vv
			if left { // a -= s·v·(vᵀa)
				for j := range n {
					w[j] = 0
					for i := range m {
						w[j] += v[i] * a[i*n+j]
					}
				}
				for i := range m {
					for j := range n {
						a[i*n+j] -= s * v[i] * w[j]
					}
				}
				return
			}
			for i := range m { // a -= s·(a·v)·vᵀ
				w[i] = 0
				for j := range n {
					w[i] += a[i*n+j] * v[j]
				}
			}
			for i := range m {
				for j := range n {
					a[i*n+j] -= s * w[i] * v[j]
				}
			}
		}
		q := float64(p)
		reflect(m, func(i float64) float64 { return math.Sin(i*(q+1) + 1) }, true)
		reflect(n, func(i float64) float64 { return math.Cos(i*(q+2) + 0.5) }, false)
	}
	return a
}

// TestSVDNumpy checks SVD with vectors, through divide and conquer,
// against numpy's singular values (testdata/svd_dc.json) on random,
// graded, clustered, repeated, rank-deficient (half the values zero),
// glued and tiny matrices, square, tall and wide, full and thin, in
// float64 and float32 (rounded from float64, to float32's precision),
// and its vectors by u·diag(s)·vt = a and orthonormal u and vt.
func TestSVDNumpy(t *testing.T) {
	raw, err := os.ReadFile("testdata/svd_dc.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases []struct {
			Name, Kind string
			M, N       int
			S          []float64
		}
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Cases) == 0 {
		t.Fatal("no cases")
	}
	for _, c := range file.Cases {
		m, n, k := c.M, c.N, min(c.M, c.N)
		if k < bdcMin {
			t.Fatalf("%s: order %d does not reach divide and conquer (%d)", c.Name, k, bdcMin)
		}
		a := svdRefMatrix(c.Kind, m, n)
		for _, dt := range []array.DType{array.Float64, array.Float32} {
			if dt == array.Float32 && c.Kind == "tiny" {
				continue // below float32's range
			}
			for _, full := range []bool{true, false} {
				name := fmt.Sprintf("%s %v full=%v", c.Name, dt, full)
				uc, vr := k, k
				if full {
					uc, vr = m, n
				}
				s, u, vt := svdThroughKernel(t, name, dt, a, m, n, uc, vr)
				eps := 0x1p-52
				if dt == array.Float32 {
					eps = 0x1p-23
				}
				tol := 16 * eps * c.S[0] * math.Sqrt(float64(k))
				for i := range k {
					if math.Abs(s[i]-c.S[i]) > tol {
						t.Fatalf("%s: s[%d] = %v, numpy %v", name, i, s[i], c.S[i])
					}
				}
				svdCheckVectors(t, name, a, s, u, vt, m, n, uc, vr, tol, 16*eps*math.Sqrt(float64(max(m, n))))
			}
		}
	}
}

// svdThroughKernel runs SVD on a (m×n, rounded to dt) and returns s, u
// (m×uc) and vt (vr×n) as float64.
func svdThroughKernel(t *testing.T, name string, dt array.DType, a []float64, m, n, uc, vr int) (s, u, vt []float64) {
	t.Helper()
	k := min(m, n)
	if dt == array.Float64 {
		ab, av := decBuf[float64](dt, m, n)
		copy(av, a)
		sb, sv := decBuf[float64](dt, k)
		ub, uv := decBuf[float64](dt, m, uc)
		vb, vv := decBuf[float64](dt, vr, n)
		if err := SVD(ub, sb, vb, ab); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return sv, uv, vv
	}
	widen := func(x []float32) []float64 {
		y := make([]float64, len(x))
		for i, v := range x {
			y[i] = float64(v)
		}
		return y
	}
	ab, av := decBuf[float32](dt, m, n)
	for i, v := range a {
		av[i] = float32(v)
	}
	sb, sv := decBuf[float32](dt, k)
	ub, uv := decBuf[float32](dt, m, uc)
	vb, vv := decBuf[float32](dt, vr, n)
	if err := SVD(ub, sb, vb, ab); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return widen(sv), widen(uv), widen(vv)
}

// svdCheckVectors checks u·diag(s)·vt = a to tol and that u's columns
// and vt's rows are orthonormal to otol.
func svdCheckVectors(t *testing.T, name string, a, s, u, vt []float64, m, n, uc, vr int, tol, otol float64) {
	t.Helper()
	impl := blasgonum.Implementation{}
	k := min(m, n)
	us := make([]float64, m*k)
	for i := range m {
		for j := range k {
			us[i*k+j] = u[i*uc+j] * s[j]
		}
	}
	r := slices.Clone(a)
	impl.Dgemm(blas.NoTrans, blas.NoTrans, m, n, k, 1, us, k, vt, n, -1, r, n)
	for i, x := range r {
		if math.Abs(x) > tol {
			t.Fatalf("%s: (u·diag(s)·vt - a)[%d %d] = %v", name, i/n, i%n, x)
		}
	}
	uu, vv := make([]float64, uc*uc), make([]float64, vr*vr)
	impl.Dgemm(blas.Trans, blas.NoTrans, uc, uc, m, 1, u, uc, u, uc, 0, uu, uc)
	impl.Dgemm(blas.NoTrans, blas.Trans, vr, vr, n, 1, vt, n, vt, n, 0, vv, vr)
	for _, g := range []struct {
		name string
		x    []float64
		d    int
	}{{"uᵀu", uu, uc}, {"vt·vtᵀ", vv, vr}} {
		for i := range g.d {
			for j := range g.d {
				x := g.x[i*g.d+j]
				if i == j {
					x--
				}
				if math.Abs(x) > otol {
					t.Fatalf("%s: (%s - I)[%d %d] = %v", name, g.name, i, j, x)
				}
			}
		}
	}
}

// BenchmarkSVDRandom times SVD with full vectors of one random n×n
// float64 matrix (entries uniform in [-1, 1], bench/compare's input),
// the slow case for the bidiagonal's QR iteration, in GFLOP/s of
// BenchmarkLapackDecomp's 22n³:
//
//	go test ./backend/cpu -run '^$' -bench SVDRandom -benchtime 3x
func BenchmarkSVDRandom(b *testing.B) {
	for _, n := range []int{128, 512} {
		r := rand.New(rand.NewPCG(13, 14))
		a, av := decBuf[float64](array.Float64, n, n)
		for i := range av {
			av[i] = 2*r.Float64() - 1
		}
		u, _ := decBuf[float64](array.Float64, n, n)
		s, _ := decBuf[float64](array.Float64, n)
		vt, _ := decBuf[float64](array.Float64, n, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if err := SVD(u, s, vt, a); err != nil {
					b.Fatal(err)
				}
			}
			nf := float64(n)
			b.ReportMetric(22*nf*nf*nf*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
