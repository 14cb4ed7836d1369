package metal

// transitional: removed when ops switches to opset. Package ops still
// names the operations of Unary, Binary, Reduce, ArgReduce and Scan by
// their opset names ("Exp", "Sum"); until it passes the enums, those
// plans take either, and resolve a name here. Afterwards each takes its
// enum alone (Unary(op opset.UnaryOp, ...)), and this file goes.

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/opset"
)

// transitional: removed when ops switches to opset.
type (
	unaryName  interface{ opset.UnaryOp | string }
	binaryName interface{ opset.BinaryOp | string }
	reduceName interface{ opset.ReduceOp | string }
	scanName   interface{ opset.ScanOp | string }
	argName    interface{ opset.ArgOp | string }
)

// opOf returns o, or the op of family E (its n operations) named o.
// transitional: removed when ops switches to opset.
func opOf[E interface {
	~uint8
	String() string
}](name string, o any, n E) (E, error) {
	if op, ok := o.(E); ok {
		return op, nil
	}
	for op := range n {
		if op.String() == o.(string) {
			return op, nil
		}
	}
	return 0, array.Errorf(name, "unknown operation %q", o)
}

// transitional: removed when ops switches to opset.
func unaryOf[O unaryName](name string, o O) (opset.UnaryOp, error) {
	return opOf(name, any(o), opset.NumUnaryOps)
}

// transitional: removed when ops switches to opset.
func binaryOf[O binaryName](name string, o O) (opset.BinaryOp, error) {
	return opOf(name, any(o), opset.NumBinaryOps)
}

// transitional: removed when ops switches to opset.
func reduceOf[O reduceName](name string, o O) (opset.ReduceOp, error) {
	return opOf(name, any(o), opset.NumReduceOps)
}

// transitional: removed when ops switches to opset.
func scanOf[O scanName](name string, o O) (opset.ScanOp, error) {
	return opOf(name, any(o), opset.NumScanOps)
}

// transitional: removed when ops switches to opset.
func argOf[O argName](name string, o O) (opset.ArgOp, error) {
	return opOf(name, any(o), opset.NumArgOps)
}
