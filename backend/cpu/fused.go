package cpu

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/fathom-go/fathom/internal/strided"

	"github.com/fathom-go/fathom/internal/fused"
	"github.com/fathom-go/fathom/internal/opset"
)

// RunFused runs the fused elementwise program p (package compile builds
// them) as a blocked interpreter: tiles of tileElems elements go through
// the whole program while they are in L1/L2, and the tiles are split
// across cores. A program that is a chain of float32 operations the chain
// kernel has runs as one (see chain). ins are p's inputs, of its input
// dtypes, each broadcastable to the outputs' shape (numpy's rule; any
// strides); outs are its outputs, row-major, of one shape and of the
// dtypes of p's output registers. The caller has checked the shapes and
// dtypes. The tile kernels each instruction calls are resolved on p's
// first run and kept with p, as is scratch memory; p may be run by many
// goroutines at once.
func RunFused(p *fused.Program, outs, ins []Buf) error {
	return interpOf(p).run(outs, ins)
}

// interpKey is the key of a program's interp in its cache.
type interpKey struct{}

func interpOf(p *fused.Program) *interp {
	return p.Cache(interpKey{}, func() any { return newInterp(p) }).(*interp)
}

// interp is a program resolved for the interpreter: a tile kernel per
// instruction, a scratch tile per live intermediate result, scratch
// memory reused across calls, and the last call's chain.
type interp struct {
	p *fused.Program

	steps        []tileStep // one per instruction
	nslots       int
	slotBytes    int                    // one scratch tile's bytes: tileElems of the widest dtype
	outTileBytes int                    // the same for an output tile, when results are streamed
	arenas       sparePool[tileScratch] // reused across calls

	chain atomic.Pointer[chainMemo] // the last call's chainOf
}

// tileStep is what the interpreter does for one instruction on each tile,
// worked out when the program is built so the tile loop does no lookups.
type tileStep struct {
	tileKernels
	// nt are the twins of the kernels that store around the caches (see
	// unaryTileFuncNT), nil where there are none: a streamed result that
	// no later step reads (readLater) is computed straight into the
	// output.
	nt        tileKernels
	readLater bool

	// A product (Mul or Square) that only one Add or Mul reads is done by
	// that instruction in the same pass, skip marking the product (see
	// tileKernels.fused).
	skip  bool
	fargs [3]int

	out  int // output index, or -1 for a scratch tile
	slot int // the scratch tile when out < 0
	size int // element size of the result
}

// tileKernels are an instruction's tile kernels, called without Unary's
// and Binary's checks, which cost more than a tile's arithmetic; nil
// where there is none. vs and sv take a scalar input operand as it is,
// second or first. fused computes (a*b) + c or (a*b) * c with the
// operands in tileStep.fargs, fusedS the same with b a scalar input. The
// product is rounded first, as the two instructions round it, so fusing
// changes no result.
type tileKernels struct {
	unary         func(dst, src []byte)
	binary        func(dst, a, b []byte)
	vs, sv        func(dst, a, s []byte)
	fused, fusedS func(dst, a, b, c []byte)
}

// has reports whether ks has the kernel that a step run as kind calls.
func (ks *tileKernels) has(kind callKind) bool {
	switch kind {
	case callUnary:
		return ks.unary != nil
	case callBinary:
		return ks.binary != nil
	case callVS:
		return ks.vs != nil
	case callSV:
		return ks.sv != nil
	case callFused:
		return ks.fused != nil
	case callFusedS:
		return ks.fusedS != nil
	}
	return false
}

