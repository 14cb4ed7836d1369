package cpu

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	lapackgonum "gonum.org/v1/gonum/lapack/gonum"

	"github.com/fathom-go/fathom/array"
)

// dcCase is a symmetric tridiagonal matrix (diagonal d, off-diagonal
// e) or, for lapack_bdc_test.go, an upper bidiagonal one (diagonal d,
// superdiagonal e).
type dcCase struct {
	name string
	d, e []float64
}

// dcFill returns the diagonal d (n entries, fd(i)) and the off-diagonal
// e (n-1 entries, fe(i)) of a dcCase, d drawn first.
func dcFill(n int, fd, fe func(i int) float64) ([]float64, []float64) {
	d, e := make([]float64, n), make([]float64, max(n-1, 0))
	for i := range d {
		d[i] = fd(i)
	}
	for i := range e {
		e[i] = fe(i)
	}
	return d, e
}

func dcCases() []dcCase {
	r := rand.New(rand.NewPCG(3, 4))
	normal := func(int) float64 { return r.NormFloat64() }
	constant := func(v float64) func(int) float64 { return func(int) float64 { return v } }
	var cs []dcCase
	for _, n := range []int{33, 100, 257} {
		d, e := dcFill(n, normal, normal)
		cs = append(cs, dcCase{"random", d, e})
	}
	n := 200
	// clustered: eigenvalues in tight groups, and Wilkinson's W⁺ matrix,
	// whose top eigenvalues come in pairs agreeing to many digits
	d, e := dcFill(n, func(i int) float64 { return float64(i%4) + 1e-10*r.Float64() }, func(int) float64 { return 1e-9 * r.NormFloat64() })
	cs = append(cs, dcCase{"clustered", d, e})
	d, e = dcFill(2*60+1, func(i int) float64 { return math.Abs(float64(i - 60)) }, constant(1))
	cs = append(cs, dcCase{"wilkinson", d, e})
	// repeated: the identity glued with zero and tiny couplings, and the
	// 1-2-1 matrix whose blocks repeat
	d, e = dcFill(n, constant(2), func(i int) float64 {
		if i%40 == 39 {
			return 1e-14
		}
		return 0
	})
	cs = append(cs, dcCase{"repeated", d, e})
	d, e = dcFill(n, constant(2), func(i int) float64 {
		if i%50 == 49 {
			return 0
		}
		return 1
	})
	cs = append(cs, dcCase{"glued", d, e})
	// graded: entries spanning many orders of magnitude
	d, e = dcFill(150, func(i int) float64 { return math.Pow(10, float64(i%30)-15) }, func(i int) float64 { return math.Pow(10, float64(i%30)-16) })
	cs = append(cs, dcCase{"graded", d, e})
	// no coupling at all: every merge deflates everything (rho = 0)
	d, e = dcFill(70, func(i int) float64 { return float64((i * 37) % 11) }, constant(0))
	cs = append(cs, dcCase{"diagonal", d, e})
	d, e = dcFill(70, constant(0), constant(0))
	cs = append(cs, dcCase{"zero", d, e})
	return cs
}

