package bench

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/fathom-go/fathom/array"
	"github.com/fathom-go/fathom/compile"
	"github.com/fathom-go/fathom/internal/mlp"
)

// BenchmarkWarmup is issue 22's warm-up stall: a compiled gradient-descent
// step of internal/mlp's network (784-512-10, and the issue's own
// 784-256-10; batch 256) from a cold start (empty pools, a new trace), the
// parameters fed back each step as a training loop does: with Call, and
// with CallDonating, which gives the old parameters' buffers back at
// once. Each iteration times 50 steps, then 50 more once warm, and
// reports the mean of the first 50 (first50-ms, the trace included), the
// second step alone (second-ms), the mean of steps 2 to 50 (warm-ms) and
// of steps 51 to 100 (steady-ms), their ratios to the steady state, the
// hundredth step alone (hundredth-ms) and the second's ratio to it (two
// single steps, as noisy as each other), and the pool's misses after the
// first step.
//
//	go test ./bench -run '^$' -bench Warmup -benchtime 3x
func BenchmarkWarmup(b *testing.B) {
	for _, hidden := range []int{mlp.Hidden, 256} {
		name := fmt.Sprintf("784-%d-10/", hidden)
		b.Run(name+"Call", func(b *testing.B) { warmup(b, hidden, nil) })
		b.Run(name+"CallDonating", func(b *testing.B) { warmup(b, hidden, []int{0, 1, 2, 3}) })
	}
}

func warmup(b *testing.B, hidden int, donate []int) {
	const first, steady = 50, 50
	var firstSum, secondSum, warmSum, steadySum, hundredthSum time.Duration
	var lateMisses int64
	for b.Loop() {
		b.StopTimer()
		// a cold start: no pooled buffers, and no memory the Go heap
		// kept either (a new process faults in every page it touches)
		runtime.GC()
		array.ClearCache()
		debug.FreeOSMemory()
		step := compile.Compile(mlp.TrainStep)
		args := mlp.ArgsHidden(hidden)
		b.StartTimer()
		for i := range first + steady {
			t0 := time.Now()
			var out []*array.Array
			if donate == nil {
				out = step.Call(args...)
			} else {
				out = step.CallDonating(donate, args...)
			}
			if err := array.Eval(out...); err != nil {
				b.Fatal(err)
			}
			d := time.Since(t0)
			switch {
			case i < first:
				firstSum += d
				if i > 0 {
					warmSum += d
				}
				if i == 1 {
					secondSum += d
				}
			default:
				steadySum += d
				if i == first+steady-1 {
					hundredthSum += d
				}
			}
			if i == 0 {
				lateMisses -= array.CPUPoolStats().Misses
			}
			copy(args, out[:4])
		}
		lateMisses += array.CPUPoolStats().Misses
		step.Release()
	}
	n := float64(b.N)
	ms := func(d time.Duration, steps int) float64 { return d.Seconds() * 1e3 / n / float64(steps) }
	st := ms(steadySum, steady)
	b.ReportMetric(ms(firstSum, first), "first50-ms")
	b.ReportMetric(ms(secondSum, 1), "second-ms")
	b.ReportMetric(ms(warmSum, first-1), "warm-ms")
	b.ReportMetric(st, "steady-ms")
	b.ReportMetric(ms(firstSum, first)/st, "first50/steady")
	b.ReportMetric(ms(secondSum, 1)/st, "second/steady")
	b.ReportMetric(ms(hundredthSum, 1), "hundredth-ms")
	b.ReportMetric(float64(secondSum)/float64(hundredthSum), "second/hundredth")
	b.ReportMetric(ms(warmSum, first-1)/st, "warm/steady")
	b.ReportMetric(float64(lateMisses)/n, "misses-after-step1")
	b.ReportMetric(0, "ns/op")
}
