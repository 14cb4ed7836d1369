package metal

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/fathom-go/fathom/array"
)

// InstrKind says what an instruction of a fused Program computes.
type InstrKind uint8

// The instruction kinds (those of compile.Compiled).
const (
	// KindUnary applies the unary operation Op to Args[0].
	KindUnary InstrKind = iota
	// KindBinary applies the binary operation Op to Args[0] and Args[1].
	KindBinary
	// KindWhere picks Args[1] where Args[0] is true, else Args[2].
	KindWhere
	// KindAsType converts Args[0] to DType.
	KindAsType
)

// Instr is one instruction of a Program. Registers below the program's
// input count are its inputs; register len(InDTypes)+i is the result of
// instruction i.
type Instr struct {
	Kind InstrKind
	// Op is the operation's ops name ("Exp", "Add") for KindUnary and
	// KindBinary.
	Op    string
	Args  []int
	DType array.DType
}

// Program is a fused elementwise program, the Metal side's mirror of
// compile.Compiled: it runs in one pass over its outputs, which all have
// the shape its inputs broadcast to. Every intermediate result is rounded
// to its instruction's dtype, as the CPU interpreter does.
type Program struct {
	InDTypes []array.DType
	Instrs   []Instr
	Outputs  []int // registers
}

// String returns the program's text, one register per line (the form of
// compile.Compiled.Program), which keys the generated-source cache.
func (p Program) String() string {
	var b strings.Builder
	for i, dt := range p.InDTypes {
		fmt.Fprintf(&b, "r%d = in%d %v\n", i, i, dt)
	}
	for i, in := range p.Instrs {
		name := in.Op
		switch in.Kind {
		case KindWhere:
			name = "Where"
		case KindAsType:
			name = "AsType"
		}
		fmt.Fprintf(&b, "r%d = %s(", len(p.InDTypes)+i, name)
		for j, a := range in.Args {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "r%d", a)
		}
		fmt.Fprintf(&b, ") %v\n", in.DType)
	}
	b.WriteString("out")
	for _, o := range p.Outputs {
		fmt.Fprintf(&b, " r%d", o)
	}
	return b.String()
}

// regDTypes validates p and returns the dtype of every register.
func (p Program) regDTypes() ([]array.DType, error) {
	const op = "metal.FusedLaunch"
	regs := append([]array.DType(nil), p.InDTypes...)
	for _, dt := range regs {
		if err := checkDType(op, dt); err != nil {
			return nil, err
		}
	}
	for i, in := range p.Instrs {
		r := len(regs)
		nargs := map[InstrKind]int{KindUnary: 1, KindBinary: 2, KindWhere: 3, KindAsType: 1}[in.Kind]
		if nargs == 0 {
			return nil, array.Errorf(op, "instruction %d (r%d): unknown kind %d", i, r, in.Kind)
		}
		if len(in.Args) != nargs {
			return nil, array.Errorf(op, "instruction %d (r%d): %d arguments, want %d", i, r, len(in.Args), nargs)
		}
		for _, a := range in.Args {
			if a < 0 || a >= r {
				return nil, array.Errorf(op, "instruction %d (r%d): argument r%d is not an earlier register", i, r, a)
			}
		}
		if err := checkDType(op, in.DType); err != nil {
			return nil, err
		}
		a := regs[in.Args[0]]
		var want array.DType
		var err error
		switch in.Kind {
		case KindUnary:
			want, err = UnaryResult(in.Op, a)
		case KindBinary:
			if b := regs[in.Args[1]]; b != a {
				return nil, array.Errorf(op, "instruction %d (r%d): %s of %v and %v", i, r, in.Op, a, b)
			}
			want, err = BinaryResult(in.Op, a)
		case KindWhere:
			if a != array.Bool || regs[in.Args[1]] != in.DType || regs[in.Args[2]] != in.DType {
				return nil, array.Errorf(op, "instruction %d (r%d): Where(%v, %v, %v) giving %v", i, r, a,
					regs[in.Args[1]], regs[in.Args[2]], in.DType)
			}
			want = in.DType
		case KindAsType:
			want = in.DType
		}
		if err != nil {
			return nil, err
		}
		if want != in.DType {
			return nil, array.Errorf(op, "instruction %d (r%d): %s of %v gives %v, not %v", i, r, in.Op, a, want, in.DType)
		}
		regs = append(regs, in.DType)
	}
	if len(p.Outputs) == 0 {
		return nil, array.Errorf(op, "the program has no outputs")
	}
	for _, o := range p.Outputs {
		if o < 0 || o >= len(regs) {
			return nil, array.Errorf(op, "output r%d is not a register", o)
		}
	}
	return regs, nil
}