// TestTridiagDC checks divide and conquer against the QL iteration and
// gonum's Dsterf on the same matrices: the same eigenvalues,
// orthonormal vectors, and
// T·Z = Z·diag(d) to a few ulps of ‖T‖.
func TestTridiagDC(t *testing.T) {
	for _, c := range dcCases() {
		n := len(c.d)
		sc := decScratch{op: "test"}
		d, e, z := slices.Clone(c.d), append(slices.Clone(c.e), 0), make([]float64, n*n)
		if !tridiagDC(d, e, z, n, &sc) {
			t.Fatalf("%s %d: no convergence", c.name, n)
		}
		qd, qe, qz := slices.Clone(c.d), append(slices.Clone(c.e), 0), make([]float64, n*n)
		decEye(qz, n, n, n)
		if !tridiagQL(qd, qe, qz, n, &sc) {
			t.Fatalf("%s %d: QL did not converge", c.name, n)
		}
		sc.release()
		gd, ge := slices.Clone(c.d), slices.Clone(c.e)
		if !(lapackgonum.Implementation{}).Dsterf(n, gd, ge) {
			t.Fatalf("%s %d: gonum's Dsterf did not converge", c.name, n)
		}
		norm := 0.0
		for i := range n {
			s := math.Abs(c.d[i])
			if i > 0 {
				s += math.Abs(c.e[i-1])
			}
			if i < n-1 {
				s += math.Abs(c.e[i])
			}
			norm = max(norm, s)
		}
		tol := 64 * 0x1p-52 * norm
		for i := range n {
			if math.Abs(d[i]-qd[i]) > tol || math.Abs(d[i]-gd[i]) > tol {
				t.Fatalf("%s %d: eigenvalue %d is %v, QL gives %v, gonum's Dsterf %v", c.name, n, i, d[i], qd[i], gd[i])
			}
			if i > 0 && d[i] < d[i-1] {
				t.Fatalf("%s %d: eigenvalues %d, %d out of order", c.name, n, i-1, i)
			}
		}
		for i := range n {
			for j := range n {
				dot, tz := 0.0, c.d[i]*z[i*n+j]
				for k := range n {
					dot += z[k*n+i] * z[k*n+j]
				}
				if i > 0 {
					tz += c.e[i-1] * z[(i-1)*n+j]
				}
				if i < n-1 {
					tz += c.e[i] * z[(i+1)*n+j]
				}
				if i == j {
					dot--
				}
				if math.Abs(dot) > 64*0x1p-52*math.Sqrt(float64(n)) {
					t.Fatalf("%s %d: (ZᵀZ - I)[%d %d] = %v", c.name, n, i, j, dot)
				}
				if r := tz - z[i*n+j]*d[j]; math.Abs(r) > tol {
					t.Fatalf("%s %d: (T·Z - Z·Λ)[%d %d] = %v", c.name, n, i, j, r)
				}
			}
		}
	}
}

// TestDCRoot checks the secular equation's roots on a small problem
// with a known answer: for d = (0, 1), z = (1, 1)/√2 and rho = 1 the
// matrix is [[1/2 1/2] [1/2 3/2]], with eigenvalues 1 ∓ √2/2.
func TestDCRoot(t *testing.T) {
	d, z := []float64{0, 1}, []float64{math.Sqrt2 / 2, math.Sqrt2 / 2}
	want := []float64{1 - math.Sqrt2/2, 1 + math.Sqrt2/2}
	delta := make([]float64, 2)
	for j := range 2 {
		o, tau, ok := dcRoot(d, z, 1, j, delta, false)
		if !ok {
			t.Fatalf("root %d: no convergence", j)
		}
		if got := d[o] + tau; math.Abs(got-want[j]) > 4e-16 {
			t.Errorf("root %d: %v, want %v", j, got, want[j])
		}
		for i := range 2 {
			if math.Abs(delta[i]-(d[i]-want[j])) > 4e-16 {
				t.Errorf("root %d: delta[%d] = %v, want %v", j, i, delta[i], d[i]-want[j])
			}
		}
	}
}

// TestDecompEighRepeated checks Eigh through divide and conquer on a
// matrix with eigenvalues repeated many times (Q·diag(w)·Qᵀ for a random
// orthogonal Q): the values w, A·V = V·diag(w) and Vᵀ·V = I, from either
// triangle.
func TestDecompEighRepeated(t *testing.T) {
	const n = dcMin + 31
	r := rand.New(rand.NewPCG(5, 6))
	g, q, rr := make([]float64, n*n), make([]float64, n*n), make([]float64, n*n)
	for i := range g {
		g[i] = r.NormFloat64()
	}
	gb := Buf{Data: decBytes(g), DType: array.Float64, Shape: []int{n, n}, Strides: []int{n, 1}}
	if err := QR(Buf{Data: decBytes(q), DType: array.Float64, Shape: []int{n, n}, Strides: []int{n, 1}},
		Buf{Data: decBytes(rr), DType: array.Float64, Shape: []int{n, n}, Strides: []int{n, 1}}, gb); err != nil {
		t.Fatal(err)
	}
	want := make([]float64, n)
	for i := range want {
		want[i] = []float64{-1, 0.5, 0.5, 3}[min(3, i*4/n)]
	}
	a, av := decBuf[float64](array.Float64, n, n)
	for i := range n {
		for j := range n {
			s := 0.0
			for k := range n {
				s += q[i*n+k] * want[k] * q[j*n+k]
			}
			av[i*n+j] = s
		}
	}
	for i := range n {
		for j := range i {
			av[i*n+j] = av[j*n+i]
		}
	}
	var first []float64
	for _, upper := range []bool{false, true} {
		w, wv := decBuf[float64](array.Float64, n)
		v, vv := decBuf[float64](array.Float64, n, n)
		if err := Eigh(w, v, a, upper); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if math.Abs(wv[i]-want[i]) > 1e-13 {
				t.Fatalf("upper=%v: eigenvalue %d is %v, want %v", upper, i, wv[i], want[i])
			}
		}
		eighCheckVectors(t, fmt.Sprintf("upper=%v: ", upper), av, vv, wv, n, 1e-13, 1e-13)
		// the upper triangle is mirrored into the lower one, so a
		// symmetric matrix gives the same bits from either
		if first == nil {
			first = slices.Clone(vv)
		} else if !slices.Equal(first, vv) {
			t.Errorf("the vectors from the upper triangle differ from those from the lower")
		}
	}
}

