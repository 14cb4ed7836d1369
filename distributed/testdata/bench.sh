#!/bin/sh
# Times AllSum (BenchmarkAllSum) and a C program calling MPI_Allreduce on
# the same buffers, each under mpirun -np 2 on this machine, alternating
# runs. Run from the repository root:
#   distributed/testdata/bench.sh [runs] [btl]
# btl is Open MPI's transport list: "self,vader" (shared memory, the
# default) or "self,tcp" (loopback TCP, as the tests use). YIELD=1 (the
# default) makes a waiting rank yield its core (mpi_yield_when_idle), which
# on a machine shared with other work keeps the two ranks from starving
# each other; YIELD=0 spins, as Open MPI does by default.
set -eu
runs=${1:-3}
btl=${2:-self,vader}
small=${SMALL_ITERS:-20000}
large=${LARGE_ITERS:-20}
yield=${YIELD:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mpicc -O2 -o "$tmp/allreduce_bench" distributed/testdata/allreduce_bench.c
go test -c -o "$tmp/distributed.test" ./distributed
root=
if [ "$(id -u)" = 0 ]; then root=--allow-run-as-root; fi
mpi() {
	mpirun -np 2 --oversubscribe --bind-to none $root --mca btl "$btl" --mca mpi_yield_when_idle "$yield" \
		--mca btl_tcp_if_include lo --mca oob_tcp_if_include lo "$@"
}
uptime
for i in $(seq "$runs"); do
	mpi "$tmp/allreduce_bench" "$small" "$large"
	for b in "1KiB $small" "65536KiB $large"; do
		set -- $b
		rm -rf "$tmp/out"
		mpi --output-filename "$tmp/out" "$tmp/distributed.test" -test.run '^$' \
			-test.bench "AllSum/float32/$1\$" -test.benchtime "$2x" >/dev/null
		grep '^Benchmark' "$tmp"/out/1/rank.0/stdout
	done
done
uptime
