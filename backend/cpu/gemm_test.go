package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/fathom-go/fathom/array"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
)

// layout is how a test stores a rows×cols operand.
type layout struct {
	name string
	// make returns the storage size, offset and strides.
	make func(rows, cols int) (n, off, rs, cs int)
}

var layouts = []layout{
	{"row", func(r, c int) (int, int, int, int) { return r * c, 0, c, 1 }},
	{"col", func(r, c int) (int, int, int, int) { return r * c, 0, 1, r }},
	{"padded row", func(r, c int) (int, int, int, int) { return 2 + r*(c+3), 2, c + 3, 1 }},
	{"padded col", func(r, c int) (int, int, int, int) { return 1 + c*(r+5), 1, 1, r + 5 }},
	{"strided", func(r, c int) (int, int, int, int) { return r*(2*c+1) + 1, 1, 2*c + 1, 2 }},
	{"reversed columns", func(r, c int) (int, int, int, int) { return r * c, c - 1, c, -1 }},
	{"reversed rows", func(r, c int) (int, int, int, int) { return r * c, (r - 1) * c, -c, 1 }},
	{"broadcast rows", func(r, c int) (int, int, int, int) { return c, 0, 0, 1 }},
	{"broadcast columns", func(r, c int) (int, int, int, int) { return r, 0, 1, 0 }},
}

func layoutByName(name string) layout {
	for _, l := range layouts {
		if l.name == name {
			return l
		}
	}
	panic(name)
}

func newMat[T float32 | float64](r *rand.Rand, rows, cols int, l layout) mat[T] {
	n, off, rs, cs := l.make(rows, cols)
	return mat[T]{data: randSlice[T](r, n), off: off, rs: rs, cs: cs}
}

func (m mat[S]) at(i, j int) S { return m.data[m.off+i*m.rs+j*m.cs] }

// naiveGemm returns a·b in float64 and, per element, Σ|a||b|, which
// bounds the rounding error of any summation order.
func naiveGemm[S any](m, n, k int, a, b mat[S], f func(S) float64) (want, bound []float64) {
	want, bound = make([]float64, m*n), make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s, t := 0.0, 0.0
			for p := 0; p < k; p++ {
				x, y := f(a.at(i, p)), f(b.at(p, j))
				s += x * y
				t += math.Abs(x * y)
			}
			want[i*n+j], bound[i*n+j] = s, t
		}
	}
	return want, bound
}

func f64[T float32 | float64](v T) float64 { return float64(v) }

func unitRoundoff[T float32 | float64]() float64 {
	var z T
	if _, ok := any(z).(float32); ok {
		return 0x1p-24
	}
	return 0x1p-53
}

// checkGemm compares c (rows ldc apart) with want, allowing the error
// bound k·u·Σ|a||b| twice over, and checks that the padding between rows
// (filled with NaN) was left alone.
func checkGemm[T float32 | float64](t *testing.T, name string, m, n, k int, c []T, ldc int, want, bound []float64) {
	t.Helper()
	u := unitRoundoff[T]()
	for i := 0; i < m; i++ {
		for j := 0; j < ldc && i*ldc+j < len(c); j++ {
			got := float64(c[i*ldc+j])
			if j >= n {
				if !math.IsNaN(got) {
					t.Fatalf("%s: padding c[%d, %d] = %v was written", name, i, j, got)
				}
				continue
			}
			w := want[i*n+j]
			if tol := 2*float64(k)*u*bound[i*n+j] + 1e-300; math.IsNaN(got) || math.Abs(got-w) > tol {
				t.Fatalf("%s: c[%d, %d] = %v, want %v (tolerance %g)", name, i, j, got, w, tol)
			}
		}
	}
}

func nanSlice[T float32 | float64](n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = T(math.NaN())
	}
	return s
}

