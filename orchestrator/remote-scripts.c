/*
 * The shell programs seqorch runs on hosts (remote-scripts.h).  Each runs
 * under the host's /bin/sh (or the login shell, which hands it to sh);
 * every value in them comes in through a {{placeholder}}, quoted.
 */
#include "remote-scripts.h"

/*
 * Before every command (rcmd_sh): the C locale, and no other locale
 * variable.  The coordinator reads what hosts print (a compiler's
 * "error:", lscpu's "Model name:"), which a user's LANG or LC_* from the
 * login (PAM's /etc/default/locale, ssh's SendEnv, a .zshenv) would
 * translate ("Fehler:", "Modellname:"), and in a UTF-8 locale macOS's tr
 * stops at a byte that is not UTF-8 (a build log cut mid-character).  C
 * takes bytes as bytes, so paths that are not ASCII still work.  LANGUAGE,
 * which gettext reads before LC_ALL except in C, goes with the others;
 * PATH and everything else the login set stay.  Builtins only: no process
 * starts on a measured host.  One line, as the login shell reads the
 * quoted program too (csh refuses a newline inside quotes).
 */
const char rscript_locale[] =
	"LC_ALL=C; export LC_ALL; unset LANG LANGUAGE LC_CTYPE LC_COLLATE "
	"LC_MESSAGES LC_MONETARY LC_NUMERIC LC_TIME LC_ADDRESS "
	"LC_IDENTIFICATION LC_MEASUREMENT LC_NAME LC_PAPER LC_TELEPHONE; ";

/* "~/x": relative to home.  {{dir}}: x, or "." for "~". */
const char rscript_workdir_home[] =
	"cd && mkdir -p -- {{dir}} && cd -- {{dir}} && pwd -P";

/* {{dir}}: the absolute workdir. */
const char rscript_workdir_abs[] =
	"mkdir -p -- {{dir}} && cd -- {{dir}} && pwd -P";

/*
 * Build unless the build in {{out}} exists, then print what it left.
 * The build happens in a private directory renamed into place, so a
 * coordinator building the same thing at the same time never overwrites
 * a binary another one runs.  meta is written last: its absence marks a
 * failed build, kept as OUT.failed for its log.
 * {{&wrapper}}: the host's build_wrapper and a space, or nothing;
 * {{src}}: the uploaded sources; {{cc}}, {{cflags}}; {{&args}}: build.sh's
 * optional STUDY TARGETING ARTIFACTS, quoted; {{&log_max}}: bytes of log.
 * Each file is printed as "@@seqorch:NAME LEN" and its LEN bytes: the
 * build log is the compiler's output, and a mark inside it must not end
 * the section (deploy.c reads the lengths, never looks for marks).
 * Before them, build.sh's fd 3 is this stdout: its "@@seqorch:step"
 * lines say what the build is doing (deploy-steps.c); its stdout and
 * stderr are this stderr.  A private directory whose shell is gone (an
 * interrupted build: OUT.tmp.PID) is removed before building again.
 */
const char rscript_build[] =
	"s() { n=$({ wc -c < \"$2\"; } 2>/dev/null); "
	"echo \"@@seqorch:$1 $((${n:-0}))\"; cat \"$2\" 2>/dev/null; }; "
	"o={{out}}; if ! { test -x \"$o\"/seqorch-agent && "
	"test -s \"$o\"/meta; }; then echo @@seqorch:built; "
	"for x in \"$o\".tmp.*; do p=${x##*.tmp.}; case $p in ''|*[!0-9]*) "
	";; *) kill -0 \"$p\" 2>/dev/null || rm -rf \"$x\";; esac; done; "
	"t=\"$o\".tmp.$$; rm -rf \"$t\" && mkdir -p \"$t\" && "
	"{{&wrapper}}sh {{src}}/agent/build.sh \"$t\" {{cc}} {{cflags}}{{&args}} "
	"3>&1 >&2; "
	"if [ -s \"$t\"/meta ]; then [ -e \"$o\" ] || mv \"$t\" \"$o\"; "
	"rm -rf \"$t\"; else rm -rf \"$o\".failed; "
	"mv \"$t\" \"$o\".failed; fi; fi; "
	"d=$o; [ -s \"$o\"/meta ] || d=$o.failed; "
	"l=\"$d\"/.log.$$; tail -c {{&log_max}} \"$d\"/build.log 2>/dev/null | "
	"tr -d '\\000' > \"$l\"; "
	"s meta \"$d\"/meta; s commands \"$d\"/commands; s log \"$l\"; "
	"s openssl \"$d\"/openssl; s extra \"$d\"/extra; rm -f \"$l\"; true";

