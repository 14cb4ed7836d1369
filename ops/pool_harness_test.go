//go:build fathom_mslharness

package ops_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// TestPoolOnGPUIsAClearError runs a pool on the GPU device end to end:
// until Metal has pooling kernels, Eval must return an error that names
// the op and says pooling is CPU-only, not a wrong result.
func TestPoolOnGPUIsAClearError(t *testing.T) {
	if err := array.SetDefaultDevice(array.GPU); err != nil {
		t.Fatal(err)
	}
	defer array.SetDefaultDevice(array.CPU)
	x := ops.Add(ops.Zeros([]int{1, 4, 4, 2}, array.Float32), ops.Ones([]int{1, 4, 4, 2}, array.Float32))
	for _, y := range []*array.Array{
		ops.MaxPool2D(x, [2]int{2, 2}, [2]int{2, 2}, [2]int{}),
		ops.AvgPool1D(ops.Reshape(x, 1, 16, 2), 2, 2, 0),
	} {
		err := y.Eval()
		var ae *array.Error
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), "CPU-only") || !strings.HasPrefix(ae.Op, "ops.") {
			t.Errorf("got %v, want an *array.Error saying pooling is CPU-only", err)
		}
	}
}
