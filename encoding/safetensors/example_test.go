package safetensors_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/encoding/safetensors"
)

func ExampleSave() {
	dir, _ := os.MkdirTemp("", "st")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.safetensors")

	weights := map[string]*array.Array{
		"layer.weight": array.FromSlice([]float32{1, 2, 3, 4}, 2, 2),
		"layer.bias":   array.FromSlice([]float32{0.5, -0.5}),
	}
	if err := safetensors.Save(path, weights, map[string]string{"format": "pt"}); err != nil {
		fmt.Println(err)
		return
	}
	loaded, meta, err := safetensors.Load(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	w, _ := array.ToSlice[float32](loaded["layer.weight"])
	fmt.Println(len(loaded), w, meta["format"])
	// Output: 2 [1 2 3 4] pt
}

func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "st")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.safetensors")
	safetensors.Save(path, map[string]*array.Array{
		"embed": array.FromSlice(make([]float32, 1<<20), 1024, 1024),
		"scale": array.Scalar(float32(0.125)),
	}, nil)

	// Open reads the header only; Get makes a pending array whose bytes
	// are read when it is evaluated. Evaluate before Close.
	f, err := safetensors.Open(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	fmt.Println(f.Keys())
	scale, _ := f.Get("scale")
	embed, _ := f.Get("embed")
	fmt.Println(embed.Shape(), embed.Evaluated())
	fmt.Println(scale.Item(), scale.Evaluated(), embed.Evaluated())
	// Output:
	// [embed scale]
	// [1024 1024] false
	// 0.125 true false
}