// newInterp resolves p's instructions to tile kernels and assigns its
// intermediate results scratch tiles.
func newInterp(p *fused.Program) *interp {
	f := &interp{p: p}
	outOf := make(map[int]int, len(p.Outputs))
	for i, r := range p.Outputs {
		outOf[r] = i
	}
	nIn := len(p.InDTypes)
	f.steps = make([]tileStep, len(p.Instrs))
	for k, in := range p.Instrs {
		st := &f.steps[k]
		st.out, st.size = -1, in.DType.Size()
		switch {
		case in.Kind == fused.Unary && p.DType(in.Args[0]) == in.DType:
			st.unary = unaryTileFunc(opset.UnaryOp(in.Op), in.DType)
			st.nt.unary = unaryTileFuncNT(opset.UnaryOp(in.Op), in.DType)
		case in.Kind == fused.Binary && p.DType(in.Args[0]) == in.DType && p.DType(in.Args[1]) == in.DType:
			st.binary = binaryTileFunc(opset.BinaryOp(in.Op), in.DType)
			st.vs, st.sv = binaryScalarTileFuncs(opset.BinaryOp(in.Op), in.DType)
			st.nt.binary = binaryTileFuncNT(opset.BinaryOp(in.Op), in.DType)
			st.nt.vs, st.nt.sv = binaryScalarTileFuncsNT(opset.BinaryOp(in.Op), in.DType)
		case in.Kind == fused.AsType:
			st.unary = convertTileFunc(p.DType(in.Args[0]), in.DType)
		}
	}
	f.fuseProducts(outOf)
	for k := range f.steps {
		f.steps[k].readLater = f.readAfter(k)
	}
	slot := f.slots(outOf)
	widest, widestOut := 1, 1
	for k := range f.steps {
		st := &f.steps[k]
		if o, ok := outOf[nIn+k]; ok {
			st.out = o
			widestOut = max(widestOut, st.size)
		} else if s, ok := slot[nIn+k]; ok {
			st.slot = s
			f.nslots = max(f.nslots, s+1)
			widest = max(widest, st.size)
		}
	}
	f.slotBytes, f.outTileBytes = tileElems*widest, tileElems*widestOut
	return f
}

// fuseProducts gives each Add or Mul of a product that nothing else reads
// the product's work (see tileStep). A fused instruction is not itself
// fused into the next: each pass does at most two operations.
func (f *interp) fuseProducts(outOf map[int]int) {
	instrs := f.p.Instrs
	nIn := len(f.p.InDTypes)
	reads := make([]int, nIn+len(instrs))
	for _, in := range instrs {
		for _, a := range in.Args {
			reads[a]++
		}
	}
	// product returns the factors of register r if it is a product that
	// only one instruction reads, in a tile kernel of its own
	product := func(r int) (a, b int, ok bool) {
		if r < nIn || reads[r] != 1 {
			return 0, 0, false
		}
		if _, isOut := outOf[r]; isOut {
			return 0, 0, false
		}
		k := r - nIn
		in, st := instrs[k], &f.steps[k]
		switch {
		case st.fused != nil:
			return 0, 0, false
		case in.Kind == fused.Binary && opset.BinaryOp(in.Op) == opset.Mul && st.binary != nil:
			return in.Args[0], in.Args[1], true
		case in.Kind == fused.Unary && opset.UnaryOp(in.Op) == opset.Square && st.unary != nil:
			return in.Args[0], in.Args[0], true // x*x, as Square computes it
		}
		return 0, 0, false
	}
	for k, in := range instrs {
		st := &f.steps[k]
		if in.Kind != fused.Binary || st.binary == nil {
			continue
		}
		p, q := in.Args[0], in.Args[1]
		a, b, ok := product(p)
		if !ok {
			p, q = q, p // addition and multiplication commute exactly
			a, b, ok = product(p)
		}
		if !ok {
			continue
		}
		if st.fused, st.fusedS = productTileFuncs(opset.BinaryOp(in.Op), in.DType); st.fused == nil {
			continue
		}
		st.nt.fused, st.nt.fusedS = productTileFuncsNT(opset.BinaryOp(in.Op), in.DType)
		st.fargs = [3]int{a, b, q}
		f.steps[p-nIn].skip = true
	}
}

// tileElems is the interpreter's tile: 2048 elements, 8–16 KiB per
// register, so a program's live registers stay in L1/L2 (measured against
// 512, 1024, 4096 and 8192 with BenchmarkGELU: smaller tiles lose more to
// the per-tile work than they gain from L1).
const tileElems = 2048

// streamBytes is the size of results from which the interpreter stores
// its output tiles around the caches (storeStream): results this large
// do not stay in a last-level cache for their reader anyway, and the
// ordinary stores would first read every line they overwrite.
var streamBytes = 32 << 20

