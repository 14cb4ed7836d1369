package npy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/fathom-go/fathom/internal/strided"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/encoding/internal/tensorio"
)

// ErrFormat is the kind (errors.Is) of every error about data that is
// not a valid .npy or .npz file: bad magic, version or dictionary, a
// truncated file, trailing or overlapping zip members.
var ErrFormat = errors.New("not a valid npy file")

// ErrUnsupported is the kind (errors.Is) of the error for a file whose
// dtype is one numpy has and fathom has not yet (complex128), or, on
// saving, for bfloat16, which numpy lacks. Dtypes that are not numeric
// arrays (strings, objects, structured dtypes) are ErrFormat.
var ErrUnsupported = errors.New("unsupported dtype")

func fail(op string, kind error, format string, args ...any) error {
	return &array.Error{Op: op, Msg: fmt.Sprintf(format, args...), Err: kind}
}

// Save writes a to w in the .npy format (version 1.0, or 2.0 when the
// header needs it), in host byte order. It evaluates a first. A
// column-major (Fortran order) array is written as such, without a copy;
// any other is written in row-major order. Bfloat16 arrays cannot be
// saved: numpy has no bfloat16 (use encoding/safetensors, or convert with
// ops.AsType).
func Save(w io.Writer, a *array.Array) error {
	if err := prepare("npy.Save", a); err != nil {
		return err
	}
	return write(w, a)
}

// prepare checks that a can be saved and evaluates it.
func prepare(op string, a *array.Array) error {
	if a == nil {
		return fail(op, nil, "nil array")
	}
	k, ok := tensorio.FromDType(a.DType())
	if !ok || k.NPY == "" {
		return fail(op, ErrUnsupported, "numpy has no %v dtype; save it with encoding/safetensors, or convert it with ops.AsType", a.DType())
	}
	return a.Eval()
}

// write writes evaluated a.
func write(w io.Writer, a *array.Array) error {
	k, _ := tensorio.FromDType(a.DType())
	order := "<"
	switch {
	case k.Size() == 1:
		order = "|"
	case !tensorio.LittleEndian:
		order = ">"
	}
	fortran := a.Ndim() > 1 && tensorio.LayoutOf(a) == tensorio.ColumnMajor
	if _, err := w.Write(formatHeader(order+k.NPY, fortran, a.Shape())); err != nil {
		return err
	}
	return tensorio.WriteArray(w, a, tensorio.LittleEndian, fortran)
}

// Load reads one array in the .npy format from r and returns it,
// evaluated, on the default device (a GPU array's memory is a Metal
// buffer the host filled). It reads exactly the array's bytes, so arrays
// saved one after another on one stream load one after another. Data in
// either byte order loads; a Fortran-order array keeps its column-major
// layout (a transposed view of its memory, as in numpy).
//
// Malformed data is an error wrapping ErrFormat (io.EOF as well when r
// held no byte at all, io.ErrUnexpectedEOF when it ended early); a dtype
// fathom lacks is an error wrapping ErrUnsupported that names it. Memory
// is allocated only for bytes r holds: when r can tell its length (a
// file, a bytes.Reader, anything that seeks) a size beyond it is an error
// before anything is allocated, and otherwise the data is read in growing
// pieces.
func Load(r io.Reader) (*array.Array, error) {
	avail, ok := tensorio.Remaining(r)
	if !ok {
		avail = -1
	}
	return load("npy.Load", r, avail, -1)
}

