package npy

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/fathom-go/fathom/encoding/internal/tensortest"

	"github.com/fathom-go/fathom/array"
)

// python is the interpreter with numpy that the reference files come
// from (Debian's; the python3 on PATH may lack numpy).
const python = "/usr/bin/python3"

// needNumpy skips the test where python has no numpy.
func needNumpy(t *testing.T) {
	t.Helper()
	if err := exec.Command(python, "-c", "import numpy").Run(); err != nil {
		t.Skipf("%s with numpy is not available: %v", python, err)
	}
}

// TestNumpyReadsFathomFiles writes every dtype, order and shape kind with
// SaveFile and SaveNPZ, and has numpy load them and compare their values
// (testdata/gen_npy.py check).
func TestNumpyReadsFathomFiles(t *testing.T) {
	needNumpy(t)
	dir := t.TempDir()
	manifest := map[string]any{}
	entry := func(a *array.Array, order string) map[string]any {
		vals := []json.RawMessage{}
		for _, v := range tensortest.Elems(t, a) {
			vals = append(vals, json.RawMessage(v))
		}
		return map[string]any{"dtype": a.DType().String(), "shape": a.Shape(), "order": order, "values": vals}
	}
	save := func(name string, a *array.Array, order string) {
		if err := SaveFile(filepath.Join(dir, name), a); err != nil {
			t.Fatal(err)
		}
		manifest[name] = entry(a, order)
	}
	for _, dt := range npyDTypes {
		save(dt.String()+".npy", tensortest.Fill(dt, []int{2, 3}), "C")
		save(dt.String()+"_fortran.npy", permute(tensortest.Fill(dt, []int{3, 4})), "F")
		save(dt.String()+"_strided.npy", permute(tensortest.Fill(dt, []int{2, 3, 4}), 1, 0, 2), "C")
		save(dt.String()+"_scalar.npy", tensortest.Fill(dt, nil), "C")
		save(dt.String()+"_empty.npy", tensortest.Fill(dt, []int{0, 3}), "C")
	}
	save("large.npy", tensortest.Fill(array.Float32, []int{1000, 300}), "C")
	arrays := map[string]*array.Array{
		"w":    tensortest.Fill(array.Float32, []int{4, 3}),
		"b":    tensortest.Fill(array.Float64, []int{3}),
		"mask": tensortest.Fill(array.Bool, []int{2, 2}),
		"n":    tensortest.Fill(array.Int64, nil),
		"ids":  tensortest.Fill(array.Uint64, []int{5}),
		"q":    permute(tensortest.Fill(array.Int8, []int{2, 4})),
		"pcm":  tensortest.Fill(array.Int16, []int{0, 2}),
		"u16":  tensortest.Fill(array.Uint16, nil),
		"u32":  tensortest.Fill(array.Uint32, []int{3, 2}),
	}
	for _, compressed := range []bool{false, true} {
		name := "arrays.npz"
		if compressed {
			name = "arrays_compressed.npz"
		}
		if err := SaveNPZ(filepath.Join(dir, name), arrays, compressed); err != nil {
			t.Fatal(err)
		}
		m := map[string]any{}
		for k, a := range arrays {
			m[k] = entry(a, "C")
		}
		manifest[name] = m
	}
	b, err := json.Marshal(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, "gen_npy.py", "check", dir)
	cmd.Dir = "testdata"
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("numpy rejects fathom's files: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
