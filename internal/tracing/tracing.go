// Package tracing counts the transforms and traces in progress, on any
// goroutine. While one is, evaluating a tracer keeps its node, so the
// transform can still walk the graph through it (MLX's is_tracer). Other
// goroutines' tracers may so keep their graphs a little longer; nothing is
// ever wrong. Package graph and compile bracket every function they trace
// with Begin and End; package array asks Active.
package tracing

import "sync/atomic"

var active atomic.Int64

// Begin marks the start of a transform or trace.
func Begin() { active.Add(1) }

// End marks the end of a transform or trace started with Begin.
func End() { active.Add(-1) }

// Active reports whether any transform or trace is in progress.
func Active() bool { return active.Load() > 0 }
