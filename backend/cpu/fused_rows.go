package cpu

import (
	"math"
	"sync"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/fused"
	"github.com/fathom-go/fathom/internal/opset"
)

// RunFusedRows runs the row-wise program p (fused.NewRows) over the
// elementwise shape shape, whose last p.Rows axes make a row. Each row
// goes through the program in passes, one per depth of folds plus one:
// a pass runs the elementwise instructions the pass needs over the row
// in tiles, feeding the folds, and the per-row instructions run between
// passes. A value computed in one pass and read in a later one is kept
// for the row (in the output it is, or in a row buffer of the worker)
// rather than computed again, while the row is in cache; softmax is a
// max pass, an exp-and-sum pass, and a scale pass. Rows are shared over
// the cores dynamically. ins are p's inputs, each broadcastable to shape
// (any strides; those of p.InRow size 1 along the row axes); outs are its
// outputs, row-major: shape for per-element registers, one element per
// row for per-row ones (or one element, for a count). The caller has
// checked shapes and dtypes; p may be run by many goroutines at once.
func RunFusedRows(p *fused.Program, shape []int, outs, ins []Buf) error {
	const op = "cpu.RunFusedRows"
	if p.Rows <= 0 || p.Rows > len(shape) {
		return array.Errorf(op, "a program of %d row axes over shape %v", p.Rows, shape)
	}
	if len(ins) != len(p.InDTypes) || len(outs) != len(p.Outputs) {
		return array.Errorf(op, "%d inputs and %d outputs for a program of %d and %d", len(ins), len(outs), len(p.InDTypes), len(p.Outputs))
	}
	return rowPlanOf(p).run(shape, outs, ins)
}

// rowsKey is the key of a program's rowPlan in its cache.
type rowsKey struct{}

func rowPlanOf(p *fused.Program) *rowPlan {
	return p.Cache(rowsKey{}, func() any { return newRowPlan(p) }).(*rowPlan)
}

// rowCacheBytes bounds the row buffers of one worker: the values a later
// pass reads again, a row each. Beyond it they are computed again in the
// later pass, which costs arithmetic but no memory traffic, where
// buffers that outgrow L2 would cost both.
const rowCacheBytes = 256 << 10

// rowPlan is a row-wise program resolved for the runner.
type rowPlan struct {
	p    *fused.Program
	nIn  int
	kern []tileKernels // per instruction, nil where generic
	// shift[k] >= 0 marks an Exp of a Sub of a per-row value that only
	// the Exp reads: exp(x - m) is one kernel (the softmax family's),
	// which also gives the sum for a Sum fold of the pass. shift[k] is
	// m's register, shifted x's; skip marks the Sub.
	shift, shifted []int
	skip           []bool
	// recip marks a Div of a per-element value by a per-row one, done as
	// a product with the reciprocal (as Softmax does): a division per
	// element costs more than the rest of a softmax's last pass
	recip []bool
	// prod[k] set (fargs) marks an Add or Mul that also computes the
	// product (Mul or Square) it reads, when nothing else reads that
	// product: one pass over the tile instead of two, rounding as the
	// two would (tileKernels.fused, fusedS with the second factor per
	// row)
	prod  []bool
	fargs [][3]int
	// the folds' runs, per instruction
	run32  []func(acc float32, x []float32) float32
	run64  []func(acc float64, x []float64) float64
	outsOf [][]int // per register: the outputs that are it
	hasMax bool    // a Max or Min fold, which has no identity over an empty row
	// the plans with and without row buffers
	kept, recompute *rowPasses
	arenas          sync.Pool
}

// rowPasses is the order of work in each pass: the per-row instructions
// run before pass s (before[s]; before[passes] after the last), the
// per-element instructions of pass s and the folds it feeds.
type rowPasses struct {
	passes int
	before [][]int
	elem   [][]int
	folds  [][]int
	// where each per-element register computed in a pass lives:
	// an output (outsOf), a row buffer (buf >= 0) or a scratch tile
	buf    []int
	nbufs  int
	alias  []int // the output whose row keeps the register, -1 for none
	slot   []int
	nslots int
	// the register's first pass, -1 where no pass computes it, and
	// whether pass s computes it (again, without row buffers)
	pass []int
	now  [][]bool
}

