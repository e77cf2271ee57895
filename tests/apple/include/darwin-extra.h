/* What macOS's <time.h> and <stdlib.h> have beyond POSIX (tests/apple/README). */
/* The branches compiled must be the Apple ones. */
#if !defined(__APPLE__) || defined(__linux__)
#error "not compiling for macOS"
#endif
#include <stdint.h>
#include <time.h>
#define CLOCK_UPTIME_RAW 8
uint64_t clock_gettime_nsec_np(clockid_t clock_id);
