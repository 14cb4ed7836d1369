package graph_test

import (
	"github.com/fathom-go/fathom/array"
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