// mslTypes are the storage types of the dtypes in MSL (see common.h).
var mslTypes = map[array.DType]string{
	array.Bool: "bool", array.Uint8: "uchar", array.Int32: "int", array.Int64: "long",
	array.Float16: "half", array.BFloat16: "bf16_t", array.Float32: "float", array.Complex64: "float2",
}

// generated is a program's library.
type generated struct {
	library, source string
}

// genCache maps Program.String to its generated library. It is cleared
// when it grows past genCacheMax entries: regenerating is cheap, and the
// host caches compiled libraries by name.
var (
	genMu    sync.Mutex
	genCache = map[string]generated{}
)

const genCacheMax = 4096

func generate(p Program, regs []array.DType) generated {
	key := p.String()
	genMu.Lock()
	g, ok := genCache[key]
	genMu.Unlock()
	if ok {
		return g
	}
	_, pre := libraries()
	body := genSource(p, regs, key)
	sum := sha256.Sum256([]byte(body))
	g.library = genPrefix + hex.EncodeToString(sum[:10])
	g.source = withPrelude(pre, g.library, body)
	genMu.Lock()
	if len(genCache) >= genCacheMax {
		genCache = map[string]generated{}
	}
	genCache[key] = g
	genMu.Unlock()
	return g
}

// genSource writes the MSL of p: kernels fused_contig and fused_strided.
// Their buffers are the inputs, then the outputs, then p.
//
//	fused_contig:  p[0] = n, p[1+k] = 1 if input k is contiguous, 0 if it
//	               is one element broadcast; outputs contiguous. Grid
//	               (n, 1, 1), or (X, ceil(n/X), 1).
//	fused_strided: the strided layout of common.h over the inputs and
//	               then the outputs. Grid (shape[nd-1], shape[nd-2], rest).
func genSource(p Program, regs []array.DType, text string) string {
	nIn := len(p.InDTypes)
	var b strings.Builder
	b.WriteString("// Generated by metal.FusedLaunch from the program\n")
	for _, line := range strings.Split(text, "\n") {
		b.WriteString("//   " + line + "\n")
	}
	params := func() {
		for i, dt := range p.InDTypes {
			fmt.Fprintf(&b, "    device const %s* in%d [[buffer(%d)]],\n", mslTypes[dt], i, i)
		}
		for k, o := range p.Outputs {
			fmt.Fprintf(&b, "    device %s* out%d [[buffer(%d)]],\n", mslTypes[regs[o]], k, nIn+k)
		}
		fmt.Fprintf(&b, "    constant long* p [[buffer(%d)]],\n", nIn+len(p.Outputs))
	}
	body := func() {
		for k, in := range p.Instrs {
			r := nIn + k
			t := mslTypes[in.DType]
			arg := func(j int) string {
				a := in.Args[j]
				return fmt.Sprintf("Elem<%s>::load(r%d)", mslTypes[regs[a]], a)
			}
			switch in.Kind {
			case KindUnary:
				fmt.Fprintf(&b, "  %s r%d = Elem<%s>::store(%s()(%s));\n", t, r, t, in.Op, arg(0))
			case KindBinary:
				fmt.Fprintf(&b, "  %s r%d = Elem<%s>::store(%s()(%s, %s));\n", t, r, t, in.Op, arg(0), arg(1))
			case KindWhere:
				fmt.Fprintf(&b, "  %s r%d = r%d ? r%d : r%d;\n", t, r, in.Args[0], in.Args[1], in.Args[2])
			case KindAsType:
				a := in.Args[0]
				fmt.Fprintf(&b, "  %s r%d = convert<%s, %s>(r%d);\n", t, r, mslTypes[regs[a]], t, a)
			}
		}
	}

	b.WriteString("\nkernel void fused_contig(\n")
	params()
	b.WriteString("    uint2 gid [[thread_position_in_grid]],\n    uint2 gsz [[threads_per_grid]]) {\n")
	b.WriteString("  ulong i = linear_index(gid, gsz);\n  if (i >= ulong(p[0])) {\n    return;\n  }\n")
	for i, dt := range p.InDTypes {
		fmt.Fprintf(&b, "  %s r%d = in%d[i * ulong(p[%d])];\n", mslTypes[dt], i, i, 1+i)
	}
	body()
	for k, o := range p.Outputs {
		fmt.Fprintf(&b, "  out%d[i] = r%d;\n", k, o)
	}
	b.WriteString("}\nregister_kernel(fused_contig)\n")

	b.WriteString("\nkernel void fused_strided(\n")
	params()
	b.WriteString("    uint3 gid [[thread_position_in_grid]]) {\n")
	for i, dt := range p.InDTypes {
		fmt.Fprintf(&b, "  %s r%d = in%d[strided_offset(p, %d, gid)];\n", mslTypes[dt], i, i, i)
	}
	body()
	for k, o := range p.Outputs {
		fmt.Fprintf(&b, "  out%d[strided_offset(p, %d, gid)] = r%d;\n", k, nIn+k, o)
	}
	b.WriteString("}\nregister_kernel(fused_strided)\n")
	return b.String()
}

