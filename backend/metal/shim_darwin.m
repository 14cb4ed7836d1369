// shim_darwin.m: the Objective-C side of the Metal host's per-op path
// (see shim_darwin.h). Compiled with ARC; every entry point drains its own
// autorelease pool, since cgo calls come from threads that have none.
#import <Foundation/Foundation.h>
#import <Metal/Metal.h>
#import <objc/message.h>
#include <mach/mach_time.h>
#include <stdlib.h>
#include <string.h>
#include "shim_darwin.h"

static void fail(fm_error *err, int64_t code, NSString *msg) {
	if (err == NULL) {
		return;
	}
	const char *u = msg != nil ? [msg UTF8String] : NULL;
	err->code = code;
	err->message = strdup(u != NULL ? u : "unknown Metal error");
}

static void fail_nserror(fm_error *err, NSError *e, NSString *what) {
	if (e == nil) {
		fail(err, -1, what);
		return;
	}
	fail(err, (int64_t)[e code], [NSString stringWithFormat:@"%@: %@ (%@ %ld)", what,
		[e localizedDescription], [e domain], (long)[e code]]);
}

void *fm_create_device(fm_error *err) {
	@autoreleasepool {
		id<MTLDevice> dev = MTLCreateSystemDefaultDevice();
		if (dev == nil) {
			// Command-line processes that do not link CoreGraphics may get
			// nil from MTLCreateSystemDefaultDevice on older macOS.
			NSArray<id<MTLDevice>> *all = MTLCopyAllDevices();
			if ([all count] > 0) {
				dev = [all objectAtIndex:0];
			}
		}
		if (dev == nil) {
			fail(err, -1, @"no Metal device: MTLCreateSystemDefaultDevice and MTLCopyAllDevices found none");
			return NULL;
		}
		return (__bridge_retained void *)dev;
	}
}

void fm_release(void *handle) {
	if (handle == NULL) {
		return;
	}
	@autoreleasepool {
		// ARC releases the transferred reference when obj goes out of scope.
		id obj = (__bridge_transfer id)handle;
		(void)obj;
	}
}

void *fm_new_command_buffer(void *queue, void **encoder, fm_error *err) {
	@autoreleasepool {
		id<MTLCommandQueue> q = (__bridge id<MTLCommandQueue>)queue;
		id<MTLCommandBuffer> cb = [q commandBuffer];
		if (cb == nil) {
			fail(err, -1, @"the command queue gave no command buffer");
			return NULL;
		}
		id<MTLComputeCommandEncoder> enc = [cb computeCommandEncoderWithDispatchType:MTLDispatchTypeConcurrent];
		if (enc == nil) {
			fail(err, -1, @"the command buffer gave no compute encoder");
			return NULL;
		}
		*encoder = (__bridge_retained void *)enc;
		return (__bridge_retained void *)cb;
	}
}

void fm_encode_dispatch(void *encoder, void *pipeline,
	void *const *buffers, const uint64_t *offsets, uint32_t nbuffers,
	const void *params, uint32_t params_len,
	uint64_t gx, uint64_t gy, uint64_t gz,
	uint64_t tx, uint64_t ty, uint64_t tz,
	int32_t barrier) {
	@autoreleasepool {
		id<MTLComputeCommandEncoder> enc = (__bridge id<MTLComputeCommandEncoder>)encoder;
		if (barrier) {
			[enc memoryBarrierWithScope:MTLBarrierScopeBuffers];
		}
		[enc setComputePipelineState:(__bridge id<MTLComputePipelineState>)pipeline];
		for (uint32_t i = 0; i < nbuffers; i++) {
			[enc setBuffer:(__bridge id<MTLBuffer>)buffers[i] offset:(NSUInteger)offsets[i] atIndex:i];
		}
		if (params_len > 0) {
			[enc setBytes:params length:params_len atIndex:nbuffers];
		}
		[enc dispatchThreads:MTLSizeMake(gx, gy, gz) threadsPerThreadgroup:MTLSizeMake(tx, ty, tz)];
	}
}

