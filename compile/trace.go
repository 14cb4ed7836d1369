package compile

import (
	"slices"
	"sync/atomic"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/internal/tracing"
)

// trace is a traced function reduced to what a replay needs: a list of
// steps (primitive, where each input comes from, output shapes and
// dtypes) in topological order, the captured constants, and where each
// output comes from. It holds no traced array, so it keeps nothing of the
// tracing call alive but the constants.
type trace struct {
	inShapes [][]int
	inDTypes []array.DType
	consts   []*array.Array
	steps    []step
	outs     []ref

	// Each step output has a slot: step i's outputs are slots
	// slots[i], slots[i]+1, .... uses[slot] is how many step inputs read
	// it, or -1 for an output of the trace, which a caller holds; the
	// others are transient (see recycling).
	slots []int
	uses  []int32
	// inUses[i] is how many step inputs read input i, or -1 if input i
	// is also an output of the trace.
	inUses []int32
}

// refKind says where a value of a trace comes from.
type refKind uint8

const (
	fromInput refKind = iota
	fromConst
	fromStep
)

// ref names a value: input idx, constant idx, or output out of step idx.
type ref struct {
	kind refKind
	idx  int
	out  int
}

type step struct {
	prim   array.Primitive
	ins    []ref
	shapes [][]int
	dtypes []array.DType
}

// newTrace runs f on placeholders shaped like in and records the graph it
// builds, then simplifies and fuses it.
func newTrace(f *Func, in []*array.Array, s array.Stream) *trace {
	ph := make([]*array.Array, len(in))
	for i, x := range in {
		ph[i] = array.NewPlaceholder(s, x.Shape(), x.DType())
	}
	outs := func() []*array.Array {
		tracing.Begin()
		defer tracing.End()
		return f.f(ph...)
	}()
	checkOutputs(outs)
	t := &trace{inShapes: make([][]int, len(in)), inDTypes: make([]array.DType, len(in))}
	for i, x := range in {
		t.inShapes[i] = x.Shape()
		t.inDTypes[i] = x.DType()
	}
	tape := graph.NewTape(ph, outs)
	refs := make(map[*array.Array]ref, len(tape.Nodes)+len(ph))
	for i, p := range ph {
		refs[p] = ref{kind: fromInput, idx: i}
	}
	// A value that does not depend on the inputs is a constant of the
	// trace, even if it is still pending: it is computed once, on the
	// first replay that evaluates it, and kept.
	constOf := func(a *array.Array) ref {
		if r, ok := refs[a]; ok {
			return r
		}
		r := ref{kind: fromConst, idx: len(t.consts)}
		t.consts = append(t.consts, a)
		refs[a] = r
		return r
	}
	dependent := make(map[*array.Array]bool, len(tape.Nodes))
	for _, p := range ph {
		dependent[p] = true
	}
	for _, n := range tape.Nodes {
		dep := effectful(n.Primitive)
		for _, x := range n.Inputs {
			dep = dep || dependent[x]
		}
		if !dep {
			continue
		}
		st := step{prim: n.Primitive, ins: make([]ref, len(n.Inputs))}
		for j, x := range n.Inputs {
			if dependent[x] {
				st.ins[j] = refs[x]
			} else {
				st.ins[j] = constOf(x)
			}
		}
		for j, o := range n.Outputs {
			st.shapes = append(st.shapes, o.Shape())
			st.dtypes = append(st.dtypes, o.DType())
			refs[o] = ref{kind: fromStep, idx: len(t.steps), out: j}
			dependent[o] = true
		}
		t.steps = append(t.steps, st)
	}
	for _, o := range outs {
		if dependent[o] {
			t.outs = append(t.outs, refs[o])
		} else {
			t.outs = append(t.outs, constOf(o))
		}
	}
	t.eliminateCommon()
	t.fuse()
	t.countUses()
	return t
}

// effectful reports whether p acts outside the process (a collective, a
// send or a receive of package distributed, which mark themselves with an
// Effect method): such a step runs on every call, never as a constant of
// the trace, even with no input from the function's arguments.
func effectful(p array.Primitive) bool {
	_, ok := p.(interface{ Effect() })
	return ok
}

