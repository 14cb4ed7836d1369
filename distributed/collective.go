package distributed

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unsafe"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/internal/strided"
	"github.com/fathom-go/fathom/ops"
)

// reduceOp is an MPI reduction.
type reduceOp uint8

const (
	opSum reduceOp = iota
	opMax
	opMin
	opOr
	opAnd
)

// kind is what a collective does. It is the first word of the header the
// processes compare before they exchange data, so that two processes
// running different collectives at the same point fail instead of mixing
// their buffers.
type kind int64

const (
	kindSum kind = iota + 1
	kindMax
	kindMin
	kindGather
	kindSend
)

var kindNames = map[kind]string{kindSum: "AllSum", kindMax: "AllMax", kindMin: "AllMin", kindGather: "AllGather", kindSend: "Send"}

// AllSum returns the elementwise sum of x over the processes of g (nil:
// the world group), as MPI_Allreduce. Every process passes an array of the
// same shape and dtype; one that differs makes the evaluation fail on
// every process with an error that says so. It is lazy: the exchange runs
// when the result is evaluated, after the collectives made on g before it
// (see the package documentation on order). Float16
// and bfloat16 are summed in float32 and rounded once; bool sums are
// logical or. Its derivative is AllSum of the cotangent, as MLX's.
func AllSum(x *array.Array, g *Group) *array.Array {
	return allReduce("distributed.AllSum", kindSum, x, g)
}

// AllMax returns the elementwise maximum of x over the processes of g, as
// AllSum. Complex64 has no order and is refused. It has no derivative.
func AllMax(x *array.Array, g *Group) *array.Array {
	return allReduce("distributed.AllMax", kindMax, x, g)
}

// AllMin returns the elementwise minimum of x over the processes of g, as
// AllMax.
func AllMin(x *array.Array, g *Group) *array.Array {
	return allReduce("distributed.AllMin", kindMin, x, g)
}

// AllGather returns the arrays of every process of g concatenated along
// axis 0 in rank order (a 0-d array counts as shape [1]): shape
// [Size()*n, ...] from [n, ...]. Every process passes the same shape and
// dtype. Its derivative gives each process its own rows of the cotangent,
// as MLX's.
func AllGather(x *array.Array, g *Group) *array.Array {
	const op = "distributed.AllGather"
	g = checkInput(op, x, g)
	if x.Ndim() == 0 {
		x = ops.Reshape(x, 1)
	}
	if g.size == 1 {
		return x
	}
	shape := append([]int{g.size * x.Dim(0)}, x.Shape()[1:]...)
	return g.record(shape, x.DType(), &allGather{g: g}, x)
}

// Send sends x to process dst of g (MPI_Send) when the result is
// evaluated, and returns x: evaluate the result to send. The receiving
// process calls Recv or RecvLike with the same shape and dtype; a mismatch
// is an error there. A send may wait until the receiver receives, so two
// processes that each send to the other first wait for ever: order sends
// and receives as with MPI. Send has no derivative.
func Send(x *array.Array, dst int, g *Group) *array.Array {
	const op = "distributed.Send"
	g = checkInput(op, x, g)
	checkPeer(op, "destination", dst, g)
	return g.record(x.Shape(), x.DType(), &sendPrim{g: g, dst: dst}, x)
}

// Recv returns an array of the given shape and dtype received from process
// src of g (MPI_Recv) when it is evaluated. What src sent must have that
// shape and dtype, or evaluation fails with an error that says what came.
// Recv has no derivative.
func Recv(shape []int, dt array.DType, src int, g *Group) *array.Array {
	const op = "distributed.Recv"
	g = groupOf(op, g)
	if !dt.Valid() {
		array.Panicf(op, "invalid dtype %v", dt)
	}
	checkPeer(op, "source", src, g)
	return g.record(shape, dt, &recvPrim{g: g, src: src})
}

// RecvLike is Recv with x's shape and dtype.
func RecvLike(x *array.Array, src int, g *Group) *array.Array {
	if x == nil {
		array.Panicf("distributed.RecvLike", "nil array")
	}
	return Recv(x.Shape(), x.DType(), src, g)
}