// prefetchTiles is how far ahead the interpreter prefetches its direct
// inputs (measured against 0, 1 and prefetching into L1 with
// BenchmarkGELU: docs/performance.md).
const prefetchTiles = 2

// prefetchMaxDirect is the most direct inputs the interpreter prefetches
// for. With more, the prefetches cost more than they save: the compiled
// Adam update (four direct inputs, three outputs) took 7–13% less time
// without them, where a CNN's bias and ReLU (one) took ~1.5% more.
const prefetchMaxDirect = 2

// runState is one call's view of its operands and its plan. A call too
// small to split over cores keeps it on its stack, and its slices too
// where the program has at most smallIns inputs, smallOuts outputs and
// smallSteps steps: the arithmetic of a call on a few elements takes
// less time than an allocation, or than the write barriers of filling a
// pooled state while the collector runs.
type runState struct {
	n       int
	inBufs  []Buf // the call's ins (or a copy), unless an input is broadcast: views
	views   []Buf // room for the inputs viewed at the output's shape
	walkers []*walker
	direct  []bool   // row-major and unbroadcast: tiles are slices of it
	sc      [][]byte // the element of a one-element input
	outData [][]byte
	calls   []call
	tiled   []bool
	chain   *chain
	chainIn []int
	stream  bool
}

const (
	smallIns   = 8
	smallOuts  = 4
	smallSteps = 16
)

func (f *interp) run(outs, ins []Buf) error {
	n := outs[0].Size()
	ntiles := (n + tileElems - 1) / tileElems
	g := max(1, grain/tileElems)
	if ntiles >= 2*g {
		return f.runSplit(ntiles, g, outs, ins)
	}
	// As ParallelFor would, on this goroutine, without its closure.
	nIn, nOut, nSteps := len(f.p.InDTypes), len(f.p.Outputs), len(f.steps)
	var rs runState
	var (
		views   [smallIns]Buf
		walkers [smallIns]*walker
		direct  [smallIns]bool
		sc      [smallIns][]byte
		tiled   [smallIns]bool
		outData [smallOuts][]byte
		calls   [smallSteps]call
	)
	// each slice on the heap only if its program is larger than the room
	rs.views, rs.walkers = slices.Grow(views[:0], nIn)[:nIn], slices.Grow(walkers[:0], nIn)[:nIn]
	rs.direct, rs.sc, rs.tiled = slices.Grow(direct[:0], nIn)[:nIn], slices.Grow(sc[:0], nIn)[:nIn], slices.Grow(tiled[:0], nIn)[:nIn]
	rs.outData, rs.calls = slices.Grow(outData[:0], nOut)[:nOut], slices.Grow(calls[:0], nSteps)[:nSteps]
	rs.inBufs = ins
	f.setup(&rs, outs, ins)
	return f.runRange(&rs, 0, ntiles)
}

// runSplit runs a call of ntiles tiles split over cores, grain tiles or
// more at a time.
func (f *interp) runSplit(ntiles, grain int, outs, ins []Buf) error {
	rs := f.newRunState()
	rs.inBufs = slices.Clone(ins) // the goroutines' state is on the heap: ins stays the caller's
	f.setup(&rs, outs, ins)
	var mu sync.Mutex
	var firstErr error
	ParallelFor(ntiles, grain, func(tlo, thi int) {
		if err := f.runRange(&rs, tlo, thi); err != nil {
			mu.Lock()
			if firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
		}
	})
	return firstErr
}

func (f *interp) newRunState() runState {
	nIn := len(f.p.InDTypes)
	return runState{views: make([]Buf, nIn), walkers: make([]*walker, nIn), direct: make([]bool, nIn),
		sc: make([][]byte, nIn), tiled: make([]bool, nIn),
		outData: make([][]byte, len(f.p.Outputs)), calls: make([]call, len(f.steps))}
}

