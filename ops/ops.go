package ops

import (
	"math"
	"slices"
	"sync/atomic"

	"github.com/fathom-go/fathom/internal/strided"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/internal/opset"
)

// kernels is what a primitive that runs on a backend has: a CPU kernel
// and a GPU one, so that no operation is left without a Metal path. Its
// Eval hands both to dispatch, and passing itself there is the
// compile-time check that it has them.
type kernels interface {
	array.Primitive
	evalCPU(in, out []*array.Array) error
	evalGPU(s array.Stream, in, out []*array.Array) error
}

// dispatch runs p's kernel for the stream's device. On the GPU, an
// operand of an invalid dtype is an error naming it, before any kernel is
// looked up (float64 keeps Metal's own error, from the plan).
func dispatch(p kernels, s array.Stream, in, out []*array.Array) error {
	if s.Device.Type == array.DeviceCPU {
		return p.evalCPU(in, out)
	}
	if err := gpuDTypes(p.Name(), in, out); err != nil {
		return err
	}
	return p.evalGPU(s, in, out)
}

// gpuDTypes reports the first operand whose dtype is not valid on the GPU
// (float64 keeps Metal's own error).
func gpuDTypes(name string, in, out []*array.Array) error {
	for _, xs := range [2][]*array.Array{in, out} {
		for _, x := range xs {
			if dt := x.DType(); dt != array.Float64 {
				if err := opset.CheckDTypes("ops."+name, array.DeviceGPU, dt); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// sameParams is the Equivalent of a primitive whose parameters compare
// with ==: o has p's type and equal fields.
func sameParams[P comparable, PP interface {
	*P
	array.Primitive
}](p PP, o array.Primitive) bool {
	q, ok := o.(PP)
	return ok && *q == *p
}

// stream is where new nodes are recorded.
func stream() array.Stream { return array.CurrentStream() }

// node builds a pending array of prim over inputs on the current stream.
func node(shape []int, dt array.DType, prim array.Primitive, inputs ...*array.Array) *array.Array {
	return array.New(stream(), shape, dt, prim, inputs...)
}

// bufOf returns an evaluated array's view for the CPU kernels.
func bufOf(a *array.Array) cpu.Buf {
	return cpu.Buf{Data: a.Storage().Bytes(), DType: a.DType(), Shape: a.Shape(), Strides: a.Strides(), Offset: a.Offset()}
}

// bcastBufOf returns a's view broadcast to shape (numpy's rule: align
// trailing axes; size-1 and missing axes repeat with stride 0).
func bcastBufOf(a *array.Array, shape []int) cpu.Buf {
	b := bufOf(a)
	b.Strides, _ = strided.Broadcast(b.Shape, b.Strides, shape)
	b.Shape = slices.Clone(shape)
	return b
}

// alloc gives out fresh row-major CPU memory and returns its view.
func alloc(out *array.Array) cpu.Buf {
	st := array.AllocCPU(out.NBytes())
	strides := strided.RowMajor(out.Shape())
	out.SetData(st, strides, 0)
	return cpu.Buf{Data: st.Bytes(), DType: out.DType(), Shape: out.Shape(), Strides: strides}
}

// normAxis turns a possibly negative axis into one in [0, ndim).
func normAxis(op string, axis, ndim int) int {
	a := axis
	if a < 0 {
		a += ndim
	}
	if a < 0 || a >= ndim {
		array.Panicf(op, "axis %d out of range for %d dimensions", axis, ndim)
	}
	return a
}

// normAxes normalises axes (none means all), rejecting repeats.
func normAxes(op string, axes []int, ndim int) []int {
	if len(axes) == 0 {
		out := make([]int, ndim)
		for i := range out {
			out[i] = i
		}
		return out
	}
	out := make([]int, len(axes))
	seen := make([]bool, ndim)
	for i, ax := range axes {
		a := normAxis(op, ax, ndim)
		if seen[a] {
			array.Panicf(op, "axis %d repeated in %v", ax, axes)
		}
		seen[a] = true
		out[i] = a
	}
	slices.Sort(out)
	return out
}

// BroadcastShapes returns the shape that arrays of the given shapes
// broadcast to (numpy's rule), or panics with *array.Error naming op.
func BroadcastShapes(op string, shapes ...[]int) []int {
	nd := 0
	for _, s := range shapes {
		nd = max(nd, len(s))
	}
	out := make([]int, nd)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		off := nd - len(s)
		for i, d := range s {
			switch {
			case out[off+i] == d || d == 1:
			case out[off+i] == 1:
				out[off+i] = d
			default:
				array.Panicf(op, "shapes %v do not broadcast", shapesText(shapes))
			}
		}
	}
	return out
}

type shapesText [][]int

func (s shapesText) String() string {
	t := ""
	for i, sh := range s {
		switch {
		case i == 0:
		case i == len(s)-1:
			t += " and "
		default:
			t += ", "
		}
		t += fmtShape(sh)
	}
	return t
}

func fmtShape(s []int) string {
	t := "["
	for i, d := range s {
		if i > 0 {
			t += " "
		}
		t += itoa(d)
	}
	return t + "]"
}

func itoa(d int) string {
	if d < 0 {
		return "-" + itoa(-d)
	}
	if d < 10 {
		return string(rune('0' + d))
	}
	return itoa(d/10) + string(rune('0'+d%10))
}

// floatDType is the dtype a float-valued function of an array of dtype dt
// computes in: integers and bools become float32 (as in MLX).
func floatDType(dt array.DType) array.DType {
	if dt.IsInexact() {
		return dt
	}
	return array.Float32
}

// scalarDType is the dtype of a weakly typed Go scalar v combined with an
// array of dtype dt: the array's, unless v has a fraction and dt is an
// integer or bool type, which gives float32 (as MLX does).
func scalarDType(dt array.DType, v float64) array.DType {
	if dt.IsInexact() {
		return dt
	}
	if v != math.Trunc(v) || math.IsInf(v, 0) || math.IsNaN(v) {
		return array.Float32
	}
	if dt == array.Bool {
		return array.Int32
	}
	return dt
}

// scalarOf returns a 0-d array of dtype dt holding v, on the current
// stream. Scalar operands are most of what a chain of small ops builds (an
// evaluated array, its storage and buffer: half the memory of an
// AddScalar node), and few distinct values recur, so recent ones are
// shared from a small table. Sharing is safe: an evaluated array never
// changes.
func scalarOf(v float64, dt array.DType) *array.Array {
	k := scalarKey{s: stream(), dt: dt, bits: math.Float64bits(v)}
	slot := &scalarCache[k.hash()%uint64(len(scalarCache))]
	if e := slot.Load(); e != nil && e.key == k {
		return e.a
	}
	a := newScalar(v, dt)
	slot.Store(&scalarEntry{key: k, a: a})
	return a
}

type scalarKey struct {
	s    array.Stream
	dt   array.DType
	bits uint64
}

func (k scalarKey) hash() uint64 {
	h := k.bits ^ uint64(k.dt)<<56 ^ uint64(k.s.Index)<<48 ^ uint64(k.s.Device.Type)<<40
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	return h ^ h>>32
}

type scalarEntry struct {
	key scalarKey
	a   *array.Array
}

// scalarCache is direct-mapped: a new value evicts whatever shared its
// slot, so the table stays at its size whatever values a program uses.
var scalarCache [256]atomic.Pointer[scalarEntry]

func newScalar(v float64, dt array.DType) *array.Array {
	switch dt {
	case array.Bool:
		return array.Scalar(v != 0)
	case array.Uint8:
		return array.Scalar(uint8(v))
	case array.Int32:
		return array.Scalar(int32(v))
	case array.Int64:
		return array.Scalar(int64(v))
	case array.Float16:
		return array.Scalar(array.NewF16(float32(v)))
	case array.BFloat16:
		return array.Scalar(array.NewBF16(float32(v)))
	case array.Float32:
		return array.Scalar(float32(v))
	case array.Float64:
		return array.Scalar(v)
	case array.Int8:
		return array.Scalar(int8(v))
	case array.Int16:
		return array.Scalar(int16(v))
	case array.Uint16:
		return array.Scalar(uint16(v))
	case array.Uint32:
		return array.Scalar(uint32(v))
	case array.Uint64:
		if v >= 1<<63 {
			return array.Scalar(uint64(v-(1<<63)) + 1<<63)
		}
		return array.Scalar(uint64(int64(v)))
	default:
		return array.Scalar(complex(float32(v), 0))
	}
}

func equalInts(a, b []int) bool { return slices.Equal(a, b) }
