// Package distributed runs collectives (sums, maxima, gathers, sends and
// receives) across the processes of a job started with mpirun, for
// data-parallel training as MLX's mx.distributed.
//
// Init returns the world group. Under mpirun it loads Open MPI's shared
// library at run time (libmpi.so.40, or FATHOM_MPI_LIBRARY) through
// purego, as MLX dlopens libmpi: fathom builds with CGO_ENABLED=0 and
// needs MPI only where it runs. Outside mpirun, or where no MPI library is
// installed, the world has size 1 and every collective is the identity;
// Init(Strict()) then returns an error saying what is missing. Open MPI is
// the implementation supported; another (MPICH) is refused with an error.
//
// Collectives are lazy operations like those of package ops: AllSum(x, g)
// records a node, and the exchange runs when the result is evaluated. Each
// process runs its collectives on a group in the order it made them (a
// collective depends on the group's previous one), so evaluating results
// in different orders on different processes (ranging over a map) is
// safe. Before exchanging data the processes compare a small header
// (the collective, dtype, shape), so a process that passes another shape
// or runs another collective makes the evaluation fail on every process
// with an *array.Error rather than corrupt memory. Gradients flow through
// AllSum (the cotangent is summed) and AllGather (each process takes its
// rows of the cotangent), as MLX's rules; inside compile a collective
// runs on every call of the compiled function.
//
// A process that crashes or is killed ends the job: mpirun sees it die and
// kills the others, and exits non-zero. docs/distributed.md says
// what MPI guarantees and what it does not, how to launch on several
// machines, and what the collectives cost.
package distributed
