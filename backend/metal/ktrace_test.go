package metal

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/fathom-go/fathom/array"
)

// timedGPU is a fake GPU that reports times for its command buffers, as
// Metal's GPUStartTime and GPUEndTime: the n-th buffer to finish ran from
// 10n to 10n+4 µs on a host clock that reads 1 s now.
type timedGPU struct {
	*fakeGPU
	finished int
}

func (g *timedGPU) gpuTimes(cmdBuf) (start, end, now int64, ok bool) {
	g.finished++
	start = int64(g.finished) * 10_000
	return start, start + 4_000, 1_000_000_000, true
}

// TestTraceRecordsCommandBuffersOnTheGPURow: with a kernel trace running,
// every command buffer that finishes is one event on the GPU's row, with
// the GPU's duration and the kernels it ran; without one, nothing is
// recorded.
func TestTraceRecordsCommandBuffersOnTheGPURow(t *testing.T) {
	cfg := testConfig()
	cfg.commitOps = 3
	g := &timedGPU{fakeGPU: newFakeGPU(t)}
	src := func(name, kernel string) (string, string, error) {
		if name == "test.metal" {
			return name, "kernel void add1() {}", nil
		}
		return "", "", errors.New("no such library")
	}
	h := newHost(g, cfg, newBufCache(cfg, 1<<30, g.newBuf, g.freeBuf), src)
	x := devF32(t, h, 1, 2, 3, 4)
	y, z := devZeros(t, h, 4), devZeros(t, h, 4)

	// Before the trace: timed buffers go unrecorded.
	mustRun(t, h, kernelLaunch("add1", 4, rd(x), wr(y)))
	mustSync(t, h)

	var buf bytes.Buffer
	if err := array.StartTrace(&buf); err != nil {
		t.Fatal(err)
	}
	// Three dispatches fill one command buffer, the fourth starts another.
	mustRun(t, h,
		kernelLaunch("add1", 4, rd(x), wr(y)),
		kernelLaunch("add1", 4, rd(y), wr(z)),
		kernelLaunch("add", 4, rd(y), rd(z), wr(x)),
		kernelLaunch("add1", 4, rd(x), wr(y)))
	mustSync(t, h)
	if err := array.StopTrace(); err != nil {
		t.Fatal(err)
	}
	wantF32(t, "y", y, 6, 8, 10, 12)

	var evs []struct {
		Name, Ph string
		Ts, Dur  float64
		Pid, Tid int
		Args     map[string]any
	}
	if err := json.Unmarshal(buf.Bytes(), &evs); err != nil {
		t.Fatalf("trace: %v\n%s", err, buf.Bytes())
	}
	var gpuPid int
	for _, e := range evs {
		if e.Ph == "M" && e.Name == "process_name" && e.Args["name"] == "gpu" {
			gpuPid = e.Pid
		}
	}
	want := []struct {
		kernels    string
		dispatches float64
	}{{"add1 x2, add", 3}, {"add1", 1}}
	var got int
	for _, e := range evs {
		if e.Ph != "X" {
			continue
		}
		if got >= len(want) {
			t.Fatalf("more command buffer events than the %d committed: %+v", len(want), e)
		}
		w := want[got]
		if e.Name != "command buffer" || e.Pid != gpuPid || e.Args["kernels"] != w.kernels || e.Args["dispatches"] != w.dispatches {
			t.Errorf("event %d: %+v, want a command buffer on the gpu row running %q", got, e, w.kernels)
		}
		if e.Dur != 4 {
			t.Errorf("event %d lasts %v µs, want the GPU's 4", got, e.Dur)
		}
		got++
	}
	if got != len(want) {
		t.Errorf("%d command buffer events, want %d", got, len(want))
	}
}