func groupOf(op string, g *Group) *Group {
	if g == nil {
		return world(op)
	}
	return g
}

func checkInput(op string, x *array.Array, g *Group) *Group {
	if x == nil {
		array.Panicf(op, "nil array")
	}
	return groupOf(op, g)
}

func checkPeer(op, role string, peer int, g *Group) {
	if peer < 0 || peer >= g.size || peer == g.rank {
		array.Panicf(op, "%s %d is not another process of a group of size %d (this is rank %d)", role, peer, g.size, g.rank)
	}
}

func allReduce(op string, k kind, x *array.Array, g *Group) *array.Array {
	g = checkInput(op, x, g)
	if k != kindSum && x.DType() == array.Complex64 {
		array.Panicf(op, "complex64 %v has no order", x.Shape())
	}
	if g.size == 1 {
		return x
	}
	return g.record(x.Shape(), x.DType(), &allReducePrim{g: g, k: k}, x)
}

// The primitives. Each has an Effect method: it acts outside the process,
// so compile runs it on every call of a compiled function rather than
// keep its result as a constant of the trace. None has an Equivalent
// method, so none is merged with another.

type allReducePrim struct {
	g *Group
	k kind
}

func (p *allReducePrim) Name() string { return kindNames[p.k] }
func (p *allReducePrim) Effect()      {}

func (p *allReducePrim) Eval(s array.Stream, in, out []*array.Array) (err error) {
	defer p.g.ran(out[0], &err)
	x, o := in[0], out[0]
	ob, err := prepare(s, o)
	if err != nil {
		return err
	}
	dt := x.DType()
	wide := dt == array.Float16 || dt == array.BFloat16
	var buf cpu.Buf
	switch {
	case fits(x):
	case wide:
		// MPI has no 16-bit floats: reduce in float32 and round once.
		buf = cpu.Buf{Data: array.AllocCPU(x.Size() * 4).Bytes(), DType: array.Float32, Shape: x.Shape(), Strides: strided.RowMajor(x.Shape())}
	case !x.RowMajor():
		buf = ob
	}
	if buf.Data != nil {
		if err := cpu.Copy(buf, bufOf(x)); err != nil {
			return err
		}
	}
	return withMPI(func(l *mpiLib) error {
		parts, err := exchange(l, p.g, p.k, x)
		if err != nil || parts != nil {
			if err == nil {
				err = fold(ob, parts, p.k)
			}
			return err
		}
		mop := l.ops[reduceOps[p.k]]
		if dt == array.Bool {
			mop = l.ops[boolOps[p.k]]
		}
		if buf.Data == nil {
			return chunked(x.Size(), func(off, n int) error {
				return l.allreduce(ptr(x, off), unsafe.Pointer(&ob.Data[off*dt.Size()]), n, l.types[dt], mop, p.g.comm)
			})
		}
		err = chunked(x.Size(), func(off, n int) error {
			return l.allreduce(nil, unsafe.Pointer(&buf.Data[off*buf.DType.Size()]), n, l.types[buf.DType], mop, p.g.comm)
		})
		if err == nil && wide {
			err = cpu.Copy(ob, buf)
		}
		return err
	})
}

var (
	reduceOps = map[kind]reduceOp{kindSum: opSum, kindMax: opMax, kindMin: opMin}
	boolOps   = map[kind]reduceOp{kindSum: opOr, kindMax: opOr, kindMin: opAnd}
)

// VJP: the sum's cotangent is the sum of the cotangents (every process's
// output depends on every input), as MLX's.
func (p *allReducePrim) VJP(inputs, outputs, cots []*array.Array, argnums []int) []*array.Array {
	p.derivable()
	return dataOnly(argnums, func() *array.Array { return AllSum(cots[0], p.g) })
}

// JVP: the sum of the tangents.
func (p *allReducePrim) JVP(inputs, outputs, tans []*array.Array, argnums []int) []*array.Array {
	p.derivable()
	t := dataTangent(tans, argnums)
	if t == nil {
		return []*array.Array{nil}
	}
	return []*array.Array{AllSum(t, p.g)}
}

