//go:build unix

package distributed_test

import (
	"fmt"
	"testing"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/distributed"
	"github.com/fathom-go/fathom/ops"
)

// BenchmarkAllSum times AllSum of float32 arrays across the job: 1 KiB for
// latency (ns/op), 64 MiB for bandwidth (MB/s, the array's bytes a second
// as MPI benchmarks count them). Run it under mpirun with a fixed count,
// so that every rank runs as many collectives:
// testdata/bench.sh does, beside the same MPI_Allreduce timed from C.
func BenchmarkAllSum(b *testing.B) {
	if world.Size() == 1 {
		b.Skip("a group of one has nothing to exchange: run testdata/bench.sh (mpirun -np 2 with -test.benchtime=Nx)")
	}
	for _, bytes := range []int{1 << 10, 64 << 20} {
		b.Run(fmt.Sprintf("float32/%dKiB", bytes>>10), func(b *testing.B) {
			x := ops.Ones([]int{bytes / 4}, array.Float32)
			if err := distributed.AllSum(x, world).Eval(); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(bytes))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := distributed.AllSum(x, world).Eval(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
