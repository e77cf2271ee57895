/*
 * The agent protocol (docs/protocol.md): its version and the spelling of
 * every record type, field and enumerated value, shared by the agent that
 * writes the records (agent/) and the coordinator that checks them
 * (orchestrator/proto.c), so that the two cannot drift apart by a typo.
 * It sits in kernels/ because both sides build with -Ikernels and the
 * agent's copy is shipped to every host with it (Makefile AGENT_SHIPPED).
 *
 * Only macros: plain C for every compiler that builds the agent.  The
 * strings are literals; nothing here is owned or freed.
 */
#ifndef SEQORCH_PROTOCOL_H
#define SEQORCH_PROTOCOL_H

/* Sent in hello and checked there (docs/protocol.md: what each changed). */
#define SEQORCH_PROTO_VERSION 13

/* Every record is a JSON object with this string member. */
#define PROTO_F_TYPE		"type"

/* Record types, in the order an agent writes them. */
#define PROTO_T_HELLO		"hello"
#define PROTO_T_FACTS		"facts"
#define PROTO_T_VARIANT		"variant"
#define PROTO_T_SELFTEST	"selftest"
#define PROTO_T_PREFLIGHT	"preflight"
#define PROTO_T_WAIT		"wait"
#define PROTO_T_WINDOW		"window"
#define PROTO_T_SAMPLE		"sample"
#define PROTO_T_DONE		"done"
#define PROTO_T_ERROR		"error"
/* A conductor's: the records that follow are its build_id's. */
#define PROTO_T_BUILD		"build"
/* --list's records (read by disasm.c, not by proto.c). */
#define PROTO_T_STUDY		"study"
#define PROTO_T_KERNEL		"kernel"

/* Fields that several records share. */
#define PROTO_F_STUDY		"study"
#define PROTO_F_VARIANT		"variant"
#define PROTO_F_STEPS		"steps"
#define PROTO_F_SAMPLES		"samples"
#define PROTO_F_BUILD_ID	"build_id"
#define PROTO_F_DIGEST		"digest"
#define PROTO_F_REASON		"reason"
#define PROTO_F_CPU		"cpu"
#define PROTO_F_CPU_CHOICE	"cpu_choice"
#define PROTO_F_CALIB_MHZ	"calib_mhz"
#define PROTO_F_GOVERNOR	"governor"

/* hello */
#define PROTO_F_PROTO		"proto"
#define PROTO_F_AGENT		"agent"
#define PROTO_F_TOKEN		"token"

/* facts (agent/facts.c writes most of them) */
#define PROTO_F_ARCH		"arch"
#define PROTO_F_OS		"os"
#define PROTO_F_KERNEL		"kernel"
#define PROTO_F_HOSTNAME	"hostname"
#define PROTO_F_CPU_MODEL	"cpu_model"
#define PROTO_F_CPU_SIGNATURE	"cpu_signature"
#define PROTO_F_CPU_FLAGS	"cpu_flags"
#define PROTO_F_HWCAPS		"hwcaps"
#define PROTO_F_FACTS_WARNING	"facts_warning"
#define PROTO_F_POWER		"power"
#define PROTO_F_THERMAL_PRESSURE	"thermal_pressure"
#define PROTO_F_CORES		"cores"
#define PROTO_F_COMPILER	"compiler"
#define PROTO_F_OPENSSL		"openssl"
#define PROTO_F_OPENSSL_IA32CAP	"openssl_ia32cap"
#define PROTO_F_OPENSSL_ARMCAP	"openssl_armcap"
#define PROTO_F_OPENSSL_CAP_DETECTED	"openssl_cap_detected"
#define PROTO_F_OPENSSL_CAP_CLEARED	"openssl_cap_cleared"
#define PROTO_F_OPENSSL_CAP_APPLIED	"openssl_cap_applied"
#define PROTO_F_PIN_CPU		"pin_cpu"
#define PROTO_F_PINNED		"pinned"
#define PROTO_F_PIN_ERROR	"pin_error"
#define PROTO_F_CLOCK		"clock"
#define PROTO_F_COUNTERS	"counters"
#define PROTO_F_COUNTERS_ERROR	"counters_error"
#define PROTO_F_SYSFS_ROOT	"sysfs_root"

/* variant */
#define PROTO_F_STATUS		"status"
#define PROTO_F_WARNING		"warning"
#define PROTO_V_OK		"ok"
#define PROTO_V_SKIPPED		"skipped"
#define PROTO_V_FAILED		"failed"

/* sample */
#define PROTO_F_SAMPLE		"sample"
#define PROTO_F_POSITION	"position"
#define PROTO_F_ORDER		"order"
#define PROTO_F_NS		"ns"
#define PROTO_F_MSG_LEN		"msg_len"
#define PROTO_F_WARMUP		"warmup"
#define PROTO_F_SEED		"seed"
#define PROTO_F_CALIB_AFTER_MHZ	"calib_after_mhz"
#define PROTO_F_CYCLES		"cycles"
#define PROTO_F_INSTRUCTIONS	"instructions"
#define PROTO_F_CYCLES_SOURCE	"cycles_source"
#define PROTO_F_METRICS		"metrics"
#define PROTO_V_PMU		"pmu"
#define PROTO_V_TEST_SEAM	"test-seam"
#define PROTO_V_CALIBRATION	"calibration"

/* preflight (agent/preflight.c) */
#define PROTO_F_VERDICT		"verdict"
#define PROTO_F_REASONS		"reasons"
#define PROTO_F_NOTES		"notes"
#define PROTO_V_QUIET		"quiet"
#define PROTO_V_NOISY		"noisy"

/* window, and the host state in it (agent/state.c) */
#define PROTO_F_PHASE		"phase"
#define PROTO_F_STATE		"state"
#define PROTO_V_BEGIN		"begin"
#define PROTO_V_END		"end"
#define PROTO_F_AT		"at"
#define PROTO_F_LOAD1		"load1"
#define PROTO_F_LOAD5		"load5"
#define PROTO_F_LOAD15		"load15"
#define PROTO_F_FREQ_KHZ	"freq_khz"
#define PROTO_F_TEMP_C		"temp_c"
#define PROTO_F_THROTTLE_COUNT	"throttle_count"
#define PROTO_F_BUSY_ON_CPU	"busy_on_cpu"
#define PROTO_F_RUNNABLE	"runnable"
#define PROTO_F_PID		"pid"	/* a busy_on_cpu entry's */
#define PROTO_F_COMM		"comm"

/* wait, error */
#define PROTO_F_HOLDER		"holder"
#define PROTO_F_MESSAGE		"message"

/* --list: study and kernel records */
#define PROTO_F_DESCRIPTION	"description"
#define PROTO_F_UNIT		"unit"
#define PROTO_F_STATE_LEN	"state_len"
#define PROTO_F_DEFAULT_STEPS	"default_steps"
#define PROTO_F_CONTROL		"control"
#define PROTO_F_FLOOR_CYCLES	"floor_cycles"
#define PROTO_F_SYMBOL		"symbol"
#define PROTO_F_INSNS		"insns"
#define PROTO_F_FORBIDDEN	"forbidden"
#define PROTO_F_SUPPORTED	"supported"
#define PROTO_F_MISSING		"missing"

#endif
