package tensorio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/fathom-go/fathom/array"
)

// TestKinds: every fathom dtype has a kind whose size is the dtype's, the
// formats' names are unique, and the ranks follow safetensors' order.
func TestKinds(t *testing.T) {
	for _, dt := range array.DTypes() {
		k, ok := FromDType(dt)
		if !ok || k.Size() != dt.Size() || k.Name != dt.String() || k.Safetensors == "" {
			t.Errorf("%v: kind %+v", dt, k)
		}
	}
	npy, st := map[string]bool{}, map[string]bool{}
	for i, k := range Kinds() {
		if k.NPY != "" {
			if npy[k.NPY] {
				t.Errorf("numpy code %q twice", k.NPY)
			}
			npy[k.NPY] = true
		}
		if k.Safetensors != "" {
			if st[k.Safetensors] {
				t.Errorf("safetensors dtype %q twice", k.Safetensors)
			}
			st[k.Safetensors] = true
		}
		if k.Rank() != i {
			t.Errorf("%s: rank %d at %d", k.Name, k.Rank(), i)
		}
	}
	// The kinds fathom has no dtype for: still in the table, each with
	// its "not supported yet" message, so files holding them are errors
	// that name them.
	var notYet []string
	for _, k := range Kinds() {
		if k.Supported() {
			continue
		}
		notYet = append(notYet, k.Name)
		if !strings.Contains(k.UnsupportedMsg(), "dtype "+k.Name+" is not supported yet") {
			t.Errorf("%s: message %q", k.Name, k.UnsupportedMsg())
		}
		if _, ok := FromDType(k.DType); ok {
			t.Errorf("%s: FromDType(%v) finds a kind", k.Name, k.DType)
		}
	}
	want := []string{"float4_e2m1", "float6_e2m3", "float6_e3m2", "float8_e5m2", "float8_e4m3", "float8_e8m0", "complex128"}
	if !slices.Equal(notYet, want) {
		t.Errorf("not supported yet: %v, want %v", notYet, want)
	}
	// The integer dtypes fathom gained are supported under both formats'
	// names.
	for _, c := range []struct {
		dt      array.DType
		npy, st string
	}{
		{array.Int8, "i1", "I8"}, {array.Int16, "i2", "I16"}, {array.Uint16, "u2", "U16"},
		{array.Uint32, "u4", "U32"}, {array.Uint64, "u8", "U64"},
	} {
		kn, ok1 := FromNPY(c.npy)
		ks, ok2 := FromSafetensors(c.st)
		if !ok1 || !ok2 || kn.DType != c.dt || ks.DType != c.dt || !kn.Supported() || kn.Size() != c.dt.Size() {
			t.Errorf("%v: numpy %q %+v %v, safetensors %q %+v %v", c.dt, c.npy, kn, ok1, c.st, ks, ok2)
		}
	}
}

func TestSwapAndFix(t *testing.T) {
	b := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	Swap(b, 2)
	if !bytes.Equal(b, []byte{2, 1, 4, 3, 6, 5, 8, 7}) {
		t.Errorf("Swap 2: %v", b)
	}
	Swap(b, 8)
	if !bytes.Equal(b, []byte{7, 8, 5, 6, 3, 4, 1, 2}) {
		t.Errorf("Swap 8: %v", b)
	}
	// A big-endian complex64 is two big-endian float32s.
	c64, _ := FromDType(array.Complex64)
	v := binary.BigEndian.AppendUint32(nil, math.Float32bits(1.5))
	v = binary.BigEndian.AppendUint32(v, math.Float32bits(-2))
	Fix(c64, v, false)
	if got := binary.NativeEndian.Uint32(v[4:]); math.Float32frombits(got) != -2 {
		t.Errorf("complex64 imaginary part %v", math.Float32frombits(got))
	}
	// Big-endian integers of every width come out in host order; one
	// byte has no order.
	i16, _ := FromDType(array.Int16)
	w16 := binary.BigEndian.AppendUint16(nil, uint16(0x8001)) // -32767
	Fix(i16, w16, false)
	if got := int16(binary.NativeEndian.Uint16(w16)); got != -32767 {
		t.Errorf("int16 %d", got)
	}
	u64, _ := FromDType(array.Uint64)
	w64 := binary.BigEndian.AppendUint64(nil, 0xfedcba9876543210)
	Fix(u64, w64, false)
	if got := binary.NativeEndian.Uint64(w64); got != 0xfedcba9876543210 {
		t.Errorf("uint64 %#x", got)
	}
	i8, _ := FromDType(array.Int8)
	w8 := []byte{0x80, 0x7f}
	Fix(i8, w8, !LittleEndian)
	if !bytes.Equal(w8, []byte{0x80, 0x7f}) {
		t.Errorf("int8 %v", w8)
	}
	bk, _ := FromDType(array.Bool)
	bools := []byte{0, 1, 2, 255}
	Fix(bk, bools, true)
	if !bytes.Equal(bools, []byte{0, 1, 1, 1}) {
		t.Errorf("bools %v", bools)
	}
}

// view returns a view of storage st with the given shape, strides and
// offset.
func view(a *array.Array, shape, strides []int, off int) *array.Array {
	if err := a.Eval(); err != nil {
		panic(err)
	}
	return array.FromStorage(a.Stream(), shape, a.DType(), a.Storage(), strides, off)
}

