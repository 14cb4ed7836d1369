package cpu

import (
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/fathom-go/fathom/array"
)

//go:generate go run ./internal/asmgen/gemm -out gemm_amd64.s -stubs gemm_amd64.go -pkg cpu

// The GEMM here follows GotoBLAS and BLIS. C = A·B is cut into blocks so
// that each operand is read from the cache level that can hold it:
//
//	for each block of mb rows of A (Ã: mb×K packed, bounded by L3)
//	  in parallel, work items (nc columns × a range of rows), each
//	  worker packing the rows of Ã its items need into its own copy
//	  (or, for a big Ã, all workers packing one copy before the items)
//	    for each depth block of kc
//	      pack B̃: kc×nc of B (kept in this core's L2)
//	      for each micro-panel of mr rows of Ã (mr×kc, kept in L1)
//	        for each micro-panel of nr columns of B̃ (streamed from L2)
//	          micro-kernel: the mr×nr tile of C in registers
//
// Packing lays the panels out in the order the micro-kernel reads them,
// zero-padded to whole tiles, and reads the operands through any strides:
// transposed, strided or broadcast views are never copied first.
// float16 and bfloat16 operands are widened to float32 while packing.

// mat is a strided matrix view: element (i, j) is data[off + i*rs + j*cs].
type mat[S any] struct {
	data        []S
	off, rs, cs int
}

func (m mat[S]) sub(i, j int) mat[S] {
	m.off += i*m.rs + j*m.cs
	return m
}

// microKernel is a register-blocked kernel: fn computes the mr×nr tile
// c = ã·b̃ over k packed steps (c += ã·b̃ when acc is set), with c's rows
// ldc elements apart.
type microKernel[T float32 | float64] struct {
	name   string
	mr, nr int
	fn     func(k int, a, b, c *T, ldc int, acc bool)
	// packA and packB pack whole panels of mr rows of A and nr columns
	// of B where the CPU has routines for it; nil ones leave it to Go.
	packA, packB panelPackers[T]
	// short are kernels of fewer rows, shortest first, for a last panel
	// that C does not fill: each computes the first rows of a panel
	// packed mr rows tall.
	short []shortKernel[T]
}

// shortKernel computes the first rows rows of an mr×nr tile (see
// microKernel.fn).
type shortKernel[T float32 | float64] struct {
	rows int
	fn   func(k int, a, b, c *T, ldc int, acc bool)
}

// panelPackers pack a whole panel p elements wide over kc steps into
// dst[kk·p + i], reading src with a stride ld ≥ 0: copy where the p
// elements of a step are contiguous (src[kk·ld + i]), trans where each
// of the p is contiguous along the steps (src[i·ld + kk]).
type panelPackers[T float32 | float64] struct {
	copy, trans func(dst, src *T, ld, kc int)
}

// The kernels and cache sizes in use, set at init by the architecture's
// file from the CPU's features.
var (
	kernel32 microKernel[float32]
	kernel64 microKernel[float64]
	caches   cacheSizes
)

// cacheSizes are the data cache sizes in bytes that one core can count on.
type cacheSizes struct{ l1, l2, l3 int }

// defaultCaches are used where the CPU does not say: a 32 KiB L1, a
// 1 MiB L2 and 8 MiB of L3, a common modern core.
var defaultCaches = cacheSizes{l1: 32 << 10, l2: 1 << 20, l3: 8 << 20}

// kernelFor returns the micro-kernel in use for T.
func kernelFor[T float32 | float64]() microKernel[T] {
	var z T
	if _, ok := any(z).(float32); ok {
		return any(kernel32).(microKernel[T])
	}
	return any(kernel64).(microKernel[T])
}

// blocking is the cache blocking of one product, in elements.
type blocking struct {
	kc int // depth of a packed block: an mr×kc micro-panel of Ã fills half to 3/4 of L1
	nc int // width of a B̃ block: kc×nc fills half of L2
	mb int // rows of Ã packed at once, over the whole depth
}