/*
 * Only the functions we need cross the wire, not the whole binary; exit 3
 * says there is no objdump.  {{agent}}: the binary; {{awk}}: the awk
 * program that keeps the wanted functions; {{mattr}}: the extensions
 * llvm-objdump (Xcode's objdump) must be told to decode, since it prints
 * "<unknown>" for SHA3 or SVE2 instructions otherwise; exit 4 says it was
 * used.  GNU objdump decodes every extension by itself.
 */
const char rscript_objdump[] =
	"command -v objdump >/dev/null 2>&1 || exit 3; "
	"case $(objdump --version 2>/dev/null) in *LLVM*) "
	"objdump -d --no-show-raw-insn {{mattr}} {{agent}} | awk {{awk}}; "
	"exit 4;; esac; "
	"objdump -d --no-show-raw-insn {{agent}} | awk {{awk}}";

/*
 * Facts about the machine, as key=value lines.  A scratch directory inside
 * the workdir {{wd}} is made for the compiler probes: nothing is written
 * outside the workdir.
 */
const char rscript_host_probe[] =
	"wd={{wd}}\n"
	"kv() { printf '%s=%s\\n' \"$1\" \"$2\"; }\n"
	"kv arch \"$(uname -m)\"\n"
	"kv os \"$(uname -sr)\"\n"
	"if [ -r /etc/os-release ]; then\n"
	"  kv distro \"$(sed -n 's/^PRETTY_NAME=//p' /etc/os-release |"
	" tr -d '\\042' | head -n 1)\"\n"
	"elif command -v sw_vers >/dev/null 2>&1; then\n"
	"  kv distro \"macOS $(sw_vers -productVersion)\"\n"
	"fi\n"
	"m=$(sysctl -n machdep.cpu.brand_string 2>/dev/null)\n"
	"[ -n \"$m\" ] || m=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p'"
	" /proc/cpuinfo 2>/dev/null | head -n 1)\n"
	"[ -n \"$m\" ] || m=$(lscpu 2>/dev/null |"
	" sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)\n"
	/* qemu-user shows the machine's own /proc/cpuinfo (facts.c). */
	"case $(uname -m) in aarch64 | arm64)\n"
	"  if [ -r /proc/cpuinfo ] && ! grep -q '^Features' /proc/cpuinfo;"
	" then m=\"unknown (/proc/cpuinfo has no aarch64 Features line:"
	" not this cpu's)\"; fi ;;\n"
	"esac\n"
	"kv cpu \"$m\"\n"
	/* What names the core where a VM's model string does not, and the
	 * instruction sets the variants are picked by (agent/cpu.c). */
	"case $(uname -m) in x86_64 | amd64)\n"
	"  sig=$(awk -F': *' '/^cpu family/ { f = $2 } /^model[[:space:]]*:/"
	" { m = $2 } /^stepping/ { print \"family \" f \" model \" m"
	" \" stepping \" $2; exit }' /proc/cpuinfo 2>/dev/null)\n"
	"  [ -n \"$sig\" ] || sig=$(sysctl -n machdep.cpu.family"
	" machdep.cpu.model machdep.cpu.stepping 2>/dev/null |"
	" awk 'NR == 3 { print \"family \" f \" model \" m \" stepping \" $1 }"
	" { if (NR == 1) f = $1; if (NR == 2) m = $1 }')\n"
	"  kv cpu_signature \"$sig\"\n"
	"  want='avx2 bmi2 avx512f avx512vl avx512dq aes'\n"
	"  fl=$(sed -n 's/^flags[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo"
	" 2>/dev/null | head -n 1)\n"
	"  [ -n \"$fl\" ] || fl=$(sysctl -n machdep.cpu.features"
	" machdep.cpu.leaf7_features 2>/dev/null | tr 'A-Z\\n' 'a-z ') ;;\n"
	"aarch64 | arm64)\n"
	"  want='aes sha3 sha512 sve sve2 svebitperm'\n"
	"  fl=$(sed -n 's/^Features[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo"
	" 2>/dev/null | head -n 1)\n"
	"  if [ -z \"$fl\" ] && [ ! -r /proc/cpuinfo ]; then\n"
	"    for w in AES SHA3 SHA512; do\n"
	"      [ \"$(sysctl -n hw.optional.arm.FEAT_$w 2>/dev/null)\" = 1 ] &&"
	" fl=\"$fl $(echo $w | tr A-Z a-z)\"\n"
	"    done\n"
	"  fi ;;\n"
	"*) fl= ;;\n"
	"esac\n"
	"if [ -n \"$fl\" ]; then\n"
	"  has= lacks=\n"
	"  for w in $want; do case \" $fl \" in *\" $w \"*) has=\"$has $w\" ;;"
	" *) lacks=\"$lacks $w\" ;; esac; done\n"
	"  kv isa \"${has# };${lacks# }\"\n"
	"fi\n"
	"kv cores \"$(getconf _NPROCESSORS_ONLN 2>/dev/null ||"
	" sysctl -n hw.ncpu 2>/dev/null)\"\n"
	/* Linux numbers the cpus a host's cpu may name (agent/pin.c). */
	"kv cpus_online \"$(cat /sys/devices/system/cpu/online 2>/dev/null)\"\n"
	"kv openssl \"$(openssl version 2>/dev/null | head -n 1)\"\n"
	"kv free_kib \"$(df -Pk \"$wd\" 2>/dev/null |"
	" awk 'NR == 2 { print $4 }')\"\n"
	"kv scratch \"$(mktemp -d \"$wd/check.XXXXXX\")\"\n";