func newRowPlan(p *fused.Program) *rowPlan {
	nIn := len(p.InDTypes)
	n := nIn + len(p.Instrs)
	pl := &rowPlan{p: p, nIn: nIn, kern: make([]tileKernels, len(p.Instrs)), outsOf: make([][]int, n),
		recip: make([]bool, len(p.Instrs)), run32: make([]func(float32, []float32) float32, len(p.Instrs)),
		run64: make([]func(float64, []float64) float64, len(p.Instrs))}
	for i, r := range p.Outputs {
		pl.outsOf[r] = append(pl.outsOf[r], i)
	}
	for k, in := range p.Instrs {
		ks := &pl.kern[k]
		if in.Kind == fused.Reduce {
			pl.hasMax = pl.hasMax || opset.ReduceOp(in.Op) == opset.Max || opset.ReduceOp(in.Op) == opset.Min
			pl.run32[k], pl.run64[k] = foldRuns(opset.ReduceOp(in.Op))
		}
		switch {
		case in.Kind == fused.Unary && p.DType(in.Args[0]) == in.DType:
			ks.unary = unaryTileFunc(opset.UnaryOp(in.Op), in.DType)
		case in.Kind == fused.Binary && p.DType(in.Args[0]) == in.DType && p.DType(in.Args[1]) == in.DType:
			ks.binary = binaryTileFunc(opset.BinaryOp(in.Op), in.DType)
			ks.vs, ks.sv = binaryScalarTileFuncs(opset.BinaryOp(in.Op), in.DType)
		case in.Kind == fused.AsType:
			ks.unary = convertTileFunc(p.DType(in.Args[0]), in.DType)
		}
	}
	pl.findShifts()
	pl.kept = pl.passesOf(true)
	pl.recompute = pl.passesOf(false)
	return pl
}