// blockingFor sizes the blocks of an m×k by k×n product. Blocks of one
// kind are made equal rather than full-then-remainder: a short last
// depth block would pay for loading and storing its C tiles with little
// work, and a short last row block for packing all of B again.
func blockingFor(es, mr, nr, m, k int, c cacheSizes) blocking {
	kc := max(16, min(max(minKC, c.l1/2/(mr*es)), c.l1*3/4/(mr*es)))
	kc = ceilDiv(k, ceilDiv(k, kc))
	nc := max(nr, c.l2/2/(kc*es)/nr*nr)
	// Ã (a copy a worker) is bounded by the L3's size to bound its
	// memory, not to keep it cached: each packed element is used nc
	// times per load, so Ã may stream from memory at a small fraction of
	// its bandwidth.
	mb := max(mr, c.l3/(max(k, 1)*es))
	mb = roundUp(ceilDiv(m, ceilDiv(m, mb)), mr)
	return blocking{kc: kc, nc: nc, mb: mb}
}

// minKC is the depth a block is cut to even where half of L1 holds less
// (float64): a C tile is loaded and stored once a depth block, and below
// about 256 steps that cost shows in a large product's time
// (docs/performance.md, "Measurements behind design choices"). Three
// quarters of L1 still leaves room for B̃'s stream.
const minKC = 256

func ceilDiv(n, d int) int { return (n + d - 1) / d }

// parallelFlops is the size of product (2·m·n·k) below which one core
// does it all: a smaller product gains little or loses from a second
// core. The bound sits at the crossover measured between 96³ and 112³
// products (docs/performance.md).
var parallelFlops = 1 << 21

// packers fill Ã and B̃ from the operands: packA packs rows×kc of A from
// (i0, k0) into panels of mr rows, packB kc×cols of B from (k0, j0) into
// panels of nr columns.
type packers[T float32 | float64] struct {
	packA func(dst []T, i0, rows, k0, kc, mr int)
	packB func(dst []T, k0, kc, j0, cols, nr int)
}

// gemm computes c = a·b for an m×k a and a k×n b, into the row-major m×n
// c with rows ldc apart. parallel lets it spread over cores.
func gemm[T float32 | float64](m, n, k int, a, b mat[T], c []T, ldc int, parallel bool) {
	kern := kernelFor[T]()
	gemmPacked(m, n, k, packers[T]{
		packA: func(dst []T, i0, rows, k0, kc, mr int) { packA(dst, a.sub(i0, k0), rows, kc, mr, kern.packA) },
		packB: func(dst []T, k0, kc, j0, cols, nr int) { packB(dst, b.sub(k0, j0), kc, cols, nr, kern.packB) },
	}, c, ldc, parallel)
}

// half is the set of 16-bit float element types, computed in float32.
type half interface{ array.F16 | array.BF16 }

// gemmHalf computes c = a·b for float16 or bfloat16 operands, widening
// them to float32 while packing; c holds the float32 sums.
func gemmHalf[S half](m, n, k int, a, b mat[S], c []float32, ldc int, parallel bool) {
	gemmPacked(m, n, k, packers[float32]{
		packA: func(dst []float32, i0, rows, k0, kc, mr int) { packAHalf(dst, a.sub(i0, k0), rows, kc, mr) },
		packB: func(dst []float32, k0, kc, j0, cols, nr int) { packBHalf(dst, b.sub(k0, j0), kc, cols, nr) },
	}, c, ldc, parallel)
}

