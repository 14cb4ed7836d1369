package ops

import (
	"math"
	"slices"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
)

func checkCreateDType(op string, dt array.DType) {
	if !dt.Valid() {
		array.Panicf(op, "invalid dtype %v", dt)
	}
}

// sameFloat compares parameters bit for bit, so NaN matches NaN and 0
// does not match -0.
func sameFloat(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

// fullPrim fills an array with one value.
type fullPrim struct {
	Shape []int
	Value float64
	DType array.DType
}

// Name returns "Full".
func (p *fullPrim) Name() string { return "Full" }

// Eval fills the output on the stream's device.
func (p *fullPrim) Eval(s array.Stream, in, out []*array.Array) error { return dispatch(p, s, in, out) }

// evalCPU copies a broadcast float64 scalar, so the value is converted as
// AsType converts (fractions truncate toward zero for integer dtypes).
func (p *fullPrim) evalCPU(in, out []*array.Array) error {
	return cpu.Copy(alloc(out[0]), bcastBufOf(array.Scalar(p.Value), out[0].Shape()))
}

func (p *fullPrim) evalGPU(s array.Stream, _, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) { return metal.Fill(o, p.Value) })
}

// Equivalent reports whether o fills the same shape with the same value
// and dtype.
func (p *fullPrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*fullPrim)
	return ok && slices.Equal(q.Shape, p.Shape) && sameFloat(q.Value, p.Value) && q.DType == p.DType
}

func full(op string, shape []int, v float64, dt array.DType) *array.Array {
	checkCreateDType(op, dt)
	checkedBytes(op, shape, dt)
	return node(shape, dt, &fullPrim{Shape: slices.Clone(shape), Value: v, DType: dt})
}

// Full returns an array of the given shape and dtype with every element
// v, converted as AsType converts (a fraction truncates toward zero for an
// integer dtype; any non-zero value is true for Bool).
func Full(shape []int, v float64, dt array.DType) *array.Array { return full("ops.Full", shape, v, dt) }

// Zeros returns an array of the given shape and dtype filled with 0.
func Zeros(shape []int, dt array.DType) *array.Array { return full("ops.Zeros", shape, 0, dt) }

// Ones returns an array of the given shape and dtype filled with 1.
func Ones(shape []int, dt array.DType) *array.Array { return full("ops.Ones", shape, 1, dt) }

// arangePrim fills a 1-D array of N elements with Start + i*Step.
type arangePrim struct {
	Start, Step float64
	N           int
	DType       array.DType
}

// Name returns "Arange".
func (p *arangePrim) Name() string { return "Arange" }

// Eval fills the output on the stream's device.
func (p *arangePrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}

func (p *arangePrim) evalCPU(in, out []*array.Array) error {
	return cpu.Arange(alloc(out[0]), p.Start, p.Step)
}

func (p *arangePrim) evalGPU(s array.Stream, _, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) { return metal.Arange(o, p.Start, p.Step) })
}

// Equivalent reports whether o makes the same sequence.
func (p *arangePrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*arangePrim)
	return ok && sameFloat(q.Start, p.Start) && sameFloat(q.Step, p.Step) && q.N == p.N && q.DType == p.DType
}

// maxCreated bounds the length of Arange and Linspace results: beyond
// 2^53 the float64 index arithmetic is no longer exact.
const maxCreated = 1 << 53

// Arange returns the 1-D array start, start+step, ... up to but excluding
// stop, with numpy's length ceil((stop-start)/step) (empty when that is
// not positive). Element i is start + i*step computed in float64 and then
// converted to dt (as AsType converts). For an integer dt numpy's rule
// holds instead: the first two elements are converted and their
// difference repeats, so Arange(0, 3, 0.2, Int32) is fifteen zeros and
// Arange(0.5, 3, 0.7, Int32) is 0, 1, 2, 3. step must not be 0, and all
// three must be finite.
func Arange(start, stop, step float64, dt array.DType) *array.Array {
	const op = "ops.Arange"
	checkCreateDType(op, dt)
	for _, v := range []float64{start, stop, step} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			array.Panicf(op, "start %v, stop %v and step %v must be finite", start, stop, step)
		}
	}
	if step == 0 {
		array.Panicf(op, "step is 0")
	}
	n := math.Ceil((stop - start) / step)
	if n > maxCreated {
		array.Panicf(op, "start %v, stop %v and step %v give too many elements", start, stop, step)
	}
	length := 0
	if n > 0 {
		length = int(n)
	}
	if dt.IsInteger() {
		start, step = math.Trunc(start), math.Trunc(start+step)-math.Trunc(start)
	}
	// length <= maxCreated, so its size in bytes fits in an int.
	return node([]int{length}, dt, &arangePrim{Start: start, Step: step, N: length, DType: dt})
}

// linspacePrim fills a 1-D array with N evenly spaced values from Start to
// Stop, inclusive unless Open.
type linspacePrim struct {
	Start, Stop float64
	N           int
	DType       array.DType
	Open        bool
}

