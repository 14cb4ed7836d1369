// Package npy reads and writes arrays in numpy's .npy format, and named
// arrays in its .npz archives.
//
// Save and Load work on an io.Writer and an io.Reader; SaveFile and
// LoadFile on a path; SaveNPZ and LoadNPZ on .npz files, which numpy's
// np.savez and np.savez_compressed write and np.load reads:
//
//	err := npy.SaveFile("x.npy", x)
//	y, err := npy.LoadFile("x.npy") // y holds x's values
//
// Every dtype numpy and fathom share loads and saves: bool, int8, uint8,
// int16, uint16, int32, uint32, int64, uint64, float16, float32, float64
// and complex64, in either byte order (files are written in the host's),
// in C or Fortran order (a Fortran array loads as a column-major view of
// its memory, and a column-major array saves as Fortran order without a
// copy), 0-d and empty. Numpy's complex128 is not a fathom dtype yet:
// loading one is an error that names it (ErrUnsupported). Strings,
// objects and structured dtypes are not numeric arrays, and loading them
// is an error too (ErrFormat). Bfloat16 is not a numpy dtype, so bfloat16
// arrays cannot be saved here: use package safetensors.
//
// # Loading
//
// Loading is eager: LoadFile and LoadNPZ read every byte before they
// return and close the file; the arrays they return are evaluated, on the
// default device (on the GPU their memory is a Metal buffer that the host
// filled; float64 arrays load there too, and are then an error in any
// GPU operation, as float64 is on the GPU everywhere in fathom).
//
// Loaders treat their input as hostile. Malformed input is an error
// wrapping ErrFormat, never a panic or a hang: bad magic, versions other
// than 1.0, 2.0 and 3.0, headers over MaxHeaderLen, dictionaries that are
// not exactly numpy's (descr, fortran_order, shape), shapes whose size
// overflows, truncated data, zip members that are not arrays, duplicate
// or overlapping members, bad checksums. No loader allocates memory for
// bytes its input does not hold: a 1 KB file that claims gigabytes costs
// about a kilobyte.
//
// # Saving
//
// Save functions evaluate their arrays first (so a pending array's error
// is returned before anything is written). SaveFile and SaveNPZ replace
// their file atomically: they write a temporary file in the same
// directory, sync it and rename it over the target, so a failure part-way
// (a full disk, a crash) leaves the old file whole.
//
// All errors are *array.Error values; errors.Is tells ErrFormat,
// ErrUnsupported, io.ErrUnexpectedEOF and the underlying I/O errors
// (fs.ErrNotExist) apart.
package npy
