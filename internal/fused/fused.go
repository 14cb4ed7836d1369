// Package fused is the intermediate form of a fused elementwise program:
// what package compile builds from a trace, backend/cpu interprets in
// tiles and backend/metal turns into one MSL kernel. A program has one
// text form, which names it in messages and keys caches, and one hash of
// that text.
package fused

import (
	"fmt"
	"hash/fnv"
	"strings"
	"sync"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/opset"
)

// Kind says what an instruction computes.
type Kind uint8

const (
	// Unary applies opset.UnaryOp(Op) to Args[0].
	Unary Kind = iota
	// Binary applies opset.BinaryOp(Op) to Args[0] and Args[1].
	Binary
	// Where picks Args[1] where Args[0] is true, else Args[2].
	Where
	// AsType converts Args[0] to DType.
	AsType
)

// Instr is one instruction of a Program. Registers below the program's
// input count are its inputs; register len(InDTypes)+i is the result of
// instruction i, rounded to DType.
type Instr struct {
	Kind  Kind
	Op    uint8 // an opset.UnaryOp or opset.BinaryOp, by Kind
	Args  []int
	DType array.DType
}

// Name returns the instruction's operation as the text form spells it:
// the op's name ("Exp", "Add"), "Where" or "AsType".
func (in Instr) Name() string {
	switch in.Kind {
	case Unary:
		return opset.UnaryOp(in.Op).String()
	case Binary:
		return opset.BinaryOp(in.Op).String()
	case Where:
		return "Where"
	}
	return "AsType"
}

// Program is a fused elementwise program: it runs in one pass over its
// outputs, which all have the shape its inputs broadcast to. Build it
// with New; its fields are not changed afterwards.
type Program struct {
	InDTypes []array.DType
	Instrs   []Instr
	Outputs  []int // registers

	text  string
	hash  uint64
	cache sync.Map // see Cache
}

// New returns the program of instrs over inputs of dtypes inDTypes,
// whose results are the registers outputs.
func New(inDTypes []array.DType, instrs []Instr, outputs []int) *Program {
	p := &Program{InDTypes: inDTypes, Instrs: instrs, Outputs: outputs}
	var b strings.Builder
	for i, dt := range inDTypes {
		fmt.Fprintf(&b, "r%d = in%d %v\n", i, i, dt)
	}
	for i, in := range instrs {
		fmt.Fprintf(&b, "r%d = %s(", len(inDTypes)+i, in.Name())
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
	p.text = b.String()
	h := fnv.New64a()
	h.Write([]byte(p.text))
	p.hash = h.Sum64()
	return p
}

// String returns the program's text: one line per register, then the
// output registers. It is stable across runs.
func (p *Program) String() string { return p.text }

// Hash returns a hash of String.
func (p *Program) Hash() uint64 { return p.hash }

// Cache returns the value build made for key, calling build the first
// time key is asked for. Backends keep what they work out once per
// program there (the CPU's plan of tile kernels, its scratch memory), so
// that it lives exactly as long as the program.
func (p *Program) Cache(key any, build func() any) any {
	if v, ok := p.cache.Load(key); ok {
		return v
	}
	v, _ := p.cache.LoadOrStore(key, build())
	return v
}

// DType returns the dtype of register r.
func (p *Program) DType(r int) array.DType {
	if r < len(p.InDTypes) {
		return p.InDTypes[r]
	}
	return p.Instrs[r-len(p.InDTypes)].DType
}
