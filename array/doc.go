// Package array holds fathom's Array: an immutable, lazily evaluated
// n-dimensional array, with its dtypes, devices and streams, storage, the
// scheduler that evaluates the graph, printing and errors.
//
// Operations (package ops) do not compute anything when called: each
// records a node, a primitive applied to input arrays. Eval, ToSlice, Item
// and String compute what is needed. The scheduler walks the graph
// without recursion, runs each node once on the device of its stream, and
// then drops the node, so a long computation does not keep its history
// alive.
//
// Bad arguments panic with *Error at the call, naming the operation and
// the shapes or values involved; Try turns such a panic into an error.
// Failures that only show while computing are returned by Eval. A
// failure of asynchronous device work is recorded on the memory it should
// have written (Storage.Fail), so every Eval that reads that memory
// returns it.
//
// FATHOM_DEVICE=cpu|gpu picks the default device. With it unset, the
// default is the GPU where Metal is available and the CPU elsewhere. A
// value that cannot be honoured is an error from every Eval (and from
// DeviceError), never a silent fallback.
package array
