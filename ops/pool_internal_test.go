package ops

import (
	"errors"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
)

// TestPoolGPUIsAnError guards the GPU path of every pooling kind: until
// Metal has kernels it must fail with an error that says so, never fall
// back or return garbage.
func TestPoolGPUIsAnError(t *testing.T) {
	x := array.FromSlice(make([]float32, 16), 1, 4, 4, 1)
	for kind := poolMax; kind <= poolMaxScatter; kind++ {
		p := &poolPrim{Kind: kind, Nd: 2, Kernel: [3]int{2, 2}, Stride: [3]int{2, 2}}
		err := p.evalGPU(array.Stream{}, []*array.Array{x, x}, nil)
		var ae *array.Error
		if !errors.As(err, &ae) || ae.Op != "ops."+p.Name() || !strings.Contains(err.Error(), "CPU-only") || !strings.Contains(err.Error(), "[1 4 4 1]") {
			t.Errorf("%s: %v", p.Name(), err)
		}
	}
}