// findShifts finds the Exp(Sub(x, m)) of a softmax, m per row, in
// float32 or float64.
func (pl *rowPlan) findShifts() {
	p, nIn := pl.p, pl.nIn
	pl.shift, pl.shifted, pl.skip = make([]int, len(p.Instrs)), make([]int, len(p.Instrs)), make([]bool, len(p.Instrs))
	reads := make([]int, nIn+len(p.Instrs))
	for _, in := range p.Instrs {
		for _, a := range in.Args {
			reads[a]++
		}
	}
	perRow := p.RowLevel // inputs of p.InRow included
	for k, in := range p.Instrs {
		pl.shift[k] = -1
		if in.Kind != fused.Unary || opset.UnaryOp(in.Op) != opset.Exp || in.DType != array.Float32 && in.DType != array.Float64 ||
			p.RowLevel(nIn+k) || in.Args[0] < nIn {
			continue
		}
		j := in.Args[0] - nIn
		sub := p.Instrs[j]
		if sub.Kind != fused.Binary || opset.BinaryOp(sub.Op) != opset.Sub || sub.DType != in.DType || reads[nIn+j] != 1 ||
			len(pl.outsOf[nIn+j]) > 0 || perRow(sub.Args[0]) || !perRow(sub.Args[1]) || p.DType(sub.Args[0]) != in.DType {
			continue
		}
		pl.shift[k], pl.shifted[k], pl.skip[j] = sub.Args[1], sub.Args[0], true
	}
	pl.prod, pl.fargs = make([]bool, len(p.Instrs)), make([][3]int, len(p.Instrs))
	// product returns the factors of register r, a Mul or Square of
	// per-element values (or of one and a per-row value, second) that
	// only one instruction reads
	product := func(r int) (a, b int, ok bool) {
		if r < nIn || reads[r] != 1 || len(pl.outsOf[r]) > 0 || p.RowLevel(r) || pl.skip[r-nIn] || pl.prod[r-nIn] {
			return 0, 0, false
		}
		in := p.Instrs[r-nIn]
		switch {
		case in.Kind == fused.Binary && opset.BinaryOp(in.Op) == opset.Mul && pl.kern[r-nIn].binary != nil:
			a, b = in.Args[0], in.Args[1]
		case in.Kind == fused.Unary && opset.UnaryOp(in.Op) == opset.Square && pl.kern[r-nIn].unary != nil:
			a, b = in.Args[0], in.Args[0] // x*x, as Square computes it
		default:
			return 0, 0, false
		}
		if perRow(a) {
			a, b = b, a // multiplication commutes exactly
		}
		return a, b, !perRow(a)
	}
	for k, in := range p.Instrs {
		if in.Kind != fused.Binary || p.RowLevel(nIn+k) || pl.kern[k].binary == nil {
			continue
		}
		op := opset.BinaryOp(in.Op)
		if op != opset.Add && op != opset.Mul {
			continue
		}
		vvv, vsv := productTileFuncs(op, in.DType)
		if vvv == nil {
			continue
		}
		for _, ord := range [][2]int{{0, 1}, {1, 0}} {
			q, c := in.Args[ord[0]], in.Args[ord[1]]
			a, b, ok := product(q)
			if !ok || perRow(c) {
				continue
			}
			pl.prod[k], pl.fargs[k], pl.skip[q-nIn] = true, [3]int{a, b, c}, true
			pl.kern[k].fused, pl.kern[k].fusedS = vvv, vsv
			break
		}
	}
	for k, in := range p.Instrs {
		if in.Kind == fused.Binary && opset.BinaryOp(in.Op) == opset.Div && !p.RowLevel(nIn+k) && !perRow(in.Args[0]) && perRow(in.Args[1]) &&
			pl.kern[k].vs != nil {
			pl.recip[k] = true
			pl.kern[k].vs, _ = binaryScalarTileFuncs(opset.Mul, in.DType)
		}
	}
}

// foldRuns returns op's runs over float32 and float64: the reductions'
// own (vector kernels for float32 where the machine has them).
func foldRuns(op opset.ReduceOp) (func(float32, []float32) float32, func(float64, []float64) float64) {
	switch op {
	case opset.Sum:
		r32 := sumRun[float32]
		if vecSum != nil {
			r32 = func(acc float32, x []float32) float32 { return acc + vecSum(x) }
		}
		return r32, sumRun[float64]
	case opset.Max:
		r32 := maxRun[float32]
		if run := vecReduce[opset.Max]; run != nil {
			r32 = run
		}
		return r32, maxRun[float64]
	case opset.Min:
		r32 := minRun[float32]
		if run := vecReduce[opset.Min]; run != nil {
			r32 = run
		}
		return r32, minRun[float64]
	}
	return prodRun[float32], prodRun[float64]
}

// args returns the registers instruction k reads: for a shifted Exp, the
// Sub's operands.
func (pl *rowPlan) args(k int) []int {
	if pl.shift[k] >= 0 {
		return []int{pl.shifted[k], pl.shift[k]}
	}
	if pl.prod[k] {
		return pl.fargs[k][:]
	}
	return pl.p.Instrs[k].Args
}