// broadcastView returns v viewed with shape (numpy's broadcasting: v's
// dimensions align with the trailing ones and size 1 repeats), or false.
func broadcastView(v View, shape []int) (View, bool) {
	st, ok := array.BroadcastStrides(v.Shape, v.Strides, shape)
	if !ok {
		return v, false
	}
	v.Shape, v.Strides = shape, st
	return v, true
}

// FusedLaunch returns the plan of running p: one dispatch of the
// program's generated library (one per program, named "gen:" and a hash
// of its source, cached), contiguous or strided. ins are the program's
// inputs, each broadcastable to the outputs' common shape; outs are its
// outputs, of the dtypes of p's output registers, and may be strided.
func FusedLaunch(p Program, outs []View, ins []View) ([]Launch, error) {
	const op = "metal.FusedLaunch"
	regs, err := p.regDTypes()
	if err != nil {
		return nil, err
	}
	if len(ins) != len(p.InDTypes) || len(outs) != len(p.Outputs) {
		return nil, array.Errorf(op, "%d inputs and %d outputs for a program of %d and %d", len(ins), len(outs),
			len(p.InDTypes), len(p.Outputs))
	}
	if len(ins)+len(outs)+1 > maxBufferArgs {
		return nil, array.Errorf(op, "%d inputs and %d outputs exceed Metal's 31 buffer arguments", len(ins), len(outs))
	}
	shape := outs[0].Shape
	views := make([]View, 0, len(ins)+len(outs))
	for i, v := range ins {
		if err := v.check(op, fmt.Sprintf("input %d", i)); err != nil {
			return nil, err
		}
		if v.DType != p.InDTypes[i] {
			return nil, array.Errorf(op, "input %d has dtype %v, the program %v", i, v.DType, p.InDTypes[i])
		}
		bv, ok := broadcastView(v, shape)
		if !ok {
			return nil, array.Errorf(op, "input %d of shape %v does not broadcast to %v", i, v.Shape, shape)
		}
		views = append(views, bv)
	}
	for k, v := range outs {
		if err := v.check(op, fmt.Sprintf("output %d", k)); err != nil {
			return nil, err
		}
		if v.DType != regs[p.Outputs[k]] {
			return nil, array.Errorf(op, "output %d has dtype %v, the program %v", k, v.DType, regs[p.Outputs[k]])
		}
		if !slices.Equal(v.Shape, shape) {
			return nil, array.Errorf(op, "output %d has shape %v, output 0 %v", k, v.Shape, shape)
		}
		views = append(views, v)
	}
	if outs[0].Size() == 0 {
		return nil, nil
	}
	g := generate(p, regs)
	l := collapse(shape, views...)
	if len(l.shape) == 1 {
		// Contiguous when every output has stride 1 and every input 1 or 0.
		n := l.shape[0]
		params := []int64{int64(n)}
		for k := range views {
			s := l.strides[k][0]
			if k < len(ins) && (s == 0 || s == 1) {
				params = append(params, int64(s))
			} else if s != 1 {
				params = nil
				break
			}
		}
		if params != nil {
			ln := Launch{Library: g.library, Source: g.source, Kernel: "fused_contig",
				Buffers: contigArgs(views, len(outs)), Params: packParams(params)}
			ln.Grid, ln.Group = contigGrid(n)
			return []Launch{ln}, nil
		}
	}
	ls, err := ewLaunch(op, g.library, "fused", "strided", l, views, len(outs))
	if err != nil {
		return nil, err
	}
	ls[0].Source = g.source
	return ls, nil
}