// BenchmarkTridiagEigen times the tridiagonal eigensolvers with vectors
// on random tridiagonal matrices (little deflation, the slow case for
// divide and conquer), per solve; the orders either side of dcMin set
// it:
//
//	go test ./backend/cpu -run '^$' -bench TridiagEigen -benchtime 5x
func BenchmarkTridiagEigen(b *testing.B) {
	for _, n := range []int{64, 128, 512} {
		r := rand.New(rand.NewPCG(7, 8))
		d0, e0 := make([]float64, n), make([]float64, n)
		for i := range n {
			d0[i], e0[i] = r.NormFloat64(), r.NormFloat64()
		}
		e0[n-1] = 0
		d, e, z := make([]float64, n), make([]float64, n), make([]float64, n*n)
		for _, s := range []struct {
			name  string
			solve func(sc *decScratch) bool
		}{
			{"QL", func(sc *decScratch) bool { decEye(z, n, n, n); return tridiagQL(d, e, z, n, sc) }},
			{"DC", func(sc *decScratch) bool { return tridiagDC(d, e, z, n, sc) }},
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

// dcRefMatrix builds the matrix of testdata/gen_eigh_dc.py's kind.
func dcRefMatrix(kind string, n int) []float64 {
	a := make([]float64, n*n)
	for i := range n {
		for j := range n {
			hi, lo := max(i, j), min(i, j)
			wave := math.Sin(3*float64(hi)+7*float64(lo)) / float64(1+hi-lo)
			var v float64
			switch kind {
			case "wave":
				v = wave
			case "clustered":
				v = 1e-8 * wave
				if i == j {
					v += 2
				}
			case "toeplitz":
				switch hi - lo {
				case 0:
					v = 2
				case 1:
					v = -1
				}
			case "repeated":
				if i/8 == j/8 {
					v = 1 / float64(1+i%8+j%8)
				}
			}
			a[i*n+j] = v
		}
	}
	return a
}

// TestDecompEighNumpy checks Eigh through divide and conquer against
// numpy's eigenvalues (testdata/eigh_dc.json) on matrices with spread,
// clustered and repeated eigenvalues, and its vectors by A·V = V·diag(w)
// and Vᵀ·V = I.
func TestDecompEighNumpy(t *testing.T) {
	raw, err := os.ReadFile("testdata/eigh_dc.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name, Kind string
		N          int
		W          []float64
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		n := c.N
		if n < dcMin {
			t.Fatalf("%s: order %d does not reach divide and conquer (%d)", c.Name, n, dcMin)
		}
		a, av := decBuf[float64](array.Float64, n, n)
		copy(av, dcRefMatrix(c.Kind, n))
		w, wv := decBuf[float64](array.Float64, n)
		v, vv := decBuf[float64](array.Float64, n, n)
		if err := Eigh(w, v, a, false); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if math.Abs(wv[i]-c.W[i]) > 1e-13*(1+math.Abs(c.W[i])) {
				t.Fatalf("%s: eigenvalue %d is %v, numpy %v", c.Name, i, wv[i], c.W[i])
			}
		}
		eighCheckVectors(t, c.Name+": ", av, vv, wv, n, 1e-13, 1e-13)
	}
}
