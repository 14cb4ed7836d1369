package cpu

import (
	"math"
	"sync"
)

// fourStepFrom is the length from which one transform is split into
// n1 transforms of length n2 and n2 of length n1 (Bailey's four-step
// FFT): below it a vector and its scratch stay in the L2 cache and the
// Stockham passes run there; above it every pass would go to memory, and
// the four-step split reads and writes the data three times in all, in
// cache-sized tiles that the cores share (docs/performance.md).
const fourStepFrom = 1 << 15

// fourStep is the split of a long transform: x viewed as [n1][n2], the
// columns transformed (length n1), multiplied by ω_n^(k1·j2), the rows
// transformed (length n2), and the result read out transposed.
type fourStep struct {
	n1, n2  int
	p1, p2  *fftPlan
	twiddle twoLevel
}

// twoLevel gives ω_n^e for 0 ≤ e < n as hi[e>>10]·lo[e&1023]: two tables
// of a few KiB instead of one of n values, at one complex product each.
type twoLevel struct{ hi, lo []complex64 }

const twoLevelBits = 10

func newTwoLevel(n int, inverse bool) twoLevel {
	t := twoLevel{hi: make([]complex64, n>>twoLevelBits+1), lo: make([]complex64, 1<<twoLevelBits)}
	for i := range t.hi {
		t.hi[i] = omega(i<<twoLevelBits, n, inverse)
	}
	for i := range t.lo {
		t.lo[i] = omega(i, n, inverse)
	}
	return t
}

func (t *twoLevel) at(e int) complex64 {
	return cmul(t.hi[e>>twoLevelBits], t.lo[e&(1<<twoLevelBits-1)])
}

// newFourStep splits n as n1·n2 with n1 the largest divisor not above
// √n; it returns nil when n1 would be too small for the split to pay.
func newFourStep(n int, inverse bool) *fourStep {
	n1 := int(math.Sqrt(float64(n)))
	for n%n1 != 0 {
		n1--
	}
	if n1 < 16 {
		return nil
	}
	n2 := n / n1
	return &fourStep{n1: n1, n2: n2, p1: planFor(n1, inverse), p2: planFor(n2, inverse), twiddle: newTwoLevel(n, inverse)}
}

var (
	c64Pool  bufPool[complex64]
	bigPlans sync.Map // planKey -> *fourStep (nil: no split)
)

func getC64(n int) (*[]complex64, []complex64) {
	b := c64Pool.get(n)
	return b, (*b)[:n]
}

// fourStepFor returns the cached split of a length-n transform, or nil
// when n is short or has no useful split.
func fourStepFor(n int, inverse bool) *fourStep {
	if n < fourStepFrom {
		return nil
	}
	k := planKey{n, inverse}
	if f, ok := bigPlans.Load(k); ok {
		return f.(*fourStep)
	}
	f, _ := bigPlans.LoadOrStore(k, newFourStep(n, inverse))
	return f.(*fourStep)
}

// long reports whether a transform of the plan's length splits over the
// cores inside one vector (transform1) rather than vectors being shared
// among them.
func (p *fftPlan) long() bool {
	return p.n >= fourStepFrom || (p.blue != nil && p.blue.m >= fourStepFrom)
}

// run1 transforms one contiguous vector x of the plan's length in place,
// splitting long ones over the cores.
func (p *fftPlan) run1(x []complex64) { p.transform1(x, x, 1) }

// transform1 writes into dst scale times the transform of the contiguous
// vector src (which may be dst). The four-step split reads src once and
// writes dst once, so a transform out of place costs no copy, and the
// scale rides on its last pass instead of a pass of its own.
func (p *fftPlan) transform1(src, dst []complex64, scale float32) {
	if f := fourStepFor(p.n, p.inverse); f != nil {
		f.transform(src, dst, scale)
		return
	}
	if p.blue != nil && p.blue.m >= fourStepFrom {
		if &src[0] != &dst[0] {
			copy(dst, src)
		}
		p.blue.run1(dst, p.n)
		scaleC64(dst[:p.n], float64(scale))
		return
	}
	b, y := getC64(p.scratchLen(1))
	p.transform(src, dst, y, 1)
	scaleRow(dst[:p.n], scale)
	c64Pool.put(b)
}

