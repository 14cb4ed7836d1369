package npy

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
)

// npyFile returns an .npy file of the given version with dict as its
// header (padded as numpy pads) followed by data.
func npyFile(major byte, dict string, data []byte) []byte {
	b := []byte(magic)
	b = append(b, major, 0)
	if major == 1 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(dict)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(dict)))
	}
	b = append(b, dict...)
	return append(b, data...)
}

func dict(descr, order, shape string) string {
	return "{'descr': " + descr + ", 'fortran_order': " + order + ", 'shape': " + shape + ", }\n"
}

// withLength returns a preamble that claims a header of n bytes (version
// 2.0), followed by pad bytes.
func withLength(n uint32, pad int) []byte {
	b := []byte(magic + "\x02\x00")
	b = binary.LittleEndian.AppendUint32(b, n)
	return append(b, make([]byte, pad)...)
}

// hostileNPY is every kind of malformed .npy input the loader must reject
// with an error (never a panic, a hang or a huge allocation). kind is the
// error kind it must wrap; msg a part of its text.
var hostileNPY = []struct {
	name string
	data []byte
	kind error
	msg  string
}{
	{"empty", nil, io.EOF, "no data"},
	{"short magic", []byte("\x93NUM"), io.ErrUnexpectedEOF, "truncated"},
	{"bad magic", []byte("\x93NUMPZ\x01\x00\x10\x00{}"), ErrFormat, "bad magic"},
	{"zip, not npy", []byte("PK\x03\x04\x14\x00\x00\x00\x00\x00"), ErrFormat, "bad magic"},
	{"version 0.0", []byte(magic + "\x00\x00\x10\x00"), ErrFormat, "version 0.0"},
	{"version 4.0", []byte(magic + "\x04\x00\x10\x00\x00\x00"), ErrFormat, "version 4.0"},
	{"version 1.1", []byte(magic + "\x01\x01\x10\x00"), ErrFormat, "version 1.1"},
	{"truncated length", []byte(magic + "\x02\x00\x10"), io.ErrUnexpectedEOF, "header length"},
	{"header beyond the file", npyFile(1, dict("'<f4'", "False", "(1,)"), nil)[:40], io.ErrUnexpectedEOF, "truncated header"},
	{"2 GB header in 1 KB", withLength(2<<30, 1000), ErrFormat, "exceeds the limit"},
	{"4 GB header", withLength(1<<32-1, 10), ErrFormat, "exceeds the limit"},
	{"header within limit, beyond the file", withLength(1<<20, 1000), io.ErrUnexpectedEOF, "truncated header"},
	{"empty header", npyFile(1, "", nil), ErrFormat, "not a dictionary"},
	{"not a dict", npyFile(1, "['descr', '<f4']\n", nil), ErrFormat, "not a dictionary"},
	{"unclosed dict", npyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)\n", nil), ErrFormat, "expected"},
	{"no newline, no close", npyFile(1, "{'descr': '<f4'", nil), ErrFormat, "expected"},
	{"missing shape", npyFile(1, "{'descr': '<f4', 'fortran_order': False}\n", nil), ErrFormat, `no "shape"`},
	{"missing descr", npyFile(1, "{'shape': (1,), 'fortran_order': False}\n", nil), ErrFormat, `no "descr"`},
	{"extra key", npyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}\n", nil), ErrFormat, `unexpected key "x"`},
	{"duplicate key", npyFile(1, "{'descr': '<f4', 'descr': '<f8', 'fortran_order': False, 'shape': (1,)}\n", nil), ErrFormat, "twice"},
	{"key not a string", npyFile(1, "{1: '<f4'}\n", nil), ErrFormat, "quoted string"},
	{"descr not a string", npyFile(1, dict("4", "False", "(1,)"), nil), ErrFormat, "quoted string"},
	{"structured descr", npyFile(1, dict("[('a', '<f4')]", "False", "(1,)"), nil), ErrFormat, "structured"},
	{"unterminated string", npyFile(1, "{'descr': '<f4", nil), ErrFormat, "unterminated"},
	{"escape in string", npyFile(1, dict(`'<f\4'`, "False", "(1,)"), nil), ErrFormat, "escape"},
	{"fortran_order not bool", npyFile(1, dict("'<f4'", "1", "(1,)"), nil), ErrFormat, "True or False"},
	{"shape not a tuple", npyFile(1, dict("'<f4'", "False", "[1]"), nil), ErrFormat, "tuple"},
	{"shape (3) is an int", npyFile(1, dict("'<f4'", "False", "(3)"), make([]byte, 12)), ErrFormat, "not a tuple"},
	{"negative dimension", npyFile(1, dict("'<f4'", "False", "(-5,)"), nil), ErrFormat, "non-negative"},
	{"float dimension", npyFile(1, dict("'<f4'", "False", "(1.5,)"), nil), ErrFormat, "expected ','"},
	{"dimension too large", npyFile(1, dict("'<f4'", "False", "(99999999999999999999,)"), nil), ErrFormat, "too large"},
	{"shape overflows", npyFile(1, dict("'<f4'", "False", "(4294967296, 4294967296, 16)"), nil), ErrFormat, "too many elements"},
	{"bytes overflow", npyFile(1, dict("'<f8'", "False", "(4611686018427387904,)"), nil), ErrFormat, "more bytes"},
	{"too many dimensions", npyFile(1, dict("'<f4'", "False", "("+strings.Repeat("1, ", 65)+")"), nil), ErrFormat, "more than 64"},
	{"text after the dict", npyFile(1, dict("'<f4'", "False", "(1,)")+"x", make([]byte, 4)), ErrFormat, "after the dictionary"},
	{"unknown dtype", npyFile(1, dict("'<x4'", "False", "(1,)"), make([]byte, 4)), ErrFormat, `"<x4"`},
	{"object dtype", npyFile(1, dict("'|O'", "False", "(1,)"), make([]byte, 8)), ErrFormat, `"|O"`},
	{"unicode dtype", npyFile(1, dict("'<U3'", "False", "(1,)"), make([]byte, 12)), ErrFormat, `"<U3"`},
	{"long double", npyFile(1, dict("'<f16'", "False", "(1,)"), make([]byte, 16)), ErrFormat, `"<f16"`},
	{"complex128 is not yet", npyFile(1, dict("'<c16'", "False", "(1,)"), make([]byte, 16)), ErrUnsupported, `complex128 is not supported yet: fathom has no complex128 arrays (numpy "<c16")`},
	{"big-endian complex128 is not yet", npyFile(1, dict("'>c16'", "True", "(2, 2)"), make([]byte, 64)), ErrUnsupported, `complex128 is not supported yet: fathom has no complex128 arrays (numpy ">c16")`},
	{"complex128 before a truncated shape", npyFile(1, dict("'<c16'", "False", "(268435456,)"), make([]byte, 100)), ErrUnsupported, "complex128 is not supported yet"},
	{"three-byte integer", npyFile(1, dict("'<i3'", "False", "(1,)"), make([]byte, 3)), ErrFormat, `dtype "<i3"`},
	{"truncated uint64", npyFile(1, dict("'>u8'", "False", "(2,)"), make([]byte, 15)), io.ErrUnexpectedEOF, "needs 16 bytes"},
	{"truncated int16", npyFile(1, dict("'<i2'", "True", "(3, 3)"), make([]byte, 17)), io.ErrUnexpectedEOF, "needs 18 bytes"},
	{"truncated data", npyFile(1, dict("'<f4'", "False", "(3,)"), make([]byte, 11)), io.ErrUnexpectedEOF, "needs 12 bytes"},
	{"1 KB claims 1 GB of data", npyFile(1, dict("'<f4'", "False", "(268435456,)"), make([]byte, 1000)), io.ErrUnexpectedEOF, "needs 1073741824 bytes"},
	{"1 KB claims 2 GB of data", npyFile(2, dict("'<f8'", "True", "(16384, 16384)"), make([]byte, 1000)), io.ErrUnexpectedEOF, "needs 2147483648 bytes"},
	{"NUL in header", npyFile(1, "{'descr': '<f4',\x00 'fortran_order': False, 'shape': (1,)}\n", nil), ErrFormat, "expected"},
}