// setup fills rs for a call on ins and outs: which inputs are read
// directly, gathered or as scalars, and the chain or plan to run.
// rs.inBufs is ins: direct inputs and scalars (read as sc, or copied
// into a tile from Data and Offset) are read as they are, and only a
// broadcast input makes it views.
func (f *interp) setup(rs *runState, outs, ins []Buf) {
	shape := outs[0].Shape
	n := outs[0].Size()
	rs.n = n
	for i, b := range ins {
		rs.direct[i] = slices.Equal(b.Shape, shape) && b.RowMajor()
		switch {
		case b.Size() == 1:
			sz := b.DType.Size()
			rs.sc[i] = b.Data[b.Offset*sz : (b.Offset+1)*sz]
		case !rs.direct[i]:
			if &rs.inBufs[0] != &rs.views[0] {
				copy(rs.views, ins)
				rs.inBufs = rs.views
			}
			rs.views[i] = broadcastBuf(b, shape)
			rs.walkers[i] = newWalker(rs.views[i].Shape, rs.views[i].Strides)
		}
	}
	rs.chain, rs.chainIn = f.chainFor(rs.sc)
	if rs.chain == nil {
		f.plan(rs.sc, rs.calls, rs.tiled)
	}
	outBytes := 0
	for i, o := range outs {
		sz := o.DType.Size()
		rs.outData[i] = o.Data[o.Offset*sz : (o.Offset+n)*sz]
		outBytes += n * sz
	}
	rs.stream = outBytes >= streamBytes
}

// runRange runs tiles [tlo, thi) of the call rs.
func (f *interp) runRange(rs *runState, tlo, thi int) error {
	if rs.chain != nil {
		runChain(tlo, thi, rs.n, rs.chain, rs.chainIn, rs.inBufs, rs.walkers, rs.outData[0], rs.stream)
		return nil
	}
	return f.runTiles(tlo, thi, rs)
}

// callKind is how a step runs in one call, once the call's scalar inputs
// are known.
type callKind uint8

const (
	callSkip    callKind = iota // a product done by its reader
	callUnary                   // unary(d, a)
	callBinary                  // binary(d, a, b)
	callVS                      // vs(d, a, scalar b)
	callSV                      // sv(d, a, scalar b): the scalar came first
	callFused                   // fused(d, a, b, c)
	callFusedS                  // fusedS(d, a, scalar b, c)
	callGeneric                 // Unary, Binary, Where or Copy on tiles
)

// call is one step of the program for one call: its kind and the
// registers of its operands.
type call struct {
	kind    callKind
	a, b, c int
}

// plan resolves each step for a call whose one-element inputs are those
// with sc[i] set, into calls: which kernel runs and in what operand
// order, so the tile loop makes no decisions. It sets tiled[i] for the
// one-element inputs that some step still reads as a whole tile.
func (f *interp) plan(sc [][]byte, calls []call, tiled []bool) {
	nIn := len(f.p.InDTypes)
	isScalar := func(r int) bool { return r < nIn && sc[r] != nil }
	for k := range f.steps {
		st, args := &f.steps[k], f.p.Instrs[k].Args
		cl := &calls[k]
		switch {
		case st.skip:
			*cl = call{kind: callSkip}
		case st.unary != nil:
			*cl = call{kind: callUnary, a: args[0]}
		case st.fused != nil:
			a, b, third := st.fargs[0], st.fargs[1], st.fargs[2]
			if isScalar(a) {
				a, b = b, a // multiplication commutes exactly
			}
			*cl = call{kind: callFused, a: a, b: b, c: third}
			if isScalar(b) && !isScalar(a) {
				cl.kind = callFusedS
			}
		case st.binary != nil:
			a, b := args[0], args[1]
			*cl = call{kind: callBinary, a: a, b: b}
			switch {
			case isScalar(b) && !isScalar(a) && st.vs != nil:
				cl.kind = callVS
			case isScalar(a) && !isScalar(b) && st.sv != nil:
				*cl = call{kind: callSV, a: b, b: a}
			}
		default:
			*cl = call{kind: callGeneric}
		}
	}
	clear(tiled)
	asTile := func(rs ...int) { // registers a step reads as tiles
		for _, r := range rs {
			if isScalar(r) {
				tiled[r] = true
			}
		}
	}
	for k, cl := range calls {
		switch cl.kind {
		case callUnary, callVS, callSV:
			asTile(cl.a)
		case callBinary:
			asTile(cl.a, cl.b)
		case callFused:
			asTile(cl.a, cl.b, cl.c)
		case callFusedS:
			asTile(cl.a, cl.c)
		case callGeneric:
			asTile(f.p.Instrs[k].Args...)
		}
	}
}

