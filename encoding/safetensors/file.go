package safetensors

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/encoding/internal/tensorio"
)

// ErrFormat is the kind (errors.Is) of every error about a file that is
// not valid safetensors: a truncated file, a header too large, not JSON
// or not an object, names given twice, unknown dtypes, shapes whose size
// overflows or does not match their offsets, offsets that overlap, leave
// gaps or run past the data.
var ErrFormat = errors.New("not a valid safetensors file")

// ErrUnsupported is the kind (errors.Is) of the error of Get or Load for
// a tensor whose dtype fathom has no arrays of (not yet): the 8-, 6- and
// 4-bit floats.
var ErrUnsupported = errors.New("unsupported dtype")

// ErrNotFound is the kind (errors.Is) of the error of Get for a name the
// file does not hold.
var ErrNotFound = errors.New("no such tensor")

func fail(op string, kind error, format string, args ...any) error {
	return &array.Error{Op: op, Msg: fmt.Sprintf(format, args...), Err: kind}
}

// File is an open safetensors file. Its header is read and checked by
// Open; tensors are read when the arrays Get returns are evaluated. A File
// is safe for use by several goroutines.
type File struct {
	path    string
	m       *mapping
	tensors map[string]*tensorInfo
	keys    []string
	meta    map[string]string
}

// mapping is the open file's data, shared by the File and the pending
// arrays of its tensors. When none of them is reachable any more, a
// cleanup releases it; Close releases it at once.
type mapping struct {
	mu     sync.RWMutex
	closed bool
	path   string
	base   int64 // the data section's offset in the file
	res    *resources
}

// resources are what the cleanup releases: the file and its mapping.
type resources struct {
	once sync.Once
	f    *os.File
	data []byte // the whole file, mapped read-only; nil where not mapped
	err  error
}

func (r *resources) release() error {
	r.once.Do(func() {
		if r.data != nil {
			r.err = unmap(r.data)
			r.data = nil
		}
		if err := r.f.Close(); r.err == nil {
			r.err = err
		}
	})
	return r.err
}

// Open opens the safetensors file at path: it reads and checks the
// header, maps the file into memory (on unix; elsewhere tensors are read
// with ReadAt when evaluated), and returns at once, whatever the file's
// size. Data is read only when the arrays of Get are evaluated.
//
// A file that breaks the format is an error wrapping ErrFormat. Nothing
// is allocated for what a file merely claims: a header length beyond the
// file or above MaxHeaderSize is an error before any allocation.
func Open(path string) (*File, error) {
	const op = "safetensors.Open"
	f, err := os.Open(path)
	if err != nil {
		return nil, fail(op, err, "%v", err)
	}
	file, err := open(f, path)
	if err != nil {
		f.Close()
		if ae, ok := err.(*array.Error); ok {
			ae.Op = op
			ae.Msg = path + ": " + ae.Msg
		}
		return nil, err
	}
	return file, nil
}

func open(f *os.File, path string) (*File, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fail("", err, "%v", err)
	}
	size := fi.Size()
	if !fi.Mode().IsRegular() {
		return nil, fail("", ErrFormat, "not a regular file")
	}
	if size < 8 {
		return nil, fail("", errors.Join(ErrFormat, io.ErrUnexpectedEOF), "%d bytes: too short for the 8-byte header length", size)
	}
	var nb [8]byte
	if _, err := f.ReadAt(nb[:], 0); err != nil {
		return nil, fail("", err, "%v", err)
	}
	n := binary.LittleEndian.Uint64(nb[:])
	if n > MaxHeaderSize {
		return nil, fail("", ErrFormat, "header length %d exceeds the limit of %d bytes", n, MaxHeaderSize)
	}
	if n > uint64(size-8) {
		return nil, fail("", errors.Join(ErrFormat, io.ErrUnexpectedEOF), "header length %d exceeds the %d bytes after it", n, size-8)
	}
	hdr := make([]byte, n)
	if _, err := f.ReadAt(hdr, 8); err != nil {
		return nil, fail("", err, "%v", err)
	}
	tensors, meta, err := parseHeader(hdr, uint64(size-8)-n)
	if err != nil {
		if he, ok := err.(headerError); ok {
			return nil, fail("", ErrFormat, "%s", he.msg)
		}
		return nil, fail("", ErrFormat, "%v", err)
	}
	keys := make([]string, 0, len(tensors))
	for k := range tensors {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	res := &resources{f: f}
	res.data = mapFile(f, size)
	m := &mapping{path: path, base: 8 + int64(n), res: res}
	runtime.AddCleanup(m, func(r *resources) { r.release() }, res)
	return &File{path: path, m: m, tensors: tensors, keys: keys, meta: meta}, nil
}

// Keys returns the names of the file's tensors, sorted.
func (f *File) Keys() []string { return slices.Clone(f.keys) }

// Metadata returns a copy of the file's "__metadata__" (nil if it has
// none).
func (f *File) Metadata() map[string]string {
	if f.meta == nil {
		return nil
	}
	m := make(map[string]string, len(f.meta))
	for k, v := range f.meta {
		m[k] = v
	}
	return m
}