// runGemm computes a·b with gemm into NaN-filled memory with padded rows
// and checks it against the naive product. The memory runs on past c for
// a tile's height of rows, which must stay NaN: the kernels are assembly,
// and a tile stored too tall would go unseen by the bounds checks.
func runGemm[T float32 | float64](t *testing.T, name string, m, n, k int, a, b mat[T], parallel bool) {
	t.Helper()
	ldc := n + 3
	size := max(0, (m-1)*ldc+n)
	guarded := nanSlice[T](size + 12*ldc)
	c := guarded[:size:size]
	gemm(m, n, k, a, b, c, ldc, parallel)
	want, bound := naiveGemm(m, n, k, a, b, f64[T])
	checkGemm(t, name, m, n, k, c, ldc, want, bound)
	for i, v := range guarded[size:] {
		if v == v {
			t.Fatalf("%s: %v written %d elements past the end of c", name, v, i)
		}
	}
}

// eachKernel runs f once with every micro-kernel this CPU supports
// installed, so that the AVX2 kernels are tested on AVX-512 machines too.
func eachKernel(t *testing.T, f func(t *testing.T)) {
	k32, k64 := supportedKernels()
	old32, old64 := kernel32, kernel64
	defer func() { kernel32, kernel64 = old32, old64 }()
	for i := range k32 {
		kernel32, kernel64 = k32[i], k64[i]
		t.Run(k32[i].name, f)
	}
}

// runBoth runs runGemm on float32 and then float64 operands of the same
// shape and layouts, drawn from r.
func runBoth(t *testing.T, r *rand.Rand, name string, m, n, k int, la, lb layout, parallel bool) {
	t.Helper()
	runGemm(t, "float32 "+name, m, n, k, newMat[float32](r, m, k, la), newMat[float32](r, k, n, lb), parallel)
	runGemm(t, "float64 "+name, m, n, k, newMat[float64](r, m, k, la), newMat[float64](r, k, n, lb), parallel)
}

// eachPacking runs f with Ã packed by each worker for itself and with it
// packed once and shared, whatever its size.
func eachPacking(t *testing.T, f func(t *testing.T)) {
	old := sharedPackBytes
	defer func() { sharedPackBytes = old }()
	for _, sh := range []struct {
		name  string
		bytes int
	}{{"own Ã", 1 << 62}, {"shared Ã", 0}} {
		sharedPackBytes = sh.bytes
		t.Run(sh.name, f)
	}
}

func TestGemmShapes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	row := layoutByName("row")
	eachKernel(t, func(t *testing.T) {
		type shape struct{ m, n, k int }
		var shapes []shape
		for d := 1; d <= 67; d++ {
			shapes = append(shapes, shape{d, 37, 19}, shape{29, d, 23}, shape{25, 35, d})
		}
		for _, s := range shapes {
			name := fmt.Sprintf("%d×%d×%d", s.m, s.n, s.k)
			runBoth(t, r, name, s.m, s.n, s.k, row, row, false)
		}
	})
}

func TestGemmLayouts(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	eachKernel(t, func(t *testing.T) {
		m, n, k := 19, 37, 29
		for _, la := range layouts {
			for _, lb := range layouts {
				for _, par := range []bool{false, true} {
					name := fmt.Sprintf("a %s, b %s, parallel %v", la.name, lb.name, par)
					runBoth(t, r, name, m, n, k, la, lb, par)
				}
			}
		}
	})
}

// TestGemmRandom draws shapes from sizes around the register blocks and
// layouts at random.
func TestGemmRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	dims := []int{1, 2, 3, 5, 6, 7, 8, 11, 12, 13, 16, 17, 24, 31, 32, 33, 47, 48, 64, 65, 67}
	eachKernel(t, func(t *testing.T) {
		for range 150 {
			m, n, k := dims[r.IntN(len(dims))], dims[r.IntN(len(dims))], dims[r.IntN(len(dims))]
			la, lb := layouts[r.IntN(len(layouts))], layouts[r.IntN(len(layouts))]
			name := fmt.Sprintf("%d×%d×%d, a %s, b %s", m, n, k, la.name, lb.name)
			runBoth(t, r, name, m, n, k, la, lb, true)
		}
	})
}

