package compile

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/ops"
)

// InstrKind says what an instruction of a fused program computes.
type InstrKind uint8

const (
	// KindUnary applies cpu.UnaryOp(Op) to Args[0].
	KindUnary InstrKind = iota
	// KindBinary applies cpu.BinaryOp(Op) to Args[0] and Args[1].
	KindBinary
	// KindWhere picks Args[1] where Args[0] is true, else Args[2].
	KindWhere
	// KindAsType converts Args[0] to DType.
	KindAsType
)

// Instr is one instruction of a fused program. Registers below the
// program's input count are its inputs; register NumInputs+i is the
// result of instruction i.
type Instr struct {
	Kind  InstrKind
	Op    uint8
	Args  []int
	DType array.DType
}

// Compiled is the primitive of a fused group of elementwise operations:
// a small program over registers that runs in one pass over its output,
// whatever the number of operations. Every output has the shape that its
// inputs broadcast to. The program has a stable text form and hash, from
// which backends derive their kernels (the Metal backend generates MSL).
type Compiled struct {
	InDTypes []array.DType
	Instrs   []Instr
	Outputs  []int // registers

	desc string
	hash uint64

	steps        []tileStep // one per instruction, resolved once for the CPU
	nslots       int
	slotBytes    int       // one scratch tile's bytes: tileElems of the widest dtype
	outTileBytes int       // the same for an output tile, when results are streamed
	arenas       sync.Pool // *[]byte scratch tiles, reused across calls

	metalOnce sync.Once
	metal     metal.Program

	chain atomic.Pointer[chainMemo] // the last call's chainOf
}

// tileStep is what the CPU interpreter does for one instruction on each tile,
// worked out when the program is built so the tile loop does no lookups.
type tileStep struct {
	tileKernels
	// nt are the twins of the kernels that store around the caches (see
	// cpu.UnaryTileFuncNT), nil where there are none: a streamed result
	// that no later step reads (readLater) is computed straight into the
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

func newCompiled(inDTypes []array.DType, instrs []Instr, outputs []int) *Compiled {
	c := &Compiled{InDTypes: inDTypes, Instrs: instrs, Outputs: outputs}
	var b strings.Builder
	for i, dt := range inDTypes {
		fmt.Fprintf(&b, "r%d = in%d %v\n", i, i, dt)
	}
	for i, in := range instrs {
		fmt.Fprintf(&b, "r%d = %s(", len(inDTypes)+i, in.opName())
		for j, a := range in.Args {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "r%d", a)
		}
		fmt.Fprintf(&b, ") %v\n", in.DType)
	}
	b.WriteString("out")
	for _, o := range outputs {
		fmt.Fprintf(&b, " r%d", o)
	}
	c.desc = b.String()
	h := fnv.New64a()
	h.Write([]byte(c.desc))
	c.hash = h.Sum64()
	outOf := make(map[int]int, len(outputs))
	for i, r := range outputs {
		outOf[r] = i
	}
	regDT := func(r int) array.DType {
		if r < len(inDTypes) {
			return inDTypes[r]
		}
		return instrs[r-len(inDTypes)].DType
	}
	c.steps = make([]tileStep, len(instrs))
	for k, in := range instrs {
		st := &c.steps[k]
		st.out, st.size = -1, in.DType.Size()
		switch {
		case in.Kind == KindUnary && regDT(in.Args[0]) == in.DType:
			st.unary = cpu.UnaryTileFunc(cpu.UnaryOp(in.Op), in.DType)
			st.nt.unary = cpu.UnaryTileFuncNT(cpu.UnaryOp(in.Op), in.DType)
		case in.Kind == KindBinary && regDT(in.Args[0]) == in.DType && regDT(in.Args[1]) == in.DType:
			st.binary = cpu.BinaryTileFunc(cpu.BinaryOp(in.Op), in.DType)
			st.vs, st.sv = cpu.BinaryScalarTileFuncs(cpu.BinaryOp(in.Op), in.DType)
			st.nt.binary = cpu.BinaryTileFuncNT(cpu.BinaryOp(in.Op), in.DType)
			st.nt.vs, st.nt.sv = cpu.BinaryScalarTileFuncsNT(cpu.BinaryOp(in.Op), in.DType)
		case in.Kind == KindAsType:
			st.unary = cpu.ConvertTileFunc(regDT(in.Args[0]), in.DType)
		}
	}
	c.fuseProducts(outOf)
	for k := range c.steps {
		c.steps[k].readLater = c.readAfter(k)
	}
	slot := c.slots(outOf)
	widest, widestOut := 1, 1
	for k := range c.steps {
		st := &c.steps[k]
		if o, ok := outOf[len(inDTypes)+k]; ok {
			st.out = o
			widestOut = max(widestOut, st.size)
		} else if s, ok := slot[len(inDTypes)+k]; ok {
			st.slot = s
			c.nslots = max(c.nslots, s+1)
			widest = max(widest, st.size)
		}
	}
	c.slotBytes, c.outTileBytes = tileElems*widest, tileElems*widestOut
	return c
}

