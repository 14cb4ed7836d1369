package npy_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/encoding/npy"
)

func ExampleSaveFile() {
	dir, _ := os.MkdirTemp("", "npy")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "x.npy") // np.load(path) reads it

	x := array.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	if err := npy.SaveFile(path, x); err != nil {
		fmt.Println(err)
		return
	}
	y, err := npy.LoadFile(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	v, _ := array.ToSlice[float32](y)
	fmt.Println(y.Shape(), y.DType(), v)
	// Output: [2 3] float32 [1 2 3 4 5 6]
}

func ExampleLoad() {
	// Two arrays saved one after another on one stream.
	var buf bytes.Buffer
	npy.Save(&buf, array.FromSlice([]int64{7, 8, 9}))
	npy.Save(&buf, array.Scalar(true))

	a, _ := npy.Load(&buf)
	b, _ := npy.Load(&buf)
	va, _ := array.ToSlice[int64](a)
	fmt.Println(a.Shape(), va, b.Shape(), b.Item())
	// Output: [3] [7 8 9] [] 1
}

func ExampleLoadNPZ() {
	dir, _ := os.MkdirTemp("", "npz")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "params.npz") // np.load(path)["w"] reads w

	params := map[string]*array.Array{
		"w": array.FromSlice([]float64{0.5, -1}, 1, 2),
		"b": array.Scalar(float64(3)),
	}
	if err := npy.SaveNPZ(path, params, true); err != nil {
		fmt.Println(err)
		return
	}
	got, err := npy.LoadNPZ(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	w, _ := array.ToSlice[float64](got["w"])
	fmt.Println(len(got), got["w"].Shape(), w, got["b"].Item())
	// Output: 2 [1 2] [0.5 -1] 3
}

func ExampleLoad_errors() {
	_, err := npy.Load(bytes.NewReader([]byte("\x93NUMPY\x01\x00\x46\x00{'descr': '|i1', 'fortran_order': False, 'shape': (1,), }            \n\x05")))
	fmt.Println(err)
	// Output: npy.Load: dtype int8 is not supported yet: fathom has no int8 arrays (numpy "|i1")
}
