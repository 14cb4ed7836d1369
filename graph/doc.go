// Package graph holds fathom's function transforms: reverse-mode (VJP,
// Grad, ValueAndGrad, and ValueAndGradAux for auxiliary outputs) and
// forward-mode (JVP) differentiation, vectorising maps (Vmap),
// user-defined derivatives and batching rules (CustomVJP, CustomFunction)
// and rematerialisation (Checkpoint), and the tapes they and package
// compile walk.
//
// A transform calls the function on tracers, stand-ins for its inputs that
// keep the graph built from them alive while the transform runs, then
// walks that graph with each primitive's rule (array.VJPRule, JVPRule,
// VmapRule). Transforms return lazy arrays and nest to any depth: the
// gradient of a gradient is the VJP of a graph that is itself made of
// differentiable operations.
//
// A nil function, or a nil array among the arrays a transform is given, is
// an *array.Error naming the transform. A transform that returns a function
// checks its function when it is made, not when what it returns is called:
// there, far from the mistake, the error would be hard to trace back.
package graph
