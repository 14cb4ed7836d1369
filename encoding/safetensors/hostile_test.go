package safetensors

import (
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

// stFile returns a file with the given header and data bytes.
func stFile(header string, data int) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	b = append(b, header...)
	return append(b, make([]byte, data)...)
}

// claim returns a file that claims a header of n bytes and holds pad.
func claim(n uint64, pad int) []byte {
	return append(binary.LittleEndian.AppendUint64(nil, n), make([]byte, pad)...)
}

const f32x2 = `"dtype":"F32","shape":[2]`

// hostile is every kind of malformed file Open must reject with an error
// wrapping ErrFormat (never a panic, a hang or a huge allocation); msg is
// part of its text.
var hostile = []struct {
	name string
	data []byte
	msg  string
}{
	{"empty file", nil, "too short"},
	{"7 bytes", []byte{1, 2, 3, 4, 5, 6, 7}, "too short"},
	{"header beyond the file", claim(100, 50), "exceeds the 50 bytes"},
	{"2 GB header in 1 KB", claim(2<<30, 1000), "exceeds the limit"},
	{"header of 2^64-1", claim(1<<64-1, 8), "exceeds the limit"},
	{"header just above 100 MB", claim(MaxHeaderSize+1, 8), "exceeds the limit"},
	{"header not UTF-8", stFile("{\"\xff\":1}", 0), "UTF-8"},
	{"header not an object", stFile(`["a"]`, 0), "start with '{'"},
	{"header with leading space", stFile(` {}`, 0), "start with '{'"},
	{"header not JSON", stFile(`{"a":`, 0), "invalid JSON"},
	{"header truncated JSON", stFile(`{"a":{"dtype":"F32"`, 0), "invalid JSON"},
	{"text after the object", stFile(`{} x`, 0), "text after"},
	{"second object", stFile(`{}{}`, 0), "text after"},
	{"NUL padding", stFile("{}\x00\x00", 0), "text after"},
	{"duplicate tensor", stFile(`{"a":{`+f32x2+`,"data_offsets":[0,8]},"a":{`+f32x2+`,"data_offsets":[8,16]}}`, 16), `"a" appears twice`},
	{"duplicate metadata", stFile(`{"__metadata__":{},"__metadata__":{}}`, 0), "appears twice"},
	{"duplicate metadata key", stFile(`{"__metadata__":{"k":"1","k":"2"}}`, 0), `key "k" appears twice`},
	{"metadata not an object", stFile(`{"__metadata__":"x"}`, 0), "expected a JSON object"},
	{"metadata value not a string", stFile(`{"__metadata__":{"k":1}}`, 0), "not a string"},
	{"metadata deeply nested", stFile(`{"__metadata__":{"k":`+strings.Repeat("[", 20000)+strings.Repeat("]", 20000)+`}}`, 0), "__metadata__"},
	{"tensor not an object", stFile(`{"a":[1,2]}`, 0), "not a JSON object"},
	{"tensor null", stFile(`{"a":null}`, 0), "not a JSON object"},
	{"missing dtype", stFile(`{"a":{"shape":[2],"data_offsets":[0,8]}}`, 8), `no "dtype"`},
	{"missing shape", stFile(`{"a":{"dtype":"F32","data_offsets":[0,8]}}`, 8), `no "shape"`},
	{"missing offsets", stFile(`{"a":{`+f32x2+`}}`, 8), `no "data_offsets"`},
	{"duplicate field", stFile(`{"a":{`+f32x2+`,"dtype":"F64","data_offsets":[0,8]}}`, 8), `"dtype" appears twice`},
	{"dtype not a string", stFile(`{"a":{"dtype":4,"shape":[2],"data_offsets":[0,8]}}`, 8), "not a string"},
	{"unknown dtype", stFile(`{"a":{"dtype":"F128","shape":[2],"data_offsets":[0,32]}}`, 32), `unknown dtype "F128"`},
	{"lower-case dtype", stFile(`{"a":{"dtype":"f32","shape":[2],"data_offsets":[0,8]}}`, 8), `unknown dtype "f32"`},
	{"shape null", stFile(`{"a":{"dtype":"F32","shape":null,"data_offsets":[0,8]}}`, 8), "not an array"},
	{"shape negative", stFile(`{"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`, 8), "not a non-negative"},
	{"shape float", stFile(`{"a":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}}`, 8), "not a non-negative"},
	{"shape exponent", stFile(`{"a":{"dtype":"F32","shape":[2e0],"data_offsets":[0,8]}}`, 8), "not a non-negative"},
	{"shape string", stFile(`{"a":{"dtype":"F32","shape":["2"],"data_offsets":[0,8]}}`, 8), "shape"},
	{"dimension beyond int", stFile(`{"a":{"dtype":"F32","shape":[18446744073709551615],"data_offsets":[0,8]}}`, 8), "not a non-negative int"},
	{"shape overflows", stFile(`{"a":{"dtype":"F32","shape":[4294967296,4294967296,2],"data_offsets":[0,8]}}`, 8), "more bytes than can be counted"},
	{"bytes overflow", stFile(`{"a":{"dtype":"F64","shape":[4611686018427387904],"data_offsets":[0,8]}}`, 8), "more bytes than can be counted"},
	{"U64 bytes overflow", stFile(`{"a":{"dtype":"U64","shape":[2305843009213693952],"data_offsets":[0,8]}}`, 8), "more bytes than can be counted"},
	{"I16 offsets do not match the shape", stFile(`{"a":{"dtype":"I16","shape":[3],"data_offsets":[0,8]}}`, 8), "is 6 bytes, but data_offsets [0, 8] hold 8"},
	{"U32 runs past the data", stFile(`{"a":{"dtype":"U32","shape":[2,2],"data_offsets":[0,16]}}`, 12), "run past"},
	{"unsupported dtype, bad offsets", stFile(`{"a":{"dtype":"F8_E5M2","shape":[4],"data_offsets":[0,5]}}`, 5), "is 4 bytes, but data_offsets [0, 5] hold 5"},
	{"too many dimensions", stFile(`{"a":{"dtype":"F32","shape":[`+strings.Repeat("1,", 64)+`1],"data_offsets":[0,4]}}`, 4), "dimensions"},
	{"offsets not two", stFile(`{"a":{`+f32x2+`,"data_offsets":[0,8,16]}}`, 8), "not 2"},
	{"offsets negative", stFile(`{"a":{`+f32x2+`,"data_offsets":[-8,0]}}`, 8), "not a non-negative"},
	{"offsets reversed", stFile(`{"a":{`+f32x2+`,"data_offsets":[8,0]}}`, 8), "end before they begin"},
	{"offsets do not match the shape", stFile(`{"a":{`+f32x2+`,"data_offsets":[0,12]}}`, 12), "is 8 bytes, but data_offsets [0, 12] hold 12"},
	{"offsets overlap", stFile(`{"a":{`+f32x2+`,"data_offsets":[0,8]},"b":{`+f32x2+`,"data_offsets":[4,12]}}`, 12), "overlap"},
	{"offsets leave a gap", stFile(`{"a":{`+f32x2+`,"data_offsets":[0,8]},"b":{`+f32x2+`,"data_offsets":[12,20]}}`, 20), "gap"},
	{"offsets do not start at 0", stFile(`{"a":{`+f32x2+`,"data_offsets":[4,12]}}`, 12), "gap"},
	{"offsets run past the data", stFile(`{"a":{`+f32x2+`,"data_offsets":[0,8]}}`, 4), "run past"},
	{"bytes left over", stFile(`{"a":{`+f32x2+`,"data_offsets":[0,8]}}`, 9), "cover 8 bytes of data, but the file has 9"},
	{"data without tensors", stFile(`{}`, 4), "cover 0 bytes"},
	{"1 KB claims a 2 GB tensor", stFile(`{"a":{"dtype":"F32","shape":[536870912],"data_offsets":[0,2147483648]}}`, 900), "run past"},
	{"1 KB claims 2^62 bytes", stFile(`{"a":{"dtype":"U8","shape":[4611686018427387904],"data_offsets":[0,4611686018427387904]}}`, 900), "run past"},
	{"sub-byte dtype, odd count", stFile(`{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}}`, 2), "whole number of bytes"},
}

