package nn_test

import (
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/nn"
	"github.com/fathom-go/fathom/ops"
	"github.com/fathom-go/fathom/random"
)

// TestBadInput passes layers, losses and constructors arguments that do
// not fit: each must panic with an *array.Error that names the layer and
// the shapes or values involved.
func TestBadInput(t *testing.T) {
	k := random.Key(1)
	x3 := ops.Zeros([]int{2, 3, 4}, array.Float32)
	x4 := ops.Zeros([]int{2, 5, 5, 4}, array.Float32)
	cls := array.FromSlice([]int32{0, 1})
	var nilLinear *nn.Linear
	cases := []struct {
		name  string
		op    string
		parts []string
		f     func()
	}{
		{"Linear features", "nn.Linear", []string{"[2 3 4]", "[5 3]"}, func() { nn.NewLinear(k, 3, 5, true).Forward(x3) }},
		{"Linear nil input", "nn.Linear", []string{"nil input"}, func() { nn.NewLinear(k, 3, 5, true).Forward(nil) }},
		{"nil Linear", "nn.Linear", []string{"nil layer"}, func() { nilLinear.Forward(x3) }},
		{"NewLinear size", "nn.NewLinear", []string{"[0 5]"}, func() { nn.NewLinear(k, 0, 5, true) }},
		{"Conv2D channels", "nn.Conv2D", []string{"[2 5 5 4]", "[6 3 3 3]"}, func() { nn.NewConv2D(k, 3, 6, [2]int{3, 3}, 1, true).Forward(x4) }},
		{"Conv2D rank", "nn.Conv2D", []string{"[2 3 4]"}, func() { nn.NewConv2D(k, 4, 6, [2]int{3, 3}, 1, true).Forward(x3) }},
		{"NewConv1D groups", "nn.NewConv1D", []string{"3 input", "2 groups"}, func() { nn.NewConv1D(k, 3, 4, 3, 2, true) }},
		{"MaxPool2D rank", "nn.MaxPool2D", []string{"[2 3 4]"}, func() { nn.MaxPool2D{Kernel: [2]int{2, 2}}.Forward(x3) }},
		{"LayerNorm features", "nn.LayerNorm", []string{"[2 3 4]", "want 6"}, func() { nn.NewLayerNorm(6, 1e-5, true).Forward(x3) }},
		{"RMSNorm features", "nn.RMSNorm", []string{"[2 3 4]"}, func() { nn.NewRMSNorm(5, 1e-5).Forward(x3) }},
		{"NewGroupNorm groups", "nn.NewGroupNorm", []string{"6 channels", "4 groups"}, func() { nn.NewGroupNorm(4, 6, 1e-5, true) }},
		{"BatchNorm channels", "nn.BatchNorm", []string{"[2 3 4]", "want 3"}, func() { nn.NewBatchNorm(3, 1e-5, 0.1, true, true).Forward(x3) }},
		{"BatchNorm one value", "nn.BatchNorm", []string{"[1 4]", "more than one"}, func() {
			nn.NewBatchNorm(4, 1e-5, 0.1, true, true).Forward(ops.Zeros([]int{1, 4}, array.Float32))
		}},
		{"Dropout probability", "nn.NewDropout", []string{"1.5"}, func() { nn.NewDropout(k, 1.5) }},
		{"Embedding float indices", "nn.Embedding", []string{"float32"}, func() { nn.NewEmbedding(k, 5, 3).Forward(x3) }},
		{"Bilinear shapes", "nn.Bilinear", []string{"[2 3 4]", "[4 2 3]"}, func() { nn.NewBilinear(k, 2, 3, 4, true).Forward(x3, x3) }},
		{"MultiHeadAttention heads", "nn.NewMultiHeadAttention", []string{"6 features", "4 heads"}, func() { nn.NewMultiHeadAttention(k, 6, 4, true) }},
		{"MultiHeadAttention rank", "nn.MultiHeadAttention", []string{"[2 5 5 4]"}, func() {
			nn.NewMultiHeadAttention(k, 4, 2, true).Forward(x4, x3, x3, nil, false)
		}},
		{"Sequential nil layer", "nn.Sequential", []string{"layer 1 is nil"}, func() {
			nn.NewSequential(nn.Fn(nn.ReLU), nil).Forward(x3)
		}},
		{"ReLU integers", "nn.ReLU", []string{"int32"}, func() { nn.ReLU(cls) }},
		{"MSELoss shapes", "nn.MSELoss", []string{"[2 3 4]", "[2 5 5 4]"}, func() { nn.MSELoss(x3, x4, nn.Mean) }},
		{"CrossEntropyLoss targets", "nn.CrossEntropyLoss", []string{"[2]", "[2 3 4]", "[2 3]"}, func() { nn.CrossEntropyLoss(x3, cls, nil, 0, nn.Mean) }},
		{"CrossEntropyLoss smoothing", "nn.CrossEntropyLoss", []string{"1.5"}, func() {
			nn.CrossEntropyLoss(ops.Zeros([]int{2, 4}, array.Float32), cls, nil, 1.5, nn.Mean)
		}},
		{"CrossEntropyLoss weights", "nn.CrossEntropyLoss", []string{"[3]", "4 classes"}, func() {
			nn.CrossEntropyLoss(ops.Zeros([]int{2, 4}, array.Float32), cls, ops.Ones([]int{3}, array.Float32), 0, nn.Mean)
		}},
		{"NLLLoss bool targets", "nn.NLLLoss", []string{"bool"}, func() {
			nn.NLLLoss(ops.Zeros([]int{2, 4}, array.Float32), array.FromSlice([]bool{true, false}), nil, nn.Mean)
		}},
		{"HuberLoss delta", "nn.HuberLoss", []string{"delta 0"}, func() { nn.HuberLoss(x3, x3, 0, nn.Mean) }},
		{"reduction", "nn.MSELoss", []string{"unknown reduction 9"}, func() { nn.MSELoss(x3, x3, nn.Reduction(9)) }},
		{"Gain", "nn.Gain", []string{`"swish"`}, func() { nn.Gain("swish", 0) }},
		{"ValueAndGrad nil loss", "nn.ValueAndGrad", []string{"nil loss"}, func() { nn.ValueAndGrad[*nn.Linear](nn.NewLinear(k, 2, 2, true), nil) }},
	}
	for _, c := range cases {
		err := array.Try(c.f)
		if !hasErr(err, c.op, c.parts...) {
			t.Errorf("%s: %v, want an %s error with %q", c.name, err, c.op, c.parts)
		}
	}
}