// countUses fills slots and uses.
func (t *trace) countUses() {
	t.slots = make([]int, len(t.steps))
	n := 0
	for i, st := range t.steps {
		t.slots[i] = n
		n += len(st.shapes)
	}
	t.uses = make([]int32, n)
	t.inUses = make([]int32, len(t.inShapes))
	for _, st := range t.steps {
		for _, r := range st.ins {
			switch r.kind {
			case fromStep:
				t.uses[t.slots[r.idx]+r.out]++
			case fromInput:
				t.inUses[r.idx]++
			}
		}
	}
	for _, r := range t.outs {
		switch r.kind {
		case fromStep:
			t.uses[t.slots[r.idx]+r.out] = -1
		case fromInput:
			t.inUses[r.idx] = -1
		}
	}
}

// replay builds the traced graph again on new inputs, recording it on
// stream s. With a shapeless trace and inputs of new shapes, each step's
// output shapes come from its primitive's shape rule. Steps that make or
// read transient values from a pool run through recycling, so that those
// values' buffers go back to the pool as soon as their last consumer has
// run (on the GPU, as soon as the GPU has run it).
func (t *trace) replay(in []*array.Array, s array.Stream) []*array.Array {
	return t.replayDonating(in, s, nil)
}

// replayDonating is replay for a caller that gives up the inputs marked in
// donated (CallDonating): their buffers go back to the pool once their
// last consumer has run, as a transient value's do.
func (t *trace) replayDonating(in []*array.Array, s array.Stream, donated []bool) []*array.Array {
	sameShapes := true
	for i, x := range in {
		if !slices.Equal(x.RawShape(), t.inShapes[i]) {
			sameShapes = false
			break
		}
	}
	// A small trace's values and a step's inputs stay on the stack (New
	// copies its inputs); a replay allocates little more than its nodes.
	var valBuf [16]*array.Array
	var insBuf [8]*array.Array
	vals := valBuf[:0]
	if len(t.uses) > len(valBuf) {
		vals = make([]*array.Array, 0, len(t.uses))
	}
	vals = vals[:len(t.uses)] // by slot
	get := func(r ref) *array.Array {
		switch r.kind {
		case fromInput:
			return in[r.idx]
		case fromConst:
			return t.consts[r.idx]
		}
		return vals[t.slots[r.idx]+r.out]
	}
	var rc *recycler
	if donated != nil {
		rc = t.donate(in, donated, s.Device)
	}
	unpooled := unpooledOn(s.Device)
	for i, st := range t.steps {
		ins := insBuf[:0]
		if len(st.ins) > len(insBuf) {
			ins = make([]*array.Array, 0, len(st.ins))
		}
		ins = ins[:len(st.ins)]
		for j, r := range st.ins {
			ins[j] = get(r)
		}
		shapes := st.shapes
		if !sameShapes {
			// a copy: a shape rule may keep its inputs, and ins is reused
			shapes = replayShapes(st, slices.Clone(ins))
		}
		prim := st.prim
		if t.recycles(i, shapes, rc, unpooled) {
			if rc == nil {
				rc = t.newRecycler(len(in))
			}
			w := &rc.wraps[i]
			w.prim, w.rc, w.step = st.prim, rc, i
			prim = w
		}
		if len(shapes) == 1 {
			vals[t.slots[i]] = array.New(s, shapes[0], st.dtypes[0], prim, ins...)
		} else {
			// NewMulti keeps its inputs slice
			copy(vals[t.slots[i]:], array.NewMulti(s, shapes, st.dtypes, prim, slices.Clone(ins)...))
		}
	}
	outs := make([]*array.Array, len(t.outs))
	for i, r := range t.outs {
		outs[i] = get(r)
	}
	return outs
}

// unpooledOn is the most bytes of a value that recycling leaves to the
// collector on device d: the CPU pool leaves small buffers to the Go
// allocator, while every GPU buffer comes from the Metal buffer cache.
func unpooledOn(d array.Device) int {
	if d.Type == array.DeviceCPU {
		return array.MaxUnpooled
	}
	return 0
}

// recycles reports whether step i of a replay runs through recycling: it
// makes a transient value of more than unpooled bytes, which come from a
// pool, or reads one that a recycling step made (so that its last
// consumer is seen). Replays of small arrays on the CPU build no recycler
// and pay nothing.
func (t *trace) recycles(i int, shapes [][]int, rc *recycler, unpooled int) bool {
	st := &t.steps[i]
	for j, sh := range shapes {
		if t.uses[t.slots[i]+j] < 0 {
			continue
		}
		n := st.dtypes[j].Size()
		for _, d := range sh {
			n *= d
		}
		if n > unpooled {
			return true
		}
	}
	if rc == nil {
		return false
	}
	for _, r := range st.ins {
		if r.kind == fromStep && rc.wrapped(r.idx) && t.uses[t.slots[r.idx]+r.out] > 0 ||
			r.kind == fromInput && rc.donated[r.idx] {
			return true
		}
	}
	return false
}

