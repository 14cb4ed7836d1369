package compile

import (
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/fused"
	"github.com/fathom-go/fathom/internal/opset"
	"github.com/fathom-go/fathom/ops"
)

// Fusion limits. A fused group reads at most maxFusedInputs arrays (MLX
// allows 24, which also keeps a generated Metal kernel within its buffer
// argument table) and runs at most maxFusedOps instructions (MLX limits
// depth to 11 because its fusion recurses; fathom's is iterative, and the
// bound only keeps a generated kernel a reasonable size).
const (
	maxFusedInputs = 24
	maxFusedOps    = 64
)

// Row-wise fusion limits. Rows shorter than minRowLen are left to the
// plain kernels: the row runner calls a tile kernel per instruction per
// pass for every row, which costs more than the passes over memory it
// saves when a row is a few cache lines (BenchmarkFuseRowsShort,
// docs/performance.md). Fewer than minRows rows cannot be shared over
// the cores, which a plain reduction can, unless the whole reduction is
// at most smallRowWork elements, where sharing does not pay anyway.
const (
	minRowLen    = 64
	minRows      = 8
	smallRowWork = 1 << 16
)

// instrOf returns the instruction a fusible elementwise step computes,
// and false for a step that is not elementwise.
func instrOf(st step) (fused.Instr, bool) {
	if len(st.shapes) != 1 {
		return fused.Instr{}, false
	}
	dt := st.dtypes[0]
	switch p := st.prim.(type) {
	case *ops.Unary:
		return fused.Instr{Kind: fused.Unary, Op: uint8(p.Op), DType: dt}, true
	case *ops.Binary:
		return fused.Instr{Kind: fused.Binary, Op: uint8(p.Op), DType: dt}, true
	case *ops.WherePrim:
		return fused.Instr{Kind: fused.Where, DType: dt}, true
	case *ops.AsTypePrim:
		return fused.Instr{Kind: fused.AsType, DType: dt}, true
	}
	return fused.Instr{}, false
}

// The primitives of reductions, counts and ExpandDims describe
// themselves through these (their methods in ops/reduce.go and
// ops/shape.go).
type (
	reduction interface {
		Reduction() (opset.ReduceOp, []int)
	}
	counting interface {
		Counted() (axes []int, ddof int)
	}
	inserting interface{ Inserted() []int }
)

// roleKind is what a step can be in a fused group.
type roleKind uint8

const (
	notFusible  roleKind = iota
	elementwise          // an instruction with a value per element (or per row)
	rowReduce            // a fold over the row: Sum, Max, Min, Prod
	rowCount             // the count of a row, Mean's and Var's divisor
	keepDims             // ExpandDims of a per-row value: no instruction
)

// role is what a step can be in a fused group: its kind, its
// instruction, and for a fold or count the shape it folds (elem) and how
// many trailing axes make its row.
type role struct {
	kind  roleKind
	instr fused.Instr
	elem  []int
	rows  int
}

// roleOf works out what step st can be. Folds and counts can only be
// fused row-wise over trailing axes, with rows of at least minRowLen
// elements, enough rows to share, and float dtypes.
func (t *trace) roleOf(st step) role {
	if in, ok := instrOf(st); ok {
		return role{kind: elementwise, instr: in}
	}
	if len(st.shapes) != 1 || len(st.ins) != 1 {
		return role{}
	}
	if p, ok := st.prim.(inserting); ok {
		x := t.shapeOf(st.ins[0])
		if k := len(p.Inserted()); k > 0 && trailing(p.Inserted(), len(x)+k) {
			return role{kind: keepDims, rows: k}
		}
		return role{}
	}
	x := t.shapeOf(st.ins[0])
	dt := st.dtypes[0]
	if !dt.IsFloat() || t.dtypeOf(st.ins[0]) != dt {
		return role{}
	}
	var axes []int
	r := role{elem: x}
	switch p := st.prim.(type) {
	case reduction:
		op, ax := p.Reduction()
		switch op {
		case opset.Sum, opset.Max, opset.Min, opset.Prod:
		default:
			return role{}
		}
		r.kind, axes = rowReduce, ax
		r.instr = fused.Instr{Kind: fused.Reduce, Op: uint8(op), DType: dt}
	case counting:
		ax, ddof := p.Counted()
		r.kind, axes = rowCount, ax
		r.instr = fused.Instr{Kind: fused.Count, DType: dt, N: ddof}
	default:
		return role{}
	}
	r.rows = len(axes)
	if r.rows == 0 || !trailing(axes, len(x)) {
		return role{}
	}
	n, l := fused.SplitRows(x, r.rows)
	if l < minRowLen || (n < minRows && n*l > smallRowWork) {
		return role{}
	}
	return r
}

