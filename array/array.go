package array

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/fathom-go/fathom/internal/strided"
)

// Array is an n-dimensional array, always used as *Array. It is immutable
// once built: operations return new arrays. An array is either pending (a
// node of the lazy graph: a primitive and its inputs) or evaluated (memory,
// strides and an offset); Eval turns the first into the second and then
// drops the node, so the inputs can be collected.
type Array struct {
	shape  []int
	size   int
	stream Stream
	dtype  DType
	tracer bool

	node atomic.Pointer[node]
	data atomic.Pointer[arrayData]
}

// arrayData is an evaluated array's memory. Views share storage.
type arrayData struct {
	storage  *Storage
	strides  []int // in elements
	offset   int   // in elements
	rowMajor bool  // strides are row-major contiguous over shape
	// inline holds the strides of arrays of up to four dimensions, so
	// that giving an array its memory is one allocation, not two: on a
	// small array that allocation costs more than the arithmetic.
	inline [4]int
}

// node is one application of a primitive. Its fields never change after
// construction, so graph walks read them without locks; mu only orders
// evaluation.
//
// An output's data is set while its kernel runs (a primitive allocates its
// output before writing it, and a GPU kernel is only queued), so "has data"
// does not mean "evaluated". ready does: it is set once the outputs' values
// are complete and visible, after the kernel returns on the CPU and after
// the stream is synchronized on the GPU. Only then is the node detached.
type node struct {
	prim    Primitive
	inputs  []*Array
	outputs []*Array

	ready atomic.Bool
	ran   bool // under mu: eval has run the primitive (or failed)
	mu    sync.Mutex
	err   error

	// mark is the number of the last Eval whose schedule reached the node
	// (see schedule).
	mark atomic.Uint64

	// Most nodes have one output and at most two inputs: New keeps them
	// here rather than in slices of their own, two allocations fewer a
	// node.
	outbuf [1]*Array
	inbuf  [2]*Array
}

func checkShape(op string, shape []int) int {
	empty := false
	for _, d := range shape {
		if d < 0 {
			Panicf(op, "negative dimension in shape %v", shape)
		}
		empty = empty || d == 0
	}
	// An empty array has no elements whatever its other dimensions, as in
	// numpy: the answer must not depend on where the zero stands.
	if empty {
		return 0
	}
	n := 1
	for _, d := range shape {
		if n > math.MaxInt/d {
			Panicf(op, "shape %v has too many elements", shape)
		}
		n *= d
	}
	return n
}

func newArray(op string, shape []int, dt DType, s Stream) *Array {
	return newArrayOf(op, shape, dt, s, nil)
}

// newArrayOf is newArray for an array computed from inputs: where one of
// them has the same shape, the new array shares its (immutable) shape
// slice instead of copying it. Elementwise ops, most of a graph, all do.
func newArrayOf(op string, shape []int, dt DType, s Stream, inputs []*Array) *Array {
	if !dt.Valid() {
		Panicf(op, "invalid dtype %v", dt)
	}
	n := checkShape(op, shape)
	// Kernels and the allocator count in bytes: an array whose byte size
	// does not fit in an int cannot be addressed, view or not.
	if es := dt.Size(); es > 1 && n > math.MaxInt/es {
		Panicf(op, "shape %v of %v is %d elements of %d bytes, its size in bytes overflows int", shape, dt, n, es)
	}
	a := &Array{dtype: dt, size: n, stream: s}
	for _, in := range inputs {
		if in != nil && slices.Equal(in.shape, shape) {
			a.shape = in.shape
			return a
		}
	}
	a.shape = append([]int(nil), shape...)
	return a
}

// primOp names an operation for errors found while building its node.
func primOp(prim Primitive) string {
	if prim == nil {
		return "array.New"
	}
	return prim.Name()
}

