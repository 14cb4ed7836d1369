package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/blas/testblas"
)

// withAllProducts runs f with every product, however small, sent to
// fathom's GEMM, so gonum's suites (small cases) test that path.
func withAllProducts(t *testing.T, f func()) {
	oldWork, oldBlock := blasMinWork, triBlock
	blasMinWork, triBlock = 0, 2
	t.Cleanup(func() { blasMinWork, triBlock = oldWork, oldBlock })
	f()
}

// TestBLASGonumSuites runs gonum's own conformance suites for the
// routines BLAS overrides.
func TestBLASGonumSuites(t *testing.T) {
	withAllProducts(t, func() {
		testblas.TestDgemm(t, BLAS{})
		testblas.DtrsmTest(t, BLAS{})
		testblas.DtrmmTest(t, BLAS{})
		testblas.DsyrkTest(t, BLAS{})
		testblas.Dsyr2kTest(t, BLAS{})
	})
	old := symvMin
	symvMin = 1
	defer func() { symvMin = old }()
	testblas.DsymvTest(t, BLAS{})
	testblas.DgemvTest(t, BLAS{})
}

// TestBLASGemvMatchesGonum compares Dgemv with gonum's at sizes split
// over cores, with strided vectors and leading dimensions wider than
// the matrix.
func TestBLASGemvMatchesGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
		for _, c := range []struct {
			m, n, incX, incY int
			alpha, beta      float64
		}{{300, 257, 1, 1, 1, 0}, {129, 700, 3, 2, -0.5, 2}} {
			lda := c.n + 5
			lx, ly := c.n, c.m
			if tA != blas.NoTrans {
				lx, ly = c.m, c.n
			}
			a := randSlice[float64](r, c.m*lda)
			x, y := randSlice[float64](r, 1+(lx-1)*c.incX), randSlice[float64](r, 1+(ly-1)*c.incY)
			want := append([]float64(nil), y...)
			BLAS{}.Dgemv(tA, c.m, c.n, c.alpha, a, lda, x, c.incX, c.beta, y, c.incY)
			gonum.Implementation{}.Dgemv(tA, c.m, c.n, c.alpha, a, lda, x, c.incX, c.beta, want, c.incY)
			for i := range y {
				if math.Abs(y[i]-want[i]) > 1e-13*float64(lx)*(1+math.Abs(want[i])) {
					t.Fatalf("%c %+v: y[%d] = %v, gonum %v", tA, c, i, y[i], want[i])
				}
			}
		}
	}
}

// TestBLASSymvMatchesGonum compares Dsymv with gonum's at sizes split
// over cores, with strided, backward and NaN-filled (beta 0) vectors.
func TestBLASSymvMatchesGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, ul := range []blas.Uplo{blas.Upper, blas.Lower} {
		for _, c := range []struct {
			n, incX, incY int
			alpha, beta   float64
		}{{300, 1, 1, 1, 0}, {257, 3, -2, -0.5, 2}, {70, -1, 1, 2, 1}} {
			lda := c.n + 3
			a := randSlice[float64](r, c.n*lda)
			x := randSlice[float64](r, 1+(c.n-1)*absInt(c.incX))
			y := randSlice[float64](r, 1+(c.n-1)*absInt(c.incY))
			if c.beta == 0 {
				for i := range y {
					y[i] = math.NaN()
				}
			}
			want := append([]float64(nil), y...)
			BLAS{}.Dsymv(ul, c.n, c.alpha, a, lda, x, c.incX, c.beta, y, c.incY)
			gonum.Implementation{}.Dsymv(ul, c.n, c.alpha, a, lda, x, c.incX, c.beta, want, c.incY)
			for i := range y {
				if math.IsNaN(y[i]) || math.Abs(y[i]-want[i]) > 1e-13*float64(c.n)*(1+math.Abs(want[i])) {
					t.Fatalf("%c %+v: y[%d] = %v, gonum %v", ul, c, i, y[i], want[i])
				}
			}
		}
	}
}

