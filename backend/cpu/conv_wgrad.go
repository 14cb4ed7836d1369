package cpu

import (
	"runtime"
	"unsafe"

	"github.com/fathom-go/fathom/array"
)

// ConvWeightGrad computes the cotangent of a convolution's weight: for
// the convolution y = conv(x, w) with p (see Conv) and the cotangent g
// of y, dw[co, k, ci] = Σ over batch and output positions o of
// g[n, o, co]·x[n, o·Stride + k·KernelDilation − PadLo, g·C_in/groups + ci]
// (with x dilated by InputDilation, and k mirrored under Flip), for the
// group g that holds co. x is [N, ...in, C_in] and g [N, ...out, C_out],
// both read through any strides; dw is row-major [C_out, ...kernel,
// C_in/groups]. float16 and bfloat16 accumulate in float32 and round once.
//
// It is the product gᵀ·im2col(x) over the N·out rows, done as dwᵀ =
// im2col(x)ᵀ·g: chunks of rows have their patches gathered and packed as
// the micro-kernel's panels, which add into a dwᵀ that stays in the
// core's cache; cores take chunks and each sums into its own
// dwᵀ, the copies added at the end. Groups of one input and one output
// channel (depthwise) take a direct loop on the vector multiply-add.
func ConvWeightGrad(dw, x, g Buf, p ConvParams) error {
	const op = "cpu.ConvWeightGrad"
	if x.DType != dw.DType || g.DType != dw.DType {
		return array.Errorf(op, "dtypes %v and %v -> %v differ", x.DType, g.DType, dw.DType)
	}
	if !dw.RowMajor() {
		return array.Errorf(op, "dw of shape %v is not row-major", dw.Shape)
	}
	pl, err := newConvPlan(g, x, dw, p)
	if err != nil {
		return err
	}
	if dw.Size() == 0 {
		return nil
	}
	if pl.rows == 0 {
		es := dw.DType.Size()
		clear(dw.Data[dw.Offset*es : (dw.Offset+dw.Size())*es])
		return nil
	}
	gr := gRows{shape: g.Shape[:pl.d+1], strides: g.Strides, off: g.Offset}
	switch dw.DType {
	case array.Float32:
		wgradRun(pl, gr, elems[float32](x), elems[float32](g), elems[float32](dw), dw.Offset, loadSame[float32], storeSame[float32])
	case array.Float64:
		wgradRun(pl, gr, elems[float64](x), elems[float64](g), elems[float64](dw), dw.Offset, loadSame[float64], storeSame[float64])
	case array.Float16:
		wgradRun(pl, gr, elems[array.F16](x), elems[array.F16](g), elems[array.F16](dw), dw.Offset, widen[array.F16], storeHalf(array.NewF16))
	case array.BFloat16:
		wgradRun(pl, gr, elems[array.BF16](x), elems[array.BF16](g), elems[array.BF16](dw), dw.Offset, widen[array.BF16], storeHalf(array.NewBF16))
	default:
		return array.Errorf(op, "dtype %v not supported: convolution is for floats", dw.DType)
	}
	return nil
}

// gRows locates the rows of the cotangent: row r (batch and output
// position, row-major) starts at offset and holds C_out channels a
// channel stride apart.
type gRows struct {
	shape, strides []int
	off            int
}

func (g gRows) offset(r int) int {
	off := g.off
	for i := len(g.shape) - 1; i >= 0; i-- {
		off += r % g.shape[i] * g.strides[i]
		r /= g.shape[i]
	}
	return off
}

// wgradChunk is the number of rows (the product's depth) a chunk
// gathers: the micro-kernel's panels of dwᵀ then run this many steps
// between loading and storing their tile, as the GEMM's depth blocks do.
const wgradChunk = 256

// wgradPatchBytes bounds the patches of one chunk that are packed at a
// time: with the packed copy and dwᵀ they stay within a core's L2.
const wgradPatchBytes = 1 << 20

