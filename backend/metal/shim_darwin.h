// shim_darwin.h: plain-C interface of the Objective-C shim (shim_darwin.m),
// shared by the cgo preamble (shim_darwin.go). Only stdint types, so the
// preamble parses without Apple's headers (and is type-checked on Linux).
//
// Handles are retained Objective-C objects passed as void*: functions that
// return one hand over a reference (__bridge_retained) that the caller
// gives back with fm_release. Failures fill a fm_error whose message the
// caller frees with free(3).
#ifndef FATHOM_METAL_SHIM_H
#define FATHOM_METAL_SHIM_H

#include <stdint.h>

typedef struct {
	int64_t code;  // NSError code, or -1 for failures without one
	char *message; // malloc'ed UTF-8, NULL on success
} fm_error;

// fm_create_device returns the system's default Metal device
// (MTLCreateSystemDefaultDevice, or the first of MTLCopyAllDevices for
// processes where that returns nil), or NULL with err filled.
void *fm_create_device(fm_error *err);

// fm_release drops a reference returned by any fm_ function (or by a
// darwinkit new... method).
void fm_release(void *handle);

// fm_new_command_buffer returns a command buffer of queue and, in
// *encoder, its compute encoder with concurrent dispatch.
void *fm_new_command_buffer(void *queue, void **encoder, fm_error *err);

// fm_encode_dispatch encodes one kernel launch: a buffer-scope memory
// barrier first if barrier is nonzero, the pipeline, nbuffers buffers at
// indices 0..nbuffers-1 with their byte offsets, params_len bytes of
// params with setBytes at index nbuffers (none if params_len is 0), and
// dispatchThreads with grid (gx, gy, gz) and threadgroup (tx, ty, tz).
void fm_encode_dispatch(void *encoder, void *pipeline,
	void *const *buffers, const uint64_t *offsets, uint32_t nbuffers,
	const void *params, uint32_t params_len,
	uint64_t gx, uint64_t gy, uint64_t gz,
	uint64_t tx, uint64_t ty, uint64_t tz,
	int32_t barrier);

// fm_commit ends encoding, releases the encoder handle, and commits the
// command buffer (which cannot fail: failures show in its status).
void fm_commit(void *command_buffer, void *encoder);

// fm_wait blocks until the command buffer has completed. Returns 0, or -1
// with err filled if it failed.
int32_t fm_wait(void *command_buffer, fm_error *err);

// fm_poll returns 1 if the command buffer completed, 0 if it has not
// finished, -1 with err filled if it failed.
int32_t fm_poll(void *command_buffer, fm_error *err);

// fm_device_has_unified_memory returns 1 if the MTLDevice device has
// unified memory, else 0. (darwinkit's bool getters return through a
// 1-byte slot that libffi may write a whole register into.)
int32_t fm_device_has_unified_memory(void *device);

// fm_set_precise_math makes the MTLCompileOptions options compile IEEE
// math: mathMode MTLMathModeSafe and the precise float functions where the
// system has them (macOS 15 and later), else fastMathEnabled NO (which
// macOS 15 deprecates).
void fm_set_precise_math(void *options);

// fm_archive_open returns an MTLBinaryArchive of device (macOS 11 and
// later): the one serialized at path if that file exists and loads
// (*loaded = 1), else an empty one (*loaded = 0, and err filled with why
// the file did not load, if it exists). It returns NULL with err filled
// where the system has no binary archives.
void *fm_archive_open(void *device, const char *path, int32_t *loaded, fm_error *err);

// fm_pipeline_new builds the compute pipeline of the kernel named name in
// library. With an archive (NULL: none) it looks the pipeline up there
// first (*hit = 1 when found, no compile) and otherwise compiles it and
// adds it to the archive (*added = 1). It returns the pipeline and its
// maxTotalThreadsPerThreadgroup, threadExecutionWidth and
// staticThreadgroupMemoryLength, or NULL with err filled.
void *fm_pipeline_new(void *device, void *library, const char *name, void *archive,
	int32_t *hit, int32_t *added, uint64_t *max_threads, uint64_t *simd_width,
	uint64_t *tg_memory, fm_error *err);

// fm_archive_save serializes archive to the file at path. Returns 0, or -1
// with err filled.
int32_t fm_archive_save(void *archive, const char *path, fm_error *err);

// fm_command_buffer_times reads a completed command buffer's GPUStartTime
// and GPUEndTime, and the host clock they are measured on (the one of
// mach_absolute_time) at the time of the call, all in nanoseconds. It
// returns 1, or 0 if the buffer has no GPU times (the system does not
// report them, or the buffer never ran).
int32_t fm_command_buffer_times(void *command_buffer, int64_t *gpu_start, int64_t *gpu_end, int64_t *host_now);

#endif
