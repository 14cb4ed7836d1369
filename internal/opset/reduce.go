package opset

import (
	"strconv"

	"github.com/fathom-go/fathom/array"
)

// ReduceOp is the operation a reduction folds elements with.
type ReduceOp uint8

// The reductions, then their count. Max and Min propagate NaN (numpy's
// max, not nanmax). All and Any test elements against zero: NaN counts as
// true and -0 as false, as in numpy.
const (
	Sum ReduceOp = iota
	Prod
	Max
	Min
	All
	Any

	NumReduceOps // not an operation: the number of them
)

var reduceNames = [NumReduceOps]string{"Sum", "Prod", "Max", "Min", "All", "Any"}

// String returns the reduction's name ("Sum").
func (op ReduceOp) String() string {
	if op < NumReduceOps {
		return reduceNames[op]
	}
	return "ReduceOp(" + strconv.Itoa(int(op)) + ")"
}

// Result returns the dtype of op's result on elements of dtype dt, and
// whether op is defined for dt. Sum and Prod accumulate as MLX's do: bool,
// int8 and int16 give int32, uint8 and uint16 give uint32, the wider types
// keep theirs. All and Any give bool; Max and Min of complex64 have no
// meaning.
func (op ReduceOp) Result(dt array.DType) (array.DType, bool) {
	switch {
	case !dt.Valid() || op >= NumReduceOps:
		return 0, false
	case op == All || op == Any:
		return array.Bool, true
	case dt == array.Complex64 && (op == Max || op == Min):
		return 0, false
	case op == Sum || op == Prod:
		return SumDType(dt), true
	}
	return dt, true
}

// SumDType is the dtype Sum and Prod of elements of dtype dt give (MLX's
// rule): integers narrower than 32 bits and bool widen to 32 bits,
// keeping their signedness (bool: int32).
func SumDType(dt array.DType) array.DType {
	switch dt {
	case array.Bool, array.Int8, array.Int16:
		return array.Int32
	case array.Uint8, array.Uint16:
		return array.Uint32
	}
	return dt
}

// Supported reports whether device d has op's kernel for dt: Result
// accepts dt, d has dt and the result's dtype (HasDType), and, on the
// GPU, dt is not complex64, which Metal's line-wise kernels lack.
func (op ReduceOp) Supported(d array.DeviceType, dt array.DType) bool {
	r, ok := op.Result(dt)
	return ok && lineWise(d, dt) && HasDType(d, r)
}

// lineWise reports whether device d's kernels along lines (reductions,
// scans, arg reductions) take dt.
func lineWise(d array.DeviceType, dt array.DType) bool {
	return HasDType(d, dt) && !(d == array.DeviceGPU && dt == array.Complex64)
}

// ScanOp is the operation a scan accumulates with.
type ScanOp uint8

// The scans (running sum, product, maximum, minimum and log of the sum
// of exponentials), then their count. CumMax and CumMin propagate NaN
// from where it first appears (numpy's maximum.accumulate).
const (
	CumSum ScanOp = iota
	CumProd
	CumMax
	CumMin
	LogCumSumExp

	NumScanOps // not an operation: the number of them
)

var scanNames = [NumScanOps]string{"CumSum", "CumProd", "CumMax", "CumMin", "LogCumSumExp"}

// String returns the scan's name ("CumSum").
func (op ScanOp) String() string {
	if op < NumScanOps {
		return scanNames[op]
	}
	return "ScanOp(" + strconv.Itoa(int(op)) + ")"
}

// Result returns the dtype of op's result on elements of dtype dt, and
// whether op is defined for dt: CumSum and CumProd of bool give int32;
// CumMax and CumMin of complex64 are not defined; LogCumSumExp is defined
// for the real floats only (ops converts the others to float32 first).
func (op ScanOp) Result(dt array.DType) (array.DType, bool) {
	switch {
	case !dt.Valid() || op >= NumScanOps:
		return 0, false
	case op == LogCumSumExp:
		return dt, dt.IsFloat()
	case dt == array.Complex64 && (op == CumMax || op == CumMin):
		return 0, false
	case dt == array.Bool && (op == CumSum || op == CumProd):
		return array.Int32, true
	}
	return dt, true
}

// Supported reports whether device d has op's kernel for dt (see
// ReduceOp.Supported).
func (op ScanOp) Supported(d array.DeviceType, dt array.DType) bool {
	_, ok := op.Result(dt)
	return ok && lineWise(d, dt)
}

// ArgOp is what an arg reduction looks for.
type ArgOp uint8

// ArgMax finds the largest element, ArgMin the smallest; NumArgOps is
// their count.
const (
	ArgMax ArgOp = iota
	ArgMin

	NumArgOps // not an operation: the number of them
)

var argNames = [NumArgOps]string{"ArgMax", "ArgMin"}

// String returns the arg reduction's name ("ArgMax").
func (op ArgOp) String() string {
	if op < NumArgOps {
		return argNames[op]
	}
	return "ArgOp(" + strconv.Itoa(int(op)) + ")"
}

// Result returns the dtype of op's result (int32 positions) on elements
// of dtype dt, and whether op is defined for dt: complex64 has no order.
func (op ArgOp) Result(dt array.DType) (array.DType, bool) {
	if !dt.Valid() || op >= NumArgOps || dt == array.Complex64 {
		return 0, false
	}
	return array.Int32, true
}

// Supported reports whether device d has op's kernel for dt (see
// ReduceOp.Supported).
func (op ArgOp) Supported(d array.DeviceType, dt array.DType) bool {
	_, ok := op.Result(dt)
	return ok && lineWise(d, dt)
}
