package main

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/nn"
	"github.com/fathom-go/fathom/ops"
	"github.com/fathom-go/fathom/random"
)

// classes is the number of digits.
const classes = 10

// MLP is a multilayer perceptron: 784 inputs, two hidden layers of ReLU
// units, 10 logits. Its parameters are "layers.0.weight", ...,
// "layers.2.bias".
type MLP struct {
	Layers []*nn.Linear
}

// newMLP draws an MLP 784-hidden-hidden-10 from key.
func newMLP(key *array.Array, hidden int) *MLP {
	ks := ops.Unstack(random.Split(key, 3), 0)
	return &MLP{Layers: []*nn.Linear{
		nn.NewLinear(ks[0], pixels, hidden, true),
		nn.NewLinear(ks[1], hidden, hidden, true),
		nn.NewLinear(ks[2], hidden, classes, true),
	}}
}

// Forward maps images [n, 784] to logits [n, 10].
func (m *MLP) Forward(x *array.Array) *array.Array {
	x = ops.Reshape(x, x.Shape()[0], pixels)
	for i, l := range m.Layers {
		x = l.Forward(x)
		if i < len(m.Layers)-1 {
			x = nn.ReLU(x)
		}
	}
	return x
}

// CNN is a small convolutional network, channels-last: conv 3x3 1->32
// (padding 1) + ReLU, max-pool 2x2, conv 3x3 32->64 (padding 1) + ReLU,
// max-pool 2x2, flatten, linear 7*7*64 -> 10.
type CNN struct {
	Conv1, Conv2 *nn.Conv2D
	Out          *nn.Linear
	Pool         nn.MaxPool2D `nn:"-"`
}

// newCNN draws a CNN from key.
func newCNN(key *array.Array) *CNN {
	ks := ops.Unstack(random.Split(key, 3), 0)
	c1 := nn.NewConv2D(ks[0], 1, 32, [2]int{3, 3}, 1, true)
	c2 := nn.NewConv2D(ks[1], 32, 64, [2]int{3, 3}, 1, true)
	c1.Padding, c2.Padding = [2]int{1, 1}, [2]int{1, 1}
	return &CNN{
		Conv1: c1,
		Conv2: c2,
		Out:   nn.NewLinear(ks[2], 7*7*64, classes, true),
		Pool:  nn.MaxPool2D{Kernel: [2]int{2, 2}},
	}
}

// Forward maps images [n, 784] to logits [n, 10].
func (m *CNN) Forward(x *array.Array) *array.Array {
	n := x.Shape()[0]
	x = ops.Reshape(x, n, 28, 28, 1)
	x = m.Pool.Forward(nn.ReLU(m.Conv1.Forward(x)))
	x = m.Pool.Forward(nn.ReLU(m.Conv2.Forward(x)))
	return m.Out.Forward(ops.Reshape(x, n, 7*7*64))
}

// newModel draws the model named by kind ("mlp" or "cnn") from key.
func newModel(kind string, key *array.Array, hidden int) nn.Layer {
	if kind == "cnn" {
		return newCNN(key)
	}
	return newMLP(key, hidden)
}

// The mean and standard deviation of the training images' pixels, scaled
// to [0, 1]: inputs are standardised with them, as PyTorch's MNIST
// example does.
const (
	pixelMean = 0.1307
	pixelStd  = 0.3081
)

// images turns a batch of uint8 pixels into standardised float32 inputs.
// It runs inside the compiled step, fused with what follows.
func images(x *array.Array) *array.Array {
	return ops.AddScalar(ops.MulScalar(ops.AsType(x, array.Float32), 1/(255*pixelStd)), -pixelMean/pixelStd)
}

// loss is the mean cross-entropy of m on a batch: uint8 images [n, 784]
// and int32 labels [n].
func loss(m nn.Layer, batch ...*array.Array) *array.Array {
	return nn.CrossEntropyLoss(m.Forward(images(batch[0])), batch[1], nil, 0, nn.Mean)
}

// correct is the number of images of a batch that m classifies right, an
// int32 scalar.
func correct(m nn.Layer, x, labels *array.Array) *array.Array {
	pred := ops.ArgMax(m.Forward(images(x)), -1)
	return ops.Sum(ops.AsType(ops.Equal(pred, ops.AsType(labels, pred.DType())), array.Int32))
}
