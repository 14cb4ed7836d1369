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

// run1 transforms one contiguous vector x of the plan's length in place,
// splitting long ones over the cores.
func (p *fftPlan) run1(x []complex64) {
	if f := fourStepFor(p.n, p.inverse); f != nil {
		f.run(x)
		return
	}
	if p.blue != nil && p.blue.m >= fourStepFrom {
		p.blue.run1(x, p.n)
		return
	}
	b, y := getC64(p.scratchLen(1))
	p.run(x, y, 1)
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
// that the inner loops of the Stockham stages run long, few enough that
// a tile of a few thousand rows stays in the L2 cache.
func tileCols(n, cols int) int {
	return max(1, min(cols, 16, 8192/n))
}

func (f *fourStep) run(x []complex64) {
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
				src, dst := x[j1*n2+j0:j1*n2+j0+w], tl[j1*w:j1*w+w]
				for c := range dst {
					dst[c] = src[c]
				}
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
				dst := x[k2*n1+k0 : k2*n1+k0+rows]
				for r := range dst {
					dst[r] = buf[r*n2+k2]
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
