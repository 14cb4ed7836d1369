// Command compare runs the same workloads on fathom, numpy and PyTorch in
// one run, alternating between them round by round so that a busy moment
// of the machine hits all three alike, and prints the median time of each
// with the ratios to fathom.
//
//	go run ./bench/compare                  # everything
//	go run ./bench/compare -run 'gemm|gelu' # a subset (regular expression)
//	go run ./bench/compare -rounds 9
//
// numpy and PyTorch come from Debian (/usr/bin/python3 with python3-numpy,
// libopenblas0-pthread and python3-torch). The command installs nothing:
// it says what is missing and runs what it can. Memory-bound workloads are
// also shown as a fraction of the bandwidth that a STREAM-triad probe
// measures in the same run. docs/performance.md explains the output.
package main

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/internal/mlp"
	"github.com/fathom-go/fathom/internal/workload"
	"github.com/fathom-go/fathom/ops"
	"github.com/fathom-go/fathom/random"
)

//go:embed workloads.py
var workloadsPy string

const python = "/usr/bin/python3"

// task is one row of the comparison: how to set up fathom's side of it,
// and the bytes it moves or the flops it computes.
type task struct {
	name  string
	bytes float64 // bytes moved, for memory-bound workloads
	flops float64 // for matmul and the MLP step
	setup func() func()
}

func eval(a *array.Array) {
	if err := a.Eval(); err != nil {
		panic(err)
	}
}

func workloads() []task {
	var ws []task
	for _, n := range []int{256, 512, 1024, 2048} {
		for _, dt := range []array.DType{array.Float32, array.Float64} {
			name := "sgemm"
			if dt == array.Float64 {
				name = "dgemm"
			}
			ws = append(ws, task{name: fmt.Sprintf("%s/%d", name, n), flops: 2 * math.Pow(float64(n), 3), setup: func() func() {
				a := ops.AsType(array.FromSlice(workload.RandF32(n*n, 1), n, n), dt)
				b := ops.AsType(array.FromSlice(workload.RandF32(n*n, 2), n, n), dt)
				eval(a)
				eval(b)
				return func() { eval(ops.MatMul(a, b)) }
			}})
		}
	}
	for _, size := range []struct {
		name string
		r, c int
	}{{"1M", 1024, 1024}, {"16M", 4096, 4096}} {
		n := float64(size.r * size.c)
		mk := func() (x, y, z, flat *array.Array) {
			x = array.FromSlice(workload.RandF32(size.r*size.c, 1), size.r, size.c)
			y = array.FromSlice(workload.RandF32(size.r*size.c, 2), size.r, size.c)
			z = array.FromSlice(workload.RandF32(size.r*size.c, 3), size.r, size.c)
			return x, y, z, ops.Reshape(x, -1)
		}
		add := func(kind string, bytes float64, f func(x, y, z, flat *array.Array) func()) {
			ws = append(ws, task{name: kind + "/" + size.name, bytes: bytes, setup: func() func() { return f(mk()) }})
		}
		add("a*b+c", 16*n, func(x, y, z, _ *array.Array) func() {
			return func() { eval(ops.Add(ops.Mul(x, y), z)) }
		})
		for _, u := range []struct {
			name string
			f    func(*array.Array) *array.Array
		}{{"exp", ops.Exp}, {"tanh", ops.Tanh}, {"sigmoid", ops.Sigmoid}} {
			add(u.name, 8*n, func(_, _, _, flat *array.Array) func() { return func() { eval(u.f(flat)) } })
		}
		add("gelu", 8*n, func(_, _, _, flat *array.Array) func() { return func() { eval(workload.GELU(flat)[0]) } })
		add("gelu-compiled", 8*n, func(_, _, _, flat *array.Array) func() {
			f := compile.Compile(workload.GELU)
			return func() { eval(f.Call(flat)[0]) }
		})
		add("sum", 4*n, func(x, _, _, _ *array.Array) func() { return func() { eval(ops.Sum(x)) } })
		add("max", 4*n, func(x, _, _, _ *array.Array) func() { return func() { eval(ops.Max(x)) } })
		add("argmax", 4*n, func(_, _, _, flat *array.Array) func() { return func() { eval(ops.ArgMax(flat, 0)) } })
		add("softmax", 8*n, func(x, _, _, _ *array.Array) func() { return func() { eval(ops.Softmax(x, -1)) } })
	}
	// random numbers: Threefry-2x32 counters against numpy's PCG64
	// (default_rng) and torch's Philox, 16M float32
	const rn = 16 << 20
	key := random.Key(0)
	ws = append(ws,
		task{name: "uniform/16M", bytes: 4 * rn, setup: func() func() {
			return func() { eval(random.Uniform(key, 0, 1, []int{rn}, array.Float32)) }
		}},
		task{name: "normal/16M", bytes: 4 * rn, setup: func() func() {
			return func() { eval(random.Normal(key, []int{rn}, array.Float32, 0, 1)) }
		}})
	ws = append(ws, indexTasks()...)
	ws = append(ws, convTasks()...)
	ws = append(ws, linalgTasks()...)
	ws = append(ws, fftTasks()...)
	ws = append(ws, optimTasks()...)
	ws = append(ws, smallTasks()...)
	ws = append(ws, fastTasks()...)
	ws = append(ws, mnistTasks()...)
	ws = append(ws, task{name: "mlp-step/256", flops: mlp.StepFlops, setup: func() func() {
		step := compile.Compile(mlp.Step)
		args := mlp.Args()
		return func() {
			if err := array.Eval(step.Call(args...)...); err != nil {
				panic(err)
			}
		}
	}})
	return ws
}

