-- seqorch results database: the single source of the schema.
--
-- The coordinator embeds this file and applies it on open.  It is a list of
-- migrations: each "-- version: N" section takes a database from
-- PRAGMA user_version N-1 to N, in one transaction.  Append new sections;
-- never edit a released one.  docs/results-db.md explains every table.

-- version: 1

-- One invocation of `seqorch run` for one study.
CREATE TABLE runs (
	id			INTEGER PRIMARY KEY,
	study			TEXT NOT NULL,
	started_at		TEXT NOT NULL,	-- ISO 8601 UTC
	finished_at		TEXT,
	status			TEXT NOT NULL CHECK (status IN
				('running', 'ok', 'partial', 'failed', 'interrupted')),
	steps			INTEGER NOT NULL CHECK (steps > 0),
	samples_per_variant	INTEGER NOT NULL CHECK (samples_per_variant > 0),
	command			TEXT NOT NULL,	-- argv as typed, shell-quoted
	seed			TEXT NOT NULL,	-- hex of the chain's start value
	variants		TEXT,		-- requested list; NULL = all
	hosts			TEXT NOT NULL,	-- the --hosts selection
	exploratory		INTEGER NOT NULL DEFAULT 0,
	coordinator		TEXT NOT NULL,	-- "hostname pid N"
	version			TEXT NOT NULL	-- seqorch version
);

-- The latest known facts per measured host (history lives in run_hosts).
CREATE TABLE hosts (
	id		INTEGER PRIMARY KEY,
	name		TEXT NOT NULL UNIQUE,
	address		TEXT,
	arch		TEXT,
	os		TEXT,
	kernel		TEXT,
	cpu_model	TEXT,
	cores		INTEGER,
	updated_at	TEXT NOT NULL
);

-- One host's part in a run: its state then, and how it ended.
CREATE TABLE run_hosts (
	run_id		INTEGER NOT NULL REFERENCES runs(id),
	host		TEXT NOT NULL,
	status		TEXT NOT NULL CHECK (status IN
			('running', 'ok', 'failed', 'interrupted')),
	error		TEXT,
	pin_cpu		INTEGER,	-- requested cpu; NULL = none
	pinned		INTEGER,	-- 1 if the hard pin succeeded
	pin_error	TEXT,		-- why it did not (recorded, not hidden)
	governor	TEXT,
	calib_mhz	REAL,		-- dependent-add clock estimate
	openssl		TEXT,		-- libcrypto the agent ran with
	facts		TEXT,		-- the agent's facts record, verbatim JSON
	started_at	TEXT NOT NULL,
	finished_at	TEXT,
	PRIMARY KEY (run_id, host)
);

-- One build of the agent on one host with one compiler.
CREATE TABLE builds (
	id			INTEGER PRIMARY KEY,
	run_id			INTEGER NOT NULL REFERENCES runs(id),
	host			TEXT NOT NULL,
	compiler		TEXT NOT NULL,	-- as configured: "cc", "clang"
	compiler_version	TEXT,		-- first line of `cc --version`
	target			TEXT,		-- `cc -dumpmachine`
	cflags			TEXT NOT NULL,
	native			TEXT,		-- what -march/-mcpu=native became
	commands		TEXT,		-- exact compile commands
	log			TEXT,		-- build output
	status			TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
	source_sha256		TEXT,
	binary_sha256		TEXT,
	openssl			TEXT,
	created_at		TEXT NOT NULL
);

-- Every variant's self-test outcome per build: ok, skipped or failed.
CREATE TABLE variants (
	run_id		INTEGER NOT NULL REFERENCES runs(id),
	host		TEXT NOT NULL,
	build_id	INTEGER NOT NULL REFERENCES builds(id),
	study		TEXT NOT NULL,
	variant		TEXT NOT NULL,
	status		TEXT NOT NULL CHECK (status IN
			('ok', 'skipped', 'failed', 'unavailable')),
	reason		TEXT,
	PRIMARY KEY (run_id, host, build_id, study, variant)
);

