package distributed

import (
	"fmt"
	"runtime"
	"strings"
	"unsafe"

	"github.com/fathom-go/fathom/array"
)

// libraryNames are the names tried, in order, when neither the Library
// option nor FATHOM_MPI_LIBRARY names the MPI library: the versioned name
// first, as the runtime package (Debian's libopenmpi3) ships only that.
var libraryNames = map[string][]string{
	"linux":  {"libmpi.so.40", "libmpi.so"},
	"darwin": {"libmpi.40.dylib", "libmpi.dylib", "/opt/homebrew/lib/libmpi.dylib", "/usr/local/lib/libmpi.dylib"},
}

// Open MPI's values of the MPI constants fathom passes.
const (
	mpiThreadSerialized = 2
	mpiInPlace          = 1 // MPI_IN_PLACE is ((void *) 1)
	mpiSuccess          = 0
)

// mpiLib is a loaded Open MPI: its entry points and, since Open MPI's
// handles (MPI_COMM_WORLD, MPI_FLOAT, MPI_SUM) are the addresses of
// global objects, those addresses.
type mpiLib struct {
	path    string
	version string

	fInitThread, fFinalize, fCommRank, fCommSize, fCommSplit uintptr
	fAllreduce, fAllgather, fSend, fRecv                     uintptr

	commWorld uintptr
	types     map[array.DType]uintptr
	ops       map[reduceOp]uintptr
	int64T    uintptr
	byteT     uintptr
}

// loadMPI opens the MPI library at path, or the first of the usual names
// that opens, and checks that it is Open MPI.
func loadMPI(path string) (*mpiLib, error) {
	names := libraryNames[runtime.GOOS]
	if path != "" {
		names = []string{path}
	}
	var h uintptr
	var errs []string
	for _, n := range names {
		var err error
		if h, err = openLibrary(n); err == nil {
			path = n
			break
		}
		errs = append(errs, err.Error())
	}
	if h == 0 {
		return nil, fmt.Errorf("no MPI library could be loaded (install Open MPI, e.g. Debian's libopenmpi3, or name the library with FATHOM_MPI_LIBRARY): %s", strings.Join(errs, "; "))
	}
	l := &mpiLib{path: path, types: map[array.DType]uintptr{}, ops: map[reduceOp]uintptr{}}
	if v, err := symbol(h, "MPI_Get_library_version"); err == nil {
		buf := make([]byte, 256) // MPI_MAX_LIBRARY_VERSION_STRING
		var n int32
		ccall(v, uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&n)))
		l.version = strings.TrimSpace(strings.TrimRight(string(buf[:max(0, min(int(n), len(buf)))]), "\x00"))
	}
	// Open MPI's handles are global objects; MPICH's and its derivatives'
	// are integer constants, which this binding does not carry.
	if _, err := symbol(h, "ompi_mpi_comm_world"); err != nil {
		return nil, fmt.Errorf("%s (%s) is not Open MPI: fathom's MPI binding supports Open MPI only (MPICH and its derivatives use integer handles)", path, firstLine(l.version))
	}
	var missing []string
	sym := func(name string) uintptr {
		a, err := symbol(h, name)
		if err != nil {
			missing = append(missing, name)
		}
		return a
	}
	l.fInitThread = sym("MPI_Init_thread")
	l.fFinalize = sym("MPI_Finalize")
	l.fCommRank = sym("MPI_Comm_rank")
	l.fCommSize = sym("MPI_Comm_size")
	l.fCommSplit = sym("MPI_Comm_split")
	l.fAllreduce = sym("MPI_Allreduce")
	l.fAllgather = sym("MPI_Allgather")
	l.fSend = sym("MPI_Send")
	l.fRecv = sym("MPI_Recv")
	l.commWorld = sym("ompi_mpi_comm_world")
	for dt, name := range map[array.DType]string{
		array.Bool: "ompi_mpi_c_bool", array.Uint8: "ompi_mpi_uint8_t", array.Int8: "ompi_mpi_int8_t",
		array.Int16: "ompi_mpi_int16_t", array.Uint16: "ompi_mpi_uint16_t", array.Int32: "ompi_mpi_int32_t",
		array.Uint32: "ompi_mpi_uint32_t", array.Int64: "ompi_mpi_int64_t", array.Uint64: "ompi_mpi_uint64_t",
		array.Float32: "ompi_mpi_float", array.Float64: "ompi_mpi_double", array.Complex64: "ompi_mpi_c_float_complex",
	} {
		l.types[dt] = sym(name)
	}
	l.int64T = l.types[array.Int64]
	l.byteT = sym("ompi_mpi_byte")
	for op, name := range map[reduceOp]string{
		opSum: "ompi_mpi_op_sum", opMax: "ompi_mpi_op_max", opMin: "ompi_mpi_op_min",
		opOr: "ompi_mpi_op_lor", opAnd: "ompi_mpi_op_land",
	} {
		l.ops[op] = sym(name)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s lacks %s", path, strings.Join(missing, ", "))
	}
	return l, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if s == "" {
		return "unknown version"
	}
	return s
}