// gemmPacked is the blocked product behind gemm and gemmHalf. Work items
// are blocks of nc columns, each packing its own B̃, split further into
// ranges of row panels when there are too few columns to go round. Ã is
// packed a block of mb rows at a time. A small Ã is packed by every
// worker for itself (the row ranges of the items it takes): moving a
// cache line that one core wrote to the other costs about as much as
// packing it, so packing a small Ã once for all workers is slower
// (docs/performance.md). A big one is packed once, the workers taking pieces
// of it, before the items start (see sharedPackBytes): there each
// worker's copy would cost it more than the moves.
func gemmPacked[T float32 | float64](m, n, k int, pk packers[T], c []T, ldc int, parallel bool) {
	if m <= 0 || n <= 0 {
		return
	}
	if len(c) < (m-1)*ldc+n || ldc < n {
		panic("cpu: gemm output too small")
	}
	if k <= 0 {
		for i := 0; i < m; i++ {
			clear(c[i*ldc : i*ldc+n])
		}
		return
	}
	kern := kernelFor[T]()
	mr, nr := kern.mr, kern.nr
	var z T
	es := int(unsafe.Sizeof(z))
	blk := blockingFor(es, mr, nr, m, k, caches)
	workers := runtime.GOMAXPROCS(0)
	if !parallel || 2*m*n*k < parallelFlops {
		workers = 1
	}
	pool := poolFor[T]()
	for i0 := 0; i0 < m; i0 += blk.mb {
		rows := min(blk.mb, m-i0)
		panels := ceilDiv(rows, mr)
		// Ã holds the depth blocks one after another; within one, the
		// panels of mr rows, each kc steps of mr elements. packPanels
		// packs the row panels [lo, hi).
		packPanels := func(apk []T, lo, hi int) {
			r := min(rows, hi*mr) - lo*mr
			for k0 := 0; k0 < k; k0 += blk.kc {
				kc := min(blk.kc, k-k0)
				pk.packA(apk[panels*mr*k0+lo*mr*kc:], i0+lo*mr, r, k0, kc, mr)
			}
		}

		nc := blk.nc
		nj := ceilDiv(n, nc)
		ni := 1
		if workers > 1 {
			target := itemsPerWorker * workers
			if nj < target {
				nc = max(min(nc, nr), roundUp(ceilDiv(n, target), nr))
				nj = ceilDiv(n, nc)
			}
			if nj < target {
				ni = max(1, min(ceilDiv(target, nj), panels/2))
			}
		}
		pp := ceilDiv(panels, ni) // row panels an item
		ni = ceilDiv(panels, pp)
		item := func(apk, bpk, tile []T, it int) {
			j0 := (it % nj) * nc
			cols := min(nc, n-j0)
			p0 := (it / nj) * pp
			p1 := min(p0+pp, panels)
			for k0 := 0; k0 < k; k0 += blk.kc {
				kc := min(blk.kc, k-k0)
				pk.packB(bpk, k0, kc, j0, cols, nr)
				for p := p0; p < p1; p++ {
					tiles(kern, kc, apk[panels*mr*k0+p*mr*kc:], bpk, c[(i0+p*mr)*ldc+j0:], ldc, min(mr, rows-p*mr), cols, k0 > 0, tile)
				}
			}
		}
		// A big Ã is packed once, by all workers, before any item runs;
		// otherwise each worker packs the row ranges of its own items.
		var shared *[]T
		if workers > 1 && ni == 1 && panels*mr*k*es >= sharedPackBytes {
			shared = pool.get(panels * mr * k)
			chunks := min(panels, packChunksPerWorker*workers)
			runItems(workers, chunks, func() *[]T { return shared },
				func(apk *[]T, it int) { packPanels(*apk, it*panels/chunks, (it+1)*panels/chunks) },
				func(*[]T) {})
		}
		// A worker's scratch: its Ã (or the shared one) and which ranges
		// of row panels that holds, B̃ and a tile for the edges.
		type scratch struct {
			a, b, tile *[]T
			packed     []bool
		}
		runItems(workers, nj*ni,
			func() *scratch {
				s := &scratch{
					a:    shared,
					b:    pool.get(blk.kc * roundUp(min(nc, n), nr)),
					tile: pool.get(mr * nr),
				}
				if shared == nil {
					s.a, s.packed = pool.get(panels*mr*k), make([]bool, ni)
				}
				return s
			},
			func(s *scratch, it int) {
				if i := it / nj; s.packed != nil && !s.packed[i] {
					packPanels(*s.a, i*pp, min((i+1)*pp, panels))
					s.packed[i] = true
				}
				item(*s.a, *s.b, *s.tile, it)
			},
			func(s *scratch) {
				if s.packed != nil {
					pool.put(s.a)
				}
				pool.put(s.b)
				pool.put(s.tile)
			})
		if shared != nil {
			pool.put(shared)
		}
	}
}

