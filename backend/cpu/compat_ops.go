package cpu

// transitional: removed when ops switches to opset. Package ops still
// names the operation enums and their dtype rules through backend/cpu;
// they now live in internal/opset, and everything here forwards to it.

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/opset"
)

// transitional: removed when ops switches to opset.
type (
	UnaryOp  = opset.UnaryOp
	BinaryOp = opset.BinaryOp
	ReduceOp = opset.ReduceOp
	ScanOp   = opset.ScanOp
	ArgOp    = opset.ArgOp
)

// transitional: removed when ops switches to opset.
const (
	Neg        = opset.Neg
	Abs        = opset.Abs
	Sign       = opset.Sign
	Exp        = opset.Exp
	Expm1      = opset.Expm1
	Log        = opset.Log
	Log1p      = opset.Log1p
	Log2       = opset.Log2
	Sqrt       = opset.Sqrt
	Rsqrt      = opset.Rsqrt
	Square     = opset.Square
	Reciprocal = opset.Reciprocal
	Sin        = opset.Sin
	Cos        = opset.Cos
	Tan        = opset.Tan
	ArcSin     = opset.ArcSin
	ArcCos     = opset.ArcCos
	ArcTan     = opset.ArcTan
	Sinh       = opset.Sinh
	Cosh       = opset.Cosh
	Tanh       = opset.Tanh
	Sigmoid    = opset.Sigmoid
	Erf        = opset.Erf
	ErfInv     = opset.ErfInv
	Floor      = opset.Floor
	Ceil       = opset.Ceil
	Round      = opset.Round
	LogicalNot = opset.LogicalNot
	IsNaN      = opset.IsNaN
	IsInf      = opset.IsInf

	Add          = opset.Add
	Sub          = opset.Sub
	Mul          = opset.Mul
	Div          = opset.Div
	FloorDivide  = opset.FloorDivide
	Remainder    = opset.Remainder
	Pow          = opset.Pow
	Maximum      = opset.Maximum
	Minimum      = opset.Minimum
	Equal        = opset.Equal
	NotEqual     = opset.NotEqual
	Less         = opset.Less
	LessEqual    = opset.LessEqual
	Greater      = opset.Greater
	GreaterEqual = opset.GreaterEqual
	LogicalAnd   = opset.LogicalAnd
	LogicalOr    = opset.LogicalOr
	LogAddExp    = opset.LogAddExp
	ArcTan2      = opset.ArcTan2

	ReduceSum  = opset.Sum
	ReduceProd = opset.Prod
	ReduceMax  = opset.Max
	ReduceMin  = opset.Min
	ReduceAll  = opset.All
	ReduceAny  = opset.Any

	CumSum  = opset.CumSum
	CumProd = opset.CumProd
	CumMax  = opset.CumMax
	CumMin  = opset.CumMin
	ArgMax  = opset.ArgMax
	ArgMin  = opset.ArgMin
)

// UnaryResult is op.Result. transitional: removed when ops switches to opset.
func UnaryResult(op UnaryOp, dt array.DType) (array.DType, bool) { return op.Result(dt) }

// BinaryResult is op.Result. transitional: removed when ops switches to opset.
func BinaryResult(op BinaryOp, dt array.DType) (array.DType, bool) { return op.Result(dt) }

// ReduceDType is op.Result. transitional: removed when ops switches to opset.
func ReduceDType(op ReduceOp, dt array.DType) (array.DType, bool) { return op.Result(dt) }

// ScanDType is op.Result. transitional: removed when ops switches to opset.
func ScanDType(op ScanOp, dt array.DType) (array.DType, bool) { return op.Result(dt) }