// trailing reports whether axes are the last len(axes) axes of nd, in
// order.
func trailing(axes []int, nd int) bool {
	for i, a := range axes {
		if a != nd-len(axes)+i {
			return false
		}
	}
	return len(axes) <= nd
}

// rowShape is elem with its last rows axes set to 1 (keep) or dropped.
func rowShape(elem []int, rows int, keep bool) []int {
	s := slices.Clone(elem[:len(elem)-rows])
	if keep {
		for range rows {
			s = append(s, 1)
		}
	}
	return s
}

// group is a set of connected fusible steps: elementwise steps of one
// shape, and, once a fold joins it, the folds over the trailing rows
// axes of that shape with the per-row work around them.
type group struct {
	shape   []int // the elementwise shape
	rows    int   // trailing axes of shape that make a row; 0 without a fold
	members []int
	inputs  []ref        // distinct values read from outside the group
	reach   map[int]bool // groups that the group's inputs depend on
}

// fuse groups connected fusible steps into Compiled steps. Steps are
// visited in order. A fusible step joins (and so merges) the groups of
// its inputs' producers when it fits them (see place), the limits allow
// and the result stays convex: no value the group reads from outside may
// itself depend on the group, or the fused step would depend on itself.
// Groups are kept in a union-find forest as they merge.
func (t *trace) fuse() {
	n := len(t.steps)
	groupOf := make([]int, n)        // raw group id, -1 for none
	perRow := make([]bool, n)        // a member with a value per row
	roles := make([]role, n)         // what each step can be
	reach := make([]map[int]bool, n) // raw ids of the groups each step depends on, its own included
	var groups []*group
	var parent []int
	find := func(g int) int {
		for parent[g] != g {
			parent[g] = parent[parent[g]]
			g = parent[g]
		}
		return g
	}
	rootOf := func(x ref) int {
		if x.kind != fromStep || groupOf[x.idx] < 0 {
			return -1
		}
		return find(groupOf[x.idx])
	}
	for i, st := range t.steps {
		r := map[int]bool{}
		for _, x := range st.ins {
			if x.kind == fromStep {
				for g := range reach[x.idx] {
					r[g] = true
				}
			}
		}
		groupOf[i] = -1
		rl := t.roleOf(st)
		roles[i] = rl
		if rl.kind == notFusible {
			reach[i] = r
			continue
		}
		var cands []int
		for _, x := range st.ins {
			if g := rootOf(x); g >= 0 && !slices.Contains(cands, g) {
				cands = append(cands, g)
			}
		}
		reads := st.ins
		if rl.kind == rowCount {
			reads = nil // a count reads only its input's shape
		}
		var join []int
		var pl placement
		try := func(cs []int) bool {
			join = nil
			var ok bool
			if pl, ok = t.place(st, rl, cs, groups, rootOf, perRow); ok {
				join = t.joinable(st, reads, rl.kind != keepDims, cs, groups, rootOf, reach, find)
			}
			return join != nil
		}
		if !try(cands) && len(cands) > 1 {
			for _, g := range cands {
				if try([]int{g}) {
					break
				}
			}
		}
		var g int
		if join == nil {
			if rl.kind == keepDims {
				reach[i] = r
				continue
			}
			pl = placement{shape: st.shapes[0]}
			if rl.kind == rowReduce || rl.kind == rowCount {
				pl = placement{shape: rl.elem, rows: rl.rows, row: true}
			}
			g = len(groups)
			groups = append(groups, &group{shape: pl.shape, reach: map[int]bool{}})
			parent = append(parent, g)
		} else {
			g = join[0]
			for _, h := range join[1:] {
				parent[h] = g
				groups[g].members = append(groups[g].members, groups[h].members...)
				groups[g].inputs = append(groups[g].inputs, groups[h].inputs...)
				for k := range groups[h].reach {
					groups[g].reach[k] = true
				}
				groups[h] = nil
			}
		}
		groupOf[i] = g
		perRow[i] = pl.row
		grp := groups[g]
		grp.rows = max(grp.rows, pl.rows)
		grp.members = append(grp.members, i)
		grp.inputs = append(grp.inputs, reads...)
		// values produced inside the merged group are no longer inputs
		var ins []ref
		for _, x := range grp.inputs {
			if rootOf(x) != g && !slices.Contains(ins, x) {
				ins = append(ins, x)
				if x.kind == fromStep {
					for k := range reach[x.idx] {
						grp.reach[k] = true
					}
				}
			}
		}
		grp.inputs = ins
		r[g] = true
		reach[i] = r
	}
	for i := range groupOf {
		if groupOf[i] >= 0 {
			groupOf[i] = find(groupOf[i])
		}
	}
	for _, g := range groups {
		if g != nil {
			slices.Sort(g.members)
		}
	}
	t.replaceGroups(groups, groupOf, roles)
}

