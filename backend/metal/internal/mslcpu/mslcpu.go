// Package mslcpu runs the Metal backend's Launches on the CPU: the MSL
// libraries are compiled with clang++ against msl_compat.h (runtime/),
// which gives kernels Metal's grid, threadgroup and simdgroup semantics,
// and a runner process per compiled binary executes dispatches sent over a
// pipe. It is the test harness that stands in for a GPU on Linux.
//
// It is stricter than a plain C++ compile, to fail where Apple's compiler
// or a Metal pipeline would: every library is linted against rules of the
// MSL specification (Lint: attribute types, buffer indices, threadgroup
// memory, no double, recursion or variable-length arrays) and compiled a
// second time with device, constant and threadgroup as distinct address
// spaces (SyntaxCheck); a launch with more threads than its kernel's
// [[max_total_threads_per_threadgroup]] fails.
//
// A binary holds every kernel of its libraries and selects one by host
// name per request, so each library is compiled once per test run (and
// cached across runs in MSL_CACHE_DIR, default os.TempDir()/fathom-mslcpu),
// not once per kernel or case. Environment:
//
//	MSL_CXX       the compiler (default clang++; clang only: ext_vector_type)
//	MSL_CXXFLAGS  extra flags (e.g. -fsanitize=address -g)
//	MSL_CACHE_DIR where binaries are cached
//	MSL_SCHEDULE  default thread order (forward, reverse, shuffle)
//	MSL_WORKERS   worker threads of the runner (default: all cores)
//	MSL_MAX_THREADS  the most threads any pipeline allows (default 1024;
//	              see PipelineMaxThreads)
package mslcpu

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/fathom-go/fathom/backend/metal/internal/plan"
)

//go:embed runtime
var runtimeFS embed.FS

// cxx and cxxFlags are the compiler and the flags of every build.
// -Werror=double-promotion catches float math that would be double on
// the host and does not exist on Metal.
// -fsigned-char: MSL's char (int8) is signed on every GPU, where C++'s
// depends on the host.
var (
	cxx      = envOr("MSL_CXX", "clang++")
	cxxFlags = append([]string{"-std=c++17", "-O0", "-fsigned-char", "-flax-vector-conversions=none",
		"-Werror=double-promotion", "-Wno-unused-function"}, strings.Fields(os.Getenv("MSL_CXXFLAGS"))...)
)

func envOr(k, d string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return d
}

// Available returns nil if the harness can compile kernels, or an error
// saying what is missing.
func Available() error {
	if _, err := exec.LookPath(cxx); err != nil {
		return fmt.Errorf("mslcpu: the MSL harness needs clang++ (or MSL_CXX): %v", err)
	}
	return nil
}

// Library is an MSL library to compile: its name (a Launch's Library) and
// full source.
type Library struct {
	Name, Source string
}

// Executor runs Launches on the CPU. It implements plan.Executor. The zero
// value uses MSL_SCHEDULE (or forward); an Executor may be used from
// several goroutines.
type Executor struct {
	// Schedule is the order in which the threads of a threadgroup run
	// between synchronisation points: "forward", "reverse" or "shuffle".
	// Running a suite under two orders exposes missing barriers.
	Schedule string
	// MaxThreads, if positive, lowers the limit of every pipeline to it,
	// as MSL_MAX_THREADS does for the whole process (see
	// PipelineMaxThreads): a launch with more threads per threadgroup
	// fails. Tests give separate executors separate limits.
	MaxThreads int
}

var _ plan.Executor = (*Executor)(nil)

// Run executes one dispatch and copies the buffers it writes back into
// their memory. The launch carries its library's source.
func (e *Executor) Run(l plan.Launch) error {
	if l.Source == "" {
		return fmt.Errorf("mslcpu: kernel %s: no source for library %s", l.Kernel, l.Library)
	}
	b, lib, err := binaryFor(Library{Name: l.Library, Source: l.Source})
	if err != nil {
		return err
	}
	// A kernel's pipeline allows no more threads than it declares (Metal:
	// maxTotalThreadsPerThreadgroup), nor than MSL_MAX_THREADS.
	m := pipelineLimit(b.maxThreads[l.Library][l.Kernel])
	why := "MSL_MAX_THREADS"
	if d := b.maxThreads[l.Library][l.Kernel]; d > 0 && d == m {
		why = fmt.Sprintf("the kernel's [[max_total_threads_per_threadgroup(%d)]]", d)
	}
	if e.MaxThreads > 0 && e.MaxThreads < m {
		m, why = e.MaxThreads, "the executor's MaxThreads"
	}
	if n := l.Group[0] * l.Group[1] * l.Group[2]; n > m {
		return fmt.Errorf("mslcpu: kernel %s: threadgroup %v has %d threads; its pipeline allows at most %d (%s)",
			l.Kernel, l.Group, n, m, why)
	}
	req, mems, err := e.request(l, lib)
	if err != nil {
		return err
	}
	p, err := b.get()
	if err != nil {
		return err
	}
	dead, err := p.call(req, mems)
	if dead {
		return fmt.Errorf("mslcpu: kernel %s of %s: %v", l.Kernel, l.Library, err)
	}
	b.put(p)
	return err
}

