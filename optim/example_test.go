package optim_test

import (
	"fmt"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/nn"
	"github.com/fathom-go/fathom/ops"
	"github.com/fathom-go/fathom/optim"
)

// show prints a float32 array's values to 4 decimals.
func show(a *array.Array) {
	v, err := array.ToSlice[float32](a)
	if err != nil {
		panic(err)
	}
	fmt.Print("[")
	for i, x := range v {
		if i > 0 {
			fmt.Print(" ")
		}
		fmt.Printf("%.4f", x)
	}
	fmt.Println("]")
}

// A linear model y = w·x + b, fitted to y = 2x + 1.
type line struct {
	W *array.Array
	B *array.Array
}

func lineLoss(m *line, in ...*array.Array) *array.Array {
	pred := ops.Add(ops.Mul(in[0], m.W), m.B)
	return ops.Mean(ops.Square(ops.Sub(pred, in[1])))
}

func ExampleCompileStep() {
	m := &line{W: array.Scalar[float32](0), B: array.Scalar[float32](0)}
	opt := optim.NewAdam(0.1)
	step := optim.CompileStep(m, opt, lineLoss)
	defer step.Release()

	x := array.FromSlice([]float32{-1, 0, 1, 2})
	y := array.FromSlice([]float32{-1, 1, 3, 5})
	var loss *array.Array
	for range 300 {
		var err error
		if loss, err = step.Call(x, y); err != nil {
			panic(err)
		}
	}
	fmt.Printf("w %.2f, b %.2f, loss %.4f\n", m.W.Item(), m.B.Item(), loss.Item())
	fmt.Println("updates:", opt.State()["step"].Item())
	// Output:
	// w 2.00, b 1.00, loss 0.0000
	// updates: 300
}

// A donating step reuses the memory of the parameters it replaces; an
// array taken from the model before a step is gone after it.
func ExampleDonate() {
	m := &line{W: ops.Zeros([]int{2048}, array.Float32), B: array.Scalar[float32](0)}
	step := optim.CompileStep(m, optim.NewSGD(0.1), lineLoss, optim.Donate())
	defer step.Release()

	x := array.FromSlice([]float32{-1, 0, 1, 2})
	y := array.FromSlice([]float32{-1, 1, 3, 5})
	old := m.W
	for range 3 {
		if _, err := step.Call(ops.Reshape(x, 4, 1), ops.Reshape(y, 4, 1)); err != nil {
			panic(err)
		}
	}
	fmt.Println("new weights readable:", m.W.Eval() == nil)
	fmt.Println("old weights readable:", old.Eval() == nil)
	// Output:
	// new weights readable: true
	// old weights readable: false
}

func ExampleNewAdam() {
	params := map[string]*array.Array{"w": array.FromSlice([]float32{1, -1})}
	grads := map[string]*array.Array{"w": array.FromSlice([]float32{0.5, -2})}
	opt := optim.NewAdam(0.01)
	params = opt.Update(params, grads)
	// Adam's first step moves every coordinate by the learning rate
	show(params["w"])
	fmt.Println("step", opt.State()["step"].Item())
	show(opt.State()["m.w"])
	// Output:
	// [0.9900 -0.9900]
	// step 1
	// [0.0500 -0.2000]
}

func ExampleJoinSchedules() {
	// a linear warm-up over 3 steps, then a cosine decay over 4; a
	// schedule is a function of the step count as an array
	lr := optim.JoinSchedules([]optim.Schedule{
		optim.LinearSchedule(0, 0.1, 3),
		optim.CosineDecay(0.1, 4, 0.01),
	}, []int{3})
	for step := range 8 {
		fmt.Printf("%.4f ", lr(ops.Full(nil, float64(step), array.Float32)).Item())
	}
	fmt.Println()
	// an optimiser computes the rate of each update with it:
	// opt.Schedule = lr
	// Output:
	// 0.0000 0.0333 0.0667 0.1000 0.0868 0.0550 0.0232 0.0100
}

func ExampleClipGradNorm() {
	grads := map[string]*array.Array{
		"a": array.FromSlice([]float32{3, 0}),
		"b": array.FromSlice([]float32{4}),
	}
	clipped, norm := optim.ClipGradNorm(grads, 1)
	fmt.Printf("norm %.1f\n", norm.Item())
	show(clipped["a"])
	show(clipped["b"])
	// Output:
	// norm 5.0
	// [0.6000 0.0000]
	// [0.8000]
}

func ExampleStep() {
	m := &line{W: array.Scalar[float32](0), B: array.Scalar[float32](0)}
	opt := optim.NewSGD(0.1)
	x := array.FromSlice([]float32{1})
	y := array.FromSlice([]float32{3})
	loss, err := optim.Step(m, opt, lineLoss, x, y)
	if err != nil {
		panic(err)
	}
	// the gradient of (w·1 + b - 3)² at 0 is -6 for both
	fmt.Printf("loss %.1f, w %.2f, b %.2f\n", loss.Item(), nn.Parameters(m)["w"].Item(), m.B.Item())
	// Output:
	// loss 9.0, w 0.60, b 0.60
}

func ExampleCompileUpdate() {
	params := map[string]*array.Array{
		"w":      array.FromSlice([]float32{1, 2}),
		"frozen": array.FromSlice([]float32{5}),
	}
	grads := map[string]*array.Array{"w": array.FromSlice([]float32{1, -1})}
	opt := optim.NewSGD(0.5)
	opt.Momentum = 0.9
	upd := optim.CompileUpdate(opt) // one compiled function for every parameter
	defer upd.Release()
	for range 2 {
		var err error
		if params, err = upd.Call(params, grads); err != nil {
			panic(err)
		}
	}
	// v = 1, then 0.9*1 + 1 = 1.9: w moves by 0.5*(1+1.9)
	show(params["w"])
	show(params["frozen"])
	// Output:
	// [-0.4500 3.4500]
	// [5.0000]
}