// timeGo returns the mean time of f over enough runs to take minMS, after
// one untimed run. The untimed run takes what waking up after the pause
// costs (threads parked, caches taken by the other engines), which is not
// the speed of the workload; workloads.py does the same.
func timeGo(f func(), minMS float64) float64 {
	f()
	reps := 0
	start := time.Now()
	for {
		f()
		reps++
		if el := time.Since(start); el.Seconds()*1e3 >= minMS {
			return el.Seconds() * 1e3 / float64(reps)
		}
	}
}

// probeTask is STREAM's triad over 16M float32 (see workload.Triad), the
// bandwidth probe. It is measured as the workloads are: in rounds between
// the other engines' windows (which run their own triads, shown in its
// row) and after the same pauses, so that a figure's "% of probe" sets
// two measurements made alike against each other.
func probeTask() task {
	const n = 16 << 20
	return task{name: "triad/16M", bytes: float64(workload.TriadBytes(n)), setup: func() func() { return workload.NewTriad(n).Run }}
}

type pyEngine struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startPython() (*pyEngine, error) {
	cmd := exec.Command(python, "-c", workloadsPy)
	cmd.Stderr = os.Stderr
	// Settings that pin OpenBLAS to a core type or cache size tuned for
	// another machine would make numpy's figures those of a mistuned
	// build; numpy runs as installed.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "OPENBLAS_CORETYPE=") || strings.HasPrefix(kv, "OPENBLAS_L2_SIZE=")
	})
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	// Wait until the engines are imported: importing torch keeps a core
	// busy for over a second, and a bandwidth probe run meanwhile read
	// 20–25 GB/s in the same hour as 30–32 after the import.
	if !sc.Scan() {
		return nil, fmt.Errorf("python exited before it was ready")
	}
	return &pyEngine{cmd: cmd, in: in, out: sc}, nil
}

func (p *pyEngine) run(engine, name string, minMS float64) (float64, error) {
	req, _ := json.Marshal(map[string]any{"engine": engine, "workload": name, "min_ms": minMS})
	if _, err := fmt.Fprintf(p.in, "%s\n", req); err != nil {
		return 0, err
	}
	if !p.out.Scan() {
		return 0, fmt.Errorf("python exited")
	}
	var resp struct {
		MS    float64 `json:"ms"`
		Error string  `json:"error"`
	}
	if err := json.Unmarshal(p.out.Bytes(), &resp); err != nil {
		return 0, err
	}
	if resp.Error != "" {
		return 0, fmt.Errorf("%s", resp.Error)
	}
	return resp.MS, nil
}

