package metal

import (
	"fmt"
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal/internal/plan"
)

// fftLineMax is the most elements one threadgroup transforms at once
// (CAP of fft_complex64_2048): a Stockham pass reads one half of its
// threadgroup memory and writes the other, and two halves of 2048
// complex64 fill the 32 KiB every Apple GPU gives a threadgroup. Lines
// of up to fftSmallCap elements go to fft_complex64_512, which takes a
// quarter of that, so that more of its threadgroups fit on a core at
// once.
const (
	fftLineMax  = 2048
	fftSmallCap = 512
)

// fftMaxPasses is FFT_MAXPASS: the radices of one line (at most 2048
// elements, so at most 7 passes: 2·3^6).
const fftMaxPasses = 12

// FFTSupported reports whether FFT transforms lines of length n on the
// GPU: n ≥ 1 whose prime factors are 2, 3, 5 and 7 (as MLX's Metal FFT),
// and either at most 2048 or a product n1·n2 of two factors of at most
// 2048 each. That is every such length below 7^7 = 823543 and all but 40
// of those up to 2^22, the longest. Other lengths run on the CPU.
func FFTSupported(n int) bool {
	_, _, ok := fftSplit(n)
	return ok
}

// fftSplit returns how FFT transforms lines of length n: in one pass
// through threadgroup memory (n1 = n, n2 = 1), or in four steps of n2
// transforms of length n1 and n1 of length n2, n1 ≤ n2 as close to
// √n as the factors allow: both passes load and store strided lines,
// and reach neighbouring addresses only through the several lines a
// threadgroup holds, 2048/n1 in the first and 2048/n2 in the second.
func fftSplit(n int) (n1, n2 int, ok bool) {
	if n < 1 {
		return 0, 0, false
	}
	m := n
	for _, p := range []int{2, 3, 5, 7} {
		for m%p == 0 {
			m /= p
		}
	}
	if m != 1 {
		return 0, 0, false
	}
	if n <= fftLineMax {
		return n, 1, true
	}
	if n > fftLineMax*fftLineMax {
		return 0, 0, false
	}
	d := 1
	for d*d <= n {
		d++
	}
	for d--; d >= 1 && n/d <= fftLineMax; d-- {
		if n%d == 0 {
			return d, n / d, true
		}
	}
	return 0, 0, false
}

// fftRadices returns the radix of each Stockham pass for a line of n (2,
// 3, 5, 7 smooth, at most fftLineMax): radix 8 while it divides, then 4
// and 2, then 7, 5 and 3, so that a power of two takes the fewest
// passes.
func fftRadices(n int) []int {
	var rs []int
	for _, r := range []int{8, 4, 2, 7, 5, 3} {
		for n%r == 0 {
			rs = append(rs, r)
			n /= r
		}
	}
	return rs
}

// fftLines addresses the lines of one side of an fft_complex64_<cap> launch:
// element i of line g is at off + (g/g_)·a + (g%g_)·b + i·s; cols loads
// or stores across lines first (when the lines, not the elements, are
// neighbours in memory).
type fftLines struct {
	off, g, a, b, s int
	cols            bool
}