// wgradRun is ConvWeightGrad with S the storage type and T the type the
// sums are kept in.
func wgradRun[S any, T float32 | float64](p *convPlan, gr gRows, X, G, DW []S, dwOff int, load func(dst []T, src []S, off, cs int), store func(dst []S, src []T)) {
	var z T
	es := int(unsafe.Sizeof(z))
	n := p.cout * p.k
	workers := runtime.GOMAXPROCS(0)
	if 2*p.rows*n < parallelFlops {
		workers = 1
	}
	ps := &wgradParts[T]{n: n}
	gcs := gr.strides[len(gr.shape)]
	// total holds dwᵀ: for each group [patch position, C_out/groups], or
	// for depthwise [kernel position, C]. at is where dw[co, kp, ci] is.
	var at func(co, kp, ci int) int
	if p.cig == 1 && p.cog == 1 {
		wgradDepthwise(p, gr, X, G, gcs, workers, ps, load)
		at = func(co, kp, _ int) int { return kp*p.cout + co }
	} else {
		if xs, ok := any(X).([]T); !ok || !wgradVirtual(p, gr, xs, G, gcs, workers, ps, load) {
			wgradGEMM(p, gr, X, G, gcs, es, workers, ps, load)
		}
		at = func(co, kp, ci int) int {
			grp, j := co/p.cog, co%p.cog
			return (grp*p.k+kp*p.cig+ci)*p.cog + j
		}
	}
	tb := ps.sum()
	defer poolFor[T]().put(tb)
	total := *tb
	res := poolFor[T]().get(n)
	defer poolFor[T]().put(res)
	out := (*res)[:n]
	for co := range p.cout {
		for kp := range p.kk {
			// weightIndex mirrors the kernel under flip.
			w := p.weightIndex(co, kp, 0) - dwOff
			for ci := range p.cig {
				out[w+ci] = total[at(co, kp, ci)]
			}
		}
	}
	store(DW[dwOff:dwOff+n], out)
}

// wgradGEMM accumulates dwᵀ for each group as im2col(x)ᵀ·g, chunk by
// chunk of rows, on the GEMM's micro-kernel: the patches of a chunk,
// [rows, patch positions], are the transpose of the A operand, which
// packs them a panel of patch positions at a time, and the chunk's rows
// of g are B.
func wgradGEMM[S any, T float32 | float64](p *convPlan, gr gRows, X, G []S, gcs, es, workers int, ps *wgradParts[T], load func(dst []T, src []S, off, cs int)) {
	kern := kernelFor[T]()
	mr, nr := kern.mr, kern.nr
	kc := min(wgradChunk, p.rows)
	kb := min(p.k, max(mr, wgradPatchBytes/(kc*es)/mr*mr))
	nc := min(p.cog, max(nr, caches.l2/4/(kc*es)/nr*nr))
	chunks := ceilDiv(p.rows, kc)
	type scratch struct {
		patches, apk, bpk, gt, tile *[]T
		base                        []int
	}
	pool := poolFor[T]()
	runParts(ps, workers, p.groups*chunks,
		func() *scratch {
			return &scratch{
				patches: pool.get(kc * kb),
				apk:     pool.get(roundUp(kb, mr) * kc),
				bpk:     pool.get(kc * roundUp(nc, nr)),
				gt:      pool.get(kc * p.cog),
				tile:    pool.get(mr * nr),
				base:    make([]int, p.d),
			}
		},
		func(s *scratch, part []T, it int) {
			grp, c := it/chunks, it%chunks
			r0 := c * kc
			r1 := min(r0+kc, p.rows)
			m := r1 - r0
			gt := (*s.gt)[:m*p.cog]
			for r := r0; r < r1; r++ {
				load(gt[(r-r0)*p.cog:(r-r0+1)*p.cog], G, gr.offset(r)+grp*p.cog*gcs, gcs)
			}
			dwt := part[grp*p.k*p.cog:]
			for k0 := 0; k0 < p.k; k0 += kb {
				k1 := min(k0+kb, p.k)
				kw := k1 - k0
				patches := (*s.patches)[:m*kw]
				im2col(p, patches, X, r0, r1, grp, k0, k1, s.base, load)
				apk := *s.apk
				packA(apk, mat[T]{patches, 0, 1, kw}, kw, m, mr, kern.packA)
				for j0 := 0; j0 < p.cog; j0 += nc {
					cols := min(nc, p.cog-j0)
					packB(*s.bpk, mat[T]{gt, j0, p.cog, 1}, m, cols, nr, kern.packB)
					for q := 0; q*mr < kw; q++ {
						tiles(kern, m, apk[q*mr*m:], *s.bpk, dwt[(k0+q*mr)*p.cog+j0:], p.cog, min(mr, kw-q*mr), cols, true, *s.tile)
					}
				}
			}
		},
		func(s *scratch) {
			for _, b := range []*[]T{s.patches, s.apk, s.bpk, s.gt, s.tile} {
				pool.put(b)
			}
		})
}

