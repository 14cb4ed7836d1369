package tree_test

import (
	"fmt"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/tree"
)

type Layer struct {
	Weight *array.Array
	Bias   *array.Array `nn:",optional"`
}

type Model struct {
	Layers []Layer
	Embed  map[string]*array.Array
	Steps  int // not an array: not part of the tree
}

func ExampleFlatten() {
	m := &Model{
		Layers: []Layer{{Weight: array.FromSlice([]float32{1, 2})}, {Weight: array.FromSlice([]float32{3}), Bias: array.Scalar(float32(4))}},
		Embed:  map[string]*array.Array{"tokens": array.FromSlice([]float32{5, 6, 7})},
	}
	for _, p := range tree.Paths(m) {
		fmt.Println(p, tree.Flatten(m)[p])
	}
	// Output:
	// layers.0.weight array([1., 2.], dtype=float32)
	// layers.1.weight array([3.], dtype=float32)
	// layers.1.bias array(4., dtype=float32)
	// embed.tokens array([5., 6., 7.], dtype=float32)
}

func ExampleUpdate() {
	m := &Model{Layers: []Layer{{Weight: array.FromSlice([]float32{1, 2})}}}
	err := tree.Update(m, map[string]*array.Array{"layers.0.weight": array.FromSlice([]float32{9, 9})})
	fmt.Println(err, m.Layers[0].Weight)
	err = tree.Update(m, map[string]*array.Array{"layers.0.bias": array.Scalar(float32(1))})
	fmt.Println(err)
	// Output:
	// <nil> array([9., 9.], dtype=float32)
	// tree.Update: no leaf named "layers.0.bias" in the *tree_test.Model
}
