package cpu

import (
	"runtime"
	"sync"
	"unsafe"

	"github.com/fathom-go/fathom/array"
)

// ConvParams are a convolution's parameters over d spatial axes, each
// slice d long (MLX's conv_general). Padding may be negative, which crops:
// the derivatives of a strided convolution need that.
type ConvParams struct {
	Stride, PadLo, PadHi, KernelDilation, InputDilation []int
	Groups                                              int
	Flip                                                bool
}

// Conv computes out = conv(x, w), channels last: x is [N, ...in, C_in]
// and w is [C_out, ...kernel, C_in/groups], both read through any
// strides; out is row-major [N, ...out, C_out], its spatial sizes those
// that p gives. Output position o reads the input, dilated by
// InputDilation and padded, at o·Stride + k·KernelDilation for kernel
// position k (mirrored when Flip is set). float16 and bfloat16 are
// widened to float32, accumulate in float32 and round once.
//
// The general path is an im2col product on the GEMM behind MatMul: the
// patches of a tile of output rows, cut into depth blocks when they are
// long, are gathered into a pooled buffer of bounded size and multiplied
// by the weight of each group, tile by tile, the tiles shared out over
// cores (or, where there are few rows and many depth blocks, the depth
// blocks). A convolution whose groups each have one input and one output
// channel (depthwise) runs a direct loop on the vector multiply-add
// instead, where the GEMM would be a product one column wide.
func Conv(out, x, w Buf, p ConvParams) error {
	const op = "cpu.Conv"
	if x.DType != out.DType || w.DType != out.DType {
		return array.Errorf(op, "dtypes %v and %v -> %v differ", x.DType, w.DType, out.DType)
	}
	if !out.RowMajor() {
		return array.Errorf(op, "out of shape %v is not row-major", out.Shape)
	}
	pl, err := newConvPlan(out, x, w, p)
	if err != nil {
		return err
	}
	if out.Size() == 0 {
		return nil
	}
	if pl.k == 0 {
		es := out.DType.Size()
		clear(out.Data[out.Offset*es : (out.Offset+out.Size())*es])
		return nil
	}
	switch out.DType {
	case array.Float32:
		convRun(pl, elems[float32](x), elems[float32](w), elems[float32](out), loadSame[float32], storeSame[float32])
	case array.Float64:
		convRun(pl, elems[float64](x), elems[float64](w), elems[float64](out), loadSame[float64], storeSame[float64])
	case array.Float16:
		convRun(pl, elems[array.F16](x), elems[array.F16](w), elems[array.F16](out), widen[array.F16], storeHalf(array.NewF16))
	case array.BFloat16:
		convRun(pl, elems[array.BF16](x), elems[array.BF16](w), elems[array.BF16](out), widen[array.BF16], storeHalf(array.NewBF16))
	default:
		return array.Errorf(op, "dtype %v not supported: convolution is for floats", out.DType)
	}
	return nil
}

// convPlan is one Conv call's geometry, in elements.
type convPlan struct {
	d                      int
	n, cin, cout, cig, cog int
	groups                 int
	in, kern, outSp        []int
	stride, lo, kdil, idil []int
	xs                     []int // x's strides: batch, spatial axes, channel
	xoff                   int
	ws                     []int // w's strides: out channel, kernel axes, in channel
	woff                   int
	rows, kk, k            int // output positions, kernel positions, patch length
	flip                   bool
	kpos                   [][]int // each kernel position's dilated offsets
	outOff                 int
	// runs: the channels of one group at consecutive kernel positions
	// along the last spatial axis are one contiguous run of x.
	runs bool
}

func newConvPlan(out, x, w Buf, p ConvParams) (*convPlan, error) {
	const op = "cpu.Conv"
	d := len(x.Shape) - 2
	if d < 1 || len(w.Shape) != d+2 || len(out.Shape) != d+2 || len(p.Stride) != d || len(p.PadLo) != d ||
		len(p.PadHi) != d || len(p.KernelDilation) != d || len(p.InputDilation) != d || p.Groups < 1 {
		return nil, array.Errorf(op, "shapes %v, %v -> %v do not fit %d spatial axes and parameters %+v", x.Shape, w.Shape, out.Shape, d, p)
	}
	pl := &convPlan{
		d: d, n: x.Shape[0], cin: x.Shape[d+1], cout: w.Shape[0], groups: p.Groups,
		in: x.Shape[1 : d+1], kern: w.Shape[1 : d+1], outSp: out.Shape[1 : d+1],
		stride: p.Stride, lo: p.PadLo, kdil: p.KernelDilation, idil: p.InputDilation,
		xs: x.Strides, xoff: x.Offset, ws: w.Strides, woff: w.Offset, flip: p.Flip, outOff: out.Offset,
	}
	if pl.cin%pl.groups != 0 || pl.cout%pl.groups != 0 || w.Shape[d+1] != pl.cin/pl.groups ||
		out.Shape[0] != pl.n || out.Shape[d+1] != pl.cout {
		return nil, array.Errorf(op, "shapes %v, %v -> %v do not fit %d groups", x.Shape, w.Shape, out.Shape, p.Groups)
	}
	pl.cig, pl.cog = pl.cin/pl.groups, pl.cout/pl.groups
	for i := range d {
		if p.Stride[i] < 1 || p.KernelDilation[i] < 1 || p.InputDilation[i] < 1 {
			return nil, array.Errorf(op, "strides and dilations %v, %v, %v must be positive", p.Stride, p.KernelDilation, p.InputDilation)
		}
		span := (pl.in[i]-1)*pl.idil[i] + 1 + p.PadLo[i] + p.PadHi[i] - (pl.kern[i]-1)*pl.kdil[i]
		if pl.in[i] == 0 || pl.kern[i] == 0 || span < 1 {
			if pl.outSp[i] != 0 {
				return nil, array.Errorf(op, "output size %d on spatial axis %d of %v, want 0", pl.outSp[i], i, out.Shape)
			}
		} else if want := (span-1)/pl.stride[i] + 1; pl.outSp[i] != want {
			return nil, array.Errorf(op, "output size %d on spatial axis %d of %v, want %d", pl.outSp[i], i, out.Shape, want)
		}
	}
	pl.rows = pl.n
	for _, s := range pl.outSp {
		pl.rows *= s
	}
	pl.kk = 1
	for _, s := range pl.kern {
		pl.kk *= s
	}
	pl.k = pl.kk * pl.cig
	pl.runs = pl.groups == 1 && pl.kdil[d-1] == 1 && pl.idil[d-1] == 1 && pl.xs[d+1] == 1 && pl.xs[d] == pl.cin
	pl.kpos = make([][]int, pl.kk)
	for kp := range pl.kpos {
		pos := make([]int, d)
		r := kp
		for i := d - 1; i >= 0; i-- {
			pos[i] = r % pl.kern[i] * pl.kdil[i]
			r /= pl.kern[i]
		}
		pl.kpos[kp] = pos
	}
	return pl, nil
}

