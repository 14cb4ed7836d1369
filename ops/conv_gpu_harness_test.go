//go:build fathom_mslharness

package ops_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// TestConvOnGPUIsAnError guards against a silent wrong answer while
// convolution has no Metal kernel: evaluating one on the GPU must fail
// with an error that says the op runs on the CPU only.
func TestConvOnGPUIsAnError(t *testing.T) {
	if err := array.SetDefaultDevice(array.GPU); err != nil {
		t.Fatal(err)
	}
	defer array.SetDefaultDevice(array.CPU)
	x := array.FromSlice(harnessData(2*5*5*3, 1), 2, 5, 5, 3)
	w := array.FromSlice(harnessData(4*3*3*3, 2), 4, 3, 3, 3)
	y := ops.Conv2D(x, w, [2]int{1, 1}, [2]int{1, 1}, [2]int{1, 1}, 1)
	err := y.Eval()
	var ae *array.Error
	if !errors.As(err, &ae) || ae.Op != "ops.Conv" || !strings.Contains(ae.Msg, "CPU only") || !strings.Contains(ae.Msg, "[2 5 5 3]") {
		t.Fatalf("Conv2D on the GPU: %v, want an ops.Conv error saying it runs on the CPU only, naming the shapes", err)
	}
}
