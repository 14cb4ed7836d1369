package compile

import (
	"bytes"
	"reflect"
	"slices"

	"github.com/fathom-go/fathom/array"
)

// eliminateCommon merges steps that apply equivalent primitives to the
// same inputs (common-subexpression elimination), and merges identical
// 0-d constants first so that steps using them can merge too.
func (t *trace) eliminateCommon() {
	constMap := t.mergeScalarConstants()
	stepMap := make([]int, len(t.steps)) // old step index -> kept index
	type sig struct {
		typ reflect.Type
		ins string
	}
	seen := map[sig][]int{}
	var kept []step
	remap := func(r ref) ref {
		switch r.kind {
		case fromConst:
			r.idx = constMap[r.idx]
		case fromStep:
			r.idx = stepMap[r.idx]
		}
		return r
	}
	for i, st := range t.steps {
		for j := range st.ins {
			st.ins[j] = remap(st.ins[j])
		}
		k := sig{reflect.TypeOf(st.prim), refsKey(st.ins)}
		merged := -1
		if eq, ok := st.prim.(array.Equivalence); ok {
			for _, cand := range seen[k] {
				c := kept[cand]
				if eq.Equivalent(c.prim) && slices.EqualFunc(c.dtypes, st.dtypes, func(a, b array.DType) bool { return a == b }) && equalShapes(c.shapes, st.shapes) {
					merged = cand
					break
				}
			}
		}
		if merged >= 0 {
			stepMap[i] = merged
			continue
		}
		stepMap[i] = len(kept)
		seen[k] = append(seen[k], len(kept))
		kept = append(kept, st)
	}
	t.steps = kept
	for i := range t.outs {
		t.outs[i] = remap(t.outs[i])
	}
}

func refsKey(rs []ref) string {
	b := make([]byte, 0, 12*len(rs))
	for _, r := range rs {
		b = append(b, byte(r.kind), byte(r.idx), byte(r.idx>>8), byte(r.idx>>16), byte(r.idx>>24), byte(r.out), byte(r.out>>8), ',')
	}
	return string(b)
}

func equalShapes(a, b [][]int) bool {
	return slices.EqualFunc(a, b, func(x, y []int) bool { return slices.Equal(x, y) })
}

// mergeScalarConstants maps each constant to the first evaluated 0-d
// constant with the same dtype and bytes, and returns the mapping.
func (t *trace) mergeScalarConstants() []int {
	m := make([]int, len(t.consts))
	type scalar struct {
		dt  array.DType
		val string
	}
	first := map[scalar]int{}
	for i, c := range t.consts {
		m[i] = i
		if c.Ndim() != 0 || !c.Evaluated() {
			continue
		}
		b := c.Storage().Bytes()
		sz := c.DType().Size()
		k := scalar{c.DType(), string(bytes.Clone(b[c.Offset()*sz : (c.Offset()+1)*sz]))}
		if j, ok := first[k]; ok {
			m[i] = j
		} else {
			first[k] = i
		}
	}
	return m
}

// fuse is filled in by fuse.go.