// weightIndex returns the storage offset of w[co, kernel position kp, ci]
// as the product uses it: mirrored on every kernel axis under flip.
func (p *convPlan) weightIndex(co, kp, ci int) int {
	off := p.woff + co*p.ws[0] + ci*p.ws[p.d+1]
	for i := p.d - 1; i >= 0; i-- {
		k := kp % p.kern[i]
		kp /= p.kern[i]
		if p.flip {
			k = p.kern[i] - 1 - k
		}
		off += k * p.ws[i+1]
	}
	return off
}

// rowBase writes the input coordinates, in the dilated and padded frame,
// where output row r's window starts, and returns its batch offset in x.
func (p *convPlan) rowBase(r int, base []int) int {
	for i := p.d - 1; i >= 0; i-- {
		o := r % p.outSp[i]
		r /= p.outSp[i]
		base[i] = o*p.stride[i] - p.lo[i]
	}
	return p.xoff + r*p.xs[0]
}

// inputAt returns the offset in x of the channels at base+pos, or false
// where that falls in padding or between dilated input elements.
func (p *convPlan) inputAt(boff int, base, pos []int) (int, bool) {
	off := boff
	for i, b := range base {
		q := b + pos[i]
		if q < 0 {
			return 0, false
		}
		if dl := p.idil[i]; dl != 1 {
			if q%dl != 0 {
				return 0, false
			}
			q /= dl
		}
		if q >= p.in[i] {
			return 0, false
		}
		off += q * p.xs[i+1]
	}
	return off, true
}

// loadSame copies n elements of src from off, cs apart, into dst.
func loadSame[T float32 | float64](dst, src []T, off, cs int) {
	if cs == 1 {
		copy(dst, src[off:off+len(dst)])
		return
	}
	for i := range dst {
		dst[i] = src[off+i*cs]
	}
}

// storeSame copies a row of results into out.
func storeSame[T float32 | float64](dst, src []T) { copy(dst, src) }

// storeHalf returns the store that rounds float32 results into S.
func storeHalf[S half](round func(float32) S) func(dst []S, src []float32) {
	return func(dst []S, src []float32) {
		for i, v := range src {
			dst[i] = round(v)
		}
	}
}

// convTileBytes bounds a tile of patches: small enough to stay in L2
// beside the weight while the product packs it.
const convTileBytes = 256 << 10

// convDepth bounds the patch length a tile holds. Longer patches (the
// weight's cotangent, whose patches run over a whole batch of images)
// are cut into depth blocks whose products add up, so that a tile stays
// within convTileBytes and still has enough rows to amortise packing the
// weight for it.
const convDepth = 512

