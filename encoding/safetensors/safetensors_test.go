package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fathom-go/fathom/encoding/internal/tensortest"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/encoding/internal/tensorio"
)

type want struct {
	DType  string            `json:"dtype"`
	Shape  []int             `json:"shape"`
	Values []json.RawMessage `json:"values"`
	Raw    []byte            `json:"-"` // the bytes of a tensor fathom cannot load
}

func (w *want) UnmarshalJSON(b []byte) error {
	type plain want
	var v struct {
		plain
		Raw []int `json:"raw"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*w = want(v.plain)
	for _, x := range v.Raw {
		w.Raw = append(w.Raw, byte(x))
	}
	return nil
}

// expected reads testdata/expected.json: file -> tensors (and metadata).
func expected(t *testing.T) map[string]map[string]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile("testdata/expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func checkTensor(t *testing.T, where string, a *array.Array, w want) {
	t.Helper()
	k, _ := tensorio.FromDType(a.DType())
	if k.Safetensors != w.DType || !slices.Equal(a.Shape(), w.Shape) {
		t.Fatalf("%s: %v %v, want %s %v", where, a.DType(), a.Shape(), w.DType, w.Shape)
	}
	got := tensortest.Canon(t, func() []json.RawMessage {
		var r []json.RawMessage
		for _, v := range tensortest.Elems(t, a) {
			r = append(r, json.RawMessage(v))
		}
		return r
	}())
	if exp := tensortest.Canon(t, w.Values); !slices.Equal(got, exp) {
		t.Errorf("%s: values\n%v\nwant\n%v", where, got, exp)
	}
}

// TestLoadReferenceFiles opens and loads every file the reference-layout
// script wrote and compares tensors and metadata.
func TestLoadReferenceFiles(t *testing.T) {
	for file, entries := range expected(t) {
		path := filepath.Join("testdata", file)
		f, err := Open(path)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		var wantMeta map[string]string
		var names []string
		for k, raw := range entries {
			if k == metadataKey {
				if err := json.Unmarshal(raw, &wantMeta); err != nil {
					t.Fatal(err)
				}
				continue
			}
			names = append(names, k)
		}
		slices.Sort(names)
		if !slices.Equal(f.Keys(), names) {
			t.Errorf("%s: keys %v, want %v", file, f.Keys(), names)
		}
		if got := f.Metadata(); fmt.Sprint(got) != fmt.Sprint(wantMeta) {
			t.Errorf("%s: metadata %v, want %v", file, got, wantMeta)
		}
		unsupported := 0
		notYet := map[string]bool{}
		for _, name := range names {
			var w want
			if err := json.Unmarshal(entries[name], &w); err != nil {
				t.Fatal(err)
			}
			a, err := f.Get(name)
			if k, _ := tensorio.FromSafetensors(w.DType); !k.Supported() {
				unsupported++
				notYet[w.DType] = true
				msg := fmt.Sprintf("tensor %q: dtype %s is not supported yet: fathom has no %s arrays (safetensors %s)", name, k.Name, k.Name, w.DType)
				var ae *array.Error
				if a != nil || !errors.As(err, &ae) || ae.Op != "safetensors.Get" || !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), msg) {
					t.Errorf("%s: Get(%q): %v, %v: want ErrUnsupported containing %q", file, name, a, err, msg)
				}
				// The header describes it all the same.
				ti := f.tensors[name]
				if !slices.Equal(ti.shape, w.Shape) || int(ti.end-ti.begin) != len(w.Raw) || len(w.Raw) == 0 {
					t.Errorf("%s: %q: shape %v, %d bytes; want %v, %d", file, name, ti.shape, ti.end-ti.begin, w.Shape, len(w.Raw))
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: Get(%q): %v", file, name, err)
			}
			if a.Evaluated() {
				t.Errorf("%s: Get(%q) is evaluated before Eval", file, name)
			}
			checkTensor(t, file+":"+name, a, w)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if file == "unsupported.safetensors" {
			// Every dtype fathom has not yet is in it.
			for _, k := range tensorio.Kinds() {
				if k.Safetensors != "" && !k.Supported() && !notYet[k.Safetensors] {
					t.Errorf("%s: no tensor of %s, which fathom has not yet", file, k.Safetensors)
				}
			}
			if unsupported == 0 || unsupported == len(names) {
				t.Errorf("%s: %d of %d tensors not supported", file, unsupported, len(names))
			}
		}
		all, meta, err := Load(path)
		if unsupported > 0 {
			var ae *array.Error
			if all != nil || !errors.As(err, &ae) || ae.Op != "safetensors.Load" || !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "is not supported yet") {
				t.Errorf("%s: Load: %v, want ErrUnsupported", file, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: Load: %v", file, err)
		}
		if fmt.Sprint(meta) != fmt.Sprint(wantMeta) || len(all) != len(names) {
			t.Errorf("%s: Load gave %d tensors and metadata %v", file, len(all), meta)
		}
		for name, a := range all {
			var w want
			json.Unmarshal(entries[name], &w)
			if !a.Evaluated() {
				t.Errorf("%s: Load(%q) is not evaluated", file, name)
			}
			checkTensor(t, file+":"+name+" (Load)", a, w)
		}
	}
}

// permute returns a view of a with its axes permuted (reversed when none
// are given), sharing its memory, as ops.Transpose makes.
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

// same reports whether a and b have one dtype, shape and values.
func same(t *testing.T, a, b *array.Array) bool {
	t.Helper()
	return a.DType() == b.DType() && slices.Equal(a.Shape(), b.Shape()) && slices.Equal(tensortest.Elems(t, a), tensortest.Elems(t, b))
}

var allDTypes = array.DTypes()

// sample is a model's worth of tensors: every dtype, 0-d, empty,
// transposed and strided views, and one large tensor.
func sample() map[string]*array.Array {
	m := map[string]*array.Array{}
	for _, dt := range allDTypes {
		m["t."+dt.String()] = tensortest.Fill(dt, []int{2, 3})
		m["t."+dt.String()+".T"] = permute(tensortest.Fill(dt, []int{3, 5}))
		m["t."+dt.String()+".strided"] = permute(tensortest.Fill(dt, []int{2, 3, 4}), 1, 0, 2)
	}
	m["scalar"] = tensortest.Fill(array.Float32, nil)
	m["empty"] = tensortest.Fill(array.Int64, []int{0, 4})
	m["large"] = tensortest.Fill(array.Float32, []int{(1 << 18) + 5})
	m["odd/name with \"quotes\" and ünïcode"] = tensortest.Fill(array.Uint8, []int{3})
	return m
}

// TestRoundTrip saves every dtype and layout and loads it back, through
// Load and through Open and Get.
func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.safetensors")
	in := sample()
	meta := map[string]string{"format": "pt", "quote": `"<&>"`, "empty": ""}
	if err := Save(path, in, meta); err != nil {
		t.Fatal(err)
	}
	out, gotMeta, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(gotMeta) != fmt.Sprint(meta) || len(out) != len(in) {
		t.Fatalf("metadata %v and %d tensors", gotMeta, len(out))
	}
	for k, a := range in {
		if b := out[k]; b == nil || !same(t, a, b) {
			t.Errorf("%q changed", k)
		}
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, k := range f.Keys() {
		b, err := f.Get(k)
		if err != nil {
			t.Fatal(err)
		}
		if !same(t, in[k], b) {
			t.Errorf("%q changed through Get", k)
		}
	}
	// No metadata: the header has no __metadata__.
	if err := Save(path, map[string]*array.Array{"x": tensortest.Fill(array.Float32, []int{2})}, nil); err != nil {
		t.Fatal(err)
	}
	if _, meta, err := Load(path); err != nil || meta != nil {
		t.Errorf("without metadata: %v, %v", meta, err)
	}
	// Nothing at all.
	if err := Save(path, nil, nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "\x08\x00\x00\x00\x00\x00\x00\x00{}      " {
		t.Errorf("empty file %q, want the reference writer's", b)
	}
}

// TestSaveLayoutIsReference: tensors in the reference writer's order
// (dtype alignment, largest first, then name), each aligned for its
// dtype, after a header padded to 8 bytes.
func TestSaveLayoutIsReference(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.safetensors")
	in := sample()
	if err := Save(path, in, nil); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	n := binary.LittleEndian.Uint64(b)
	if n%8 != 0 {
		t.Errorf("header of %d bytes", n)
	}
	tensors, _, err := parseHeader(b[8:8+n], uint64(len(b))-8-n)
	if err != nil {
		t.Fatal(err)
	}
	list := slices.Collect(func(yield func(*tensorInfo) bool) {
		for _, ti := range tensors {
			if !yield(ti) {
				return
			}
		}
	})
	slices.SortFunc(list, func(a, b *tensorInfo) int { return cmp64b(a.begin, b.begin, a.name, b.name) })
	for i, ti := range list {
		if ti.begin%uint64(ti.kind.Size()) != 0 {
			t.Errorf("%q (%s) at %d: misaligned", ti.name, ti.dtype, ti.begin)
		}
		if i > 0 {
			p := list[i-1]
			if p.kind.Rank() < ti.kind.Rank() || p.kind.Rank() == ti.kind.Rank() && p.name > ti.name && ti.end > ti.begin {
				t.Errorf("%q (%s) after %q (%s)", ti.name, ti.dtype, p.name, p.dtype)
			}
		}
	}
	// The reference writer's bytes for one tensor (its test_serialization).
	x := array.FromSlice([]float32{0, 1, 2, 3, 4, 5}, 1, 2, 3)
	if err := Save(path, map[string]*array.Array{"attn.0": x}, nil); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := []byte{64, 0, 0, 0, 0, 0, 0, 0}
	want = append(want, `{"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}}`...)
	want = append(want, 0, 0, 0, 0, 0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64, 0, 0, 160, 64)
	if !bytes.Equal(got, want) {
		t.Errorf("file\n%q\nwant the reference writer's\n%q", got, want)
	}
}

func cmp64b(a, b uint64, an, bn string) int {
	if a != b {
		return cmp64(a, b)
	}
	return cmpStr(an, bn)
}

// TestLaziness: Get reads nothing until Eval; Close makes pending arrays
// a clear error and leaves evaluated ones alone; Get after Close and a
// second Close are fine.
func TestLaziness(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.safetensors")
	in := map[string]*array.Array{"a": tensortest.Fill(array.Float32, []int{3, 4}), "b": tensortest.Fill(array.Int32, []int{5})}
	if err := Save(path, in, nil); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := f.Get("a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.Get("b")
	if err != nil {
		t.Fatal(err)
	}
	if a.Evaluated() || !slices.Equal(a.Shape(), []int{3, 4}) || a.DType() != array.Float32 {
		t.Errorf("Get: evaluated %v, shape %v, dtype %v", a.Evaluated(), a.Shape(), a.DType())
	}
	if !same(t, a, in["a"]) {
		t.Error("a changed")
	}
	// Saving over the open file replaces it whole; the open File keeps
	// reading the contents it opened (unix: the mapping holds the old
	// file; Windows refuses to replace an open file).
	if runtime.GOOS != "windows" {
		b2, _ := f.Get("b")
		if err := Save(path, map[string]*array.Array{"new": tensortest.Fill(array.Float64, []int{7}), "b": array.FromSlice([]int32{9, 9, 9, 9, 9})}, nil); err != nil {
			t.Fatal(err)
		}
		if !same(t, b2, in["b"]) {
			t.Error("a pending array of an open File changed when the file was replaced")
		}
	}
	if _, err := f.Get("nope"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("Get of a missing name: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	// a was evaluated before Close: still fine.
	if !same(t, a, in["a"]) {
		t.Error("a changed after Close")
	}
	err = b.Eval()
	var ae *array.Error
	if !errors.As(err, &ae) || !errors.Is(err, os.ErrClosed) || !strings.Contains(err.Error(), `tensor "b"`) {
		t.Errorf("evaluating after Close: %v, want an *array.Error wrapping os.ErrClosed naming b", err)
	}
	if _, err := f.Get("a"); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Get after Close: %v", err)
	}
}

// TestConcurrentGetAndClose: goroutines evaluate tensors of one file
// while another closes it: each evaluation gives the right values or the
// closed error, never a crash (run with -race).
func TestConcurrentGetAndClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.safetensors")
	big := tensortest.Fill(array.Float32, []int{1 << 22}) // 16 MB: copied by several goroutines
	small := tensortest.Fill(array.Int64, []int{100})
	if err := Save(path, map[string]*array.Array{"big": big, "small": small}, nil); err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{"big": rawBytes(t, big), "small": rawBytes(t, small)}
	for range 3 {
		f, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				name := []string{"big", "small"}[i%2]
				a, err := f.Get(name)
				if err != nil {
					if !errors.Is(err, os.ErrClosed) {
						t.Error(err)
					}
					return
				}
				if err := a.Eval(); err != nil {
					if !errors.Is(err, os.ErrClosed) {
						t.Error(err)
					}
					return
				}
				if !bytes.Equal(rawBytes(t, a), want[name]) {
					t.Errorf("%s: wrong values", name)
				}
			})
		}
		wg.Go(func() { f.Close() })
		wg.Wait()
	}
}