// wgradDepthwiseRows is the number of rows a depthwise work item takes.
const wgradDepthwiseRows = 64

// wgradDepthwise accumulates dwᵀ, [kernel positions, C], for groups of
// one channel: each row adds its cotangent times the input row under
// each kernel position, a vector multiply-add over the channels.
func wgradDepthwise[S any, T float32 | float64](p *convPlan, gr gRows, X, G []S, gcs, workers int, ps *wgradParts[T], load func(dst []T, src []S, off, cs int)) {
	c := p.cout
	n := p.kk * c
	cs := p.xs[p.d+1]
	madd := mulAddFor[T]()
	xs, inPlace := any(X).([]T)
	inPlace = inPlace && cs == 1
	type scratch struct {
		grow, in *[]T
		base     []int
	}
	pool := poolFor[T]()
	items := ceilDiv(p.rows, wgradDepthwiseRows)
	if 2*p.rows*n < parallelFlops {
		workers = 1
	}
	runParts(ps, workers, items,
		func() *scratch {
			return &scratch{grow: pool.get(c), in: pool.get(c), base: make([]int, p.d)}
		},
		func(s *scratch, part []T, it int) {
			grow, in := (*s.grow)[:c], (*s.in)[:c]
			for r := it * wgradDepthwiseRows; r < min((it+1)*wgradDepthwiseRows, p.rows); r++ {
				load(grow, G, gr.offset(r), gcs)
				boff := p.rowBase(r, s.base)
				for kp, pos := range p.kpos {
					off, ok := p.inputAt(boff, s.base, pos)
					if !ok {
						continue
					}
					row := in
					if inPlace {
						row = xs[off : off+c]
					} else {
						load(in, X, off, cs)
					}
					acc := part[kp*c : (kp+1)*c]
					madd(acc, grow, row, acc)
				}
			}
		},
		func(s *scratch) {
			for _, b := range []*[]T{s.grow, s.in} {
				pool.put(b)
			}
		})
}