// convRun computes the convolution with S the storage type and T the
// type the sums are kept in.
func convRun[S any, T float32 | float64](p *convPlan, X, W, O []S, load func(dst []T, src []S, off, cs int), store func(dst []S, src []T)) {
	// The weight, mirrored if need be, as [C_out, kernel positions, C_in/groups]
	// in T: the B operand of every group's product, read K×C_out/groups.
	wbuf := poolFor[T]().get(p.cout * p.k)
	defer poolFor[T]().put(wbuf)
	wt := (*wbuf)[:p.cout*p.k]
	for co := range p.cout {
		for kp := range p.kk {
			load(wt[(co*p.kk+kp)*p.cig:(co*p.kk+kp+1)*p.cig], W, p.weightIndex(co, kp, 0), p.ws[p.d+1])
		}
	}
	if p.cig == 1 && p.cog == 1 {
		convDepthwise(p, X, wt, O, load, store)
		return
	}
	if p.scatters() {
		convScatter(p, X, wt, O, load, store)
		return
	}
	if xs, ok := any(X).([]T); ok && (p.implicit() || shortRowsVirtual(p, kernelFor[T]())) {
		convImplicit(p, xs, wt, any(O).([]T))
		return
	}
	var z T
	es := int(unsafe.Sizeof(z))
	kc := min(p.k, convDepth)
	depths := ceilDiv(p.k, kc)
	kc = ceilDiv(p.k, depths)
	tile := max(kernelFor[T]().mr, min(p.rows, convTileBytes/es/kc))
	tiles := ceilDiv(p.rows, tile)
	workers := runtime.GOMAXPROCS(0)
	flops := 2 * p.rows * p.k * p.cout
	// Tiles go to cores whole when there are enough to go round; fewer,
	// and each tile's product is spread over the cores instead.
	split := tiles >= 2*workers && flops >= parallelFlops
	run := func(lo, hi int, parallel bool) {
		pbuf := poolFor[T]().get(tile * kc)
		defer poolFor[T]().put(pbuf)
		var cbuf, tbuf *[]T
		_, direct := any(O).([]T)
		if !direct {
			cbuf = poolFor[T]().get(tile * p.cout)
			defer poolFor[T]().put(cbuf)
		}
		if depths > 1 {
			tbuf = poolFor[T]().get(tile * p.cog)
			defer poolFor[T]().put(tbuf)
		}
		base := make([]int, p.d)
		for t := lo; t < hi; t++ {
			r0 := t * tile
			r1 := min(r0+tile, p.rows)
			m := r1 - r0
			var c []T
			if direct {
				c = any(O).([]T)[p.outOff+r0*p.cout:]
			} else {
				c = (*cbuf)[:m*p.cout]
			}
			for g := range p.groups {
				cg := c[g*p.cog:]
				for j := range depths {
					k0 := j * kc
					k1 := min(k0+kc, p.k)
					kw := k1 - k0
					patches := (*pbuf)[:m*kw]
					im2col(p, patches, X, r0, r1, g, k0, k1, base, load)
					a, b := mat[T]{patches, 0, kw, 1}, mat[T]{wt, g*p.cog*p.k + k0, 1, p.k}
					if j == 0 {
						gemm(m, p.cog, kw, a, b, cg, p.cout, parallel)
						continue
					}
					part := (*tbuf)[:m*p.cog]
					gemm(m, p.cog, kw, a, b, part, p.cog, parallel)
					for i := range m {
						row := cg[i*p.cout : i*p.cout+p.cog]
						for jj, v := range part[i*p.cog : (i+1)*p.cog] {
							row[jj] += v
						}
					}
				}
			}
			if !direct {
				store(O[p.outOff+r0*p.cout:p.outOff+r1*p.cout], c)
			}
		}
	}
	if split {
		ParallelFor(tiles, 1, func(lo, hi int) { run(lo, hi, false) })
		return
	}
	if depths >= 2*workers && flops >= parallelFlops && p.rows*p.cout <= convPartialElems {
		convDepthSplit(p, X, wt, O, kc, depths, tile, load, store)
		return
	}
	run(0, tiles, flops >= parallelFlops)
}

// convPartialElems bounds the output that convDepthSplit gives each
// share of the depth blocks a copy of.
const convPartialElems = 1 << 18

// convDepthSplit is convRun for few output rows with long patches (the
// weight's cotangent: C_in/groups × kernel rows, patches over a whole
// batch): the depth blocks, rather than the rows, are shared out over
// cores, each share summed into its own copy of the output and the
// copies added at the end.
func convDepthSplit[S any, T float32 | float64](p *convPlan, X []S, wt []T, O []S, kc, depths, tile int, load func(dst []T, src []S, off, cs int), store func(dst []S, src []T)) {
	n := p.rows * p.cout
	total := make([]T, n)
	var mu sync.Mutex
	ParallelFor(depths, 1, func(lo, hi int) {
		partial := make([]T, n)
		pbuf := poolFor[T]().get(tile * kc)
		tbuf := poolFor[T]().get(tile * p.cog)
		defer poolFor[T]().put(pbuf)
		defer poolFor[T]().put(tbuf)
		base := make([]int, p.d)
		for r0 := 0; r0 < p.rows; r0 += tile {
			r1 := min(r0+tile, p.rows)
			m := r1 - r0
			for g := range p.groups {
				cg := partial[r0*p.cout+g*p.cog:]
				for j := lo; j < hi; j++ {
					k0 := j * kc
					k1 := min(k0+kc, p.k)
					kw := k1 - k0
					patches := (*pbuf)[:m*kw]
					im2col(p, patches, X, r0, r1, g, k0, k1, base, load)
					part := (*tbuf)[:m*p.cog]
					gemm(m, p.cog, kw, mat[T]{patches, 0, kw, 1}, mat[T]{wt, g*p.cog*p.k + k0, 1, p.k}, part, p.cog, false)
					for i := range m {
						row := cg[i*p.cout : i*p.cout+p.cog]
						for jj, v := range part[i*p.cog : (i+1)*p.cog] {
							row[jj] += v
						}
					}
				}
			}
		}
		mu.Lock()
		for i, v := range partial {
			total[i] += v
		}
		mu.Unlock()
	})
	store(O[p.outOff:p.outOff+n], total)
}

