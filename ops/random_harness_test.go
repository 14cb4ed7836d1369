//go:build fathom_mslharness

package ops_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// TestGPUNewDTypesAreErrors: on the GPU (the MSL harness here), the
// integer dtypes Metal's kernels do not take yet, and the random
// primitives (whose keys are uint32), fail at Eval with an *array.Error
// that names the dtype, instead of reaching a kernel that does not exist.
func TestGPUNewDTypesAreErrors(t *testing.T) {
	if err := array.SetDefaultDevice(array.GPU); err != nil {
		t.Fatal(err)
	}
	defer array.SetDefaultDevice(array.CPU)
	for _, c := range []struct {
		name, want string
		f          func() *array.Array
	}{
		{"Add uint16", "ops.Add: uint16 is not supported on the GPU yet", func() *array.Array {
			return ops.Add(array.FromSlice([]uint16{1, 2}), array.FromSlice([]uint16{3, 4}))
		}},
		{"AsType to int8", "ops.AsType: int8 is not supported on the GPU yet", func() *array.Array {
			return ops.AsType(array.FromSlice([]float32{1, 2}), array.Int8)
		}},
		{"RandomBits", "ops.RandomBits: uint32 is not supported on the GPU yet", func() *array.Array {
			return ops.RandomBits(array.FromSlice([]uint32{0, 0}), []int{4}, 4)
		}},
		{"RandomUniform", "ops.RandomUniform: uint32 is not supported on the GPU yet", func() *array.Array {
			return ops.RandomUniform(array.FromSlice([]uint32{0, 0}), []int{4}, array.Float32, 0, 1)
		}},
	} {
		err := c.f().Eval()
		var ae *array.Error
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Eval error %v, want *array.Error %q", c.name, err, c.want)
		}
	}
}
