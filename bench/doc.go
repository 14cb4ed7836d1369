// Package bench holds fathom's speed measurements as go test benchmarks.
// They report GB/s (through b.SetBytes) for memory-bound work and GFLOP/s
// (through b.ReportMetric) for matmul, so results compare directly with
// the machine's limits and with numpy (bench/numpy_bench.py runs the same
// workloads).
//
//	go test ./bench -run '^$' -bench . -count 5
//
// The package has no non-test code.
package bench
