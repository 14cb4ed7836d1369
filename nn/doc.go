// Package nn builds and trains neural networks, as MLX's mlx.nn and
// PyTorch's torch.nn: layers, activations, losses, initialisers, parameter
// trees and checkpoints.
//
// A model is a plain Go struct. Its parameters are the *array.Array values
// in its exported fields, nested structs, pointers, slices and maps (see
// package tree for the rules), named with dots as in PyTorch's and MLX's
// state dicts: the field Weight of element 0 of the field Layers is
// "layers.0.weight". Go names become snake case (RunningMean ->
// "running_mean"); a struct tag `nn:"name"` renames a field and `nn:"-"`
// leaves it out.
//
// Parameters lists every array of a model, Update writes new ones back,
// and ValueAndGrad differentiates a loss with respect to the trainable
// ones (not frozen with Freeze, not state such as BatchNorm's running
// statistics). Train switches layers between training and evaluation.
// Save and Load keep a model in a safetensors file.
//
// Layers take channels-last inputs, as MLX's: [N, L, C] for 1-D,
// [N, H, W, C] for 2-D and [N, D, H, W, C] for 3-D convolutions and
// pools. A bad argument (a shape that does not fit a layer, a nil input)
// panics with *array.Error naming the layer, as package ops does.
package nn
