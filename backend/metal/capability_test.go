package metal_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/backend/metal"
	"github.com/fathom-go/fathom/internal/opset"
	"github.com/fathom-go/fathom/internal/strided"
)

// TestGPUCapabilitiesMatchKernels checks the GPU's refusals against the
// kernels, for the families that are not elementwise
// (TestEveryCPUKernelHasAGPUKernel has those): reductions, scans, arg
// reductions, sorts, matmul, copies, creation and random numbers. For
// every dtype the CPU computes, the plan either succeeds, and then every
// kernel it launches exists, or refuses by name, and then no kernel of
// that dtype exists: a refusal the kernels have outgrown (the integer
// dtypes of issue 17 were refused before Metal had their kernels) fails
// here, and so does a capability without its kernel. For the families
// with an opset enum, the plan also refuses exactly where Supported says
// the GPU lacks the op.
func TestGPUCapabilitiesMatchKernels(t *testing.T) {
	// The kernels of each library, from its instantiation lines (no
	// compile: TestLibraryUnits checks these against the harness's list).
	have := map[string]bool{}
	for _, lib := range metal.Libraries() {
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
	view := func(dt array.DType, shape ...int) metal.View {
		n := 1
		for _, d := range shape {
			n *= d
		}
		return metal.View{Mem: newMem(n * dt.Size()), DType: dt, Shape: shape, Strides: strided.RowMajor(shape)}
	}
	// check plans one op: supported is what opset says (or nil for the
	// families without an enum); a refusal must name the dtype dt it is
	// for, and the kernels of refused, which must not exist.
	check := func(what, lib string, dt array.DType, supported *bool, refused []string, plan func() ([]metal.Launch, error)) {
		ls, err := plan()
		switch {
		case supported != nil && *supported && err != nil:
			t.Errorf("%s: opset says the GPU has it, but the plan fails: %v", what, err)
		case supported != nil && !*supported && err == nil:
			t.Errorf("%s: opset says the GPU lacks it, but the plan succeeds", what)
		case err != nil:
			if _, ok := err.(*array.Error); !ok || !strings.Contains(err.Error(), dt.String()) {
				t.Errorf("%s: refusal %v is not an *array.Error naming %v", what, err, dt)
			}
			for _, k := range refused {
				if have[lib+" "+k] {
					t.Errorf("%s is refused, but %s has kernel %s: the refusal is stale", what, lib, k)
				}
			}
		}
		for _, l := range ls {
			if !have[l.Library+" "+l.Kernel] {
				t.Errorf("%s: the plan launches %s, which %s does not have", what, l.Kernel, l.Library)
			}
		}
	}
	for _, dt := range array.DTypes() {
		if !opset.HasDType(array.DeviceCPU, dt) {
			continue
		}
		d := dt.String()
		for op := range opset.NumReduceOps {
			r, ok := op.Result(dt)
			if !ok {
				continue
			}
			gpu := op.Supported(array.DeviceGPU, dt)
			k := strings.ToLower(op.String()) + "_" + d + "_" + r.String()
			names := []string{"reduce_rows_" + k, "reduce_cols_" + k}
			what := fmt.Sprintf("%v of %v", op, dt)
			// rows, columns, and a long fold split in two passes
			check(what+" (rows)", "reduce.metal", dt, &gpu, names, func() ([]metal.Launch, error) {
				return metal.Reduce(op, view(r, 3), view(dt, 3, 5), []int{1})
			})
			check(what+" (columns)", "reduce.metal", dt, &gpu, names, func() ([]metal.Launch, error) {
				return metal.Reduce(op, view(r, 40), view(dt, 5, 40), []int{0})
			})
			check(what+" (split)", "reduce.metal", dt, &gpu, names, func() ([]metal.Launch, error) {
				return metal.Reduce(op, view(r), view(dt, 20000), []int{0})
			})
		}
		for op := range opset.NumScanOps {
			r, ok := op.Result(dt)
			if !ok {
				continue
			}
			gpu := op.Supported(array.DeviceGPU, dt)
			check(fmt.Sprintf("%v of %v", op, dt), "scan.metal", dt, &gpu, []string{strings.ToLower(op.String()) + "_" + d},
				func() ([]metal.Launch, error) { return metal.Scan(op, view(r, 3, 5), view(dt, 3, 5), 1, false, true) })
		}
		for op := range opset.NumArgOps {
			if _, ok := op.Result(dt); !ok {
				continue
			}
			gpu := op.Supported(array.DeviceGPU, dt)
			check(fmt.Sprintf("%v of %v", op, dt), "arg_reduce.metal", dt, &gpu, []string{strings.ToLower(op.String()) + "_" + d},
				func() ([]metal.Launch, error) { return metal.ArgReduce(op, view(array.Int32, 3), view(dt, 3, 5), 1) })
		}
		var sortNames []string
		for _, pass := range []string{"block", "merge"} {
			for _, kind := range []string{"sort", "argsort", "topk", "sortscratch", "topkscratch"} {
				sortNames = append(sortNames, "sort_"+pass+"_"+kind+"_"+d)
			}
		}
		for _, n := range []int{7, 5000} {
			check(fmt.Sprintf("Sort of %v [%d]", dt, n), "sort.metal", dt, nil, sortNames, func() ([]metal.Launch, error) {
				return metal.Sort(view(dt, n), view(dt, n), 0)
			})
			check(fmt.Sprintf("ArgSort of %v [%d]", dt, n), "sort.metal", dt, nil, sortNames, func() ([]metal.Launch, error) {
				return metal.ArgSort(view(array.Int32, n), view(dt, n), 0)
			})
			check(fmt.Sprintf("TopK of %v [%d]", dt, n), "sort.metal", dt, nil, sortNames, func() ([]metal.Launch, error) {
				return metal.TopK(view(dt, 3), view(dt, n), 0, 3)
			})
		}
		mm := []string{"gemm_" + d, "gemv_" + d, "gemv_t_" + d, "gemv_t_sum_" + d}
		for _, s := range [][3]int{{9, 7, 5}, {9, 7, 1}, {1, 7, 5}, {1, 3000, 5}} {
			check(fmt.Sprintf("MatMul of %v %v", dt, s), "matmul.metal", dt, nil, mm, func() ([]metal.Launch, error) {
				return metal.MatMul(view(dt, s[0], s[2]), view(dt, s[0], s[1]), view(dt, s[1], s[2]))
			})
		}
		check("Arange of "+d, "create.metal", dt, nil, []string{"arange_" + d + "_contig", "arange_" + d + "_strided"},
			func() ([]metal.Launch, error) { return metal.Arange(view(dt, 6), 1, 2) })
		check("Fill of "+d, "create.metal", dt, nil, nil, func() ([]metal.Launch, error) { return metal.Fill(view(dt, 6), 3) })
		check("Eye of "+d, "create.metal", dt, nil, nil, func() ([]metal.Launch, error) { return metal.Eye(view(dt, 3, 4), 1) })
		for _, to := range array.DTypes() {
			if !opset.HasDType(array.DeviceCPU, to) || to == dt {
				continue
			}
			k := "copy_" + d + "_" + to.String()
			named := dt
			if to == array.Float64 {
				named = to // the GPU has no float64
			}
			check(fmt.Sprintf("Copy %v to %v", dt, to), "copy.metal", named, nil, []string{k + "_contig", k + "_scalar", k + "_strided"},
				func() ([]metal.Launch, error) { return metal.Copy(view(to, 4), view(dt, 4)) })
		}
		if dt.IsFloat() {
			for _, dist := range []metal.RandDist{metal.RandUniform, metal.RandNormal} {
				kind := [...]string{"uniform", "normal"}[dist]
				check(fmt.Sprintf("random %s of %v", kind, dt), "random.metal", dt, nil, []string{"random_" + kind + "_" + d},
					func() ([]metal.Launch, error) {
						return metal.RandomFloats(view(dt, 5), view(array.Uint32, 2), dist, 0, 1)
					})
			}
		}
		if dt == array.Uint32 || dt == array.Uint16 || dt == array.Uint8 {
			check("random bits of "+d, "random.metal", dt, nil, []string{"random_bits_" + d},
				func() ([]metal.Launch, error) { return metal.RandomBits(view(dt, 5), view(array.Uint32, 2)) })
		}
	}
	check("Threefry2x32", "random.metal", array.Uint32, nil, nil, func() ([]metal.Launch, error) {
		return metal.Threefry2x32(view(array.Uint32, 5), view(array.Uint32, 2), view(array.Uint32, 5))
	})
}