// TestWriteArrayLayouts: WriteArray gives row-major bytes for every
// layout: contiguous, transposed, reversed (negative strides), broadcast
// (zero strides) and offset views, 0-d and empty; and column-major bytes
// when asked.
func TestWriteArrayLayouts(t *testing.T) {
	base := array.FromSlice([]int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 12)
	cases := []struct {
		name    string
		a       *array.Array
		want    []int32
		colWant []int32 // with columnMajor set, if different
	}{
		{"contiguous", view(base, []int{3, 4}, []int{4, 1}, 0), []int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, nil},
		{"transposed", view(base, []int{4, 3}, []int{1, 4}, 0), []int32{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}, []int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
		{"reversed", view(base, []int{3, 4}, []int{-4, -1}, 11), []int32{11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, nil},
		{"broadcast row", view(base, []int{3, 2}, []int{0, 1}, 5), []int32{5, 6, 5, 6, 5, 6}, nil},
		{"broadcast column", view(base, []int{2, 3}, []int{1, 0}, 2), []int32{2, 2, 2, 3, 3, 3}, nil},
		{"every other", view(base, []int{2, 3}, []int{6, 2}, 1), []int32{1, 3, 5, 7, 9, 11}, nil},
		{"3-d permuted", view(base, []int{2, 2, 3}, []int{3, 6, 1}, 0), []int32{0, 1, 2, 6, 7, 8, 3, 4, 5, 9, 10, 11}, nil},
		{"0-d", view(base, []int{}, []int{}, 7), []int32{7}, nil},
		{"empty", view(base, []int{0, 4}, []int{4, 1}, 0), []int32{}, nil},
	}
	for _, c := range cases {
		for _, col := range []bool{false, true} {
			var buf bytes.Buffer
			if err := WriteArray(&buf, c.a, LittleEndian, col); err != nil {
				t.Fatal(err)
			}
			want := c.want
			if col && c.colWant != nil {
				want = c.colWant
			}
			got := make([]int32, buf.Len()/4)
			binary.Read(&buf, binary.NativeEndian, got)
			if !slices.Equal(got, want) {
				t.Errorf("%s (columnMajor %v): %v, want %v", c.name, col, got, want)
			}
		}
		// The other byte order.
		var buf bytes.Buffer
		if err := WriteArray(&buf, c.a, !LittleEndian, false); err != nil {
			t.Fatal(err)
		}
		b := buf.Bytes()
		Swap(b, 4)
		got := make([]int32, len(b)/4)
		binary.Read(bytes.NewReader(b), binary.NativeEndian, got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s swapped: %v, want %v", c.name, got, c.want)
		}
	}
	// A large strided array crosses the 1 MiB buffer.
	n := 1 << 19
	big := make([]float32, 2*n)
	for i := range big {
		big[i] = float32(i)
	}
	a := view(array.FromSlice(big), []int{n}, []int{2}, 1)
	var buf bytes.Buffer
	if err := WriteArray(&buf, a, LittleEndian, false); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, n)
	binary.Read(&buf, binary.NativeEndian, got)
	for i, v := range got {
		if v != float32(2*i+1) {
			t.Fatalf("element %d: %v", i, v)
		}
	}
}

// TestReadStorage: exact reads whether the length is known or not, in
// growing chunks, and truncation as io.ErrUnexpectedEOF.
func TestReadStorage(t *testing.T) {
	for _, n := range []int{0, 10, 64 << 10, 64<<10 + 1, 3<<20 + 7} {
		data := make([]byte, n+5)
		for i := range data {
			data[i] = byte(i * 31)
		}
		readers := []io.Reader{bytes.NewReader(data), iotest.HalfReader(bytes.NewReader(data))}
		if n <= 1<<17 {
			readers = append(readers, iotest.OneByteReader(bytes.NewReader(data)))
		}
		for _, r := range readers {
			avail, ok := Remaining(r)
			if !ok {
				avail = -1
			}
			st, err := ReadStorage(r, n, avail, array.CurrentStream())
			if err != nil {
				t.Fatalf("n=%d %T: %v", n, r, err)
			}
			if !bytes.Equal(st.Bytes()[:n], data[:n]) {
				t.Errorf("n=%d %T: wrong bytes", n, r)
			}
			// The reader is left just after the bytes.
			if rest, _ := io.ReadAll(r); len(rest) != 5 {
				t.Errorf("n=%d %T: %d bytes left, want 5", n, r, len(rest))
			}
		}
		for _, known := range []bool{true, false} {
			var r io.Reader = bytes.NewReader(data[:n/2])
			avail := int64(n / 2)
			if !known {
				r, avail = iotest.HalfReader(r), -1
			}
			if _, err := ReadStorage(r, n, avail, array.CurrentStream()); n > 0 && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("n=%d known=%v truncated: %v", n, known, err)
			}
		}
	}
}

func TestRemaining(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "x"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.Write(make([]byte, 100))
	f.Seek(30, io.SeekStart)
	if n, ok := Remaining(f); !ok || n != 70 {
		t.Errorf("file: %d %v", n, ok)
	}
	if n, ok := Remaining(io.NewSectionReader(f, 10, 50)); !ok || n != 50 {
		t.Errorf("section: %d %v", n, ok)
	}
	if pos, _ := f.Seek(0, io.SeekCurrent); pos != 30 {
		t.Errorf("Remaining moved the file to %d", pos)
	}
	if _, ok := Remaining(iotest.HalfReader(f)); ok {
		t.Error("a plain reader has a known length")
	}
}

// TestWriteFileAtomic: the file appears whole or not at all.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := WriteFileAtomic(path, func(w io.Writer) error { _, err := w.Write([]byte("old")); return err }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := WriteFileAtomic(path, func(w io.Writer) error { w.Write([]byte("new, partial")); return boom }); !errors.Is(err, boom) {
		t.Errorf("%v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("file holds %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d entries: a temporary file was left", len(entries))
	}
}