// im2col gathers columns [k0, k1) of the patches of output rows [r0, r1)
// for group g into dst, a patch being kernel positions × C_in/groups
// long, with zeros where the window falls outside the input.
func im2col[S any, T float32 | float64](p *convPlan, dst []T, X []S, r0, r1, g, k0, k1 int, base []int, load func(dst []T, src []S, off, cs int)) {
	cs := p.xs[p.d+1]
	goff := g * p.cig * cs
	kw := k1 - k0
	if p.runs && k0 == 0 && k1 == p.k {
		im2colRuns(p, dst, X, r0, r1, base, load)
		return
	}
	for r := r0; r < r1; r++ {
		row := dst[(r-r0)*kw : (r-r0+1)*kw]
		boff := p.rowBase(r, base)
		for kp := k0 / p.cig; kp*p.cig < k1; kp++ {
			c0, c1 := max(k0, kp*p.cig), min(k1, (kp+1)*p.cig)
			seg := row[c0-k0 : c1-k0]
			if off, ok := p.inputAt(boff, base, p.kpos[kp]); ok {
				load(seg, X, off+goff+(c0-kp*p.cig)*cs, cs)
			} else {
				clear(seg)
			}
		}
	}
}

// im2colRuns is im2col for whole patches where p.runs holds: a row of
// the kernel that lies wholly inside the input along the last spatial
// axis is one copy.
func im2colRuns[S any, T float32 | float64](p *convPlan, dst []T, X []S, r0, r1 int, base []int, load func(dst []T, src []S, off, cs int)) {
	d := p.d
	kw := p.kern[d-1]
	run := kw * p.cig
	for r := r0; r < r1; r++ {
		row := dst[(r-r0)*p.k : (r-r0+1)*p.k]
		boff := p.rowBase(r, base)
		for kp := 0; kp < p.kk; kp += kw {
			seg := row[kp*p.cig : kp*p.cig+run]
			if q := base[d-1]; q >= 0 && q+kw <= p.in[d-1] {
				if off, ok := p.inputAt(boff, base, p.kpos[kp]); ok {
					load(seg, X, off, 1)
				} else {
					clear(seg)
				}
				continue
			}
			for j := range kw {
				part := seg[j*p.cig : (j+1)*p.cig]
				if off, ok := p.inputAt(boff, base, p.kpos[kp+j]); ok {
					load(part, X, off, 1)
				} else {
					clear(part)
				}
			}
		}
	}
}

// convDepthwise is the direct loop for groups of one input and one
// output channel: each output row sums, kernel position by position, the
// input row of channels there times that position's weights. wt holds
// the weight as [C, kernel positions].
func convDepthwise[S any, T float32 | float64](p *convPlan, X []S, wt []T, O []S, load func(dst []T, src []S, off, cs int), store func(dst []S, src []T)) {
	c := p.cout
	// Transposed to [kernel positions, C] so that each position's weights
	// are one run beside the channels they multiply.
	wk := make([]T, p.kk*c)
	for ch := range c {
		for kp := range p.kk {
			wk[kp*c+ch] = wt[ch*p.kk+kp]
		}
	}
	cs := p.xs[p.d+1]
	madd := mulAddFor[T]()
	xs, inPlace := any(X).([]T)
	inPlace = inPlace && cs == 1
	d := p.d
	if inPlace && p.stride[d-1] == 1 && p.idil[d-1] == 1 && p.xs[d] == c {
		convDepthwiseLines(p, xs, wk, O, madd, store)
		return
	}
	ParallelFor(p.rows, max(1, grain/max(1, p.kk*c)), func(lo, hi int) {
		acc := make([]T, c)
		in := make([]T, c)
		base := make([]int, p.d)
		for r := lo; r < hi; r++ {
			clear(acc)
			boff := p.rowBase(r, base)
			for kp, pos := range p.kpos {
				off, ok := p.inputAt(boff, base, pos)
				if !ok {
					continue
				}
				row := in
				if inPlace {
					row = xs[off : off+c]
				} else {
					load(in, X, off, cs)
				}
				madd(acc, row, wk[kp*c:(kp+1)*c], acc)
			}
			store(O[p.outOff+r*c:p.outOff+(r+1)*c], acc)
		}
	})
}

// convDepthwiseLines is convDepthwise where the last spatial axis has
// stride 1 and x holds its positions' channels contiguously: then a
// kernel position's terms for a whole line of outputs along that axis
// are one contiguous run of x, multiplied by that position's weights
// repeated along the line, in one vector multiply-add instead of one a
// position.
func convDepthwiseLines[S any, T float32 | float64](p *convPlan, X, wk []T, O []S, madd func(d, a, b, c []T), store func(dst []S, src []T)) {
	c, d := p.cout, p.d
	wo, win := p.outSp[d-1], p.in[d-1]
	line := wo * c
	wrep := make([]T, p.kk*line)
	for kp := range p.kk {
		for o := range wo {
			copy(wrep[kp*line+o*c:kp*line+(o+1)*c], wk[kp*c:(kp+1)*c])
		}
	}
	lines := p.rows / wo
	ParallelFor(lines, max(1, grain/max(1, p.kk*line)), func(lo, hi int) {
		acc := make([]T, line)
		base := make([]int, d)
		for l := lo; l < hi; l++ {
			clear(acc)
			boff := p.rowBase(l*wo, base)
			for kp, pos := range p.kpos {
				// Outputs o whose input o - padding + pos lies in [0, win).
				q0 := base[d-1] + pos[d-1]
				a, b := max(0, -q0), min(wo, win-q0)
				if a >= b {
					continue
				}
				off, ok := p.inputAt(boff, base[:d-1], pos[:d-1])
				if !ok {
					continue
				}
				off += (q0 + a) * c
				n := (b - a) * c
				madd(acc[a*c:a*c+n], X[off:off+n], wrep[kp*line:kp*line+n], acc[a*c:a*c+n])
			}
			store(O[p.outOff+l*line:p.outOff+(l+1)*line], acc)
		}
	})
}

