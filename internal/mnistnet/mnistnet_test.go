package mnistnet

import (
	"slices"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/nn"
	"github.com/fathom-go/fathom/ops"
)

// TestModels: each model has the parameters of the network PyTorch's
// side builds and maps a batch of images to ten logits, with a finite
// loss near log 10 at the start.
func TestModels(t *testing.T) {
	for _, c := range []struct {
		name   string
		model  *nn.Sequential
		in     []int
		params int
	}{
		{"mlp", MLP(), []int{2, 784}, 784*512 + 512 + 512*512 + 512 + 512*10 + 10},
		{"cnn", CNN(), []int{2, 28, 28, 1}, 9*32 + 32 + 9*32*64 + 64 + 3136*10 + 10},
	} {
		n := 0
		for _, p := range nn.Parameters(c.model) {
			n += p.Size()
		}
		if n != c.params {
			t.Errorf("%s: %d parameters, want %d", c.name, n, c.params)
		}
		x := ops.Full(c.in, 0.5, array.Float32)
		if got := c.model.Forward(x).Shape(); !slices.Equal(got, []int{2, 10}) {
			t.Errorf("%s: logits %v, want [2 10]", c.name, got)
		}
		loss, err := array.ToSlice[float32](CrossEntropy(c.model, x, ops.Full([]int{2}, 3, array.Int32)))
		if err != nil {
			t.Fatal(err)
		}
		if loss[0] < 1 || loss[0] > 4 {
			t.Errorf("%s: first loss %v, want near log 10 = 2.3", c.name, loss[0])
		}
	}
}
