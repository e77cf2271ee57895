/* randomx/light: light mode (256 MiB cache), phases timed. */
#define RANDOMX_FULL 0
#include "randomx/phased-kernel.h"