func writeTemp(t testing.TB, data []byte) string {
	path := filepath.Join(t.TempDir(), "x.safetensors")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestHostile(t *testing.T) {
	for _, c := range hostile {
		path := writeTemp(t, c.data)
		f, err := Open(path)
		var ae *array.Error
		if err == nil || f != nil || !errors.As(err, &ae) || ae.Op != "safetensors.Open" {
			t.Errorf("%s: %v, %v: want an *array.Error of safetensors.Open", c.name, f, err)
			continue
		}
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v: want ErrFormat containing %q", c.name, err, c.msg)
		}
		if strings.Contains(c.msg, "exceeds") || strings.Contains(c.msg, "short") {
			if !errors.Is(err, io.ErrUnexpectedEOF) && !strings.Contains(c.msg, "limit") {
				t.Errorf("%s: %v is not io.ErrUnexpectedEOF", c.name, err)
			}
		}
		if _, _, err := Load(path); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: Load: %v", c.name, err)
		}
	}
}

// TestValidEdgeCases: what the format allows, loads.
func TestValidEdgeCases(t *testing.T) {
	for _, c := range []struct {
		name, header string
		data         int
		keys         int
	}{
		{"no tensors", `{}`, 0, 0},
		{"spaces after", "{}        ", 0, 0},
		{"metadata null", `{"__metadata__":null}`, 0, 0},
		{"unknown field ignored", `{"a":{` + f32x2 + `,"data_offsets":[0,8],"extra":[1,{"x":2}]}}`, 8, 1},
		{"empty tensors share an offset", `{"a":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},"b":{"dtype":"I64","shape":[2,0,3],"data_offsets":[0,0]},"c":{` + f32x2 + `,"data_offsets":[0,8]}}`, 8, 3},
		{"any order in the header", `{"b":{` + f32x2 + `,"data_offsets":[8,16]},"a":{` + f32x2 + `,"data_offsets":[0,8]}}`, 16, 2},
		{"0-d", `{"s":{"dtype":"F64","shape":[],"data_offsets":[0,8]}}`, 8, 1},
		{"unsupported dtype still opens", `{"q":{"dtype":"F8_E4M3","shape":[4],"data_offsets":[0,4]}}`, 4, 1},
		{"integers of every width", `{"a":{"dtype":"U64","shape":[1],"data_offsets":[0,8]},"b":{"dtype":"U32","shape":[1],"data_offsets":[8,12]},` +
			`"c":{"dtype":"I16","shape":[2],"data_offsets":[12,16]},"d":{"dtype":"U16","shape":[1],"data_offsets":[16,18]},"e":{"dtype":"I8","shape":[3],"data_offsets":[18,21]}}`, 21, 5},
		{"misaligned U64", `{"a":{"dtype":"I8","shape":[3],"data_offsets":[0,3]},"b":{"dtype":"U64","shape":[2],"data_offsets":[3,19]}}`, 19, 2},
	} {
		f, err := Open(writeTemp(t, stFile(c.header, c.data)))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if len(f.Keys()) != c.keys {
			t.Errorf("%s: keys %v", c.name, f.Keys())
		}
		for _, k := range f.Keys() {
			a, err := f.Get(k)
			if err != nil {
				if !errors.Is(err, ErrUnsupported) {
					t.Errorf("%s: Get(%q): %v", c.name, k, err)
				}
				continue
			}
			if err := a.Eval(); err != nil {
				t.Errorf("%s: %q: %v", c.name, k, err)
			}
		}
		f.Close()
	}
}

// TestLyingSizesAllocateLittle: a 1 KB file that claims a 2 GB header or
// a 2 GB tensor allocates nothing of that size.
func TestLyingSizesAllocateLittle(t *testing.T) {
	for _, c := range hostile {
		if !strings.Contains(c.name, "1 KB") {
			continue
		}
		path := writeTemp(t, c.data)
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		for range 4 {
			if _, err := Open(path); err == nil {
				t.Fatal("no error")
			}
		}
		runtime.ReadMemStats(&m1)
		if n := (m1.TotalAlloc - m0.TotalAlloc) / 4; n > 64<<10 {
			t.Errorf("%s: Open allocated %d bytes", c.name, n)
		}
	}
}