// passesOf orders the work. With keep, a per-element register is
// computed once, in the first pass that can, and kept for the passes
// after; without, only outputs are kept and the others are computed
// again in each pass that reads them.
func (pl *rowPlan) passesOf(keep bool) *rowPasses {
	p, nIn := pl.p, pl.nIn
	n := nIn + len(p.Instrs)
	elem := func(r int) bool { return r >= nIn && !p.RowLevel(r) }
	passes := p.Passes()
	ps := &rowPasses{passes: passes, before: make([][]int, passes+1), elem: make([][]int, passes), folds: make([][]int, passes),
		buf: make([]int, n), slot: make([]int, n), pass: make([]int, n)}
	for r := range n {
		ps.buf[r], ps.slot[r], ps.pass[r] = -1, -1, -1
	}
	for s := range passes {
		// the per-element registers pass s must produce, for its folds
		// and outputs, and what they read
		need := make([]bool, n)
		for k, in := range p.Instrs {
			r := nIn + k
			if in.Kind == fused.Reduce && p.Stage(in.Args[0]) == s {
				ps.folds[s] = append(ps.folds[s], k)
				need[in.Args[0]] = true
			}
			if elem(r) && len(pl.outsOf[r]) > 0 && p.Stage(r) == s {
				need[r] = true
			}
		}
		// walk back over the arguments, stopping at values kept from an
		// earlier pass
		for k := len(p.Instrs) - 1; k >= 0; k-- {
			r := nIn + k
			if !need[r] || !elem(r) {
				continue
			}
			if ps.pass[r] >= 0 && ps.pass[r] < s && (keep || len(pl.outsOf[r]) > 0) {
				need[r] = false
				continue
			}
			for _, a := range pl.args(k) {
				need[a] = true
			}
		}
		ps.now = append(ps.now, make([]bool, n))
		for k := range p.Instrs {
			if r := nIn + k; need[r] && elem(r) {
				ps.elem[s] = append(ps.elem[s], k)
				ps.now[s][r] = true
				if ps.pass[r] < 0 {
					ps.pass[r] = s
				}
			}
		}
	}
	// per-row instructions run as soon as their stage's folds are done
	for k := range p.Instrs {
		if r := nIn + k; p.RowLevel(r) && p.Instrs[k].Kind != fused.Reduce {
			s := min(p.Stage(r), passes)
			ps.before[s] = append(ps.before[s], k)
		}
	}
	// A register read in a pass after its own is kept for the row unless
	// it is an output: in the row of an output of its dtype that the last
	// pass reading it writes after its last read there (softmax keeps its
	// exponentials where their quotients go, so that pass works in
	// place), or else in a row buffer. The rest take scratch tiles.
	lastRead := make([]int, n) // pass
	lastReader := make([]int, n)
	for s := range passes {
		for _, k := range ps.elem[s] {
			for _, a := range pl.args(k) {
				if elem(a) && !ps.now[s][a] && len(pl.outsOf[a]) == 0 {
					lastRead[a], lastReader[a] = s, k
				}
			}
		}
	}
	ps.alias = make([]int, n)
	taken := make([]bool, len(p.Outputs))
	for r := range n {
		ps.alias[r] = -1
		if !elem(r) || ps.pass[r] < 0 || len(pl.outsOf[r]) > 0 || lastRead[r] <= ps.pass[r] {
			continue
		}
		s := lastRead[r]
		for _, k := range ps.elem[s] {
			o := nIn + k
			if k < lastReader[r] || len(pl.outsOf[o]) == 0 || ps.pass[o] != s || p.DType(o) != p.DType(r) || taken[pl.outsOf[o][0]] {
				continue
			}
			ps.alias[r] = pl.outsOf[o][0]
			taken[ps.alias[r]] = true
			break
		}
		if ps.alias[r] < 0 {
			ps.buf[r] = ps.nbufs
			ps.nbufs++
		}
	}
	for r := nIn; r < n; r++ {
		if elem(r) && ps.pass[r] >= 0 && ps.buf[r] < 0 && ps.alias[r] < 0 && len(pl.outsOf[r]) == 0 {
			ps.slot[r] = ps.nslots
			ps.nslots++
		}
	}
	return ps
}

// rowIn is how one input is read for a row: per row (one element), a
// slice of its memory (inner run contiguous), or gathered.
type rowIn struct {
	b      Buf // broadcast to the shape
	row    bool
	direct bool
	w      *walker
	sz     int
}