// mulAddFor returns d = a·b + c over slices of T: the vector kernel for
// float32 where the CPU has one.
func mulAddFor[T float32 | float64]() func(d, a, b, c []T) {
	if f, ok := any(vecMulAdd).(func(d, a, b, c []T)); ok {
		return f
	}
	return mulAdd[T]
}

// scatters reports whether the input is dilated: then most of a patch
// is zeros between the input's elements (the input's cotangent of a
// strided convolution, whose input is dilated by the stride), and
// convScatter, which reads each input element once, does a fraction of
// the gathering product's work.
func (p *convPlan) scatters() bool {
	for _, d := range p.idil {
		if d > 1 {
			return true
		}
	}
	return false
}

// convScatterRows is the number of input positions a product of
// convScatter takes at a time.
const convScatterRows = 256

// convScatter computes the convolution from the input's side: each
// input element x[i] times the weight at every kernel position k adds
// into the output position o whose window puts k on it (o·stride =
// i·InputDilation + PadLo − k·KernelDilation). The products, input
// positions × (output channels, kernel positions) of each group, are
// GEMMs of x's rows with the weight; their columns are then added into
// the output. Images are shared out over cores, whose outputs do not
// overlap; with fewer images than that, each product is.
func convScatter[S any, T float32 | float64](p *convPlan, X []S, wt []T, O []S, load func(dst []T, src []S, off, cs int), store func(dst []S, src []T)) {
	d := p.d
	ins := 1
	for _, s := range p.in {
		ins *= s
	}
	outs := p.rows / p.n
	cols := p.cog * p.kk
	workers := runtime.GOMAXPROCS(0)
	flops := 2 * p.n * ins * p.cin * cols
	split := p.n >= 2*workers && flops >= parallelFlops
	cs := p.xs[d+1]
	// land[a][c·kern + k] is the output coordinate on axis a that input
	// coordinate c reaches through kernel index k, or -1 for none.
	land := make([][]int, d)
	for a := range d {
		kn := p.kern[a]
		land[a] = make([]int, p.in[a]*kn)
		for c := range p.in[a] {
			for k := range kn {
				q := c*p.idil[a] + p.lo[a] - k*p.kdil[a]
				o := -1
				if q >= 0 && q%p.stride[a] == 0 && q/p.stride[a] < p.outSp[a] {
					o = q / p.stride[a]
				}
				land[a][c*kn+k] = o
			}
		}
	}
	kidx := make([]int, p.kk*d) // kernel position kp's index on each axis
	for kp := range p.kk {
		r := kp
		for a := d - 1; a >= 0; a-- {
			kidx[kp*d+a] = r % p.kern[a]
			r /= p.kern[a]
		}
	}
	// The weight of each group as the B operand, [C_in/groups, (kernel
	// position, output channel)], so that the columns an input row adds
	// into one output position are contiguous.
	wb := make([]T, p.groups*p.cig*cols)
	for g := range p.groups {
		for ci := range p.cig {
			for kp := range p.kk {
				for j := range p.cog {
					wb[(g*p.cig+ci)*cols+kp*p.cog+j] = wt[(g*p.cog+j)*p.k+kp*p.cig+ci]
				}
			}
		}
	}
	image := func(n int, parallel bool, acc, xb, cb []T) {
		clear(acc)
		pos := make([]int, d)
		offs := make([]int, convScatterRows)
		for i0 := 0; i0 < ins; i0 += convScatterRows {
			i1 := min(i0+convScatterRows, ins)
			m := i1 - i0
			offs := offs[:m]
			for i := i0; i < i1; i++ {
				off, r := p.xoff+n*p.xs[0], i
				for a := d - 1; a >= 0; a-- {
					off += r % p.in[a] * p.xs[a+1]
					r /= p.in[a]
				}
				offs[i-i0] = off
			}
			for g := range p.groups {
				xg := xb[:m*p.cig]
				for i, off := range offs {
					load(xg[i*p.cig:(i+1)*p.cig], X, off+g*p.cig*cs, cs)
				}
				cg := cb[:m*cols]
				gemm(m, cols, p.cig, mat[T]{xg, 0, p.cig, 1}, mat[T]{wb, g * p.cig * cols, cols, 1}, cg, cols, parallel)
				for i := i0; i < i1; i++ {
					r := i
					for a := d - 1; a >= 0; a-- {
						pos[a] = r % p.in[a] * p.kern[a]
						r /= p.in[a]
					}
					row := cg[(i-i0)*cols : (i-i0+1)*cols]
				kernel:
					for kp := range p.kk {
						o := 0
						for a, k := range kidx[kp*d : (kp+1)*d] {
							v := land[a][pos[a]+k]
							if v < 0 {
								continue kernel
							}
							o = o*p.outSp[a] + v
						}
						dst := acc[o*p.cout+g*p.cog : o*p.cout+(g+1)*p.cog]
						for j, v := range row[kp*p.cog : (kp+1)*p.cog] {
							dst[j] += v
						}
					}
				}
			}
		}
		store(O[p.outOff+n*outs*p.cout:p.outOff+(n+1)*outs*p.cout], acc)
	}
	pool := poolFor[T]()
	type scratch struct{ acc, xb, cb *[]T }
	newScratch := func() *scratch {
		return &scratch{pool.get(outs * p.cout), pool.get(convScatterRows * p.cig), pool.get(convScatterRows * cols)}
	}
	run := func(s *scratch, n int, parallel bool) {
		image(n, parallel, (*s.acc)[:outs*p.cout], *s.xb, *s.cb)
	}
	release := func(s *scratch) {
		pool.put(s.acc)
		pool.put(s.xb)
		pool.put(s.cb)
	}
	if split {
		runItems(workers, p.n, newScratch, func(s *scratch, n int) { run(s, n, false) }, release)
		return
	}
	s := newScratch()
	for n := range p.n {
		run(s, n, flops >= parallelFlops)
	}
	release(s)
}