// Get returns the tensor name as a pending array on the default stream:
// its shape and dtype are known at once, and its bytes are read from the
// file when it is evaluated (copied from the mapping into fathom's own
// memory: pooled CPU memory, or a Metal buffer on the GPU), and only
// then. Each call returns a new array, which reads the bytes again when
// evaluated.
//
// Evaluate the arrays before Close: an array still pending when its File
// is closed fails to evaluate with an error wrapping os.ErrClosed. An
// array evaluated before Close holds its own copy and is unaffected. A
// file changed or truncated under the mapping gives an error from Eval,
// not a crash.
func (f *File) Get(name string) (*array.Array, error) {
	const op = "safetensors.Get"
	if f.closed() {
		return nil, fail(op, os.ErrClosed, "%s: the file is closed", f.path)
	}
	t, ok := f.tensors[name]
	if !ok {
		return nil, fail(op, ErrNotFound, "%s has no tensor %q", f.path, name)
	}
	if !t.kind.Supported() {
		return nil, fail(op, ErrUnsupported, "%s: tensor %q: %s (safetensors %s)", f.path, name, t.kind.UnsupportedMsg(), t.dtype)
	}
	m, begin := f.m, int64(t.begin)
	p := &tensorio.Lazy{Op: op, Kind: t.kind, Little: true, Fill: func(dst []byte) error {
		return m.read(dst, begin, name)
	}}
	return tensorio.NewLazy(t.shape, p)
}

// Close unmaps and closes the file. Arrays Get returned that are still
// pending fail to evaluate afterwards (see Get). Close waits for reads in
// progress; calling it again does nothing and returns the first result.
func (f *File) Close() error {
	m := f.m
	m.mu.Lock()
	m.closed = true
	err := m.res.release()
	m.mu.Unlock()
	if err != nil {
		return fail("safetensors.Close", err, "%s: %v", f.path, err)
	}
	return nil
}

func (f *File) closed() bool {
	f.m.mu.RLock()
	defer f.m.mu.RUnlock()
	return f.m.closed
}

// read copies the bytes at offset off of the data section into dst.
func (m *mapping) read(dst []byte, off int64, name string) error {
	const op = "safetensors.Get"
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return fail(op, os.ErrClosed, "%s: tensor %q was still pending when the file was closed; evaluate arrays before File.Close, or use Load", m.path, name)
	}
	if len(dst) == 0 {
		return nil
	}
	var err error
	if data := m.res.data; data != nil {
		lo, hi := m.base+off, m.base+off+int64(len(dst))
		willNeed(data, lo, hi)
		src := data[lo:hi]
		err = copyGuarded(dst, src)
	} else {
		err = readAtParallel(m.res.f, dst, m.base+off)
	}
	if err != nil {
		return fail(op, err, "%s: reading tensor %q: %v", m.path, name, err)
	}
	return nil
}

// piece is the least a goroutine copies when a large tensor is copied by
// several.
const piece = 8 << 20

// parts splits n bytes among goroutines: one for small sizes, else up to
// GOMAXPROCS of at least piece bytes each.
func parts(n int) int {
	return max(1, min(runtime.GOMAXPROCS(0), n/piece))
}

// errFault is a fault reading mapped memory: the file shrank or its
// storage failed under the mapping.
var errFault = errors.New("the mapped file could not be read (was it truncated or changed while open?)")

// copyGuarded copies src (mapped file memory) to dst, by several
// goroutines for a large copy. A fault reading the mapping, which would
// otherwise end the process (SIGBUS when the file was truncated), is
// returned as an error.
func copyGuarded(dst, src []byte) error {
	k := parts(len(dst))
	if k == 1 {
		return copyOne(dst, src)
	}
	errs := make([]error, k)
	var wg sync.WaitGroup
	for i := range k {
		lo, hi := len(dst)*i/k, len(dst)*(i+1)/k
		wg.Go(func() { errs[i] = copyOne(dst[lo:hi], src[lo:hi]) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func copyOne(dst, src []byte) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(interface{ Addr() uintptr }); ok {
				err = errFault
				return
			}
			panic(r)
		}
	}()
	copy(dst, src)
	return nil
}

// readAtParallel fills dst from f at off, by several goroutines for a
// large read.
func readAtParallel(f *os.File, dst []byte, off int64) error {
	k := parts(len(dst))
	errs := make([]error, k)
	var wg sync.WaitGroup
	for i := range k {
		lo, hi := len(dst)*i/k, len(dst)*(i+1)/k
		wg.Go(func() {
			if _, err := f.ReadAt(dst[lo:hi], off+int64(lo)); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				errs[i] = err
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Load reads every tensor of the safetensors file at path and its
// metadata. The arrays are evaluated, on the default device, and the file
// is closed when Load returns. A tensor whose dtype fathom lacks is an
// error naming it (ErrUnsupported).
func Load(path string) (map[string]*array.Array, map[string]string, error) {
	f, err := Open(path)
	if err != nil {
		if ae, ok := err.(*array.Error); ok {
			ae.Op = "safetensors.Load"
		}
		return nil, nil, err
	}
	defer f.Close()
	out := make(map[string]*array.Array, len(f.keys))
	list := make([]*array.Array, 0, len(f.keys))
	for _, k := range f.keys {
		a, err := f.Get(k)
		if err != nil {
			if ae, ok := err.(*array.Error); ok {
				ae.Op = "safetensors.Load"
			}
			return nil, nil, err
		}
		out[k] = a
		list = append(list, a)
	}
	if err := array.Eval(list...); err != nil {
		return nil, nil, err
	}
	return out, f.Metadata(), nil
}