// TestGemmBlocking shrinks the caches the blocking is sized from, so that
// small products take every loop of the driver several times over: depth
// blocks (accumulating into C), row blocks of Ã, column blocks of B̃ and
// row ranges of work items, all split over more workers than cores.
func TestGemmBlocking(t *testing.T) {
	oldCaches, oldPar, oldProcs := caches, parallelFlops, runtime.GOMAXPROCS(4)
	defer func() { caches, parallelFlops = oldCaches, oldPar; runtime.GOMAXPROCS(oldProcs) }()
	caches = cacheSizes{l1: 1 << 10, l2: 8 << 10, l3: 64 << 10}
	parallelFlops = 0
	r := rand.New(rand.NewPCG(7, 8))
	eachKernel(t, func(t *testing.T) {
		eachPacking(t, func(t *testing.T) {
			for _, s := range [][3]int{{90, 70, 130}, {67, 150, 45}, {200, 7, 70}, {5, 200, 66}, {1, 1, 500}} {
				m, n, k := s[0], s[1], s[2]
				for _, l := range []string{"row", "col", "strided"} {
					la, lb := layoutByName(l), layoutByName("padded col")
					name := fmt.Sprintf("%d×%d×%d, %s", m, n, k, l)
					runBoth(t, r, name, m, n, k, la, lb, true)
				}
			}
		})
	})
}

// TestGemmConcurrent runs products from several goroutines at once: one
// gets the helper team, the others start goroutines of their own; each
// packs its own Ã or shares one among its workers.
func TestGemmConcurrent(t *testing.T) {
	oldPar := parallelFlops
	defer func() { parallelFlops = oldPar }()
	parallelFlops = 0
	const callers = 4
	m, n, k := 70, 90, 50
	row := layoutByName("row")
	r := rand.New(rand.NewPCG(15, 16))
	var as, bs [callers]mat[float32]
	var cs [callers][]float32
	for i := range callers {
		as[i], bs[i] = newMat[float32](r, m, k, row), newMat[float32](r, k, n, row)
	}
	eachPacking(t, func(t *testing.T) {
		done := make(chan int)
		for i := range callers {
			cs[i] = nanSlice[float32](m * n)
			go func() {
				for range 20 {
					gemm(m, n, k, as[i], bs[i], cs[i], n, true)
				}
				done <- i
			}()
		}
		for range callers {
			i := <-done
			want, bound := naiveGemm(m, n, k, as[i], bs[i], f64[float32])
			checkGemm(t, fmt.Sprintf("caller %d", i), m, n, k, cs[i], n, want, bound)
		}
	})
}

func TestGemmEmpty(t *testing.T) {
	row := layoutByName("row")
	r := rand.New(rand.NewPCG(9, 10))
	// k = 0 writes zeros and leaves the row padding alone.
	m, n, ldc := 4, 5, 7
	c := nanSlice[float32]((m-1)*ldc + n)
	gemm(m, n, 0, newMat[float32](r, m, 0, row), newMat[float32](r, 0, n, row), c, ldc, true)
	checkGemm(t, "k=0", m, n, 0, c, ldc, make([]float64, m*n), make([]float64, m*n))
	// m = 0 or n = 0: nothing to do, and c may be empty.
	gemm(0, 5, 3, newMat[float64](r, 0, 3, row), newMat[float64](r, 3, 5, row), nil, 5, true)
	gemm(4, 0, 3, newMat[float64](r, 4, 3, row), newMat[float64](r, 3, 0, row), nil, 0, true)
}