// implicitMinRun is the shortest kernel row (kernel width × input
// channels) that convImplicit takes: its depth blocks are kernel rows,
// and shorter ones would load and store the output tile too often for
// the work between.
const implicitMinRun = 64

// implicitMaxDepth bounds a depth block of convImplicit, so that a
// panel of the micro-kernel's rows stays in L1.
const implicitMaxDepth = 384

// implicitPanels is the number of the micro-kernel's row panels in a
// work item of convImplicit: the item's output tile and packed patches
// stay in L2.
const implicitPanels = 16

// implicitMaxCout bounds the output channels convImplicit takes: each
// depth block of its packed weight, a kernel row × C_out, is streamed
// from L2 for every panel, and the GEMM's own blocking serves wider
// outputs better.
const implicitMaxCout = 512

// implicit reports whether convImplicit applies: one group, a dense
// input whose pixels hold their channels contiguously, no dilation along
// the last axis (so that a kernel row of a window is one run of x), no
// input dilation, kernel rows long enough to be depth blocks, and not too
// many output channels.
func (p *convPlan) implicit() bool {
	return p.runs && !p.scatters() && p.kern[p.d-1]*p.cig >= implicitMinRun && p.cout <= implicitMaxCout
}

// shortRowsVirtual reports whether convImplicit takes a plan whose kernel
// rows are too short for implicit: convVirtual, which joins them into
// depth blocks (a first layer's 3×3 kernel over one channel). It needs
// padding (see padInput) and the transposing packer.
func shortRowsVirtual[T float32 | float64](p *convPlan, kern microKernel[T]) bool {
	if !p.runs || p.scatters() || p.cout > implicitMaxCout || kern.packA.trans == nil || !p.virtualRows(kern.mr) {
		return false
	}
	_, pad := p.paddedExtents()
	return pad
}

// paddedExtents returns the spatial sizes of x with p's padding around
// it (enough for every window), and whether that adds anything and
// padInput applies: false too where p crops (negative padding).
func (p *convPlan) paddedExtents() ([]int, bool) {
	ext := make([]int, p.d)
	pad := false
	for i := range p.d {
		if p.lo[i] < 0 {
			return nil, false
		}
		ext[i] = max(p.lo[i]+p.in[i], (p.outSp[i]-1)*p.stride[i]+(p.kern[i]-1)*p.kdil[i]+1)
		pad = pad || p.lo[i] > 0 || ext[i] > p.in[i]
	}
	return ext, pad
}

