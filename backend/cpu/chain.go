package cpu

import (
	"unsafe"

	"github.com/fathom-go/fathom/internal/opset"
)

// A chain is a program of float32 operations on one accumulator, over up
// to chainInputs inputs of one length: it starts from an input (Load), and
// each operation is a function of the accumulator or an arithmetic
// operation (Add, Sub, Mul, Div, Maximum, Minimum) between it and an
// input, a scalar, an input times a scalar, or a value saved earlier in
// one of chainSlots slots (Save, LoadSlot). Run computes it in one pass,
// the accumulator of 128 elements at a time in registers and the slots in
// L1, where the tile kernels make a pass and a store per operation. Each operation
// rounds as its tile kernel does (unaryTileFunc, binaryTileFunc,
// binaryScalarTileFuncs, productTileFuncs), NaNs and signed zeros
// included, so the results are the same, bit for bit. The fused
// interpreter runs programs of this form with it, saving the store and
// load per element that each tile kernel's pass costs
// (docs/performance.md, Chains). The kernel is AVX-512 only, and has the
// functions Neg, Square,
// Exp, Expm1, Log, Log1p, Tanh, Sigmoid and Erf.
//
// A chain is built once and may then be run by many goroutines.
type chain struct {
	code    []uint32 // ends in chainEnd
	scalars []float32
	slots   int // the slots it saves to, 0 up to slots-1
	impl    *vecImpl
}

// chainInputs is the most inputs a chain reads, chainSlots the most
// values it saves at once.
const (
	chainInputs = 8
	chainSlots  = 8
)

// chainOperand is the other operand of a binary operation of a chain.
type chainOperand uint8

const (
	chainX       chainOperand = iota // an input
	chainScalar                      // a scalar
	chainXScalar                     // an input times a scalar, rounded
	chainSlot                        // a value saved in a slot
)

// chainStep is an operation of the chain kernel, the key of its opcode.
type chainStep struct {
	binary    bool
	op        uint8 // a UnaryOp, or with binary a BinaryOp
	operand   chainOperand
	accSecond bool // operand op accumulator, for Sub and Div
}

// The opcodes of the chain kernel that are not operations: the end of
// the program, which stores the block, the load of an input, and the save
// of the accumulator to a slot and its load back.
const (
	chainEnd = iota
	chainLoad
	chainSave
	chainLoadSlot
)

// chainBlock is the elements the chain kernel takes at a time.
const chainBlock = 128

// newChain returns an empty program, to Load an input into first, or nil
// where this machine has no chain kernel (it needs AVX-512).
func newChain() *chain {
	if vecBest == nil || vecBest.chainCodes == nil {
		return nil
	}
	return &chain{code: []uint32{chainEnd}, impl: vecBest}
}

// Load sets the accumulator to input in. It reports false, and leaves c
// as it was, for an input beyond chainInputs.
func (c *chain) Load(in int) bool {
	if !within(in, chainInputs) {
		return false
	}
	c.emit(chainLoad, in, 0, false)
	return true
}

// Save copies the accumulator to slot k. It reports false, and leaves c
// as it was, for a slot beyond chainSlots, as LoadSlot does.
func (c *chain) Save(k int) bool {
	if !within(k, chainSlots) {
		return false
	}
	c.emit(chainSave, k, 0, false)
	c.slots = max(c.slots, k+1)
	return true
}

// LoadSlot copies slot k to the accumulator; see Save.
func (c *chain) LoadSlot(k int) bool {
	if !within(k, chainSlots) {
		return false
	}
	c.emit(chainLoadSlot, k, 0, false)
	return true
}

// Unary applies op to the accumulator. It reports false, and leaves c as
// it was, for an op the kernel does not have (see chain).
func (c *chain) Unary(op opset.UnaryOp) bool {
	code, ok := c.impl.chainCodes[chainStep{op: uint8(op)}]
	if ok {
		c.emit(code, 0, 0, false)
	}
	return ok
}