func (pl *rowPlan) run(shape []int, outs, ins []Buf) error {
	p, nIn := pl.p, pl.nIn
	nd := len(shape)
	nrows, l := fused.SplitRows(shape, p.Rows)
	if nrows == 0 {
		return nil
	}
	if l == 0 && pl.hasMax {
		return array.Errorf("cpu.RunFusedRows", "Max or Min over empty rows of shape %v has no identity", shape)
	}
	ps := pl.kept
	bufBytes := 0
	for r, b := range ps.buf {
		if b >= 0 {
			bufBytes += l * p.DType(r).Size()
		}
	}
	if bufBytes > rowCacheBytes {
		ps = pl.recompute
		bufBytes = 0
	}
	rin := make([]rowIn, nIn)
	for i, b := range ins {
		ri := &rin[i]
		ri.b, ri.row, ri.sz = broadcastBuf(b, shape), p.InRow[i], b.DType.Size()
		if !ri.row {
			ri.direct = innerContiguous(ri.b.Shape[nd-p.Rows:], ri.b.Strides[nd-p.Rows:])
			if !ri.direct {
				ri.w = newWalker(ri.b.Shape, ri.b.Strides)
			}
		}
	}
	outData := make([][]byte, len(outs))
	for i, o := range outs {
		sz := o.DType.Size()
		outData[i] = o.Data[o.Offset*sz : (o.Offset+o.Size())*sz]
	}
	tileLen := min(tileElems, max(l, 1))
	// a worker's memory: row buffers, scratch tiles, gathered inputs,
	// a float32 tile for folding halves, then a value of each register
	bufStride := l * 8
	scratchBase := ps.nbufs * bufStride
	inBase := scratchBase + ps.nslots*tileLen*8
	halfBase := inBase + nIn*tileLen*8
	regBase := halfBase + tileLen*4
	need := regBase + (nIn+len(p.Instrs))*8
	var mu sync.Mutex
	var firstErr error
	ParallelFor(nrows, max(1, grain/max(l, 1)), func(lo, hi int) {
		ap, _ := pl.arenas.Get().(*[]byte)
		if ap == nil || len(*ap) < need {
			ap = new([]byte)
			*ap = make([]byte, need)
		}
		defer pl.arenas.Put(ap)
		w := rowWorker{pl: pl, ps: ps, arena: *ap, l: l, tileLen: tileLen, bufStride: bufStride, scratchBase: scratchBase,
			inBase: inBase, halfBase: halfBase, regBase: regBase, rin: rin, outData: outData,
			tiles: make([][]byte, nIn+len(p.Instrs)), sums: make([]float64, len(p.Instrs))}
		for r := lo; r < hi; r++ {
			if err := w.row(r); err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				return
			}
		}
	})
	return firstErr
}

// innerContiguous reports whether a view's row axes (shape, strides) are
// one run of stride 1.
func innerContiguous(shape, strides []int) bool {
	s := 1
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] != 1 && strides[i] != s {
			return false
		}
		s *= shape[i]
	}
	return true
}

// flatOffset returns the memory offset of b's element at row-major index
// flat.
func flatOffset(b Buf, flat int) int {
	off := b.Offset
	for d := len(b.Shape) - 1; d >= 0 && flat > 0; d-- {
		off += flat % b.Shape[d] * b.Strides[d]
		flat /= b.Shape[d]
	}
	return off
}

// rowWorker runs rows on one goroutine with its own memory.
type rowWorker struct {
	pl                                     *rowPlan
	ps                                     *rowPasses
	arena                                  []byte
	l, tileLen, bufStride                  int
	scratchBase, inBase, halfBase, regBase int
	rin                                    []rowIn
	outData                                [][]byte
	s                                      int       // the pass
	sums                                   []float64 // per instruction: a shifted Exp's sum over the tile
	tiles                                  [][]byte  // this tile of each register the pass computes, and of the inputs
}

// reg returns the bytes of register r's value for this row (per-row
// registers).
func (w *rowWorker) reg(r int) []byte {
	return w.arena[w.regBase+r*8:][:w.pl.p.DType(r).Size()]
}