// sharedPackBytes is the size of Ã from which the workers pack it
// together rather than each packing all of it (when each item spans all
// rows). A panel that one core packs and the other reads costs a cache
// line's move between cores, and the wait for the last piece. For a small
// Ã that costs more than the packing saves; 2 MiB (a 512³ float64
// product) is where the two came out even, and larger products gain from
// sharing (docs/performance.md).
var sharedPackBytes = 2 << 20

// packChunksPerWorker is how many pieces a shared Ã is packed in per
// worker, for a worker that starts late to take fewer.
const packChunksPerWorker = 8

// tiles multiplies one micro-panel of Ã, whose first r rows are real,
// by the B̃ panels of cols columns at depth kc, into c (rows ldc apart),
// adding to it when acc is set. Tiles that overhang C are computed into
// tile and merged.
func tiles[T float32 | float64](kern microKernel[T], kc int, apk, bpk, c []T, ldc, r, cols int, acc bool, tile []T) {
	mr, nr := kern.mr, kern.nr
	ap := &apk[0]
	fn, rows := kern.fn, mr
	for _, s := range kern.short {
		if r <= s.rows {
			fn, rows = s.fn, s.rows
			break
		}
	}
	for q := 0; q*nr < cols; q++ {
		bp := &bpk[q*nr*kc]
		if w := min(nr, cols-q*nr); r < rows || w < nr {
			fn(kc, ap, bp, &tile[0], nr, false)
			mergeTile(c[q*nr:], ldc, tile, nr, r, w, acc)
			continue
		}
		// The whole tile lies inside c, whose last row reaches
		// (r-1)·ldc + cols.
		fn(kc, ap, bp, &c[q*nr], ldc, acc)
	}
}

// itemsPerWorker is how many work items a product is cut into per
// worker when it can be: enough that a worker that starts late, or a core
// that is busy elsewhere, leaves little to wait for at the end.
const itemsPerWorker = 4

// runItems runs work items [0, n) on up to workers goroutines, which
// take them from spans, so a core busy elsewhere just takes fewer. A
// goroutine gets its scratch from newScratch when it takes its first
// item, and hands it to release at the end.
func runItems[W any](workers, n int, newScratch func() W, item func(w W, it int), release func(W)) {
	if workers <= 1 || n <= 1 {
		if n > 0 {
			w := newScratch()
			for it := range n {
				item(w, it)
			}
			release(w)
		}
		return
	}
	items := newSpans(n, workers)
	var done atomic.Int64
	finished := make(chan struct{})
	work := func(id int) {
		var w W
		started := false
		for {
			it, ok := items.take(id)
			if !ok {
				break
			}
			if !started {
				w, started = newScratch(), true
			}
			item(w, it)
			if done.Add(1) == int64(n) {
				close(finished)
			}
		}
		if started {
			release(w)
		}
	}
	if !team.run(work) {
		for id := 1; id < workers; id++ {
			go work(id)
		}
		work(0)
	}
	// Waiting for the others' last items by spinning beats parking and
	// being woken (see team), while they run. On a busy machine a worker
	// may be off its core for milliseconds, and the spin would take core
	// time that the workers need (the kernel shares cores out between
	// programs, not threads): after teamSpin it waits parked.
	for start := time.Now(); done.Load() < int64(n); {
		if time.Since(start) > teamSpin {
			<-finished
			break
		}
		runtime.Gosched()
	}
}

