package ops_test

import (
	"path/filepath"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/arraytest"
	"github.com/fathom-go/fathom/internal/refcase"
	"github.com/fathom-go/fathom/ops"
)

// refArray and refCase are the numpy reference files' arrays and cases
// (testdata/gen_*.py, read by internal/refcase).
type (
	refArray = refcase.Array
	refCase  = refcase.Case
)

// loadCases reads testdata/<file>.
func loadCases(t testing.TB, file string) []refCase {
	t.Helper()
	return refcase.Load(t, filepath.Join("testdata", file))
}

// checkArray compares got with the reference: dtype, shape and values
// within arraytest.DefaultTol of the dtype, NaNs matching NaNs.
func checkArray(t testing.TB, name string, got *array.Array, want refArray) {
	t.Helper()
	w := want.Build(t)
	tol := arraytest.DefaultTol(w.DType())
	if w.DType() == array.BFloat16 && got.DType() == array.BFloat16 {
		// numpy has no bfloat16: the reference holds float32 results,
		// which are compared unrounded with got's values, widened exactly.
		w, got = refArray{DType: "float32", Shape: want.Shape, Data: want.Data}.Build(t), widenBF16(t, got)
	}
	arraytest.AssertClose(t, w, got, tol, name)
}

// widenBF16 returns a bfloat16 array's values as float32, without an op.
func widenBF16(t testing.TB, a *array.Array) *array.Array {
	t.Helper()
	s, err := array.ToSlice[array.BF16](a)
	if err != nil {
		t.Fatal(err)
	}
	return array.FromSlice(refcase.MapSlice(s, array.BF16.Float32), a.Shape()...)
}

// refLayouts give the same values in different memory layouts, so the
// reference cases also run on column-major, reversed (negative strides)
// and stepped (stride 2 along the first axis) inputs.
var refLayouts = []struct {
	name string
	of   func(x *array.Array) *array.Array
}{
	{"contiguous", func(x *array.Array) *array.Array { return x }},
	{"transposed", func(x *array.Array) *array.Array {
		if x.Ndim() < 2 {
			return x
		}
		return ops.Transpose(ops.Copy(ops.Transpose(x)))
	}},
	{"reversed", func(x *array.Array) *array.Array {
		rv := make([]ops.Range, x.Ndim())
		for i := range rv {
			rv[i] = ops.R(ops.None, ops.None, -1)
		}
		return ops.Slice(ops.Copy(ops.Slice(x, rv...)), rv...)
	}},
	{"stepped", func(x *array.Array) *array.Array {
		if x.Ndim() == 0 {
			return x
		}
		return ops.SliceAxis(ops.Repeat(x, 2, 0), 0, ops.R(ops.None, ops.None, 2))
	}},
}