// load reads one array from r. avail is how many bytes r holds (negative:
// unknown); limit, if not negative, is an upper bound the caller was told
// (a zip member's size), checked before anything is allocated.
func load(op string, r io.Reader, avail, limit int64) (*array.Array, error) {
	var pre [12]byte
	if n, err := io.ReadFull(r, pre[:8]); err != nil {
		if n == 0 && err == io.EOF {
			return nil, fail(op, errors.Join(ErrFormat, io.EOF), "no data")
		}
		return nil, fail(op, errors.Join(ErrFormat, io.ErrUnexpectedEOF), "truncated: %d bytes", n)
	}
	if string(pre[:6]) != magic {
		return nil, fail(op, ErrFormat, "bad magic %q (not an npy file)", pre[:6])
	}
	var hl, pl int
	switch major, minor := pre[6], pre[7]; {
	case major == 1 && minor == 0:
		pl = 10
	case (major == 2 || major == 3) && minor == 0:
		pl = 12
	default:
		return nil, fail(op, ErrFormat, "unknown npy version %d.%d (fathom reads 1.0, 2.0 and 3.0)", major, minor)
	}
	if _, err := io.ReadFull(r, pre[8:pl]); err != nil {
		return nil, fail(op, errors.Join(ErrFormat, io.ErrUnexpectedEOF), "truncated in the header length")
	}
	if pl == 10 {
		hl = int(binary.LittleEndian.Uint16(pre[8:]))
	} else {
		v := binary.LittleEndian.Uint32(pre[8:])
		if v > MaxHeaderLen {
			return nil, fail(op, ErrFormat, "header length %d exceeds the limit of %d bytes", v, MaxHeaderLen)
		}
		hl = int(v)
	}
	if avail >= 0 {
		avail -= int64(pl)
		if int64(hl) > avail {
			return nil, fail(op, errors.Join(ErrFormat, io.ErrUnexpectedEOF), "truncated header: its length %d exceeds the %d bytes that follow", hl, avail)
		}
		avail -= int64(hl)
	}
	if limit >= 0 {
		limit -= int64(pl) + int64(hl)
		if limit < 0 {
			return nil, fail(op, ErrFormat, "header length %d exceeds the member's size", hl)
		}
	}
	text, err := io.ReadAll(io.LimitReader(r, int64(hl)))
	if err != nil {
		return nil, fail(op, err, "reading the header: %v", err)
	}
	if len(text) < hl {
		return nil, fail(op, errors.Join(ErrFormat, io.ErrUnexpectedEOF), "truncated header: %d of %d bytes", len(text), hl)
	}
	h, err := parseHeader(text)
	if err != nil {
		var de dtypeError
		if errors.As(err, &de) {
			return nil, fail(op, ErrUnsupported, "%s", de.msg)
		}
		return nil, fail(op, ErrFormat, "%v", err)
	}
	if limit >= 0 && int64(h.nbytes) > limit {
		return nil, fail(op, errors.Join(ErrFormat, io.ErrUnexpectedEOF), "shape %v of %s needs %d bytes; the member holds %d after its header", h.shape, h.kind.Name, h.nbytes, limit)
	}
	s := array.CurrentStream()
	st, err := tensorio.ReadStorage(r, h.nbytes, avail, s)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			have := "fewer"
			if avail >= 0 {
				have = fmt.Sprint(avail)
			}
			return nil, fail(op, errors.Join(ErrFormat, io.ErrUnexpectedEOF), "truncated: shape %v of %s needs %d bytes of data, %s remain", h.shape, h.kind.Name, h.nbytes, have)
		}
		var ae *array.Error
		if errors.As(err, &ae) {
			return nil, err
		}
		return nil, fail(op, err, "reading the data: %v", err)
	}
	b := st.Bytes()[:h.nbytes]
	tensorio.Fix(h.kind, b, h.little)
	strides := strided.RowMajor(h.shape)
	if h.fortran {
		strides = tensorio.ColumnMajorStrides(h.shape)
	}
	var a *array.Array
	if err := array.Try(func() { a = array.FromStorage(s, h.shape, h.kind.DType, st, strides, 0) }); err != nil {
		return nil, err
	}
	return a, nil
}

// SaveFile writes a to the file at path in the .npy format (see Save),
// atomically: it writes a temporary file in the same directory, syncs
// it, and renames it over path, so a failure at any point (a full disk,
// an array that fails to evaluate, a crash) leaves the old file whole.
func SaveFile(path string, a *array.Array) error {
	const op = "npy.SaveFile"
	if err := prepare(op, a); err != nil {
		return err
	}
	if err := tensorio.WriteFileAtomic(path, func(w io.Writer) error { return write(w, a) }); err != nil {
		return fail(op, err, "%s: %v", path, err)
	}
	return nil
}

// LoadFile reads the array in the .npy file at path (see Load). The
// array is read whole, at once: the file is closed when LoadFile returns.
// Bytes after the array are ignored, as numpy ignores them.
func LoadFile(path string) (*array.Array, error) {
	const op = "npy.LoadFile"
	f, err := os.Open(path)
	if err != nil {
		return nil, fail(op, err, "%v", err)
	}
	defer f.Close()
	avail, ok := tensorio.Remaining(f)
	if !ok {
		avail = -1
	}
	a, err := load(op, f, avail, -1)
	if err != nil {
		if ae, ok := err.(*array.Error); ok {
			ae.Msg = path + ": " + ae.Msg
		}
		return nil, err
	}
	return a, nil
}