// dataOnly returns the cotangents for argnums: d() for input 0, the data;
// nil (zero) for the chained collective, whose value is not used.
func dataOnly(argnums []int, d func() *array.Array) []*array.Array {
	res := make([]*array.Array, len(argnums))
	for k, j := range argnums {
		if j == 0 {
			res[k] = d()
		}
	}
	return res
}

// dataTangent returns the tangent of input 0, the data, or nil.
func dataTangent(tans []*array.Array, argnums []int) *array.Array {
	for k, j := range argnums {
		if j == 0 {
			return tans[k]
		}
	}
	return nil
}

func (p *allReducePrim) derivable() {
	if p.k != kindSum {
		array.Panicf("distributed."+p.Name(), "has no derivative (only AllSum and AllGather do)")
	}
}

// Vmap reduces the whole batch: the reduction is elementwise, so the
// batch axis stays where it is. (Input 1, if any, is the chained
// collective, whose value is not used.)
func (p *allReducePrim) Vmap(inputs []*array.Array, axes []int) ([]*array.Array, []int) {
	return []*array.Array{allReduce("distributed."+p.Name(), p.k, inputs[0], p.g)}, axes[:1]
}

type allGather struct{ g *Group }

func (p *allGather) Name() string { return "AllGather" }
func (p *allGather) Effect()      {}

func (p *allGather) Eval(s array.Stream, in, out []*array.Array) (err error) {
	defer p.g.ran(out[0], &err)
	x, o := in[0], out[0]
	ob, err := prepare(s, o)
	if err != nil {
		return err
	}
	n := x.NBytes()
	if n > math.MaxInt32 {
		return array.Errorf("distributed.AllGather", "%v %v is %d bytes a process; MPI_Allgather counts in int32", x.DType(), x.Shape(), n)
	}
	// Each process's part is gathered where it lands in the output; a
	// strided input is first made contiguous in its own part.
	var src unsafe.Pointer
	if x.RowMajor() {
		src = ptr(x, 0)
	} else if !fits(x) {
		part := ob
		part.Shape, part.Offset = x.Shape(), p.g.rank*x.Size()
		part.Strides = strided.RowMajor(x.Shape())
		if err := cpu.Copy(part, bufOf(x)); err != nil {
			return err
		}
	}
	return withMPI(func(l *mpiLib) error {
		parts, err := exchange(l, p.g, kindGather, x)
		if err != nil || parts != nil {
			for i, part := range parts {
				copy(ob.Data[i*n:], part)
			}
			return err
		}
		return l.allgather(src, n, unsafe.Pointer(&ob.Data[0]), l.byteT, p.g.comm)
	})
}

// VJP gives this process its own rows of the cotangent, as MLX's.
func (p *allGather) VJP(inputs, outputs, cots []*array.Array, argnums []int) []*array.Array {
	x := inputs[0]
	n := x.Dim(0)
	return dataOnly(argnums, func() *array.Array { return ops.SliceAxis(cots[0], 0, ops.R(p.g.rank*n, (p.g.rank+1)*n)) })
}

// JVP gathers the tangents.
func (p *allGather) JVP(inputs, outputs, tans []*array.Array, argnums []int) []*array.Array {
	t := dataTangent(tans, argnums)
	if t == nil {
		return []*array.Array{nil}
	}
	return []*array.Array{AllGather(t, p.g)}
}

// Vmap gathers along each example's first axis (AllGather made 0-d
// examples 1-d before this primitive): the batch axis moves behind it
// where it is in front.
func (p *allGather) Vmap(inputs []*array.Array, axes []int) ([]*array.Array, []int) {
	x, ax := inputs[0], axes[0]
	if ax < 0 {
		return []*array.Array{AllGather(x, p.g)}, []int{-1}
	}
	if ax == 0 {
		x = ops.MoveAxis(x, 0, 1)
		ax = 1
	}
	return []*array.Array{AllGather(x, p.g)}, []int{ax}
}

type sendPrim struct {
	g   *Group
	dst int
}

func (p *sendPrim) Name() string { return "Send" }
func (p *sendPrim) Effect()      {}

