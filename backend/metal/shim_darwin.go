//go:build darwin && cgo

package metal

/*
#cgo CFLAGS: -x objective-c -fobjc-arc
#cgo LDFLAGS: -framework Metal -framework Foundation -framework CoreGraphics
#include <stdlib.h>
#include "shim_darwin.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// This file is the only one that calls C: thin wrappers over the shim,
// so the rest of the darwin code is plain Go.

// shimError turns a filled fm_error into a Go error and frees its message.
func shimError(e *C.fm_error) error {
	if e.message == nil {
		return nil
	}
	msg := C.GoString(e.message)
	C.free(unsafe.Pointer(e.message))
	e.message = nil
	if e.code == commandBufferErrorOutOfMemory {
		msg += " (the GPU ran out of memory: lower " + envMemoryLimitMB + " or free arrays)"
	}
	return fmt.Errorf("%s", msg)
}

// commandBufferErrorOutOfMemory is MTLCommandBufferErrorOutOfMemory.
const commandBufferErrorOutOfMemory = 8

func shimCreateDevice() (unsafe.Pointer, error) {
	var e C.fm_error
	p := C.fm_create_device(&e)
	if p == nil {
		return nil, shimError(&e)
	}
	return p, nil
}

// releaseHandle drops a retained Objective-C reference.
func releaseHandle(p unsafe.Pointer) { C.fm_release(p) }

func shimNewCommandBuffer(queue unsafe.Pointer) (cmdBuf, error) {
	var e C.fm_error
	var enc unsafe.Pointer
	cb := C.fm_new_command_buffer(queue, &enc, &e)
	if cb == nil {
		return cmdBuf{}, shimError(&e)
	}
	return cmdBuf{cb: cb, enc: enc}, nil
}

// shimEncode encodes d with one C call. The buffer ids are C pointers, so
// passing Go memory that holds them is allowed.
func shimEncode(enc unsafe.Pointer, d *dispatch) {
	var bufs *unsafe.Pointer
	var offs *C.uint64_t
	if len(d.buffers) > 0 {
		bufs = &d.buffers[0]
		offs = (*C.uint64_t)(unsafe.Pointer(&d.offsets[0]))
	}
	var params unsafe.Pointer
	if len(d.params) > 0 {
		params = unsafe.Pointer(&d.params[0])
	}
	barrier := C.int32_t(0)
	if d.barrier {
		barrier = 1
	}
	C.fm_encode_dispatch(enc, d.pipeline, bufs, offs, C.uint32_t(len(d.buffers)),
		params, C.uint32_t(len(d.params)),
		C.uint64_t(d.grid[0]), C.uint64_t(d.grid[1]), C.uint64_t(d.grid[2]),
		C.uint64_t(d.group[0]), C.uint64_t(d.group[1]), C.uint64_t(d.group[2]),
		barrier)
}

func shimCommit(cb cmdBuf) { C.fm_commit(cb.cb, cb.enc) }

func shimWait(cb cmdBuf) error {
	var e C.fm_error
	if C.fm_wait(cb.cb, &e) < 0 {
		return shimError(&e)
	}
	return nil
}

// shimHasUnifiedMemory reads MTLDevice.hasUnifiedMemory through the shim,
// not darwinkit: its bool getters (objc.Call[bool]) return through a
// 1-byte slot that libffi may write a whole register into.
func shimHasUnifiedMemory(device unsafe.Pointer) bool {
	return C.fm_device_has_unified_memory(device) != 0
}

// shimSetPreciseMath makes compile options compile IEEE math (mathMode
// safe and precise functions where the system has them, fastMathEnabled
// off before macOS 15).
func shimSetPreciseMath(options unsafe.Pointer) { C.fm_set_precise_math(options) }

func shimPoll(cb cmdBuf) (bool, error) {
	var e C.fm_error
	switch C.fm_poll(cb.cb, &e) {
	case 0:
		return false, nil
	case 1:
		return true, nil
	}
	return true, shimError(&e)
}

// shimArchiveOpen opens the binary archive serialized at path (loaded)
// or an empty one; loadErr says why an existing file did not load. It
// fails where the system has no binary archives.
func shimArchiveOpen(device unsafe.Pointer, path string) (archive unsafe.Pointer, loaded bool, loadErr, err error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var e C.fm_error
	var ok C.int32_t
	a := C.fm_archive_open(device, cpath, &ok, &e)
	if a == nil {
		return nil, false, nil, shimError(&e)
	}
	return a, ok != 0, shimError(&e), nil
}

// pipelineInfo is what fm_pipeline_new reports beside the pipeline.
type pipelineInfo struct {
	hit, added                      bool
	maxThreads, simdWidth, tgMemory int
}

// shimPipelineNew builds the pipeline of kernel in library, through the
// binary archive if it is not nil.
func shimPipelineNew(device, library unsafe.Pointer, kernel string, archive unsafe.Pointer) (unsafe.Pointer, pipelineInfo, error) {
	cname := C.CString(kernel)
	defer C.free(unsafe.Pointer(cname))
	var e C.fm_error
	var hit, added C.int32_t
	var maxThreads, simdWidth, tgMemory C.uint64_t
	p := C.fm_pipeline_new(device, library, cname, archive, &hit, &added, &maxThreads, &simdWidth, &tgMemory, &e)
	if p == nil {
		return nil, pipelineInfo{}, shimError(&e)
	}
	return p, pipelineInfo{hit: hit != 0, added: added != 0, maxThreads: int(maxThreads), simdWidth: int(simdWidth),
		tgMemory: int(tgMemory)}, nil
}

// shimArchiveSave serializes the archive to path.
func shimArchiveSave(archive unsafe.Pointer, path string) error {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var e C.fm_error
	if C.fm_archive_save(archive, cpath, &e) < 0 {
		return shimError(&e)
	}
	return nil
}

// shimCommandBufferTimes returns a completed command buffer's run on the
// GPU and the host clock now, in nanoseconds of one clock; ok is false
// where the system reports no GPU times.
func shimCommandBufferTimes(cb cmdBuf) (start, end, now int64, ok bool) {
	var s, e, n C.int64_t
	if C.fm_command_buffer_times(cb.cb, &s, &e, &n) == 0 {
		return 0, 0, 0, false
	}
	return int64(s), int64(e), int64(n), true
}