// run1 is Bluestein's algorithm for one long vector, whose power-of-two
// transforms go through run1 in turn.
func (b *bluestein) run1(x []complex64, n int) {
	pa, a := getC64(b.m)
	for j := range n {
		a[j] = cmul(x[j], b.w[j])
	}
	clear(a[n:])
	b.fwd.run1(a)
	ParallelFor(b.m, 1<<14, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			a[j] = cmul(a[j], b.kernel[j])
		}
	})
	b.inv.run1(a)
	for j := range n {
		x[j] = cmul(a[j], b.w[j])
	}
	c64Pool.put(pa)
}

// tileCols is how many columns a tile of a column transform holds: enough
// that the inner loops of the Stockham stages run long and that the
// gather reads several cache lines a row (8 columns, one line a row, took
// about 5% more CPU time than 32 in the first pass of the four-step
// split of 1M points), few enough that a tile of a few thousand rows and
// its scratch stay in the L2 cache.
func tileCols(n, cols int) int {
	return max(1, min(cols, 32, 32768/n))
}

// transform writes into dst scale times the transform of src, which may
// be dst: the first pass reads all of src before the second writes dst.
func (f *fourStep) transform(src, dst []complex64, scale float32) {
	n1, n2 := f.n1, f.n2
	pt, t := getC64(n1 * n2)
	bc := tileCols(n1, n2)
	blocks := (n2 + bc - 1) / bc
	ParallelFor(blocks, 1, func(lo, hi int) {
		pb, tile := getC64(n1 * bc)
		ps, scratch := getC64(f.p1.scratchLen(bc))
		for blk := lo; blk < hi; blk++ {
			j0 := blk * bc
			w := min(bc, n2-j0)
			tl := tile[:n1*w]
			for j1 := range n1 {
				copy(tl[j1*w:j1*w+w], src[j1*n2+j0:j1*n2+j0+w])
			}
			f.p1.run(tl, scratch, w)
			for k1 := range n1 {
				e := k1 * j0 % (n1 * n2)
				row, dst := tl[k1*w:k1*w+w], t[k1*n2+j0:k1*n2+j0+w]
				for c := range row {
					dst[c] = cmul(row[c], f.twiddle.at(e))
					e += k1
					if e >= n1*n2 {
						e -= n1 * n2
					}
				}
			}
		}
		c64Pool.put(ps)
		c64Pool.put(pb)
	})
	const br = 16
	rblocks := (n1 + br - 1) / br
	ParallelFor(rblocks, 1, func(lo, hi int) {
		pb, buf := getC64(br * n2)
		ps, scratch := getC64(f.p2.scratchLen(1))
		for blk := lo; blk < hi; blk++ {
			k0 := blk * br
			rows := min(br, n1-k0)
			for r := range rows {
				f.p2.transform(t[(k0+r)*n2:(k0+r+1)*n2], buf[r*n2:r*n2+n2], scratch, 1)
			}
			for k2 := range n2 {
				col := dst[k2*n1+k0 : k2*n1+k0+rows]
				if scale == 1 {
					for r := range col {
						col[r] = buf[r*n2+k2]
					}
					continue
				}
				for r := range col {
					col[r] = rmul(buf[r*n2+k2], scale)
				}
			}
		}
		c64Pool.put(ps)
		c64Pool.put(pb)
	})
	c64Pool.put(pt)
}

// realPlan is the half-length complex transform behind a real one of even
// length n, with the twiddles ω_n^k that combine its halves.
type realPlan struct {
	half *fftPlan
	tw   twoLevel
}

var realPlans sync.Map // planKey -> *realPlan

func realPlanFor(n int, inverse bool) *realPlan {
	k := planKey{n, inverse}
	if p, ok := realPlans.Load(k); ok {
		return p.(*realPlan)
	}
	p, _ := realPlans.LoadOrStore(k, &realPlan{half: planFor(n/2, inverse), tw: newTwoLevel(n, inverse)})
	return p.(*realPlan)
}
