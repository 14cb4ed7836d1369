package ops_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// decodeIndex turns a case's index param into Index's items.
func decodeIndex(t *testing.T, c refCase, ins []*array.Array) []any {
	t.Helper()
	var raw []json.RawMessage
	if !c.Param(t, "index", &raw) {
		t.Fatalf("%s: no index", c.Name)
	}
	var out []any
	for _, r := range raw {
		var s string
		if json.Unmarshal(r, &s) == nil {
			switch s {
			case "newaxis":
				out = append(out, ops.NewAxis)
			case "ellipsis":
				out = append(out, ops.Ellipsis)
			default:
				t.Fatalf("%s: item %q", c.Name, s)
			}
			continue
		}
		var m struct {
			Int   *int   `json:"int"`
			Range []*int `json:"range"`
			Array *int   `json:"array"`
		}
		if err := json.Unmarshal(r, &m); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		switch {
		case m.Int != nil:
			out = append(out, *m.Int)
		case m.Array != nil:
			out = append(out, ins[*m.Array])
		default:
			r := ops.Range{Start: ops.None, Stop: ops.None, Step: 1}
			if m.Range[0] != nil {
				r.Start = *m.Range[0]
			}
			if m.Range[1] != nil {
				r.Stop = *m.Range[1]
			}
			if m.Range[2] != nil {
				r.Step = *m.Range[2]
			}
			out = append(out, r)
		}
	}
	return out
}

func indexRunCase(t *testing.T, c refCase, ins []*array.Array) *array.Array {
	t.Helper()
	var axes, sizes []int
	c.Param(t, "axes", &axes)
	c.Param(t, "slice_sizes", &sizes)
	last := ins[len(ins)-1]
	switch c.Op {
	case "index":
		return ops.Index(ins[0], decodeIndex(t, c, ins)...)
	case "at_set":
		return ops.At(ins[0], decodeIndex(t, c, ins)...).Set(last)
	case "at_add":
		return ops.At(ins[0], decodeIndex(t, c, ins)...).Add(last)
	case "at_mul":
		return ops.At(ins[0], decodeIndex(t, c, ins)...).Mul(last)
	case "at_max":
		return ops.At(ins[0], decodeIndex(t, c, ins)...).Max(last)
	case "at_min":
		return ops.At(ins[0], decodeIndex(t, c, ins)...).Min(last)
	case "gather":
		return ops.Gather(ins[0], ins[1:], axes, sizes)
	case "scatter":
		return ops.Scatter(ins[0], ins[1:len(ins)-1], last, axes)
	case "scatter_add":
		return ops.ScatterAdd(ins[0], ins[1:len(ins)-1], last, axes)
	case "scatter_prod":
		return ops.ScatterProd(ins[0], ins[1:len(ins)-1], last, axes)
	case "scatter_max":
		return ops.ScatterMax(ins[0], ins[1:len(ins)-1], last, axes)
	case "scatter_min":
		return ops.ScatterMin(ins[0], ins[1:len(ins)-1], last, axes)
	case "take_flat":
		return ops.TakeFlat(ins[0], ins[1])
	}
	t.Fatalf("%s: unknown op %q", c.Name, c.Op)
	return nil
}

// TestIndexReference checks Index, At, Gather, Scatter and TakeFlat
// against numpy (testdata/gen_index.py), on every input layout.
func TestIndexReference(t *testing.T) {
	seen := map[string]int{}
	for _, c := range loadCases(t, "index.json") {
		seen[c.Op]++
		for _, l := range refLayouts {
			ins := make([]*array.Array, len(c.Inputs))
			for i, r := range c.Inputs {
				ins[i] = l.of(r.Build(t))
			}
			got := indexRunCase(t, c, ins)
			if err := array.Eval(got); err != nil {
				t.Fatalf("%s (%s): %v", c.Name, l.name, err)
			}
			checkArray(t, c.Name+" ("+l.name+")", got, c.Expected[0])
		}
	}
	for _, op := range []string{"index", "at_set", "at_add", "at_mul", "at_max", "at_min", "gather", "scatter",
		"scatter_add", "scatter_prod", "scatter_max", "scatter_min", "take_flat"} {
		if seen[op] == 0 {
			t.Errorf("no reference cases for %s", op)
		}
	}
}

// TestIndexBasicIsAView checks that indexing without arrays shares a's
// memory, as Slice does.
func TestIndexBasicIsAView(t *testing.T) {
	a := ops.Reshape(ops.Arange(0, 24, 1, array.Float32), 2, 3, 4)
	v := ops.Index(a, 1, ops.NewAxis, ops.R(ops.None, ops.None, -1), ops.Ellipsis, ops.R(1, 4, 2))
	if err := array.Eval(a, v); err != nil {
		t.Fatal(err)
	}
	if v.Storage() != a.Storage() {
		t.Fatal("basic indexing copied")
	}
	got, _ := array.ToSlice[float32](v)
	want := []float32{21, 23, 17, 19, 13, 15}
	if !equalF32(got, want) || !slices.Equal(v.Shape(), []int{1, 3, 2}) {
		t.Fatalf("got %v shape %v, want %v shape [1 3 2]", got, v.Shape(), want)
	}
}