// check turns an MPI return code into an error. Open MPI's default error
// handler aborts the job before a failing call returns, so this only
// fires where a user installed another handler.
func check(fn string, r uintptr) error {
	if c := int32(r); c != mpiSuccess {
		return fmt.Errorf("%s failed with MPI error code %d", fn, c)
	}
	return nil
}

func (l *mpiLib) initThread() (provided int, err error) {
	p := new(int32)
	r := ccall(l.fInitThread, 0, 0, mpiThreadSerialized, uintptr(unsafe.Pointer(p)))
	return int(*p), check("MPI_Init_thread", r)
}

func (l *mpiLib) finalize() error {
	r := ccall(l.fFinalize)
	return check("MPI_Finalize", r)
}

func (l *mpiLib) rankSize(comm uintptr) (rank, size int, err error) {
	v := new([2]int32)
	r := ccall(l.fCommRank, comm, uintptr(unsafe.Pointer(&v[0])))
	if err := check("MPI_Comm_rank", r); err != nil {
		return 0, 0, err
	}
	r = ccall(l.fCommSize, comm, uintptr(unsafe.Pointer(&v[1])))
	return int(v[0]), int(v[1]), check("MPI_Comm_size", r)
}

func (l *mpiLib) split(comm uintptr, color, key int) (uintptr, error) {
	c := new(uintptr)
	r := ccall(l.fCommSplit, comm, uintptr(color), uintptr(key), uintptr(unsafe.Pointer(c)))
	return *c, check("MPI_Comm_split", r)
}

// allreduce reduces count elements; send nil reduces recv in place.
func (l *mpiLib) allreduce(send, recv unsafe.Pointer, count int, dt, op, comm uintptr) error {
	s := uintptr(mpiInPlace)
	if send != nil {
		s = uintptr(send)
	}
	r := ccall(l.fAllreduce, s, uintptr(recv), uintptr(count), dt, op, comm)
	runtime.KeepAlive(send)
	return check("MPI_Allreduce", r)
}

// allgather gathers count elements from each process; send nil takes
// this process's part from its place in recv.
func (l *mpiLib) allgather(send unsafe.Pointer, count int, recv unsafe.Pointer, dt, comm uintptr) error {
	s := uintptr(mpiInPlace)
	if send != nil {
		s = uintptr(send)
	}
	r := ccall(l.fAllgather, s, uintptr(count), dt, uintptr(recv), uintptr(count), dt, comm)
	runtime.KeepAlive(send)
	return check("MPI_Allgather", r)
}

func (l *mpiLib) send(buf unsafe.Pointer, count int, dt uintptr, dst, tag int, comm uintptr) error {
	r := ccall(l.fSend, uintptr(buf), uintptr(count), dt, uintptr(dst), uintptr(tag), comm)
	return check("MPI_Send", r)
}

func (l *mpiLib) recv(buf unsafe.Pointer, count int, dt uintptr, src, tag int, comm uintptr) error {
	// The status is MPI_STATUS_IGNORE (NULL): the header message says
	// what was sent.
	r := ccall(l.fRecv, uintptr(buf), uintptr(count), dt, uintptr(src), uintptr(tag), comm, 0)
	return check("MPI_Recv", r)
}
