/*
 * randomx/full: full mode, the seeds' mode: the 2 GiB dataset is
 * initialised on every core in setup, outside the timer.
 */
#define RANDOMX_FULL 1
#include "randomx/phased-kernel.h"