// probe reports which Python engines work, and what to install if not.
func probe() (numpy, torch bool, notes []string) {
	if _, err := os.Stat(python); err != nil {
		return false, false, []string{python + " is missing: apt-get install python3 python3-numpy libopenblas0-pthread python3-torch"}
	}
	if exec.Command(python, "-c", "import numpy").Run() != nil {
		notes = append(notes, "numpy is missing: apt-get install python3-numpy libopenblas0-pthread")
	} else {
		numpy = true
		out, _ := exec.Command(python, "-c", "import numpy; print(numpy.__version__)").Output()
		notes = append(notes, "numpy "+strings.TrimSpace(string(out)))
		if _, err := os.Stat("/usr/lib/x86_64-linux-gnu/openblas-pthread"); err != nil && runtime.GOARCH == "amd64" {
			notes = append(notes, "numpy is not using OpenBLAS (18x slower BLAS): apt-get install libopenblas0-pthread")
		}
	}
	if exec.Command(python, "-c", "import torch").Run() != nil {
		notes = append(notes, "PyTorch is missing: apt-get install python3-torch")
	} else {
		torch = true
		out, _ := exec.Command(python, "-c", "import torch; print(torch.__version__, 'threads', torch.get_num_threads())").Output()
		notes = append(notes, "torch "+strings.TrimSpace(string(out)))
	}
	return numpy, torch, notes
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func main() {
	rounds := flag.Int("rounds", 5, "rounds per workload; each round runs every engine once")
	minMS := flag.Float64("min-ms", 100, "each measurement repeats a workload for at least this long")
	run := flag.String("run", "", "only workloads whose name matches this regular expression")
	warmup := flag.Float64("warmup", 3, "an unmeasured window of this many times min-ms precedes each workload's rounds, for every engine")
	pause := flag.Duration("pause", 200*time.Millisecond, "idle time before each measurement, for other engines' spinning threads to park")
	flag.Parse()
	re, err := regexp.Compile(*run)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	hasNumpy, hasTorch, notes := probe()
	var py *pyEngine
	if hasNumpy {
		if py, err = startPython(); err != nil {
			fmt.Fprintln(os.Stderr, "python:", err)
			hasNumpy, hasTorch = false, false
		}
	}
	host, _ := os.Hostname()
	fmt.Printf("fathom compare: %s/%s, %d CPUs (GOMAXPROCS %d), host %s, %s\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), host, time.Now().UTC().Format("2006-01-02"))
	for _, n := range notes {
		fmt.Println("  " + n)
	}
	m := measurer{py: py, numpy: hasNumpy, torch: hasTorch, rounds: *rounds, minMS: *minMS, warmMS: *warmup * *minMS, pause: *pause}
	probe := probeTask()
	pr := m.measure(probe)
	bw := probe.bytes / pr.fathom / 1e6
	fmt.Printf("bandwidth probe (STREAM triad, 16M float32, measured as the workloads are): %.1f GB/s\n", bw)
	fmt.Printf("medians of %d rounds, engines alternating; ratio = other / fathom (above 1: fathom faster)\n\n", *rounds)
	fmt.Printf("%-20s %11s %11s %11s %8s %8s  %s\n", "workload", "fathom ms", "numpy ms", "torch ms", "numpy/f", "torch/f", "fathom rate")
	pr.print(probe, bw)
	for _, w := range workloads() {
		if re.MatchString(w.name) {
			m.measure(w).print(w, bw)
		}
	}
}

// measurer runs workloads on every engine, round by round.
type measurer struct {
	py            *pyEngine
	numpy, torch  bool
	rounds        int
	minMS, warmMS float64
	pause         time.Duration
}

// result is one workload's medians, in ms (NaN for an engine that did not
// run it), and the engines' errors.
type result struct {
	fathom, numpy, torch float64
	nerr, terr           error
}

func (m measurer) measure(w task) result {
	f := w.setup()
	// A long unmeasured window for every engine first: the rounds
	// measure a steady state, as a program's loop that runs a workload
	// many times sees it. fathom's buffer pool, like malloc's free
	// lists, starts empty in a new process and fills over the first
	// tens of calls.
	timeGo(f, m.warmMS)
	var tf, tn, tt []float64
	var r result
	if m.numpy {
		_, r.nerr = m.py.run("numpy", w.name, m.warmMS)
	}
	if m.torch {
		_, r.terr = m.py.run("torch", w.name, m.warmMS)
	}
	// python times one window of engine, unless it is off or has failed.
	python := func(engine string, on bool, err *error, times *[]float64) {
		if !on || *err != nil {
			return
		}
		time.Sleep(m.pause)
		var ms float64
		if ms, *err = m.py.run(engine, w.name, m.minMS); *err == nil {
			*times = append(*times, ms)
		}
	}
	for range m.rounds {
		// Threads that spin after a parallel call (OpenBLAS's, and
		// fathom's GEMM helpers for a millisecond) would steal the
		// next engine's cores: let them park first.
		time.Sleep(m.pause)
		tf = append(tf, timeGo(f, m.minMS))
		python("numpy", m.numpy, &r.nerr, &tn)
		python("torch", m.torch, &r.terr, &tt)
	}
	r.fathom, r.numpy, r.torch = median(tf), median(tn), median(tt)
	return r
}

// print prints w's row of the table, its rate against the probe's
// bandwidth bw.
func (r result) print(w task, bw float64) {
	mf, mn, mt := r.fathom, r.numpy, r.torch
	rate := ""
	if w.flops > 0 {
		rate = fmt.Sprintf("%.1f GFLOP/s", w.flops/mf/1e6)
	} else if w.bytes > 0 {
		gbs := w.bytes / mf / 1e6
		rate = fmt.Sprintf("%.1f GB/s (%.0f%% of probe)", gbs, 100*gbs/bw)
	}
	fmt.Printf("%-20s %11.3f %11s %11s %8s %8s  %s\n", w.name, mf, msText(mn), msText(mt), ratio(mn, mf), ratio(mt, mf), rate)
	if r.nerr != nil {
		fmt.Printf("  numpy: %v\n", r.nerr)
	}
	if r.terr != nil {
		fmt.Printf("  torch: %v\n", r.terr)
	}
}

func msText(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.3f", v)
}

func ratio(other, f float64) string {
	if math.IsNaN(other) {
		return "-"
	}
	return fmt.Sprintf("%.2f", other/f)
}