// TestBLASSyr2kMatchesGonum compares Dsyr2k with gonum's on a product
// of more than one strip, with leading dimensions wider than the
// matrices and a C of NaNs where beta is 0.
func TestBLASSyr2kMatchesGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	n, k := syrkStrip+45, 37
	for _, ul := range []blas.Uplo{blas.Upper, blas.Lower} {
		for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			for _, ab := range [][2]float64{{-1, 1}, {0.5, 0}} {
				ar, ac := n, k
				if tA != blas.NoTrans {
					ar, ac = k, n
				}
				lda, ldb, ldc := ac+1, ac+3, n+2
				a, b, c := randSlice[float64](r, ar*lda), randSlice[float64](r, ar*ldb), randSlice[float64](r, n*ldc)
				if ab[1] == 0 {
					for i := range c {
						c[i] = math.NaN()
					}
				}
				want := append([]float64(nil), c...)
				BLAS{}.Dsyr2k(ul, tA, n, k, ab[0], a, lda, b, ldb, ab[1], c, ldc)
				gonum.Implementation{}.Dsyr2k(ul, tA, n, k, ab[0], a, lda, b, ldb, ab[1], want, ldc)
				for i := range n {
					for j := range ldc {
						got, exp := c[i*ldc+j], want[i*ldc+j]
						inside := j < n && (ul == blas.Lower && j <= i || ul == blas.Upper && j >= i)
						if !inside {
							if got != exp && !(math.IsNaN(got) && math.IsNaN(exp)) {
								t.Fatalf("%c%c: C[%d,%d] outside the triangle changed", ul, tA, i, j)
							}
							continue
						}
						if math.IsNaN(got) || math.Abs(got-exp) > 1e-13*float64(k)*(1+math.Abs(exp)) {
							t.Fatalf("%c%c alpha=%v beta=%v: C[%d,%d] = %v, gonum %v", ul, tA, ab[0], ab[1], i, j, got, exp)
						}
					}
				}
			}
		}
	}
}

// TestBLASGemmMatchesGonum compares Dgemm and Sgemm with gonum's own over
// transposes, alphas and betas, odd sizes either side of the strip and
// the size threshold, and leading dimensions wider than the matrices.
func TestBLASGemmMatchesGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	// ConjTrans is Trans for real matrices: it pairs with each of the
	// others once.
	trans := [][2]blas.Transpose{
		{blas.NoTrans, blas.NoTrans}, {blas.NoTrans, blas.Trans}, {blas.Trans, blas.NoTrans},
		{blas.Trans, blas.Trans}, {blas.ConjTrans, blas.NoTrans}, {blas.NoTrans, blas.ConjTrans},
	}
	sizes := [][3]int{{1, 1, 1}, {33, 35, 37}, {70, 3, 200}, {5, 90, 81}, {129, 67, 64}}
	scalars := [][2]float64{{1, 0}, {-1, 1}, {0.5, 0}, {2, -0.75}, {0, 0.5}}
	for i, sz := range sizes {
		for _, tt := range trans {
			for _, ab := range scalars {
				pad := 3 * (i % 2)
				name := fmt.Sprintf("%v/%c%c/alpha=%v,beta=%v/pad=%d", sz, tt[0], tt[1], ab[0], ab[1], pad)
				checkGemmAgainstGonum[float64](t, r, name, tt[0], tt[1], sz, ab, pad)
				checkGemmAgainstGonum[float32](t, r, name, tt[0], tt[1], sz, ab, pad)
			}
		}
	}
}