// tileScratch is what a goroutine running tiles needs besides the call's
// runState: the scratch tiles and the tile loop's bookkeeping, reused
// across calls.
type tileScratch struct {
	arena    []byte
	regs     [][]byte
	straight []bool
	outSteps []int
	pending  []streamOut
	tile     [1]int
	unit     [1]int
	zero     [1]int
}

// runTiles runs the program over tiles [tlo, thi) of the call rs, each
// step as rs.calls says.
func (f *interp) runTiles(tlo, thi int, rs *runState) error {
	n, inBufs, walkers, direct, sc, tiled, calls, outData, stream := rs.n, rs.inBufs, rs.walkers, rs.direct, rs.sc, rs.tiled, rs.calls, rs.outData, rs.stream
	p := f.p
	nIn := len(p.InDTypes)
	tileLen := min(tileElems, n)
	inBytes := tileLen * 8
	// scratch tiles, then two per output when results are streamed (this
	// tile's, and the last one's while it is stored), then the gathered
	// and scalar inputs
	outBase := f.nslots * f.slotBytes
	inBase := outBase
	if stream {
		inBase += 2 * len(outData) * f.outTileBytes
	}
	need := inBase + nIn*inBytes
	ts := f.arenas.get()
	if ts == nil {
		ts = f.arenas.fresh(tileScratch{regs: make([][]byte, nIn+len(p.Instrs)), straight: make([]bool, len(calls)), unit: [1]int{1}})
	}
	if len(ts.arena) < need {
		ts.arena = make([]byte, need)
	}
	defer f.putTileScratch(ts)
	if stream {
		// once for the chunk: ParallelFor's return hands the results on
		defer storeFence()
	}
	arena := ts.arena
	inTile := func(i int) []byte { return arena[inBase+i*inBytes:][:inBytes] }
	regs := ts.regs
	ts.tile[0] = tileLen
	tile, unit := ts.tile[:], ts.unit[:]
	for i := range nIn {
		if tiled[i] {
			// filled once per chunk, for the steps that have no kernel
			// taking it as a scalar
			dt := p.InDTypes[i]
			b := inBufs[i]
			src := Buf{Data: b.Data, DType: dt, Shape: tile, Strides: ts.zero[:], Offset: b.Offset}
			if err := Copy(Buf{Data: inTile(i)[:tileLen*dt.Size()], DType: dt, Shape: tile, Strides: unit}, src); err != nil {
				return err
			}
		}
	}
	buf := func(r int, data []byte) Buf {
		return Buf{Data: data, DType: p.DType(r), Shape: tile, Strides: unit}
	}
	// When results are streamed, the memory traffic of a tile is spread
	// over its steps: a piece of the inputs prefetchTiles ahead and a
	// piece of the last tile's outputs after each step, so that it
	// overlaps the arithmetic. A whole tile at once stalls the core:
	// prefetches beyond the misses it can have outstanding are dropped,
	// and non-temporal stores wait for the write-combining buffers
	// (docs/performance.md, compile). Smaller results, which
	// come from the caches, lose more to the calls than they gain.
	steps, outSteps := 0, ts.outSteps[:0]
	nDirect := 0
	for _, d := range direct {
		if d {
			nDirect++
		}
	}
	pf := nDirect <= prefetchMaxDirect
	straight := ts.straight // steps computed into the output
	clear(straight)
	for k, cl := range calls {
		if cl.kind != callSkip {
			steps++
			if stream && f.steps[k].out >= 0 {
				st := &f.steps[k]
				if straight[k] = st.nt.has(cl.kind) && !st.readLater; !straight[k] {
					outSteps = append(outSteps, k)
				}
			}
		}
	}
	steps = max(steps, 1)
	piece := tileElems
	if stream {
		piece = (tileElems + steps - 1) / steps
	}
	ts.outSteps = outSteps
	pending := ts.pending[:0] // the last tile's outputs
	for t := tlo; t < thi; t++ {
		lo := t * tileElems
		m := min(tileElems, n-lo)
		tile[0] = m
		half := t % 2 // of the streamed output tiles: the other is pending
		for i := range nIn {
			sz := p.InDTypes[i].Size()
			switch {
			case sc[i] != nil:
				if tiled[i] {
					regs[i] = inTile(i)[:m*sz]
				}
			case direct[i]:
				b := inBufs[i]
				regs[i] = b.Data[(b.Offset+lo)*sz : (b.Offset+lo+m)*sz]
			default:
				regs[i] = inTile(i)[:m*sz]
				gatherRange(walkers[i], regs[i], inBufs[i], lo, lo+m)
			}
		}
		ahead, step := lo+prefetchTiles*tileElems, 0
		if t+prefetchTiles >= thi {
			ahead = n
		}
		for k, cl := range calls {
			if cl.kind == callSkip {
				continue
			}
			if a, end := ahead+step*piece, min(ahead+tileElems, n); pf && a < end {
				e := min(a+piece, end)
				for i := range nIn {
					if direct[i] {
						b, sz := inBufs[i], p.InDTypes[i].Size()
						prefetch(b.Data[(b.Offset+a)*sz : (b.Offset+e)*sz])
					}
				}
			}
			step++
			st := &f.steps[k]
			var d []byte
			switch {
			case straight[k]:
				d = outData[st.out][lo*st.size : (lo+m)*st.size]
			case st.out >= 0 && stream:
				d = arena[outBase+(half*len(outData)+st.out)*f.outTileBytes:][:m*st.size]
			case st.out >= 0:
				d = outData[st.out][lo*st.size : (lo+m)*st.size]
			default:
				d = arena[st.slot*f.slotBytes:][:m*st.size]
			}
			regs[nIn+k] = d
			var err error
			ks := &st.tileKernels
			if straight[k] {
				ks = &st.nt
			}
			switch cl.kind {
			case callUnary:
				ks.unary(d, regs[cl.a])
			case callBinary:
				ks.binary(d, regs[cl.a], regs[cl.b])
			case callVS:
				ks.vs(d, regs[cl.a], sc[cl.b])
			case callSV:
				ks.sv(d, regs[cl.a], sc[cl.b])
			case callFused:
				ks.fused(d, regs[cl.a], regs[cl.b], regs[cl.c])
			case callFusedS:
				ks.fusedS(d, regs[cl.a], sc[cl.b], regs[cl.c])
			default:
				dst, args := buf(nIn+k, d), p.Instrs[k].Args
				switch ins := p.Instrs[k]; ins.Kind {
				case fused.Unary:
					err = Unary(opset.UnaryOp(ins.Op), dst, buf(args[0], regs[args[0]]))
				case fused.Binary:
					err = Binary(opset.BinaryOp(ins.Op), dst, buf(args[0], regs[args[0]]), buf(args[1], regs[args[1]]))
				case fused.Where:
					err = Where(dst, buf(args[0], regs[args[0]]), buf(args[1], regs[args[1]]), buf(args[2], regs[args[2]]))
				case fused.AsType:
					err = Copy(dst, buf(args[0], regs[args[0]]))
				}
			}
			if err != nil {
				return err
			}
			for i := range pending {
				pending[i].store(pending[i].piece)
			}
		}
		// The pieces after this tile's steps stored the last tile's
		// outputs whole: this tile's are next.
		pending = pending[:0]
		for _, k := range outSteps {
			st := &f.steps[k]
			pending = append(pending, streamOut{outData[st.out][lo*st.size : (lo+m)*st.size], regs[nIn+k], (m*st.size + steps - 1) / steps})
		}
	}
	for i := range pending {
		pending[i].store(len(pending[i].src))
	}
	ts.pending = pending
	return nil
}

