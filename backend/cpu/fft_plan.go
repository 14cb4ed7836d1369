package cpu

import (
	"math"
	"math/bits"
	"sync"
)

// An FFT plan holds what a transform of one length and direction needs
// besides the data: its factorisation into Stockham stages with their
// twiddles, or Bluestein's chirp and the transform of its kernel. Plans
// are built once per length and direction and kept (plans), because
// twiddles cost a sine and a cosine each.

// bluesteinFrom is the smallest prime factor that Bluestein's algorithm
// takes over from a direct odd-radix stage: a radix-p stage costs about p
// complex multiply-adds per element, Bluestein three power-of-two
// transforms of at least twice the length (docs/performance.md).
const bluesteinFrom = 67

type fftStage struct {
	r, m  int         // radix, and the length of the transforms it leaves (ncur = r·m)
	inv   bool        // exp(+2πi/r) instead of exp(-2πi/r)
	tw    []complex64 // tw[p*(r-1)+k-1] = ω_ncur^(p·k), p < m, 0 < k < r
	roots []complex64 // ω_r^j, j < r, for a radix without its own butterfly
}

type fftPlan struct {
	n       int
	inverse bool
	stages  []fftStage
	blue    *bluestein
}

// bluestein computes a length-n transform as a convolution of length m
// (a power of two, m ≥ 2n-1): X_k = w_k Σ_j (x_j w_j) conj(w_(k-j)),
// w_j = exp(∓iπ j²/n).
type bluestein struct {
	m        int
	fwd, inv *fftPlan
	w        []complex64 // the chirp, n values
	kernel   []complex64 // FFT_m of conj(w) wrapped to length m, scaled by 1/m
}

type planKey struct {
	n       int
	inverse bool
}

var plans sync.Map // planKey -> *fftPlan

// planFor returns the cached plan of a length-n transform (n ≥ 1).
func planFor(n int, inverse bool) *fftPlan {
	k := planKey{n, inverse}
	if p, ok := plans.Load(k); ok {
		return p.(*fftPlan)
	}
	p, _ := plans.LoadOrStore(k, newPlan(n, inverse))
	return p.(*fftPlan)
}

// omega returns exp(∓2πi·num/den) rounded to complex64, computed in
// float64 from num reduced modulo den so that large arguments keep their
// accuracy.
func omega(num, den int, inverse bool) complex64 {
	num %= den
	if num < 0 {
		num += den
	}
	s, c := math.Sincos(2 * math.Pi * float64(num) / float64(den))
	if !inverse {
		s = -s
	}
	return complex64(complex(c, s))
}

// factorize splits n into radices: fours first (the cheapest butterfly
// per element), then 2, 3, 5, 7 and other odd primes. It reports false
// when a prime factor is at least bluesteinFrom.
func factorize(n int) ([]int, bool) {
	var rs []int
	for n%4 == 0 {
		rs = append(rs, 4)
		n /= 4
	}
	for n%2 == 0 {
		rs = append(rs, 2)
		n /= 2
	}
	for p := 3; p*p <= n; p += 2 {
		for n%p == 0 {
			if p >= bluesteinFrom {
				return nil, false
			}
			rs = append(rs, p)
			n /= p
		}
	}
	if n > 1 {
		if n >= bluesteinFrom {
			return nil, false
		}
		rs = append(rs, n)
	}
	return rs, true
}

func newPlan(n int, inverse bool) *fftPlan {
	p := &fftPlan{n: n, inverse: inverse}
	rs, ok := factorize(n)
	if !ok {
		p.blue = newBluestein(n, inverse)
		return p
	}
	ncur := n
	for _, r := range rs {
		m := ncur / r
		st := fftStage{r: r, m: m, inv: inverse, tw: make([]complex64, m*(r-1))}
		for q := range m {
			for k := 1; k < r; k++ {
				st.tw[q*(r-1)+k-1] = omega(q*k, ncur, inverse)
			}
		}
		if r > 5 {
			st.roots = make([]complex64, r)
			for j := range r {
				st.roots[j] = omega(j, r, inverse)
			}
		}
		p.stages = append(p.stages, st)
		ncur = m
	}
	return p
}

func newBluestein(n int, inverse bool) *bluestein {
	m := 1 << bits.Len(uint(2*n-2))
	b := &bluestein{m: m, fwd: planFor(m, false), inv: planFor(m, true), w: make([]complex64, n)}
	for j := range n {
		// j² mod 2n keeps the angle π·j²/n exact in float64.
		b.w[j] = omega(int((uint64(j)*uint64(j))%uint64(2*n)), 2*n, inverse)
	}
	k := make([]complex64, m)
	for j := range n {
		c := complex64(complex(real(b.w[j]), -imag(b.w[j])))
		k[j] = c
		if j > 0 {
			k[m-j] = c
		}
	}
	scratch := make([]complex64, b.fwd.scratchLen(1))
	b.fwd.run(k, scratch, 1)
	inv := float32(1 / float64(m))
	for i := range k {
		k[i] = rmul(k[i], inv)
	}
	b.kernel = k
	return b
}

// scratchLen is the number of complex64 values that run needs in y for s
// interleaved transforms.
func (p *fftPlan) scratchLen(s int) int {
	if p.blue != nil {
		return 3 * p.blue.m * s
	}
	return 2 * p.n * s
}

// run transforms s interleaved vectors of length n in place: x[j*s+q] is
// element j of vector q. y is scratch of at least scratchLen(s) values.
func (p *fftPlan) run(x, y []complex64, s int) { p.transform(x, x, y, s) }

// transform writes into dst the transform of src (which may be dst, and
// is otherwise left as it is), s interleaved vectors. Stockham stages
// cannot write the vector they read, so the stages go src → a → b → a …
// → dst through two scratch halves, and only a single stage in place
// needs a copy.
func (p *fftPlan) transform(src, dst, y []complex64, s int) {
	ns := p.n * s
	src, dst = src[:ns], dst[:ns]
	if p.blue != nil {
		copy(dst, src)
		p.blue.run(dst, y, p.n, s)
		return
	}
	k := len(p.stages)
	inPlace := &src[0] == &dst[0]
	a, b := y[:ns], y[ns:2*ns]
	ls := s
	for i := range p.stages {
		st := &p.stages[i]
		var to []complex64
		switch {
		case i == k-1 && !(inPlace && k == 1):
			to = dst
		case i%2 == 0:
			to = a
		default:
			to = b
		}
		stockhamStage(st, src, to, ls)
		ls *= st.r
		src = to
	}
	if &src[0] != &dst[0] {
		copy(dst, src)
	}
}

func (b *bluestein) run(x, y []complex64, n, s int) {
	m := b.m
	a, scratch := y[:m*s], y[m*s:3*m*s]
	for j := range n {
		w := b.w[j]
		row, xr := a[j*s:j*s+s], x[j*s:j*s+s]
		for q := range row {
			row[q] = cmul(xr[q], w)
		}
	}
	clear(a[n*s:])
	b.fwd.run(a, scratch, s)
	for j := range m {
		k := b.kernel[j]
		row := a[j*s : j*s+s]
		for q := range row {
			row[q] = cmul(row[q], k)
		}
	}
	b.inv.run(a, scratch, s)
	for j := range n {
		w := b.w[j]
		row, xr := a[j*s:j*s+s], x[j*s:j*s+s]
		for q := range row {
			xr[q] = cmul(row[q], w)
		}
	}
}