// spans deals tasks [0, n) out to workers: worker id takes the tasks of
// its own span in order, then takes from the far ends of the others'
// spans. A worker's tasks are thus contiguous, and the same from one call
// to the next, so its part of the operands, of C and of its buffers
// stays in its own caches (moving a line that one core wrote to the other
// costs these machines as much as packing it); one that falls behind, or
// never starts, has its tasks taken.
type spans []span

type span struct {
	next atomic.Uint64 // first task left << 32 | end
	_    [cacheLine - 8]byte
}

func newSpans(n, workers int) spans {
	s := make(spans, workers)
	for w := range s {
		s[w].next.Store(uint64(w*n/workers)<<32 | uint64((w+1)*n/workers))
	}
	return s
}

// take returns the next task for worker id, or false when none is left.
func (s spans) take(id int) (int, bool) {
	for d := range len(s) {
		sp := &s[(id+d)%len(s)]
		for {
			v := sp.next.Load()
			lo, hi := v>>32, v&(1<<32-1)
			if lo >= hi {
				break
			}
			if d == 0 && sp.next.CompareAndSwap(v, v+1<<32) {
				return int(lo), true
			}
			if d > 0 && sp.next.CompareAndSwap(v, v-1) {
				return int(hi - 1), true
			}
		}
	}
	return 0, false
}

// team is a set of helper goroutines that stay awake for a while after a
// product. Waking a parked thread on virtual CPUs costs a large part of
// a small product (docs/performance.md); OpenBLAS keeps its threads
// spinning for the same reason. A helper spins (yielding to
// any other goroutine) for teamSpin after its last job, then parks until
// the next.
var team = &teamT{wake: make(chan struct{}, 64)}

// teamSpin covers the gaps between the products and loops of a training
// step. Longer spins cost more than the wake-ups they save on a busy
// machine, where the kernel shares the cores out between programs, so
// that a spinning helper takes its time from the thread doing the work:
// a compiled MNIST MLP step took a quarter more CPU time with 1 ms
// (bench/mnist_test.go).
const teamSpin = 200 * time.Microsecond

type teamT struct {
	once   sync.Once
	job    atomic.Pointer[teamJob]
	gen    atomic.Uint64
	wake   chan struct{}
	parked atomic.Int32
}

type teamJob struct {
	gen  uint64
	work func(id int)
}

// run offers work to the helpers and runs it on the calling goroutine
// too, as work(0) (helper i runs work(i)), returning false (having run
// nothing) if the helpers are busy with another caller's job. work must
// be safe to call from several goroutines at once and after it has
// finished.
func (t *teamT) run(work func(id int)) bool {
	j := &teamJob{gen: t.gen.Add(1), work: work}
	if !t.job.CompareAndSwap(nil, j) {
		return false
	}
	t.once.Do(func() {
		for id := range min(runtime.GOMAXPROCS(0), cap(t.wake)+1) - 1 {
			go t.helper(id + 1)
		}
	})
	for n := t.parked.Load(); n > 0; n-- {
		select {
		case t.wake <- struct{}{}:
		default:
		}
	}
	work(0)
	t.job.Store(nil)
	return true
}

func (t *teamT) helper(id int) {
	var last uint64
	idle := time.Now()
	for {
		if j := t.job.Load(); j != nil && j.gen != last {
			last = j.gen
			j.work(id)
			idle = time.Now()
			continue
		}
		if time.Since(idle) < teamSpin {
			runtime.Gosched()
			continue
		}
		t.parked.Add(1)
		if j := t.job.Load(); j != nil && j.gen != last {
			t.parked.Add(-1)
			continue
		}
		<-t.wake
		t.parked.Add(-1)
		idle = time.Now()
	}
}

// mergeTile stores (or with acc adds) the r×w corner of a tile computed
// apart because it overhangs C.
func mergeTile[T float32 | float64](c []T, ldc int, tile []T, nr, r, w int, acc bool) {
	for i := 0; i < r; i++ {
		dst := c[i*ldc : i*ldc+w]
		src := tile[i*nr : i*nr+w]
		if !acc {
			copy(dst, src)
			continue
		}
		for j, v := range src {
			dst[j] += v
		}
	}
}

