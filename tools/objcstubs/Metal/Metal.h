// Minimal Metal stub (see Foundation.h): only the names the shims use,
// with the SDK's signatures and enum values.
#pragma once
#import <Foundation/Foundation.h>

typedef struct { NSUInteger width, height, depth; } MTLSize;
static inline MTLSize MTLSizeMake(NSUInteger w, NSUInteger h, NSUInteger d) { MTLSize s = {w, h, d}; return s; }

typedef NS_ENUM(NSUInteger, MTLDispatchType) {
	MTLDispatchTypeSerial,
	MTLDispatchTypeConcurrent,
};

typedef NS_OPTIONS(NSUInteger, MTLBarrierScope) {
	MTLBarrierScopeBuffers = 1 << 0,
	MTLBarrierScopeTextures = 1 << 1,
	MTLBarrierScopeRenderTargets = 1 << 2,
};

typedef NS_ENUM(NSUInteger, MTLCommandBufferStatus) {
	MTLCommandBufferStatusNotEnqueued = 0,
	MTLCommandBufferStatusEnqueued = 1,
	MTLCommandBufferStatusCommitted = 2,
	MTLCommandBufferStatusScheduled = 3,
	MTLCommandBufferStatusCompleted = 4,
	MTLCommandBufferStatusError = 5,
};

@protocol MTLCommandQueue;
@protocol MTLComputeCommandEncoder;

@protocol MTLResource <NSObject>
@end

@protocol MTLBuffer <MTLResource>
@property (readonly) NSUInteger length;
- (void *)contents;
@end

@protocol MTLComputePipelineState <NSObject>
@property (readonly) NSUInteger maxTotalThreadsPerThreadgroup;
@property (readonly) NSUInteger threadExecutionWidth;
@property (readonly) NSUInteger staticThreadgroupMemoryLength;
@end

@protocol MTLFunction <NSObject>
@property (readonly) NSString *name;
@end

@protocol MTLLibrary <NSObject>
- (id<MTLFunction>)newFunctionWithName:(NSString *)functionName;
@end

typedef NS_OPTIONS(NSUInteger, MTLPipelineOption) {
	MTLPipelineOptionNone = 0,
	MTLPipelineOptionArgumentInfo = 1 << 0,
	MTLPipelineOptionBufferTypeInfo = 1 << 1,
	MTLPipelineOptionFailOnBinaryArchiveMiss = 1 << 2,
};

@protocol MTLBinaryArchive;

@interface MTLComputePipelineDescriptor : NSObject
@property (readwrite, nonatomic, strong) id<MTLFunction> computeFunction;
@property (readwrite, nonatomic, copy) NSArray<id<MTLBinaryArchive>> *binaryArchives;
@end

@interface MTLComputePipelineReflection : NSObject
@end

@interface MTLBinaryArchiveDescriptor : NSObject
@property (readwrite, nonatomic, copy) NSURL *url;
@end

@protocol MTLBinaryArchive <NSObject>
- (BOOL)addComputePipelineFunctionsWithDescriptor:(MTLComputePipelineDescriptor *)descriptor error:(NSError **)error;
- (BOOL)serializeToURL:(NSURL *)url error:(NSError **)error;
@end

@protocol MTLDevice <NSObject>
@property (readonly) NSString *name;
@property (readonly) uint64_t registryID;
@property (readonly) BOOL hasUnifiedMemory;
@property (readonly) NSUInteger maxThreadgroupMemoryLength;
- (id<MTLCommandQueue>)newCommandQueue;
- (id<MTLComputePipelineState>)newComputePipelineStateWithDescriptor:(MTLComputePipelineDescriptor *)descriptor
                                                             options:(MTLPipelineOption)options
                                                          reflection:(MTLComputePipelineReflection **)reflection
                                                               error:(NSError **)error;
- (id<MTLBinaryArchive>)newBinaryArchiveWithDescriptor:(MTLBinaryArchiveDescriptor *)descriptor error:(NSError **)error;
@end

@protocol MTLCommandEncoder <NSObject>
- (void)endEncoding;
@end

@protocol MTLComputeCommandEncoder <MTLCommandEncoder>
- (void)setComputePipelineState:(id<MTLComputePipelineState>)state;
- (void)setBuffer:(id<MTLBuffer>)buffer offset:(NSUInteger)offset atIndex:(NSUInteger)index;
- (void)setBytes:(const void *)bytes length:(NSUInteger)length atIndex:(NSUInteger)index;
- (void)dispatchThreads:(MTLSize)threadsPerGrid threadsPerThreadgroup:(MTLSize)threadsPerThreadgroup;
- (void)dispatchThreadgroups:(MTLSize)threadgroupsPerGrid threadsPerThreadgroup:(MTLSize)threadsPerThreadgroup;
- (void)memoryBarrierWithScope:(MTLBarrierScope)scope;
@end

typedef double CFTimeInterval;

@protocol MTLCommandBuffer <NSObject>
@property (readonly) MTLCommandBufferStatus status;
@property (readonly) NSError *error;
@property (readonly) CFTimeInterval GPUStartTime;
@property (readonly) CFTimeInterval GPUEndTime;
- (id<MTLComputeCommandEncoder>)computeCommandEncoderWithDispatchType:(MTLDispatchType)dispatchType;
- (void)commit;
- (void)waitUntilCompleted;
@end

@protocol MTLCommandQueue <NSObject>
- (id<MTLCommandBuffer>)commandBuffer;
@end

// MTLCompileOptions: fastMathEnabled (deprecated from macOS 15), and its
// replacements mathMode and mathFloatingPointFunctions (macOS 15).
typedef NS_ENUM(NSInteger, MTLMathMode) {
	MTLMathModeSafe = 0,
	MTLMathModeRelaxed = 1,
	MTLMathModeFast = 2,
};
typedef NS_ENUM(NSInteger, MTLMathFloatingPointFunctions) {
	MTLMathFloatingPointFunctionsFast = 0,
	MTLMathFloatingPointFunctionsPrecise = 1,
};
@interface MTLCompileOptions : NSObject
@property (readwrite, nonatomic) BOOL fastMathEnabled __attribute__((deprecated("Use mathMode instead")));
@property (readwrite, nonatomic) MTLMathMode mathMode;
@property (readwrite, nonatomic) MTLMathFloatingPointFunctions mathFloatingPointFunctions;
@end

id<MTLDevice> MTLCreateSystemDefaultDevice(void) NS_RETURNS_RETAINED;
NSArray<id<MTLDevice>> *MTLCopyAllDevices(void) NS_RETURNS_RETAINED;