// wgradVirtual is wgradGEMM over a padded copy of x (see padInput and
// convVirtual) for one group and stride 1, where the product's depth
// runs over the pixels of the padded grid, from each image's first
// output pixel to its last: a panel of patch positions that lies within
// one kernel row is then mr contiguous elements at every step, a channel
// run apart from step to step, and packs straight from the copy without
// gathering patches. The steps at padding positions take zero rows of g.
// It reports false, having done nothing, where it does not apply.
func wgradVirtual[S any, T float32 | float64](p *convPlan, gr gRows, X []T, G []S, gcs, workers int, parts *wgradParts[T], load func(dst []T, src []S, off, cs int)) bool {
	kern := kernelFor[T]()
	if p.groups != 1 || !p.runs || p.scatters() || kern.packA.copy == nil {
		return false
	}
	for _, s := range p.stride {
		if s != 1 {
			return false
		}
	}
	pp, buf := padInput(p, X, 0)
	if buf == nil {
		return false
	}
	pool := poolFor[T]()
	defer pool.put(buf)
	X = *buf
	mr, nr := kern.mr, kern.nr
	d := p.d
	ps, span := pp.gridSpan()
	kc := min(wgradChunk, span)
	perImage := ceilDiv(span, kc)
	outs := p.rows / p.n
	// Each panel of patch positions: its offset from a window's first
	// element when it lies within one kernel row, else -1 and the offsets
	// of its positions.
	panels := ceilDiv(p.k, mr)
	whole := make([]int, panels)
	offs := make([]int, p.k)
	for c := range p.k {
		kp, ci := c/p.cig, c%p.cig
		for a := range d {
			offs[c] += p.kpos[kp][a] * ps[a]
		}
		offs[c] = offs[c]*p.cin + ci
	}
	run := p.kern[d-1] * p.cig
	for q := range panels {
		c0, c1 := q*mr, min((q+1)*mr, p.k)
		whole[q] = -1
		if c1-c0 == mr && c0/run == (c1-1)/run {
			whole[q] = offs[c0]
		}
	}
	nc := min(p.cout, max(nr, caches.l2/4/(kc*int(unsafe.Sizeof(X[0])))/nr*nr))
	type scratch struct {
		apk, bpk, gt, tile *[]T
	}
	runParts(parts, workers, p.n*perImage,
		func() *scratch {
			return &scratch{
				apk:  pool.get(panels * mr * kc),
				bpk:  pool.get(kc * roundUp(nc, nr)),
				gt:   pool.get(kc * p.cout),
				tile: pool.get(mr * nr),
			}
		},
		func(s *scratch, part []T, it int) {
			img, v0 := it/perImage, it%perImage*kc
			m := min(kc, span-v0)
			// g's rows at the chunk's pixels, zero at padding positions
			gt := (*s.gt)[:m*p.cout]
		row:
			for i := range m {
				v, o := v0+i, 0
				for a := range d {
					ca := v / ps[a]
					v %= ps[a]
					if ca >= p.outSp[a] {
						clear(gt[i*p.cout : (i+1)*p.cout])
						continue row
					}
					o = o*p.outSp[a] + ca
				}
				load(gt[i*p.cout:(i+1)*p.cout], G, gr.offset(img*outs+o), gcs)
			}
			base := img*pp.xs[0] + v0*p.cin
			apk := *s.apk
			for q := range panels {
				dst := apk[q*mr*m : (q+1)*mr*m]
				if o := whole[q]; o >= 0 {
					_ = X[base+o+(m-1)*p.cin+mr-1]
					kern.packA.copy(&dst[0], &X[base+o], p.cin, m)
					continue
				}
				po := offs[q*mr : min((q+1)*mr, p.k)]
				for kk := range m {
					step := dst[kk*mr : (kk+1)*mr : (kk+1)*mr]
					src := X[base+kk*p.cin:]
					for i, o := range po {
						step[i] = src[o]
					}
					for i := len(po); i < mr; i++ {
						step[i] = 0
					}
				}
			}
			dwt := part
			for j0 := 0; j0 < p.cout; j0 += nc {
				cols := min(nc, p.cout-j0)
				packB(*s.bpk, mat[T]{gt, j0, p.cout, 1}, m, cols, nr, kern.packB)
				for q := range panels {
					tiles(kern, m, apk[q*mr*m:], *s.bpk, dwt[q*mr*p.cout+j0:], p.cout, min(mr, p.k-q*mr), cols, true, *s.tile)
				}
			}
		},
		func(s *scratch) {
			for _, b := range []*[]T{s.apk, s.bpk, s.gt, s.tile} {
				pool.put(b)
			}
		})
	return true
}

// wgradParts are the partial sums of dwᵀ. The work items are dealt into a
// fixed number of blocks of consecutive items; each block sums its items
// in order into a copy of its own, and the copies are added in block
// order. Which worker runs a block, and when it finishes, thus never
// changes the result's bits: a training run resumed from a checkpoint
// repeats an uninterrupted one exactly, as with every other kernel.
type wgradParts[T float32 | float64] struct {
	n     int
	parts []*[]T
}

// runParts runs items 0..items-1 on up to workers goroutines in the
// blocks of ps, giving item its block's copy of dwᵀ.
func runParts[T float32 | float64, W any](ps *wgradParts[T], workers, items int, newScratch func() W, item func(w W, part []T, it int), release func(W)) {
	pool := poolFor[T]()
	ps.parts = make([]*[]T, min(items, 2*runtime.GOMAXPROCS(0)))
	blocks := len(ps.parts)
	runItems(workers, blocks, newScratch, func(w W, b int) {
		buf := pool.get(ps.n)
		part := (*buf)[:ps.n]
		clear(part)
		for it := b * items / blocks; it < (b+1)*items/blocks; it++ {
			item(w, part, it)
		}
		ps.parts[b] = buf
	}, release)
}

// sum adds the blocks' copies, in block order, into the first and returns
// it; the caller puts it back in the pool.
func (ps *wgradParts[T]) sum() *[]T {
	pool := poolFor[T]()
	if len(ps.parts) == 0 {
		buf := pool.get(ps.n)
		clear((*buf)[:ps.n])
		return buf
	}
	total := (*ps.parts[0])[:ps.n]
	for _, b := range ps.parts[1:] {
		for i, v := range (*b)[:ps.n] {
			total[i] += v
		}
		pool.put(b)
	}
	return ps.parts[0]
}