// memory is one distinct Memory of a launch; launches may bind one memory
// several times (at different offsets), and the runner must see one block.
type memory struct {
	bytes []byte
	write bool
}

func (e *Executor) request(l plan.Launch, lib int) ([]byte, []*memory, error) {
	if len(l.Buffers)+1 > 31 {
		return nil, nil, fmt.Errorf("mslcpu: kernel %s: %d buffers", l.Kernel, len(l.Buffers))
	}
	threads := 1
	for i := range 3 {
		if l.Grid[i] < 1 || l.Group[i] < 1 || int64(l.Grid[i]) > math.MaxUint32 || l.Group[i] > 1024 {
			return nil, nil, fmt.Errorf("mslcpu: kernel %s: bad grid %v / threadgroup %v", l.Kernel, l.Grid, l.Group)
		}
		threads *= l.Group[i]
	}
	if threads > 1024 {
		return nil, nil, fmt.Errorf("mslcpu: kernel %s: threadgroup %v has more than 1024 threads", l.Kernel, l.Group)
	}
	var mems []*memory
	index := map[*byte]int{}
	bind := make([]int, len(l.Buffers))
	for i, a := range l.Buffers {
		if a.Mem == nil {
			return nil, nil, fmt.Errorf("mslcpu: kernel %s: buffer %d has no memory", l.Kernel, i)
		}
		b := a.Mem.Bytes()
		if a.Offset < 0 || a.Offset > len(b) {
			return nil, nil, fmt.Errorf("mslcpu: kernel %s: buffer %d: offset %d outside %d bytes", l.Kernel, i, a.Offset, len(b))
		}
		key := unsafe.SliceData(b)
		k, ok := index[key]
		if !ok || key == nil {
			k = len(mems)
			index[key] = k
			mems = append(mems, &memory{bytes: b})
		}
		mems[k].write = mems[k].write || a.Write
		bind[i] = k
	}
	var w bytes.Buffer
	le := binary.LittleEndian
	put := func(v any) { _ = binary.Write(&w, le, v) }
	w.WriteString("MSLQ")
	put(uint32(lib))
	put(uint32(len(l.Kernel)))
	w.WriteString(l.Kernel)
	put(schedule(e.Schedule))
	put(uint32(len(mems)))
	for _, m := range mems {
		put(uint64(len(m.bytes)))
		if m.write {
			w.WriteByte(1)
		} else {
			w.WriteByte(0)
		}
		w.Write(m.bytes)
	}
	put(uint32(len(l.Buffers)))
	for i, a := range l.Buffers {
		put(uint32(bind[i]))
		put(uint64(a.Offset))
	}
	put(uint64(len(l.Params)))
	w.Write(l.Params)
	for _, g := range l.Grid {
		put(uint32(g))
	}
	for _, g := range l.Group {
		put(uint32(g))
	}
	return w.Bytes(), mems, nil
}

func schedule(s string) uint32 {
	if s == "" {
		s = os.Getenv("MSL_SCHEDULE")
	}
	switch s {
	case "reverse":
		return 1
	case "shuffle":
		return 2
	}
	return 0
}

// runnerBin is a compiled runner and its idle processes.
type runnerBin struct {
	exe        string
	libs       map[string]int            // library name -> index in the binary
	sources    map[string]string         // library name -> source
	maxThreads map[string]map[string]int // library -> kernel -> declared max_total_threads_per_threadgroup

	mu   sync.Mutex
	idle []*proc
}

var (
	binMu    sync.Mutex
	binaries = map[string]*runnerBin{} // library name -> binary holding it
	building = map[string]*buildCall{}
)

type buildCall struct {
	done chan struct{}
	bin  *runnerBin
	err  error
}

// binaryFor returns the binary that holds lib, compiling lib alone if no
// binary does yet.
func binaryFor(lib Library) (*runnerBin, int, error) {
	binMu.Lock()
	if b, ok := binaries[lib.Name]; ok && b.sources[lib.Name] == lib.Source {
		binMu.Unlock()
		return b, b.libs[lib.Name], nil
	}
	binMu.Unlock()
	b, err := prepare([]Library{lib})
	if err != nil {
		return nil, 0, err
	}
	return b, b.libs[lib.Name], nil
}