-- One timed sample.  valid = 1 only when the digest equals the
-- coordinator's own reference for (study, seed, steps).
CREATE TABLE samples (
	id		INTEGER PRIMARY KEY,
	run_id		INTEGER NOT NULL REFERENCES runs(id),
	host		TEXT NOT NULL,
	build_id	INTEGER NOT NULL REFERENCES builds(id),
	study		TEXT NOT NULL,
	variant		TEXT NOT NULL,
	sample_index	INTEGER NOT NULL,
	position	INTEGER NOT NULL,	-- place in this sample's order
	steps		INTEGER NOT NULL,
	ns		INTEGER NOT NULL,
	digest		TEXT NOT NULL,
	seed		TEXT NOT NULL,
	valid		INTEGER NOT NULL CHECK (valid IN (0, 1)),
	invalid_reason	TEXT,
	calib_mhz	REAL,
	cpu		INTEGER,		-- cpu it ran on; -1 if it moved
	received_at	TEXT NOT NULL,
	-- a re-sent record (reconnect) can never be stored twice
	UNIQUE (run_id, host, build_id, study, variant, sample_index)
);
CREATE INDEX samples_run ON samples (run_id, study, host, variant);

-- Independent reference digests, computed once by the coordinator.
CREATE TABLE refs (
	study		TEXT NOT NULL,
	seed		TEXT NOT NULL,
	steps		INTEGER NOT NULL,
	digest		TEXT NOT NULL,
	method		TEXT NOT NULL,	-- e.g. "OpenSSL 3.0.13 EVP_sha3_256"
	computed_at	TEXT NOT NULL,
	PRIMARY KEY (study, seed, steps)
);

-- Failures, as rows: an unreachable host, a bad agent record, a crash.
CREATE TABLE events (
	id		INTEGER PRIMARY KEY,
	run_id		INTEGER REFERENCES runs(id),
	host		TEXT,
	at		TEXT NOT NULL,
	level		TEXT NOT NULL CHECK (level IN ('info', 'warning', 'error')),
	message		TEXT NOT NULL
);

-- Rates in steps (hashes) per second over valid samples, per build so that
-- every (variant, compiler) pair is its own row.
CREATE VIEW summary AS
WITH r AS (
	SELECT s.run_id, s.study, s.host, s.variant, s.build_id,
	    s.steps * 1e9 / s.ns AS rate,
	    ROW_NUMBER() OVER w AS rn,
	    COUNT(*) OVER (PARTITION BY s.run_id, s.study, s.host, s.variant,
	        s.build_id) AS cnt
	FROM samples s
	WHERE s.valid = 1 AND s.ns > 0
	WINDOW w AS (PARTITION BY s.run_id, s.study, s.host, s.variant,
	    s.build_id ORDER BY s.steps * 1e9 / s.ns)
)
SELECT r.run_id, r.study, r.host, r.variant, r.build_id,
    b.compiler, MAX(r.cnt) AS n,
    AVG(CASE WHEN r.rn IN ((r.cnt + 1) / 2, (r.cnt + 2) / 2)
        THEN r.rate END) AS median_rate,
    MIN(r.rate) AS min_rate, MAX(r.rate) AS max_rate
FROM r LEFT JOIN builds b ON b.id = r.build_id
GROUP BY r.run_id, r.study, r.host, r.variant, r.build_id;

-- version: 2

-- One host's measurement window: only timed samples happen inside it.
-- before_state and after_state are the agent's host-state snapshots (JSON:
-- load, dependent-add clock, governor, temperature, throttling, other busy
-- processes on the pinned CPU); drift says why they differ too much, or is
-- NULL.
CREATE TABLE windows (
	id		INTEGER PRIMARY KEY,
	run_id		INTEGER NOT NULL REFERENCES runs(id),
	study		TEXT NOT NULL,
	host		TEXT NOT NULL,
	build_id	INTEGER REFERENCES builds(id),
	holder		TEXT NOT NULL,	-- coordinator: "hostname pid N"
	started_at	TEXT NOT NULL,	-- the agent's clock, ISO 8601 UTC
	finished_at	TEXT,
	before_state	TEXT,
	after_state	TEXT,
	drift		TEXT
);
CREATE INDEX windows_run ON windows (run_id);