// putTileScratch drops what ts holds of the call's memory and puts it
// back in the pool.
func (f *interp) putTileScratch(ts *tileScratch) {
	clear(ts.regs)
	clear(ts.pending[:cap(ts.pending)])
	f.arenas.put(ts)
}

// runChain runs the program as the chain ch (see chainOf), which reads
// the inputs ins, over tiles [tlo, thi) of an n-element result: in one
// call where the inputs' elements are in order (walkers[i] nil), else a
// tile at a time from copies. It does not prefetch: the hardware follows
// the streams in and out, and the interpreter's prefetches of a quarter
// tile slowed it (docs/performance.md, Chains).
func runChain(tlo, thi, n int, ch *chain, ins []int, inBufs []Buf, walkers []*walker, out []byte, stream bool) {
	const sz = 4 // float32
	if stream {
		defer storeFence()
	}
	lo, hi := tlo*tileElems, min(thi*tileElems, n)
	// a chain has at most chainInputs inputs: these stay on the stack
	var srcBufs, copyBufs [chainInputs][]byte
	srcs := srcBufs[:len(ins)]
	copies := copyBufs[:len(ins)] // for the inputs not in order
	step := hi - lo
	for k, i := range ins {
		if walkers[i] != nil {
			copies[k], step = make([]byte, tileElems*sz), tileElems
		}
	}
	for ; lo < hi; lo += step {
		e := min(lo+step, hi)
		for k, i := range ins {
			b := inBufs[i]
			if copies[k] == nil {
				srcs[k] = b.Data[(b.Offset+lo)*sz : (b.Offset+e)*sz]
			} else {
				srcs[k] = copies[k][:(e-lo)*sz]
				gatherRange(walkers[i], srcs[k], b, lo, e)
			}
		}
		if stream {
			ch.RunNT(out[lo*sz:e*sz], srcs)
		} else {
			ch.Run(out[lo*sz:e*sz], srcs)
		}
	}
}