// convImplicit is the convolution as an implicit GEMM on the GEMM's
// micro-kernel: the depth blocks are kernel rows (kernel width × input
// channels, one run of x for each output pixel), and a panel of the
// micro-kernel's rows, that many consecutive output pixels of one output
// line whose windows lie inside the input, is packed straight from x by
// the transposing packer, the pixels' runs a stride apart. Panels at the
// edges go through a small im2col. The weight is packed once for the
// whole call; the output is written in place.
func convImplicit[T float32 | float64](p *convPlan, X, wt, O []T) {
	kern := kernelFor[T]()
	mr, nr := kern.mr, kern.nr
	d := p.d
	// With padding, the input is copied into a buffer that holds it, so
	// that every panel packs straight from it: on small images most
	// panels have a window in the padding, and gathering those row by
	// row cost as much as their products. The slack lets a line's last,
	// short panel read whole (its extra rows are computed and dropped).
	padded := false
	if kern.packA.trans != nil {
		slack := mr*p.stride[d-1]*p.cin + p.kern[d-1]*p.cig
		if pp, buf := padInput(p, X, slack); buf != nil {
			defer poolFor[T]().put(buf)
			p, X, padded = pp, *buf, true
		}
	}
	kw := p.kern[d-1]
	run := kw * p.cig
	sub := ceilDiv(run, implicitMaxDepth)
	// Depth blocks: each kernel row cut into sub equal parts, or, for
	// convVirtual, short kernel rows joined.
	var blocks []implicitBlock
	if join := implicitMinRun / run; padded && join > 1 && p.virtualRows(mr) {
		krows := p.kk / kw
		for r0 := 0; r0 < krows; r0 += join {
			n := min(join, krows-r0)
			blocks = append(blocks, implicitBlock{r0 * run, n * run, r0 * kw, n})
		}
	} else {
		for kp := 0; kp < p.kk; kp += kw {
			for j := range sub {
				a, b := j*run/sub, (j+1)*run/sub
				blocks = append(blocks, implicitBlock{kp*p.cig + a, b - a, kp, 1})
			}
		}
	}
	ncols := roundUp(p.cout, nr)
	// B̃ of every block, one after another: kc × cout in panels of nr.
	boff := make([]int, len(blocks)+1)
	for i, b := range blocks {
		boff[i+1] = boff[i] + b.kc*ncols
	}
	pool := poolFor[T]()
	bbuf := pool.get(boff[len(blocks)])
	defer pool.put(bbuf)
	bpk := *bbuf
	for i, b := range blocks {
		packB(bpk[boff[i]:], mat[T]{wt, b.k0, 1, p.k}, b.kc, p.cout, nr, kern.packB)
	}
	workers := runtime.GOMAXPROCS(0)
	if 2*p.rows*p.k*p.cout < parallelFlops {
		workers = 1
	}
	if padded && p.virtualRows(mr) {
		convVirtual(p, X, O, blocks, bpk, boff, workers)
		return
	}
	// Work items are whole output lines (or, for long lines, pieces of
	// one), cut into panels from the line's start, so that only the
	// panels at a line's ends, whose windows reach into the padding, are
	// gathered.
	seg := implicitPanels * mr
	wo, win := p.outSp[d-1], p.in[d-1]
	lines := p.rows / wo
	linesPer, segs := 1, 1
	if wo <= seg {
		linesPer = seg / wo
	} else {
		segs = ceilDiv(wo, seg)
	}
	items := ceilDiv(lines, linesPer) * segs
	maxPanels := implicitPanels
	if wo <= seg {
		maxPanels = linesPer * ceilDiv(wo, mr)
	}
	maxKC := ceilDiv(run, sub)
	sw := p.stride[d-1]
	ld := sw * p.xs[d]
	type panel struct{ r0, rows int }
	type scratch struct {
		apk, tmp, tile *[]T
		base           []int
		panels         []panel
	}
	runItems(workers, items,
		func() *scratch {
			return &scratch{pool.get(maxPanels * mr * maxKC), pool.get(mr * maxKC), pool.get(mr * nr), make([]int, d), nil}
		},
		func(s *scratch, it int) {
			ps := s.panels[:0]
			if segs == 1 {
				for l := it * linesPer; l < min((it+1)*linesPer, lines); l++ {
					for o := 0; o < wo; o += mr {
						ps = append(ps, panel{l*wo + o, min(mr, wo-o)})
					}
				}
			} else {
				l, o0 := it/segs, it%segs*seg
				for o := o0; o < min(o0+seg, wo); o += mr {
					ps = append(ps, panel{l*wo + o, min(mr, wo-o)})
				}
			}
			s.panels = ps
			apk, tmp, base := *s.apk, *s.tmp, s.base
			for bi, b := range blocks {
				kpos := p.kpos[b.kp]
				c0 := b.k0 - b.kp*p.cig // offset of the block within the kernel row
				for q, pn := range ps {
					dst := apk[q*mr*b.kc : (q+1)*mr*b.kc]
					boffX := p.rowBase(pn.r0, base)
					// A whole panel whose windows lie inside the input
					// along the line, and the kernel row inside it across.
					if (pn.rows == mr || padded) && kern.packA.trans != nil && base[d-1] >= 0 && base[d-1]+(pn.rows-1)*sw+kw <= win {
						if off, ok := p.inputAt(boffX, base, kpos); ok {
							_ = X[off+c0+(mr-1)*ld+b.kc-1]
							kern.packA.trans(&dst[0], &X[off+c0], ld, b.kc)
							continue
						}
					}
					// Elsewhere: gather the panel's rows of this block.
					t := tmp[:pn.rows*b.kc]
					for i := range pn.rows {
						row := t[i*b.kc : (i+1)*b.kc]
						bo := p.rowBase(pn.r0+i, base)
						for kk := 0; kk < b.kc; {
							col := c0 + kk
							j, ci := col/p.cig, col%p.cig
							n := min(p.cig-ci, b.kc-kk)
							if off, ok := p.inputAt(bo, base, p.kpos[b.kp+j]); ok {
								copy(row[kk:kk+n], X[off+ci:off+ci+n])
							} else {
								clear(row[kk : kk+n])
							}
							kk += n
						}
					}
					packA(dst, mat[T]{t, 0, b.kc, 1}, pn.rows, b.kc, mr, kern.packA)
				}
				for q, pn := range ps {
					tiles(kern, b.kc, apk[q*mr*b.kc:], bpk[boff[bi]:], O[p.outOff+pn.r0*p.cout:], p.cout, pn.rows, p.cout, bi > 0, *s.tile)
				}
			}
		},
		func(s *scratch) {
			pool.put(s.apk)
			pool.put(s.tmp)
			pool.put(s.tile)
		})
}

// implicitBlock is a depth block of convImplicit: its first column of
// the patch, its depth, the kernel position its kernel row starts at,
// and how many whole kernel rows it joins (1: a part of one row, kc
// long).
type implicitBlock struct{ k0, kc, kp, rows int }

// virtualRows reports whether convVirtual serves a padded plan better
// than whole lines: stride 1 on every axis (so that the padded grid's
// pixels are one channel run apart across line ends too), and output
// lines short enough, and not a whole number of panels, that their last
// panels' waste shows.
func (p *convPlan) virtualRows(mr int) bool {
	for _, s := range p.stride {
		if s != 1 {
			return false
		}
	}
	wo := p.outSp[p.d-1]
	return wo%mr != 0 && wo < 4*mr
}

