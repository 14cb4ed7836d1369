// Package optim trains models: optimisers, learning-rate schedules,
// clipping by global norm, compiled training steps and optimiser
// checkpoints, as MLX's mlx.optimizers and PyTorch's torch.optim.
//
// # Optimisers
//
// SGD (momentum, dampening, Nesterov, weight decay), Adam, AdamW, Adamax,
// RMSProp (centered, momentum), Adagrad, AdaDelta and Lion. Each works on
// parameter maps: dotted names to arrays, as nn.Parameters returns them.
//
//	opt := optim.NewAdam(1e-3)
//	params = opt.Update(params, grads) // new parameters; the state is kept
//
// The update rules are PyTorch's (torch.optim, 1.13), checked against its
// values; where MLX's differ, each type's documentation says how (Adam's
// bias correction, Adamax's eps, SGD's first dampened step). Lion, which
// PyTorch lacks, is MLX's. Parameters without a gradient (frozen ones)
// are left alone and get no state.
//
// # State
//
// An optimiser's state is a map of arrays too: "step" (int32, the number
// of updates made), "learning_rate", and one entry per slot and parameter,
// named slot.parameter ("m.layers.0.weight", "v.layers.0.weight" for
// Adam). State and SetState read and replace it; Save and Load write it to
// a safetensors file and read it back. The step count and the learning
// rate are arrays, not Go numbers, so that a compiled step takes them as
// inputs: one trace serves every step, whatever the rate.
//
// Apply is the update as a pure function of parameters, gradients and
// state. It is what a compiled function calls: Update is Apply plus
// keeping the state.
//
// # Schedules
//
// A Schedule gives the learning rate from the step count, as an array
// function: StepDecay, ExponentialDecay, CosineDecay, LinearSchedule and
// JoinSchedules, which are MLX's schedulers. Set one as an optimiser's
// Schedule field.
//
// # Training steps
//
// CompileStep compiles a model's whole training step (forward pass,
// backward pass and the update of every parameter) into one function
// whose trace is replayed on every call; Step is the same step run
// uncompiled, for debugging. Both write the new parameters back to the
// model and the new state to the optimiser, and return the loss.
// CompileUpdate compiles the update alone, for loops that compute their
// gradients themselves.
//
//	step := optim.CompileStep(model, optim.NewAdam(1e-3), loss)
//	defer step.Release()
//	l, err := step.Call(x, y)
//
// Bad arguments (a gradient whose shape differs from its parameter's, a
// gradient of no parameter, a schedule of no steps) panic with
// *array.Error naming the function; failures while evaluating are
// returned as errors. See docs/optim.md.
package optim