// TestHostileNPY: every case is an error of its kind, through a reader
// that tells its length and one that does not.
func TestHostileNPY(t *testing.T) {
	for _, c := range hostileNPY {
		for _, r := range []io.Reader{bytes.NewReader(c.data), opaque{bytes.NewReader(c.data)}} {
			a, err := Load(r)
			var ae *array.Error
			if err == nil || a != nil || !errors.As(err, &ae) {
				t.Errorf("%s (%T): %v, %v: want an *array.Error", c.name, r, a, err)
				continue
			}
			if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("%s (%T): %v: want %v containing %q", c.name, r, err, c.kind, c.msg)
			}
			if c.kind == io.ErrUnexpectedEOF && !errors.Is(err, ErrFormat) {
				t.Errorf("%s: %v is not ErrFormat", c.name, err)
			}
		}
	}
}

// allocated returns the bytes f allocates on the heap.
func allocated(f func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	f()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

// TestLyingSizesAllocateLittle: a 1 KB file that claims a 2 GB header or
// a 1-2 GB array allocates less than a megabyte, whether the loader knows
// the input's length or not, and through npz.
func TestLyingSizesAllocateLittle(t *testing.T) {
	for _, c := range hostileNPY {
		if !strings.Contains(c.name, "GB") {
			continue
		}
		for _, mk := range []func() io.Reader{
			func() io.Reader { return bytes.NewReader(c.data) },
			func() io.Reader { return opaque{bytes.NewReader(c.data)} },
		} {
			n := allocated(func() {
				for range 4 {
					if _, err := Load(mk()); err == nil {
						t.Fatal("no error")
					}
				}
			}) / 4
			if n > 256<<10 {
				t.Errorf("%s (%T): Load allocated %d bytes", c.name, mk(), n)
			}
		}
	}
	// The same inside an npz, stored and compressed: the member's own
	// size bounds what is allocated.
	dir := t.TempDir()
	for _, method := range []uint16{zip.Store, zip.Deflate} {
		path := filepath.Join(dir, "lie.npz")
		data := npyFile(1, dict("'<f4'", "False", "(536870912,)"), make([]byte, 1000))
		if err := os.WriteFile(path, zipOf(t, method, map[string][]byte{"a.npy": data}), 0o644); err != nil {
			t.Fatal(err)
		}
		n := allocated(func() {
			if _, err := LoadNPZ(path); !errors.Is(err, ErrFormat) {
				t.Errorf("method %d: %v", method, err)
			}
		})
		if n > 1<<20 {
			t.Errorf("npz (method %d) claiming 2 GB: LoadNPZ allocated %d bytes", method, n)
		}
	}
}

// zipOf returns a zip archive of the given members, in name order.
func zipOf(t testing.TB, method uint16, members map[string][]byte) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	names := make([]string, 0, len(members))
	for n := range members {
		names = append(names, n)
	}
	slicesSort(names)
	for _, n := range names {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: n, Method: method})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(members[n])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func slicesSort(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func goodNPY(t testing.TB) []byte {
	var buf bytes.Buffer
	if err := Save(&buf, array.FromSlice([]float32{1, 2, 3})); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// overlapping returns a zip whose two central-directory entries point at
// one member's data: the trick of non-recursive zip bombs.
func overlapping(t testing.TB) []byte {
	z := zipOf(t, zip.Store, map[string][]byte{"a.npy": goodNPY(t)})
	// Duplicate the central directory entry under another name.
	eocd := bytes.LastIndex(z, []byte("PK\x05\x06"))
	cdOff := int(binary.LittleEndian.Uint32(z[eocd+16:]))
	cd := append([]byte(nil), z[cdOff:eocd]...)
	cd2 := append([]byte(nil), cd...)
	// the name is at offset 46 of the entry: "a.npy" -> "b.npy"
	cd2[46] = 'b'
	out := append(append(append([]byte(nil), z[:cdOff]...), cd...), cd2...)
	end := append([]byte(nil), z[eocd:]...)
	binary.LittleEndian.PutUint16(end[8:], 2)
	binary.LittleEndian.PutUint16(end[10:], 2)
	binary.LittleEndian.PutUint32(end[12:], uint32(2*len(cd)))
	binary.LittleEndian.PutUint32(end[16:], uint32(cdOff))
	return append(out, end...)
}

// hostileNPZ is every kind of malformed .npz the loader must reject.
func hostileNPZ(t testing.TB) []struct {
	name string
	data []byte
	msg  string
} {
	good := goodNPY(t)
	stored := zipOf(t, zip.Store, map[string][]byte{"a.npy": good})
	corrupt := append([]byte(nil), stored...)
	corrupt[bytes.Index(corrupt, []byte("NUMPY"))+130] ^= 0xff // in the data: a CRC mismatch
	truncated := stored[:len(stored)-30]
	return []struct {
		name string
		data []byte
		msg  string
	}{
		{"empty", nil, "not a zip"},
		{"not a zip", good, "not a zip"},
		{"truncated archive", truncated, "not a zip"},
		{"member not npy", zipOf(t, zip.Store, map[string][]byte{"a.npy": good, "readme.txt": []byte("hi")}), `"readme.txt" is not an .npy`},
		{"duplicate members", zipOf2(t, "a.npy", "a.npy", good), "two members"},
		{"overlapping members", overlapping(t), "overlap"},
		{"member with bad npy", zipOf(t, zip.Deflate, map[string][]byte{"a.npy": good[:len(good)-1]}), "needs 12 bytes"},
		{"member with garbage", zipOf(t, zip.Store, map[string][]byte{"a.npy": []byte("garbage!garbage!")}), "bad magic"},
		{"bytes after the array", zipOf(t, zip.Deflate, map[string][]byte{"a.npy": append(append([]byte(nil), good...), 0)}), "bytes follow"},
		{"corrupt data", corrupt, "checksum"},
		{"unsupported dtype", zipOf(t, zip.Store, map[string][]byte{"a.npy": npyFile(1, dict("'<c16'", "False", "(2,)"), make([]byte, 32))}), "complex128 is not supported yet"},
		{"unsupported dtype after a good member", zipOf(t, zip.Deflate, map[string][]byte{"a.npy": good, "b.npy": npyFile(1, dict("'>c16'", "False", "()"), make([]byte, 16))}), "member b.npy: dtype complex128 is not supported yet"},
	}
}

// zipOf2 writes two members, possibly of one name.
func zipOf2(t testing.TB, n1, n2 string, data []byte) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range []string{n1, n2} {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	zw.Close()
	return buf.Bytes()
}

func TestHostileNPZ(t *testing.T) {
	for _, c := range hostileNPZ(t) {
		out, err := loadZip("npy.LoadNPZ", bytes.NewReader(c.data), int64(len(c.data)))
		var ae *array.Error
		if err == nil || out != nil || !errors.As(err, &ae) {
			t.Errorf("%s: %v, %v: want an *array.Error", c.name, out, err)
			continue
		}
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v: want %q", c.name, err, c.msg)
		}
		if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v is neither ErrFormat nor ErrUnsupported", c.name, err)
		}
	}
}

func TestMissingFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadFile(filepath.Join(dir, "none.npy")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadFile: %v", err)
	}
	if _, err := LoadNPZ(filepath.Join(dir, "none.npz")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadNPZ: %v", err)
	}
}