// donate returns a recycler that frees the donated inputs after their
// last consumer, or nil if none can be: only an evaluated input in a
// pooled buffer of its own (shared with no other input or constant) on
// the replay's device d, not itself an output, and read by some step.
// (The GPU reads a CPU input through a copy it keeps, by address, until
// it next waits: a CPU buffer freed and reused before then would be read
// as the old copy.)
func (t *trace) donate(in []*array.Array, donated []bool, d array.Device) *recycler {
	var rc *recycler
	for i, x := range in {
		st := x.Storage()
		if !donated[i] || t.inUses[i] <= 0 || st == nil || st.Device() != d {
			continue
		}
		shared := false
		for j, y := range in {
			shared = shared || j != i && y.Storage() == st
		}
		for _, c := range t.consts {
			shared = shared || c.Storage() == st
		}
		if shared || !array.DonateStorage(x) {
			continue
		}
		if rc == nil {
			rc = t.newRecycler(len(in))
		}
		rc.donated[i] = true
	}
	return rc
}

// recycler is one replay's bookkeeping of its transient values: which
// steps run through recycling and how many reads of each value are still
// to run. No caller can hold a transient value (replay made it, and it
// is not an output of the trace), so once its last consumer has run its
// buffer can go back to the pool, unless a view or an output shares it,
// which array.HoldTransient and array.EscapeTransient track.
type recycler struct {
	t       *trace
	donated []bool      // by input
	wraps   []recycling // by step: a zero one for a step that does not recycle
	// left counts the reads still to run of each step output's slot,
	// then of each input (slot len(t.uses)+i)
	left []atomic.Int32
}

func (t *trace) newRecycler(inputs int) *recycler {
	rc := &recycler{t: t, donated: make([]bool, inputs),
		wraps: make([]recycling, len(t.steps)), left: make([]atomic.Int32, len(t.uses)+inputs)}
	for i, u := range t.uses {
		rc.left[i].Store(u)
	}
	for i, u := range t.inUses {
		rc.left[len(t.uses)+i].Store(u)
	}
	return rc
}

// wrapped reports whether step i runs through recycling.
func (rc *recycler) wrapped(i int) bool { return rc.wraps[i].rc != nil }

// recycling runs a step's primitive, then does its part of the
// bookkeeping: its outputs become transient or escape, and the transient
// values it was the last to read are dropped.
type recycling struct {
	prim array.Primitive
	rc   *recycler
	step int
}

// Name returns the step's primitive's name.
func (p *recycling) Name() string { return p.prim.Name() }

// Eval runs the step's primitive and then releases what it can.
func (p *recycling) Eval(s array.Stream, ins, outs []*array.Array) error {
	if err := p.prim.Eval(s, ins, outs); err != nil {
		return err
	}
	t := p.rc.t
	base := t.slots[p.step]
	// Holds, then escapes, then drops: an output of the trace that shares
	// a fresh buffer with a transient sibling must find it held, and mark
	// it before an unread sibling's drop could free it.
	for j, o := range outs {
		if t.uses[base+j] >= 0 {
			array.HoldTransient(o, ins)
		}
	}
	for j, o := range outs {
		if t.uses[base+j] < 0 {
			array.EscapeTransient(o)
		}
	}
	for j, o := range outs {
		if t.uses[base+j] == 0 {
			array.DropTransient(o)
		}
	}
	for k, r := range t.steps[p.step].ins {
		switch {
		case r.kind == fromStep && t.uses[t.slots[r.idx]+r.out] > 0 && p.rc.wrapped(r.idx):
			if p.rc.left[t.slots[r.idx]+r.out].Add(-1) == 0 {
				array.DropTransient(ins[k])
			}
		case r.kind == fromInput && p.rc.donated[r.idx]:
			if p.rc.left[len(t.uses)+r.idx].Add(-1) == 0 {
				array.DropTransient(ins[k])
			}
		}
	}
	return nil
}

// replayShapes works out a step's output shapes for inputs of new shapes.
func replayShapes(st step, ins []*array.Array) [][]int {
	rule, ok := st.prim.(array.ShapeRule)
	if !ok {
		array.Panicf("compile.Call", "Shapeless: %s cannot be shapeless: its output shape does not follow from its input shapes", st.prim.Name())
	}
	shapes, err := rule.OutputShapes(ins)
	if err != nil {
		array.Panicf("compile.Call", "Shapeless: %s: %v", st.prim.Name(), err)
	}
	return shapes
}