// readAfter reports whether a step after k reads k's result.
func (f *interp) readAfter(k int) bool {
	r := len(f.p.InDTypes) + k
	for k2 := k + 1; k2 < len(f.p.Instrs); k2++ {
		if slices.Contains(f.reads(k2), r) {
			return true
		}
	}
	return false
}

// streamOut is an output tile on its way to memory: the rest of src, for
// dst, a piece of bytes after each step.
type streamOut struct {
	dst, src []byte
	piece    int
}

// store streams up to n more bytes of the tile, rounded up to whole cache
// lines.
func (s *streamOut) store(n int) {
	n = min(len(s.src), (n+63)/64*64)
	storeStream(s.dst[:n], s.src[:n])
	s.dst, s.src = s.dst[n:], s.src[n:]
}

// reads returns the registers that step k reads: none for a product done
// by its reader, the three operands for that reader.
func (f *interp) reads(k int) []int {
	st := &f.steps[k]
	switch {
	case st.skip:
		return nil
	case st.fused != nil:
		return st.fargs[:]
	}
	return f.p.Instrs[k].Args
}

// slots assigns each instruction register that is not an output (or a
// skipped product) a scratch tile, reusing a tile once its register has been
// read for the last time (linear scan), so a long program needs few tiles.
// A result takes its tile before its operands' tiles are freed, so it
// never overwrites an operand it is reading.
func (f *interp) slots(outOf map[int]int) map[int]int {
	nIn := len(f.p.InDTypes)
	last := make(map[int]int)
	for k := range f.p.Instrs {
		for _, a := range f.reads(k) {
			last[a] = k
		}
	}
	slot := map[int]int{}
	var free []int
	next := 0
	for k := range f.p.Instrs {
		r := nIn + k
		if _, isOut := outOf[r]; !isOut && !f.steps[k].skip {
			if len(free) > 0 {
				slot[r] = free[len(free)-1]
				free = free[:len(free)-1]
			} else {
				slot[r] = next
				next++
			}
		}
		for _, a := range f.reads(k) {
			if s, ok := slot[a]; ok && last[a] == k {
				free = append(free, s)
				last[a] = -1 // an operand read twice is freed once
			}
		}
	}
	return slot
}

// broadcastBuf views b broadcast to shape (numpy's rule).
func broadcastBuf(b Buf, shape []int) Buf {
	b.Strides, _ = strided.Broadcast(b.Shape, b.Strides, shape)
	b.Shape = shape
	return b
}