// placement is where a step goes in a group: the group's elementwise
// shape and rows once it has joined, and whether the step has a value
// per row.
type placement struct {
	shape []int
	rows  int
	row   bool
}

// place reports whether st, of role rl, fits the groups cands merged:
// they must share an elementwise shape and agree on the rows (or have no
// fold yet). An elementwise step of that shape may read per-row members
// of the kept-axes shape (which broadcast along their rows); one of a
// per-row shape (axes kept or dropped) reads per-row members of its own
// shape and one-element arrays; a fold or count takes a row of that
// shape; ExpandDims restores a per-row member's row axes.
func (t *trace) place(st step, rl role, cands []int, groups []*group, rootOf func(ref) int, perRow []bool) (placement, bool) {
	if len(cands) == 0 {
		return placement{}, false
	}
	s, k := groups[cands[0]].shape, 0
	for _, g := range cands {
		if !slices.Equal(groups[g].shape, s) {
			return placement{}, false
		}
		k = max(k, groups[g].rows)
	}
	for _, g := range cands {
		if r := groups[g].rows; r != 0 && r != k {
			return placement{}, false
		}
	}
	inGroup := func(x ref) bool { return slices.Contains(cands, rootOf(x)) }
	// a per-row member broadcasts as one value per row when its shape
	// is like; a count is 0-d, the same for every row
	rowLike := func(x ref, like []int) bool {
		return perRow[x.idx] && (slices.Equal(t.shapeOf(x), like) || len(t.shapeOf(x)) == 0)
	}
	pl := placement{shape: s, rows: k}
	switch rl.kind {
	case elementwise:
		out := st.shapes[0]
		if slices.Equal(out, s) {
			for _, x := range st.ins {
				if inGroup(x) && perRow[x.idx] && !rowLike(x, rowShape(s, k, true)) {
					return placement{}, false
				}
			}
			return pl, true
		}
		if k == 0 || !slices.Equal(out, rowShape(s, k, true)) && !slices.Equal(out, rowShape(s, k, false)) {
			return placement{}, false
		}
		for _, x := range st.ins {
			if inGroup(x) && !rowLike(x, out) || !inGroup(x) && shapeSize(t.shapeOf(x)) != 1 {
				return placement{}, false
			}
		}
		pl.row = true
		return pl, true
	case rowReduce, rowCount:
		if !slices.Equal(rl.elem, s) || k != 0 && k != rl.rows {
			return placement{}, false
		}
		if x := st.ins[0]; inGroup(x) && perRow[x.idx] {
			return placement{}, false
		}
		pl.rows, pl.row = rl.rows, true
		return pl, true
	case keepDims:
		x := st.ins[0]
		if k == 0 || k != rl.rows || !inGroup(x) || !perRow[x.idx] || !slices.Equal(t.shapeOf(x), rowShape(s, k, false)) ||
			!slices.Equal(st.shapes[0], rowShape(s, k, true)) {
			return placement{}, false
		}
		pl.row = true
		return pl, true
	}
	return placement{}, false
}