func (p *sendPrim) Eval(s array.Stream, in, out []*array.Array) (err error) {
	defer p.g.ran(out[0], &err)
	x := in[0]
	if err := hostReady(s); err != nil {
		return err
	}
	data := x
	if !x.RowMajor() {
		data = array.FromStorage(s, x.Shape(), x.DType(), array.AllocCPU(x.NBytes()), strided.RowMajor(x.Shape()), 0)
		if err := cpu.Copy(bufOf(data), bufOf(x)); err != nil {
			return err
		}
	}
	out[0].SetData(x.Storage(), x.Strides(), x.Offset())
	return withMPI(func(l *mpiLib) error {
		h := header(kindSend, x)
		if err := l.send(unsafe.Pointer(&h[0]), len(h), l.int64T, p.dst, tagHeader, p.g.comm); err != nil {
			return err
		}
		dt := x.DType()
		return chunked(x.Size(), func(off, n int) error {
			return l.send(ptr(data, off), n, wireType(l, dt), p.dst, tagData, p.g.comm)
		})
	})
}

// Vmap sends the whole batch.
func (p *sendPrim) Vmap(inputs []*array.Array, axes []int) ([]*array.Array, []int) {
	return []*array.Array{Send(inputs[0], p.dst, p.g)}, axes[:1]
}

type recvPrim struct {
	g   *Group
	src int
}

func (p *recvPrim) Name() string { return "Recv" }
func (p *recvPrim) Effect()      {}

func (p *recvPrim) Eval(s array.Stream, in, out []*array.Array) (err error) {
	defer p.g.ran(out[0], &err)
	o := out[0]
	ob, err := prepare(s, o)
	if err != nil {
		return err
	}
	return withMPI(func(l *mpiLib) error {
		want := header(kindSend, o)
		var got [headerLen]int64
		if err := l.recv(unsafe.Pointer(&got[0]), len(got), l.int64T, p.src, tagHeader, p.g.comm); err != nil {
			return err
		}
		dt, size := o.DType(), o.Size()
		bad := got != want
		if bad {
			// Take the data message all the same, so the next message
			// between the two is the one its receiver expects.
			sdt := array.DType(got[1])
			if !sdt.Valid() || got[0] != int64(kindSend) {
				return array.Errorf("distributed.Recv", "process %d sent something that is not an array (header %v)", p.src, got[:])
			}
			dt, size = sdt, int(got[3])
			ob.Data = make([]byte, size*dt.Size())
		}
		err := chunked(size, func(off, n int) error {
			return l.recv(unsafe.Pointer(&ob.Data[off*dt.Size()]), n, wireType(l, dt), p.src, tagData, p.g.comm)
		})
		if err == nil && bad {
			err = array.Errorf("distributed.Recv", "expected %v %v from process %d, which sent %s", o.DType(), o.Shape(), p.src, describeArray(got[:]))
		}
		return err
	})
}

// Tags keep the header and data of a send apart; MPI keeps the messages
// between two processes in order within a tag.
const (
	tagHeader = 1
	tagData   = 2
)

// wireType is the MPI type that carries dt's elements unchanged: its own,
// or two bytes for the 16-bit floats, which MPI lacks.
func wireType(l *mpiLib, dt array.DType) uintptr {
	if t, ok := l.types[dt]; ok {
		return t
	}
	return l.types[array.Uint16]
}

// chunked calls f over [0, n) elements in pieces MPI's int counts hold;
// an empty array exchanges no data, only its header.
func chunked(n int, f func(off, n int) error) error {
	const most = 1 << 30
	for off := 0; off < n; off += most {
		if err := f(off, min(most, n-off)); err != nil {
			return err
		}
	}
	return nil
}

// headerLen is the header's words: kind, dtype, ndim, size, the first
// maxDims dimensions (zeros after the last) and a hash of all of them.
const (
	maxDims   = 8
	headerLen = 5 + maxDims
)

// header describes x for a collective of kind k. It is an array, not a
// slice, so that the small collectives, whose cost is mostly fixed, do
// not allocate it.
func header(k kind, x *array.Array) (h [headerLen]int64) {
	h[0], h[1], h[2], h[3] = int64(k), int64(x.DType()), int64(x.Ndim()), int64(x.Size())
	sum := uint64(14695981039346656037) // FNV-1a over the dimensions
	for i := range x.Ndim() {
		d := x.Dim(i)
		if i < maxDims {
			h[4+i] = int64(d)
		}
		sum = (sum ^ uint64(d)) * 1099511628211
	}
	h[headerLen-1] = int64(sum >> 1)
	return h
}

