/* Types every gpuml kernel family starts with (compiled by NVRTC with no toolkit headers). */
typedef unsigned char gpuml__u8;
typedef signed char gpuml__i8;
typedef unsigned short gpuml__u16;
typedef unsigned int gpuml__u32;
typedef int gpuml__i32;
typedef unsigned long long gpuml__u64;
typedef long long gpuml__i64;
#define GPUML__HD static __device__ __forceinline__
#define GPUML__KERNEL_CODE 1   /* shared.h: the device forms of its conversions */
#define GPUML_MAX_DIMS 8
