package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/encoding/safetensors"
	"github.com/fathom-go/fathom/nn"
	"github.com/fathom-go/fathom/optim"
)

// A checkpoint is a folder of three files: the model (nn.Save), the
// optimiser's state (optim.Save) and the progress, written last, so that
// a progress file never names a step the arrays beside it have not
// reached. Each file is replaced atomically.
const (
	modelFile    = "model.safetensors"
	optimFile    = "optimizer.safetensors"
	progressFile = "progress.safetensors"
)

// progressFormat marks a progress file. It holds the progress as JSON in
// its metadata and, as an array, the random key of the data order.
const progressFormat = "fathom.examples.mnist"

// saveTo writes a checkpoint of the run to dir, creating it if needed.
func (t *trainer) saveTo(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := nn.Save(filepath.Join(dir, modelFile), t.model); err != nil {
		return err
	}
	if err := optim.Save(filepath.Join(dir, optimFile), t.opt); err != nil {
		return err
	}
	b, err := json.Marshal(t.prog)
	if err != nil {
		return err
	}
	return safetensors.Save(filepath.Join(dir, progressFile), map[string]*array.Array{"data_key": array.FromSlice(t.prog.DataKey[:])}, map[string]string{"format": progressFormat, "progress": string(b)})
}

// load reads the checkpoint in dir into the run. The checkpoint must be
// of a run of the same shape (model, hidden size, batch size, training
// subset, seed, learning rate and its decay): those decide the arrays,
// the data order and the updates.
func (t *trainer) load(dir string) error {
	saved, meta, err := safetensors.Load(filepath.Join(dir, progressFile))
	if err != nil {
		return fmt.Errorf("-resume %s: %w", dir, err)
	}
	if meta["format"] != progressFormat {
		return fmt.Errorf("-resume %s: %s is not the progress of an MNIST run", dir, progressFile)
	}
	var p progress
	if err := json.Unmarshal([]byte(meta["progress"]), &p); err != nil {
		return fmt.Errorf("-resume %s: %s: %w", dir, progressFile, err)
	}
	k := saved["data_key"]
	if k == nil || k.DType() != array.Uint32 || k.Size() != 2 {
		return fmt.Errorf("-resume %s: %s holds no data_key of two uint32 words", dir, progressFile)
	}
	key, err := array.ToSlice[uint32](k)
	if err != nil {
		return err
	}
	p.DataKey = [2]uint32(key)
	want := t.prog
	for _, d := range []struct {
		flag        string
		saved, here any
	}{
		{"-model", p.Model, want.Model},
		{"-hidden", p.Hidden, want.Hidden},
		{"-batch", p.Batch, want.Batch},
		{"-train-subset", p.TrainSubset, want.TrainSubset},
		{"-seed", p.Seed, want.Seed},
		{"-lr", p.LR, want.LR},
		{"-lr-decay", p.LRDecay, want.LRDecay},
	} {
		if d.saved != d.here {
			return fmt.Errorf("-resume %s: the checkpoint is of a run with %s %v, this run has %v: pass the same", dir, d.flag, d.saved, d.here)
		}
	}
	if err := nn.Load(filepath.Join(dir, modelFile), t.model); err != nil {
		return fmt.Errorf("-resume %s: %w", dir, err)
	}
	if err := optim.Load(filepath.Join(dir, optimFile), t.opt); err != nil {
		return fmt.Errorf("-resume %s: %w", dir, err)
	}
	if s := int(t.opt.State()["step"].Item()); s != p.Step {
		return fmt.Errorf("-resume %s: the optimiser has made %d updates, the progress file says %d: the checkpoint was not written whole", dir, s, p.Step)
	}
	t.prog = p
	return nil
}