// convVirtual is convImplicit over a padded input (see virtualRows) with
// the pixels of the padded grid as its rows, from each image's first
// output pixel to its last: consecutive rows are a channel run apart
// everywhere, so every panel is mr rows whole and packs straight from
// the input. The rows at padding positions (a kernel's width less one
// per line) are computed and dropped: the panels' tiles of C are
// computed apart and their valid rows copied to the output.
func convVirtual[T float32 | float64](p *convPlan, X, O []T, blocks []implicitBlock, bpk []T, boff []int, workers int) {
	kern := kernelFor[T]()
	mr, nr := kern.mr, kern.nr
	d := p.d
	ps, span := p.gridSpan()
	perImage := ceilDiv(span, mr)
	panels := p.n * perImage
	outs := p.rows / p.n
	// where each block's kernel rows start: their kernel positions as
	// offsets in pixels, plus the block's first channel within its row;
	// and the depth each packs
	starts, depth := make([][]int, len(blocks)), make([]int, len(blocks))
	run := p.kern[d-1] * p.cig
	maxKC := 0
	for i, b := range blocks {
		depth[i] = b.kc
		if b.rows > 1 {
			depth[i] = run
		}
		for r := range b.rows {
			off := 0
			for a := range d {
				off += p.kpos[b.kp+r*p.kern[d-1]][a] * ps[a]
			}
			starts[i] = append(starts[i], off*p.cin+b.k0-b.kp*p.cig)
		}
		maxKC = max(maxKC, b.kc)
	}
	pool := poolFor[T]()
	type scratch struct{ apk, c, tile *[]T }
	runItems(workers, ceilDiv(panels, implicitPanels),
		func() *scratch {
			return &scratch{pool.get(implicitPanels * mr * maxKC), pool.get(implicitPanels * mr * p.cout), pool.get(mr * nr)}
		},
		func(s *scratch, it int) {
			p0 := it * implicitPanels
			np := min(implicitPanels, panels-p0)
			apk, c := *s.apk, *s.c
			for bi, b := range blocks {
				for q := range np {
					n, v0 := (p0+q)/perImage, (p0+q)%perImage*mr
					for r, st := range starts[bi] {
						src := n*p.xs[0] + v0*p.cin + st
						_ = X[src+(mr-1)*p.cin+depth[bi]-1]
						kern.packA.trans(&apk[(q*b.kc+r*depth[bi])*mr], &X[src], p.cin, depth[bi])
					}
				}
				for q := range np {
					tiles(kern, b.kc, apk[q*mr*b.kc:], bpk[boff[bi]:], c[q*mr*p.cout:], p.cout, mr, p.cout, bi > 0, *s.tile)
				}
			}
			for q := range np {
				n, v0 := (p0+q)/perImage, (p0+q)%perImage*mr
			row:
				for i := range min(mr, span-v0) {
					// the output pixel of row v0+i, if it is one
					v, o := v0+i, 0
					for a := range d {
						ca := v / ps[a]
						v %= ps[a]
						if ca >= p.outSp[a] {
							continue row
						}
						o = o*p.outSp[a] + ca
					}
					dst := p.outOff + (n*outs+o)*p.cout
					copy(O[dst:dst+p.cout], c[(q*mr+i)*p.cout:(q*mr+i+1)*p.cout])
				}
			}
		},
		func(s *scratch) {
			pool.put(s.apk)
			pool.put(s.c)
			pool.put(s.tile)
		})
}

// gridSpan returns the pixel strides of the plan's (padded, contiguous)
// input grid, and the rows an image's outputs span on it, from its first
// output pixel to its last.
func (p *convPlan) gridSpan() (ps []int, span int) {
	ps = make([]int, p.d)
	span = 1
	for i := range p.d {
		ps[i] = p.xs[i+1] / p.cin
		span += (p.outSp[i] - 1) * ps[i]
	}
	return ps, span
}

// padInput copies x into a pooled row-major buffer with p's padding
// around it as zeros, followed by slack zeros, and returns the plan of
// the same convolution over that buffer (no padding) with the buffer. It
// returns a nil buffer when there is no padding to add, or when the plan
// crops (negative padding), which the copy does not do; x must hold
// each pixel's channels contiguously and its pixels along the last axis
// cin apart (p.runs).
func padInput[T float32 | float64](p *convPlan, X []T, slack int) (*convPlan, *[]T) {
	d := p.d
	ext, pad := p.paddedExtents()
	if !pad {
		return nil, nil
	}
	pp := *p
	pp.in, pp.lo, pp.xs, pp.xoff = ext, make([]int, d), make([]int, d+2), 0
	pp.xs[d+1], pp.xs[d] = 1, p.cin
	for i := d - 1; i >= 0; i-- {
		pp.xs[i] = pp.xs[i+1] * ext[i]
	}
	total := p.n * pp.xs[0]
	buf := poolFor[T]().get(total + slack)
	dst := (*buf)[:total+slack]
	clear(dst[total:])
	// A padded line is ext[d-1] pixels; lines run over the image index
	// and every spatial axis but the last.
	line := ext[d-1] * p.cin
	lines := total / line
	lo, w := p.lo[d-1]*p.cin, p.in[d-1]*p.cin
	ParallelFor(lines, max(1, grain/line), func(l0, l1 int) {
		for l := l0; l < l1; l++ {
			row := dst[l*line : (l+1)*line]
			// the line's coordinates: image, then spatial axes 0..d-2
			off, r, inside := p.xoff, l, true
			for i := d - 2; i >= 0; i-- {
				q := r%ext[i] - p.lo[i]
				r /= ext[i]
				if q < 0 || q >= p.in[i] {
					inside = false
					break
				}
				off += q * p.xs[i+1]
			}
			if !inside {
				clear(row)
				continue
			}
			off += r * p.xs[0]
			clear(row[:lo])
			copy(row[lo:lo+w], X[off:off+w])
			clear(row[lo+w:])
		}
	})
	return &pp, buf
}