-- The measurement lease: at most one row per name, held by one
-- coordinator at a time across every coordinator sharing this database.
CREATE TABLE leases (
	name		TEXT PRIMARY KEY,	-- "measure"
	holder		TEXT NOT NULL,		-- "hostname pid N"
	holder_host	TEXT NOT NULL,
	holder_pid	INTEGER NOT NULL,
	run_id		INTEGER,
	study		TEXT,
	acquired_at	TEXT NOT NULL,
	heartbeat_at	TEXT NOT NULL,
	heartbeat_unix	REAL NOT NULL		-- seconds since the epoch
);

-- What happened to leases: acquired, released, takeover (with the
-- previous holder), waited.
CREATE TABLE lease_events (
	id		INTEGER PRIMARY KEY,
	at		TEXT NOT NULL,
	name		TEXT NOT NULL,
	event		TEXT NOT NULL CHECK (event IN
			('acquired', 'released', 'takeover', 'waited')),
	holder		TEXT NOT NULL,
	previous	TEXT,
	run_id		INTEGER,
	detail		TEXT
);

-- Why a sample beyond the planned ones was taken (adaptive sampling).
ALTER TABLE samples ADD COLUMN reason TEXT;
-- How often the run was resumed with `seqorch run --resume`.
ALTER TABLE runs ADD COLUMN resumes INTEGER NOT NULL DEFAULT 0;

-- version: 3

-- The disassembly check of a build: each variant that declares the
-- instructions it must contain (kernels/kernel.h: insns, symbol) is looked
-- up in the built binary with objdump; status is ok, missing (some
-- instruction is absent), no-symbol (the function is not in the binary) or
-- no-tool (the host has no objdump).
CREATE TABLE disasm (
	build_id	INTEGER NOT NULL REFERENCES builds(id),
	study		TEXT NOT NULL,
	variant		TEXT NOT NULL,
	symbol		TEXT NOT NULL,
	required	TEXT NOT NULL,	-- mnemonics, space separated
	missing		TEXT,		-- those not found; NULL when none
	status		TEXT NOT NULL CHECK (status IN
			('ok', 'missing', 'no-symbol', 'no-tool')),
	tool		TEXT,
	excerpt		TEXT,		-- lines showing the instructions
	PRIMARY KEY (build_id, study, variant)
);

-- version: 4

-- The dependent-add clock estimate taken right after each sample, beside
-- calib_mhz taken right before it: their mean gives the sample's cycles
-- per hash, their difference says whether the clock moved meanwhile.
ALTER TABLE samples ADD COLUMN calib_after_mhz REAL;

-- version: 5

-- Content-addressed artifacts kept beside results.db, in the directory
-- artifacts/ next to it, one file per SHA-256 (docs/provenance.md).
CREATE TABLE artifacts (
	sha256		TEXT PRIMARY KEY,
	size		INTEGER NOT NULL,
	stored_at	TEXT NOT NULL
);

-- What each build of each run keeps: the raw agent output exactly as the
-- agent wrote it (raw, one per agent launch), the built binary fetched back
-- from the host (binary), its disassembly (disasm), the build log and the
-- exact commands (build-log, build-commands) and every uploaded source file
-- (source, named by its path).  `seqorch gc` never removes an artifact
-- that a row here names.
CREATE TABLE artifact_refs (
	run_id		INTEGER NOT NULL REFERENCES runs(id),
	host		TEXT NOT NULL,
	build_id	INTEGER NOT NULL REFERENCES builds(id),
	kind		TEXT NOT NULL CHECK (kind IN ('raw', 'binary', 'disasm',
			'build-log', 'build-commands', 'source')),
	name		TEXT NOT NULL,
	sha256		TEXT NOT NULL REFERENCES artifacts(sha256),
	PRIMARY KEY (run_id, host, build_id, kind, name)
);
CREATE INDEX artifact_refs_sha ON artifact_refs (sha256);

-- version: 6

