// Minimal Foundation stub for syntax- and type-checking the Objective-C
// shims on Linux (checkm.sh). It declares only what the shims use, with
// Apple's names and types; it is NOT Apple's API surface. When a shim
// needs more, add the declaration here, copied from the SDK's signature.
#pragma once
#include <stddef.h>
#include <stdint.h>

typedef signed char BOOL;
#define YES ((BOOL)1)
#define NO ((BOOL)0)
#define nil ((id)0)
#define Nil ((Class)0)
typedef long NSInteger;
typedef unsigned long NSUInteger;
#define NS_ASSUME_NONNULL_BEGIN _Pragma("clang assume_nonnull begin")
#define NS_ASSUME_NONNULL_END _Pragma("clang assume_nonnull end")
#define NS_ENUM(_type, _name) enum _name : _type _name; enum _name : _type
#define NS_OPTIONS(_type, _name) enum _name : _type _name; enum _name : _type
#define NS_RETURNS_RETAINED __attribute__((ns_returns_retained))

@class NSString;

@protocol NSObject
- (BOOL)isEqual:(id)object;
- (BOOL)respondsToSelector:(SEL)aSelector;
- (instancetype)retain;
- (oneway void)release;
- (instancetype)autorelease;
@end

__attribute__((objc_root_class))
@interface NSObject <NSObject> { Class isa; }
+ (instancetype)alloc;
+ (instancetype)new;
- (instancetype)init;
@end

@interface NSString : NSObject
@property (readonly) NSUInteger length;
@property (readonly) const char *UTF8String;
+ (instancetype)stringWithUTF8String:(const char *)s;
+ (instancetype)stringWithFormat:(NSString *)format, ... __attribute__((format(__NSString__, 1, 2)));
@end

@interface NSArray<__covariant ObjectType> : NSObject
@property (readonly) NSUInteger count;
+ (instancetype)arrayWithObject:(ObjectType)anObject;
- (ObjectType)objectAtIndex:(NSUInteger)index;
@end

@interface NSURL : NSObject
+ (NSURL *)fileURLWithPath:(NSString *)path;
@end

@interface NSFileManager : NSObject
@property (class, readonly, strong) NSFileManager *defaultManager;
- (BOOL)fileExistsAtPath:(NSString *)path;
@end

@interface NSDictionary : NSObject
@end

@interface NSError : NSObject
@property (readonly, copy) NSString *domain;
@property (readonly) NSInteger code;
@property (readonly, copy) NSString *localizedDescription;
@property (readonly, copy) NSDictionary *userInfo;
@end
