package npy_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

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
	// A complex128 array, which numpy has and fathom has not yet.
	_, err := npy.Load(bytes.NewReader([]byte("\x93NUMPY\x01\x00\x46\x00{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }           \n" +
		"\x00\x00\x00\x00\x00\x00\xf0\x3f\x00\x00\x00\x00\x00\x00\x00\x40")))
	fmt.Println(err)
	fmt.Println(errors.Is(err, npy.ErrUnsupported))
	// Output:
	// npy.Load: dtype complex128 is not supported yet: fathom has no complex128 arrays (numpy "<c16")
	// true
}

func ExampleLoad_integers() {
	// An int8 array, as np.save(f, np.array([-128, 0, 127], np.int8))
	// writes it, and a big-endian uint64 one (dtype '>u8').
	int8s := "\x93NUMPY\x01\x00\x76\x00{'descr': '|i1', 'fortran_order': False, 'shape': (3,), }" + strings.Repeat(" ", 60) + "\n\x80\x00\x7f"
	uint64s := "\x93NUMPY\x01\x00\x76\x00{'descr': '>u8', 'fortran_order': False, 'shape': (1,), }" + strings.Repeat(" ", 60) + "\n\xff\xff\xff\xff\xff\xff\xff\xfe"
	a, err := npy.Load(strings.NewReader(int8s))
	if err != nil {
		fmt.Println(err)
		return
	}
	b, err := npy.Load(strings.NewReader(uint64s))
	if err != nil {
		fmt.Println(err)
		return
	}
	va, _ := array.ToSlice[int8](a)
	vb, _ := array.ToSlice[uint64](b)
	fmt.Println(a.DType(), va, b.DType(), vb)
	// Output: int8 [-128 0 127] uint64 [18446744073709551614]
}