void fm_commit(void *command_buffer, void *encoder) {
	@autoreleasepool {
		id<MTLComputeCommandEncoder> enc = (__bridge_transfer id<MTLComputeCommandEncoder>)encoder;
		[enc endEncoding];
		[(__bridge id<MTLCommandBuffer>)command_buffer commit];
	}
}

// status returns 1 if cb completed, 0 if it has not finished, and -1 with
// err filled if it failed.
static int32_t status(id<MTLCommandBuffer> cb, fm_error *err) {
	switch ([cb status]) {
	case MTLCommandBufferStatusCompleted:
		return 1;
	case MTLCommandBufferStatusError:
		fail_nserror(err, [cb error], @"GPU command buffer failed");
		return -1;
	default:
		return 0;
	}
}

int32_t fm_wait(void *command_buffer, fm_error *err) {
	@autoreleasepool {
		id<MTLCommandBuffer> cb = (__bridge id<MTLCommandBuffer>)command_buffer;
		[cb waitUntilCompleted];
		return status(cb, err) < 0 ? -1 : 0;
	}
}

int32_t fm_poll(void *command_buffer, fm_error *err) {
	@autoreleasepool {
		return status((__bridge id<MTLCommandBuffer>)command_buffer, err);
	}
}

int32_t fm_device_has_unified_memory(void *device) {
	@autoreleasepool {
		return [(__bridge id<MTLDevice>)device hasUnifiedMemory] ? 1 : 0;
	}
}

// MTLMathModeSafe and MTLMathFloatingPointFunctionsPrecise (macOS 15
// SDK); the setters are sent through objc_msgSend so that the shim builds
// with older SDKs too, and is asked first whether the system has them.
enum { fm_math_mode_safe = 0, fm_math_functions_precise = 1 };

void fm_set_precise_math(void *options) {
	@autoreleasepool {
		id opts = (__bridge id)options;
		SEL mode = @selector(setMathMode:);
		SEL functions = @selector(setMathFloatingPointFunctions:);
		if ([opts respondsToSelector:mode]) {
			((void (*)(id, SEL, NSInteger))objc_msgSend)(opts, mode, fm_math_mode_safe);
			if ([opts respondsToSelector:functions]) {
				((void (*)(id, SEL, NSInteger))objc_msgSend)(opts, functions, fm_math_functions_precise);
			}
			return;
		}
		((void (*)(id, SEL, BOOL))objc_msgSend)(opts, @selector(setFastMathEnabled:), NO);
	}
}

void *fm_archive_open(void *device, const char *path, int32_t *loaded, fm_error *err) {
	@autoreleasepool {
		id<MTLDevice> dev = (__bridge id<MTLDevice>)device;
		*loaded = 0;
		if (![dev respondsToSelector:@selector(newBinaryArchiveWithDescriptor:error:)]) {
			fail(err, -1, @"this system has no Metal binary archives (macOS 11 or later)");
			return NULL;
		}
		NSString *file = [NSString stringWithUTF8String:path];
		MTLBinaryArchiveDescriptor *desc = [[MTLBinaryArchiveDescriptor alloc] init];
		NSError *e = nil;
		if ([[NSFileManager defaultManager] fileExistsAtPath:file]) {
			desc.url = [NSURL fileURLWithPath:file];
			id<MTLBinaryArchive> a = [dev newBinaryArchiveWithDescriptor:desc error:&e];
			if (a != nil) {
				*loaded = 1;
				return (__bridge_retained void *)a;
			}
			// An archive of another OS or GPU, or a damaged file: start
			// afresh (err says why, for the caller to report).
			fail_nserror(err, e, @"loading the pipeline archive");
			desc.url = nil;
			e = nil;
		}
		id<MTLBinaryArchive> a = [dev newBinaryArchiveWithDescriptor:desc error:&e];
		if (a == nil) {
			if (err != NULL && err->message != NULL) {
				free(err->message);
				err->message = NULL;
			}
			fail_nserror(err, e, @"creating a pipeline archive");
			return NULL;
		}
		return (__bridge_retained void *)a;
	}
}