// fuseProducts gives each Add or Mul of a product that nothing else reads
// the product's work (see tileStep). A fused instruction is not itself
// fused into the next: each pass does at most two operations.
func (c *Compiled) fuseProducts(outOf map[int]int) {
	nIn := len(c.InDTypes)
	reads := make([]int, nIn+len(c.Instrs))
	for _, in := range c.Instrs {
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
		in, st := c.Instrs[k], &c.steps[k]
		switch {
		case st.fused != nil:
			return 0, 0, false
		case in.Kind == KindBinary && cpu.BinaryOp(in.Op) == cpu.Mul && st.binary != nil:
			return in.Args[0], in.Args[1], true
		case in.Kind == KindUnary && cpu.UnaryOp(in.Op) == cpu.Square && st.unary != nil:
			return in.Args[0], in.Args[0], true // x*x, as Square computes it
		}
		return 0, 0, false
	}
	for k, in := range c.Instrs {
		st := &c.steps[k]
		if in.Kind != KindBinary || st.binary == nil {
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
		if st.fused, st.fusedS = cpu.ProductTileFuncs(cpu.BinaryOp(in.Op), in.DType); st.fused == nil {
			continue
		}
		st.nt.fused, st.nt.fusedS = cpu.ProductTileFuncsNT(cpu.BinaryOp(in.Op), in.DType)
		st.fargs = [3]int{a, b, q}
		c.steps[p-nIn].skip = true
	}
}

func (in Instr) opName() string {
	switch in.Kind {
	case KindUnary:
		return cpu.UnaryOp(in.Op).String()
	case KindBinary:
		return cpu.BinaryOp(in.Op).String()
	case KindWhere:
		return "Where"
	}
	return "AsType"
}

// Name returns "Compiled".
func (c *Compiled) Name() string { return "Compiled" }

// Program returns the program's text: one line per register, then the
// output registers. It is stable across runs.
func (c *Compiled) Program() string { return c.desc }

// Hash returns a hash of Program.
func (c *Compiled) Hash() uint64 { return c.hash }

// Equivalent reports whether o runs the same program.
func (c *Compiled) Equivalent(o array.Primitive) bool {
	d, ok := o.(*Compiled)
	return ok && d != nil && d.hash == c.hash && d.desc == c.desc
}

// OutputShapes returns, for every output, the shape the inputs broadcast
// to, which lets a shapeless trace replay a fused group on new shapes.
func (c *Compiled) OutputShapes(in []*array.Array) ([][]int, error) {
	shapes := make([][]int, len(in))
	for i, x := range in {
		if x == nil {
			return nil, array.Errorf("compile.Compiled", "input %d is nil", i)
		}
		shapes[i] = x.Shape()
	}
	var shape []int
	if err := array.Try(func() { shape = ops.BroadcastShapes("compile.Compiled", shapes...) }); err != nil {
		return nil, err
	}
	out := make([][]int, len(c.Outputs))
	for i := range out {
		out[i] = shape
	}
	return out, nil
}

// Eval runs the program. On the CPU it is a blocked interpreter: tiles of
// tileElems elements go through the whole program while they are in L1/L2,
// and the tiles are split across cores. On the GPU it is one generated
// Metal kernel (see MetalProgram).
func (c *Compiled) Eval(s array.Stream, in, out []*array.Array) error {
	if s.Device.Type != array.DeviceCPU {
		return c.evalGPU(s, in, out)
	}
	return c.evalCPU(in, out)
}

// MetalProgram returns the program in backend/metal's terms, from which
// it generates the fused kernel's MSL.
func (c *Compiled) MetalProgram() metal.Program {
	c.metalOnce.Do(func() {
		p := metal.Program{InDTypes: c.InDTypes, Outputs: c.Outputs}
		for _, in := range c.Instrs {
			mi := metal.Instr{Args: in.Args, DType: in.DType}
			switch in.Kind {
			case KindUnary:
				mi.Kind, mi.Op = metal.KindUnary, cpu.UnaryOp(in.Op).String()
			case KindBinary:
				mi.Kind, mi.Op = metal.KindBinary, cpu.BinaryOp(in.Op).String()
			case KindWhere:
				mi.Kind = metal.KindWhere
			case KindAsType:
				mi.Kind = metal.KindAsType
			}
			p.Instrs = append(p.Instrs, mi)
		}
		c.metal = p
	})
	return c.metal
}

func (c *Compiled) evalGPU(s array.Stream, in, out []*array.Array) error {
	shape := out[0].Shape()
	outs := make([]metal.View, len(out))
	for i, o := range out {
		st, err := metal.Alloc(o.NBytes())
		if err != nil {
			return err
		}
		strides := array.RowMajorStrides(shape)
		o.SetData(st, strides, 0)
		outs[i] = metal.View{Mem: st, DType: o.DType(), Shape: shape, Strides: strides}
	}
	ins := make([]metal.View, len(in))
	for i, x := range in {
		st, _ := array.BroadcastStrides(x.Shape(), x.Strides(), shape)
		ins[i] = metal.View{Mem: x.Storage(), DType: x.DType(), Shape: shape, Strides: st, Offset: x.Offset()}
	}
	ls, err := metal.FusedLaunch(c.MetalProgram(), outs, ins)
	if err != nil {
		return err
	}
	return metal.Run(s, ls)
}

// tileElems is the interpreter's tile: 2048 elements, 8–16 KiB per
// register, so a program's live registers stay in L1/L2 (measured against
// 512, 1024, 4096 and 8192 with BenchmarkGELU: smaller tiles lose more to
// the per-tile work than they gain from L1).
const tileElems = 2048

// streamBytes is the size of results from which the interpreter stores
// its output tiles around the caches (cpu.StoreStream): results this large
// do not stay in a last-level cache for their reader anyway, and the
// ordinary stores would first read every line they overwrite.
var streamBytes = 32 << 20

// prefetchTiles is how far ahead the interpreter prefetches its direct
// inputs (measured against 0, 1 and into L1 with BenchmarkGELU: 5-10%).
const prefetchTiles = 2

func (c *Compiled) evalCPU(in, out []*array.Array) error {
	shape := out[0].Shape()
	n := 1
	for _, d := range shape {
		n *= d
	}
	nIn := len(c.InDTypes)
	inBufs := make([]cpu.Buf, nIn)
	walkers := make([]*cpu.Walker, nIn)
	direct := make([]bool, nIn) // row-major and unbroadcast: tiles are slices of it
	sc := make([][]byte, nIn)   // the element of a one-element input
	for i, x := range in {
		b := cpu.Buf{Data: x.Storage().Bytes(), DType: x.DType(), Shape: x.Shape(), Strides: x.Strides(), Offset: x.Offset()}
		inBufs[i] = broadcastBuf(b, shape)
		direct[i] = slices.Equal(x.Shape(), shape) && x.RowMajor()
		if x.Size() == 1 {
			sz := x.DType().Size()
			sc[i] = b.Data[b.Offset*sz : (b.Offset+1)*sz]
		} else if !direct[i] {
			walkers[i] = cpu.NewWalker(inBufs[i].Shape, inBufs[i].Strides)
		}
	}
	chain, chainIn := c.chainFor(sc)
	var calls []call
	var tiled []bool
	if chain == nil {
		calls, tiled = c.plan(sc)
	}
	outData := make([][]byte, len(out))
	outBytes := 0
	for i, o := range out {
		st := array.AllocCPU(o.NBytes())
		o.SetData(st, array.RowMajorStrides(shape), 0)
		outData[i] = st.Bytes()
		outBytes += o.NBytes()
	}
	stream := outBytes >= streamBytes
	ntiles := (n + tileElems - 1) / tileElems
	var mu sync.Mutex
	var firstErr error
	cpu.ParallelFor(ntiles, max(1, cpu.Grain/tileElems), func(tlo, thi int) {
		if chain != nil {
			c.runChain(tlo, thi, n, chain, chainIn, inBufs, walkers, outData[0], stream)
			return
		}
		if err := c.runTiles(tlo, thi, n, inBufs, walkers, direct, sc, tiled, calls, outData, stream); err != nil {
			mu.Lock()
			if firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
		}
	})
	return firstErr
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
	callGeneric                 // cpu.Unary, Binary, Where or Copy on tiles
)

// call is one step of the program for one call: its kind and the
// registers of its operands.
type call struct {
	kind    callKind
	a, b, c int
}

// plan resolves each step for a call whose one-element inputs are those
// with sc[i] set: which kernel runs and in what operand order, so the
// tile loop makes no decisions. tiled reports the one-element inputs that
// some step still reads as a whole tile.
func (c *Compiled) plan(sc [][]byte) (calls []call, tiled []bool) {
	nIn := len(c.InDTypes)
	isScalar := func(r int) bool { return r < nIn && sc[r] != nil }
	calls = make([]call, len(c.steps))
	for k := range c.steps {
		st, args := &c.steps[k], c.Instrs[k].Args
		cl := &calls[k]
		switch {
		case st.skip:
			cl.kind = callSkip
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
			cl.kind = callGeneric
		}
	}
	tiled = make([]bool, nIn)
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
			asTile(c.Instrs[k].Args...)
		}
	}
	return calls, tiled
}