// TestTruncatedWhileOpen: a file truncated under its mapping is an error
// from Eval, not a crash (SIGBUS).
func TestTruncatedWhileOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.safetensors")
	if err := Save(path, map[string]*array.Array{"a": tensortest.Fill(array.Float32, []int{1 << 21})}, nil); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a, err := f.Get("a")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 100); err != nil {
		t.Fatal(err)
	}
	err = a.Eval()
	var ae *array.Error
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), `tensor "a"`) {
		t.Fatalf("Eval of a truncated file: %v", err)
	}
	t.Log(err)
}

func TestSaveErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.safetensors")
	x := tensortest.Fill(array.Float32, []int{2})
	for name, c := range map[string]struct {
		tensors map[string]*array.Array
		meta    map[string]string
		msg     string
	}{
		"nil":           {map[string]*array.Array{"a": nil}, nil, `"a" is nil`},
		"metadata name": {map[string]*array.Array{metadataKey: x}, nil, "cannot be named"},
		"bad name":      {map[string]*array.Array{"\xff": x}, nil, "UTF-8"},
		"bad metadata":  {map[string]*array.Array{"a": x}, map[string]string{"k": "\xfe"}, "UTF-8"},
	} {
		err := Save(path, c.tensors, c.meta)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want %q", name, err, c.msg)
		}
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Error("a failed save created the file")
	}
}