/*
 * One compiler, run through the build wrapper when there is one, with the
 * host's cflags in every compile, as the build runs it:
 * sh -c PROBE sh CC CFLAGS SCRATCH SRC [NAME SOURCE LIBS]...  As in
 * agent/build.sh, CC, CFLAGS and LIBS are split into words with globbing
 * off and never evaluated.  The libraries variants need are probed by
 * the uploaded sources' own kernels/registry.sh libs (SRC, the source
 * tree), as agent/build.sh probes them: lib-WORD is "ok" or why not.
 * Each NAME SOURCE LIBS is a study's own probe (struct study's
 * probe_src), compiled, linked and run: it exits 0 when the study can
 * build here (randomx: cmake and c++ are there), else prints what is
 * missing, one item a line: study_NAME is yes, "missing A;B" or no (the
 * probe itself did not build).  No placeholders: it is itself passed
 * quoted, its values as arguments.
 */
const char rscript_cc_probe[] =
	"set -f\n"
	"cc=$1 cflags=$2 t=$3 src=$4\n"
	"kv() { printf '%s=%s\\n' \"$1\" \"$2\"; }\n"
	"kv version \"$($cc --version 2>/dev/null | head -n 1)\"\n"
	"kv target \"$($cc -dumpmachine 2>/dev/null)\"\n"
	"printf 'int main(void) { return 0; }\\n' > \"$t/cflags.c\"\n"
	"if $cc $cflags -c -o \"$t/cflags.o\" \"$t/cflags.c\" 2>/dev/null;"
	" then kv cflags yes; else kv cflags no; fi\n"
	"(cd \"$src\" && SEQORCH_PREBUILT= SEQORCH_NOLIBS="
	" sh kernels/registry.sh libs \"$cc\" \"$cflags\" \"$t/libs\") |"
	" while IFS=\"$(printf '\\t')\" read -r w why; do"
	" kv \"lib$w\" \"$why\"; done\n"
	"shift 4\n"
	"while [ $# -ge 3 ]; do\n"
	"  printf '%s\\n' \"$2\" > \"$t/study.c\"\n"
	"  if ! $cc $cflags -o \"$t/study\" \"$t/study.c\" $3 2>/dev/null; then"
	" kv \"study_$1\" no\n"
	"  elif m=$(\"$t/study\" 2>/dev/null); then kv \"study_$1\" yes\n"
	"  else kv \"study_$1\" \"missing $(printf '%s\\n' \"$m\" |"
	" paste -s -d ';' -)\"; fi\n"
	"  shift 3\n"
	"done\n";

