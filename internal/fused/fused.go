// Package fused is the intermediate form of a fused program: what
// package compile builds from a trace, backend/cpu interprets in tiles
// and backend/metal turns into one MSL kernel. A program is elementwise
// (one pass over its outputs) or row-wise (see NewRows): reductions over
// the trailing axes with the elementwise work before and after them,
// run row by row while each row is in cache. A program has one text
// form, which names it in messages and keys caches, and one hash of that
// text.
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
	// Reduce folds Args[0], a register with a value per element, over
	// each row with opset.ReduceOp(Op), giving one value per row. Only
	// in row-wise programs; float dtypes, the result of Args[0]'s.
	Reduce
	// Count is the number of elements of a row less N (the degrees of
	// freedom of a variance), at least 0, in DType: Mean's and Var's
	// divisor, worked out from the row length of each run so that a
	// shapeless trace divides by the right count. It has no Args.
	Count
)

// Instr is one instruction of a Program. Registers below the program's
// input count are its inputs; register len(InDTypes)+i is the result of
// instruction i, rounded to DType.
type Instr struct {
	Kind  Kind
	Op    uint8 // an opset.UnaryOp, opset.BinaryOp or opset.ReduceOp, by Kind
	Args  []int
	DType array.DType
	N     int // Count's degrees of freedom
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
	case Reduce:
		return opset.ReduceOp(in.Op).String()
	case Count:
		return "Count"
	}
	return "AsType"
}

// Program is a fused program. An elementwise one (Rows 0) runs in one
// pass over its outputs, which all have the shape its inputs broadcast
// to. A row-wise one (see NewRows) views that shape as rows of its last
// Rows axes. Build it with New or NewRows; its fields are not changed
// afterwards.
type Program struct {
	InDTypes []array.DType
	Instrs   []Instr
	Outputs  []int // registers

	// Rows is the number of trailing axes that make a row, 0 for an
	// elementwise program.
	Rows int
	// InRow reports, for a row-wise program, the inputs that have one
	// value per row (size 1 along every row axis).
	InRow []bool
	row   []bool // per register: one value per row
	// per register of a row-wise program: its stage (see Stage); and
	// the passes over each row (see Passes)
	stage  []int
	passes int

	text  string
	hash  uint64
	cache sync.Map // see Cache
}

// New returns the program of instrs over inputs of dtypes inDTypes,
// whose results are the registers outputs.
func New(inDTypes []array.DType, instrs []Instr, outputs []int) *Program {
	return build(&Program{InDTypes: inDTypes, Instrs: instrs, Outputs: outputs})
}

// NewRows returns a row-wise program: its elementwise shape is viewed as
// rows of the last rows axes (rows >= 1), and its Reduce instructions
// fold each row. A register has one value per row when it is an input
// with inRow set, a Reduce or Count, or an instruction whose arguments
// all have one; the others have a value per element, and may read
// per-row registers, which broadcast along their row. Outputs of
// per-row registers have one value per row.
func NewRows(inDTypes []array.DType, inRow []bool, rows int, instrs []Instr, outputs []int) *Program {
	p := &Program{InDTypes: inDTypes, Instrs: instrs, Outputs: outputs, Rows: rows, InRow: inRow}
	p.row = append([]bool(nil), inRow...)
	for _, in := range instrs {
		r := true
		switch in.Kind {
		case Reduce, Count:
		default:
			for _, a := range in.Args {
				r = r && a >= 0 && a < len(p.row) && p.row[a]
			}
		}
		p.row = append(p.row, r)
	}
	p.stages()
	return build(p)
}

// stages works out Stage and Passes. Arguments out of range (a malformed
// program, which the backends reject) count as stage 0.
func (p *Program) stages() {
	nIn := len(p.InDTypes)
	p.stage = make([]int, nIn+len(p.Instrs))
	at := func(a int) int {
		if a < 0 || a >= len(p.stage) {
			return 0
		}
		return p.stage[a]
	}
	outs := map[int]bool{}
	for _, o := range p.Outputs {
		outs[o] = true
	}
	p.passes = 1
	for k, in := range p.Instrs {
		r := nIn + k
		switch in.Kind {
		case Reduce:
			if len(in.Args) > 0 {
				p.stage[r] = at(in.Args[0]) + 1
			}
			p.passes = max(p.passes, p.stage[r])
		case Count:
		default:
			for _, a := range in.Args {
				p.stage[r] = max(p.stage[r], at(a))
			}
			if outs[r] && !p.row[r] {
				p.passes = max(p.passes, p.stage[r]+1)
			}
		}
	}
}

func build(p *Program) *Program {
	var b strings.Builder
	if p.Rows > 0 {
		fmt.Fprintf(&b, "rows %d\n", p.Rows)
	}
	level := func(r int) string {
		if p.Rows > 0 && p.row[r] {
			return " row"
		}
		return ""
	}
	for i, dt := range p.InDTypes {
		fmt.Fprintf(&b, "r%d = in%d %v%s\n", i, i, dt, level(i))
	}
	nIn := len(p.InDTypes)
	for i, in := range p.Instrs {
		fmt.Fprintf(&b, "r%d = %s(", nIn+i, in.Name())
		if in.Kind == Count {
			fmt.Fprintf(&b, "ddof %d", in.N)
		}
		for j, a := range in.Args {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "r%d", a)
		}
		fmt.Fprintf(&b, ") %v%s\n", in.DType, level(nIn+i))
	}
	b.WriteString("out")
	for _, o := range p.Outputs {
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

// RowLevel reports whether register r of a row-wise program has one
// value per row; false for every register of an elementwise program.
func (p *Program) RowLevel(r int) bool { return p.Rows > 0 && p.row[r] }

// Stage returns, for register r of a row-wise program, the pass over a
// row from which its value is known: 0 for an input or a Count, one more
// than its argument's for a Reduce (pass s folds the values of stage
// s), the latest of its arguments' for the others.
func (p *Program) Stage(r int) int { return p.stage[r] }

// Passes returns the number of passes over each row a row-wise program
// makes: one per depth of folds, and one more when a per-element output
// needs the last folds' values; 0 for an elementwise program.
func (p *Program) Passes() int { return p.passes }

// SplitRows returns the number of rows of shape whose last rows axes
// make a row, and the length of a row.
func SplitRows(shape []int, rows int) (n, length int) {
	n, length = 1, 1
	for i, d := range shape {
		if i < len(shape)-rows {
			n *= d
		} else {
			length *= d
		}
	}
	return n, length
}