// failing is a primitive whose evaluation fails.
type failing struct{}

func (failing) Name() string { return "failing" }
func (failing) Eval(array.Stream, []*array.Array, []*array.Array) error {
	return errors.New("device on fire")
}

// failAfter is a writer that fails once n bytes went through.
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

// TestSaveIsAtomic: a save that fails part-way returns its error, leaves
// the old file whole, and leaves no temporary file.
func TestSaveIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.safetensors")
	old := map[string]*array.Array{"w": tensortest.Fill(array.Float32, []int{4})}
	if err := Save(path, old, map[string]string{"v": "1"}); err != nil {
		t.Fatal(err)
	}
	oldBytes, _ := os.ReadFile(path)
	big := map[string]*array.Array{"w": tensortest.Fill(array.Float32, []int{1 << 20}), "b": tensortest.Fill(array.Float16, []int{100})}
	for _, at := range []int{0, 5, 100, 1 << 20} {
		tensorio.WrapTempWriter = func(w io.Writer) io.Writer { return &failAfter{w, at} }
		err := Save(path, big, nil)
		tensorio.WrapTempWriter = nil
		if !errors.Is(err, errDiskFull) {
			t.Errorf("writer failing after %d bytes: %v", at, err)
		}
	}
	pending := array.New(array.CurrentStream(), []int{3}, array.Float32, failing{})
	if err := Save(path, map[string]*array.Array{"ok": big["w"], "bad": pending}, nil); err == nil || !strings.Contains(err.Error(), "device on fire") {
		t.Errorf("failing array: %v", err)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, oldBytes) {
		t.Error("the old file changed")
	}
	blocked := filepath.Join(dir, "blocked.safetensors")
	if err := os.MkdirAll(filepath.Join(blocked, "child"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Save(blocked, old, nil); err == nil {
		t.Error("rename over a non-empty directory: no error")
	}
	if _, err := os.Stat(filepath.Join(blocked, "child")); err != nil {
		t.Errorf("the directory changed: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"blocked.safetensors", "x.safetensors"}) {
		t.Errorf("directory holds %v: a temporary file was left behind", names)
	}
	// A symbolic link is followed: its target is replaced.
	link := filepath.Join(dir, "link.safetensors")
	if err := os.Symlink(path, link); err != nil {
		t.Skip(err)
	}
	if err := Save(link, big, nil); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced, not its target")
	}
	if got, _, err := Load(path); err != nil || !same(t, got["w"], big["w"]) {
		t.Errorf("the target was not replaced: %v", err)
	}
}
