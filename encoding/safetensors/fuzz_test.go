package safetensors

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/encoding/internal/tensorio"
)

// rawBytes returns a's elements, row-major and little-endian.
func rawBytes(t *testing.T, a *array.Array) []byte {
	t.Helper()
	if err := a.Eval(); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := tensorio.WriteArray(&b, a, true, false); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// FuzzOpenSafetensors: no file makes Open, Get or Load panic, hang or
// fail other than with an *array.Error; every tensor of a file that
// opens evaluates to the bytes its offsets give, and saving what Load
// returns and loading it again gives the same tensors. The seeds (the
// hostile table, the reference files and testdata/fuzz) run in every go
// test.
func FuzzOpenSafetensors(f *testing.F) {
	for _, c := range hostile {
		f.Add(c.data)
	}
	names, _ := filepath.Glob(filepath.Join("testdata", "*.safetensors"))
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		tmp, err := os.CreateTemp(dir, "fuzz-*.safetensors")
		if err != nil {
			t.Fatal(err)
		}
		path := tmp.Name()
		defer os.Remove(path)
		tmp.Write(data)
		tmp.Close()
		file, err := Open(path)
		if err != nil {
			var ae *array.Error
			if !errors.As(err, &ae) || !errors.Is(err, ErrFormat) {
				t.Fatalf("Open: %T %v is not an *array.Error wrapping ErrFormat", err, err)
			}
			return
		}
		defer file.Close()
		base := int(file.m.base)
		for _, k := range file.Keys() {
			ti := file.tensors[k]
			a, err := file.Get(k)
			if err != nil {
				if !errors.Is(err, ErrUnsupported) {
					t.Fatalf("Get(%q): %v", k, err)
				}
				continue
			}
			want := data[base+int(ti.begin) : base+int(ti.end)]
			if got := rawBytes(t, a); !bytes.Equal(got, want) && a.DType() != array.Bool {
				t.Fatalf("%q: bytes differ from the file's", k)
			}
		}
		all, meta, err := Load(path)
		if err != nil {
			if !errors.Is(err, ErrUnsupported) {
				t.Fatalf("Load: %v", err)
			}
			return
		}
		path2 := path + ".2"
		defer os.Remove(path2)
		if err := Save(path2, all, meta); err != nil {
			t.Fatalf("Save of loaded tensors: %v", err)
		}
		again, meta2, err := Load(path2)
		if err != nil {
			t.Fatalf("Load of saved tensors: %v", err)
		}
		if len(again) != len(all) || len(meta2) != len(meta) {
			t.Fatal("save and load changed the file")
		}
		for k, a := range all {
			if !bytes.Equal(rawBytes(t, a), rawBytes(t, again[k])) {
				t.Fatalf("%q changed", k)
			}
		}
	})
}