// New returns a pending array: output 0 of prim applied to inputs, to run
// on stream s. Operations build the graph with it.
//
// New keeps its own copy of inputs and of shape: the caller may reuse
// both.
func New(s Stream, shape []int, dt DType, prim Primitive, inputs ...*Array) *Array {
	a := newArrayOf(primOp(prim), shape, dt, s, inputs)
	n := &node{prim: prim}
	n.outbuf[0] = a
	n.outputs = n.outbuf[:]
	switch {
	case len(inputs) == 0:
	case len(inputs) <= len(n.inbuf):
		n.inputs = n.inbuf[:len(inputs):len(inputs)]
		copy(n.inputs, inputs)
	default:
		n.inputs = append([]*Array(nil), inputs...)
	}
	for _, in := range inputs {
		if in.tracer {
			a.tracer = true
		}
	}
	a.node.Store(n)
	return a
}

// NewMulti returns the outputs of a primitive with several outputs
// (siblings), to run on stream s. They are evaluated together.
func NewMulti(s Stream, shapes [][]int, dts []DType, prim Primitive, inputs ...*Array) []*Array {
	if len(shapes) != len(dts) || len(shapes) == 0 {
		Panicf("array.NewMulti", "%d shapes and %d dtypes", len(shapes), len(dts))
	}
	tracer := false
	for _, in := range inputs {
		tracer = tracer || in.tracer
	}
	n := &node{prim: prim, inputs: inputs, outputs: make([]*Array, len(shapes))}
	for i := range shapes {
		a := newArray(primOp(prim), shapes[i], dts[i], s)
		a.tracer = tracer
		a.node.Store(n)
		n.outputs[i] = a
	}
	return n.outputs
}

// NewPlaceholder returns an array with a shape and dtype but neither value
// nor node. Transforms and compile trace functions on placeholders; they
// are tracers, and evaluating one is an error.
func NewPlaceholder(s Stream, shape []int, dt DType) *Array {
	a := newArray("array.NewPlaceholder", shape, dt, s)
	a.tracer = true
	return a
}

// NewTracer returns a pending array that is marked as a tracer: arrays
// computed from it keep their graph when evaluated, so a transform can
// still walk it. prim is usually an identity.
func NewTracer(s Stream, shape []int, dt DType, prim Primitive, inputs ...*Array) *Array {
	a := New(s, shape, dt, prim, inputs...)
	a.tracer = true
	return a
}

// FromStorage returns an evaluated array over existing storage.
func FromStorage(s Stream, shape []int, dt DType, st *Storage, strides []int, offset int) *Array {
	a := newArray("array.FromStorage", shape, dt, s)
	a.setData(st, strides, offset)
	return a
}

// FromSlice returns an array holding a copy of data, with the given shape
// (no shape: 1-D). The product of the shape must be len(data).
func FromSlice[T Elem](data []T, shape ...int) *Array {
	if shape == nil {
		shape = []int{len(data)}
	}
	dt := DTypeOf[T]()
	n := checkShape("array.FromSlice", shape)
	if n != len(data) {
		Panicf("array.FromSlice", "%d elements do not fill shape %v (%d elements)", len(data), shape, n)
	}
	st := AllocCPU(n * dt.Size())
	if n > 0 {
		copy(st.bytes, unsafe.Slice((*byte)(unsafe.Pointer(&data[0])), n*dt.Size()))
	}
	return FromStorage(CurrentStream(), shape, dt, st, strided.RowMajor(shape), 0)
}

// Scalar returns a 0-d array holding v.
func Scalar[T Elem](v T) *Array {
	return FromSlice([]T{v}, []int{}...)
}

func isRowMajor(shape, strides []int) bool {
	s := 1
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] == 0 {
			return true
		}
		if shape[i] != 1 && strides[i] != s {
			return false
		}
		s *= shape[i]
	}
	return true
}

func (a *Array) setData(st *Storage, strides []int, offset int) {
	if len(strides) != len(a.shape) {
		Panicf("array.SetData", "%d strides for shape %v", len(strides), a.shape)
	}
	d := &arrayData{storage: st, offset: offset, rowMajor: isRowMajor(a.shape, strides)}
	d.strides = d.stridesFor(len(strides))
	copy(d.strides, strides)
	a.data.Store(d)
}

// stridesFor returns room for n strides: d's inline array when they fit,
// nil for none (a 0-d array).
func (d *arrayData) stridesFor(n int) []int {
	switch {
	case n == 0:
		return nil
	case n <= len(d.inline):
		return d.inline[:n:n]
	}
	return make([]int, n)
}

