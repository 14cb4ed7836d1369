package array

// Primitive is one operation of the graph: what a node runs. Package ops
// defines the primitives; the interfaces below it in this file are the
// optional rules the transforms (package graph) and compile look for.
type Primitive interface {
	// Name is the operation's name, as in error messages ("Add").
	Name() string
	// Eval computes outputs from inputs on stream s. Inputs are evaluated;
	// outputs have their shape and dtype and no data: Eval gives each one
	// storage with SetData (or shares an input's, for views).
	Eval(s Stream, inputs, outputs []*Array) error
}

// VJPRule is a primitive's reverse-mode derivative: given the cotangents
// of its outputs, the cotangents of the inputs listed in argnums, in that
// order. outputs are the node's outputs (forward values).
type VJPRule interface {
	VJP(inputs, outputs, cotangents []*Array, argnums []int) []*Array
}

// JVPRule is a primitive's forward-mode derivative: given the tangents of
// the inputs listed in argnums (in that order), the tangents of its
// outputs.
type JVPRule interface {
	JVP(inputs, outputs, tangents []*Array, argnums []int) []*Array
}

// VmapRule is a primitive's batching rule. axes[i] is the batch axis of
// inputs[i], or -1 if that input is not batched. It returns the outputs and
// the batch axis of each.
type VmapRule interface {
	Vmap(inputs []*Array, axes []int) ([]*Array, []int)
}

// Equivalence lets common-subexpression elimination merge two nodes whose
// primitives are the same operation with the same parameters.
type Equivalence interface {
	Equivalent(other Primitive) bool
}

// ShapeRule recomputes output shapes from input shapes, which shapeless
// compilation needs when it replays a trace on inputs of new shapes.
type ShapeRule interface {
	OutputShapes(inputs []*Array) ([][]int, error)
}
