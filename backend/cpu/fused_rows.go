package cpu

import (
	"math"
	"slices"
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
// max pass, an exp-and-sum pass, and a scale pass. Where the machine has
// the chain kernel, a pass of float32 arithmetic runs as chains instead,
// computing such values again in registers rather than keeping them
// (see rowChain): a layer norm is a sum, a (x - mean)² chain and its
// sum, and one chain for the result. Rows are shared over the cores
// dynamically. ins are p's inputs, each broadcastable to shape
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
	// cheap marks the per-element float32 registers that a chain
	// computes again from the inputs and per-row values in a few
	// arithmetic operations (see rowChain): kept for a later pass, they
	// would cost a store and a load where computing them costs less
	cheap []bool
	// the plans with and without row buffers, and with row buffers but
	// no chains, for rows too short for them (minChainRow)
	kept, recompute, plain *rowPasses
	scratch                sparePool[rowScratch]
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
	// chains[s] are the chains pass s runs instead of its instructions,
	// nil where it runs them one by one; nchains counts them all, and
	// kernels the kernel calls of all passes per tile
	chains  [][]rowChain
	nchains int
	kernels int
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
	all := func(int) bool { return true }
	pl.plain = pl.passesOf(all, false)
	pl.kept = pl.plain
	chains := newChain() != nil
	if chains {
		pl.findCheap()
		for _, ps := range []*rowPasses{pl.passesOf(all, true), pl.passesOf(func(r int) bool { return !pl.cheap[r] }, true)} {
			if ps.kernels < pl.kept.kernels {
				pl.kept = ps
			}
		}
	}
	pl.recompute = pl.passesOf(func(int) bool { return false }, chains)
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

// passesOf orders the work. A per-element register for which keep is
// true is computed once, in the first pass that can, and kept for the
// passes after; the others, outputs aside, are computed again in each
// pass that reads them. With chains, passes run as chains where that
// takes fewer kernel calls (chainPasses).
func (pl *rowPlan) passesOf(keep func(r int) bool, chains bool) *rowPasses {
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
			if ps.pass[r] >= 0 && ps.pass[r] < s && (keep(r) || len(pl.outsOf[r]) > 0) {
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
	ps.chains = make([][]rowChain, ps.passes)
	if chains {
		pl.chainPasses(ps)
	} else {
		for s := range ps.passes {
			ps.kernels += pl.byInstr(ps, s)
		}
	}
	return ps
}

// chainOp reports whether a row chain takes instruction in: float32
// arithmetic (Add, Sub, Mul, Div, Maximum, Minimum, Neg, Square). The
// chain kernel has Exp and the other functions too, but its block of
// them costs more than their own kernels (exp(x - m) over a row of 1024
// in L1: 0.6 us as a chain, 0.35 us as subtract and exp kernels).
func chainOp(in fused.Instr) bool {
	switch {
	case in.DType != array.Float32:
		return false
	case in.Kind == fused.Unary:
		return opset.UnaryOp(in.Op) == opset.Neg || opset.UnaryOp(in.Op) == opset.Square
	case in.Kind == fused.Binary:
		return isArith(opset.BinaryOp(in.Op))
	}
	return false
}

// findCheap marks the cheap registers: chainOp instructions on inputs,
// per-row values and cheap registers.
func (pl *rowPlan) findCheap() {
	p, nIn := pl.p, pl.nIn
	pl.cheap = make([]bool, nIn+len(p.Instrs))
	for k, in := range p.Instrs {
		r := nIn + k
		ok := !p.RowLevel(r) && chainOp(in)
		for _, a := range in.Args {
			ok = ok && (a < nIn || p.RowLevel(a) || pl.cheap[a])
		}
		pl.cheap[r] = ok
	}
}

// rowChain is a register that a pass computes with the chain kernel
// (see chain) from tiles (srcs, by the chain's input index: the
// program's inputs, values of earlier passes, and values this pass
// stored before it) and per-row values (the chain's scalars, set for
// each row). The instructions between them run in registers, a block at
// a time, where the tile kernels make a pass with a store and a load per
// instruction.
type rowChain struct {
	ch      *chain
	reg     int
	srcs    []int
	scalars []rowScalar // by index in ch.scalars
	at      int         // the index of the worker's copy (rowScratch.chains)
}

// rowScalar is a chain's scalar: per-row register reg, or for a division
// by it its reciprocal (as the runner divides).
type rowScalar struct {
	reg   int
	recip bool
}

// chainPasses decides, for each pass of ps, whether it runs as chains:
// where they make fewer kernel calls per tile than its instructions and
// folds do one by one. It counts the calls of the chosen ways in
// ps.kernels.
func (pl *rowPlan) chainPasses(ps *rowPasses) {
	for s := range ps.passes {
		folds := len(ps.folds[s])
		byInstr := pl.byInstr(ps, s)
		cs := pl.chainsOf(ps, s)
		if len(cs) == 0 || len(cs)+folds >= byInstr {
			ps.kernels += byInstr
			continue
		}
		for j := range cs {
			cs[j].at = ps.nchains
			ps.nchains++
		}
		ps.chains[s] = cs
		ps.kernels += len(cs) + folds
	}
}

// byInstr returns the kernel calls per tile of pass s run instruction
// by instruction.
func (pl *rowPlan) byInstr(ps *rowPasses, s int) int {
	n := len(ps.elem[s]) + len(ps.folds[s])
	for _, k := range ps.folds[s] {
		if pl.summedBy(ps, s, k) {
			n--
		}
	}
	return n
}

// summedBy reports whether fold k of pass s is a Sum of a shifted Exp
// that pass runs as one kernel, which gives the sum.
func (pl *rowPlan) summedBy(ps *rowPasses, s, k int) bool {
	a := pl.p.Instrs[k].Args[0]
	e := a - pl.nIn
	return e >= 0 && ps.now[s][a] && pl.shift[e] >= 0 && opset.ReduceOp(pl.p.Instrs[k].Op) == opset.Sum && ps.chains[s] == nil
}

// chainsOf returns the chains of pass s, one per register the pass
// stores (its folds' operands, its outputs and the values kept for later
// passes) in register order, or nil if one of them is not a chain.
func (pl *rowPlan) chainsOf(ps *rowPasses, s int) []rowChain {
	if newChain() == nil {
		return nil
	}
	p, nIn := pl.p, pl.nIn
	stored := make([]bool, nIn+len(p.Instrs))
	for _, k := range ps.folds[s] {
		stored[p.Instrs[k].Args[0]] = true
	}
	var cs []rowChain
	for r := nIn; r < len(stored); r++ {
		if !ps.now[s][r] || !stored[r] && len(pl.outsOf[r]) == 0 && ps.alias[r] < 0 && ps.buf[r] < 0 {
			continue
		}
		stored[r] = true
		c, ok := pl.rowChainOf(ps, s, r, stored)
		if !ok {
			return nil
		}
		cs = append(cs, c)
	}
	return cs
}

// rowChainOf returns the chain that computes register x in pass s, whose
// registers below x that are stored are tiles. It builds the chain of a
// one-output elementwise program, the instructions x needs over the
// tiles and per-row values it reads, with the elementwise interpreter's
// chainOf; each per-row value goes in as a scalar of a value of its own,
// by which it is found among the chain's scalars.
func (pl *rowPlan) rowChainOf(ps *rowPasses, s, x int, stored []bool) (rowChain, bool) {
	p, nIn := pl.p, pl.nIn
	var leaves []rowScalar // the program's inputs: registers, and for a scalar whether its reciprocal
	var scalar []bool
	leaf := func(a int, row, recip bool) {
		if !slices.Contains(leaves, rowScalar{a, recip}) {
			leaves = append(leaves, rowScalar{a, recip})
			scalar = append(scalar, row)
		}
	}
	var order []int // the instructions, arguments first
	seen := map[int]bool{}
	var walk func(r int) bool
	walk = func(r int) bool {
		if seen[r] {
			return true
		}
		seen[r] = true
		k := r - nIn
		in := p.Instrs[k]
		if !chainOp(in) {
			return false
		}
		for j, a := range in.Args {
			switch {
			case p.RowLevel(a):
				leaf(a, true, j == 1 && pl.recip[k])
			case a < nIn || stored[a] || !ps.now[s][a] && ps.pass[a] >= 0 && ps.pass[a] < s:
				leaf(a, false, false) // an input, stored in this pass, or kept from an earlier one
			case !walk(a):
				return false
			}
		}
		order = append(order, r)
		return true
	}
	if !walk(x) || len(order) == 0 {
		return rowChain{}, false
	}
	nl := len(leaves)
	dts := make([]array.DType, nl)
	sc := make([][]byte, nl)
	for i, l := range leaves {
		dts[i] = p.DType(l.reg)
		if scalar[i] {
			sc[i] = make([]byte, 4)
			asSlice[float32](sc[i])[0] = float32(i + 1)
		}
	}
	sub := map[int]int{}
	instrs := make([]fused.Instr, len(order))
	for i, r := range order {
		in := p.Instrs[r-nIn]
		in.Args = slices.Clone(in.Args)
		for j, a := range in.Args {
			if l := slices.Index(leaves, rowScalar{a, j == 1 && pl.recip[r-nIn]}); l >= 0 {
				in.Args[j] = l
			} else {
				in.Args[j] = sub[a]
			}
		}
		if pl.recip[r-nIn] {
			in.Op = uint8(opset.Mul)
		}
		sub[r] = nl + i
		instrs[i] = in
	}
	ch, tiles := (&interp{p: fused.New(dts, instrs, []int{nl + len(order) - 1})}).chainOf(sc)
	if ch == nil {
		return rowChain{}, false
	}
	c := rowChain{ch: ch, reg: x}
	for _, i := range tiles {
		c.srcs = append(c.srcs, leaves[i].reg)
	}
	for _, v := range ch.scalars {
		i := int(v) - 1
		if i < 0 || i >= nl || sc[i] == nil || float32(i+1) != v {
			return rowChain{}, false
		}
		c.scalars = append(c.scalars, leaves[i])
	}
	return c, true
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
	if l < minChainRow {
		ps = pl.plain
	}
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
		sc := pl.scratchFor(ps, need)
		defer pl.putScratch(sc)
		w := rowWorker{pl: pl, ps: ps, sc: sc, arena: sc.arena, l: l, tileLen: tileLen, bufStride: bufStride, scratchBase: scratchBase,
			inBase: inBase, halfBase: halfBase, regBase: regBase, rin: rin, outData: outData, tiles: sc.tiles, sums: sc.sums, hi: hi}
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

// rowScratch is a worker's memory, reused across runs: the arena (see
// run), a copy of each chain of the plan it was last used with, whose
// scalars the worker sets for each row, and the per-register and
// per-input slices of rowWorker.
type rowScratch struct {
	arena  []byte
	ps     *rowPasses
	chains []chain
	tiles  [][]byte
	sums   []float64
	base   []int // per input: the offset of the row's first element
	srcs   [chainInputs][]byte
	lanes  [16]float32 // see sumLeaf
	accs   [maxRowFolds]foldAcc
}

// scratchFor returns a worker's memory for plan ps with an arena of at
// least need bytes.
func (pl *rowPlan) scratchFor(ps *rowPasses, need int) *rowScratch {
	sc := pl.scratch.get()
	if sc == nil {
		n := pl.nIn + len(pl.p.Instrs)
		sc = pl.scratch.fresh(rowScratch{tiles: make([][]byte, n), sums: make([]float64, len(pl.p.Instrs)), base: make([]int, pl.nIn)})
	}
	if len(sc.arena) < need {
		sc.arena = make([]byte, need)
	}
	if sc.ps != ps {
		sc.ps, sc.chains = ps, make([]chain, ps.nchains)
		for _, cs := range ps.chains {
			for _, c := range cs {
				sc.chains[c.at] = *c.ch
				sc.chains[c.at].scalars = slices.Clone(c.ch.scalars)
			}
		}
	}
	return sc
}

// putScratch returns sc to the pool without its views of this run's
// operands, which it would otherwise keep alive.
func (pl *rowPlan) putScratch(sc *rowScratch) {
	clear(sc.tiles)
	clear(sc.srcs[:])
	pl.scratch.put(sc)
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
	sc                                     *rowScratch
	arena                                  []byte
	l, tileLen, bufStride                  int
	scratchBase, inBase, halfBase, regBase int
	rin                                    []rowIn
	outData                                [][]byte
	s                                      int       // the pass
	hi                                     int       // the end of the worker's rows
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
		switch ri := &w.rin[i]; {
		case ri.row:
			o := flatOffset(ri.b, r*w.l)
			copy(w.reg(i), ri.b.Data[o*ri.sz:(o+1)*ri.sz])
		case ri.direct:
			w.sc.base[i] = flatOffset(ri.b, r*w.l)
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
		if r+1 < w.hi {
			w.prefetchRow(r+1, s, ps.passes)
		}
		folds := ps.folds[s]
		if len(folds) > maxRowFolds {
			return array.Errorf("cpu.RunFusedRows", "%d folds in one pass, at most %d", len(folds), maxRowFolds)
		}
		accs := w.sc.accs[:len(folds)]
		for j, k := range folds {
			accs[j] = newFoldAcc(opset.ReduceOp(p.Instrs[k].Op))
		}
		chains := ps.chains[s]
		for j := range chains {
			w.setScalars(&chains[j])
		}
		tiles := w.tiles
		for lo := 0; lo < w.l; lo += w.tileLen {
			m := min(w.tileLen, w.l-lo)
			for i := range w.rin {
				ri := &w.rin[i]
				switch {
				case ri.row:
				case ri.direct:
					o := w.sc.base[i] + lo
					tiles[i] = ri.b.Data[o*ri.sz : (o+m)*ri.sz]
				default:
					tiles[i] = w.arena[w.inBase+i*w.tileLen*8:][:m*ri.sz]
					gatherRange(ri.w, tiles[i], ri.b, r*w.l+lo, r*w.l+lo+m)
				}
			}
			for j := range chains {
				w.runChain(&chains[j], r, lo, m, tiles)
			}
			if chains == nil {
				for _, k := range ps.elem[s] {
					if err := w.elemInstr(k, r, lo, m, tiles); err != nil {
						return err
					}
				}
			}
			for j, k := range folds {
				a := p.Instrs[k].Args[0]
				if pl.summedBy(ps, s, k) {
					// the shifted Exp summed its tile
					e := a - nIn
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

// prefetchRow asks for part of parts (one per pass) of the first lines
// of row r of each per-element output, ahead of the pass that writes
// them. An output row is written once, in a late pass, and its lines
// are not in cache (the output is a new array); the cores' own
// prefetchers follow reads, not a row of stores that starts a new page,
// so each store would wait for its line. With it, compiled layer norm
// on 1024x1024 float32 went from 1.22-1.39x ops.LayerNorm to 1.0-1.16x
// (RMS norm 1.16-1.30x to 0.86-0.93x, log-softmax 1.0x to 0.82x, softmax
// unchanged), calls interleaved on a loaded machine. Prefetching the
// inputs' next rows too made layer norm slower (1.18-1.24x): the reads
// follow a row's start soon enough, and the prefetches compete with the
// pass's own misses.
func (w *rowWorker) prefetchRow(r, part, parts int) {
	pf := vecBest
	if pf == nil || pf.prefetch == nil {
		return
	}
	n := min(w.l, rowPrefetchElems)
	a, e := n*part/parts, n*(part+1)/parts
	for i, o := range w.pl.p.Outputs {
		if !w.pl.p.RowLevel(o) {
			sz := w.pl.p.DType(o).Size()
			pf.prefetch(w.outData[i][(r*w.l+a)*sz : (r*w.l+e)*sz])
		}
	}
}

// minChainRow is the shortest row that runs chains: the chain kernel
// takes blocks of chainBlock elements, and the rest of a row goes through
// its partial path, which clears some 8 KiB of stack per call.
const minChainRow = 4 * chainBlock

// rowPrefetchElems bounds what prefetchRow asks for of an output row:
// a 4 KiB page of float32, after which the stores' own misses are under
// way (on rows of 1024, asking for 256, 512 or all 1024 elements made no
// difference beyond noise).
const rowPrefetchElems = 1024

// setScalars sets the scalars of the worker's copy of chain rc to this
// row's values.
func (w *rowWorker) setScalars(rc *rowChain) {
	c := &w.sc.chains[rc.at]
	for i, v := range rc.scalars {
		x := asSlice[float32](w.reg(v.reg))[0]
		if v.recip {
			x = 1 / x
		}
		c.scalars[i] = x
	}
}

// runChain computes chain rc's register on the tile [lo, lo+m) of row r.
func (w *rowWorker) runChain(rc *rowChain, r, lo, m int, tiles [][]byte) {
	srcs := w.sc.srcs[:len(rc.srcs)]
	for i, a := range rc.srcs {
		srcs[i] = w.operand(a, r, lo, m, tiles)
	}
	d := w.dest(rc.reg, r, lo, m)
	w.sc.chains[rc.at].Run(d, srcs)
	tiles[rc.reg] = d
}

// maxRowFolds bounds the folds of one pass (fusion's 64 instructions
// would allow more; no real program has them, and a fixed array keeps
// the accumulators in the worker's scratch).
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
	if a, b := in.Args[0], in.Args[len(in.Args)-1]; (in.Kind == fused.Unary || in.Kind == fused.Binary) &&
		p.DType(a) == in.DType && p.DType(b) == in.DType {
		done := false
		switch in.DType {
		case array.Float32:
			done = rowArith[float32](in, d, w.reg(a), w.reg(b))
		case array.Float64:
			done = rowArith[float64](in, d, w.reg(a), w.reg(b))
		}
		if done {
			return nil
		}
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
	switch dt {
	case array.Float32:
		asSlice[float32](d)[0] = float32(n)
	case array.Float64:
		asSlice[float64](d)[0] = float64(n)
	default:
		redStoreHalf(Buf{Data: d, DType: dt, Shape: []int{1}, Strides: []int{1}})(0, 1, []float32{float32(n)})
	}
	return nil
}

// rowArith computes per-row instruction in, an Add, Sub, Mul or Div of
// two values of its dtype C or the Sqrt of one, into d, and reports
// whether it did. Go rounds each as the kernels do, and a kernel call
// costs more than the arithmetic on one value.
func rowArith[C float32 | float64](in fused.Instr, d, a, b []byte) bool {
	x := asSlice[C](a)[0]
	var v C
	switch {
	case in.Kind == fused.Unary && opset.UnaryOp(in.Op) == opset.Sqrt:
		v = C(math.Sqrt(float64(x)))
	case in.Kind != fused.Binary:
		return false
	case opset.BinaryOp(in.Op) == opset.Add:
		v = x + asSlice[C](b)[0]
	case opset.BinaryOp(in.Op) == opset.Sub:
		v = x - asSlice[C](b)[0]
	case opset.BinaryOp(in.Op) == opset.Mul:
		v = x * asSlice[C](b)[0]
	case opset.BinaryOp(in.Op) == opset.Div:
		v = x / asSlice[C](b)[0]
	default:
		return false
	}
	asSlice[C](d)[0] = v
	return true
}

// storeRow writes per-row register x of row r to the outputs that are
// it. An output of one element is a count, the same for every row, and
// row 0 writes it.
func (w *rowWorker) storeRow(r, x int) {
	if len(w.pl.outsOf[x]) == 0 {
		return
	}
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
	if acc.op == opset.Sum && vecBest != nil && m >= 4*vecBest.width && m <= sumLeaf {
		acc.f32 += w.sumLeaf(asSlice[float32](x)[:m])
		return
	}
	acc.f32 = w.pl.run32[k](acc.f32, asSlice[float32](x)[:m])
}

// sumLeaf is vecSum of x, of at most sumLeaf elements, one leaf of its
// pairwise sum, with the worker's lanes: vecSum's own escape to the heap
// on every call, as many as a row has tiles and Sum folds.
func (w *rowWorker) sumLeaf(x []float32) float32 {
	l := &w.sc.lanes
	*l = [16]float32{}
	n := vecBest.sumRed(l, x)
	return pairwiseSum(l[:vecBest.width]) + pairwiseSum(x[n:])
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
