package graph_test

import (
	"fmt"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/graph"
	"github.com/fathom-go/fathom/ops"
)

func ExampleVJP() {
	// f(x) = x * x; its vector-Jacobian product with u is 2 x u
	f := func(in ...*array.Array) []*array.Array { return []*array.Array{ops.Mul(in[0], in[0])} }
	x := array.FromSlice([]float32{1, 2, 3})
	u := array.FromSlice([]float32{1, 1, 0.5})
	outs, vjps := graph.VJP(f, []*array.Array{x}, []*array.Array{u})
	fmt.Println(outs[0])
	fmt.Println(vjps[0])
	// Output:
	// array([1., 4., 9.], dtype=float32)
	// array([2., 4., 3.], dtype=float32)
}

func ExampleJVP() {
	// f(x, y) = x * y; along the tangent (1, 0) its derivative is y
	f := func(in ...*array.Array) []*array.Array { return []*array.Array{ops.Mul(in[0], in[1])} }
	x := array.FromSlice([]float32{1, 2, 3})
	y := array.FromSlice([]float32{4, 5, 6})
	_, jvps := graph.JVP(f, []*array.Array{x, y}, []*array.Array{ops.OnesLike(x), ops.ZerosLike(y)})
	fmt.Println(jvps[0])
	// Output:
	// array([4., 5., 6.], dtype=float32)
}

func ExampleGrad() {
	// d/dx sum(x^3) = 3 x^2, and the second derivative is 6 x
	f := func(in ...*array.Array) *array.Array { return ops.Sum(ops.PowScalar(in[0], 3)) }
	x := array.FromSlice([]float32{1, 2, 3})
	fmt.Println(graph.Grad(f)(x)[0])

	df := func(in ...*array.Array) *array.Array { return ops.Sum(graph.Grad(f)(in[0])[0]) }
	fmt.Println(graph.Grad(df)(x)[0])
	// Output:
	// array([ 3., 12., 27.], dtype=float32)
	// array([ 6., 12., 18.], dtype=float32)
}

func ExampleValueAndGrad() {
	// the squared error of y = w x + b and its gradient with respect to w
	// and b (arguments 0 and 1; x and y are data)
	loss := func(in ...*array.Array) *array.Array {
		w, b, x, y := in[0], in[1], in[2], in[3]
		return ops.Mean(ops.Square(ops.Sub(ops.Add(ops.Mul(w, x), b), y)))
	}
	x := array.FromSlice([]float32{1, 2, 3})
	y := array.FromSlice([]float32{3, 5, 7})
	w, b := array.Scalar[float32](1), array.Scalar[float32](0)
	l, g := graph.ValueAndGrad(loss, 0, 1)(w, b, x, y)
	fmt.Printf("loss %.4f, d/dw %.4f, d/db %.4f\n", l.Item(), g[0].Item(), g[1].Item())
	// Output:
	// loss 9.6667, d/dw -13.3333, d/db -6.0000
}

func ExampleVmap() {
	// per-example gradients: the gradient with respect to w of one
	// example's loss (w.x)^2, which is 2 (w.x) x, mapped over a batch of
	// examples x; w is shared (not batched)
	loss := func(in ...*array.Array) *array.Array {
		w, x := in[0], in[1]
		return ops.Square(ops.Sum(ops.Mul(w, x)))
	}
	w := array.FromSlice([]float32{1, -1})
	batch := array.FromSlice([]float32{1, 2, 3, 5, 2, 1}, 3, 2)
	perExample := graph.Vmap(graph.Grad(loss), []int{graph.NoAxis, 0}, nil)
	fmt.Println(perExample(w, batch)[0])
	// Output:
	// array([[ -2.,  -4.],
	//        [-12., -20.],
	//        [  4.,   2.]], dtype=float32)
}