// describe says what header h describes: "AllSum on float32 [2 3]".
func describe(h []int64) string {
	return kindNames[kind(h[0])] + " on " + describeArray(h)
}

// describeArray says what array header h describes: "float32 [2 3]".
func describeArray(h []int64) string {
	if h[2] > maxDims {
		return fmt.Sprintf("%v of %d dimensions, %d elements", array.DType(h[1]), h[2], h[3])
	}
	return fmt.Sprintf("%v %v", array.DType(h[1]), h[4:4+max(h[2], 0)])
}

// blockPayload is the most bytes of data the header exchange carries: a
// collective of an array that fits needs no other MPI call. Every process
// exchanges blocks of this one size whatever its array, so the exchange
// itself cannot go wrong on processes that disagree.
const (
	blockPayload = 2048
	blockSize    = 8*headerLen + blockPayload
)

// fits reports whether x travels in the header exchange.
func fits(x *array.Array) bool { return x.NBytes() <= blockPayload }

// exchange checks that every process of g runs a collective of kind k on
// an array of x's shape and dtype. One MPI_Allgather of fixed-size blocks
// carries every process's header and, where x fits, its data, which it
// returns in rank order (nil where x does not fit). Every process learns
// the same, so on a mismatch all of them fail and none exchanges data.
// It runs under state.mu, whose scratch blocks it uses.
func exchange(l *mpiLib, g *Group, k kind, x *array.Array) ([][]byte, error) {
	mine := header(k, x)
	if len(state.blocks) < g.size*blockSize {
		state.blocks = make([]byte, g.size*blockSize)
		state.parts = make([][]byte, g.size)
	}
	all := state.blocks[:g.size*blockSize]
	send := all[g.rank*blockSize : (g.rank+1)*blockSize]
	copy(send, unsafe.Slice((*byte)(unsafe.Pointer(&mine[0])), 8*headerLen))
	small := fits(x)
	if small {
		// A row-major x's strides describe the block's layout too, which
		// spares the small collective an allocation.
		st := x.Strides()
		if !x.RowMajor() {
			st = strided.RowMajor(x.RawShape())
		}
		c := cpu.Buf{Data: send[8*headerLen:], DType: x.DType(), Shape: x.RawShape(), Strides: st}
		if err := cpu.Copy(c, bufOf(x)); err != nil {
			return nil, err
		}
	}
	// In place: this process's block is already where it lands.
	if err := l.allgather(nil, blockSize, unsafe.Pointer(&all[0]), l.byteT, g.comm); err != nil {
		return nil, err
	}
	parts := state.parts[:g.size]
	var bad []string
	for r := range parts {
		b := all[r*blockSize : (r+1)*blockSize]
		h := unsafe.Slice((*int64)(unsafe.Pointer(&b[0])), headerLen)
		if !slices.Equal(h, mine[:]) {
			bad = append(bad, fmt.Sprintf("rank %d runs %s", r, describe(h)))
		}
		if small {
			parts[r] = b[8*headerLen : 8*headerLen+x.NBytes()]
		}
	}
	if bad != nil {
		m := mine // escapes to the heap only here
		return nil, array.Errorf("distributed."+kindNames[k], "the processes disagree: this one (rank %d of %d) runs %s, while %s", g.rank, g.size, describe(m[:]), strings.Join(bad, "; "))
	}
	if !small {
		return nil, nil
	}
	return parts, nil
}