/*
 * The agent runs detached on the host (nohup, records appended to a file
 * in its run directory {{dir}}), so a dropped connection loses nothing.
 * The files of one agent run:
 *   records   the agent's JSON lines        pid   the agent's pid
 *   stderr    the agent's stderr            exit  its exit status, last
 * mkdir is the guard: a launch repeated after a drop starts nothing.  The
 * agent {{agent}} is hashed first: a binary replaced since its build was
 * recorded (the warm path reads the build's meta file, not the binary) is
 * refused with status {{&bad_sum}} and its hash on stderr.  {{sum}}: the
 * hash its build recorded; {{wrapper}}: rscript_agent_wrapper, filled in.
 * A run directory or file that cannot be made (a full file system) exits
 * 1 at once, saying why on stderr, and leaves no run directory that a
 * resume or the stream would wait on for an agent never started.
 */
const char rscript_launch[] =
	"nofiles() { f=$(df -Pk \"$1\" 2>/dev/null | "
	"awk 'NR == 2 { print $4 }'); "
	"if [ \"${f:-x}\" -lt 1024 ] 2>/dev/null; then echo \"the file "
	"system of \\\"$1\\\" is full ($f KiB free)\"; "
	"else printf '%s\\n' \"$2\"; fi >&2; exit 1; }; "
	"w=$(dirname {{dir}}); "
	"e=$(mkdir -p \"$w\" 2>&1) || nofiles \"$(dirname \"$w\")\" \"$e\"; "
	"e=$(mkdir {{dir}} 2>&1) || { [ -d {{dir}} ] && exit 0; "
	"nofiles \"$w\" \"$e\"; }; "
	"h=$( (sha256sum {{agent}} 2>/dev/null || shasum -a 256 {{agent}}) | "
	"cut -d ' ' -f 1); [ \"$h\" = {{sum}} ] || { rm -rf {{dir}}; "
	"echo \"$h\" >&2; exit {{&bad_sum}}; }; "
	"e=$( { : > {{dir}}/records && echo '    ' > {{dir}}/exit.tmp; } "
	"2>&1) || { rm -rf {{dir}}; nofiles \"$w\" \"$e\"; }; "
	"nohup sh -c {{wrapper}} </dev/null >/dev/null 2>&1 &";

/*
 * The shell that runs the agent ({{&agent_cmd}}, its command line) and
 * writes its exit status once it ends, over the blanks rscript_launch
 * wrote: a file system that filled up meanwhile still takes it.
 */
const char rscript_agent_wrapper[] =
	"{{&agent_cmd}} --out {{dir}}/records 2>{{dir}}/stderr & "
	"echo $! > {{dir}}/pid; wait $!; "
	"printf '%4d\\n' $? 1<> {{dir}}/exit.tmp && "
	"mv {{dir}}/exit.tmp {{dir}}/exit";

