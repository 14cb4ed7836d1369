// Package bench holds fathom's speed measurements as go test benchmarks.
// They report GB/s (through b.SetBytes) for memory-bound work and GFLOP/s
// (through b.ReportMetric) for matmul, so results compare directly with
// the machine's limits and with numpy (bench/numpy_bench.py runs the same
// workloads). BenchmarkTriad is the machine's side of that comparison: a
// STREAM-triad bandwidth probe, against which the memory-bound results are
// read.
//
//	go test ./bench -run '^$' -bench . -count 5
//
// The package has no non-test code.
package bench