// TestGemmMatchesGonum compares with gonum's Gemm, the reference BLAS,
// for its four transpose cases.
func TestGemmMatchesGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, s := range [][3]int{{1, 1, 1}, {7, 5, 3}, {12, 32, 16}, {13, 33, 17}, {67, 65, 66}, {100, 120, 130}} {
		m, n, k := s[0], s[1], s[2]
		for _, ta := range []blas.Transpose{blas.NoTrans, blas.Trans} {
			for _, tb := range []blas.Transpose{blas.NoTrans, blas.Trans} {
				name := fmt.Sprintf("%d×%d×%d %c%c", m, n, k, ta, tb)
				// Leading dimensions padded by 2, as a BLAS caller may.
				ar, ac := m, k
				if ta == blas.Trans {
					ar, ac = k, m
				}
				br, bc := k, n
				if tb == blas.Trans {
					br, bc = n, k
				}
				a64 := randSlice[float64](r, ar*(ac+2))
				b64 := randSlice[float64](r, br*(bc+2))
				am := mat[float64]{a64, 0, ac + 2, 1}
				if ta == blas.Trans {
					am = mat[float64]{a64, 0, 1, ac + 2}
				}
				bm := mat[float64]{b64, 0, bc + 2, 1}
				if tb == blas.Trans {
					bm = mat[float64]{b64, 0, 1, bc + 2}
				}
				want64 := make([]float64, m*n)
				blas64.Gemm(ta, tb, 1, blas64.General{Rows: ar, Cols: ac, Stride: ac + 2, Data: a64},
					blas64.General{Rows: br, Cols: bc, Stride: bc + 2, Data: b64}, 0,
					blas64.General{Rows: m, Cols: n, Stride: n, Data: want64})
				_, bound := naiveGemm(m, n, k, am, bm, f64[float64])
				c64 := make([]float64, m*n)
				gemm(m, n, k, am, bm, c64, n, true)
				checkGemm(t, "float64 "+name, m, n, k, c64, n, want64, bound)

				a32, b32 := make([]float32, len(a64)), make([]float32, len(b64))
				for i, v := range a64 {
					a32[i] = float32(v)
				}
				for i, v := range b64 {
					b32[i] = float32(v)
				}
				want32 := make([]float32, m*n)
				blas32.Gemm(ta, tb, 1, blas32.General{Rows: ar, Cols: ac, Stride: ac + 2, Data: a32},
					blas32.General{Rows: br, Cols: bc, Stride: bc + 2, Data: b32}, 0,
					blas32.General{Rows: m, Cols: n, Stride: n, Data: want32})
				c32 := make([]float32, m*n)
				gemm(m, n, k, mat[float32]{a32, am.off, am.rs, am.cs}, mat[float32]{b32, bm.off, bm.rs, bm.cs}, c32, n, true)
				want := make([]float64, m*n)
				for i, v := range want32 {
					want[i] = float64(v)
				}
				checkGemm(t, "float32 "+name, m, n, k, c32, n, want, bound)
			}
		}
	}
}

// TestGemmHalf checks float16 and bfloat16 operands, widened while
// packing. Their values are multiples of 1/8 below 2 in magnitude, so
// every product and sum is exact in float32 and the result must be too.
func TestGemmHalf(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	eachKernel(t, func(t *testing.T) {
		for _, s := range [][3]int{{1, 1, 1}, {13, 33, 17}, {30, 40, 300}} {
			m, n, k := s[0], s[1], s[2]
			for _, l := range []string{"row", "col", "strided", "broadcast rows"} {
				name := fmt.Sprintf("%d×%d×%d %s", m, n, k, l)
				testHalf(t, "float16 "+name, r, m, n, k, layoutByName(l), array.NewF16, array.F16.Float32)
				testHalf(t, "bfloat16 "+name, r, m, n, k, layoutByName(l), array.NewBF16, array.BF16.Float32)
			}
		}
	})
}

func testHalf[S half](t *testing.T, name string, r *rand.Rand, m, n, k int, l layout, from func(float32) S, to func(S) float32) {
	t.Helper()
	mk := func(rows, cols int) mat[S] {
		size, off, rs, cs := l.make(rows, cols)
		d := make([]S, size)
		for i := range d {
			d[i] = from(float32(r.IntN(31)-15) / 8)
		}
		return mat[S]{d, off, rs, cs}
	}
	a, b := mk(m, k), mk(k, n)
	c := nanSlice[float32](m * n)
	gemmHalf(m, n, k, a, b, c, n, true)
	want, _ := naiveGemm(m, n, k, a, b, func(v S) float64 { return float64(to(v)) })
	for i, w := range want {
		if float64(c[i]) != w {
			t.Fatalf("%s: element %d = %v, want %v", name, i, c[i], w)
		}
	}
}

