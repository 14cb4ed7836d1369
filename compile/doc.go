// Package compile traces a function once per call signature and replays
// the trace, fusing chains of elementwise operations into single
// primitives.
//
// Compile gives each function a fresh id from a counter: ids are never
// reused and never derived from a function's address. A Worker owns a
// trace cache (keyed by the id, the inputs' shapes and dtypes, the stream
// and the options; bounded, least recently used first) and a stream; the
// package's default worker serves Func.Call. A registry holds every live
// worker's cache weakly, so Func.Release, or the cleanup that runs when a
// *Func becomes unreachable, erases the function's traces from every
// cache, together with the arrays they captured.
//
// Package compile decides what to fuse; the backends run the fused
// program (Compiled, an internal/fused.Program). On the CPU
// (cpu.RunFused) it runs over 2048-element tiles, each instruction a
// vector kernel over the tile while it is in L1/L2. A float32 program with
// one output whose operations the chain kernel has, tanh-GELU among them,
// runs instead as a chain: one pass with its value kept in registers, and
// values read again saved in L1. Either way every operation rounds as it
// would unfused. On Metal (metal.Fused) the program becomes one generated
// kernel.
//
// Inside transforms (package graph) a compiled function runs uncompiled;
// Compile(graph.Grad(f)) is the fast path for gradients. Disable and
// Enable turn compilation off and on for the whole process at run time.
package compile