func checkGemmAgainstGonum[T float32 | float64](t *testing.T, r *rand.Rand, name string, tA, tB blas.Transpose, sz [3]int, ab [2]float64, pad int) {
	t.Helper()
	m, n, k := sz[0], sz[1], sz[2]
	ar, ac := m, k
	if tA != blas.NoTrans {
		ar, ac = k, m
	}
	br, bc := k, n
	if tB != blas.NoTrans {
		br, bc = n, k
	}
	lda, ldb, ldc := ac+pad, bc+pad, n+pad
	a, b := randSlice[T](r, ar*lda), randSlice[T](r, br*ldb)
	c := randSlice[T](r, m*ldc)
	if ab[1] == 0 {
		// BLAS does not read C when beta is 0: NaNs there must vanish.
		for i := range c {
			c[i] = T(math.NaN())
		}
	}
	want := append([]T(nil), c...)
	var z T
	switch any(z).(type) {
	case float64:
		BLAS{}.Dgemm(tA, tB, m, n, k, ab[0], any(a).([]float64), lda, any(b).([]float64), ldb, ab[1], any(c).([]float64), ldc)
		gonum.Implementation{}.Dgemm(tA, tB, m, n, k, ab[0], any(a).([]float64), lda, any(b).([]float64), ldb, ab[1], any(want).([]float64), ldc)
	case float32:
		BLAS{}.Sgemm(tA, tB, m, n, k, float32(ab[0]), any(a).([]float32), lda, any(b).([]float32), ldb, float32(ab[1]), any(c).([]float32), ldc)
		gonum.Implementation{}.Sgemm(tA, tB, m, n, k, float32(ab[0]), any(a).([]float32), lda, any(b).([]float32), ldb, float32(ab[1]), any(want).([]float32), ldc)
	}
	tol := 8 * float64(k+2) * unitRoundoff[T]()
	for i := range m {
		for j := range ldc {
			got, exp := float64(c[i*ldc+j]), float64(want[i*ldc+j])
			if j >= n {
				// Padding between rows is not C's: it must be untouched.
				if got != exp && !(math.IsNaN(got) && math.IsNaN(exp)) {
					t.Fatalf("%T %s: padding C[%d,%d] changed: %v, was %v", z, name, i, j, got, exp)
				}
				continue
			}
			if math.IsNaN(got) || math.Abs(got-exp) > tol*(1+math.Abs(exp)) {
				t.Fatalf("%T %s: C[%d,%d] = %v, gonum %v", z, name, i, j, got, exp)
			}
		}
	}
}

// TestBLASTriangularMatchesGonum compares Dtrsm, Strsm, Dtrmm and Strmm
// with gonum's over every side, triangle, transpose and diagonal, with
// triangles that span several blocks and end in a partial one, and
// leading dimensions wider than the matrices.
func TestBLASTriangularMatchesGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	old := triBlock
	triBlock = 16
	t.Cleanup(func() { triBlock = old })
	for _, side := range []blas.Side{blas.Left, blas.Right} {
		for _, ul := range []blas.Uplo{blas.Upper, blas.Lower} {
			for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
				for _, d := range []blas.Diag{blas.NonUnit, blas.Unit} {
					for _, alpha := range []float64{1, -0.5} {
						for _, solve := range []bool{true, false} {
							name := fmt.Sprintf("solve=%v/%c%c%c%c/alpha=%v", solve, side, ul, tA, d, alpha)
							checkTriAgainstGonum[float64](t, r, name, solve, side, ul, tA, d, 53, 37, alpha)
							checkTriAgainstGonum[float32](t, r, name, solve, side, ul, tA, d, 41, 50, alpha)
						}
					}
				}
			}
		}
	}
}

func checkTriAgainstGonum[T float32 | float64](t *testing.T, r *rand.Rand, name string, solve bool, side blas.Side, ul blas.Uplo, tA blas.Transpose, d blas.Diag, m, n int, alpha float64) {
	t.Helper()
	k := n
	if side == blas.Left {
		k = m
	}
	lda, ldb := k+2, n+3
	a := randSlice[T](r, k*lda)
	// Small off-diagonal entries and a unit-sized diagonal keep the
	// solves well conditioned (with a unit diagonal too), so the two
	// implementations' rounding stays near the unit roundoff.
	for i := range a {
		a[i] /= T(k)
	}
	for i := range k {
		a[i*lda+i] += 1
	}
	b := randSlice[T](r, m*ldb)
	want := append([]T(nil), b...)
	var z T
	switch any(z).(type) {
	case float64:
		fa, fb, fw := any(a).([]float64), any(b).([]float64), any(want).([]float64)
		if solve {
			BLAS{}.Dtrsm(side, ul, tA, d, m, n, alpha, fa, lda, fb, ldb)
			gonum.Implementation{}.Dtrsm(side, ul, tA, d, m, n, alpha, fa, lda, fw, ldb)
		} else {
			BLAS{}.Dtrmm(side, ul, tA, d, m, n, alpha, fa, lda, fb, ldb)
			gonum.Implementation{}.Dtrmm(side, ul, tA, d, m, n, alpha, fa, lda, fw, ldb)
		}
	case float32:
		fa, fb, fw := any(a).([]float32), any(b).([]float32), any(want).([]float32)
		if solve {
			BLAS{}.Strsm(side, ul, tA, d, m, n, float32(alpha), fa, lda, fb, ldb)
			gonum.Implementation{}.Strsm(side, ul, tA, d, m, n, float32(alpha), fa, lda, fw, ldb)
		} else {
			BLAS{}.Strmm(side, ul, tA, d, m, n, float32(alpha), fa, lda, fb, ldb)
			gonum.Implementation{}.Strmm(side, ul, tA, d, m, n, float32(alpha), fa, lda, fw, ldb)
		}
	}
	tol := 16 * float64(k) * unitRoundoff[T]()
	for i := range m {
		for j := range ldb {
			got, exp := float64(b[i*ldb+j]), float64(want[i*ldb+j])
			if j >= n {
				if got != exp {
					t.Fatalf("%T %s: padding B[%d,%d] changed", z, name, i, j)
				}
				continue
			}
			if math.IsNaN(got) || math.Abs(got-exp) > tol*(1+math.Abs(exp)) {
				t.Fatalf("%T %s: B[%d,%d] = %v, gonum %v", z, name, i, j, got, exp)
			}
		}
	}
}