// FFT plans the discrete Fourier transform of every line of in along its
// last axis into out: out[..., k] = Σ_j in[..., j]·exp(∓2πi·jk/n), with
// the minus sign forward and the plus sign when inverse is set, and no
// scaling (the caller divides by n for numpy's "backward" norm). in and
// out are complex64 of one shape; out is row-major and does not overlap
// in, which may have any strides. The length n of the last axis must be
// one FFTSupported accepts (a 0-d array is a line of 1). Lines of up to
// 2048 elements take one launch; longer ones are transformed in four
// steps (n = n1·n2: n2 transforms of n1 elements read n2 apart, twiddled
// and stored as rows of out, then n1 transforms of n2 elements in place),
// so they take two.
func FFT(out, in View, inverse bool) ([]Launch, error) {
	const op = "metal.FFT"
	if err := checkViews(op, []string{"output", "input"}, out, in); err != nil {
		return nil, err
	}
	if in.DType != array.Complex64 || out.DType != array.Complex64 {
		return nil, array.Errorf(op, "input %v and output %v: the FFT takes and gives complex64", in.DType, out.DType)
	}
	if !slices.Equal(out.Shape, in.Shape) {
		return nil, array.Errorf(op, "output shape %v, want the input's %v", out.Shape, in.Shape)
	}
	if !rowMajor(out) {
		return nil, array.Errorf(op, "output of shape %v and strides %v is not row-major", out.Shape, out.Strides)
	}
	nd := len(in.Shape)
	n, s := 1, 0
	if nd > 0 {
		n, s = in.Shape[nd-1], in.Strides[nd-1]
	}
	if out.Size() == 0 {
		return nil, nil
	}
	n1, n2, ok := fftSplit(n)
	if !ok {
		return nil, array.Errorf(op, "last axis of shape %v has length %d: the GPU transforms lengths whose prime factors are 2, 3, 5 and 7, up to 2048 or a product of two such lengths", in.Shape, n)
	}
	batch := out.Size() / n
	var ls []Launch
	// The lines of in must be one batch dimension apart; other layouts are
	// copied first: into out, which a one-pass transform may read in
	// place, or into scratch for the four-step one, whose first pass
	// writes rows that other threadgroups have yet to read.
	bl := collapse(in.Shape[:max(nd-1, 0)], View{Strides: in.Strides[:max(nd-1, 0)]})
	bs := 0
	switch len(bl.shape) {
	case 0:
	case 1:
		bs = bl.strides[0][0]
	default:
		src := out
		if n2 > 1 {
			mem, err := newScratch(out.Size()*8, out, in)
			if err != nil {
				return nil, err
			}
			src = View{Mem: mem, DType: array.Complex64, Shape: out.Shape, Strides: out.Strides}
		}
		c, err := Copy(src, in)
		if err != nil {
			return nil, err
		}
		ls, in, bs, s = c, src, n, 1
	}
	inArg, inOff := bindAt(in, false)
	outArg, outOff := bindAt(out, true)
	sign := -1
	if inverse {
		sign = 1
	}
	if n2 == 1 {
		return append(ls, fftLaunch(inArg, outArg, n, batch, sign, 0,
			fftLines{off: inOff, g: 1, a: bs, s: s, cols: iabs(s) != 1 && iabs(bs) == 1},
			fftLines{off: outOff, g: 1, a: n, s: 1})), nil
	}
	// First pass: line g = b·n2 + j2 is column j2 of row b seen as n1×n2;
	// its k1-th result, times exp(∓2πi·j2·k1/n), goes to element
	// k1 + n1·j2 of the row, where the second pass reads it.
	ls = append(ls, fftLaunch(inArg, outArg, n1, batch*n2, sign, n,
		fftLines{off: inOff, g: n2, a: bs, b: s, s: s * n2, cols: iabs(s) == 1},
		fftLines{off: outOff, g: n2, a: n, b: n1, s: 1}))
	// Second pass: line g = b·n1 + k1 is elements k1 + n1·j2 of row b; its
	// k2-th result is element k1 + n1·k2 of the transform, the place it
	// was read from.
	rows := fftLines{off: outOff, g: n1, a: n, b: 1, s: n1, cols: true}
	inPlace := outArg
	inPlace.Write = false
	return append(ls, fftLaunch(inPlace, outArg, n2, batch*n1, sign, 0, rows, rows)), nil
}

// fftLaunch is one fft_complex64_<cap> launch over lines lines of n
// elements: as many lines per threadgroup as fit its memory while at
// least 64 threadgroups have work, and about eight elements a thread per
// pass. twN > 0 multiplies element i of line g by
// exp(sign·2πi·(g mod dst.g)·i/twN) on store.
func fftLaunch(in, out bufArg, n, lines, sign, twN int, src, dst fftLines) Launch {
	capacity := fftLineMax
	if n <= fftSmallCap {
		capacity = fftSmallCap
	}
	per := max(1, min(capacity/n, (lines+63)/64))
	tg := min(256, max(32, (per*n/8+31)/32*32))
	groups := cappedGroups((lines + per - 1) / per)
	rs := fftRadices(n)
	radix := make([]int, fftMaxPasses)
	copy(radix, rs)
	p := params{}.add(n, lines, per, sign, len(rs)).add(radix...).
		add(src.off, src.g, src.a, src.b, src.s, b2i(src.cols)).
		add(dst.off, dst.g, dst.a, dst.b, dst.s, b2i(dst.cols)).
		add(twN)
	return Launch{Library: "fft.metal", Kernel: fmt.Sprintf("fft_complex64_%d", capacity), Buffers: []bufArg{in, out},
		Params: p.bytes(), Grid: [3]int{groups * tg, 1, 1}, Group: [3]int{tg, 1, 1}, Fit: plan.FitGroups}
}

func iabs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
