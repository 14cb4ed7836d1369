package compile

import (
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/fused"
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

// instrOf returns the instruction a fusible step computes, and false for
// a step that is not elementwise.
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

// group is a set of connected elementwise steps of one output shape.
type group struct {
	shape   []int
	members []int
	inputs  []ref        // distinct values read from outside the group
	reach   map[int]bool // groups that the group's inputs depend on
}

// fuse groups connected elementwise steps of one shape into Compiled
// steps. Steps are visited in order. A fusible step joins (and so merges)
// the groups of its inputs' producers that have its shape, when the limits
// allow and the result stays convex: no value the group reads from outside
// may itself depend on the group, or the fused step would depend on
// itself. Groups are kept in a union-find forest as they merge.
func (t *trace) fuse() {
	n := len(t.steps)
	groupOf := make([]int, n)        // raw group id, -1 for none
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
		if _, ok := instrOf(st); ok {
			var cands []int
			for _, x := range st.ins {
				if g := rootOf(x); g >= 0 && !slices.Contains(cands, g) && slices.Equal(groups[g].shape, st.shapes[0]) {
					cands = append(cands, g)
				}
			}
			join := t.joinable(st, cands, groups, rootOf, reach, find)
			if join == nil {
				for _, g := range cands {
					if j := t.joinable(st, []int{g}, groups, rootOf, reach, find); j != nil {
						join = j
						break
					}
				}
			}
			var g int
			if join == nil {
				g = len(groups)
				groups = append(groups, &group{shape: st.shapes[0], reach: map[int]bool{}})
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
			grp := groups[g]
			grp.members = append(grp.members, i)
			grp.inputs = append(grp.inputs, st.ins...)
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
		}
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
	t.replaceGroups(groups, groupOf)
}

// joinable returns the groups st may join together (cands, merged), or
// nil if that would break a limit or make a cycle.
func (t *trace) joinable(st step, cands []int, groups []*group, rootOf func(ref) int, reach []map[int]bool, find func(int) int) []int {
	if len(cands) == 0 {
		return nil
	}
	in := func(g int) bool { return slices.Contains(cands, find(g)) }
	members := 1
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
		if !slices.Contains(inputs, x) {
			inputs = append(inputs, x)
		}
	}
	if members > maxFusedOps || len(inputs) > maxFusedInputs {
		return nil
	}
	return cands
}

// replaceGroups turns every group of two or more steps into one Compiled
// step and re-sorts the steps topologically.
func (t *trace) replaceGroups(groups []*group, groupOf []int) {
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
	// where each old step's output now comes from: old index -> new ref
	moved := make(map[int]ref)
	var fusedSteps []step
	fusedAt := make(map[int]int) // group -> index in fused
	for gi, g := range groups {
		if g == nil || len(g.members) < 2 {
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
		var outDTypes []array.DType
		for k, m := range g.members {
			ins, _ := instrOf(t.steps[m])
			for _, x := range t.steps[m].ins {
				if x.kind == fromStep && groupOf[x.idx] == gi {
					ins.Args = append(ins.Args, reg[x.idx])
				} else {
					ins.Args = append(ins.Args, slices.Index(g.inputs, x))
				}
			}
			reg[m] = nIn + k
			instrs = append(instrs, ins)
			if used[m] {
				moved[m] = ref{kind: fromStep, idx: -1 - len(fusedSteps), out: len(outputs)}
				outputs = append(outputs, nIn+k)
				outDTypes = append(outDTypes, ins.DType)
			}
		}
		shapes := make([][]int, len(outputs))
		for k := range shapes {
			shapes[k] = g.shape
		}
		fusedAt[gi] = len(fusedSteps)
		fusedSteps = append(fusedSteps, step{prim: newCompiled(dts, instrs, outputs), ins: slices.Clone(g.inputs), shapes: shapes, dtypes: outDTypes})
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
		if g := groupOf[i]; g >= 0 && groups[g] != nil && len(groups[g].members) >= 2 {
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
