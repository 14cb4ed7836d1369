package metal

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	"github.com/fathom-go/fathom/internal/strided"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal/internal/plan"
	"github.com/fathom-go/fathom/internal/fused"
	"github.com/fathom-go/fathom/internal/opset"
)

// regDTypes validates p and returns the dtype of every register: the GPU
// must have every instruction's kernel.
func regDTypes(p *fused.Program) ([]array.DType, error) {
	const op = "metal.Fused"
	regs := append([]array.DType(nil), p.InDTypes...)
	for _, dt := range regs {
		if err := checkDType(op, dt); err != nil {
			return nil, err
		}
	}
	for i, in := range p.Instrs {
		r := len(regs)
		nargs, ok := map[fused.Kind]int{fused.Unary: 1, fused.Binary: 2, fused.Where: 3, fused.AsType: 1, fused.Reduce: 1, fused.Count: 0}[in.Kind]
		if !ok {
			return nil, array.Errorf(op, "instruction %d (r%d): unknown kind %d", i, r, in.Kind)
		}
		if (in.Kind == fused.Reduce || in.Kind == fused.Count) && p.Rows == 0 {
			return nil, array.Errorf(op, "instruction %d (r%d): %s in an elementwise program", i, r, in.Name())
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
		if in.Kind == fused.Count {
			if !in.DType.IsFloat() {
				return nil, array.Errorf(op, "instruction %d (r%d): Count of dtype %v", i, r, in.DType)
			}
			regs = append(regs, in.DType)
			continue
		}
		a := regs[in.Args[0]]
		var want array.DType
		var err error
		switch in.Kind {
		case fused.Reduce:
			if _, ok := mslFolds[opset.ReduceOp(in.Op)]; !ok {
				return nil, array.Errorf(op, "instruction %d (r%d): fold %v", i, r, opset.ReduceOp(in.Op))
			}
			if !a.IsFloat() {
				return nil, array.Errorf(op, "instruction %d (r%d): %s of %v", i, r, in.Name(), a)
			}
			want = a
		case fused.Unary:
			u := opset.UnaryOp(in.Op)
			var ok bool
			if want, ok = u.Result(a); !ok || !u.Supported(array.DeviceGPU, a) {
				err = unsupported(op, u, a, ok)
			}
		case fused.Binary:
			if b := regs[in.Args[1]]; b != a {
				return nil, array.Errorf(op, "instruction %d (r%d): %s of %v and %v", i, r, in.Name(), a, b)
			}
			bo := opset.BinaryOp(in.Op)
			var ok bool
			if want, ok = bo.Result(a); !ok || !bo.Supported(array.DeviceGPU, a) {
				err = unsupported(op, bo, a, ok)
			}
		case fused.Where:
			if a != array.Bool || regs[in.Args[1]] != in.DType || regs[in.Args[2]] != in.DType {
				return nil, array.Errorf(op, "instruction %d (r%d): Where(%v, %v, %v) giving %v", i, r, a,
					regs[in.Args[1]], regs[in.Args[2]], in.DType)
			}
			want = in.DType
		case fused.AsType:
			want = in.DType
		}
		if err != nil {
			return nil, err
		}
		if want != in.DType {
			return nil, array.Errorf(op, "instruction %d (r%d): %s of %v gives %v, not %v", i, r, in.Name(), a, want, in.DType)
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
	array.Int8: "char", array.Int16: "short", array.Uint16: "u16_t", array.Uint32: "uint", array.Uint64: "ulong",
	array.Float16: "half", array.BFloat16: "bf16_t", array.Float32: "float", array.Complex64: "float2",
}

// generated is a program's library.
type generated struct {
	library, source string
}

// genCache maps a program's text (fused.Program.String) to its generated
// library. It is cleared
// when it grows past genCacheMax entries: regenerating is cheap, and the
// host caches compiled libraries by name.
var (
	genMu    sync.Mutex
	genCache = map[string]generated{}
)

const genCacheMax = 4096

func generate(p *fused.Program, regs []array.DType) generated {
	key := p.String()
	genMu.Lock()
	g, ok := genCache[key]
	genMu.Unlock()
	if ok {
		return g
	}
	_, pre := libraries()
	var body string
	if p.Rows > 0 {
		body = genRowsSource(p, regs, key)
	} else {
		body = genSource(p, regs, key)
	}
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
func genSource(p *fused.Program, regs []array.DType, text string) string {
	nIn := len(p.InDTypes)
	var b strings.Builder
	b.WriteString("// Generated by metal.Fused from the program\n")
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
			case fused.Unary, fused.Binary:
				// The functors of common.h are named as the ops.
				args := arg(0)
				if in.Kind == fused.Binary {
					args += ", " + arg(1)
				}
				fmt.Fprintf(&b, "  %s r%d = Elem<%s>::store(%s()(%s));\n", t, r, t, in.Name(), args)
			case fused.Where:
				fmt.Fprintf(&b, "  %s r%d = r%d ? r%d : r%d;\n", t, r, in.Args[0], in.Args[1], in.Args[2])
			case fused.AsType:
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
		fmt.Fprintf(&b, "  %s r%d = elem_read(in%d + i * ulong(p[%d]));\n", mslTypes[dt], i, i, 1+i)
	}
	body()
	for k, o := range p.Outputs {
		fmt.Fprintf(&b, "  elem_write(out%d + i, r%d);\n", k, o)
	}
	b.WriteString("}\nregister_kernel(fused_contig)\n")

	b.WriteString("\nkernel void fused_strided(\n")
	params()
	b.WriteString("    uint3 gid [[thread_position_in_grid]]) {\n")
	for i, dt := range p.InDTypes {
		fmt.Fprintf(&b, "  %s r%d = elem_read(in%d + strided_offset(p, %d, gid));\n", mslTypes[dt], i, i, i)
	}
	body()
	for k, o := range p.Outputs {
		fmt.Fprintf(&b, "  elem_write(out%d + strided_offset(p, %d, gid), r%d);\n", k, nIn+k, o)
	}
	b.WriteString("}\nregister_kernel(fused_strided)\n")
	return b.String()
}

// checkOperands returns the dtypes of p's registers after checking p
// (regDTypes) and its operands: their number, Metal's buffer limit, each
// view, and their dtypes against p's inputs and output registers.
func checkOperands(op string, p *fused.Program, outs, ins []View) ([]array.DType, error) {
	regs, err := regDTypes(p)
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
	for i, v := range ins {
		if err := v.check(op, fmt.Sprintf("input %d", i)); err != nil {
			return nil, err
		}
		if v.DType != p.InDTypes[i] {
			return nil, array.Errorf(op, "input %d has dtype %v, the program %v", i, v.DType, p.InDTypes[i])
		}
	}
	for k, v := range outs {
		if err := v.check(op, fmt.Sprintf("output %d", k)); err != nil {
			return nil, err
		}
		if v.DType != regs[p.Outputs[k]] {
			return nil, array.Errorf(op, "output %d has dtype %v, the program %v", k, v.DType, regs[p.Outputs[k]])
		}
	}
	return regs, nil
}

// Fused returns the plan of running p: one dispatch of the program's
// generated library (one per program, named "gen:" and a hash of its
// source, cached), contiguous or strided. ins are the program's inputs,
// each broadcastable to the outputs' common shape (the caller has checked
// the shapes); outs are its outputs, of the dtypes of p's output
// registers, and may be strided. The GPU must have every instruction's
// kernel (see opset's Supported).
func Fused(p *fused.Program, outs []View, ins []View) ([]Launch, error) {
	const op = "metal.Fused"
	regs, err := checkOperands(op, p, outs, ins)
	if err != nil {
		return nil, err
	}
	shape := outs[0].Shape
	views := make([]View, 0, len(ins)+len(outs))
	for _, v := range ins {
		v.Strides, _ = strided.Broadcast(v.Shape, v.Strides, shape)
		v.Shape = shape
		views = append(views, v)
	}
	views = append(views, outs...)
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
				Buffers: contigArgs(views, len(outs)), Params: packParams(params), Fit: plan.FitThreads}
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

// FusedRows returns the plan of running the row-wise program p
// (fused.NewRows) over the elementwise shape shape, whose last p.Rows
// axes make a row: one dispatch of the program's generated library, a
// threadgroup per row (rows beyond the grid loop). The threadgroup goes
// over its row in passes, one per depth of folds plus one: each pass
// computes what it needs from the inputs (values of earlier passes are
// computed again rather than kept: the row is in cache), folds across
// the threadgroup through simdgroup collectives and threadgroup memory,
// and then computes the per-row instructions those folds feed. Folds
// accumulate in float. ins are p's inputs, broadcastable to shape (any
// strides; those of p.InRow size 1 along the row axes); outs are its
// outputs, row-major: shape for per-element registers, one element per
// row, or one element in all, for per-row ones.
func FusedRows(p *fused.Program, shape []int, outs []View, ins []View) ([]Launch, error) {
	const op = "metal.FusedRows"
	regs, err := checkOperands(op, p, outs, ins)
	if err != nil {
		return nil, err
	}
	k := p.Rows
	if k <= 0 || k > len(shape) {
		return nil, array.Errorf(op, "a program of %d row axes over shape %v", k, shape)
	}
	nd := len(shape)
	rows, l := fused.SplitRows(shape, k)
	params := []int64{int64(rows), int64(l), int64(nd)}
	for _, d := range shape {
		params = append(params, int64(d))
	}
	var bufs []bufArg
	for i, v := range ins {
		st, ok := strided.Broadcast(v.Shape, v.Strides, shape)
		if !ok {
			return nil, array.Errorf(op, "input %d of shape %v does not broadcast to %v", i, v.Shape, shape)
		}
		arg, off := bindAt(v, false)
		bufs = append(bufs, arg)
		contig := int64(0)
		if innerRun(shape[nd-k:], st[nd-k:]) {
			contig = 1
		}
		params = append(params, int64(off), contig)
		for _, s := range st {
			params = append(params, int64(s))
		}
	}
	for i, v := range outs {
		r := p.Outputs[i]
		want, step := rows*l, int64(1)
		if p.RowLevel(r) {
			want = rows
			if v.Size() == 1 {
				want, step = 1, 0
			}
		}
		if v.Size() != want || !innerRun(v.Shape, v.Strides) {
			return nil, array.Errorf(op, "output %d (shape %v, strides %v) is not %d row-major elements", i, v.Shape, v.Strides, want)
		}
		arg, off := bindAt(v, true)
		bufs = append(bufs, arg)
		params = append(params, int64(off), step)
	}
	if rows == 0 {
		return nil, nil
	}
	g := generate(p, regs)
	tg := 256
	return []Launch{{Library: g.library, Source: g.source, Kernel: "fused_rows", Buffers: bufs, Params: packParams(params),
		Grid: [3]int{cappedGroups(rows) * tg, 1, 1}, Group: [3]int{tg, 1, 1}, Fit: plan.FitGroups}}, nil
}

// innerRun reports whether the row axes (shape, strides) are one run of
// stride 1.
func innerRun(shape, strides []int) bool {
	s := 1
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] != 1 && strides[i] != s {
			return false
		}
		s *= shape[i]
	}
	return true
}

// mslFolds is how the kernel of a row-wise program folds with each
// ReduceOp: the identity, the step of a thread's accumulator acc<k> by a
// value (a format of k and the value), and the fold across a simdgroup.
var mslFolds = map[opset.ReduceOp]struct{ ident, step, simd string }{
	opset.Sum:  {"0.0f", "acc%[1]d += %[2]s", "simd_sum"},
	opset.Prod: {"1.0f", "acc%[1]d *= %[2]s", "simd_product"},
	opset.Max:  {"-INFINITY", "acc%[1]d = fold_max(acc%[1]d, %[2]s)", "simd_fold_max"},
	opset.Min:  {"INFINITY", "acc%[1]d = fold_min(acc%[1]d, %[2]s)", "simd_fold_min"},
}

// genRowsSource writes the MSL of row-wise program p: kernel fused_rows.
// Its buffers are the inputs, then the outputs, then p: p[0] rows,
// p[1] the row length, p[2] nd, p[3..3+nd) the shape; per input its
// offset, 1 if its row is one run of stride 1, and its strides
// broadcast to the shape; per output its offset and its step per row (1,
// or 0 for a single per-row value).
func genRowsSource(p *fused.Program, regs []array.DType, text string) string {
	nIn := len(p.InDTypes)
	stage, passes := p.Stage, p.Passes()
	outsOf := map[int][]int{}
	for i, r := range p.Outputs {
		outsOf[r] = append(outsOf[r], i)
	}
	var b strings.Builder
	b.WriteString("// Generated by metal.FusedRows from the program\n")
	for _, line := range strings.Split(text, "\n") {
		b.WriteString("//   " + line + "\n")
	}
	nd := "p[2]"
	inBase := func(i int) string { return fmt.Sprintf("(3 + %s + %d * (%s + 2))", nd, i, nd) }
	outBase := func(o int) string { return fmt.Sprintf("(3 + %s + %d * (%s + 2) + %d)", nd, nIn, nd, 2*o) }
	b.WriteString(`
// in_offset returns the offset of the element at row-major index e of
// input view at base in p.
inline long in_offset(constant long* p, long base, long e) {
  long nd = p[2];
  long off = p[base];
  for (long d = nd - 1; d >= 0 && e > 0; d--) {
    off += (e % p[3 + d]) * p[base + 2 + d];
    e /= p[3 + d];
  }
  return off;
}

inline float fold_max(float a, float b) { return (a > b || a != a) ? a : b; }
inline float fold_min(float a, float b) { return (a < b || a != a) ? a : b; }
inline float simd_fold_max(float x) { return simd_any(isnan(x)) ? NAN : simd_max(x); }
inline float simd_fold_min(float x) { return simd_any(isnan(x)) ? NAN : simd_min(x); }
template <typename S> inline S to_store(float a) { return Elem<S>::store(typename Elem<S>::compute(a)); }

kernel void fused_rows(
`)
	for i, dt := range p.InDTypes {
		fmt.Fprintf(&b, "    device const %s* in%d [[buffer(%d)]],\n", mslTypes[dt], i, i)
	}
	for k, o := range p.Outputs {
		fmt.Fprintf(&b, "    device %s* out%d [[buffer(%d)]],\n", mslTypes[regs[o]], k, nIn+k)
	}
	fmt.Fprintf(&b, "    constant long* p [[buffer(%d)]],\n", nIn+len(p.Outputs))
	b.WriteString(`    uint tg [[threadgroup_position_in_grid]], uint ntg [[threadgroups_per_grid]],
    uint lid [[thread_index_in_threadgroup]], uint tpg [[threads_per_threadgroup]],
    uint sg [[simdgroup_index_in_threadgroup]], uint nsg [[simdgroups_per_threadgroup]],
    uint lane [[thread_index_in_simdgroup]]) {
  threadgroup float part[32];
  long rows = p[0], len = p[1];
  // Each threadgroup takes whole rows: the barriers are uniform.
  for (long row = tg; row < rows; row += ntg) {
    long first = row * len;
`)
	for i, dt := range p.InDTypes {
		if p.InRow[i] {
			fmt.Fprintf(&b, "    %s r%d = elem_read(in%d + in_offset(p, %s, first));\n", mslTypes[dt], i, i, inBase(i))
		} else {
			fmt.Fprintf(&b, "    long row%d = in_offset(p, %s, first);\n", i, inBase(i))
		}
	}
	instr := func(ind string, k int) {
		in := p.Instrs[k]
		r := nIn + k
		t := mslTypes[in.DType]
		arg := func(j int) string {
			a := in.Args[j]
			return fmt.Sprintf("Elem<%s>::load(r%d)", mslTypes[regs[a]], a)
		}
		switch in.Kind {
		case fused.Unary, fused.Binary:
			args := arg(0)
			if in.Kind == fused.Binary {
				args += ", " + arg(1)
			}
			fmt.Fprintf(&b, "%s%s r%d = Elem<%s>::store(%s()(%s));\n", ind, t, r, t, in.Name(), args)
		case fused.Where:
			fmt.Fprintf(&b, "%s%s r%d = r%d ? r%d : r%d;\n", ind, t, r, in.Args[0], in.Args[1], in.Args[2])
		case fused.AsType:
			a := in.Args[0]
			fmt.Fprintf(&b, "%s%s r%d = convert<%s, %s>(r%d);\n", ind, t, r, mslTypes[regs[a]], t, a)
		case fused.Count:
			fmt.Fprintf(&b, "%s%s r%d = to_store<%s>(float(len > %d ? len - %d : 0));\n", ind, t, r, t, in.N, in.N)
		}
	}
	writeRow := func(ind string, r int) {
		for _, o := range outsOf[r] {
			fmt.Fprintf(&b, "%sif (lid == 0) elem_write(out%d + p[%s] + row * p[%s + 1], r%d);\n", ind, o, outBase(o), outBase(o), r)
		}
	}
	// per-row instructions of stage s, after the folds that feed them
	rowInstrs := func(s int) {
		for k, in := range p.Instrs {
			r := nIn + k
			if p.RowLevel(r) && in.Kind != fused.Reduce && min(stage(r), passes) == s {
				instr("    ", k)
				writeRow("    ", r)
			}
		}
	}
	rowInstrs(0)
	for s := range passes {
		// what pass s computes per element: its folds' arguments and its
		// outputs, and what they need, from the inputs
		need := make([]bool, nIn+len(p.Instrs))
		var folds []int
		for k, in := range p.Instrs {
			r := nIn + k
			if in.Kind == fused.Reduce && stage(in.Args[0]) == s {
				folds = append(folds, k)
				need[in.Args[0]] = true
			}
			if !p.RowLevel(r) && len(outsOf[r]) > 0 && stage(r) == s {
				need[r] = true
			}
		}
		for k := len(p.Instrs) - 1; k >= 0; k-- {
			if r := nIn + k; need[r] && !p.RowLevel(r) {
				for _, a := range p.Instrs[k].Args {
					need[a] = true
				}
			}
		}
		fmt.Fprintf(&b, "    // pass %d\n", s)
		for _, k := range folds {
			fmt.Fprintf(&b, "    float acc%d = %s;\n", k, mslFolds[opset.ReduceOp(p.Instrs[k].Op)].ident)
		}
		b.WriteString("    for (long j = lid; j < len; j += tpg) {\n")
		for i, dt := range p.InDTypes {
			if need[i] && !p.InRow[i] {
				fmt.Fprintf(&b, "      %s r%d = elem_read(in%d + (p[%s + 1] ? row%d + j : in_offset(p, %s, first + j)));\n",
					mslTypes[dt], i, i, inBase(i), i, inBase(i))
			}
		}
		for k := range p.Instrs {
			if r := nIn + k; need[r] && !p.RowLevel(r) {
				instr("      ", k)
				if stage(r) == s {
					for _, o := range outsOf[r] {
						fmt.Fprintf(&b, "      elem_write(out%d + p[%s] + first + j, r%d);\n", o, outBase(o), r)
					}
				}
			}
		}
		for _, k := range folds {
			in := p.Instrs[k]
			a := fmt.Sprintf("float(Elem<%s>::load(r%d))", mslTypes[regs[in.Args[0]]], in.Args[0])
			fmt.Fprintf(&b, "      "+mslFolds[opset.ReduceOp(in.Op)].step+";\n", k, a)
		}
		b.WriteString("    }\n")
		for _, k := range folds {
			in := p.Instrs[k]
			f := mslFolds[opset.ReduceOp(in.Op)]
			fmt.Fprintf(&b, "    acc%d = %s(acc%d);\n", k, f.simd, k)
			fmt.Fprintf(&b, "    if (lane == 0) part[sg] = acc%d;\n", k)
			b.WriteString("    threadgroup_barrier(mem_flags::mem_threadgroup);\n")
			fmt.Fprintf(&b, "    acc%d = %s(lane < nsg ? part[lane] : %s);\n", k, f.simd, f.ident)
			b.WriteString("    threadgroup_barrier(mem_flags::mem_threadgroup);\n")
			t := mslTypes[in.DType]
			fmt.Fprintf(&b, "    %s r%d = to_store<%s>(acc%d);\n", t, nIn+k, t, k)
			writeRow("    ", nIn+k)
		}
		rowInstrs(s + 1)
	}
	b.WriteString("  }\n}\nregister_kernel(fused_rows)\n")
	return b.String()
}