-- Runs imported from a verified bundle (`seqorch import`): which run of
-- which coordinator they were, and the key that signed them.  The same
-- run of the same bundle is never imported twice.
CREATE TABLE imports (
	run_id			INTEGER PRIMARY KEY REFERENCES runs(id),
	origin_run_id		INTEGER NOT NULL,
	origin_coordinator	TEXT NOT NULL,
	origin_db		TEXT,
	key_fingerprint		TEXT,		-- SHA-256 of the raw Ed25519 key
	manifest_sha256		TEXT NOT NULL,
	imported_at		TEXT NOT NULL,
	UNIQUE (manifest_sha256, origin_run_id)
);

-- version: 7

-- The disassembly check also looks for the instructions a variant forbids
-- (kernels/kernel.h `forbidden`: what a reassociated, shortened or
-- vectorized chain would show): `forbidden` lists them, `present` those
-- found, and status `forbidden` flags the build.  SQLite cannot widen a
-- CHECK in place, so the table is rebuilt with its rows.
CREATE TABLE disasm_v7 (
	build_id	INTEGER NOT NULL REFERENCES builds(id),
	study		TEXT NOT NULL,
	variant		TEXT NOT NULL,
	symbol		TEXT NOT NULL,
	required	TEXT NOT NULL,	-- mnemonics, space separated
	missing		TEXT,		-- those not found; NULL when none
	status		TEXT NOT NULL CHECK (status IN
			('ok', 'missing', 'forbidden', 'no-symbol', 'no-tool')),
	tool		TEXT,
	excerpt		TEXT,		-- lines showing the instructions
	forbidden	TEXT,		-- mnemonics that must not be there
	present		TEXT,		-- forbidden ones found; NULL when none
	PRIMARY KEY (build_id, study, variant)
);
INSERT INTO disasm_v7 (build_id, study, variant, symbol, required, missing,
    status, tool, excerpt)
    SELECT build_id, study, variant, symbol, required, missing, status, tool,
    excerpt FROM disasm;
DROP TABLE disasm;
ALTER TABLE disasm_v7 RENAME TO disasm;

-- version: 8

-- Where each sample's cycles come from (docs/measurement.md): 'pmu' (the
-- user-space cycles and instructions counted by perf_event_open around
-- the timed call, in cycles and instructions), 'calibration' (no counters:
-- ns times the dependent-add clock estimate) or 'test-seam' (the tests'
-- software clocks, never from a real run).  NULL in rows stored before.
ALTER TABLE samples ADD COLUMN cycles INTEGER;
ALTER TABLE samples ADD COLUMN instructions INTEGER;
ALTER TABLE samples ADD COLUMN cycles_source TEXT CHECK (cycles_source IN
	('pmu', 'calibration', 'test-seam'));
-- The noise preflight right before the window: quiet or noisy, and the
-- agent's preflight record (reasons, notes) as JSON.
ALTER TABLE windows ADD COLUMN verdict TEXT CHECK (verdict IN
	('quiet', 'noisy'));
ALTER TABLE windows ADD COLUMN preflight TEXT;
-- How the agent's CPU was chosen with cpu = "auto" (NULL otherwise), and
-- its counters: 'pmu', 'test-seam' or 'none' with counters_error saying
-- why (no PMU in a VM, perf_event_paranoid, macOS).
ALTER TABLE run_hosts ADD COLUMN cpu_choice TEXT;
ALTER TABLE run_hosts ADD COLUMN counters TEXT;
ALTER TABLE run_hosts ADD COLUMN counters_error TEXT;

-- version: 9

-- The OpenSSL capability mask a run set in its agents' environment
-- (`seqorch run --openssl-cap`): OPENSSL_ia32cap on x86-64 hosts,
-- OPENSSL_armcap on aarch64 ones.  NULL: libcrypto chose by itself.
ALTER TABLE runs ADD COLUMN openssl_cap TEXT;
ALTER TABLE samples ADD COLUMN openssl_cap TEXT;

-- version: 10

