package graph_test

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// Rows for the fast family. Attention's rows cover grouped heads, L != S,
// the causal mask (lower-right, so with L < S every query keeps keys),
// additive masks (which have a gradient) and boolean ones (fixed). RoPE is
// linear, so its rows also check the rotation's transpose (VJP) against
// differences.

func fastArg(s ...int) arg { return arg{shape: append([]int{}, s...)} }

var fastKeep = array.FromSlice([]bool{
	true, false, true, true, false,
	true, true, false, true, true,
	false, true, true, true, true,
}, 3, 5)

var _ = register(
	gradCase{op: "LayerNorm", name: "weight and bias", args: []arg{fastArg(3, 2, 7), fastArg(7), fastArg(7)},
		f: func(x ...*array.Array) *array.Array { return ops.LayerNorm(x[0], x[1], x[2], 1e-5) }},
	gradCase{op: "LayerNorm", name: "plain", args: []arg{fastArg(4, 5)},
		f: func(x ...*array.Array) *array.Array { return ops.LayerNorm(x[0], nil, nil, 0.1) }},
	gradCase{op: "LayerNorm", name: "bias only", args: []arg{fastArg(2, 6), fastArg(6)},
		f: func(x ...*array.Array) *array.Array { return ops.LayerNorm(x[0], nil, x[1], 1e-5) }},
	gradCase{op: "LayerNorm", name: "one array as weight and bias", args: []arg{fastArg(3, 5), fastArg(5)},
		f: func(x ...*array.Array) *array.Array { return ops.LayerNorm(x[0], x[1], x[1], 1e-5) }},
	gradCase{op: "RMSNorm", name: "weight", args: []arg{fastArg(3, 2, 7), fastArg(7)},
		f: func(x ...*array.Array) *array.Array { return ops.RMSNorm(x[0], x[1], 1e-5) }},
	gradCase{op: "RMSNorm", name: "plain", args: []arg{fastArg(4, 5)},
		f: func(x ...*array.Array) *array.Array { return ops.RMSNorm(x[0], nil, 0.01) }},
	gradCase{op: "RoPE", name: "halves, offset", args: []arg{fastArg(2, 3, 8)},
		f: func(x ...*array.Array) *array.Array { return ops.RoPE(x[0], 8, false, 10000, 1, 3) }},
	gradCase{op: "RoPE", name: "traditional, dims < last axis", args: []arg{fastArg(2, 4, 10)},
		f: func(x ...*array.Array) *array.Array { return ops.RoPE(x[0], 6, true, 100, 0.5, 0) }},
	gradCase{op: "ScaledDotProductAttention", name: "grouped heads, L < S", args: []arg{fastArg(2, 4, 3, 4), fastArg(2, 2, 5, 4), fastArg(2, 2, 5, 3)},
		f: func(x ...*array.Array) *array.Array {
			return ops.ScaledDotProductAttention(x[0], x[1], x[2], 0.5, nil, false)
		}},
	gradCase{op: "ScaledDotProductAttention", name: "causal", args: []arg{fastArg(1, 2, 4, 3), fastArg(1, 2, 4, 3), fastArg(1, 2, 4, 3)},
		f: func(x ...*array.Array) *array.Array {
			return ops.ScaledDotProductAttention(x[0], x[1], x[2], 0.7, nil, true)
		}},
	gradCase{op: "ScaledDotProductAttention", name: "additive mask, causal", args: []arg{fastArg(2, 2, 3, 4), fastArg(2, 1, 5, 4), fastArg(2, 1, 5, 4), fastArg(2, 1, 3, 5)},
		f: func(x ...*array.Array) *array.Array {
			return ops.ScaledDotProductAttention(x[0], x[1], x[2], 0.5, x[3], true)
		}},
	gradCase{op: "ScaledDotProductAttention", name: "boolean mask", args: []arg{fastArg(2, 2, 3, 4), fastArg(2, 2, 5, 4), fastArg(2, 2, 5, 4), {fixed: fastKeep}},
		f: func(x ...*array.Array) *array.Array {
			return ops.ScaledDotProductAttention(x[0], x[1], x[2], 0.5, x[3], false)
		}},
)
