// mach/mach_time.h stub: the host clock behind Metal's GPU times.
#include <stdint.h>
typedef struct mach_timebase_info {
	uint32_t numer;
	uint32_t denom;
} mach_timebase_info_data_t, *mach_timebase_info_t;
int mach_timebase_info(mach_timebase_info_t info);
uint64_t mach_absolute_time(void);
