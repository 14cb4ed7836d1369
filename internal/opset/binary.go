package opset

import (
	"strconv"

	"github.com/fathom-go/fathom/array"
)

// BinaryOp names an elementwise function of two operands of one dtype.
type BinaryOp uint8

// The binary operations, then their count.
const (
	Add          BinaryOp = iota // a + b (integers wrap; bools: or)
	Sub                          // a - b
	Mul                          // a * b (bools: and)
	Div                          // a / b (inexact dtypes only)
	FloorDivide                  // floor(a / b); integer division by zero gives 0
	Remainder                    // a - b*floor(a/b): the sign of b; integer remainder by zero gives 0
	Pow                          // a^b; integers by repeated squaring
	Maximum                      // the larger; NaN if either is NaN
	Minimum                      // the smaller; NaN if either is NaN
	Equal                        // a == b, as Bool
	NotEqual                     // a != b, as Bool
	Less                         // a < b, as Bool
	LessEqual                    // a <= b, as Bool
	Greater                      // a > b, as Bool
	GreaterEqual                 // a >= b, as Bool
	LogicalAnd                   // a && b (Bool operands)
	LogicalOr                    // a || b (Bool operands)
	LogAddExp                    // log(e^a + e^b), without overflow
	ArcTan2                      // the angle of the point (b, a)
	Hypot                        // sqrt(a² + b²), without overflow
	BitwiseAnd                   // a & b (integers and bools)
	BitwiseOr                    // a | b (integers and bools)
	BitwiseXor                   // a ^ b (integers and bools)
	LeftShift                    // a << b; 0 when b < 0 or b >= the width (numpy)
	RightShift                   // a >> b, arithmetic for signed; 0 or -1 when b < 0 or b >= the width (numpy)

	NumBinaryOps // not an operation: the number of them
)

var binaryNames = [NumBinaryOps]string{
	"Add", "Sub", "Mul", "Div", "FloorDivide", "Remainder", "Pow", "Maximum", "Minimum",
	"Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual",
	"LogicalAnd", "LogicalOr", "LogAddExp", "ArcTan2", "Hypot",
	"BitwiseAnd", "BitwiseOr", "BitwiseXor", "LeftShift", "RightShift",
}

// String returns the operation's name ("Add").
func (op BinaryOp) String() string {
	if op < NumBinaryOps {
		return binaryNames[op]
	}
	return "BinaryOp(" + strconv.Itoa(int(op)) + ")"
}

// IsComparison reports whether op is one of Equal ... GreaterEqual, which
// give Bool.
func (op BinaryOp) IsComparison() bool { return op >= Equal && op <= GreaterEqual }

// IsBitwise reports whether op is BitwiseAnd, BitwiseOr or BitwiseXor.
func (op BinaryOp) IsBitwise() bool { return op >= BitwiseAnd && op <= BitwiseXor }

// IsShift reports whether op is LeftShift or RightShift.
func (op BinaryOp) IsShift() bool { return op == LeftShift || op == RightShift }

// Result returns the dtype of op applied to two operands of dtype dt, and
// whether op is defined for dt. Comparisons take every dtype (complex64:
// Equal and NotEqual only) and give Bool; LogicalAnd and LogicalOr take
// Bool. Bool also takes Add, Mul, Maximum and Minimum (or, and, or, and)
// and the three bitwise operations. Integers take the arithmetic
// operations except Div, LogAddExp, ArcTan2 and Hypot, and the bitwise
// operations and shifts; floats take all but the bitwise operations and
// shifts; complex64 takes Add, Sub, Mul, Div and Pow.
func (op BinaryOp) Result(dt array.DType) (array.DType, bool) {
	if op >= NumBinaryOps || !dt.Valid() {
		return 0, false
	}
	if op.IsComparison() {
		if dt == array.Complex64 && op != Equal && op != NotEqual {
			return 0, false
		}
		return array.Bool, true
	}
	ok := false
	switch {
	case op == LogicalAnd || op == LogicalOr:
		ok = dt == array.Bool
	case dt == array.Bool:
		ok = op == Add || op == Mul || op == Maximum || op == Minimum || op.IsBitwise()
	case dt.IsInteger():
		ok = op != Div && op != LogAddExp && op != ArcTan2 && op != Hypot
	case dt.IsFloat():
		ok = !op.IsBitwise() && !op.IsShift()
	case dt == array.Complex64:
		ok = op == Add || op == Sub || op == Mul || op == Div || op == Pow
	}
	if !ok {
		return 0, false
	}
	return dt, true
}

// Supported reports whether device d has op's kernel for dt: Result
// accepts dt, d has dt (HasDType), and, on the GPU, op is not Pow of
// complex64, which Metal's kernels lack.
func (op BinaryOp) Supported(d array.DeviceType, dt array.DType) bool {
	if _, ok := op.Result(dt); !ok || !HasDType(d, dt) {
		return false
	}
	return !(d == array.DeviceGPU && dt == array.Complex64 && op == Pow)
}