// Binary sets the accumulator to acc op v, or with accSecond to v op acc,
// where v is input in, s, input in times s, or slot in, as o says. It
// reports false, and leaves c as it was, for an op other than Add, Sub,
// Mul, Div, Maximum and Minimum, or an input or slot beyond chainInputs
// or chainSlots.
func (c *chain) Binary(op opset.BinaryOp, o chainOperand, in int, s float32, accSecond bool) bool {
	if op == opset.Add || op == opset.Mul {
		accSecond = false // they commute exactly; Maximum and Minimum do not (NaNs, zeros)
	}
	code, ok := c.impl.chainCodes[chainStep{binary: true, op: uint8(op), operand: o, accSecond: accSecond}]
	limit := chainInputs
	if o == chainSlot {
		limit = chainSlots
	}
	if !ok || !within(in, limit) {
		return false
	}
	c.emit(code, in, s, o == chainScalar || o == chainXScalar)
	return true
}

func within(i, n int) bool { return i >= 0 && i < n }

// emit appends an instruction: opcode code with input or slot in and,
// with scalar, the scalar s.
func (c *chain) emit(code uint32, in int, s float32, scalar bool) {
	code |= uint32(in) << 8
	if scalar {
		code |= uint32(len(c.scalars)) << 16
		c.scalars = append(c.scalars, s)
	}
	c.code = append(c.code[:len(c.code)-1], code, chainEnd)
}

// Run sets dst[i] to the program's value at element i of srcs, the
// inputs by index, each at least as long as dst.
func (c *chain) Run(dst []byte, srcs [][]byte) { c.run(dst, srcs, false) }

// RunNT is Run with the stores from dst's first 64-byte boundary on going
// around the caches, for results of 32 MiB and more; see unaryTileFuncNT.
func (c *chain) RunNT(dst []byte, srcs [][]byte) { c.run(dst, srcs, true) }

func (c *chain) run(db []byte, srcs [][]byte, nt bool) {
	dst := asSlice[float32](db)
	var xs [chainInputs][]float32
	for i, b := range srcs {
		xs[i] = asSlice[float32](b)[:len(dst)]
	}
	in := xs[:len(srcs)]
	n := streamHead(dst, nt)
	c.partial(dst[:n], in, 0)
	whole := n + (len(dst)-n)/chainBlock*chainBlock
	if whole > n {
		var ptrs [chainInputs]*float32
		for i, x := range in {
			ptrs[i] = unsafe.SliceData(x[n:])
		}
		if c.slots == 0 {
			chainKernel(nt, dst[n:whole], ptrs[:len(in)], c.code, c.scalars, nil)
		} else {
			// Go clears it, 4 KiB, on every call: only for a chain
			// that saves
			var scratch [chainSlots * chainBlock]float32
			chainKernel(nt, dst[n:whole], ptrs[:len(in)], c.code, c.scalars, scratch[:])
		}
	}
	c.partial(dst[whole:], in, whole)
}

// partial runs code over the elements of dst that are not whole blocks
// (or not where the streaming kernel may store), inputs from element off
// on, a block at a time through blocks on the stack: the kernel takes
// whole blocks only.
func (c *chain) partial(dst []float32, in [][]float32, off int) {
	if len(dst) == 0 {
		return // before the blocks, which Go would clear
	}
	var blocks [chainInputs][chainBlock]float32
	var out [chainBlock]float32
	var scratch [chainSlots * chainBlock]float32
	var ptrs [chainInputs]*float32
	for i := range in {
		ptrs[i] = &blocks[i][0]
	}
	for len(dst) > 0 {
		n := min(len(dst), chainBlock)
		for i, x := range in {
			copy(blocks[i][:], x[off:off+n])
		}
		chainKernel(false, out[:], ptrs[:len(in)], c.code, c.scalars, scratch[:])
		copy(dst, out[:n])
		dst, off = dst[n:], off+n
	}
}