// fold reduces the processes' parts, in rank order, into out.
func fold(out cpu.Buf, parts [][]byte, k kind) error {
	switch out.DType {
	case array.Bool:
		d := out.Data[:len(parts[0])]
		copy(d, parts[0])
		for _, p := range parts[1:] {
			for i := range d {
				if k == kindMin {
					d[i] &= p[i]
				} else {
					d[i] |= p[i]
				}
			}
		}
	case array.Float16, array.BFloat16:
		// In float32, rounded once, as the MPI path.
		n := len(parts[0]) / 2
		wide := make([][]byte, len(parts))
		for i, p := range parts {
			wide[i] = make([]byte, 4*n)
			if err := cpu.Copy(flat(wide[i], array.Float32, n), flat(p, out.DType, n)); err != nil {
				return err
			}
		}
		acc := make([]byte, 4*n)
		foldAs[float32](acc, wide, k)
		return cpu.Copy(flat(out.Data, out.DType, n), flat(acc, array.Float32, n))
	case array.Uint8:
		foldAs[uint8](out.Data, parts, k)
	case array.Int8:
		foldAs[int8](out.Data, parts, k)
	case array.Int16:
		foldAs[int16](out.Data, parts, k)
	case array.Uint16:
		foldAs[uint16](out.Data, parts, k)
	case array.Int32:
		foldAs[int32](out.Data, parts, k)
	case array.Uint32:
		foldAs[uint32](out.Data, parts, k)
	case array.Int64:
		foldAs[int64](out.Data, parts, k)
	case array.Uint64:
		foldAs[uint64](out.Data, parts, k)
	case array.Float32, array.Complex64: // a complex sum is the sums of its parts
		foldAs[float32](out.Data, parts, k)
	case array.Float64:
		foldAs[float64](out.Data, parts, k)
	}
	return nil
}

// flat is n elements of dt in b as a 1-d view.
func flat(b []byte, dt array.DType, n int) cpu.Buf {
	return cpu.Buf{Data: b, DType: dt, Shape: []int{n}, Strides: []int{1}}
}

type number interface {
	~uint8 | ~int8 | ~uint16 | ~int16 | ~uint32 | ~int32 | ~uint64 | ~int64 | ~float32 | ~float64
}

func foldAs[T number](out []byte, parts [][]byte, k kind) {
	as := func(b []byte) []T {
		var z T
		return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(unsafe.Sizeof(z)))
	}
	d := as(out)[:len(as(parts[0]))]
	copy(d, as(parts[0]))
	for _, p := range parts[1:] {
		s := as(p)
		switch k {
		case kindSum:
			for i := range d {
				d[i] += s[i]
			}
		case kindMax:
			for i := range d {
				d[i] = max(d[i], s[i])
			}
		case kindMin:
			for i := range d {
				d[i] = min(d[i], s[i])
			}
		}
	}
}

// prepare waits for GPU work the kernel reads and gives out its memory on
// s's device, returning the host's view of it.
func prepare(s array.Stream, o *array.Array) (cpu.Buf, error) {
	if err := hostReady(s); err != nil {
		return cpu.Buf{}, err
	}
	var st *array.Storage
	if s.Device.Type == array.DeviceGPU {
		var err error
		if st, err = metal.Alloc(o.NBytes()); err != nil {
			return cpu.Buf{}, err
		}
	} else {
		st = array.AllocCPU(o.NBytes())
	}
	strides := strided.RowMajor(o.Shape())
	o.SetData(st, strides, 0)
	return cpu.Buf{Data: st.Bytes(), DType: o.DType(), Shape: o.Shape(), Strides: strides}, nil
}

// hostReady waits, on the GPU stream, for the work queued so far: on Apple
// silicon the GPU's memory is the host's, so MPI then reads and writes it
// in place.
func hostReady(s array.Stream) error {
	if s.Device.Type == array.DeviceGPU {
		return metal.Synchronize(s)
	}
	return nil
}

// bufOf is a's memory as a cpu.Buf to copy from; it shares a's shape,
// which the copy only reads.
func bufOf(a *array.Array) cpu.Buf {
	return cpu.Buf{Data: a.Storage().Bytes(), DType: a.DType(), Shape: a.RawShape(), Strides: a.Strides(), Offset: a.Offset()}
}

// ptr is the address of element off of a row-major array, nil for an
// empty one.
func ptr(x *array.Array, off int) unsafe.Pointer {
	b := x.Storage().Bytes()
	i := (x.Offset() + off) * x.DType().Size()
	if i >= len(b) {
		return nil
	}
	return unsafe.Pointer(&b[i])
}