func shapeSize(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// joinable returns the groups st may join together (cands, merged), or
// nil if that would break a limit or make a cycle. reads are the values
// st takes as operands, instr whether it adds an instruction.
func (t *trace) joinable(st step, reads []ref, instr bool, cands []int, groups []*group, rootOf func(ref) int, reach []map[int]bool, find func(int) int) []int {
	if len(cands) == 0 {
		return nil
	}
	in := func(g int) bool { return slices.Contains(cands, find(g)) }
	members := 0
	if instr {
		members = 1
	}
	var inputs []ref
	for _, g := range cands {
		members += len(groups[g].members)
		// a group that depends on another candidate through an outside
		// step cannot merge with it
		for k := range groups[g].reach {
			if in(k) && find(k) != g {
				return nil
			}
		}
		for _, x := range groups[g].inputs {
			if g := rootOf(x); (g < 0 || !in(g)) && !slices.Contains(inputs, x) {
				inputs = append(inputs, x)
			}
		}
	}
	for _, x := range st.ins {
		if g := rootOf(x); g >= 0 && in(g) {
			continue
		}
		if x.kind == fromStep {
			for k := range reach[x.idx] {
				if in(k) {
					return nil
				}
			}
		}
		if slices.Contains(reads, x) && !slices.Contains(inputs, x) {
			inputs = append(inputs, x)
		}
	}
	if members > maxFusedOps || len(inputs) > maxFusedInputs {
		return nil
	}
	return cands
}

// worth reports whether group g becomes a Compiled step: two members or
// more, and for a row-wise group a fold and at least one more
// instruction (a fold alone is the plain reduction's work), with an
// elementwise shape its inputs broadcast to, from which a replay on new
// shapes can work it out.
func (t *trace) worth(g *group, roles []role) bool {
	if g == nil || len(g.members) < 2 {
		return false
	}
	if g.rows == 0 {
		return true
	}
	instrs, folds := 0, 0
	for _, m := range g.members {
		switch roles[m].kind {
		case rowReduce:
			folds++
			instrs++
		case elementwise, rowCount:
			instrs++
		}
	}
	if folds == 0 || instrs < 2 {
		return false
	}
	shapes := make([][]int, len(g.inputs))
	for i, x := range g.inputs {
		shapes[i] = t.shapeOf(x)
	}
	var b []int
	if array.Try(func() { b = ops.BroadcastShapes("compile", shapes...) }) != nil {
		return false
	}
	return slices.Equal(b, g.shape)
}

// replaceGroups turns every group worth it into one Compiled step and
// re-sorts the steps topologically.
func (t *trace) replaceGroups(groups []*group, groupOf []int, roles []role) {
	used := make([]bool, len(t.steps)) // read by a step of another group, or an output
	for i, st := range t.steps {
		for _, x := range st.ins {
			if x.kind == fromStep && (groupOf[i] < 0 || groupOf[x.idx] != groupOf[i]) {
				used[x.idx] = true
			}
		}
	}
	for _, o := range t.outs {
		if o.kind == fromStep {
			used[o.idx] = true
		}
	}
	replaced := make([]bool, len(groups))
	for gi, g := range groups {
		replaced[gi] = t.worth(g, roles)
	}
	// where each old step's output now comes from: old index -> new ref
	moved := make(map[int]ref)
	var fusedSteps []step
	for gi, g := range groups {
		if !replaced[gi] {
			continue
		}
		nIn := len(g.inputs)
		reg := make(map[int]int, len(g.members)) // member step -> register
		dts := make([]array.DType, nIn)
		for k, x := range g.inputs {
			dts[k] = t.dtypeOf(x)
		}
		var instrs []fused.Instr
		var outputs []int
		var shapes [][]int
		var outDTypes []array.DType
		for _, m := range g.members {
			st := t.steps[m]
			rl := roles[m]
			switch rl.kind {
			case keepDims:
				reg[m] = reg[st.ins[0].idx]
			case rowCount:
				reg[m] = nIn + len(instrs)
				instrs = append(instrs, rl.instr)
			default:
				ins := rl.instr
				ins.Args = nil
				for _, x := range st.ins {
					if x.kind == fromStep && groupOf[x.idx] == gi {
						ins.Args = append(ins.Args, reg[x.idx])
					} else {
						ins.Args = append(ins.Args, slices.Index(g.inputs, x))
					}
				}
				reg[m] = nIn + len(instrs)
				instrs = append(instrs, ins)
			}
			if used[m] {
				moved[m] = ref{kind: fromStep, idx: -1 - len(fusedSteps), out: len(outputs)}
				outputs = append(outputs, reg[m])
				shapes = append(shapes, st.shapes[0])
				outDTypes = append(outDTypes, st.dtypes[0])
			}
		}
		var c *Compiled
		if g.rows == 0 {
			c = newCompiled(dts, instrs, outputs)
		} else {
			inRow := make([]bool, nIn)
			for k, x := range g.inputs {
				inRow[k] = perRowShape(t.shapeOf(x), g.shape, g.rows)
			}
			c = newRowCompiled(fused.NewRows(dts, inRow, g.rows, instrs, outputs), g.shape, shapes)
		}
		fusedSteps = append(fusedSteps, step{prim: c, ins: slices.Clone(g.inputs), shapes: shapes, dtypes: outDTypes})
	}
	if len(fusedSteps) == 0 {
		return
	}
	// Build the new step list: unfused steps keep their order, each fused
	// step is placed by a topological sort. Refs to fused steps use
	// negative indices until the final numbering.
	var all []step
	oldToAll := make(map[int]int)
	for i, st := range t.steps {
		if g := groupOf[i]; g >= 0 && replaced[g] {
			continue
		}
		oldToAll[i] = len(all)
		all = append(all, st)
	}
	fusedToAll := make([]int, len(fusedSteps))
	for k := range fusedSteps {
		fusedToAll[k] = len(all)
		all = append(all, fusedSteps[k])
	}
	fix := func(x ref) ref {
		if x.kind != fromStep {
			return x
		}
		if x.idx < 0 {
			x.idx = fusedToAll[-1-x.idx]
			return x
		}
		if m, ok := moved[x.idx]; ok {
			m.idx = fusedToAll[-1-m.idx]
			return m
		}
		x.idx = oldToAll[x.idx]
		return x
	}
	for i := range all {
		ins := make([]ref, len(all[i].ins))
		for j, x := range all[i].ins {
			ins[j] = fix(x)
		}
		all[i].ins = ins
	}
	for i := range t.outs {
		t.outs[i] = fix(t.outs[i])
	}
	t.steps = all
	t.sortSteps()
}

// shapeOf returns the shape of a value of the trace.
func (t *trace) shapeOf(x ref) []int {
	switch x.kind {
	case fromConst:
		return t.consts[x.idx].Shape()
	case fromStep:
		return t.steps[x.idx].shapes[x.out]
	}
	return t.inShapes[x.idx]
}

// perRowShape reports whether a value of shape x, broadcast to elem, has
// one value per row of elem's last rows axes.
func perRowShape(x, elem []int, rows int) bool {
	for i := len(elem) - rows; i < len(elem); i++ {
		if j := i - (len(elem) - len(x)); j >= 0 && x[j] != 1 {
			return false
		}
	}
	return true
}

// dtypeOf returns the dtype of a value of the trace.
func (t *trace) dtypeOf(x ref) array.DType {
	switch x.kind {
	case fromConst:
		return t.consts[x.idx].DType()
	case fromStep:
		return t.steps[x.idx].dtypes[x.out]
	}
	return t.inDTypes[x.idx]
}

// sortSteps orders the steps so that each comes after the steps it reads
// (an iterative depth-first walk from the outputs), dropping steps no
// output needs.
func (t *trace) sortSteps() {
	n := len(t.steps)
	pos := make([]int, n)
	for i := range pos {
		pos[i] = -1
	}
	var order []int
	type frame struct{ s, next int }
	visiting := make([]bool, n)
	for _, o := range t.outs {
		if o.kind != fromStep || pos[o.idx] >= 0 || visiting[o.idx] {
			continue
		}
		stack := []frame{{o.idx, 0}}
		visiting[o.idx] = true
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			ins := t.steps[top.s].ins
			if top.next == len(ins) {
				pos[top.s] = len(order)
				order = append(order, top.s)
				stack = stack[:len(stack)-1]
				continue
			}
			x := ins[top.next]
			top.next++
			if x.kind == fromStep && pos[x.idx] < 0 && !visiting[x.idx] {
				visiting[x.idx] = true
				stack = append(stack, frame{x.idx, 0})
			}
		}
	}
	steps := make([]step, len(order))
	for k, i := range order {
		st := t.steps[i]
		ins := make([]ref, len(st.ins))
		for j, x := range st.ins {
			if x.kind == fromStep {
				x.idx = pos[x.idx]
			}
			ins[j] = x
		}
		st.ins = ins
		steps[k] = st
	}
	for i, o := range t.outs {
		if o.kind == fromStep {
			t.outs[i].idx = pos[o.idx]
		}
	}
	t.steps = steps
}
