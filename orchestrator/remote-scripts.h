/*
 * The shell programs seqorch runs on hosts, each one block in
 * remote-scripts.c, with {{name}} where rcmd_script (remote.h) puts a
 * quoted value and {{&name}} where it puts shell text as it is.  Each
 * comment there says what the placeholders hold.
 */
#ifndef SEQORCH_REMOTE_SCRIPTS_H
#define SEQORCH_REMOTE_SCRIPTS_H

/* rcmd_sh: what every command runs under (the C locale). */
extern const char rscript_locale[];
/* conn.c: create the workdir and print its absolute path. */
extern const char rscript_workdir_home[], rscript_workdir_abs[];
/* deploy.c: the cold build, its files each after a mark and its length. */
extern const char rscript_build[];
/* disasm.c: the disassembly of the wanted functions only. */
extern const char rscript_objdump[];
/* cmd-hosts check: facts about the machine, and one compiler's. */
extern const char rscript_host_probe[], rscript_cc_probe[];
/* runner-launch.c: an agent detached on its host, and its records. */
extern const char rscript_launch[], rscript_agent_wrapper[];
extern const char rscript_stream[], rscript_stop[], rscript_left_behind[];

#endif