func roundUp(n, m int) int { return ceilDiv(n, m) * m }

// packA packs rows×kc of a into panels of mr rows: panel p holds, for
// each step kk, a[p·mr+i, kk] for i < mr, with zeros past the last row.
func packA[T float32 | float64](dst []T, a mat[T], rows, kc, mr int, fast panelPackers[T]) {
	for p := 0; p*mr < rows; p++ {
		d := dst[p*mr*kc : (p+1)*mr*kc]
		r := min(mr, rows-p*mr)
		o := a.off + p*mr*a.rs
		if r == mr && fastPanel(d, a.data, o, a.rs, a.cs, mr, kc, fast) {
			continue
		}
		if a.rs == 1 {
			// Columns of the panel are contiguous: one copy a step.
			for kk := 0; kk < kc; kk++ {
				s := d[kk*mr : (kk+1)*mr]
				copy(s, a.data[o+kk*a.cs:o+kk*a.cs+r])
				clear(s[r:])
			}
			continue
		}
		i := 0
		if a.cs == 1 {
			// Rows are contiguous: interleave four at a time.
			for ; i+4 <= r; i += 4 {
				base := o + i*a.rs
				r0 := a.data[base : base+kc]
				r1 := a.data[base+a.rs : base+a.rs+kc]
				r2 := a.data[base+2*a.rs : base+2*a.rs+kc]
				r3 := a.data[base+3*a.rs : base+3*a.rs+kc]
				for kk, v := range r0 {
					q := d[kk*mr+i : kk*mr+i+4 : kk*mr+i+4]
					q[0], q[1], q[2], q[3] = v, r1[kk], r2[kk], r3[kk]
				}
			}
		}
		for ; i < r; i++ {
			base := o + i*a.rs
			for kk := 0; kk < kc; kk++ {
				d[kk*mr+i] = a.data[base+kk*a.cs]
			}
		}
		for i := r; i < mr; i++ {
			for kk := 0; kk < kc; kk++ {
				d[kk*mr+i] = 0
			}
		}
	}
}

// packB packs kc×cols of b into panels of nr columns: panel q holds, for
// each step kk, b[kk, q·nr+j] for j < nr, with zeros past the last column.
// That is packA of b's transpose, a view with its strides swapped.
func packB[T float32 | float64](dst []T, b mat[T], kc, cols, nr int, fast panelPackers[T]) {
	packA(dst, mat[T]{data: b.data, off: b.off, rs: b.cs, cs: b.rs}, cols, kc, nr, fast)
}

// fastPanel packs a whole panel p wide with the CPU's routines when the
// layout suits them: ps is the stride across the panel, ks along the
// steps. It reports whether it did.
func fastPanel[T float32 | float64](d, src []T, o, ps, ks, p, kc int, fast panelPackers[T]) bool {
	var f func(dst, src *T, ld, kc int)
	var ld int
	switch {
	case ps == 1 && ks >= 0 && fast.copy != nil:
		f, ld = fast.copy, ks
	case ks == 1 && ps >= 0 && fast.trans != nil:
		f, ld = fast.trans, ps
	default:
		return false
	}
	// The routines read src[o : last+1] unchecked.
	_ = src[o+(p-1)*ps+(kc-1)*ks]
	f(&d[0], &src[o], ld, kc)
	return true
}

// lineLen is how many elements the half packers widen at a time.
const lineLen = 256

// widen converts n elements of src, stride apart from off, to float32.
func widen[S half](dst []float32, src []S, off, stride int) {
	switch s := any(src).(type) {
	case []array.F16:
		for i := range dst {
			dst[i] = s[off+i*stride].Float32()
		}
	case []array.BF16:
		for i := range dst {
			dst[i] = s[off+i*stride].Float32()
		}
	}
}

