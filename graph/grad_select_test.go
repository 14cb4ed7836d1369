package graph_test

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// Rows for selection, order statistics and LogCumSumExp. Partition,
// Median and Quantile differentiate through the elements they select
// (Sort's rule), so their rows are marked ties: the broadcast layout
// repeats values, where no derivative exists. The exclusive
// LogCumSumExp rows take Exp of the result, since the -Inf each line
// starts from has no finite difference.

func selArg(s ...int) arg { return arg{shape: append([]int{}, s...)} }

var _ = register(
	gradCase{op: "Partition", name: "last axis", args: []arg{selArg(3, 5)}, ties: true,
		f: func(x ...*array.Array) *array.Array { return ops.Partition(x[0], 2, -1) }},
	gradCase{op: "Partition", name: "axis 0, kth from the end", args: []arg{selArg(4, 3)}, ties: true,
		f: func(x ...*array.Array) *array.Array { return ops.Partition(x[0], -1, 0) }},
	gradCase{op: "ArgPartition", args: []arg{selArg(3, 5)}, zero: true,
		f: func(x ...*array.Array) *array.Array { return ops.ArgPartition(x[0], 1, 1) }},

	gradCase{op: "SearchSorted", name: "fixed a", args: []arg{{fixed: array.FromSlice([]float64{-0.5, -0.1, 0, 0.3, 0.3, 0.8})}, selArg(2, 3)},
		zero: true, f: func(x ...*array.Array) *array.Array { return ops.SearchSorted(x[0], x[1], "left") }},
	gradCase{op: "SearchSorted", name: "both batched, right", args: []arg{selArg(5), selArg(4)}, zero: true,
		f: func(x ...*array.Array) *array.Array { return ops.SearchSorted(ops.Sort(x[0], 0), x[1], "right") }},
	gradCase{op: "CountNonzero", args: []arg{selArg(3, 4)}, zero: true,
		f: func(x ...*array.Array) *array.Array {
			return ops.CountNonzero(ops.Where(ops.GreaterScalar(x[0], 0), x[0], ops.ZerosLike(x[0])), 1)
		}},

	gradCase{op: "Diff", name: "last axis", args: []arg{selArg(3, 5)},
		f: func(x ...*array.Array) *array.Array { return ops.Diff(x[0], 1, -1) }},
	gradCase{op: "Diff", name: "second order along axis 0", args: []arg{selArg(4, 3)},
		f: func(x ...*array.Array) *array.Array { return ops.Diff(x[0], 2, 0) }},

	gradCase{op: "Median", name: "odd line", args: []arg{selArg(3, 5)}, ties: true,
		f: func(x ...*array.Array) *array.Array { return ops.Median(x[0], 1) }},
	gradCase{op: "Median", name: "even, two axes", args: []arg{selArg(2, 3, 2)}, ties: true,
		f: func(x ...*array.Array) *array.Array { return ops.Median(x[0], 0, -1) }},
	gradCase{op: "Median", name: "all", args: []arg{selArg(4, 2)}, ties: true,
		f: func(x ...*array.Array) *array.Array { return ops.Median(x[0]) }},
	gradCase{op: "Quantile", name: "interpolated", args: []arg{selArg(3, 6)}, ties: true,
		f: func(x ...*array.Array) *array.Array { return ops.Quantile(x[0], 0.3, -1) }},
	gradCase{op: "Quantile", name: "upper half, axis 0", args: []arg{selArg(5, 2)}, ties: true,
		f: func(x ...*array.Array) *array.Array { return ops.Quantile(x[0], 0.8, 0) }},
	gradCase{op: "Quantile", name: "maximum", args: []arg{selArg(2, 3)}, ties: true,
		f: func(x ...*array.Array) *array.Array { return ops.Quantile(x[0], 1) }},

	gradCase{op: "LogCumSumExp", name: "forward", args: []arg{{shape: []int{3, 5}, lo: -4, hi: 4}},
		f: func(x ...*array.Array) *array.Array { return ops.LogCumSumExp(x[0], 1, false, true) }},
	gradCase{op: "LogCumSumExp", name: "reverse along axis 0", args: []arg{{shape: []int{4, 3}, lo: -4, hi: 4}},
		f: func(x ...*array.Array) *array.Array { return ops.LogCumSumExp(x[0], 0, true, true) }},
	gradCase{op: "LogCumSumExp", name: "exclusive", args: []arg{{shape: []int{3, 4}, lo: -2, hi: 2}},
		f: func(x ...*array.Array) *array.Array { return ops.Exp(ops.LogCumSumExp(x[0], -1, false, false)) }},
	gradCase{op: "LogCumSumExp", name: "reverse exclusive", args: []arg{{shape: []int{5}, lo: -2, hi: 2}},
		f: func(x ...*array.Array) *array.Array { return ops.Exp(ops.LogCumSumExp(x[0], 0, true, false)) }},
	gradCase{op: "LogCumSumExp", name: "large values", args: []arg{{shape: []int{2, 4}, lo: 500, hi: 510}},
		f: func(x ...*array.Array) *array.Array { return ops.LogCumSumExp(x[0], 1, false, true) }},
)
