package distributed

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/internal/tracing"
)

// Group is a set of processes that take part in collectives together: the
// world that Init returns, or a part of it made by Split. Its methods are
// safe for concurrent use.
type Group struct {
	rank, size int
	// comm is the MPI communicator; 0 for a group of one process with no
	// MPI behind it, where every collective is the identity.
	comm uintptr

	mu sync.Mutex
	// last is the newest collective made on the group, while it is
	// pending (see record).
	last *array.Array
}

// record builds a collective's node. Besides its data it takes the
// group's newest pending collective as an input, so that each process
// runs its collectives in the order it made them, whatever order it then
// evaluates them in (a Go map's, say): MPI needs every process to run
// them in the same order. Collectives made while compile traces, or on
// traced values (inside the transforms), are not chained: there the
// graph's order holds.
func (g *Group) record(shape []int, dt array.DType, prim array.Primitive, inputs ...*array.Array) *array.Array {
	tracer := tracing.Active()
	for _, x := range inputs {
		tracer = tracer || x.Tracer()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if l := g.last; l != nil && !tracer && !l.Tracer() && !l.Evaluated() {
		inputs = append(inputs[:len(inputs):len(inputs)], l)
	}
	a := array.New(array.CurrentStream(), shape, dt, prim, inputs...)
	if !tracer {
		g.last = a
	}
	return a
}

// ran forgets a, which has been evaluated, as the newest collective. If
// its evaluation failed (*err), the collectives chained after it fail with
// it, on every process alike; ran forgets them too, so that the next
// collective starts a new chain rather than fail as well.
func (g *Group) ran(a *array.Array, err *error) {
	g.mu.Lock()
	if g.last == a || *err != nil {
		g.last = nil
	}
	g.mu.Unlock()
}

// Rank returns this process's number in the group, from 0.
func (g *Group) Rank() int { return g.rank }

// Size returns the number of processes in the group.
func (g *Group) Size() int { return g.size }

// AllSum is the function AllSum on g. It lets g stand for the group
// interface of package nn, which cannot import this package.
func (g *Group) AllSum(x *array.Array) *array.Array { return AllSum(x, g) }

// Split divides the group: processes that pass the same color form a new
// group, ranked by key (ties by their rank here; a negative key means the
// rank here), as MPI_Comm_split. Every process of g must call it, in the
// same order relative to the collectives it runs on g. It runs at once,
// not lazily.
func (g *Group) Split(color, key int) (*Group, error) {
	if color < 0 {
		return nil, array.Errorf("distributed.Split", "color %d is negative (colors are >= 0)", color)
	}
	if key < 0 {
		key = g.rank
	}
	if g.comm == 0 {
		return &Group{size: 1}, nil
	}
	var ng *Group
	err := withMPI(func(l *mpiLib) error {
		c, err := l.split(g.comm, color, key)
		if err != nil {
			return err
		}
		r, s, err := l.rankSize(c)
		ng = &Group{rank: r, size: s, comm: c}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("distributed.Split: %w", err)
	}
	return ng, nil
}

// Option configures Init.
type Option func(*config)

type config struct {
	strict  bool
	library string
}

// Strict makes Init return an error, saying what is missing, where it
// would otherwise fall back to a group of size 1: outside mpirun, or
// where no usable MPI library is installed.
func Strict() Option { return func(c *config) { c.strict = true } }

// Library names the MPI shared library to load (a path or a name the
// dynamic loader finds), instead of FATHOM_MPI_LIBRARY or the usual names
// (libmpi.so.40, libmpi.so on Linux). Only the first Init loads it.
func Library(path string) Option { return func(c *config) { c.library = path } }

// state is the process's MPI: loaded and started once, by the first Init.
var state struct {
	once  sync.Once
	world *Group
	// why says why the world has size 1 without MPI (Strict returns it);
	// fatal is an MPI launch that failed, which every Init returns.
	why, fatal error

	// mu serialises MPI calls: MPI is initialised with
	// MPI_THREAD_SERIALIZED, and goroutines move between threads.
	mu        sync.Mutex
	lib       *mpiLib
	finalized bool
	// blocks is the header exchange's buffer and parts its views of the
	// data in it, reused under mu.
	blocks []byte
	parts  [][]byte
	// finish asks the thread that initialised MPI to finalise it, which
	// MPI requires of that thread; the result comes back on finished.
	finish   chan struct{}
	finished chan error
}

// Init returns the world group: every process mpirun started, through the
// MPI library loaded at run time (no cgo). Outside mpirun, or where no MPI
// library can be loaded, it returns a group of size 1 in which every
// collective is the identity, unless Strict is given, in which case it
// returns an error saying what is missing. Under a launcher that started
// several processes, a failure to start MPI is an error either way: a
// process that went on alone would silently compute something else.
//
// Only the first call loads and starts MPI; later calls return the same
// group. A program that ran under MPI calls Finalize before it exits.
func Init(opts ...Option) (*Group, error) {
	c := config{library: os.Getenv("FATHOM_MPI_LIBRARY")}
	for _, o := range opts {
		o(&c)
	}
	state.once.Do(func() { state.world, state.why, state.fatal = start(c.library) })
	if state.fatal != nil {
		return nil, state.fatal
	}
	if c.strict && state.why != nil {
		return nil, state.why
	}
	return state.world, nil
}

// launcherVars are set by MPI launchers in the processes they start:
// Open MPI's mpirun, PMIx launchers (srun --mpi=pmix) and PMI-1/2 ones.
var launcherVars = []string{"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"}

// launched reports the launcher variable that is set, if any, and the
// world size it gives (0 where it gives none).
func launched() (name string, size int) {
	for _, v := range launcherVars {
		if s, ok := os.LookupEnv(v); ok {
			if v == "PMIX_RANK" {
				return v, 0
			}
			n, _ := strconv.Atoi(s)
			return v, n
		}
	}
	return "", 0
}

// start loads and initialises MPI if a launcher started the process.
func start(library string) (world *Group, why, fatal error) {
	single := &Group{size: 1}
	v, n := launched()
	if v == "" {
		return single, errors.New("distributed: not started by mpirun (none of OMPI_COMM_WORLD_SIZE, PMIX_RANK, PMI_SIZE is set), so the group has size 1"), nil
	}
	l, err := loadMPI(library)
	if err != nil {
		err = fmt.Errorf("distributed: %s is set but MPI cannot start: %w", v, err)
		if n > 1 {
			return nil, nil, err
		}
		return single, err, nil
	}
	// Open MPI traps SIGSEGV, SIGBUS, SIGFPE and SIGILL to print a stack
	// and abort; that would take them from the Go runtime, which turns a
	// nil dereference into a panic. Unless the user chose otherwise, it
	// traps none.
	if _, ok := os.LookupEnv("OMPI_MCA_opal_signal"); !ok {
		os.Setenv("OMPI_MCA_opal_signal", "")
	}
	ready := make(chan error)
	state.finish, state.finished = make(chan struct{}), make(chan error)
	go func() {
		// MPI_Finalize must run on the thread that called MPI_Init: this
		// goroutine keeps that thread until then.
		runtime.LockOSThread()
		provided, err := l.initThread()
		if err == nil && provided < mpiThreadSerialized {
			err = fmt.Errorf("%s provides thread level %d, fathom needs MPI_THREAD_SERIALIZED (%d)", l.path, provided, mpiThreadSerialized)
		}
		ready <- err
		if err != nil {
			return
		}
		<-state.finish
		state.finished <- l.finalize()
	}()
	if err := <-ready; err != nil {
		return nil, nil, fmt.Errorf("distributed: %w", err)
	}
	state.lib = l
	r, s, err := l.rankSize(l.commWorld)
	if err != nil {
		return nil, nil, fmt.Errorf("distributed: %w", err)
	}
	return &Group{rank: r, size: s, comm: l.commWorld}, nil, nil
}

// Finalize shuts MPI down (MPI_Finalize): every process calls it once its
// last collective has run, since Open MPI's mpirun treats a process that
// exits without it as failed. After it, collectives on groups of more
// than one process fail when evaluated. It does nothing where MPI was not
// started, and nothing the second time.
func Finalize() error {
	state.mu.Lock()
	defer state.mu.Unlock()
	if state.lib == nil || state.finalized {
		return nil
	}
	state.finalized = true
	state.finish <- struct{}{}
	if err := <-state.finished; err != nil {
		return fmt.Errorf("distributed: %w", err)
	}
	return nil
}

// withMPI runs f with the MPI library, one call at a time.
func withMPI(f func(l *mpiLib) error) error {
	state.mu.Lock()
	defer state.mu.Unlock()
	if state.finalized {
		return errors.New("MPI has been finalized")
	}
	return f(state.lib)
}

// world is the group a nil *Group stands for: Init's, started on first
// use as MLX does.
func world(op string) *Group {
	g, err := Init()
	if err != nil {
		array.Panicf(op, "%v", err)
	}
	return g
}