// SetData gives a pending array its memory. Only the array's own
// primitive calls it, from Eval.
func (a *Array) SetData(st *Storage, strides []int, offset int) { a.setData(st, strides, offset) }

// SetRowMajorData gives a pending array memory laid out row-major from
// offset 0: SetData with strided.RowMajor's strides, without building
// them first. Only the array's own primitive calls it, from Eval.
func (a *Array) SetRowMajorData(st *Storage) {
	d := &arrayData{storage: st, rowMajor: true}
	d.strides = d.stridesFor(len(a.shape))
	s := 1
	for i := len(a.shape) - 1; i >= 0; i-- {
		d.strides[i] = s
		s *= max(a.shape[i], 1)
	}
	a.data.Store(d)
}

// Shape returns a copy of the array's shape: empty, not nil, for a 0-d
// array, so FromSlice(v, a.Shape()...) keeps it 0-d.
func (a *Array) Shape() []int {
	checkNil(a)
	return append(make([]int, 0, len(a.shape)), a.shape...)
}

// RawShape returns the array's shape itself, not a copy (nil or empty for
// a 0-d array). It must not be modified: arrays share shape slices.
// Operations read it where Shape's copy would cost more than their own
// work on a small array.
func (a *Array) RawShape() []int {
	checkNil(a)
	return a.shape
}

// Dim returns the size of axis i (negative counts from the end).
func (a *Array) Dim(i int) int {
	checkNil(a)
	if i < 0 {
		i += len(a.shape)
	}
	if i < 0 || i >= len(a.shape) {
		Panicf("array.Dim", "axis %d out of range for shape %v", i, a.shape)
	}
	return a.shape[i]
}

// DType returns the element type.
func (a *Array) DType() DType {
	checkNil(a)
	return a.dtype
}

// Ndim returns the number of dimensions.
func (a *Array) Ndim() int {
	checkNil(a)
	return len(a.shape)
}

// Size returns the number of elements.
func (a *Array) Size() int {
	checkNil(a)
	return a.size
}

// NBytes returns the size of the array's elements in bytes.
func (a *Array) NBytes() int {
	checkNil(a)
	return a.size * a.dtype.Size()
}

// Stream returns the stream the array is (or was) computed on.
func (a *Array) Stream() Stream {
	checkNil(a)
	return a.stream
}

// Tracer reports whether the array is part of a function being
// transformed or traced.
func (a *Array) Tracer() bool {
	checkNil(a)
	return a.tracer
}

// Evaluated reports whether the array has its value: its kernel has
// finished and the value can be read.
func (a *Array) Evaluated() bool {
	checkNil(a)
	return a.isReady()
}

// isReady reports whether a's value is complete. A node is detached only
// after its outputs are ready and their data is set, so an array without a
// node is ready exactly when it has data (a placeholder has neither).
func (a *Array) isReady() bool {
	if n := a.node.Load(); n != nil {
		return n.ready.Load()
	}
	return a.data.Load() != nil
}

// Primitive returns the primitive of a pending array (nil once evaluated,
// unless the array is a tracer).
func (a *Array) Primitive() Primitive {
	if n := a.node.Load(); n != nil {
		return n.prim
	}
	return nil
}

// Inputs returns the inputs of a pending array's node.
func (a *Array) Inputs() []*Array {
	if n := a.node.Load(); n != nil {
		return n.inputs
	}
	return nil
}

// Siblings returns all outputs of the node (including a itself), in order;
// nil for an array without a node.
func (a *Array) Siblings() []*Array {
	if n := a.node.Load(); n != nil {
		return n.outputs
	}
	return nil
}

// SiblingIndex returns a's position among its node's outputs.
func (a *Array) SiblingIndex() int {
	if n := a.node.Load(); n != nil {
		for i, o := range n.outputs {
			if o == a {
				return i
			}
		}
	}
	return 0
}

// NodeID returns an identifier shared by the outputs of one node and
// distinct from every other live node's; 0 for an array without a node.
func (a *Array) NodeID() uintptr {
	return uintptr(unsafe.Pointer(a.node.Load()))
}

// Storage returns an evaluated array's memory (nil if pending).
func (a *Array) Storage() *Storage {
	if d := a.data.Load(); d != nil {
		return d.storage
	}
	return nil
}