void *fm_pipeline_new(void *device, void *library, const char *name, void *archive,
	int32_t *hit, int32_t *added, uint64_t *max_threads, uint64_t *simd_width,
	uint64_t *tg_memory, fm_error *err) {
	@autoreleasepool {
		id<MTLDevice> dev = (__bridge id<MTLDevice>)device;
		id<MTLLibrary> lib = (__bridge id<MTLLibrary>)library;
		*hit = 0;
		*added = 0;
		id<MTLFunction> fn = [lib newFunctionWithName:[NSString stringWithUTF8String:name]];
		if (fn == nil) {
			fail(err, -1, [NSString stringWithFormat:@"the library has no kernel \"%s\"", name]);
			return NULL;
		}
		MTLComputePipelineDescriptor *desc = [[MTLComputePipelineDescriptor alloc] init];
		desc.computeFunction = fn;
		NSError *e = nil;
		id<MTLComputePipelineState> pso = nil;
		id<MTLBinaryArchive> arc = (__bridge id<MTLBinaryArchive>)archive;
		if (arc != nil) {
			desc.binaryArchives = [NSArray arrayWithObject:arc];
			pso = [dev newComputePipelineStateWithDescriptor:desc
			                                          options:MTLPipelineOptionFailOnBinaryArchiveMiss
			                                       reflection:NULL
			                                            error:&e];
			*hit = pso != nil;
			e = nil;
		}
		if (pso == nil) {
			pso = [dev newComputePipelineStateWithDescriptor:desc options:MTLPipelineOptionNone reflection:NULL error:&e];
			if (pso == nil) {
				fail_nserror(err, e, @"building the pipeline");
				return NULL;
			}
			if (arc != nil) {
				NSError *ae = nil;
				*added = [arc addComputePipelineFunctionsWithDescriptor:desc error:&ae] ? 1 : 0;
			}
		}
		*max_threads = [pso maxTotalThreadsPerThreadgroup];
		*simd_width = [pso threadExecutionWidth];
		*tg_memory = [pso staticThreadgroupMemoryLength];
		return (__bridge_retained void *)pso;
	}
}

int32_t fm_archive_save(void *archive, const char *path, fm_error *err) {
	@autoreleasepool {
		id<MTLBinaryArchive> arc = (__bridge id<MTLBinaryArchive>)archive;
		NSError *e = nil;
		if (![arc serializeToURL:[NSURL fileURLWithPath:[NSString stringWithUTF8String:path]] error:&e]) {
			fail_nserror(err, e, @"saving the pipeline archive");
			return -1;
		}
		return 0;
	}
}

int32_t fm_command_buffer_times(void *command_buffer, int64_t *gpu_start, int64_t *gpu_end, int64_t *host_now) {
	@autoreleasepool {
		id<MTLCommandBuffer> cb = (__bridge id<MTLCommandBuffer>)command_buffer;
		if (![cb respondsToSelector:@selector(GPUStartTime)]) {
			return 0;
		}
		// GPUStartTime and GPUEndTime are seconds of the host's
		// mach_absolute_time clock; zero means the buffer did not run.
		CFTimeInterval start = [cb GPUStartTime], end = [cb GPUEndTime];
		if (start <= 0 || end < start) {
			return 0;
		}
		mach_timebase_info_data_t base;
		mach_timebase_info(&base);
		uint64_t now = mach_absolute_time();
		*gpu_start = (int64_t)(start * 1e9);
		*gpu_end = (int64_t)(end * 1e9);
		*host_now = (int64_t)((double)now * base.numer / base.denom);
		return 1;
	}
}
