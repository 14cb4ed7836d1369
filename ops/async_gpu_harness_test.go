//go:build fathom_mslharness

package ops_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/ops"
)

// asyncChain builds, on the default device, steps arrays that each add
// one stage to the previous: y <- exp(-y*y) + x.
func asyncChain(xs []float32, steps int) []*array.Array {
	x := array.FromSlice(xs, len(xs))
	y := x
	var outs []*array.Array
	for range steps {
		y = ops.Add(ops.Exp(ops.Neg(ops.Mul(y, y))), x)
		outs = append(outs, y)
	}
	return outs
}

// TestAsyncEvalOnGPU starts the chain's evaluation on the GPU (the MSL
// harness) and reads every stage from several goroutines meanwhile: each
// read waits for the GPU stream and sees what the CPU computes.
func TestAsyncEvalOnGPU(t *testing.T) {
	const n, steps = 64, 6
	xs := harnessData(n, 3)
	want := asyncChain(xs, steps)
	if err := array.Eval(want...); err != nil {
		t.Fatal(err)
	}
	if err := array.SetDefaultDevice(array.GPU); err != nil {
		t.Fatal(err)
	}
	defer array.SetDefaultDevice(array.CPU)
	outs := asyncChain(xs, steps)
	if d := outs[0].Stream().Device; d != array.GPU {
		t.Fatalf("the chain runs on %v, want the GPU", d)
	}
	array.AsyncEval(outs...)
	var wg sync.WaitGroup
	errs := make(chan error, 4*steps)
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range steps {
				i := (steps - 1 - k + r) % steps
				got, err := array.ToSlice[float32](outs[i])
				if err != nil {
					errs <- err
					return
				}
				w, _ := array.ToSlice[float32](want[i])
				for j := range got {
					if d := got[j] - w[j]; d > 1e-5 || d < -1e-5 {
						errs <- fmt.Errorf("stage %d, element %d: GPU %v, CPU %v", i, j, got[j], w[j])
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestTraceOnGPU: kernels queued on the GPU are recorded, one event per
// primitive, on the GPU's host-encode row with their shapes and stream.
func TestTraceOnGPU(t *testing.T) {
	if err := array.SetDefaultDevice(array.GPU); err != nil {
		t.Fatal(err)
	}
	defer array.SetDefaultDevice(array.CPU)
	x := array.FromSlice(harnessData(8, 1), 2, 4)
	y := ops.Exp(ops.Mul(x, x))
	var buf bytes.Buffer
	if err := array.StartTrace(&buf); err != nil {
		t.Fatal(err)
	}
	err := y.Eval()
	if stop := array.StopTrace(); stop != nil {
		t.Fatal(stop)
	}
	if err != nil {
		t.Fatal(err)
	}
	var evs []struct {
		Name, Cat, Ph string
		Pid, Tid      int
		Args          map[string]any
	}
	if err := json.Unmarshal(buf.Bytes(), &evs); err != nil {
		t.Fatalf("trace: %v\n%s", err, buf.Bytes())
	}
	threads := map[[2]int]string{}
	for _, e := range evs {
		if e.Ph == "M" && e.Name == "thread_name" {
			threads[[2]int{e.Pid, e.Tid}] = e.Args["name"].(string)
		}
	}
	var names []string
	for _, e := range evs {
		if e.Ph != "X" || e.Cat != "gpu" || e.Name == "command buffer" {
			continue
		}
		names = append(names, e.Name)
		if e.Args["outputs"] != "[2 4] float32" || e.Args["stream"] != "Stream(gpu, 0)" || threads[[2]int{e.Pid, e.Tid}] != "stream 0 (host encode)" {
			t.Errorf("%s: args %v on row %q", e.Name, e.Args, threads[[2]int{e.Pid, e.Tid}])
		}
	}
	if fmt.Sprint(names) != "[Mul Exp]" {
		t.Errorf("GPU kernel events %v, want [Mul Exp]", names)
	}
}
