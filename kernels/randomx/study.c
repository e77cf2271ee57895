/*
 * The randomx study (seed 001): x = RandomX(key, x), each hash's output
 * the next input, from 32 zero bytes with the fixed key of chain.h.  The
 * library is built on each host from the upstream v1.1.10 source the
 * coordinator fetched (artifacts, prebuild.sh), at default and native
 * targeting (targetings); the variants are light mode, full mode and the
 * host's own librandomx.
 */
#include "kernel.h"

const struct study STUDY_THIS = {
	.description = "x = RandomX(\"test key 000\", x) from 32 zero bytes, "
	    "secure JIT, upstream v1.1.10 built on the host",
	.unit = "hash",
	.unit_plural = "hashes",
	.state_len = 32,
	.seed_hex = "00000000000000000000000000000000"
	    "00000000000000000000000000000000",
	.default_steps = 1000,
	.control = "system",
	/* RandomX's own test vector for this key. */
	.kat_msg = "This is a test",
	.kat_hex = "639183aae1bf4c9a35884cb46b09cad9"
	    "175f04efd7684e7262a0ac1c2f0b4e3f",
	/*
	 * prebuild.sh needs CMake and a C++ compiler on the host: the probe
	 * names whichever is missing.  It finds Homebrew's cmake too (its
	 * CMAKE_DIRS), which a non-interactive SSH PATH lacks.
	 */
	.probe_src = "#include <stdio.h>\n"
	    "#include <stdlib.h>\n"
	    "int main(void) {\n"
	    "  int ok = 1;\n"
	    "  if (system(\"cmake --version >/dev/null 2>&1\") != 0 &&\n"
	    "      system(\"/opt/homebrew/bin/cmake --version >/dev/null "
	    "2>&1\") != 0 &&\n"
	    "      system(\"/usr/local/bin/cmake --version >/dev/null "
	    "2>&1\") != 0)\n"
	    "    ok = 0, puts(\"cmake (Debian: cmake)\");\n"
	    "  if (system(\"c++ --version >/dev/null 2>&1\") != 0)\n"
	    "    ok = 0, puts(\"a C++ compiler, c++ (Debian: g++)\");\n"
	    "  return !ok;\n"
	    "}",
	.probe_libs = "",
	.requires = "cmake and a C++ compiler (Debian: cmake g++), 2.3 GiB "
	    "of free memory for the full variant; librandomx0 for the "
	    "system variant",
	/* A light-mode hash takes tens of milliseconds. */
	.selftest_steps = 20,
	/* The reference hashes about 30 a second (light mode, JIT). */
	.max_steps = 100000,
};