-- Reading one run costs in proportion to that run, however large the
-- database (issue 12).  samples_valid holds every column the report's pass
-- over a run's valid samples reads, in (cell, steps, ns) order, so that
-- pass and the summary view's medians read this index alone and sort
-- nothing.  samples_digest answers "do all valid samples of this run share
-- steps, seed and final digest?" with a few probes, and finds the invalid
-- ones.
CREATE INDEX samples_valid ON samples (run_id, study, host, variant,
	build_id, steps, ns, position, calib_mhz, calib_after_mhz, cycles,
	instructions, cycles_source, valid)
	WHERE valid = 1 AND ns > 0;
CREATE INDEX samples_digest ON samples (run_id, study, valid, steps, seed,
	digest);
-- The other tables a report reads by run.
CREATE INDEX builds_run ON builds (run_id);
CREATE INDEX events_run ON events (run_id);

-- The same rows and columns as before, one per (run, study, host,
-- variant, build) of a run with one steps value (as every run has: its
-- --steps); samples of different lengths would be separate rows, never
-- mixed in one median.  Ordered by ns within a cell of one length, which is
-- the rates' order reversed (the median is the same), samples_valid serves
-- the window without a sort, and only the first, middle and last rows of
-- each cell reach the GROUP BY.
DROP VIEW summary;
CREATE VIEW summary AS
WITH r AS (
	SELECT s.run_id, s.study, s.host, s.variant, s.build_id, s.steps,
	    s.ns, ROW_NUMBER() OVER w AS rn, COUNT(*) OVER w AS cnt
	FROM samples s
	WHERE s.valid = 1 AND s.ns > 0
	WINDOW w AS (PARTITION BY s.run_id, s.study, s.host, s.variant,
	    s.build_id, s.steps ORDER BY s.ns
	    ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
)
SELECT r.run_id, r.study, r.host, r.variant, r.build_id,
    b.compiler, MAX(r.cnt) AS n,
    AVG(CASE WHEN r.rn IN ((r.cnt + 1) / 2, (r.cnt + 2) / 2)
        THEN r.steps * 1e9 / r.ns END) AS median_rate,
    MIN(r.steps * 1e9 / r.ns) AS min_rate,
    MAX(r.steps * 1e9 / r.ns) AS max_rate
FROM r LEFT JOIN builds b ON b.id = r.build_id
WHERE r.rn IN (1, r.cnt, (r.cnt + 1) / 2, (r.cnt + 2) / 2)
GROUP BY r.run_id, r.study, r.host, r.variant, r.build_id, r.steps;

-- version: 11

-- Named metrics of a sample (protocol 4, kernels/kernel.h: a kernel's
-- metrics hook).  Names starting with "phase_" are nanoseconds of disjoint
-- parts of the sample's ns, "phase_other" being the rest, so the phases of
-- one sample add up to its ns (randomx: phase_proggen, phase_compile,
-- phase_execute, phase_mprotect, phase_other).
CREATE TABLE sample_metrics (
	sample_id	INTEGER NOT NULL REFERENCES samples(id),
	name		TEXT NOT NULL,
	value		REAL NOT NULL,
	PRIMARY KEY (sample_id, name)
);
-- How the build was targeted ("default", "native": kernels/<study>/
-- targetings), the study whose prebuild.sh went into it (NULL: none) and
-- the key=value facts that prebuild left (library hashes, versions).
ALTER TABLE builds ADD COLUMN targeting TEXT;
ALTER TABLE builds ADD COLUMN study TEXT;
ALTER TABLE builds ADD COLUMN extra TEXT;

-- version: 12

-- The summary view without window functions: one pass over samples_valid
-- (0.4 s instead of 3.2 s of CPU for 1M samples; tests/bench_report.py).
-- INDEXED BY makes the scan the index's order, so within a cell the ns
-- reach the aggregate ascending, and the GROUP BY needs no sort: the
-- cell's ns array holds them in order and its middle elements are the
-- median.  The same rows, columns and values as before (min_rate is the
-- rate of the longest sample).
DROP VIEW summary;
CREATE VIEW summary AS
WITH g AS (
	SELECT run_id, study, host, variant, build_id, steps, COUNT(*) AS n,
	    MIN(ns) AS lo, MAX(ns) AS hi, json_group_array(ns) AS a
	FROM samples INDEXED BY samples_valid
	WHERE valid = 1 AND ns > 0
	GROUP BY run_id, study, host, variant, build_id, steps
)
SELECT g.run_id, g.study, g.host, g.variant, g.build_id, b.compiler, g.n,
    (g.steps * 1e9 / json_extract(g.a, '$[' || ((g.n - 1) / 2) || ']') +
    g.steps * 1e9 / json_extract(g.a, '$[' || (g.n / 2) || ']')) / 2
	AS median_rate,
    g.steps * 1e9 / g.hi AS min_rate, g.steps * 1e9 / g.lo AS max_rate
FROM g LEFT JOIN builds b ON b.id = g.build_id;

-- version: 13

-- A run's span of sample ids in two probes: the report's phase shares
-- read the sample_metrics rows of that span only (db-builds.c), so a run
-- costs its own metrics, and nothing when it has none.
CREATE INDEX samples_run_id ON samples (run_id);

-- version: 14

-- A sample's place in its host's whole order (protocol 7): every build of
-- a host and every variant of each take their samples in one alternating
-- order (agent --conduct), and position, the place among its build's
-- samples of the round, no longer says when it ran beside the others.
-- NULL for samples stored before this version.
ALTER TABLE samples ADD COLUMN host_position INTEGER;
CREATE INDEX samples_host_order ON samples (run_id, host, host_position);

-- version: 15

-- `seqorch reproduce NAME` (orchestrator/repro.c): one seed's protocol,
-- run as runs of their own.  A reproduction names its protocol (sha3,
-- sha512, umbrella); steps_cap is --steps (a shorter first look: every run
-- takes at most that many steps), NULL for the seed's own lengths.
CREATE TABLE reproductions (
	id		INTEGER PRIMARY KEY,
	name		TEXT NOT NULL,
	started_at	TEXT NOT NULL,	-- ISO 8601 UTC
	steps_cap	INTEGER,
	command		TEXT NOT NULL
);
-- The protocol a run belongs to: its reproduction and the part of the
-- seed's protocol it is ("tight", "api", "armcap" of sha512; the study's
-- name in umbrella), in the order they ran.
CREATE TABLE reproduction_runs (
	reproduction_id	INTEGER NOT NULL REFERENCES reproductions(id),
	run_id		INTEGER NOT NULL REFERENCES runs(id),
	part		TEXT NOT NULL,
	PRIMARY KEY (reproduction_id, run_id)
);
-- The seeds' machine each host stood for (hosts.toml `reference`), as it
-- was when the reproduction ran; NULL: none.
CREATE TABLE reproduction_hosts (
	reproduction_id	INTEGER NOT NULL REFERENCES reproductions(id),
	host		TEXT NOT NULL,
	reference	TEXT,
	PRIMARY KEY (reproduction_id, host)
);