// step is the spacing: numpy's delta/div, with div one less for a closed
// interval.
func (p *linspacePrim) step() float64 {
	if p.Open {
		return (p.Stop - p.Start) / float64(p.N)
	}
	return (p.Stop - p.Start) / float64(p.N-1)
}

// Name returns "Linspace".
func (p *linspacePrim) Name() string { return "Linspace" }

// Eval fills the output on the stream's device.
func (p *linspacePrim) Eval(s array.Stream, in, out []*array.Array) error {
	return dispatch(p, s, in, out)
}

// evalCPU computes start + i*step like numpy, then stores stop itself in
// the last element, which the product may miss by rounding.
func (p *linspacePrim) evalCPU(in, out []*array.Array) error {
	buf := alloc(out[0])
	if p.N <= 1 {
		return cpu.Arange(buf, p.Start, 0)
	}
	if err := cpu.Arange(buf, p.Start, p.step()); err != nil || p.Open {
		return err
	}
	last := buf
	last.Shape, last.Strides, last.Offset = nil, nil, p.N-1
	return cpu.Copy(last, bufOf(array.Scalar(p.Stop)))
}

func (p *linspacePrim) evalGPU(s array.Stream, _, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) {
		if p.N <= 1 {
			return metal.Arange(o, p.Start, 0)
		}
		ls, err := metal.Arange(o, p.Start, p.step())
		if err != nil || p.Open {
			return ls, err
		}
		last := o
		last.Shape, last.Strides, last.Offset = []int{}, []int{}, p.N-1
		end, err := metal.Fill(last, p.Stop)
		return append(ls, end...), err
	})
}

// Equivalent reports whether o makes the same sequence.
func (p *linspacePrim) Equivalent(o array.Primitive) bool {
	q, ok := o.(*linspacePrim)
	return ok && sameFloat(q.Start, p.Start) && sameFloat(q.Stop, p.Stop) && q.N == p.N && q.DType == p.DType &&
		q.Open == p.Open
}

// Linspace returns n evenly spaced values from start to stop inclusive
// (numpy's linspace): element i is start + i*(stop-start)/(n-1) in
// float64, the last is exactly stop, and all are converted to dt as
// AsType converts. n = 1 gives [start]; n = 0 an empty array.
func Linspace(start, stop float64, n int, dt array.DType) *array.Array {
	return linspace("ops.Linspace", start, stop, n, dt, false)
}

// LinspaceNoEndpoint returns n evenly spaced values from start towards
// stop, leaving stop out (numpy's linspace with endpoint=False): element i
// is start + i*(stop-start)/n in float64, converted to dt as AsType
// converts. n = 0 gives an empty array.
func LinspaceNoEndpoint(start, stop float64, n int, dt array.DType) *array.Array {
	return linspace("ops.LinspaceNoEndpoint", start, stop, n, dt, true)
}

func linspace(op string, start, stop float64, n int, dt array.DType, open bool) *array.Array {
	checkCreateDType(op, dt)
	if n < 0 {
		array.Panicf(op, "negative number of values %d", n)
	}
	checkedBytes(op, []int{n}, dt)
	return node([]int{n}, dt, &linspacePrim{Start: start, Stop: stop, N: n, DType: dt, Open: open})
}

// eyePrim fills an N×M array with ones on diagonal K.
type eyePrim struct {
	N, M, K int
	DType   array.DType
}

// Name returns "Eye".
func (p *eyePrim) Name() string { return "Eye" }

// Eval fills the output on the stream's device.
func (p *eyePrim) Eval(s array.Stream, in, out []*array.Array) error { return dispatch(p, s, in, out) }

func (p *eyePrim) evalCPU(in, out []*array.Array) error {
	return cpu.Eye(alloc(out[0]), p.K)
}

func (p *eyePrim) evalGPU(s array.Stream, _, out []*array.Array) error {
	return gpuOut(s, out[0], func(o metal.View) ([]metal.Launch, error) { return metal.Eye(o, p.K) })
}

// Equivalent reports whether o makes the same matrix.
func (p *eyePrim) Equivalent(o array.Primitive) bool { return sameParams(p, o) }

// Identity returns the n×n identity matrix of dtype dt (MLX's and
// numpy's identity): Eye(n, n, 0, dt).
func Identity(n int, dt array.DType) *array.Array {
	const op = "ops.Identity"
	checkCreateDType(op, dt)
	if n < 0 {
		array.Panicf(op, "negative size %d", n)
	}
	checkedBytes(op, []int{n, n}, dt)
	return Eye(n, n, 0, dt)
}

// Eye returns the n×m matrix of dtype dt with ones on diagonal k (0 the
// main diagonal, k > 0 above it, k < 0 below) and zeros elsewhere, like
// numpy's eye(n, m, k).
func Eye(n, m, k int, dt array.DType) *array.Array {
	const op = "ops.Eye"
	checkCreateDType(op, dt)
	checkedBytes(op, []int{n, m}, dt)
	return node([]int{n, m}, dt, &eyePrim{N: n, M: m, K: k, DType: dt})
}