// Prepare compiles libs into one binary (or finds it in the cache) and
// makes later launches of any of them use it. Compiling many small
// libraries together (the generated kernels of a test) costs little more
// than compiling one: the harness header dominates.
func Prepare(libs ...Library) error {
	_, err := prepare(libs)
	return err
}

func prepare(libs []Library) (*runnerBin, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	// Libraries that Metal would reject are refused before they run.
	for _, l := range libs {
		if err := lintOf(l).Err(); err != nil {
			return nil, err
		}
	}
	key := buildKey(libs)
	binMu.Lock()
	if c, ok := building[key]; ok {
		binMu.Unlock()
		<-c.done
		return c.bin, c.err
	}
	c := &buildCall{done: make(chan struct{})}
	building[key] = c
	binMu.Unlock()

	c.bin, c.err = build(key, libs)
	binMu.Lock()
	if c.err == nil {
		for _, l := range libs {
			binaries[l.Name] = c.bin
		}
	} else {
		delete(building, key) // a failed build is retried (and reported) next time
	}
	binMu.Unlock()
	close(c.done)
	return c.bin, c.err
}

func buildKey(libs []Library) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%q\x00%s\x00", cxx, cxxFlags, runtimeHash())
	for _, l := range libs {
		fmt.Fprintf(h, "%d:%s\x00%d:%s\x00", len(l.Name), l.Name, len(l.Source), l.Source)
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

var runtimeHash = sync.OnceValue(func() string {
	h := sha256.New()
	_ = fs.WalkDir(runtimeFS, "runtime", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := runtimeFS.ReadFile(p)
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(b))
		h.Write(b)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil)[:12])
})

func cacheDir() string {
	return envOr("MSL_CACHE_DIR", filepath.Join(os.TempDir(), "fathom-mslcpu"))
}

// runtimeDir writes the embedded runtime into the cache once per content.
func runtimeDir() (string, error) {
	dir := filepath.Join(cacheDir(), "runtime-"+runtimeHash())
	if _, err := os.Stat(filepath.Join(dir, "ok")); err == nil {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(cacheDir(), "runtime-tmp-")
	if err != nil {
		return "", err
	}
	err = fs.WalkDir(runtimeFS, "runtime", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(tmp, strings.TrimPrefix(p, "runtime"))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := runtimeFS.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err == nil {
		err = os.WriteFile(filepath.Join(tmp, "ok"), nil, 0o644)
	}
	if err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp) // another process won the race: its copy is identical
	}
	return dir, nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// PipelineMaxThreads is the maxTotalThreadsPerThreadgroup a Metal
// pipeline of kernel would report under the harness: its declared
// [[max_total_threads_per_threadgroup]], else 1024, and at most
// MSL_MAX_THREADS if that is set. Lowering MSL_MAX_THREADS (512, 896)
// stands in for the register-heavy kernels whose pipelines allow fewer
// threads on a GPU, so that a host's clamping runs in CI; Run refuses a
// launch above the limit.
func PipelineMaxThreads(lib Library, kernel string) int {
	for _, k := range lintOf(lib).Kernels {
		if k.Name == kernel {
			return pipelineLimit(k.MaxThreads)
		}
	}
	return pipelineLimit(0)
}

// pipelineLimit is the thread limit of a pipeline whose kernel declares
// declared threads (0: none).
func pipelineLimit(declared int) int {
	m := 1024
	if declared > 0 {
		m = min(m, declared)
	}
	if v, err := strconv.Atoi(os.Getenv("MSL_MAX_THREADS")); err == nil && v > 0 {
		m = min(m, v)
	}
	return m
}

// lintCache holds the Lint of every library seen, by name and source.
var lintCache sync.Map

func lintOf(l Library) *LintReport {
	k := sha256.Sum256([]byte(l.Name + "\x00" + l.Source))
	if r, ok := lintCache.Load(k); ok {
		return r.(*LintReport)
	}
	r := Lint(l)
	lintCache.Store(k, r)
	return r
}

func build(key string, libs []Library) (*runnerBin, error) {
	if err := os.MkdirAll(cacheDir(), 0o755); err != nil {
		return nil, err
	}
	rt, err := runtimeDir()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(cacheDir(), key)
	exe := filepath.Join(dir, "runner")
	b := &runnerBin{exe: exe, libs: map[string]int{}, sources: map[string]string{}, maxThreads: map[string]map[string]int{}}
	for i, l := range libs {
		b.libs[l.Name] = i
		b.sources[l.Name] = l.Source
		m := map[string]int{}
		for _, k := range lintOf(l).Kernels {
			if k.MaxThreads > 0 {
				m[k.Name] = k.MaxThreads
			}
		}
		b.maxThreads[l.Name] = m
	}
	if _, err := os.Stat(exe); err == nil {
		return b, nil
	}
	tmp, err := os.MkdirTemp(cacheDir(), key+"-tmp-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if err := writeLibs(tmp, libs); err != nil {
		return nil, err
	}
	// The syntax-only compile (Metal's address spaces) runs beside the
	// build; a library fails if either fails.
	var syntaxErr error
	syntaxDone := make(chan struct{})
	go func() { syntaxErr = syntaxCheck(rt, tmp, libs); close(syntaxDone) }()
	defer func() { <-syntaxDone }() // before tmp is removed
	args := append([]string{}, cxxFlags...)
	args = append(args, "-I", filepath.Join(rt, "include"), "-I", rt, "-I", tmp,
		`-DMSL_LIBS_FILE="libs.inc"`, filepath.Join(rt, "msl_run.cpp"), "-o", filepath.Join(tmp, "runner"), "-lpthread")
	var stderr bytes.Buffer
	cmd := exec.Command(cxx, args...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		names := make([]string, len(libs))
		for i, l := range libs {
			names[i] = l.Name
		}
		return nil, fmt.Errorf("mslcpu: compiling %s: %v\n%s", strings.Join(names, ", "), err, firstLines(stderr.String(), 40))
	}
	if <-syntaxDone; syntaxErr != nil {
		return nil, syntaxErr
	}
	if err := os.MkdirAll(filepath.Dir(exe), 0o755); err != nil {
		return nil, err
	}
	// Atomic: a concurrent test process sees the whole binary or none.
	if err := os.Rename(filepath.Join(tmp, "runner"), exe); err != nil {
		return nil, err
	}
	return b, nil
}

func firstLines(s string, n int) string {
	lines := strings.SplitAfterN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "...\n")
	}
	return strings.Join(lines, "")
}

