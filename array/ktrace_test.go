package array_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/strided"
)

// traceEvent is the part of a Chrome trace event the tests read.
type traceEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Dur  float64        `json:"dur"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Args map[string]any `json:"args"`
}

func parseTrace(t *testing.T, data []byte) []traceEvent {
	t.Helper()
	var evs []traceEvent
	if err := json.Unmarshal(data, &evs); err != nil {
		t.Fatalf("the trace is not a JSON array of events: %v\n%s", err, data)
	}
	return evs
}

// kernels returns the complete events whose names start with prefix (the
// tests' own primitives), in the order they were written.
func kernels(evs []traceEvent, prefix string) []traceEvent {
	var out []traceEvent
	for _, e := range evs {
		if e.Ph == "X" && strings.HasPrefix(e.Name, prefix) {
			out = append(out, e)
		}
	}
	return out
}

// rowNames maps (pid, tid) to the process and thread names the metadata
// events give them.
func rowNames(evs []traceEvent) (procs map[int]string, threads map[[2]int]string) {
	procs, threads = map[int]string{}, map[[2]int]string{}
	for _, e := range evs {
		if e.Ph != "M" {
			continue
		}
		switch e.Name {
		case "process_name":
			procs[e.Pid], _ = e.Args["name"].(string)
		case "thread_name":
			threads[[2]int{e.Pid, e.Tid}], _ = e.Args["name"].(string)
		}
	}
	return procs, threads
}

// shapePrim gives its outputs memory of their shape and dtype; the
// trace tests look at shapes, not values.
type shapePrim struct{ name string }

func (p shapePrim) Name() string { return p.name }
func (p shapePrim) Eval(_ array.Stream, in, out []*array.Array) error {
	for _, o := range out {
		o.SetRowMajorData(array.AllocCPU(o.NBytes()))
	}
	return nil
}

// threeKernels builds a chain of three kernels of known shapes and
// dtypes: A: [2 3] float32 -> [2 3] float32; B: A's output and a [3]
// int32 -> [4] float32; C: B's output -> [4] int32.
func threeKernels() *array.Array {
	x := array.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	i := array.FromSlice([]int32{1, 2, 3}, 3)
	s := array.CurrentStream()
	a := array.New(s, []int{2, 3}, array.Float32, shapePrim{name: "traceA"}, x)
	b := array.New(s, []int{4}, array.Float32, shapePrim{name: "traceB"}, a, i)
	return array.New(s, []int{4}, array.Int32, shapePrim{name: "traceC"}, b)
}

// TestTraceHasOneEventPerKernel evaluates a chain of three kernels with
// tracing on: the trace parses as JSON and holds exactly three kernel
// events, in order, with their shapes, dtypes, stream and bytes, on the
// CPU's row for stream 0.
func TestTraceHasOneEventPerKernel(t *testing.T) {
	var buf bytes.Buffer
	if err := array.StartTrace(&buf); err != nil {
		t.Fatal(err)
	}
	c := threeKernels()
	if err := c.Eval(); err != nil {
		t.Fatal(err)
	}
	// Evaluating again runs nothing.
	if err := c.Eval(); err != nil {
		t.Fatal(err)
	}
	if err := array.StopTrace(); err != nil {
		t.Fatal(err)
	}
	evs := parseTrace(t, buf.Bytes())
	ks := kernels(evs, "trace")
	want := []struct {
		name, inputs, outputs, dtype string
		bytes                        float64
	}{
		{"traceA", "[2 3] float32", "[2 3] float32", "float32", 24 + 24},
		{"traceB", "[2 3] float32, [3] int32", "[4] float32", "float32", 24 + 12 + 16},
		{"traceC", "[4] float32", "[4] int32", "int32", 16 + 16},
	}
	if len(ks) != len(want) {
		t.Fatalf("%d kernel events, want %d: %+v", len(ks), len(want), ks)
	}
	procs, threads := rowNames(evs)
	for i, w := range want {
		e := ks[i]
		if e.Name != w.name || e.Cat != "cpu" {
			t.Errorf("event %d is %q (cat %q), want %q (cat cpu)", i, e.Name, e.Cat, w.name)
		}
		for k, v := range map[string]any{"inputs": w.inputs, "outputs": w.outputs, "dtype": w.dtype, "stream": "Stream(cpu, 0)", "bytes": w.bytes} {
			if e.Args[k] != v {
				t.Errorf("%s: args[%q] = %v, want %v", e.Name, k, e.Args[k], v)
			}
		}
		if e.Ts < 0 || e.Dur < 0 {
			t.Errorf("%s: ts %v, dur %v", e.Name, e.Ts, e.Dur)
		}
		if i > 0 && e.Ts < ks[i-1].Ts+ks[i-1].Dur {
			t.Errorf("%s starts at %v µs, before %s ends at %v µs", e.Name, e.Ts, ks[i-1].Name, ks[i-1].Ts+ks[i-1].Dur)
		}
		if procs[e.Pid] != "cpu" || threads[[2]int{e.Pid, e.Tid}] != "stream 0" {
			t.Errorf("%s is on process %q thread %q, want cpu, stream 0", e.Name, procs[e.Pid], threads[[2]int{e.Pid, e.Tid}])
		}
	}
}

// TestTraceRecordsFailedKernels: a kernel that returns an error, or
// panics, is an event with the error in its args.
func TestTraceRecordsFailedKernels(t *testing.T) {
	var buf bytes.Buffer
	if err := array.StartTrace(&buf); err != nil {
		t.Fatal(err)
	}
	bad := array.New(array.CurrentStream(), nil, array.Float32, &failPrim{err: errors.New("no luck")}, one())
	panicky := array.New(array.CurrentStream(), nil, array.Float32, &failPrim{panics: "oops"}, one())
	if bad.Eval() == nil || panicky.Eval() == nil {
		t.Fatal("the failing kernels did not fail")
	}
	if err := array.StopTrace(); err != nil {
		t.Fatal(err)
	}
	ks := kernels(parseTrace(t, buf.Bytes()), "fail")
	if len(ks) != 2 {
		t.Fatalf("%d events of the failing kernels, want 2", len(ks))
	}
	if ks[0].Args["error"] != "no luck" || ks[1].Args["error"] != "the kernel panicked" {
		t.Errorf("errors recorded: %q and %q", ks[0].Args["error"], ks[1].Args["error"])
	}
}

// reshapePrim makes its output a view of its input's memory.
type reshapePrim struct{}

func (reshapePrim) Name() string { return "traceView" }
func (reshapePrim) Eval(_ array.Stream, in, out []*array.Array) error {
	out[0].SetData(in[0].Storage(), strided.RowMajor(out[0].Shape()), in[0].Offset())
	return nil
}

// TestTraceCountsNoBytesForViews: a kernel whose output is a view of its
// input moves nothing, and the trace says so.
func TestTraceCountsNoBytesForViews(t *testing.T) {
	var buf bytes.Buffer
	if err := array.StartTrace(&buf); err != nil {
		t.Fatal(err)
	}
	x := array.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	v := array.New(array.CurrentStream(), []int{3, 2}, array.Float32, reshapePrim{}, x)
	err := v.Eval()
	if stop := array.StopTrace(); stop != nil {
		t.Fatal(stop)
	}
	if err != nil {
		t.Fatal(err)
	}
	ks := kernels(parseTrace(t, buf.Bytes()), "traceView")
	if len(ks) != 1 || ks[0].Args["bytes"] != float64(0) || ks[0].Args["outputs"] != "[3 2] float32" {
		t.Errorf("view events %+v, want one moving 0 bytes", ks)
	}
}

func TestStartTraceTwiceFails(t *testing.T) {
	var a, b bytes.Buffer
	if err := array.StartTrace(&a); err != nil {
		t.Fatal(err)
	}
	err := array.StartTrace(&b)
	if stop := array.StopTrace(); stop != nil {
		t.Fatal(stop)
	}
	var e *array.Error
	if !errors.As(err, &e) || e.Op != "array.StartTrace" || !strings.Contains(e.Msg, "already running") {
		t.Errorf("a second StartTrace returned %v, want a *Error saying a trace is already running", err)
	}
	if b.Len() != 0 {
		t.Errorf("the refused trace wrote %q", b.String())
	}
	if err := array.StopTrace(); err != nil {
		t.Errorf("StopTrace without a trace returned %v", err)
	}
	if err := array.StartTrace(nil); err == nil {
		t.Error("StartTrace(nil) returned no error")
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestStartTraceReportsWriteErrors(t *testing.T) {
	err := array.StartTrace(failWriter{})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("StartTrace on a failing writer returned %v", err)
	}
	// The failed start left no trace running.
	var buf bytes.Buffer
	if err := array.StartTrace(&buf); err != nil {
		t.Fatal(err)
	}
	if err := array.StopTrace(); err != nil {
		t.Fatal(err)
	}
	if evs := parseTrace(t, buf.Bytes()); len(evs) != 0 {
		t.Errorf("an empty trace has %d events", len(evs))
	}
}

// syncBuffer is a bytes.Buffer that is safe to write from the trace's
// timer while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf.Bytes()...)
}

// TestTraceOnAndOffFromManyGoroutines starts and stops traces from
// several goroutines while others evaluate: under -race nothing races,
// and every trace that started is valid JSON whose kernel events each
// have their args.
func TestTraceOnAndOffFromManyGoroutines(t *testing.T) {
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := threeKernels().Eval(); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	var mu sync.Mutex
	var traces []*syncBuffer
	var tg sync.WaitGroup
	for range 4 {
		tg.Add(1)
		go func() {
			defer tg.Done()
			for range 20 {
				b := &syncBuffer{}
				if array.StartTrace(b) == nil {
					mu.Lock()
					traces = append(traces, b)
					mu.Unlock()
				}
				if err := array.StopTrace(); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	tg.Wait()
	close(stop)
	wg.Wait()
	if len(traces) == 0 {
		t.Fatal("no trace started")
	}
	for _, b := range traces {
		for _, e := range parseTrace(t, b.Bytes()) {
			if e.Ph == "X" && (e.Args["outputs"] == nil || e.Args["stream"] == nil || e.Ts < 0 || e.Dur < 0) {
				t.Errorf("unexpected event %+v", e)
			}
		}
	}
}

// TestTraceEnvVariable runs this test binary with FATHOM_TRACE set: the
// child evaluates the three kernels and, if asked, stops the trace. A
// stopped trace is a complete JSON file; one the program forgot to stop
// lacks at most its closing bracket and the events still buffered.
func TestTraceEnvVariable(t *testing.T) {
	if os.Getenv("FATHOM_TRACE_CHILD") != "" {
		if err := threeKernels().Eval(); err != nil {
			os.Exit(2)
		}
		if os.Getenv("FATHOM_TRACE_CHILD") == "stop" {
			if err := array.StopTrace(); err != nil {
				os.Exit(3)
			}
		}
		os.Exit(0)
	}
	dir := t.TempDir()
	for _, mode := range []string{"stop", "forget"} {
		path := filepath.Join(dir, mode+".json")
		cmd := exec.Command(os.Args[0], "-test.run=^TestTraceEnvVariable$")
		cmd.Env = append(os.Environ(), "FATHOM_TRACE_CHILD="+mode, array.EnvTrace+"="+path)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: child failed: %v\n%s", mode, err, out)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if mode == "forget" {
			if !bytes.HasPrefix(data, []byte("[")) || bytes.HasSuffix(bytes.TrimSpace(data), []byte("]")) {
				t.Errorf("an unstopped trace is %q, want an open JSON array", data)
			}
			data = append(data, ']')
			parseTrace(t, data)
			continue
		}
		if ks := kernels(parseTrace(t, data), "trace"); len(ks) != 3 {
			t.Errorf("the trace written through %s has %d kernel events, want 3", array.EnvTrace, len(ks))
		}
	}
	bad := exec.Command(os.Args[0], "-test.run=^TestTraceEnvVariable$")
	bad.Env = append(os.Environ(), "FATHOM_TRACE_CHILD=stop", array.EnvTrace+"="+filepath.Join(dir, "no", "such", "dir.json"))
	out, err := bad.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "fathom: "+array.EnvTrace) {
		t.Errorf("with an unwritable %s the child gave %v and printed %q; want success and a note", array.EnvTrace, err, out)
	}
}

// BenchmarkKernelTrace measures a chain of 100 one-element kernels built
// and evaluated with the trace off and on (written to io.Discard): the
// cost per kernel of the hook and of recording.
func BenchmarkKernelTrace(b *testing.B) {
	const chain = 100
	x := array.FromSlice([]float32{1}, 1)
	run := func(b *testing.B) {
		for b.Loop() {
			y := x
			for range chain {
				y = array.New(y.Stream(), []int{1}, array.Float32, shapePrim{name: "traceBench"}, y)
			}
			if err := y.Eval(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chain), "ns/kernel")
	}
	b.Run("off", run)
	b.Run("on", func(b *testing.B) {
		if err := array.StartTrace(io.Discard); err != nil {
			b.Fatal(err)
		}
		defer array.StopTrace()
		run(b)
	})
}