// packAHalf is packA for 16-bit operands, widening to float32.
func packAHalf[S half](dst []float32, a mat[S], rows, kc, mr int) {
	var line [lineLen]float32
	for p := 0; p*mr < rows; p++ {
		d := dst[p*mr*kc : (p+1)*mr*kc]
		r := min(mr, rows-p*mr)
		o := a.off + p*mr*a.rs
		if a.rs == 1 && r <= lineLen {
			for kk := 0; kk < kc; kk++ {
				s := d[kk*mr : (kk+1)*mr]
				widen(s[:r], a.data, o+kk*a.cs, 1)
				clear(s[r:])
			}
			continue
		}
		for i := 0; i < r; i++ {
			for k0 := 0; k0 < kc; k0 += lineLen {
				l := line[:min(lineLen, kc-k0)]
				widen(l, a.data, o+i*a.rs+k0*a.cs, a.cs)
				for kk, v := range l {
					d[(k0+kk)*mr+i] = v
				}
			}
		}
		for i := r; i < mr; i++ {
			for kk := 0; kk < kc; kk++ {
				d[kk*mr+i] = 0
			}
		}
	}
}

// packBHalf is packB for 16-bit operands, widening to float32.
func packBHalf[S half](dst []float32, b mat[S], kc, cols, nr int) {
	var line [lineLen]float32
	for q := 0; q*nr < cols; q++ {
		d := dst[q*nr*kc : (q+1)*nr*kc]
		w := min(nr, cols-q*nr)
		o := b.off + q*nr*b.cs
		if b.cs == 1 && w <= lineLen {
			for kk := 0; kk < kc; kk++ {
				s := d[kk*nr : (kk+1)*nr]
				widen(s[:w], b.data, o+kk*b.rs, 1)
				clear(s[w:])
			}
			continue
		}
		for j := 0; j < w; j++ {
			for k0 := 0; k0 < kc; k0 += lineLen {
				l := line[:min(lineLen, kc-k0)]
				widen(l, b.data, o+j*b.cs+k0*b.rs, b.rs)
				for kk, v := range l {
					d[(k0+kk)*nr+j] = v
				}
			}
		}
		for j := w; j < nr; j++ {
			for kk := 0; kk < kc; kk++ {
				d[kk*nr+j] = 0
			}
		}
	}
}

// goMR×goNR is the register block of the pure-Go micro-kernel: eight
// accumulators, which with the four elements of B̃ and a temporary is as
// many as amd64's compiler keeps in its fifteen float registers.
const goMR, goNR = 2, 4

// kernelGo is the portable micro-kernel.
func kernelGo[T float32 | float64](k int, a, b, c *T, ldc int, acc bool) {
	as := unsafe.Slice(a, k*goMR)
	bs := unsafe.Slice(b, k*goNR)
	var c00, c01, c02, c03, c10, c11, c12, c13 T
	for p := 0; p < k; p++ {
		ap := as[p*goMR : p*goMR+goMR : p*goMR+goMR]
		bp := bs[p*goNR : p*goNR+goNR : p*goNR+goNR]
		b0, b1, b2, b3 := bp[0], bp[1], bp[2], bp[3]
		a0, a1 := ap[0], ap[1]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
	}
	cs := unsafe.Slice(c, ldc+goNR)
	r0, r1 := cs[0:goNR:goNR], cs[ldc:ldc+goNR:ldc+goNR]
	if acc {
		c00, c01, c02, c03 = c00+r0[0], c01+r0[1], c02+r0[2], c03+r0[3]
		c10, c11, c12, c13 = c10+r1[0], c11+r1[1], c12+r1[2], c13+r1[3]
	}
	r0[0], r0[1], r0[2], r0[3] = c00, c01, c02, c03
	r1[0], r1[1], r1[2], r1[3] = c10, c11, c12, c13
}

// goKernel returns the portable micro-kernel for T.
func goKernel[T float32 | float64]() microKernel[T] {
	return microKernel[T]{name: "go", mr: goMR, nr: goNR, fn: kernelGo[T]}
}