// runTiles runs the program over tiles [tlo, thi) of an n-element result,
// each step as calls says.
func (c *Compiled) runTiles(tlo, thi, n int, inBufs []cpu.Buf, walkers []*cpu.Walker, direct []bool, sc [][]byte, tiled []bool, calls []call, outData [][]byte, stream bool) error {
	nIn := len(c.InDTypes)
	tileLen := min(tileElems, n)
	inBytes := tileLen * 8
	// scratch tiles, then two per output when results are streamed (this
	// tile's, and the last one's while it is stored), then the gathered
	// and scalar inputs
	outBase := c.nslots * c.slotBytes
	inBase := outBase
	if stream {
		inBase += 2 * len(outData) * c.outTileBytes
	}
	need := inBase + nIn*inBytes
	ap, _ := c.arenas.Get().(*[]byte)
	if ap == nil || len(*ap) < need {
		ap = new([]byte)
		*ap = make([]byte, need)
	}
	defer c.arenas.Put(ap)
	if stream {
		// once for the chunk: ParallelFor's return hands the results on
		defer cpu.StoreFence()
	}
	arena := *ap
	inTile := func(i int) []byte { return arena[inBase+i*inBytes:][:inBytes] }
	regs := make([][]byte, nIn+len(c.Instrs))
	tile := []int{tileLen}
	unit := []int{1}
	for i := range nIn {
		if tiled[i] {
			// filled once per chunk, for the steps that have no kernel
			// taking it as a scalar
			dt := c.InDTypes[i]
			b := inBufs[i]
			src := cpu.Buf{Data: b.Data, DType: dt, Shape: tile, Strides: []int{0}, Offset: b.Offset}
			if err := cpu.Copy(cpu.Contiguous(inTile(i)[:tileLen*dt.Size()], dt, tile), src); err != nil {
				return err
			}
		}
	}
	buf := func(r int, data []byte) cpu.Buf {
		var dt array.DType
		if r >= nIn {
			dt = c.Instrs[r-nIn].DType
		} else {
			dt = c.InDTypes[r]
		}
		return cpu.Buf{Data: data, DType: dt, Shape: tile, Strides: unit}
	}
	// When results are streamed, the memory traffic of a tile is spread
	// over its steps: a piece of the inputs prefetchTiles ahead and a
	// piece of the last tile's outputs after each step, so that it
	// overlaps the arithmetic. A whole tile at once stalls the core:
	// prefetches beyond the misses it can have outstanding are dropped,
	// and non-temporal stores wait for the write-combining buffers
	// (compiled GELU over 16M took 16–21% longer). Smaller results, which
	// come from the caches, lose more to the calls than they gain.
	steps, outSteps := 0, []int(nil)
	straight := make([]bool, len(calls)) // steps computed into the output
	for k, cl := range calls {
		if cl.kind != callSkip {
			steps++
			if stream && c.steps[k].out >= 0 {
				st := &c.steps[k]
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
	var pending []streamOut // the last tile's outputs
	for t := tlo; t < thi; t++ {
		lo := t * tileElems
		m := min(tileElems, n-lo)
		tile[0] = m
		half := t % 2 // of the streamed output tiles: the other is pending
		for i := range nIn {
			sz := c.InDTypes[i].Size()
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
				cpu.GatherRange(walkers[i], regs[i], inBufs[i], lo, lo+m)
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
			if a, end := ahead+step*piece, min(ahead+tileElems, n); a < end {
				e := min(a+piece, end)
				for i := range nIn {
					if direct[i] {
						b, sz := inBufs[i], c.InDTypes[i].Size()
						cpu.Prefetch(b.Data[(b.Offset+a)*sz : (b.Offset+e)*sz])
					}
				}
			}
			step++
			st := &c.steps[k]
			var d []byte
			switch {
			case straight[k]:
				d = outData[st.out][lo*st.size : (lo+m)*st.size]
			case st.out >= 0 && stream:
				d = arena[outBase+(half*len(outData)+st.out)*c.outTileBytes:][:m*st.size]
			case st.out >= 0:
				d = outData[st.out][lo*st.size : (lo+m)*st.size]
			default:
				d = arena[st.slot*c.slotBytes:][:m*st.size]
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
				dst, args := buf(nIn+k, d), c.Instrs[k].Args
				switch ins := c.Instrs[k]; ins.Kind {
				case KindUnary:
					err = cpu.Unary(cpu.UnaryOp(ins.Op), dst, buf(args[0], regs[args[0]]))
				case KindBinary:
					err = cpu.Binary(cpu.BinaryOp(ins.Op), dst, buf(args[0], regs[args[0]]), buf(args[1], regs[args[1]]))
				case KindWhere:
					err = cpu.Where(dst, buf(args[0], regs[args[0]]), buf(args[1], regs[args[1]]), buf(args[2], regs[args[2]]))
				case KindAsType:
					err = cpu.Copy(dst, buf(args[0], regs[args[0]]))
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
			st := &c.steps[k]
			pending = append(pending, streamOut{outData[st.out][lo*st.size : (lo+m)*st.size], regs[nIn+k], (m*st.size + steps - 1) / steps})
		}
	}
	for i := range pending {
		pending[i].store(len(pending[i].src))
	}
	return nil
}

// runChain runs the program as the chain ch (see chainOf), which reads
// the inputs ins, over tiles [tlo, thi) of an n-element result: in one
// call where the inputs' elements are in order (walkers[i] nil), else a
// tile at a time from copies. It does not prefetch: the hardware follows
// the streams in and out (compiled GELU over 16M took 16% longer with the
// interpreter's prefetches of a quarter tile).
func (c *Compiled) runChain(tlo, thi, n int, ch *cpu.Chain, ins []int, inBufs []cpu.Buf, walkers []*cpu.Walker, out []byte, stream bool) {
	const sz = 4 // float32
	run := ch.Run
	if stream {
		run = ch.RunNT
		defer cpu.StoreFence()
	}
	lo, hi := tlo*tileElems, min(thi*tileElems, n)
	srcs := make([][]byte, len(ins))
	copies := make([][]byte, len(ins)) // for the inputs not in order
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
				cpu.GatherRange(walkers[i], srcs[k], b, lo, e)
			}
		}
		run(out[lo*sz:e*sz], srcs)
	}
}

// readAfter reports whether a step after k reads k's result.
func (c *Compiled) readAfter(k int) bool {
	r := len(c.InDTypes) + k
	for k2 := k + 1; k2 < len(c.Instrs); k2++ {
		if slices.Contains(c.reads(k2), r) {
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
	cpu.StoreStream(s.dst[:n], s.src[:n])
	s.dst, s.src = s.dst[n:], s.src[n:]
}

// reads returns the registers that step k reads: none for a product done
// by its reader, the three operands for that reader.
func (c *Compiled) reads(k int) []int {
	st := &c.steps[k]
	switch {
	case st.skip:
		return nil
	case st.fused != nil:
		return st.fargs[:]
	}
	return c.Instrs[k].Args
}

// slots assigns each instruction register that is not an output (or a
// skipped product) a scratch tile, reusing a tile once its register has been
// read for the last time (linear scan), so a long program needs few tiles.
// A result takes its tile before its operands' tiles are freed, so it
// never overwrites an operand it is reading.
func (c *Compiled) slots(outOf map[int]int) map[int]int {
	nIn := len(c.InDTypes)
	last := make(map[int]int)
	for k := range c.Instrs {
		for _, a := range c.reads(k) {
			last[a] = k
		}
	}
	slot := map[int]int{}
	var free []int
	next := 0
	for k := range c.Instrs {
		r := nIn + k
		if _, isOut := outOf[r]; !isOut && !c.steps[k].skip {
			if len(free) > 0 {
				slot[r] = free[len(free)-1]
				free = free[:len(free)-1]
			} else {
				slot[r] = next
				next++
			}
		}
		for _, a := range c.reads(k) {
			if s, ok := slot[a]; ok && last[a] == k {
				free = append(free, s)
				last[a] = -1 // an operand read twice is freed once
			}
		}
	}
	return slot
}

// broadcastBuf views b broadcast to shape (numpy's rule).
func broadcastBuf(b cpu.Buf, shape []int) cpu.Buf {
	b.Strides, _ = array.BroadcastStrides(b.Shape, b.Strides, shape)
	b.Shape = shape
	return b
}
