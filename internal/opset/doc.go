// Package opset is fathom's one vocabulary of operations: the enums of the
// unary, binary, reduce, scan and arg-reduce families, their names, the
// dtype of each operation's result, and which devices and dtypes have a
// kernel for it.
//
// Package ops builds primitives from these enums, and both backends switch
// on them, so a new operation of one of these families is named, typed
// and given its capabilities here once. Names are the ones package ops
// exports ("Exp", "Add", "Sum", "CumSum", "ArgMax"); the Metal backend
// derives its kernel names from them.
//
// The rules here are those of the operations themselves (numpy's and
// MLX's); Supported adds what a device lacks. Shapes are not this
// package's concern: package ops checks them before any kernel runs.
package opset