// bufPool keeps packing buffers for reuse: touching fresh memory costs
// more than packing the page does (docs/performance.md, Memory). Buffers
// are kept by size class (powers of two split in
// four) so that small requests do not take, and then drop, big buffers.
// Big buffers are not kept in a sync.Pool, which empties over two
// garbage collections: the array package forces collections to get its
// own buffers back, as often as every 8 products of 1024² float64
// matrices, and products then packed into fresh memory. They go to a free list
// that keeps at most poolBytes; a buffer returned past that is left to
// the collector. Smaller ones stay in sync.Pools (see listFrom), which
// also take no lock when many goroutines run small products at once.
// Those keep a few spares through collections (sparePool).
type bufPool[T any] struct {
	small   [64 * 4]sparePool[[]T]
	mu      sync.Mutex
	classes [64 * 4][]*[]T
	held    int // bytes in classes
}

// poolBytes bounds what each pool's free list keeps. blockingFor packs
// at most about the L3's size of Ã at once (32 MiB here, 40 MiB with its
// size class), so the list keeps the Ã of one or two products.
const poolBytes = 64 << 20

// listFrom is the size in bytes from which buffers go to the free list:
// that of a shared Ã (sharedPackBytes). The smaller Ã and B̃ that each
// worker packs for itself stay in a per-P sync.Pool, which tends to hand
// a worker back the buffer whose lines are still in its core's cache
// (docs/performance.md).
const listFrom = 2 << 20

var (
	pool32 bufPool[float32]
	pool64 bufPool[float64]
)

func poolFor[T float32 | float64]() *bufPool[T] {
	if p, ok := any(&pool32).(*bufPool[T]); ok {
		return p
	}
	return any(&pool64).(*bufPool[T])
}

// bufClass returns the class of n elements and the class's size.
func bufClass(n int) (class, size int) {
	if n <= 4 {
		return 0, 4
	}
	// 4·step < n ≤ 8·step, so n rounds up to 5, 6, 7 or 8 steps.
	hi := bits.Len(uint(n-1)) - 3
	step := 1 << hi
	q := (n + step - 1) / step
	return 1 + hi*4 + q - 5, q * step
}

// cacheLine is the alignment of packing buffers, so that no vector load
// of a packed panel straddles two cache lines.
const cacheLine = 64

// get returns a buffer of at least n elements.
func (p *bufPool[T]) get(n int) *[]T {
	class, size := bufClass(n)
	var z T
	es := int(unsafe.Sizeof(z))
	if size*es < listFrom {
		if b := p.small[class].get(); b != nil {
			return b
		}
		return p.small[class].fresh(aligned[T](size))
	}
	p.mu.Lock()
	if free := p.classes[class]; len(free) > 0 {
		b := free[len(free)-1]
		free[len(free)-1] = nil
		p.classes[class] = free[:len(free)-1]
		p.held -= size * es
		p.mu.Unlock()
		return b
	}
	p.mu.Unlock()
	s := aligned[T](size)
	return &s
}

// aligned returns n elements starting on a cache line.
func aligned[T any](n int) []T {
	var z T
	es := int(unsafe.Sizeof(z))
	s := make([]T, n+cacheLine/es)
	skip := int(-uintptr(unsafe.Pointer(&s[0])) % cacheLine / uintptr(es))
	return s[skip : skip+n : skip+n]
}

// clear drops the buffers p keeps outside its sync.Pools, which the next
// collections empty.
func (p *bufPool[T]) clear() {
	for i := range p.small {
		p.small[i].clearSpares()
	}
	p.mu.Lock()
	clear(p.classes[:])
	p.held = 0
	p.mu.Unlock()
}

// put gives back b, which get returned (and whose length is unchanged:
// it says which class, and which kind of store, b came from).
func (p *bufPool[T]) put(b *[]T) {
	class, size := bufClass(len(*b))
	var z T
	bytes := size * int(unsafe.Sizeof(z))
	if bytes < listFrom {
		p.small[class].put(b)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held+bytes > poolBytes {
		return
	}
	p.classes[class] = append(p.classes[class], b)
	p.held += bytes
}
