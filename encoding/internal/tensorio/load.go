package tensorio

import (
	"io"
	"os"

	"github.com/fathom-go/fathom/internal/strided"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal"
)

// Alloc returns n bytes of storage for an array of stream s: pooled CPU
// memory, or on the GPU a Metal buffer (shared memory, which the host
// fills). Memory the machine cannot give is an error, not a panic.
func Alloc(s array.Stream, n int) (st *array.Storage, err error) {
	if s.Device.Type == array.DeviceGPU {
		return metal.Alloc(n)
	}
	err = array.Try(func() { st = array.AllocCPU(n) })
	return st, err
}

// Lazy is the primitive of an array read from a file when it is
// evaluated: Eval allocates the output on its stream's device, calls Fill
// with its bytes, and fixes their byte order and booleans (Fix).
type Lazy struct {
	Op     string // the loader, as errors name it: "safetensors.Get"
	Kind   Kind
	Little bool // the file's byte order
	// Fill writes the array's bytes, row-major, into dst.
	Fill func(dst []byte) error
}

// Name returns the loader's name.
func (p *Lazy) Name() string { return p.Op }

// Eval reads the array.
func (p *Lazy) Eval(s array.Stream, _, out []*array.Array) error {
	o := out[0]
	n := o.NBytes()
	st, err := Alloc(s, n)
	if err != nil {
		return err
	}
	b := st.Bytes()[:n]
	if err := p.Fill(b); err != nil {
		return err
	}
	Fix(p.Kind, b, p.Little)
	o.SetData(st, strided.RowMajor(o.Shape()), 0)
	return nil
}

// NewLazy returns a pending array of the given shape and kind, on the
// current stream, that p fills when evaluated.
func NewLazy(shape []int, p *Lazy) (a *array.Array, err error) {
	err = array.Try(func() { a = array.New(array.CurrentStream(), shape, p.Kind.DType, p) })
	return a, err
}

// Remaining returns how many bytes r can still give, when r can tell
// without being read: a bytes.Reader or strings.Reader (Len), a regular
// file or anything else that seeks.
func Remaining(r io.Reader) (int64, bool) {
	switch v := r.(type) {
	case interface{ Len() int }:
		return int64(v.Len()), true
	case *os.File:
		fi, err := v.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return 0, false
		}
		cur, err := v.Seek(0, io.SeekCurrent)
		if err != nil {
			return 0, false
		}
		return max(fi.Size()-cur, 0), true
	case io.Seeker:
		cur, err := v.Seek(0, io.SeekCurrent)
		if err != nil {
			return 0, false
		}
		end, err := v.Seek(0, io.SeekEnd)
		if _, err2 := v.Seek(cur, io.SeekStart); err != nil || err2 != nil {
			return 0, false
		}
		return max(end-cur, 0), true
	}
	return 0, false
}

// ReadStorage reads exactly n bytes from r into new storage for stream s.
// avail is how many bytes r can give, or negative if unknown. Memory is
// never allocated for bytes that are not there: with avail known, n
// beyond it is io.ErrUnexpectedEOF before anything is allocated; with
// avail unknown, the bytes are read in growing chunks, and the storage is
// allocated only once half of them have arrived, so a stream that claims
// gigabytes and holds kilobytes costs kilobytes.
func ReadStorage(r io.Reader, n int, avail int64, s array.Stream) (*array.Storage, error) {
	if avail >= 0 && int64(n) > avail {
		return nil, io.ErrUnexpectedEOF
	}
	const small = 64 << 10
	if avail >= 0 || n <= small {
		st, err := Alloc(s, n)
		if err != nil {
			return nil, err
		}
		if _, err := io.ReadFull(r, st.Bytes()[:n]); err != nil {
			return nil, eof(err)
		}
		return st, nil
	}
	var chunks [][]byte
	got := 0
	size := small
	for got < n/2 {
		c := make([]byte, min(size, n-got))
		if _, err := io.ReadFull(r, c); err != nil {
			return nil, eof(err)
		}
		chunks = append(chunks, c)
		got += len(c)
		size = min(2*size, 64<<20)
	}
	st, err := Alloc(s, n)
	if err != nil {
		return nil, err
	}
	b := st.Bytes()[:n]
	off := 0
	for i, c := range chunks {
		off += copy(b[off:], c)
		chunks[i] = nil
	}
	if _, err := io.ReadFull(r, b[off:]); err != nil {
		return nil, eof(err)
	}
	return st, nil
}

// eof reports a stream that ended early as io.ErrUnexpectedEOF.
func eof(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
