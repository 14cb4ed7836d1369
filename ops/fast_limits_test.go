package ops_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// The fast family's rows of the size-limit table (sizelimit_test.go):
// results that cannot exist are refused at Eval, naming the primitive.
var _ = func() bool {
	atEval = append(atEval,
		sizeCase{"LayerNorm", "LayerNorm", []string{shp(tera, 4)}, func() *array.Array {
			return ops.LayerNorm(hugeF32(tera, 4), nil, nil, 1e-5)
		}},
		sizeCase{"RMSNorm", "RMSNorm", []string{shp(tera, 4)}, func() *array.Array { return ops.RMSNorm(hugeF32(tera, 4), nil, 1e-5) }},
		sizeCase{"RoPE", "RoPE", []string{shp(tera, 4)}, func() *array.Array { return ops.RoPE(hugeF32(tera, 4), 4, false, 10000, 1, 0) }},
		sizeCase{"ScaledDotProductAttention", "ScaledDotProductAttention", []string{shp(1<<20, 1, 1<<20, 4)}, func() *array.Array {
			return ops.ScaledDotProductAttention(hugeF32(1<<20, 1, 1<<20, 4), hugeF32(1<<20, 1, 2, 4), hugeF32(1<<20, 1, 2, 4), 1, nil, false)
		}},
	)
	return true
}()

// TestFastNilArrays passes nil in each array argument of the fast
// family: each panics with an *array.Error naming the op. It is
// TestNilArrays's check (nil_test.go), through the same tryAll, for the
// fast family's signatures.
func TestFastNilArrays(t *testing.T) {
	x := ops.Zeros([]int{2, 1, 3, 4}, array.Float32)
	w := ops.Zeros([]int{4}, array.Float32)
	var n *array.Array
	calls := map[string][]func(){
		"ops.LayerNorm":                 {func() { ops.LayerNorm(n, w, w, 1e-5) }},
		"ops.RMSNorm":                   {func() { ops.RMSNorm(n, w, 1e-5) }},
		"ops.RoPE":                      {func() { ops.RoPE(n, 4, false, 10000, 1, 0) }},
		"ops.ScaledDotProductAttention": {func() { ops.ScaledDotProductAttention(n, x, x, 1, nil, false) }, func() { ops.ScaledDotProductAttention(x, n, x, 1, nil, false) }, func() { ops.ScaledDotProductAttention(x, x, n, 1, nil, false) }},
	}
	for op, fs := range calls {
		for i, f := range fs {
			err := tryAll(f)
			var e *array.Error
			if !errors.As(err, &e) || !strings.Contains(err.Error(), op) {
				t.Errorf("%s, nil argument %d: got %v, want an *array.Error naming %s", op, i, err, op)
			}
		}
	}
}
