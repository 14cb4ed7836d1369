package npy

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/fathom-go/fathom/array"
)

// seedFiles adds the committed reference files with the given suffix.
func seedFiles(f *testing.F, suffix string) {
	names, _ := filepath.Glob(filepath.Join("testdata", "*"+suffix))
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzLoadNPY: no input makes Load panic, hang or fail other than with
// an *array.Error; what loads evaluates, and saves and loads again to the
// same bytes. The seeds (the hostile table, the reference files and
// testdata/fuzz/FuzzLoadNPY) run in every go test.
func FuzzLoadNPY(f *testing.F) {
	for _, c := range hostileNPY {
		f.Add(c.data)
	}
	seedFiles(f, ".npy")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, known := range []bool{true, false} {
			var a *array.Array
			var err error
			if known {
				a, err = Load(bytes.NewReader(data))
			} else {
				a, err = Load(opaque{bytes.NewReader(data)})
			}
			if err != nil {
				var ae *array.Error
				if !errors.As(err, &ae) {
					t.Fatalf("error %T %v is not an *array.Error", err, err)
				}
				continue
			}
			roundTrip(t, a)
		}
	})
}

// roundTrip checks that a evaluates and that saving it and loading it
// again gives the same file.
func roundTrip(t *testing.T, a *array.Array) {
	t.Helper()
	if err := a.Eval(); err != nil {
		t.Fatal(err)
	}
	var b1, b2 bytes.Buffer
	if err := Save(&b1, a); err != nil {
		t.Fatal(err)
	}
	c, err := Load(bytes.NewReader(b1.Bytes()))
	if err != nil {
		t.Fatalf("reloading a saved array: %v", err)
	}
	if err := Save(&b2, c); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1.Bytes(), b2.Bytes()) {
		t.Fatal("save, load, save changed the file")
	}
}

// FuzzLoadNPZ: as FuzzLoadNPY, for archives.
func FuzzLoadNPZ(f *testing.F) {
	for _, c := range hostileNPZ(f) {
		f.Add(c.data)
	}
	seedFiles(f, ".npz")
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := loadZip("npy.LoadNPZ", bytes.NewReader(data), int64(len(data)))
		if err != nil {
			var ae *array.Error
			if !errors.As(err, &ae) {
				t.Fatalf("error %T %v is not an *array.Error", err, err)
			}
			if out != nil {
				t.Fatal("arrays and an error")
			}
			return
		}
		for _, a := range out {
			roundTrip(t, a)
		}
	})
}
