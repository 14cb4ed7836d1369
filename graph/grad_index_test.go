package graph_test

import (
	"slices"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

// Rows for Index, At, Gather and the scatters. Index arrays repeat and
// hold negative entries, so the backward scatter-adds must accumulate
// and the set's winners must be found.

func ixs(x ...*array.Array) []*array.Array { return x }

var _ = register(
	gradCase{op: "Index", name: "basic view", args: []arg{ixArg(4, 5)},
		f: func(x ...*array.Array) *array.Array {
			return ops.Index(x[0], ops.R(ops.None, ops.None, -2), ops.NewAxis, 3)
		}},
	gradCase{op: "Index", name: "adjacent arrays", args: []arg{ixArg(2, 3, 4), ixIdx([]int{3}, 0, -1, 0), ixIdx([]int{3}, 3, 1, 3)},
		f: func(x ...*array.Array) *array.Array { return ops.Index(x[0], ops.Whole(), x[1], x[2]) }},
	gradCase{op: "Index", name: "separated arrays", args: []arg{ixArg(3, 2, 4), ixIdx([]int{2}, 2, 2), ixIdx([]int{2}, -1, 0)},
		f: func(x ...*array.Array) *array.Array { return ops.Index(x[0], x[1], ops.Whole(), x[2]) }},
	gradCase{op: "TakeFlat", name: "repeats", args: []arg{ixArg(3, 2), ixIdx([]int{2, 2}, 5, 0, -1, 3)},
		f: func(x ...*array.Array) *array.Array { return ops.TakeFlat(x[0], x[1]) }},
	gradCase{op: "Gather", name: "rows", args: []arg{ixArg(4, 3), ixIdx([]int{3}, 1, -1, 1)},
		f: func(x ...*array.Array) *array.Array { return ops.Gather(x[0], ixs(x[1]), []int{0}, []int{1, 2}) }},
	gradCase{op: "Gather", name: "two axes", args: []arg{ixArg(3, 4, 2), ixIdx([]int{2, 1}, 0, 2), ixIdx([]int{3}, 1, 3, 1)},
		f: func(x ...*array.Array) *array.Array {
			return ops.Gather(x[0], ixs(x[1], x[2]), []int{0, 1}, []int{1, 1, 2})
		}},
	gradCase{op: "Scatter", name: "set with repeats", args: []arg{ixArg(4, 3), ixIdx([]int{3}, 1, 3, 1), ixArg(3, 1, 3)},
		f: func(x ...*array.Array) *array.Array { return ops.Scatter(x[0], ixs(x[1]), x[2], []int{0}) }},
	gradCase{op: "ScatterAdd", name: "repeats", args: []arg{ixArg(4, 3), ixIdx([]int{3}, 1, -1, 1), ixArg(3, 1, 2)},
		f: func(x ...*array.Array) *array.Array { return ops.ScatterAdd(x[0], ixs(x[1]), x[2], []int{0}) }},
	gradCase{op: "ScatterProd", name: "repeats", args: []arg{ixArg(4, 3), ixIdx([]int{3}, 1, -1, 1), ixArg(3, 1, 3)},
		f: func(x ...*array.Array) *array.Array { return ops.ScatterProd(x[0], ixs(x[1]), x[2], []int{0}) }},
	gradCase{op: "ScatterMax", name: "repeats", args: []arg{ixArg(4, 3), ixIdx([]int{3}, 1, -1, 1), ixArg(3, 1, 3)}, ties: true,
		f: func(x ...*array.Array) *array.Array { return ops.ScatterMax(x[0], ixs(x[1]), x[2], []int{0}) }},
	gradCase{op: "ScatterMin", name: "two axes", args: []arg{ixArg(3, 4), ixIdx([]int{3}, 0, 2, 0), ixIdx([]int{3}, 1, 1, 1), ixArg(3, 1, 1)}, ties: true,
		f: func(x ...*array.Array) *array.Array { return ops.ScatterMin(x[0], ixs(x[1], x[2]), x[3], []int{0, 1}) }},
	gradCase{op: "At", name: "Add rows", args: []arg{ixArg(4, 3), ixIdx([]int{3}, 2, 0, 2), ixArg(3, 3)},
		f: func(x ...*array.Array) *array.Array { return ops.At(x[0], x[1]).Add(x[2]) }},
	gradCase{op: "At", name: "Set through a range", args: []arg{ixArg(4, 3), ixArg(2, 3)},
		f: func(x ...*array.Array) *array.Array { return ops.At(x[0], ops.R(1, 4, 2)).Set(x[1]) }},
	gradCase{op: "At", name: "Mul separated", args: []arg{ixArg(3, 2, 2), ixIdx([]int{2}, 0, 0), ixArg(2, 2)},
		f: func(x ...*array.Array) *array.Array { return ops.At(x[0], x[1], ops.Whole(), 1).Mul(x[2]) }},
	gradCase{op: "At", name: "Max", args: []arg{ixArg(5), ixIdx([]int{4}, 4, 0, 4, 1), ixArg(4)}, ties: true,
		f: func(x ...*array.Array) *array.Array { return ops.At(x[0], x[1]).Max(x[2]) }},
	gradCase{op: "At", name: "Min", args: []arg{ixArg(5), ixIdx([]int{4}, 4, 0, 4, 1), ixArg(4)}, ties: true,
		f: func(x ...*array.Array) *array.Array { return ops.At(x[0], x[1]).Min(x[2]) }},
)

// TestIndexVmapBatchedIndices checks the batching rules where the table's
// rows cannot: the table never batches index arrays. Each function runs
// under Vmap with every combination of batched array, indices and
// updates (batch axis 1 for the array, to move it), against a loop over
// the members.
func TestIndexVmapBatchedIndices(t *testing.T) {
	const n = 3
	a := ops.Reshape(ops.Arange(0, n*4*3*2, 1, array.Float32), 4, n, 3, 2) // batch axis 1
	idx := array.FromSlice([]int32{1, -1, 1, 0, 3, 3, 2, 2, 0}, n, 3)
	upd := ops.Reshape(ops.Arange(100, 100+n*3*3*2, 1, array.Float32), n, 3, 3, 2)
	fns := []struct {
		name string
		f    func(a, i, u *array.Array) *array.Array
	}{
		{"Index", func(a, i, _ *array.Array) *array.Array { return ops.Index(a, i, ops.Whole(), 1) }},
		{"Index separated", func(a, i, _ *array.Array) *array.Array { return ops.Index(a, i, 1, ops.Whole()) }},
		{"Gather", func(a, i, _ *array.Array) *array.Array { return ops.Gather(a, ixs(i), []int{0}, []int{1, 2, 2}) }},
		{"TakeFlat", func(a, i, _ *array.Array) *array.Array { return ops.TakeFlat(a, i) }},
		{"ScatterAdd", func(a, i, u *array.Array) *array.Array {
			return ops.ScatterAdd(a, ixs(i), ops.ExpandDims(u, 1), []int{0})
		}},
		{"Scatter", func(a, i, u *array.Array) *array.Array { return ops.Scatter(a, ixs(i), ops.ExpandDims(u, 1), []int{0}) }},
		{"ScatterMax", func(a, i, u *array.Array) *array.Array {
			return ops.ScatterMax(a, ixs(i), ops.ExpandDims(u, 1), []int{0})
		}},
		{"ScatterProd", func(a, i, u *array.Array) *array.Array {
			return ops.ScatterProd(a, ixs(i), ops.ExpandDims(u, 1), []int{0})
		}},
		{"At.Add", func(a, i, u *array.Array) *array.Array { return ops.At(a, i).Add(u) }},
		{"At.Set separated", func(a, i, u *array.Array) *array.Array {
			return ops.At(a, i, ops.Whole(), 0).Set(ops.Index(u, ops.Ellipsis, 0))
		}},
	}
	for _, fn := range fns {
		for mask := 1; mask < 8; mask++ {
			axes := []int{graph.NoAxis, graph.NoAxis, graph.NoAxis}
			for k, ax := range []int{1, 0, 0} {
				if mask&(1<<k) != 0 {
					axes[k] = ax
				}
			}
			member := func(x *array.Array, k, j int) *array.Array {
				if axes[k] == graph.NoAxis {
					return x
				}
				return ops.Squeeze(ops.Slice(x, rangesAt(x.Ndim(), axes[k], j)...), axes[k])
			}
			args := []*array.Array{a, idx, upd}
			for k, ax := range []int{1, 0, 0} {
				if axes[k] == graph.NoAxis {
					args[k] = ops.Squeeze(ops.Slice(args[k], rangesAt(args[k].Ndim(), ax, 0)...), ax)
				}
			}
			got := graph.Vmap(func(in ...*array.Array) []*array.Array {
				return []*array.Array{fn.f(in[0], in[1], in[2])}
			}, axes, []int{0})(args...)[0]
			var want []*array.Array
			for j := range n {
				want = append(want, fn.f(member(args[0], 0, j), member(args[1], 1, j), member(args[2], 2, j)))
			}
			w := ops.Stack(want, 0)
			g, err := array.ToSlice[float32](got)
			if err != nil {
				t.Fatalf("%s mask %d: %v", fn.name, mask, err)
			}
			e, err := array.ToSlice[float32](w)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Shape(), w.Shape()) || !slices.Equal(g, e) {
				t.Errorf("%s, batched %v: got %v %v, want %v %v", fn.name, axes, got.Shape(), g, w.Shape(), e)
			}
		}
	}
}

// rangesAt selects element j of axis ax of an nd-dim array.
func rangesAt(nd, ax, j int) []ops.Range {
	r := make([]ops.Range, nd)
	for i := range r {
		r[i] = ops.Whole()
	}
	r[ax] = ops.R(j, j+1)
	return r
}