// row runs the program over row r.
func (w *rowWorker) row(r int) error {
	pl, ps, p := w.pl, w.ps, w.pl.p
	nIn := pl.nIn
	for i := range w.rin {
		if ri := &w.rin[i]; ri.row {
			o := flatOffset(ri.b, r*w.l)
			copy(w.reg(i), ri.b.Data[o*ri.sz:(o+1)*ri.sz])
		}
	}
	for s := 0; s <= ps.passes; s++ {
		for _, k := range ps.before[s] {
			if err := w.rowInstr(k); err != nil {
				return err
			}
			w.storeRow(r, nIn+k)
		}
		if s == ps.passes {
			break
		}
		w.s = s
		var accs [maxRowFolds]foldAcc
		folds := ps.folds[s]
		if len(folds) > maxRowFolds {
			return array.Errorf("cpu.RunFusedRows", "%d folds in one pass, at most %d", len(folds), maxRowFolds)
		}
		for j, k := range folds {
			accs[j] = newFoldAcc(opset.ReduceOp(p.Instrs[k].Op))
		}
		tiles := w.tiles
		for lo := 0; lo < w.l; lo += w.tileLen {
			m := min(w.tileLen, w.l-lo)
			for i := range w.rin {
				ri := &w.rin[i]
				switch {
				case ri.row:
				case ri.direct:
					o := flatOffset(ri.b, r*w.l) + lo
					tiles[i] = ri.b.Data[o*ri.sz : (o+m)*ri.sz]
				default:
					tiles[i] = w.arena[w.inBase+i*w.tileLen*8:][:m*ri.sz]
					gatherRange(ri.w, tiles[i], ri.b, r*w.l+lo, r*w.l+lo+m)
				}
			}
			for _, k := range ps.elem[s] {
				if err := w.elemInstr(k, r, lo, m, tiles); err != nil {
					return err
				}
			}
			for j, k := range folds {
				a := p.Instrs[k].Args[0]
				if e := a - nIn; e >= 0 && ps.now[s][a] && pl.shift[e] >= 0 && opset.ReduceOp(p.Instrs[k].Op) == opset.Sum {
					// the shifted Exp summed its tile
					accs[j].f32 += float32(w.sums[e])
					accs[j].f64 += w.sums[e]
					continue
				}
				w.fold(&accs[j], k, p.DType(a), w.operand(a, r, lo, m, tiles), m)
			}
		}
		for j, k := range folds {
			accs[j].store(w.reg(nIn+k), p.Instrs[k].DType)
			w.storeRow(r, nIn+k)
		}
	}
	return nil
}

// maxRowFolds bounds the folds of one pass (fusion's 64 instructions
// would allow more; no real program has them, and a fixed array keeps
// the accumulators off the heap).
const maxRowFolds = 16

// kept returns the tile [lo, lo+m) of row r of a register computed in an
// earlier pass: from its output or its row buffer.
func (w *rowWorker) kept(a, r, lo, m int) []byte {
	sz := w.pl.p.DType(a).Size()
	if outs := w.pl.outsOf[a]; len(outs) > 0 {
		return w.outData[outs[0]][(r*w.l+lo)*sz : (r*w.l+lo+m)*sz]
	}
	if o := w.ps.alias[a]; o >= 0 {
		return w.outData[o][(r*w.l+lo)*sz : (r*w.l+lo+m)*sz]
	}
	return w.arena[w.ps.buf[a]*w.bufStride+lo*sz:][:m*sz]
}

// operand returns per-element register a's tile for an instruction of
// this tile: computed in this pass, an input's, or kept from an earlier
// pass.
func (w *rowWorker) operand(a, r, lo, m int, tiles [][]byte) []byte {
	if a >= w.pl.nIn && !w.ps.now[w.s][a] {
		return w.kept(a, r, lo, m)
	}
	return tiles[a]
}