// Strides returns an evaluated array's element strides.
func (a *Array) Strides() []int {
	if d := a.data.Load(); d != nil {
		return d.strides
	}
	return nil
}

// Offset returns an evaluated array's offset into its storage, in
// elements.
func (a *Array) Offset() int {
	if d := a.data.Load(); d != nil {
		return d.offset
	}
	return 0
}

// RowMajor reports whether an evaluated array's elements are contiguous in
// row-major order.
func (a *Array) RowMajor() bool {
	if d := a.data.Load(); d != nil {
		return d.rowMajor
	}
	return false
}

// ToSlice evaluates a and returns its elements in row-major order. T must
// be a's dtype's Go type.
func ToSlice[T Elem](a *Array) ([]T, error) {
	if want := DTypeOf[T](); want != a.dtype {
		return nil, Errorf("array.ToSlice", "array has dtype %v, not %v", a.dtype, want)
	}
	if err := a.Eval(); err != nil {
		return nil, err
	}
	// A broadcast view can have far more elements than memory.
	if err := checkAlloc("array.ToSlice", a.NBytes()); err != nil {
		return nil, err
	}
	out := make([]T, a.size)
	if a.size == 0 {
		return out, nil
	}
	d := a.data.Load()
	src := unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(d.storage.bytes))), len(d.storage.bytes)/a.dtype.Size())
	if d.rowMajor {
		copy(out, src[d.offset:d.offset+a.size])
		return out, nil
	}
	i := 0
	strided.ForEachOffset(a.shape, d.strides, d.offset, func(off int) {
		out[i] = src[off]
		i++
	})
	return out, nil
}

// Item evaluates a one-element array and returns its value as a float64
// (a complex value's real part; true is 1). It panics with *Error if the
// array has more than one element or cannot be evaluated.
func (a *Array) Item() float64 {
	if a.size != 1 {
		Panicf("array.Item", "array of shape %v has %d elements, not 1", a.shape, a.size)
	}
	if err := a.Eval(); err != nil {
		if e, ok := err.(*Error); ok {
			panic(e)
		}
		panic(Errorf("array.Item", "%v", err))
	}
	d := a.data.Load()
	p := unsafe.Pointer(&d.storage.bytes[d.offset*a.dtype.Size()])
	switch a.dtype {
	case Bool:
		if *(*bool)(p) {
			return 1
		}
		return 0
	case Uint8:
		return float64(*(*uint8)(p))
	case Int32:
		return float64(*(*int32)(p))
	case Int64:
		return float64(*(*int64)(p))
	case Int8:
		return float64(*(*int8)(p))
	case Int16:
		return float64(*(*int16)(p))
	case Uint16:
		return float64(*(*uint16)(p))
	case Uint32:
		return float64(*(*uint32)(p))
	case Uint64:
		return float64(*(*uint64)(p))
	case Float16:
		return float64((*(*F16)(p)).Float32())
	case BFloat16:
		return float64((*(*BF16)(p)).Float32())
	case Float32:
		return float64(*(*float32)(p))
	case Float64:
		return *(*float64)(p)
	default:
		return float64(real(*(*complex64)(p)))
	}
}

// Node is a snapshot of a pending array's node: its primitive, its inputs,
// and all its outputs (siblings) in order. ID is shared by the outputs of
// one node and distinct from every other live node's.
type Node struct {
	ID        uintptr
	Primitive Primitive
	Inputs    []*Array
	Outputs   []*Array
}

// Node returns a's node, read once (so it is consistent even if another
// goroutine evaluates and detaches it meanwhile), and false if a has none.
func (a *Array) Node() (Node, bool) {
	n := a.node.Load()
	if n == nil {
		return Node{}, false
	}
	return Node{ID: uintptr(unsafe.Pointer(n)), Primitive: n.prim, Inputs: n.inputs, Outputs: n.outputs}, true
}

// checkNil turns the use of a nil *Array into an *Error rather than a nil
// dereference. Operations check their arguments first and name themselves;
// this is the backstop.
func checkNil(a *Array) {
	if a == nil {
		panic(Errorf("array", "nil *Array"))
	}
}