// TestBLASSyrkMatchesGonum compares Dsyrk and Ssyrk with gonum's over
// both triangles and transposes, alphas and betas, with n spanning
// several strips: the triangle must match and the other one stay as it
// was.
func TestBLASSyrkMatchesGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, ul := range []blas.Uplo{blas.Upper, blas.Lower} {
		for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			for _, ab := range [][2]float64{{-1, 1}, {0.5, 0}, {2, -0.5}} {
				name := fmt.Sprintf("%c%c/alpha=%v,beta=%v", ul, tA, ab[0], ab[1])
				checkSyrkAgainstGonum[float64](t, r, name, ul, tA, syrkStrip+45, 37, ab)
				checkSyrkAgainstGonum[float32](t, r, name, ul, tA, 70, syrkStrip+3, ab)
			}
		}
	}
}

func checkSyrkAgainstGonum[T float32 | float64](t *testing.T, r *rand.Rand, name string, ul blas.Uplo, tA blas.Transpose, n, k int, ab [2]float64) {
	t.Helper()
	ar, ac := n, k
	if tA != blas.NoTrans {
		ar, ac = k, n
	}
	lda, ldc := ac+1, n+2
	a, c := randSlice[T](r, ar*lda), randSlice[T](r, n*ldc)
	if ab[1] == 0 {
		for i := range c {
			c[i] = T(math.NaN())
		}
	}
	want := append([]T(nil), c...)
	var z T
	switch any(z).(type) {
	case float64:
		BLAS{}.Dsyrk(ul, tA, n, k, ab[0], any(a).([]float64), lda, ab[1], any(c).([]float64), ldc)
		gonum.Implementation{}.Dsyrk(ul, tA, n, k, ab[0], any(a).([]float64), lda, ab[1], any(want).([]float64), ldc)
	case float32:
		BLAS{}.Ssyrk(ul, tA, n, k, float32(ab[0]), any(a).([]float32), lda, float32(ab[1]), any(c).([]float32), ldc)
		gonum.Implementation{}.Ssyrk(ul, tA, n, k, float32(ab[0]), any(a).([]float32), lda, float32(ab[1]), any(want).([]float32), ldc)
	}
	tol := 8 * float64(k+2) * unitRoundoff[T]()
	for i := range n {
		for j := range ldc {
			got, exp := float64(c[i*ldc+j]), float64(want[i*ldc+j])
			inside := j < n && (ul == blas.Lower && j <= i || ul == blas.Upper && j >= i)
			if !inside {
				if got != exp && !(math.IsNaN(got) && math.IsNaN(exp)) {
					t.Fatalf("%T %s: C[%d,%d] outside the triangle changed: %v, was %v", z, name, i, j, got, exp)
				}
				continue
			}
			if math.IsNaN(got) || math.Abs(got-exp) > tol*(1+math.Abs(exp)) {
				t.Fatalf("%T %s: C[%d,%d] = %v, gonum %v", z, name, i, j, got, exp)
			}
		}
	}
}

