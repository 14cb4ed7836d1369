package metal_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/cpu"
	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/internal/opset"
	"github.com/fathom-go/fathom/internal/strided"
)

// TestConvPoolCapabilitiesMatchCPU checks the convolution and pooling
// plans from the CPU's side, as TestGPUCapabilitiesMatchKernels does for
// the other families: for every dtype, a plan succeeds exactly where the
// CPU kernel computes the dtype and the GPU has it (opset.HasDType), and
// then launches only kernels that exist; a refusal is an *array.Error
// naming the dtype, and no kernel of that dtype exists for it.
func TestConvPoolCapabilitiesMatchCPU(t *testing.T) {
	have := map[string]bool{}
	for _, lib := range []string{"conv.metal", "pool.metal"} {
		units, err := metal.LibraryUnits(lib)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range units {
			for _, n := range u.Kernels {
				have[lib+" "+n] = true
			}
		}
	}
	buf := func(dt array.DType, shape ...int) cpu.Buf {
		n := 1
		for _, d := range shape {
			n *= d
		}
		return cpu.Buf{Data: make([]byte, n*dt.Size()), DType: dt, Shape: shape, Strides: strided.RowMajor(shape)}
	}
	view := func(b cpu.Buf) metal.View {
		return metal.View{Mem: hostMem(b.Data), DType: b.DType, Shape: b.Shape, Strides: b.Strides}
	}
	pool := metal.Pool{Kernel: []int{2}, Stride: []int{2}, Pad: []int{1}}
	cpool := cpu.Pool{Kernel: pool.Kernel, Stride: pool.Stride, Pad: pool.Pad}
	conv := metal.ConvParams{Stride: []int{1}, PadLo: []int{1}, PadHi: []int{0}, KernelDilation: []int{1}, InputDilation: []int{1}, Groups: 1}
	cconv := cpu.ConvParams{Stride: conv.Stride, PadLo: conv.PadLo, PadHi: conv.PadHi, KernelDilation: conv.KernelDilation,
		InputDilation: conv.InputDilation, Groups: 1}
	for _, dt := range array.DTypes() {
		if !opset.HasDType(array.DeviceCPU, dt) {
			continue
		}
		x, y := buf(dt, 1, 6, 2), buf(dt, 1, 4, 2)
		cx, cw, cout, dout := buf(dt, 1, 6, 3), buf(dt, 20, 2, 3), buf(dt, 1, 6, 20), buf(dt, 1, 6, 2)
		dw := buf(dt, 2, 2, 3)
		for _, c := range []struct {
			name, lib, kernel string
			cpu               func() error
			gpu               func() ([]metal.Launch, error)
		}{
			{"MaxPool", "pool.metal", "pool_max_", func() error { return cpu.MaxPool(y, x, cpool) },
				func() ([]metal.Launch, error) { return metal.MaxPool(view(y), view(x), pool) }},
			{"AvgPool", "pool.metal", "pool_avg_", func() error { return cpu.AvgPool(y, x, cpool) },
				func() ([]metal.Launch, error) { return metal.AvgPool(view(y), view(x), pool) }},
			{"AvgPoolGrad", "pool.metal", "pool_avg_grad_", func() error { return cpu.AvgPoolGrad(x, y, cpool) },
				func() ([]metal.Launch, error) { return metal.AvgPoolGrad(view(x), view(y), pool) }},
			{"MaxPoolGather", "pool.metal", "pool_max_gather_", func() error { return cpu.MaxPoolGather(y, x, x, cpool) },
				func() ([]metal.Launch, error) { return metal.MaxPoolGather(view(y), view(x), view(x), pool) }},
			{"MaxPoolScatter", "pool.metal", "pool_max_scatter_", func() error { return cpu.MaxPoolScatter(x, x, y, cpool) },
				func() ([]metal.Launch, error) { return metal.MaxPoolScatter(view(x), view(x), view(y), pool) }},
			{"Conv (GEMM)", "conv.metal", "conv_gemm_", func() error { return cpu.Conv(cout, cx, cw, cconv) },
				func() ([]metal.Launch, error) { return metal.Conv(view(cout), view(cx), view(cw), conv) }},
			{"Conv (direct)", "conv.metal", "conv_direct_", func() error { return cpu.Conv(dout, cx, dw, cconv) },
				func() ([]metal.Launch, error) { return metal.Conv(view(dout), view(cx), view(dw), conv) }},
		} {
			what := fmt.Sprintf("%s of %v", c.name, dt)
			want := c.cpu() == nil && opset.HasDType(array.DeviceGPU, dt)
			ls, err := c.gpu()
			switch {
			case want && err != nil:
				t.Errorf("%s: the CPU computes it, but the plan fails: %v", what, err)
			case !want && err == nil:
				t.Errorf("%s: the CPU or the GPU lacks it, but the plan succeeds", what)
			case err != nil:
				if _, ok := err.(*array.Error); !ok || !strings.Contains(err.Error(), dt.String()) {
					t.Errorf("%s: refusal %v is not an *array.Error naming %v", what, err, dt)
				}
				if have[c.lib+" "+c.kernel+dt.String()] {
					t.Errorf("%s is refused, but %s has kernel %s%v", what, c.lib, c.kernel, dt)
				}
			}
			for _, l := range ls {
				if !have[l.Library+" "+l.Kernel] {
					t.Errorf("%s: the plan launches %s, which %s does not have", what, l.Kernel, l.Library)
				}
				if !strings.HasPrefix(l.Kernel, c.kernel) {
					t.Errorf("%s: the plan launches %s, want %s%v", what, l.Kernel, c.kernel, dt)
				}
			}
		}
	}
}