func equalF32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestIndexBadInput checks that bad indices raise an *array.Error naming
// the op at the call, and out-of-range index arrays an error from Eval.
func TestIndexBadInput(t *testing.T) {
	a := ops.Zeros([]int{3, 4}, array.Float32)
	i32 := array.FromSlice([]int32{0, 1}, 2)
	mask := array.FromSlice([]bool{true, false, true}, 3)
	f := array.FromSlice([]float32{0, 1}, 2)
	for _, c := range []struct {
		name, op, msg string
		f             func()
	}{
		{"too many", "ops.Index", "indexed axes", func() { ops.Index(a, 0, 1, 2) }},
		{"int out of range", "ops.Index", "out of range", func() { ops.Index(a, 3) }},
		{"two ellipses", "ops.Index", "Ellipsis", func() { ops.Index(a, ops.Ellipsis, ops.Ellipsis) }},
		{"bool mask", "ops.Index", "Where", func() { ops.Index(a, mask) }},
		{"float index", "ops.Index", "integer", func() { ops.Index(a, f) }},
		{"bad type", "ops.Index", "string", func() { ops.Index(a, "x") }},
		{"no broadcast", "ops.Index", "broadcast", func() { ops.Index(a, i32, array.FromSlice([]int32{0, 1, 2}, 3)) }},
		{"at values", "ops.IndexUpdate.Add", "broadcast", func() { ops.At(a, i32).Add(ops.Zeros([]int{3}, array.Float32)) }},
		{"at complex max", "ops.IndexUpdate.Max", "order", func() { ops.At(ops.Zeros([]int{2}, array.Complex64), i32).Max(ops.Zeros([]int{2}, array.Complex64)) }},
		{"gather sizes", "ops.Gather", "slice sizes", func() { ops.Gather(a, []*array.Array{i32}, []int{0}, []int{1}) }},
		{"gather big slice", "ops.Gather", "slice size", func() { ops.Gather(a, []*array.Array{i32}, []int{0}, []int{2, 4}) }},
		{"gather axes", "ops.Gather", "2 axes", func() { ops.Gather(a, []*array.Array{i32}, []int{0, 1}, []int{1, 4}) }},
		{"gather repeated axis", "ops.Gather", "repeated", func() { ops.Gather(a, []*array.Array{i32, i32}, []int{0, -2}, []int{1, 4}) }},
		{"scatter rank", "ops.ScatterAdd", "dims", func() { ops.ScatterAdd(a, []*array.Array{i32}, ops.Zeros([]int{2, 4}, array.Float32), []int{0}) }},
		{"scatter slice", "ops.Scatter", "fit", func() { ops.Scatter(a, []*array.Array{i32}, ops.Zeros([]int{2, 1, 5}, array.Float32), []int{0}) }},
		{"scatter nil", "ops.ScatterMax", "nil", func() { ops.ScatterMax(a, []*array.Array{i32}, nil, []int{0}) }},
	} {
		err := array.Try(c.f)
		e, ok := err.(*array.Error)
		if !ok || e.Op != c.op || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("%s: got %v, want an *array.Error from %s mentioning %q", c.name, err, c.op, c.msg)
		}
	}
	bad := array.FromSlice([]int32{0, 7}, 2)
	for name, x := range map[string]*array.Array{
		"Index":      ops.Index(a, bad),
		"At.Add":     ops.At(a, bad).Add(ops.Ones([]int{4}, array.Float32)),
		"At.Set 2":   ops.At(a, ops.R(0, 2), bad).Set(ops.Ones([]int{2}, array.Float32)),
		"ScatterMin": ops.ScatterMin(a, []*array.Array{bad}, ops.Zeros([]int{2, 1, 4}, array.Float32), []int{0}),
		"TakeFlat":   ops.TakeFlat(a, array.FromSlice([]int32{12}, 1)),
	} {
		err := array.Eval(x)
		if err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("%s with an index out of range: got %v", name, err)
		}
	}
}

// TestScatterAddDuplicatesParallel adds many updates into few slots on
// every worker split, which -race checks for overlapping writes.
func TestScatterAddDuplicatesParallel(t *testing.T) {
	const n, slots = 1 << 18, 97
	idx := make([]int32, n)
	upd := make([]float32, n)
	want := make([]float32, slots)
	for i := range idx {
		idx[i] = int32((i * 31) % slots)
		upd[i] = float32(i%5) - 2
		want[idx[i]] += upd[i]
	}
	got := ops.ScatterAdd(ops.Zeros([]int{slots}, array.Float32), []*array.Array{array.FromSlice(idx, n)},
		array.FromSlice(upd, n, 1), []int{0})
	s, err := array.ToSlice[float32](got)
	if err != nil {
		t.Fatal(err)
	}
	if !equalF32(s, want) {
		t.Fatalf("got %v, want %v", s[:8], want[:8])
	}
}