-- version: 16

-- The database's own identity, made with it (or with this version): the
-- run directories its coordinators leave on hosts are named by it and the
-- run id, so that resuming run 1 of one results.db never counts or
-- removes the run-1 directories of another sharing the workdir.
CREATE TABLE db_identity (id TEXT NOT NULL);
INSERT INTO db_identity (id) VALUES (lower(hex(randomblob(16))));

-- version: 17

-- run --openssl-cap-clear NAME[,NAME] (protocol 8): each agent clears the
-- named bits from the capability mask libcrypto detected and runs with
-- the rest.  The run keeps the names, each sample the mask detected and
-- the bits cleared (hex words as OPENSSL_info prints them); the mask
-- applied is its openssl_cap.  NULL without the option.
ALTER TABLE runs ADD COLUMN openssl_cap_clear TEXT;
ALTER TABLE samples ADD COLUMN openssl_cap_detected TEXT;
ALTER TABLE samples ADD COLUMN openssl_cap_cleared TEXT;

-- version: 18

-- A run's adaptive settings (--max-cv, --max-samples): a resume keeps
-- them, as it keeps the run's steps and samples.  NULL for runs stored
-- before this version (a resume of one takes no extra samples).
ALTER TABLE runs ADD COLUMN max_cv REAL;
ALTER TABLE runs ADD COLUMN max_samples INTEGER;