/*
 * Stream {{dir}}/records from byte {{&offset}}, then exit with the
 * agent's status.  tail follows the file: GNU tail by inotify (records
 * arrive at once), waking once a second ({{&poll}}) only to see whether
 * the agent's pid is gone; elsewhere (macOS, BSD: kqueue) tail -f runs
 * beside a loop that only looks for the exit file once a second, one
 * sleep and no other process per second on the measured host, and is
 * stopped a second after it (the agent wrote its last byte before the
 * wrapper wrote exit).  Every wait has a deadline: no pid file within
 * {{&start_s}} s (nohup failed to start the wrapper) exits
 * {{&no_start}}, no exit file {{&start_s}} s after the agent's pid is
 * gone (its wrapper shell was killed) exits {{&no_exit}}, each with a
 * message on stderr.  An agent that failed saying nothing (it could not
 * write its stderr either) on a full file system is said to be on one.
 */
const char rscript_stream[] =
	"cd {{dir}} || exit 125; off={{&offset}}; i=0; "
	"while [ ! -s pid ] && [ ! -f exit ]; do "
	"if [ $i -ge $(({{&start_s}} * 10)) ]; then "
	"echo \"the agent did not start: no pid file in {{&start_s}} s "
	"(nohup could not start it?)\" >&2; exit {{&no_start}}; fi; "
	"sleep 0.1; i=$((i + 1)); done; "
	"if [ -s pid ]; then "
	"if tail --version 2>/dev/null | grep -q GNU; then "
	"tail -s {{&poll}} -c +$((off + 1)) -f --pid=\"$(cat pid)\" records; "
	"else p=$(cat pid); tail -c +$((off + 1)) -f records & t=$!; "
	"while [ ! -f exit ] && kill -0 \"$p\" 2>/dev/null; do "
	"sleep {{&poll}}; done; sleep 1; kill $t 2>/dev/null; wait $t; fi; "
	"fi; i=0; "
	"while [ ! -f exit ]; do "
	"if [ $i -ge $(({{&start_s}} * 10)) ]; then "
	"echo \"the agent (pid $(cat pid)) ended without an exit status "
	"(its wrapper shell was killed?)\" >&2; exit {{&no_exit}}; fi; "
	"sleep 0.1; i=$((i + 1)); done; "
	"cat stderr >&2; s=$(cat exit); [ $s = 0 ] || [ -s stderr ] || { "
	"f=$(df -Pk . 2>/dev/null | awk 'NR == 2 { print $4 }'); "
	"[ \"${f:-x}\" -lt 1024 ] 2>/dev/null && echo \"the file system of "
	"\\\"$PWD\\\" is full ($f KiB free)\" >&2; }; exit $s";

/*
 * Stop the agent of {{dir}}: TERM, up to 10 s for its exit file, then
 * KILL.  Exit 0 once it has exited (or never started).
 */
const char rscript_stop[] =
	"cd {{dir}} 2>/dev/null || exit 0; i=0; "
	"while [ ! -s pid ] && [ ! -f exit ] && [ $i -lt 50 ]; do "
	"sleep 0.1; i=$((i + 1)); done; [ -f exit ] && exit 0; "
	"kill $(cat pid) 2>/dev/null; i=0; "
	"while [ ! -f exit ] && [ $i -lt 100 ]; do sleep 0.1; "
	"i=$((i + 1)); done; [ -f exit ] && exit 0; "
	"kill -9 $(cat pid) 2>/dev/null; i=0; "
	"while [ ! -f exit ] && [ $i -lt 50 ]; do sleep 0.1; "
	"i=$((i + 1)); done; [ -f exit ]";

/*
 * The run directories in {{runs}} that an earlier launch of this run left
 * ({{&prefix}}: the database's identity, the run id and the build id, or
 * "c" for a conductor's): one line each, its name and "ended" or
 * "running" (no exit file yet: its agent may still be measuring).
 */
const char rscript_left_behind[] =
	"cd {{runs}} 2>/dev/null || exit 0; "
	"for d in {{&prefix}}-*; do [ -f \"$d/records\" ] || continue; "
	"if [ -f \"$d/exit\" ]; then echo \"$d ended\"; "
	"else echo \"$d running\"; fi; done";