// TestBLASBadArgumentsPanicAsGonum checks that invalid calls reach
// gonum's checks and panic with its messages.
func TestBLASBadArgumentsPanicAsGonum(t *testing.T) {
	a, big := make([]float64, 64*64), make([]float64, 256*256)
	cases := []struct {
		name string
		call func(impl blas.Float64)
	}{
		{"bad transpose", func(impl blas.Float64) {
			impl.Dgemm('x', blas.NoTrans, 64, 64, 64, 1, a, 64, a, 64, 0, a, 64)
		}},
		{"short lda", func(impl blas.Float64) {
			impl.Dgemm(blas.NoTrans, blas.NoTrans, 64, 64, 64, 1, a, 63, a, 64, 0, make([]float64, 64*64), 64)
		}},
		{"short C", func(impl blas.Float64) {
			impl.Dgemm(blas.NoTrans, blas.NoTrans, 64, 64, 64, 1, a, 64, a, 64, 0, make([]float64, 64*63), 64)
		}},
		{"negative m", func(impl blas.Float64) {
			impl.Dgemm(blas.NoTrans, blas.NoTrans, -1, 64, 64, 1, a, 64, a, 64, 0, a, 64)
		}},
		{"trsm bad side", func(impl blas.Float64) {
			impl.Dtrsm('x', blas.Upper, blas.NoTrans, blas.Unit, 64, 64, 1, a, 64, make([]float64, 64*64), 64)
		}},
		{"trmm short B", func(impl blas.Float64) {
			impl.Dtrmm(blas.Left, blas.Upper, blas.NoTrans, blas.Unit, 80, 64, 1, make([]float64, 80*80), 80, a, 64)
		}},
		{"symv bad uplo", func(impl blas.Float64) {
			impl.Dsymv('x', 64, 1, a, 64, a[:64], 1, 0, make([]float64, 64), 1)
		}},
		{"symv short y", func(impl blas.Float64) {
			impl.Dsymv(blas.Lower, 64, 1, a, 64, a[:64], 1, 0, make([]float64, 63), 1)
		}},
		{"symv zero incX", func(impl blas.Float64) {
			impl.Dsymv(blas.Upper, 64, 1, a, 64, a[:64], 0, 0, make([]float64, 64), 1)
		}},
		{"gemv short x", func(impl blas.Float64) {
			impl.Dgemv(blas.Trans, 256, 256, 1, big, 256, big[:255], 1, 0, make([]float64, 256), 1)
		}},
		{"gemv short A", func(impl blas.Float64) {
			impl.Dgemv(blas.NoTrans, 256, 256, 1, big[:256*255], 256, big[:256], 1, 0, make([]float64, 256), 1)
		}},
		{"syr2k short B", func(impl blas.Float64) {
			impl.Dsyr2k(blas.Lower, blas.NoTrans, 64, 64, 1, a, 64, a[:64*63], 64, 0, make([]float64, 64*64), 64)
		}},
	}
	for _, tc := range cases {
		want := panicOf(func() { tc.call(gonum.Implementation{}) })
		got := panicOf(func() { tc.call(BLAS{}) })
		if want == nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: panic %v, gonum's %v", tc.name, got, want)
		}
	}
}

func panicOf(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// TestEnsureBLASRegisters checks the registration and the way back to
// gonum's BLAS, and that EnsureBLAS respects an earlier decision.
func TestEnsureBLASRegisters(t *testing.T) {
	t.Cleanup(func() {
		register(gonum.Implementation{})
		blasChoice.mu.Lock()
		blasChoice.decided = false
		blasChoice.mu.Unlock()
	})
	is := func(want string) {
		t.Helper()
		if got := fmt.Sprintf("%T/%T", blas64.Implementation(), blas32.Implementation()); got != want {
			t.Fatalf("registered %s, want %s", got, want)
		}
	}
	reset := func() {
		blasChoice.mu.Lock()
		blasChoice.decided = false
		blasChoice.mu.Unlock()
		register(gonum.Implementation{})
	}

	reset()
	t.Setenv(EnvGonumBLAS, "")
	EnsureBLAS()
	is("cpu.BLAS/cpu.BLAS")
	UseGonumBLAS()
	is("gonum.Implementation/gonum.Implementation")
	EnsureBLAS()
	is("gonum.Implementation/gonum.Implementation")
	UseBLAS()
	is("cpu.BLAS/cpu.BLAS")

	reset()
	t.Setenv(EnvGonumBLAS, "gonum")
	EnsureBLAS()
	is("gonum.Implementation/gonum.Implementation")
}