func ExampleValueAndGradAux() {
	// a loss with the predictions as an auxiliary output: they come back
	// with the loss, and only the loss is differentiated
	loss := func(in ...*array.Array) (*array.Array, []*array.Array) {
		w, x, y := in[0], in[1], in[2]
		pred := ops.Mul(w, x)
		return ops.Mean(ops.Square(ops.Sub(pred, y))), []*array.Array{pred}
	}
	x := array.FromSlice([]float32{1, 2, 3})
	y := array.FromSlice([]float32{2, 4, 6})
	l, aux, g := graph.ValueAndGradAux(loss)(array.Scalar[float32](1), x, y)
	fmt.Printf("loss %.4f, d/dw %.4f\n", l.Item(), g[0].Item())
	fmt.Println(aux[0])
	// Output:
	// loss 4.6667, d/dw -9.3333
	// array([1., 2., 3.], dtype=float32)
}

func ExampleCustomFunction() {
	// log(1 + e^x) with hand-written derivatives in both modes and a
	// batching rule (here: the function is elementwise, so it batches as
	// it is)
	f := func(in ...*array.Array) []*array.Array {
		return []*array.Array{ops.LogAddExp(in[0], ops.ZerosLike(in[0]))}
	}
	softplus := graph.CustomFunction(graph.Custom{
		F: f,
		VJP: func(primals, _, cotangents []*array.Array) []*array.Array {
			return []*array.Array{ops.Mul(cotangents[0], ops.Sigmoid(primals[0]))}
		},
		JVP: func(primals, tangents []*array.Array) []*array.Array {
			return []*array.Array{ops.Mul(tangents[0], ops.Sigmoid(primals[0]))}
		},
		Vmap: func(inputs []*array.Array, axes []int) ([]*array.Array, []int) {
			return f(inputs...), axes
		},
	})
	x := array.FromSlice([]float32{-1, 0, 1})
	fmt.Println(graph.Grad(func(in ...*array.Array) *array.Array { return ops.Sum(softplus(in...)[0]) })(x)[0])
	_, jvps := graph.JVP(softplus, []*array.Array{x}, []*array.Array{ops.OnesLike(x)})
	fmt.Println(jvps[0])
	// Output:
	// array([0.26894143, 0.5       , 0.7310586 ], dtype=float32)
	// array([0.26894143, 0.5       , 0.7310586 ], dtype=float32)
}

func ExampleCustomVJP() {
	// x * x with its gradient clipped to [-1, 1] in the reverse pass
	square := graph.CustomVJP(
		func(in ...*array.Array) []*array.Array { return []*array.Array{ops.Mul(in[0], in[0])} },
		func(primals, outputs, cotangents []*array.Array) []*array.Array {
			g := ops.Mul(ops.MulScalar(primals[0], 2), cotangents[0])
			return []*array.Array{ops.MinimumScalar(ops.MaximumScalar(g, -1), 1)}
		})
	loss := func(in ...*array.Array) *array.Array { return ops.Sum(square(in[0])[0]) }
	x := array.FromSlice([]float32{-3, 0.25, 2})
	fmt.Println(graph.Grad(loss)(x)[0])
	// forward mode still differentiates x * x
	_, jvps := graph.JVP(square, []*array.Array{x}, []*array.Array{ops.OnesLike(x)})
	fmt.Println(jvps[0])
	// Output:
	// array([-1. ,  0.5,  1. ], dtype=float32)
	// array([-6. ,  0.5,  4. ], dtype=float32)
}

func ExampleCheckpoint() {
	// a block whose reverse pass recomputes tanh(x w) instead of keeping it
	blk := func(in ...*array.Array) []*array.Array {
		return []*array.Array{ops.Tanh(ops.Mul(in[0], in[1]))}
	}
	loss := func(f graph.Fn) func(in ...*array.Array) *array.Array {
		return func(in ...*array.Array) *array.Array { return ops.Sum(f(in...)[0]) }
	}
	x := array.FromSlice([]float64{0.5, -1})
	w := array.Scalar(2.0)
	kept := graph.Grad(loss(blk), 1)(x, w)[0]
	recomputed := graph.Grad(loss(graph.Checkpoint(blk)), 1)(x, w)[0]
	fmt.Printf("%.6f %.6f\n", kept.Item(), recomputed.Item())
	// Output:
	// 0.139336 0.139336
}