// dest returns where register x's tile [lo, lo+m) of row r goes.
func (w *rowWorker) dest(x, r, lo, m int) []byte {
	ps := w.ps
	sz := w.pl.p.DType(x).Size()
	switch {
	case len(w.pl.outsOf[x]) > 0:
		return w.outData[w.pl.outsOf[x][0]][(r*w.l+lo)*sz : (r*w.l+lo+m)*sz]
	case ps.alias[x] >= 0:
		return w.outData[ps.alias[x]][(r*w.l+lo)*sz : (r*w.l+lo+m)*sz]
	case ps.buf[x] >= 0:
		return w.arena[ps.buf[x]*w.bufStride+lo*sz:][:m*sz]
	}
	return w.arena[w.scratchBase+ps.slot[x]*w.tileLen*8:][:m*sz]
}

// elemInstr runs per-element instruction k on the tile [lo, lo+m) of row
// r.
func (w *rowWorker) elemInstr(k, r, lo, m int, tiles [][]byte) error {
	p := w.pl.p
	x := w.pl.nIn + k
	in := p.Instrs[k]
	d := w.dest(x, r, lo, m)
	ks := &w.pl.kern[k]
	arg := func(j int) ([]byte, bool) { // the operand, and whether it is per row
		a := in.Args[j]
		if p.RowLevel(a) {
			return w.reg(a), true
		}
		return w.operand(a, r, lo, m, tiles), false
	}
	defer func() { tiles[x] = d }()
	if sh := w.pl.shift[k]; sh >= 0 {
		a := w.operand(w.pl.shifted[k], r, lo, m, tiles)
		if in.DType == array.Float32 {
			w.sums[k] = smFloat32.expScale(asSlice[float32](d), asSlice[float32](a), asSlice[float32](w.reg(sh))[0], 1)
		} else {
			w.sums[k] = smFloat64.expScale(asSlice[float64](d), asSlice[float64](a), asSlice[float64](w.reg(sh))[0], 1)
		}
		return nil
	}
	if w.pl.prod[k] {
		fa := w.pl.fargs[k]
		a := w.operand(fa[0], r, lo, m, tiles)
		c := w.operand(fa[2], r, lo, m, tiles)
		if b := fa[1]; p.RowLevel(b) {
			ks.fusedS(d, a, w.reg(b), c)
		} else {
			ks.fused(d, a, w.operand(b, r, lo, m, tiles), c)
		}
		return nil
	}
	switch in.Kind {
	case fused.Unary, fused.AsType:
		if a, _ := arg(0); ks.unary != nil {
			ks.unary(d, a)
			return nil
		}
	case fused.Binary:
		a, ra := arg(0)
		b, rb := arg(1)
		switch {
		case !ra && !rb && ks.binary != nil:
			ks.binary(d, a, b)
			return nil
		case !ra && rb && w.pl.recip[k]:
			var inv [8]byte
			if in.DType == array.Float32 {
				asSlice[float32](inv[:])[0] = 1 / asSlice[float32](b)[0]
			} else {
				asSlice[float64](inv[:])[0] = 1 / asSlice[float64](b)[0]
			}
			ks.vs(d, a, inv[:])
			return nil
		case !ra && rb && ks.vs != nil:
			ks.vs(d, a, b)
			return nil
		case ra && !rb && ks.sv != nil:
			ks.sv(d, b, a)
			return nil
		}
	}
	bufs := make([]Buf, len(in.Args))
	for j := range in.Args {
		v, isRow := arg(j)
		bufs[j] = Buf{Data: v, DType: p.DType(in.Args[j]), Shape: []int{m}, Strides: []int{1}}
		if isRow {
			bufs[j].Strides = []int{0}
		}
	}
	return w.generic(in, Buf{Data: d, DType: in.DType, Shape: []int{m}, Strides: []int{1}}, bufs)
}

// generic runs an instruction through the checked kernels.
func (w *rowWorker) generic(in fused.Instr, dst Buf, args []Buf) error {
	switch in.Kind {
	case fused.Unary:
		return Unary(opset.UnaryOp(in.Op), dst, args[0])
	case fused.Binary:
		return Binary(opset.BinaryOp(in.Op), dst, args[0], args[1])
	case fused.Where:
		return Where(dst, args[0], args[1], args[2])
	case fused.AsType:
		return Copy(dst, args[0])
	}
	return array.Errorf("cpu.RunFusedRows", "instruction %s cannot run per element", in.Name())
}