// Kernels returns the host names of the kernels of every library in the
// binary that holds lib (compiling it if needed), as the runner registered
// them: what a Metal library built from the same source exposes.
func Kernels(lib Library) ([]string, error) {
	b, idx, err := binaryFor(lib)
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd := exec.Command(b.exe, "-list")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("mslcpu: listing kernels of %s: %v\n%s", lib.Name, err, stderr.String())
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == strconv.Itoa(idx) {
			names = append(names, f[1])
		}
	}
	return names, nil
}

func (b *runnerBin) get() (*proc, error) {
	b.mu.Lock()
	if n := len(b.idle); n > 0 {
		p := b.idle[n-1]
		b.idle = b.idle[:n-1]
		b.mu.Unlock()
		return p, nil
	}
	b.mu.Unlock()
	return start(b.exe)
}

func (b *runnerBin) put(p *proc) {
	b.mu.Lock()
	b.idle = append(b.idle, p)
	b.mu.Unlock()
}

// proc is a runner process serving one request at a time. Idle processes
// live until the test binary exits: their stdin closes and they return.
type proc struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func start(exe string) (*proc, error) {
	cmd := exec.Command(exe)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<16), stderr: &lockedBuffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("mslcpu: starting the runner: %v", err)
	}
	return p, nil
}

// call sends one request and reads the response. dead reports that the
// process ended (a kernel fault) and is not to be reused; otherwise err is
// the runner's refusal of the request (an unknown kernel), if any.
func (p *proc) call(req []byte, mems []*memory) (dead bool, err error) {
	if _, err := p.in.Write(req); err != nil {
		return true, p.died(err)
	}
	var status uint32
	if err := binary.Read(p.out, binary.LittleEndian, &status); err != nil {
		return true, p.died(err)
	}
	if status != 0 {
		var n uint32
		if err := binary.Read(p.out, binary.LittleEndian, &n); err != nil {
			return true, p.died(err)
		}
		msg := make([]byte, n)
		if _, err := io.ReadFull(p.out, msg); err != nil {
			return true, p.died(err)
		}
		return false, fmt.Errorf("mslcpu: %s", msg)
	}
	for _, m := range mems {
		if !m.write {
			continue
		}
		if _, err := io.ReadFull(p.out, m.bytes); err != nil {
			return true, p.died(err)
		}
	}
	return false, nil
}

// died waits for the process and returns what it printed: a kernel that
// faulted (a divergent barrier, an unbound buffer, a crash) ends its
// runner.
func (p *proc) died(err error) error {
	p.in.Close()
	werr := p.cmd.Wait()
	if werr != nil {
		err = werr
	}
	return fmt.Errorf("runner failed: %v\n%s", err, firstLines(p.stderr.String(), 20))
}
