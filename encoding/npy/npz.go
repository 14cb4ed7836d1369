package npy

import (
	"archive/zip"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/encoding/internal/tensorio"
)

// zipTime is the modification time of every member SaveNPZ writes, so
// that the same arrays give the same bytes.
var zipTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// SaveNPZ writes arrays to the file at path as numpy's savez does (or
// savez_compressed, when compressed): a zip archive with one member
// "name.npy" per array, in the order of the names. It evaluates the
// arrays first and writes atomically, as SaveFile does.
func SaveNPZ(path string, arrays map[string]*array.Array, compressed bool) error {
	const op = "npy.SaveNPZ"
	names := make([]string, 0, len(arrays))
	list := make([]*array.Array, 0, len(arrays))
	for name := range arrays {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		a := arrays[name]
		if a == nil {
			return fail(op, nil, "array %q is nil", name)
		}
		if k, ok := tensorio.FromDType(a.DType()); !ok || k.NPY == "" {
			return fail(op, ErrUnsupported, "array %q: numpy has no %v dtype; save it with encoding/safetensors, or convert it with ops.AsType", name, a.DType())
		}
		list = append(list, a)
	}
	if err := array.Eval(list...); err != nil {
		return err
	}
	method := zip.Store
	if compressed {
		method = zip.Deflate
	}
	err := tensorio.WriteFileAtomic(path, func(w io.Writer) error {
		zw := zip.NewWriter(w)
		for i, name := range names {
			fh := &zip.FileHeader{Name: name + ".npy", Method: method, Modified: zipTime}
			fh.SetMode(0o644)
			mw, err := zw.CreateHeader(fh)
			if err != nil {
				return err
			}
			if err := write(mw, list[i]); err != nil {
				return err
			}
		}
		return zw.Close()
	})
	if err != nil {
		return fail(op, err, "%s: %v", path, err)
	}
	return nil
}

// LoadNPZ reads every array of the .npz file at path (written by numpy's
// savez or savez_compressed, or by SaveNPZ), keyed by member name without
// ".npy". Every member must be an .npy file: another member, two members
// of one name, or members whose data overlap (a zip bomb's trick) are
// errors wrapping ErrFormat. Member checksums are verified. Memory is
// allocated only for data the archive holds: a member's size, as its
// header states it, bounds what is allocated before its bytes are read,
// and compressed data is read in growing pieces.
func LoadNPZ(path string) (map[string]*array.Array, error) {
	const op = "npy.LoadNPZ"
	f, err := os.Open(path)
	if err != nil {
		return nil, fail(op, err, "%v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fail(op, err, "%v", err)
	}
	out, err := loadZip(op, f, fi.Size())
	if err != nil {
		if ae, ok := err.(*array.Error); ok {
			ae.Msg = path + ": " + ae.Msg
		}
		return nil, err
	}
	return out, nil
}

// loadZip reads the arrays of the zip archive in r, of size bytes.
func loadZip(op string, r io.ReaderAt, size int64) (map[string]*array.Array, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, fail(op, errors.Join(ErrFormat, err), "not a zip archive: %v", err)
	}
	type span struct {
		lo, hi int64
		name   string
	}
	spans := make([]span, 0, len(zr.File))
	keys := map[string]bool{}
	for _, zf := range zr.File {
		key, ok := strings.CutSuffix(zf.Name, ".npy")
		if !ok {
			return nil, fail(op, ErrFormat, "member %q is not an .npy array", zf.Name)
		}
		if keys[key] {
			return nil, fail(op, ErrFormat, "two members are named %q", zf.Name)
		}
		keys[key] = true
		if zf.Method != zip.Store && zf.Method != zip.Deflate {
			return nil, fail(op, ErrFormat, "member %q: unknown compression method %d", zf.Name, zf.Method)
		}
		off, err := zf.DataOffset()
		if err != nil {
			return nil, fail(op, errors.Join(ErrFormat, err), "member %q: %v", zf.Name, err)
		}
		if off < 0 || zf.CompressedSize64 > uint64(size) || off > size-int64(zf.CompressedSize64) {
			return nil, fail(op, errors.Join(ErrFormat, io.ErrUnexpectedEOF), "member %q: its %d bytes run past the end of the archive", zf.Name, zf.CompressedSize64)
		}
		if zf.Method == zip.Store && zf.UncompressedSize64 != zf.CompressedSize64 {
			return nil, fail(op, ErrFormat, "member %q: stored, but its sizes differ (%d and %d)", zf.Name, zf.CompressedSize64, zf.UncompressedSize64)
		}
		spans = append(spans, span{off, off + int64(zf.CompressedSize64), zf.Name})
	}
	slices.SortFunc(spans, func(a, b span) int {
		if a.lo != b.lo {
			if a.lo < b.lo {
				return -1
			}
			return 1
		}
		return 0
	})
	for i := 1; i < len(spans); i++ {
		if spans[i].lo < spans[i-1].hi {
			return nil, fail(op, ErrFormat, "members %q and %q overlap", spans[i-1].name, spans[i].name)
		}
	}
	out := make(map[string]*array.Array, len(zr.File))
	for _, zf := range zr.File {
		key := strings.TrimSuffix(zf.Name, ".npy")
		a, err := loadMember(op, zf)
		if err != nil {
			if ae, ok := err.(*array.Error); ok {
				ae.Msg = "member " + zf.Name + ": " + ae.Msg
				return nil, ae
			}
			return nil, err
		}
		out[key] = a
	}
	return out, nil
}

func loadMember(op string, zf *zip.File) (*array.Array, error) {
	rc, err := zf.Open()
	if err != nil {
		return nil, fail(op, errors.Join(ErrFormat, err), "%v", err)
	}
	defer rc.Close()
	avail := int64(-1)
	if zf.Method == zip.Store {
		avail = int64(zf.UncompressedSize64)
	}
	limit := int64(min(zf.UncompressedSize64, 1<<62))
	a, err := load(op, rc, avail, limit)
	if err != nil {
		return nil, err
	}
	// Read to the end, which checks the member's CRC.
	n, err := io.Copy(io.Discard, io.LimitReader(rc, 1))
	if err != nil {
		return nil, fail(op, errors.Join(ErrFormat, err), "%v", err)
	}
	if n > 0 {
		return nil, fail(op, ErrFormat, "bytes follow the array")
	}
	return a, nil
}