// rowInstr computes per-row instruction k for the current row.
func (w *rowWorker) rowInstr(k int) error {
	p := w.pl.p
	in := p.Instrs[k]
	d := w.reg(w.pl.nIn + k)
	if in.Kind == fused.Count {
		return rowCount(d, in.DType, max(w.l-in.N, 0))
	}
	ks := &w.pl.kern[k]
	switch {
	case (in.Kind == fused.Unary || in.Kind == fused.AsType) && ks.unary != nil:
		ks.unary(d, w.reg(in.Args[0]))
		return nil
	case in.Kind == fused.Binary && ks.binary != nil:
		ks.binary(d, w.reg(in.Args[0]), w.reg(in.Args[1]))
		return nil
	}
	one := []int{1}
	args := make([]Buf, len(in.Args))
	for j, a := range in.Args {
		args[j] = Buf{Data: w.reg(a), DType: p.DType(a), Shape: one, Strides: one}
	}
	return w.generic(in, Buf{Data: d, DType: in.DType, Shape: one, Strides: one}, args)
}

// rowCount writes n as dtype dt.
func rowCount(d []byte, dt array.DType, n int) error {
	v := Buf{Data: d, DType: dt, Shape: []int{1}, Strides: []int{1}}
	switch dt {
	case array.Float32:
		asSlice[float32](d)[0] = float32(n)
	case array.Float64:
		asSlice[float64](d)[0] = float64(n)
	default:
		redStoreHalf(v)(0, 1, []float32{float32(n)})
	}
	return nil
}

// storeRow writes per-row register x of row r to the outputs that are
// it. An output of one element is a count, the same for every row, and
// row 0 writes it.
func (w *rowWorker) storeRow(r, x int) {
	sz := w.pl.p.DType(x).Size()
	for _, o := range w.pl.outsOf[x] {
		switch d := w.outData[o]; {
		case len(d) >= (r+1)*sz:
			copy(d[r*sz:(r+1)*sz], w.reg(x))
		case r == 0:
			copy(d, w.reg(x))
		}
	}
}

// foldAcc is a fold's running value: float64 for float64 rows, float32
// for the others (halves fold in float32, as cpu.Reduce does).
type foldAcc struct {
	op  opset.ReduceOp
	f32 float32
	f64 float64
}

func newFoldAcc(op opset.ReduceOp) foldAcc {
	a := foldAcc{op: op}
	switch op {
	case opset.Max:
		a.f32, a.f64 = float32(math.Inf(-1)), math.Inf(-1)
	case opset.Min:
		a.f32, a.f64 = float32(math.Inf(1)), math.Inf(1)
	case opset.Prod:
		a.f32, a.f64 = 1, 1
	}
	return a
}

// fold adds the m elements x of dtype dt to acc, the value of fold
// instruction k.
func (w *rowWorker) fold(acc *foldAcc, k int, dt array.DType, x []byte, m int) {
	switch dt {
	case array.Float64:
		acc.f64 = w.pl.run64[k](acc.f64, asSlice[float64](x)[:m])
		return
	case array.Float32:
	default:
		h := asSlice[float32](w.arena[w.halfBase:])[:m]
		redLoadHalf(Buf{Data: x, DType: dt})(h, 0, 1)
		x = w.arena[w.halfBase:][:m*4]
	}
	acc.f32 = w.pl.run32[k](acc.f32, asSlice[float32](x)[:m])
}

// store writes the fold's value as dtype dt.
func (a *foldAcc) store(d []byte, dt array.DType) {
	switch dt {
	case array.Float64:
		asSlice[float64](d)[0] = a.f64
	case array.Float32:
		asSlice[float32](d)[0] = a.f32
	default:
		redStoreHalf(Buf{Data: d, DType: dt})(0, 1, []float32{a.f32})
	}
}
