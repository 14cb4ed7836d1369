package safetensors

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/fathom-go/fathom/encoding/internal/tensortest"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/encoding/internal/tensorio"
)

// python is the interpreter with numpy that the reference files come
// from (Debian's; the python3 on PATH may lack numpy).
const python = "/usr/bin/python3"

// TestPythonReadsFathomFiles writes files with Save and has
// testdata/gen_safetensors.py read them: the layout the specification
// requires, the reference writer's order and padding, and the values
// (decoded with numpy).
func TestPythonReadsFathomFiles(t *testing.T) {
	if err := exec.Command(python, "-c", "import numpy").Run(); err != nil {
		t.Skipf("%s with numpy is not available: %v", python, err)
	}
	dir := t.TempDir()
	manifest := map[string]map[string]any{}
	save := func(name string, tensors map[string]*array.Array, meta map[string]string) {
		if err := Save(filepath.Join(dir, name), tensors, meta); err != nil {
			t.Fatal(err)
		}
		m := map[string]any{}
		for k, a := range tensors {
			vals := []json.RawMessage{}
			for _, v := range tensortest.Elems(t, a) {
				vals = append(vals, json.RawMessage(v))
			}
			kind, _ := tensorio.FromDType(a.DType())
			m[k] = map[string]any{"dtype": kind.Safetensors, "shape": a.Shape(), "values": vals}
		}
		if meta != nil {
			m["__metadata__"] = meta
		}
		manifest[name] = m
	}
	model := map[string]*array.Array{}
	for _, dt := range allDTypes {
		model["w."+dt.String()] = tensortest.Fill(dt, []int{3, 2})
		model["w."+dt.String()+".T"] = permute(tensortest.Fill(dt, []int{2, 5}))
	}
	model["scalar"] = tensortest.Fill(array.Float64, nil)
	model["empty"] = tensortest.Fill(array.Float32, []int{0, 3})
	model["big"] = tensortest.Fill(array.BFloat16, []int{300, 200})
	save("model.safetensors", model, map[string]string{"format": "pt", "ünï": "<&>\""})
	save("nothing.safetensors", map[string]*array.Array{}, nil)
	save("one.safetensors", map[string]*array.Array{"attn0": tensortest.Fill(array.Float32, []int{1, 1, 2, 3})}, nil)
	b, err := json.Marshal(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, "gen_safetensors.py", "check", dir)
	cmd.Dir = "testdata"
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the Python reader rejects fathom's files: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
