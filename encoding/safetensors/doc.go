// Package safetensors reads and writes named arrays in the safetensors
// format of Hugging Face (https://huggingface.co/docs/safetensors), which
// PyTorch, MLX and the Hugging Face libraries use for model weights.
//
// A file is 8 bytes of little-endian header length, a JSON header (each
// tensor's dtype, shape and byte offsets, and an optional "__metadata__"
// of strings) and the tensors' bytes, little-endian and row-major.
//
//	err := safetensors.Save("model.safetensors", weights, map[string]string{"format": "pt"})
//	weights, meta, err := safetensors.Load("model.safetensors")
//
// # Lazy loading
//
// Open reads and checks the header, maps the file (on unix; elsewhere
// tensors are read with ReadAt) and returns at once, whatever the file's
// size. Get returns a pending array: its shape and dtype are known, and
// its bytes are copied from the file into fathom's own memory only when
// it is evaluated, on the device that was the default when Get was called
// (on the GPU, into a Metal buffer). Opening a 1 GB file and evaluating a
// small tensor takes well under a millisecond and reads a few pages of the
// file: readahead is turned off on the mapping, and asked for over the
// range of each tensor that is read.
//
// Arrays are copied on evaluation rather than wrapped around the mapping,
// so they are ordinary fathom arrays (pooled memory that kernels may
// write into), a file changed or truncated underneath gives an error from
// Eval rather than a crash, and Close can release the file at once.
// Evaluate what you need before Close: an array still pending when its
// File is closed fails to evaluate with an error wrapping os.ErrClosed;
// arrays evaluated before are unaffected. Load reads every tensor, and
// closes the file, before it returns.
//
// # Dtypes
//
// BOOL, I8, U8, I16, U16, I32, U32, I64, U64, F16, BF16, F32, F64 and C64
// (complex64, added to the format in safetensors 0.6) load and save. The
// 8-, 6- and 4-bit floats (F8_E5M2, F8_E4M3, F8_E8M0, F6_E2M3, F6_E3M2,
// F4) are not fathom dtypes yet: files holding them open and list them,
// and Get of such a tensor (or Load of the file) is an error naming its
// dtype, wrapping ErrUnsupported.
//
// # Saving
//
// Save lays the file out as the reference writer does (tensors ordered by
// dtype alignment, largest first, then by name; header padded to 8
// bytes), evaluates its arrays first, and replaces the file atomically: it
// writes a temporary file in the same directory, syncs it and renames it
// over the target, so a failure part-way leaves the old file whole.
//
// # Hostile files
//
// Open checks everything the reference implementation checks, and treats
// every violation as an error wrapping ErrFormat, never a panic, a hang or
// a huge allocation: files shorter than 8 bytes, header lengths beyond the
// file or above MaxHeaderSize (100 MB), headers that are not UTF-8 or not
// a JSON object, names (or fields, or metadata keys) given twice, unknown
// dtypes, shapes whose size overflows or does not match the offsets, and
// offsets that overlap, leave gaps, or run past or fall short of the
// data. Nothing is allocated for what a file merely claims.
//
// All errors are *array.Error values; errors.Is tells ErrFormat,
// ErrUnsupported, ErrNotFound, os.ErrClosed and the underlying I/O errors
// (fs.ErrNotExist) apart.
package safetensors
