package linalg

import "github.com/fathom-go/fathom/backend/cpu"

// EnvGonumBLAS names the environment variable that keeps gonum's own BLAS
// under gonum's LAPACK: FATHOM_GONUM_BLAS=gonum.
const EnvGonumBLAS = cpu.EnvGonumBLAS

// UseFathomBLAS registers fathom's GEMM (cpu.BLAS) as gonum's BLAS
// implementation (blas64.Use and blas32.Use) now, whatever
// FATHOM_GONUM_BLAS says. The first decomposition or solve does this by
// itself unless FATHOM_GONUM_BLAS=gonum is set or UseGonumBLAS was
// called. Registration is process-wide, so call it while no goroutine is
// inside gonum (at start-up).
func UseFathomBLAS() { cpu.UseBLAS() }

// UseGonumBLAS registers gonum's own BLAS implementation, as gonum had it
// before fathom's, and keeps the linear algebra from registering fathom's
// later: the way out of the registration for a program whose own gonum
// code must run gonum's kernels. The decompositions then run at gonum's
// speed. Call it while no goroutine is inside gonum (at start-up).
func UseGonumBLAS() { cpu.UseGonumBLAS() }
