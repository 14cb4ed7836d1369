package nn_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/encoding/safetensors"
	"github.com/fathom-go/fathom/nn"
	"github.com/fathom-go/fathom/ops"
	"github.com/fathom-go/fathom/random"
)

func TestSaveLoadRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.safetensors")
	a := newBNNet()
	// move the running statistics and the dropout key off their start
	a.Forward(random.Normal(random.Key(1), []int{4, 5, 5, 2}, array.Float32, 0, 1))
	if err := nn.Save(path, a); err != nil {
		t.Fatal(err)
	}
	tensors, meta, err := safetensors.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"bn.bias", "bn.running_mean", "bn.running_var", "bn.weight", "conv.bias", "conv.weight", "drop.key", "head.bias", "head.weight"}
	if got := sortedKeys(tensors); !slices.Equal(got, want) {
		t.Fatalf("saved %q, want %q", got, want)
	}
	if meta["format"] != "fathom.nn" {
		t.Errorf("metadata %v", meta)
	}
	b := newBNNet()
	b.Head = nn.NewLinear(random.Key(77), 3, 2, true)
	if err := nn.Load(path, b); err != nil {
		t.Fatal(err)
	}
	pa, pb := nn.Parameters(a), nn.Parameters(b)
	for n := range pa {
		if pa[n].DType() != pb[n].DType() || !slices.Equal(f64(t, pa[n]), f64(t, pb[n])) {
			t.Errorf("%s differs after Load", n)
		}
	}
}

func TestLoadSaysWhatDiffers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.safetensors")
	m := newMLP(t, 3, 4, 2)
	if err := nn.Save(path, m); err != nil {
		t.Fatal(err)
	}
	other := newMLP(t, 3, 5, 2, 1)
	to32 := &mlp{Layers: []*nn.Linear{nn.NewLinear(random.Key(1), 3, 4, true), nn.NewLinear(random.Key(2), 4, 2, true)}, Scale: array.Scalar(0.5)}
	before := nn.Parameters(other)
	err := nn.Load(path, other)
	if !hasErr(err, "nn.Load", `"layers.0.weight" is float64 [4 3] in the file, float64 [5 3] in the model`,
		`missing from the file: "layers.2.bias", "layers.2.weight"`) {
		t.Errorf("Load into another shape: %v", err)
	}
	for n, a := range nn.Parameters(other) {
		if a != before[n] {
			t.Errorf("a failed Load changed %s", n)
		}
	}
	err = nn.Load(path, to32)
	if !hasErr(err, "nn.Load", `"layers.0.bias" is float64 [4] in the file, float32 [4] in the model`) {
		t.Errorf("Load into float32: %v", err)
	}
	small := &mlp{Layers: []*nn.Linear{nn.NewLinear(random.Key(1), 3, 4, true)}, Scale: array.Scalar(0.5)}
	to64(t, small)
	err = nn.Load(path, small)
	if !hasErr(err, "nn.Load", `not in the model: "layers.1.bias", "layers.1.weight"`) {
		t.Errorf("Load into a smaller model: %v", err)
	}
	if err := nn.Load(filepath.Join(t.TempDir(), "none"), m); err == nil {
		t.Error("Load of a missing file succeeded")
	}
}

// TestSaveKeepsTheOldCheckpoint checks a failed Save leaves the previous
// checkpoint whole.
func TestSaveKeepsTheOldCheckpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.safetensors")
	m := newMLP(t, 3, 4, 2)
	if err := nn.Save(path, m); err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// a value that fails when evaluated: an out-of-range index
	bad := newMLP(t, 3, 4, 2)
	bad.Scale = ops.Take(array.FromSlice([]float64{1}), array.Scalar(int32(5)), 0)
	if err := nn.Save(path, bad); err == nil {
		t.Fatal("Save of a model whose arrays fail succeeded")
	}
	if err := nn.Save(path, &mlp{Layers: []*nn.Linear{nil}}); !hasErr(err, "nn.Save", `"layers.0"`) {
		t.Errorf("Save of a bad tree: %v", err)
	}
	now, err := os.ReadFile(path)
	if err != nil || !slices.Equal(now, old) {
		t.Error("a failed Save changed the checkpoint")
	}
}
