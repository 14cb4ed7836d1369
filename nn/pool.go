package nn

import (
	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// Pooling layers slide a window over the spatial axes of a channels-last
// input ([N, L, C], [N, H, W, C] or [N, D, H, W, C]). A zero Stride means
// the kernel size (PyTorch's default); padding pads with -inf for the
// maximum and with zeros that count in the mean for the average (as
// PyTorch's defaults and MLX's).

func poolCheck(op string, x *array.Array, d int) {
	checkIn(op, x)
	if x.Ndim() != d+2 {
		array.Panicf(op, "input shape %v: want [N, %d spatial axes..., C]", x.Shape(), d)
	}
}

func stride1(s, k int) int {
	if s == 0 {
		return k
	}
	return s
}

func stride2(s, k [2]int) [2]int { return [2]int{stride1(s[0], k[0]), stride1(s[1], k[1])} }

func stride3(s, k [3]int) [3]int {
	return [3]int{stride1(s[0], k[0]), stride1(s[1], k[1]), stride1(s[2], k[2])}
}

// MaxPool1D is the maximum over windows of x [N, L, C].
type MaxPool1D struct{ Kernel, Stride, Padding int }

// Forward pools x.
func (p MaxPool1D) Forward(x *array.Array) *array.Array {
	poolCheck("nn.MaxPool1D", x, 1)
	return ops.MaxPool1D(x, p.Kernel, stride1(p.Stride, p.Kernel), p.Padding)
}

// MaxPool2D is the maximum over windows of x [N, H, W, C].
type MaxPool2D struct{ Kernel, Stride, Padding [2]int }

// Forward pools x.
func (p MaxPool2D) Forward(x *array.Array) *array.Array {
	poolCheck("nn.MaxPool2D", x, 2)
	return ops.MaxPool2D(x, p.Kernel, stride2(p.Stride, p.Kernel), p.Padding)
}

// MaxPool3D is the maximum over windows of x [N, D, H, W, C].
type MaxPool3D struct{ Kernel, Stride, Padding [3]int }

// Forward pools x.
func (p MaxPool3D) Forward(x *array.Array) *array.Array {
	poolCheck("nn.MaxPool3D", x, 3)
	return ops.MaxPool3D(x, p.Kernel, stride3(p.Stride, p.Kernel), p.Padding)
}

// AvgPool1D is the mean over windows of x [N, L, C].
type AvgPool1D struct{ Kernel, Stride, Padding int }

// Forward pools x.
func (p AvgPool1D) Forward(x *array.Array) *array.Array {
	poolCheck("nn.AvgPool1D", x, 1)
	return ops.AvgPool1D(x, p.Kernel, stride1(p.Stride, p.Kernel), p.Padding)
}

// AvgPool2D is the mean over windows of x [N, H, W, C].
type AvgPool2D struct{ Kernel, Stride, Padding [2]int }

// Forward pools x.
func (p AvgPool2D) Forward(x *array.Array) *array.Array {
	poolCheck("nn.AvgPool2D", x, 2)
	return ops.AvgPool2D(x, p.Kernel, stride2(p.Stride, p.Kernel), p.Padding)
}

// AvgPool3D is the mean over windows of x [N, D, H, W, C].
type AvgPool3D struct{ Kernel, Stride, Padding [3]int }

// Forward pools x.
func (p AvgPool3D) Forward(x *array.Array) *array.Array {
	poolCheck("nn.AvgPool3D", x, 3)
	return ops.AvgPool3D(x, p.Kernel, stride3(p.Stride, p.Kernel), p.Padding)
}