func TestBufClass(t *testing.T) {
	prevClass, prevSize := -1, 0
	for n := 1; n < 1<<16; n++ {
		class, size := bufClass(n)
		if size < n || float64(size) > 1.25*float64(n)+4 {
			t.Fatalf("bufClass(%d) size %d: want at least n and at most 25%% more", n, size)
		}
		if class < prevClass || (class == prevClass) != (size == prevSize) {
			t.Fatalf("bufClass(%d) = %d, %d after %d, %d: classes must grow with sizes", n, class, size, prevClass, prevSize)
		}
		prevClass, prevSize = class, size
	}
	p := poolFor[float32]()
	b := p.get(1000)
	if len(*b) < 1000 || uintptr(unsafeAddr(*b))%cacheLine != 0 {
		t.Fatalf("get(1000): %d elements at %#x; want at least 1000, %d-byte aligned", len(*b), unsafeAddr(*b), cacheLine)
	}
	p.put(b)
}

func TestCacheSizes(t *testing.T) {
	c := caches
	if c.l1 < 4<<10 || c.l2 < c.l1 || c.l3 < 0 {
		t.Fatalf("caches %+v are implausible", c)
	}
	for _, es := range []int{4, 8} {
		blk := blockingFor(es, 12, 32, 1000, 1000, c)
		if blk.kc < 16 || blk.kc > 1000 || blk.nc%32 != 0 || blk.mb%12 != 0 {
			t.Errorf("blocking for %d-byte elements from %+v: %+v", es, c, blk)
		}
		t.Logf("caches %+v, %d-byte elements, 1000×1000×1000: %+v", c, es, blk)
	}
}

func unsafeAddr[T any](s []T) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(s))) }

// TestGemmWorkers spreads products over three workers, so that items
// are stolen from others' spans and workers pack the row ranges of Ã
// they take: sizes off the register blocks, k = 1, several depth
// blocks, tall and skinny (items split by rows), short and wide.
func TestGemmWorkers(t *testing.T) {
	oldPar, oldProcs := parallelFlops, runtime.GOMAXPROCS(3)
	defer func() { parallelFlops = oldPar; runtime.GOMAXPROCS(oldProcs) }()
	parallelFlops = 0
	r := rand.New(rand.NewPCG(17, 18))
	shapes := [][3]int{{1, 1, 1}, {37, 45, 1}, {130, 70, 2}, {61, 95, 700}, {500, 5, 40}, {3, 300, 50}, {97, 33, 129}, {200, 200, 64}}
	eachKernel(t, func(t *testing.T) {
		eachPacking(t, func(t *testing.T) {
			for _, s := range shapes {
				m, n, k := s[0], s[1], s[2]
				for _, l := range []string{"row", "col", "strided"} {
					la, lb := layoutByName(l), layoutByName("row")
					name := fmt.Sprintf("%d×%d×%d, a %s", m, n, k, l)
					runBoth(t, r, name, m, n, k, la, lb, true)
				}
			}
			testHalf(t, "float16 200×40×30", r, 200, 40, 30, layoutByName("row"), array.NewF16, array.F16.Float32)
			testHalf(t, "bfloat16 40×200×30", r, 40, 200, 30, layoutByName("col"), array.NewBF16, array.BF16.Float32)
		})
	})
}

// TestPanelPackers checks the CPU's panel packers against the Go loops,
// for both operands, both layouts they handle and every remainder of the
// steps they unroll, and that they write nothing past the panel.
func TestPanelPackers(t *testing.T) {
	k32, k64 := supportedKernels()
	for _, k := range k32 {
		testPanelPackers(t, k)
	}
	for _, k := range k64 {
		testPanelPackers(t, k)
	}
}

func testPanelPackers[T float32 | float64](t *testing.T, kern microKernel[T]) {
	r := rand.New(rand.NewPCG(19, 20))
	for kc := 1; kc <= 70; kc++ {
		for _, l := range []string{"row", "col", "padded row", "padded col", "broadcast rows"} {
			name := fmt.Sprintf("%s %T kc=%d %s", kern.name, T(0), kc, l)
			a := newMat[T](r, kern.mr, kc, layoutByName(l))
			b := newMat[T](r, kc, kern.nr, layoutByName(l))
			check := func(what string, p int, fast panelPackers[T], pack func(dst []T, fast panelPackers[T])) {
				want, got := nanSlice[T](p*kc+8), nanSlice[T](p*kc+8)
				pack(want, panelPackers[T]{})
				pack(got, fast)
				for i := range want {
					if g, w := got[i], want[i]; g != w && !(math.IsNaN(float64(g)) && math.IsNaN(float64(w))) {
						t.Fatalf("%s, packing %s: element %d = %v, want %v", name, what, i, g, w)
					}
				}
			}
			check("A", kern.mr, kern.packA, func(dst []T, fast panelPackers[T]) { packA(dst, a, kern.mr, kc, kern.mr, fast) })
			check("B", kern.nr, kern.packB, func(dst []T, fast panelPackers[T]) { packB(dst, b, kc, kern.nr, kern.nr, fast) })
		}
	}
}