-- version: 19

-- A run imported with `import --unsigned` (issue 32): its bundle's files
-- and digests were checked but no signature, so nothing says who made it;
-- key_fingerprint is then NULL, and every report of the run says so.
ALTER TABLE imports ADD COLUMN signed INTEGER NOT NULL DEFAULT 1
	CHECK (signed IN (0, 1));

-- version: 20

-- Seed 003's message-length dimension (`run --msg-len L`, protocol 9;
-- kernels/kernel.h): each step hashes an L-byte message, the previous
-- digest followed by zeros up to L.  The run and each of its samples carry
-- L; NULL for the study's own chain, whose message is the digest alone.
-- The references are kept per L too (0: the study's own chain).
ALTER TABLE runs ADD COLUMN msg_len INTEGER;
ALTER TABLE samples ADD COLUMN msg_len INTEGER;
CREATE TABLE refs_v20 (
	study		TEXT NOT NULL,
	seed		TEXT NOT NULL,
	steps		INTEGER NOT NULL,
	msg_len		INTEGER NOT NULL DEFAULT 0,
	digest		TEXT NOT NULL,
	method		TEXT NOT NULL,
	computed_at	TEXT NOT NULL,
	PRIMARY KEY (study, seed, steps, msg_len)
);
INSERT INTO refs_v20 (study, seed, steps, msg_len, digest, method,
    computed_at)
SELECT study, seed, steps, 0, digest, method, computed_at FROM refs;
DROP TABLE refs;
ALTER TABLE refs_v20 RENAME TO refs;

-- version: 21

-- run --warmup K (issue 32, protocol 11): each agent first takes K
-- warmup samples of every cell in the window, stored with warmup = 1 and
-- sample_index -K..-1 (round w of K is w - K), no host_position; every
-- rate, statistic, report, comparison and export leaves them out.  The
-- run keeps K (NULL without the option) for a resume.
ALTER TABLE runs ADD COLUMN warmup INTEGER;
ALTER TABLE samples ADD COLUMN warmup INTEGER NOT NULL DEFAULT 0
	CHECK (warmup IN (0, 1));
-- The summary view as before, over the timed samples only, and the index
-- that covers the report's reads with warmup in it (no table lookups).
DROP VIEW summary;
DROP INDEX samples_valid;
CREATE INDEX samples_valid ON samples (run_id, study, host, variant,
	build_id, steps, ns, position, calib_mhz, calib_after_mhz, cycles,
	instructions, cycles_source, valid, warmup);
CREATE VIEW summary AS
WITH g AS (
	SELECT run_id, study, host, variant, build_id, steps, COUNT(*) AS n,
	    MIN(ns) AS lo, MAX(ns) AS hi, json_group_array(ns) AS a
	FROM samples INDEXED BY samples_valid
	WHERE valid = 1 AND ns > 0 AND warmup = 0
	GROUP BY run_id, study, host, variant, build_id, steps
)
SELECT g.run_id, g.study, g.host, g.variant, g.build_id, b.compiler, g.n,
    (g.steps * 1e9 / json_extract(g.a, '$[' || ((g.n - 1) / 2) || ']') +
    g.steps * 1e9 / json_extract(g.a, '$[' || (g.n / 2) || ']')) / 2
	AS median_rate,
    g.steps * 1e9 / g.hi AS min_rate, g.steps * 1e9 / g.lo AS max_rate
FROM g LEFT JOIN builds b ON b.id = g.build_id;

-- version: 22

-- The window (one agent launch) a sample was taken in, so that paired
-- ratios between builds pair only samples measured side by side; NULL
-- for runs stored before it, exploratory runs, and a launch whose window
-- begin its coordinator never stored.
ALTER TABLE samples ADD COLUMN window_id INTEGER REFERENCES windows(id);
