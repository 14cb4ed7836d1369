// Package linalg is fathom's linear algebra: decompositions (Cholesky,
// QR, SVD, Eigh, Eig, LU), solvers (Solve, SolveTriangular, Inv,
// LUSolve, Lstsq, Pinv), determinants (Det, SlogDet), Norm, MatrixPower
// and Cross, and conversions to and from gonum's mat types.
//
// # Arrays
//
// Every function is lazy, like the ops it is made of: it checks its
// arguments, builds nodes and returns; the work runs at Eval. Matrices
// are the last two axes of an array and every leading axis is a batch:
// Inv of a [8, 3, 3] array inverts eight matrices, and the batch axes of
// two operands broadcast. Decompositions and solvers compute in float64
// (gonum's LAPACK is float64 only): float32 arrays are widened, computed
// and rounded once, and keep their dtype; integer and bool arrays compute
// in float32 where a function says so. Norm, MatrixPower's positive
// powers and Cross take what their ops take.
//
// # Devices
//
// The decompositions and solvers run on the CPU, on either stream, as
// MLX runs its linear algebra: on the GPU stream they wait for the work
// queued before them, then read and write the GPU's arrays in place
// (Apple silicon's GPU memory is the host's), with no copy and no error.
// Float64 is CPU only, as everywhere in fathom.
//
// # Errors and NaNs
//
// A bad argument (a shape that is not a stack of square matrices, a
// dtype the function does not take, an unknown norm order) panics at the
// call with *array.Error naming the function and the shapes, as ops do;
// array.Try turns it into an error. A failure that only the values show
// (a singular matrix to Inv or Solve, a matrix that is not positive
// definite to Cholesky, an SVD or eigensolver that does not converge) is
// an error from Eval naming the operation, the shape and the batch
// element, wrapping ErrSingular, ErrNotPositiveDefinite, ErrNoConvergence
// or ErrNotFinite for errors.Is. Where numpy returns a value instead of
// raising, so does linalg: Det of a singular matrix is 0 and SlogDet's
// sign is 0 with logabsdet -Inf; Pinv and Lstsq treat small singular
// values as zero. A NaN gives NaN results (Inv, Solve, Cholesky, QR,
// Eigh, Det, Norm...), except where numpy raises: the SVD, and so Pinv,
// Lstsq and the singular-value norms, and Eig. docs/linalg.md has the
// table.
//
// Derivatives (graph.Grad, VJP, JVP) follow JAX's rules for the
// primitives; Norm, Pinv, Lstsq, MatrixPower and Cross are compositions of
// ops and are differentiated through them. graph.Vmap works through all
// of them: the batch becomes a leading axis.
//
// # gonum
//
// FromDense and FromVec copy gonum matrices and vectors into arrays;
// ToDense and ToVecDense evaluate arrays into new *mat.Dense and
// *mat.VecDense values, so fathom fits into programs that already use
// gonum.
//
// The CPU kernels are gonum's LAPACK (gonum.org/v1/gonum/lapack/gonum),
// which is blocked and spends most of its time in the BLAS's matrix
// products. gonum finds its BLAS through a process-wide registration
// (blas64.Use, blas32.Use), and the first decomposition or solve
// registers cpu.BLAS, gonum's BLAS with fathom's GEMM under its matrix
// products and triangular solves and products, which makes gonum's
// factorisations about twice as fast. From then on
// gonum code the program runs itself (mat.Dense.Mul, its own LAPACK
// calls) uses fathom's GEMM too: the results agree with gonum's to
// rounding. FATHOM_GONUM_BLAS=gonum in the environment, or UseGonumBLAS
// at start-up, keeps gonum's own BLAS; UseFathomBLAS registers fathom's
// at once.
package linalg
