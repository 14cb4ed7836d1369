package npy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/encoding/internal/tensortest"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/encoding/internal/tensorio"
)

// want is one array of testdata/expected.json.
type want struct {
	DType  string            `json:"dtype"`
	Shape  []int             `json:"shape"`
	Order  string            `json:"order"`
	Values []json.RawMessage `json:"values"`
}

func readExpected(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile("testdata/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func canonStrings(t *testing.T, vals []string) []string {
	raw := make([]json.RawMessage, len(vals))
	for i, v := range vals {
		raw[i] = json.RawMessage(v)
	}
	return tensortest.Canon(t, raw)
}

func check(t *testing.T, name string, a *array.Array, w want) {
	t.Helper()
	if a.DType().String() != w.DType || !slices.Equal(a.Shape(), w.Shape) {
		t.Fatalf("%s: %v %v, want %s %v", name, a.DType(), a.Shape(), w.DType, w.Shape)
	}
	if err := a.Eval(); err != nil {
		t.Fatal(err)
	}
	if w.Order == "F" {
		if a.RowMajor() || !slices.Equal(a.Strides(), tensorio.ColumnMajorStrides(a.Shape())) {
			t.Errorf("%s: strides %v, want column-major", name, a.Strides())
		}
	}
	got, exp := canonStrings(t, tensortest.Elems(t, a)), tensortest.Canon(t, w.Values)
	if !slices.Equal(got, exp) {
		t.Errorf("%s: values\n%v\nwant\n%v", name, got, exp)
	}
}

// opaque hides everything but Read, so a loader cannot know the length.
type opaque struct{ r io.Reader }

func (o opaque) Read(p []byte) (int, error) { return o.r.Read(p) }

// TestLoadNumpyFiles loads every file numpy wrote (testdata/gen_npy.py)
// through each entry point and compares it with the values numpy saved.
func TestLoadNumpyFiles(t *testing.T) {
	exp := readExpected(t)
	n := 0
	loaded := map[array.DType]map[string]bool{} // dtype -> "C", "F", "be", "0-d", "empty"
	for name, raw := range exp {
		if !strings.HasSuffix(name, ".npy") {
			continue
		}
		n++
		var w want
		if err := json.Unmarshal(raw, &w); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", name)
		a, err := LoadFile(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		check(t, name, a, w)
		if loaded[a.DType()] == nil {
			loaded[a.DType()] = map[string]bool{}
		}
		switch {
		case strings.HasSuffix(name, "_be.npy"):
			loaded[a.DType()]["be"] = true
		case a.Ndim() == 0:
			loaded[a.DType()]["0-d"] = true
		case a.Size() == 0:
			loaded[a.DType()]["empty"] = true
		}
		loaded[a.DType()][w.Order] = true
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []io.Reader{bytes.NewReader(data), opaque{bytes.NewReader(data)}} {
			a, err := Load(r)
			if err != nil {
				t.Fatalf("%s: Load(%T): %v", name, r, err)
			}
			check(t, name, a, w)
		}
	}
	if n < 40 {
		t.Errorf("only %d files in expected.json", n)
	}
	// Every dtype, in C and Fortran order, big-endian where it has a byte
	// order; the integer dtypes fathom gained last, 0-d and empty too.
	for _, dt := range npyDTypes {
		need := []string{"C", "F"}
		if dt.Size() > 1 {
			need = append(need, "be")
		}
		switch dt {
		case array.Int8, array.Int16, array.Uint16, array.Uint32, array.Uint64:
			need = append(need, "0-d", "empty")
		}
		for _, what := range need {
			if !loaded[dt][what] {
				t.Errorf("%v: no %s file from numpy", dt, what)
			}
		}
	}
}

func TestLoadNumpyNPZ(t *testing.T) {
	exp := readExpected(t)
	for _, name := range []string{"arrays.npz", "arrays_compressed.npz"} {
		var ws map[string]want
		if err := json.Unmarshal(exp[name], &ws); err != nil {
			t.Fatal(err)
		}
		got, err := LoadNPZ(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(ws) {
			t.Fatalf("%s: %d arrays, want %d", name, len(got), len(ws))
		}
		for k, w := range ws {
			a, ok := got[k]
			if !ok {
				t.Fatalf("%s: no %q", name, k)
			}
			check(t, name+":"+k, a, w)
		}
	}
}

// TestUnsupportedDTypesAreErrors: numpy dtypes fathom has not yet (every
// kind with a numpy code and no fathom dtype: complex128) are an error
// naming the dtype, of kind ErrUnsupported; numpy dtypes fathom does not
// load at all (strings) are ErrFormat.
func TestUnsupportedDTypesAreErrors(t *testing.T) {
	cases := map[string]string{
		"str": `dtype "<U2"`,
	}
	for _, k := range tensorio.Kinds() {
		if k.NPY != "" && !k.Supported() {
			cases[k.Name] = "dtype " + k.Name + " is not supported yet"
		}
	}
	if cases["complex128"] == "" {
		t.Errorf("complex128 is supported: test with a numpy dtype fathom has not")
	}
	for dt, msg := range cases {
		_, err := LoadFile(filepath.Join("testdata", "unsupported_"+dt+".npy"))
		var ae *array.Error
		if !errors.As(err, &ae) || ae.Op != "npy.LoadFile" || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: error %v, want an *array.Error containing %q", dt, err, msg)
		}
		wantKind := ErrUnsupported
		if dt == "str" {
			wantKind = ErrFormat
		}
		if !errors.Is(err, wantKind) {
			t.Errorf("%s: %v is not %v", dt, err, wantKind)
		}
	}
}

// npyDTypes are the dtypes the npy format holds: every fathom dtype
// numpy has (all but bfloat16).
var npyDTypes = func() []array.DType {
	var out []array.DType
	for _, dt := range array.DTypes() {
		if k, ok := tensorio.FromDType(dt); ok && k.NPY != "" {
			out = append(out, dt)
		}
	}
	return out
}()

func TestNPYDTypes(t *testing.T) {
	want := []array.DType{array.Bool, array.Uint8, array.Int32, array.Int64, array.Float16, array.Float32, array.Float64, array.Complex64,
		array.Int8, array.Int16, array.Uint16, array.Uint32, array.Uint64}
	if !slices.Equal(npyDTypes, want) {
		t.Errorf("npy dtypes %v, want %v", npyDTypes, want)
	}
}

// layouts turns a row-major array into the layouts Save writes
// differently: as is, transposed (column-major: Fortran order), and a
// strided view that is neither (gathered).
var layouts = []struct {
	name    string
	view    func(a *array.Array) *array.Array
	fortran bool
}{
	{"C", func(a *array.Array) *array.Array { return a }, false},
	{"transposed", func(a *array.Array) *array.Array { return permute(a) }, true},
	{"strided", func(a *array.Array) *array.Array {
		if a.Ndim() < 3 {
			return permute(a)
		}
		return permute(a, 1, 0, 2)
	}, false},
}

// permute returns a view of evaluated a with its axes permuted (reversed
// when no axes are given), sharing its memory, as ops.Transpose makes.
func permute(a *array.Array, axes ...int) *array.Array {
	if err := a.Eval(); err != nil {
		panic(err)
	}
	if axes == nil {
		for i := a.Ndim() - 1; i >= 0; i-- {
			axes = append(axes, i)
		}
	}
	shape, strides := make([]int, len(axes)), make([]int, len(axes))
	for i, ax := range axes {
		shape[i], strides[i] = a.Shape()[ax], a.Strides()[ax]
	}
	return array.FromStorage(a.Stream(), shape, a.DType(), a.Storage(), strides, a.Offset())
}

// TestRoundTrip saves and loads every dtype, shape and layout, through a
// stream and through a file, and compares values.
func TestRoundTrip(t *testing.T) {
	shapes := [][]int{{}, {0}, {0, 3}, {3, 0, 2}, {5}, {2, 3}, {2, 3, 4}, {1, 7}, {(1 << 18) + 3}}
	dir := t.TempDir()
	for _, dt := range npyDTypes {
		for _, shape := range shapes {
			for _, l := range layouts {
				if l.name != "C" && len(shape) < 2 {
					continue
				}
				name := fmt.Sprintf("%v%v/%s", dt, shape, l.name)
				a := l.view(tensortest.Fill(dt, shape))
				if err := a.Eval(); err != nil {
					t.Fatal(err)
				}
				var buf bytes.Buffer
				if err := Save(&buf, a); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				h := headerOf(t, buf.Bytes())
				wantF := a.Ndim() > 1 && tensorio.LayoutOf(a) == tensorio.ColumnMajor
				if l.fortran && !wantF && !a.RowMajor() && a.Size() > 0 {
					t.Fatalf("%s: a transposed array is not column-major", name)
				}
				if h.fortran != wantF {
					t.Errorf("%s: fortran_order %v, want %v", name, h.fortran, wantF)
				}
				if pre := len(buf.Bytes()) - a.NBytes(); pre%64 != 0 {
					t.Errorf("%s: data starts at %d, not a multiple of 64", name, pre)
				}
				b, err := Load(&buf)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if !same(t, a, b) {
					t.Errorf("%s: round trip changed the array", name)
				}
				path := filepath.Join(dir, "x.npy")
				if err := SaveFile(path, a); err != nil {
					t.Fatal(err)
				}
				c, err := LoadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if !same(t, a, c) {
					t.Errorf("%s: file round trip changed the array", name)
				}
			}
		}
	}
}

// bigEndian turns an .npy file fathom wrote (little-endian, as every host
// it runs on) into the same array in big-endian order, as numpy writes
// with dtype.newbyteorder('>'): '<' becomes '>' in the descr, and each
// word of the data is reversed.
func bigEndian(t *testing.T, b []byte) []byte {
	t.Helper()
	b = append([]byte(nil), b...)
	hl := int(b[8]) | int(b[9])<<8
	h := headerOf(t, b)
	if !h.little || h.kind.Size() == 1 {
		return b
	}
	i := bytes.Index(b[10:10+hl], []byte("'<"))
	if i < 0 {
		t.Fatalf("no '<' in %q", b[10:10+hl])
	}
	b[10+i+1] = '>'
	tensorio.Swap(b[10+hl:], h.kind.WordSize())
	return b
}

// TestRoundTripBigEndian: every dtype saved, turned big-endian and loaded
// back has its values, in C and Fortran order, 0-d and empty.
func TestRoundTripBigEndian(t *testing.T) {
	if !tensorio.LittleEndian {
		t.Skip("a big-endian host")
	}
	for _, dt := range npyDTypes {
		for _, c := range []struct {
			name string
			a    *array.Array
		}{
			{"C", tensortest.Fill(dt, []int{3, 5})},
			{"Fortran", permute(tensortest.Fill(dt, []int{2, 3, 4}))},
			{"0-d", tensortest.Fill(dt, nil)},
			{"empty", tensortest.Fill(dt, []int{0, 2})},
			{"large", tensortest.Fill(dt, []int{(1 << 17) + 1})},
		} {
			var buf bytes.Buffer
			if err := Save(&buf, c.a); err != nil {
				t.Fatal(err)
			}
			be := bigEndian(t, buf.Bytes())
			h := headerOf(t, be)
			if h.little == (dt.Size() > 1) {
				t.Errorf("%v %s: descr %q", dt, c.name, h.descr)
			}
			for _, r := range []io.Reader{bytes.NewReader(be), opaque{bytes.NewReader(be)}} {
				b, err := Load(r)
				if err != nil {
					t.Fatalf("%v %s: %v", dt, c.name, err)
				}
				if !same(t, c.a, b) {
					t.Errorf("%v %s (%T): big-endian round trip changed the array", dt, c.name, r)
				}
				if c.name == "Fortran" && tensorio.LayoutOf(b) != tensorio.ColumnMajor {
					t.Errorf("%v %s: strides %v", dt, c.name, b.Strides())
				}
			}
		}
	}
}

// TestIntegerValues pins the values of the integer dtypes fathom gained
// last, as numpy computes them, through a file numpy wrote: both ends of
// each range and, for uint64, values beyond int64 and float64 precision.
func TestIntegerValues(t *testing.T) {
	load := func(name string) *array.Array {
		a, err := LoadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	if v, _ := array.ToSlice[int8](load("int8.npy")); !slices.Equal(v, []int8{-128, 127, -71, -50, -29, -8}) {
		t.Errorf("int8.npy: %v", v)
	}
	if v, _ := array.ToSlice[int16](load("int16_be.npy")); !slices.Equal(v, []int16{-32768, 32767, -20423, 11342, -22429, 9336}) {
		t.Errorf("int16_be.npy: %v", v)
	}
	if v, _ := array.ToSlice[uint16](load("uint16_be.npy")); !slices.Equal(v, []uint16{0, 65535, 12345, 44110, 10339, 42104}) {
		t.Errorf("uint16_be.npy: %v", v)
	}
	if v, _ := array.ToSlice[uint32](load("uint32.npy")); !slices.Equal(v, []uint32{0, 4294967295, 12345, 2135600206, 4271188067, 2111808632}) {
		t.Errorf("uint32.npy: %v", v)
	}
	for _, name := range []string{"uint64.npy", "uint64_be.npy"} {
		if v, _ := array.ToSlice[uint64](load(name)); !slices.Equal(v, []uint64{0, 18446744073709551615, 12345, 11400714819323210830, 4354685564936857699, 15755400384260056184}) {
			t.Errorf("%s: %v", name, v)
		}
	}
	if a := load("scalar_uint64.npy"); a.Ndim() != 0 || a.DType() != array.Uint64 {
		t.Errorf("scalar_uint64.npy: %v %v", a.Shape(), a.DType())
	} else if v, _ := array.ToSlice[uint64](a); !slices.Equal(v, []uint64{math.MaxUint64}) {
		t.Errorf("scalar_uint64.npy: %v", v)
	}
	if a := load("empty_int8.npy"); a.DType() != array.Int8 || !slices.Equal(a.Shape(), []int{2, 0}) {
		t.Errorf("empty_int8.npy: %v %v", a.Shape(), a.DType())
	}
	// Fortran order: element [i, j, k] of the (3, 4, 2) array.
	a := load("uint32_fortran.npy")
	if tensorio.LayoutOf(a) != tensorio.ColumnMajor {
		t.Errorf("uint32_fortran.npy: strides %v", a.Strides())
	}
	if v, _ := array.ToSlice[uint32](a); len(v) != 24 || !slices.Equal(v[:6], []uint32{0, 4294967295, 12345, 2135600206, 4271188067, 2111808632}) {
		t.Errorf("uint32_fortran.npy: %v", v)
	}
}

// same reports whether a and b have one dtype, shape and values.
func same(t *testing.T, a, b *array.Array) bool {
	t.Helper()
	if a.DType() != b.DType() || !slices.Equal(a.Shape(), b.Shape()) {
		return false
	}
	switch a.DType() {
	case array.Bool:
		return eq[bool](t, a, b)
	case array.Uint8:
		return eq[uint8](t, a, b)
	case array.Int32:
		return eq[int32](t, a, b)
	case array.Int64:
		return eq[int64](t, a, b)
	case array.Int8:
		return eq[int8](t, a, b)
	case array.Int16:
		return eq[int16](t, a, b)
	case array.Uint16:
		return eq[uint16](t, a, b)
	case array.Uint32:
		return eq[uint32](t, a, b)
	case array.Uint64:
		return eq[uint64](t, a, b)
	case array.Float16:
		return eq[array.F16](t, a, b)
	case array.BFloat16:
		return eq[array.BF16](t, a, b)
	case array.Float32:
		return eq[float32](t, a, b)
	case array.Float64:
		return eq[float64](t, a, b)
	case array.Complex64:
		return eq[complex64](t, a, b)
	}
	t.Fatalf("dtype %v", a.DType())
	return false
}

func eq[T array.Elem](t *testing.T, a, b *array.Array) bool {
	t.Helper()
	x, err := array.ToSlice[T](a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := array.ToSlice[T](b)
	if err != nil {
		t.Fatal(err)
	}
	return slices.Equal(x, y)
}

func headerOf(t *testing.T, b []byte) header {
	t.Helper()
	hl := int(b[8]) | int(b[9])<<8
	h, err := parseHeader(b[10 : 10+hl])
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestRoundTripNPZ(t *testing.T) {
	dir := t.TempDir()
	in := map[string]*array.Array{}
	for _, dt := range npyDTypes {
		in["a_"+dt.String()] = tensortest.Fill(dt, []int{3, 4})
	}
	in["scalar"] = tensortest.Fill(array.Float64, nil)
	in["empty"] = tensortest.Fill(array.Float32, []int{0, 5})
	in["fortran"] = permute(tensortest.Fill(array.Int32, []int{4, 6}))
	in["dir/name with spaces"] = tensortest.Fill(array.Uint8, []int{2})
	for _, compressed := range []bool{false, true} {
		path := filepath.Join(dir, fmt.Sprint(compressed)+".npz")
		if err := SaveNPZ(path, in, compressed); err != nil {
			t.Fatal(err)
		}
		out, err := LoadNPZ(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != len(in) {
			t.Fatalf("%d arrays, want %d", len(out), len(in))
		}
		for k, a := range in {
			b := out[k]
			if b == nil || !same(t, a, b) {
				t.Errorf("compressed=%v: %q changed", compressed, k)
			}
		}
	}
}

// TestStreamOfArrays: arrays saved one after another on one stream load
// one after another, and the end of the stream is io.EOF.
func TestStreamOfArrays(t *testing.T) {
	var buf bytes.Buffer
	a, b := tensortest.Fill(array.Float32, []int{2, 2}), tensortest.Fill(array.Int64, []int{3})
	if err := Save(&buf, a); err != nil {
		t.Fatal(err)
	}
	if err := Save(&buf, b); err != nil {
		t.Fatal(err)
	}
	r := opaque{&buf}
	for _, w := range []*array.Array{a, b} {
		got, err := Load(r)
		if err != nil {
			t.Fatal(err)
		}
		if !same(t, got, w) {
			t.Error("values changed")
		}
	}
	if _, err := Load(r); !errors.Is(err, io.EOF) || !errors.Is(err, ErrFormat) {
		t.Errorf("at the end: %v, want io.EOF", err)
	}
}

func TestSaveErrors(t *testing.T) {
	var buf bytes.Buffer
	err := Save(&buf, tensortest.Fill(array.BFloat16, []int{2}))
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "bfloat16") {
		t.Errorf("bfloat16: %v", err)
	}
	if err := Save(&buf, nil); err == nil {
		t.Error("nil array: no error")
	}
	if err := SaveNPZ(filepath.Join(t.TempDir(), "x.npz"), map[string]*array.Array{"a": nil}, false); err == nil {
		t.Error("nil array in npz: no error")
	}
	if buf.Len() != 0 {
		t.Errorf("%d bytes written for arrays that cannot be saved", buf.Len())
	}
}

// failing is a primitive whose evaluation fails.
type failing struct{}

func (failing) Name() string { return "failing" }
func (failing) Eval(array.Stream, []*array.Array, []*array.Array) error {
	return errors.New("device on fire")
}

// failAfter is a writer that fails once n bytes went through, as a full
// disk does.
type failAfter struct {
	w io.Writer
	n int
}

var errDiskFull = errors.New("no space left on device (test)")

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		m, _ := f.w.Write(p[:f.n])
		f.n = 0
		return m, errDiskFull
	}
	f.n -= len(p)
	return f.w.Write(p)
}

// TestSaveIsAtomic: a save that fails part-way (a writer that fails, an
// array that fails to evaluate, a rename the directory refuses) returns
// its error, leaves the old file whole and leaves no temporary file.
func TestSaveIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.npy")
	old := tensortest.Fill(array.Float32, []int{4})
	if err := SaveFile(path, old); err != nil {
		t.Fatal(err)
	}
	oldBytes, _ := os.ReadFile(path)
	big := tensortest.Fill(array.Float32, []int{1 << 20})
	npz := filepath.Join(dir, "x.npz")
	if err := SaveNPZ(npz, map[string]*array.Array{"old": old}, false); err != nil {
		t.Fatal(err)
	}
	oldNPZ, _ := os.ReadFile(npz)

	for _, at := range []int{0, 10, 200, 1 << 20} {
		tensorio.WrapTempWriter = func(w io.Writer) io.Writer { return &failAfter{w, at} }
		err := SaveFile(path, big)
		err2 := SaveNPZ(npz, map[string]*array.Array{"big": big}, at < 1000)
		tensorio.WrapTempWriter = nil
		if !errors.Is(err, errDiskFull) || !errors.Is(err2, errDiskFull) {
			t.Errorf("writer failing after %d bytes: %v, %v", at, err, err2)
		}
	}
	pending := array.New(array.CurrentStream(), []int{3}, array.Float32, failing{})
	if err := SaveFile(path, pending); err == nil || !strings.Contains(err.Error(), "device on fire") {
		t.Errorf("failing array: %v", err)
	}
	if err := SaveNPZ(npz, map[string]*array.Array{"a": old, "b": pending}, false); err == nil {
		t.Error("failing array in npz: no error")
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, oldBytes) {
		t.Error("the old .npy file changed")
	}
	if b, _ := os.ReadFile(npz); !bytes.Equal(b, oldNPZ) {
		t.Error("the old .npz file changed")
	}
	if a, err := LoadFile(path); err != nil || !same(t, a, old) {
		t.Errorf("the old file does not load: %v", err)
	}

	// A rename the directory refuses: the target is a non-empty directory.
	blocked := filepath.Join(dir, "blocked.npy")
	if err := os.MkdirAll(filepath.Join(blocked, "child"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := SaveFile(blocked, old); err == nil {
		t.Error("rename over a directory: no error")
	}
	if err := SaveNPZ(blocked, map[string]*array.Array{"a": old}, false); err == nil {
		t.Error("npz rename over a directory: no error")
	}
	if _, err := os.Stat(filepath.Join(blocked, "child")); err != nil {
		t.Errorf("the directory changed: %v", err)
	}
	// A directory that does not exist.
	if err := SaveFile(filepath.Join(dir, "missing", "x.npy"), old); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing directory: %v", err)
	}

	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"blocked.npy", "x.npy", "x.npz"}) {
		t.Errorf("directory holds %v: a temporary file was left behind", names)
	}
}

// TestSaveKeepsMode: a replaced file keeps its permissions.
func TestSaveKeepsMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.npy")
	if err := SaveFile(path, tensortest.Fill(array.Uint8, []int{3})); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v, want 0644", fi.Mode().Perm())
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := SaveFile(path, tensortest.Fill(array.Uint8, []int{3})); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("replaced file mode %v, want 0600", fi.Mode().Perm())
	}
}

// TestFormatHeaderMatchesNumpy: the preamble is numpy's, byte for byte
// in the dictionary, and padded so data starts on 64 bytes.
func TestFormatHeaderMatchesNumpy(t *testing.T) {
	b, err := os.ReadFile("testdata/float32.npy")
	if err != nil {
		t.Fatal(err)
	}
	got := formatHeader("<f4", false, []int{2, 3})
	hl := int(b[8]) | int(b[9])<<8
	if want := strings.TrimRight(string(b[10:10+hl]), " \n"); !strings.HasPrefix(string(got[10:]), want) {
		t.Errorf("dictionary %q, numpy's %q", got[10:], want)
	}
	if len(got)%64 != 0 || got[len(got)-1] != '\n' {
		t.Errorf("preamble of %d bytes", len(got))
	}
}

func TestLoadHugeShapeOfNothing(t *testing.T) {
	// A valid header of an empty array whose other dimensions are huge.
	b := append(formatHeader("<f4", false, []int{0, math.MaxInt / 2}), []byte{}...)
	a, err := Load(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if a.Size() != 0 || !slices.Equal(a.Shape(), []int{0, math.MaxInt / 2}) {
		t.Errorf("shape %v", a.Shape())
	}
}