// TestSpans takes tasks from more goroutines than spans and checks that
// each task is taken once, and that a worker alone takes its own span in
// order before the others' from their far ends.
func TestSpans(t *testing.T) {
	for workers := 1; workers <= 5; workers++ {
		for n := 0; n <= 40; n++ {
			s := newSpans(n, workers)
			taken := make([]atomic.Int32, n)
			var wg sync.WaitGroup
			for id := range workers + 1 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						it, ok := s.take(id)
						if !ok {
							return
						}
						taken[it].Add(1)
					}
				}()
			}
			wg.Wait()
			for i := range taken {
				if c := taken[i].Load(); c != 1 {
					t.Fatalf("%d workers, %d tasks: task %d taken %d times", workers, n, i, c)
				}
			}
		}
	}
	s := newSpans(10, 2)
	var order []int
	for {
		it, ok := s.take(1)
		if !ok {
			break
		}
		order = append(order, it)
	}
	if want := []int{5, 6, 7, 8, 9, 4, 3, 2, 1, 0}; fmt.Sprint(order) != fmt.Sprint(want) {
		t.Fatalf("worker 1 of 2 took %v, want %v", order, want)
	}
}

// TestBufPool checks that big packing buffers come back after a garbage
// collection (a sync.Pool would have dropped them) and that the pool
// keeps no more than poolBytes of them.
func TestBufPool(t *testing.T) {
	var p bufPool[float64]
	const n = 8 << 20 / 8 // 8 MiB
	b := p.get(n)
	if len(*b) < n || uintptr(unsafe.Pointer(&(*b)[0]))%cacheLine != 0 {
		t.Fatalf("get(%d): %d elements at %p, want at least %d, %d-byte aligned", n, len(*b), &(*b)[0], n, cacheLine)
	}
	p.put(b)
	runtime.GC()
	runtime.GC()
	if got := p.get(n); got != b {
		t.Fatalf("after two collections, get(%d) = %p, want the buffer put back, %p", n, got, b)
	}
	var bufs []*[]float64
	for range poolBytes/(8<<20) + 3 {
		bufs = append(bufs, p.get(n))
	}
	for _, b := range bufs {
		p.put(b)
	}
	if p.held > poolBytes {
		t.Fatalf("pool holds %d bytes, want at most %d", p.held, poolBytes)
	}
	if c, _ := bufClass(n); len(p.classes[c]) != poolBytes/(8<<20) {
		t.Fatalf("pool kept %d buffers of 8 MiB, want %d", len(p.classes[c]), poolBytes/(8<<20))
	}
	small := p.get(1000)
	if len(*small) < 1000 || uintptr(unsafe.Pointer(&(*small)[0]))%cacheLine != 0 {
		t.Fatalf("get(1000): %d elements at %p, want at least 1000, %d-byte aligned", len(*small), &(*small)[0], cacheLine)
	}
}

// TestClearCacheDropsScratch checks that array.ClearCache also releases
// the packing buffers, spares and free list alike.
func TestClearCacheDropsScratch(t *testing.T) {
	p := poolFor[float64]()
	small, big := p.get(30000), p.get(8<<20/8)
	p.put(small)
	p.put(big)
	if p.held == 0 {
		t.Fatal("the free list kept no 8 MiB buffer")
	}
	array.ClearCache()
	runtime.GC()
	runtime.GC()
	if p.held != 0 {
		t.Fatalf("after ClearCache the free list holds %d bytes, want 0", p.held)
	}
	if b := p.get(30000); b == small {
		t.Fatal("after ClearCache and two collections, a spare packing buffer came back")
	}
}
