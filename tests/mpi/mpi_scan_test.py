#!/usr/bin/env python3
"""mpi_scan_test.py ZSIM SOURCE_DIR SAMPLES_DATA WORK_DIR CASE

A distributed scan (`mpirun -n N zsim scan ...`, N = 1..4, on loopback) against one process:
the JSON report must be the same, run-dependent figures aside (wall and codec time, speeds,
zsim's own memory), and so must the exit code. Cases:

Every comparison at N > 1 also checks the key-partitioned table: the entries each rank owns
add up to one process's table, entries were exchanged, and with 4000 keys or more every rank
owns some and none more than 1.5 x its 1/N share.

  tiny          the tiny sample, default options, files spread over every rank
  codecs        the tiny sample at 4K,128K,1M x off,lz4,gzip-6,zstd-3, and at --volblocksize
  sample        the tiny sample under --sample 1/16, and under --max-memory (the budget is applied
                to the whole, so the kept key space is one process's)
  split         a 100 MiB file (a partial last record, holes, a hard link, repeated roots) read
                in pieces by every rank: identical at every recordsize, as a zvol, under
                --sample 1/16 and under --max-memory, each byte read by one rank
  huge          a 64 MiB structured file among small ones, at two recordsizes, and under
                --max-memory budgets the whole outgrows at 1K and 512-byte records (the merged
                tables sample as one process; every figure compared, block sizes and breakdowns
                included)
  partition_edges
                --max-memory just above what one process's sampled tables and sketches take: at
                N = 3 and 4 the shards each rank sent to their owners must cost nothing when
                the budget raises the sample shift, or the whole outgrows the budget one more
                time than one process (the same key space kept, every figure compared); and
                the table exchange with rounds smaller than a shard (each split over rounds);
                and a small shard limit (ZSIM_MPI_SHARD_ENTRIES) the merged shards outgrow:
                sampled after the exchange as one process under that --sample
  overlap       the tables' entries shipped to their owners during the scan after every few
                entries (ZSIM_MPI_SHIP_BYTES): identical with sampled codecs, a split file,
                --sample and --max-memory; every rank that read blocks shipped some, and every
                entry shipped was received
  census        keys referenced 8 times in all, fewer on each rank, with shipping: identical
                (the census at ceil(8/N) own references, a key shipped before counted as seen);
                and with the census at 8 own references (ZSIM_MPI_CENSUS_AT=8) the report must
                differ at N = 2 or 3, so the case tests the fix
  census8       at N = 8 (the census at 8 own references, no filter of shipped keys, the rest
                coded after the exchange): the copies of census's keys in one file, read by one
                rank, no entry shipped during the scan: identical (before a75bbdc no key became
                heavy from N = 8 on)
  census_spread at N = 8 and 9: keys referenced 8 times in all but spread over many files (8 x 1,
                2+2+1+1+1+1, 3+1+1+1+1+1, and 7 x 1 which is not heavy), one file per batch, so no
                rank holds 8 references of a key: identical (the owners have the heavy keys read
                again and coded after the exchange), with and without shipping during the scan;
                and with the census of 8 own references alone (ZSIM_MPI_CENSUS_AT=8, before the
                fix) the report must differ, so the case tests the fix; the ranks' stats must
                show blocks read again
  census_costly at N = 2 and 3 with a costly sampled codec (zstd-19) on census_spread's tree: the
                reread from 2 ranks on (engine/mpi/census.h): identical; at N = 2 blocks are read
                again, and zstd-19 codes fewer bytes than under the count at ceil(8/N); a cheap
                list (zstd-3) reads nothing again
  rare_shipped  a rare lz4 class's keys met again by a rank after it shipped them, at N = 2 with
                a costly codec and at N = 8: identical (they are not counted twice)
  binding       mpirun -n 1 binds the rank to one core: rank 0 says so and how to lift it, also
                where --threads 2 asks for more threads than that core (not where --threads 1
                fits it, under --bind-to none, which scans on every core, nor with --quiet)
  roots         repeated and nested roots, a hard link: each file counted once
  samples       every other sample built under SAMPLES_DATA (skipped when none is)
  text_html     text and HTML reports: the same as one process's, written by rank 0 alone
  save          --save under mpirun: the state file reports as one process's does
  save_bytes    --save under mpirun -n 1..4 writes the bytes one process's --save writes, up to
                the run section (docs/state.md), at two pairs of recordsizes, exact (with file
                records) and under --sample 1/4; and the distributed save is the base of a
                --since that gives those bytes again. Over three trees: no hard link and no file
                split; hard links (the tiny sample's, and several across directories, held by
                ranks other than 0: the linked-files section); and files read in pieces by
                several ranks (their file records), one of them hard-linked
  unreadable    paths no rank can read appear as errors, with one process's exit code
  interrupted   Ctrl-C (SIGINT) to mpirun ends the job with zsim's message (looked for over up
                to 3 aborts: Open MPI may drop it) and no report;
                SIGUSR1 to mpirun gives the partial report, marked partial, exit code 130
  rank_killed   a rank killed mid-scan fails the job with a message naming it, no report
"""
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

ZSIM, SOURCE, SAMPLES_DATA, WORK, CASE = sys.argv[1:6]
MPIRUN = shutil.which("mpirun")
ENV = dict(os.environ)
# Loopback only: shared memory within the node, no network transport.
ENV.update({"OMPI_MCA_btl": "self,vader", "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
            "OMPI_MCA_plm_rsh_agent": "false", "OMPI_MCA_rmaps_base_oversubscribe": "1"})
ENV.pop("ZSIM_MPI_STATS", None)
# Small batches, so that a tree of a few MB is spread over all ranks.
SMALL_BATCHES = {"ZSIM_MPI_BATCH_BYTES": "262144", "ZSIM_MPI_STATS": "1"}

# `threads`: the default is the cores of the process's CPU affinity, and mpirun binds a rank to
# its share of them (one of two, here), where one process has both.
RUN_DEPENDENT = {"seconds", "compress_bytes_per_second", "timing", "memory", "threads"}
SPEED = re.compile(r"\d+(\.\d+)? [KMGT]?B/s")
DURATION = re.compile(r"\b\d+(\.\d+)? (s|ms|min|h)\b")
# The text report's line of codec CPU seconds per GB (measured, so run-dependent), with the
# lines it wraps onto (indented by two spaces).
CODEC_CPU = re.compile(r"^Codec CPU s/GB on this CPU.*\n(?:  .*\n)*", re.M)

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what, flush=True)


def normalized(x, also=()):
    """x without its run-dependent fields (RUN_DEPENDENT, and the keys in `also`)."""
    if isinstance(x, dict):
        return {k: normalized(v, also) for k, v in x.items()
                if k not in RUN_DEPENDENT and k not in also}
    if isinstance(x, list):
        return [normalized(v, also) for v in x]
    if isinstance(x, str):
        return SPEED.sub("<speed>", x)
    return x


def run(cmd, env_extra=None, timeout=600):
    env = dict(ENV)
    env.update(env_extra or {})
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)


def mpirun(n, args, env_extra=None, timeout=600):
    return run([MPIRUN, "--allow-run-as-root", "--oversubscribe", "-n", str(n), ZSIM] + args,
               env_extra, timeout)


def ranks_with_files(stderr):
    """Ranks that scanned files or pieces of files."""
    return len([m for m in re.finditer(r"zsim-mpi-stats rank=(\d+) files=(\d+) pieces=(\d+)",
                                       stderr) if int(m.group(2)) + int(m.group(3)) > 0])


def rank_stats(stderr, field):
    return [int(m.group(1)) for m in re.finditer(r"zsim-mpi-stats rank=\d+ .*\b" + field +
                                                 r"=(\d+)", stderr)]


def rank_seconds(stderr, field):
    return [float(m.group(1)) for m in re.finditer(r"zsim-mpi-stats rank=\d+ .*\b" + field +
                                                   r"=([0-9.]+)", stderr)]


def first_difference(a, b, path=""):
    if type(a) is not type(b):
        return f"{path}: {a!r} vs {b!r}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}: only in one"
            d = first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} vs {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if a == b else f"{path}: {a!r} vs {b!r}"


def partitioned(label, n, stderr, whole_entries):
    """The dedup table is partitioned by key: the ranks' shards add up to one process's table
    (as many entries), entries did move to their owners, and with enough keys every rank owns
    a share near 1/n of them (256 shards split in n ranges)."""
    owned = rank_stats(stderr, "owned_entries")
    check(len(owned) == n, f"{label} n={n}: {len(owned)} ranks reported their shards")
    check(sum(owned) == whole_entries,
          f"{label} n={n}: the ranks own {owned} entries, one process's table has {whole_entries}")
    moved = sum(rank_stats(stderr, "exchange_entries_sent")) + sum(rank_stats(
        stderr, "stream_entries_sent"))
    # Some entry moved, where the table holds enough keys for that to be certain: a table of a
    # few kept keys (--sample 1/16 of the tiny tree keeps about 3) is read whole by one rank
    # often enough (the ranks take files as they come), and that rank owns them all one time
    # in 2^keys (seen once in CI under load).
    if whole_entries >= 32:
        check(moved > 0, f"{label} n={n}: no entry was sent to its owner")
    if whole_entries >= 4000:
        check(min(owned) > 0 and max(owned) < 1.5 * whole_entries / n,
              f"{label} n={n}: shares of the table per rank {owned} of {whole_entries}")


def compare(label, args, ranks=(1, 2, 3, 4), spread=True, sampled=False, pieces=False,
            round_bytes=None, ship_bytes=None, env_extra=None, also_run_dependent=()):
    """JSON of one process vs mpirun -n N, for each N. `sampled`: the one-process report must
    show a sampled dedup table (the budget bit), so the comparison covers it. `pieces`: a file
    is split, at least 2 ranks read pieces of it, and the ranks read the bytes one process
    reads, once. `round_bytes`: the table exchange sends at most that many bytes per round from
    each rank (ZSIM_MPI_EXCHANGE_BYTES), shards split over rounds, and the ranks' stats show it.
    `ship_bytes`: the ranks ship their foreign entries during the scan once they reach that many
    bytes (ZSIM_MPI_SHIP_BYTES), and every rank that read blocks shipped some.
    `also_run_dependent`: more keys left out of the comparison. Returns the JSON reports of one
    process and of each N."""
    one = run([ZSIM, "scan", "--json", "--no-progress"] + args)
    check(one.returncode in (0, 1), f"{label}: one process exits {one.returncode}: {one.stderr}")
    whole_entries = json.loads(one.stdout)["memory"]["ddt_table_entries"]
    want = normalized(json.loads(one.stdout), also_run_dependent)
    if sampled:
        moduli = [r["dedup"]["sample_modulus"] for r in want["results"]]
        check(max(moduli) > 1, f"{label}: the budget did not make one process sample: {moduli}")
    reports = {0: want}
    for n in ranks:
        env = dict(SMALL_BATCHES)
        env.update(env_extra or {})
        if round_bytes:
            env["ZSIM_MPI_EXCHANGE_BYTES"] = str(round_bytes)
        if ship_bytes:
            env["ZSIM_MPI_SHIP_BYTES"] = str(ship_bytes)
        got = mpirun(n, ["scan", "--json", "--no-progress"] + args, env)
        check(got.returncode == one.returncode,
              f"{label} n={n}: exit {got.returncode}, one process {one.returncode}: {got.stderr}")
        try:
            report = json.loads(got.stdout)  # one report: rank 0's alone
        except json.JSONDecodeError as e:
            check(False, f"{label} n={n}: stdout is not one JSON report ({e}): {got.stdout[:300]}")
            continue
        reports[n] = normalized(report, also_run_dependent)
        # Rank 0 speaks for the scan: a warning said once whatever N, and none from TBB (a rank
        # bound to fewer cores than the machine has asked it for threads it would not give).
        for said in ("zsim: the codecs asked for", "blocks they skipped ("):
            lines = [line for line in got.stderr.splitlines() if said in line]
            check(len(lines) <= 1, f"{label} n={n}: said {len(lines)} times: {lines}")
        # --threads N is each rank's.
        if "--threads" in args:
            want_threads = int(args[args.index("--threads") + 1])
            check(report["settings"]["threads"] == want_threads,
                  f"{label} n={n}: threads {report['settings']['threads']}, not {want_threads}")
        check("TBB Warning" not in got.stderr, f"{label} n={n}: {got.stderr}")
        d = first_difference(want, normalized(report, also_run_dependent))
        check(d is None, f"{label} n={n}: differs from one process at {d}")
        if ship_bytes and n > 1:
            blocks = rank_stats(got.stderr, "blocks")
            ships = rank_stats(got.stderr, "stream_ships")
            received = sum(rank_stats(got.stderr, "stream_entries_received"))
            check(len(ships) == n and all(s > 0 for s, b in zip(ships, blocks) if b > 100),
                  f"{label} n={n}: ships during the scan per rank {ships} (blocks {blocks})")
            check(received == sum(rank_stats(got.stderr, "stream_entries_sent")),
                  f"{label} n={n}: {received} entries received during the scan, not those sent")
        if n > 1:
            partitioned(label, n, got.stderr, whole_entries)
        if round_bytes and n > 1:
            sent = rank_stats(got.stderr, "exchange_bytes_sent")
            rounds = rank_stats(got.stderr, "exchange_rounds")
            check(len(sent) == n and all(r * round_bytes >= b for r, b in zip(rounds, sent)),
                  f"{label} n={n}: {sent} bytes sent in {rounds} rounds of {round_bytes} at most")
        # The time each rank's scan waited for work is its own, part of its scan's time.
        waited = rank_seconds(got.stderr, "work_wait_seconds")
        scanned = rank_seconds(got.stderr, "scan_seconds")
        check(len(waited) == n and all(w <= s + 0.001 for w, s in zip(waited, scanned)),
              f"{label} n={n}: waits for work {waited}, scans {scanned}")
        # What follows the scan (the reduction among it) is each rank's own, and rank 0's is
        # part of the job's time after its scan.
        reduced = rank_seconds(got.stderr, "reduce_seconds")
        after = rank_seconds(got.stderr, "after_scan_seconds")
        check(len(reduced) == n and len(after) == n and
              all(0 <= r <= a + 0.001 for r, a in zip(reduced, after)),
              f"{label} n={n}: reductions {reduced}, after the scans {after}")
        rank0 = re.search(r"zsim-mpi-stats rank=0 .*\bscan_seconds=([0-9.]+) .*"
                          r"\bafter_scan_seconds=([0-9.]+)", got.stderr)
        check(rank0 is not None and
              float(rank0.group(1)) + float(rank0.group(2)) <= report["seconds"] + 0.002,
              f"{label} n={n}: rank 0's scan and what followed it "
              f"({rank0.groups() if rank0 else None}) outlast the job ({report['seconds']} s)")
        if spread and n > 1:
            used = ranks_with_files(got.stderr)
            check(used >= 2, f"{label} n={n}: only {used} rank(s) scanned files")
        if pieces:
            per_rank = rank_stats(got.stderr, "pieces")
            check(len([p for p in per_rank if p > 0]) >= min(n, 2),
                  f"{label} n={n}: pieces read per rank {per_rank}")
            read = sum(rank_stats(got.stderr, "bytes_read"))
            check(read == want["input"]["bytes_read"],
                  f"{label} n={n}: the ranks read {read} bytes, one process "
                  f"{want['input']['bytes_read']}")
        print(f"ok {label} n={n}", flush=True)
    return reports


def tiny():
    path = os.path.join(WORK, "tiny")
    if not os.path.isdir(path):
        subprocess.run([os.path.join(SOURCE, "samples", "build-tiny"), path], check=True,
                       capture_output=True)
    return path


def structured_image(path, records, is_hole, tail=0):
    """`records` 128K records cycling through a repeating one (8 kinds), a compressible one, a
    random one and a half-zero one, holes where is_hole(record), then `tail` random bytes.
    Returns the repeating records and the compressible one."""
    rnd = open("/dev/urandom", "rb")
    rec = 128 * 1024
    pattern = [rnd.read(rec) for _ in range(8)]
    text = (b"the quick brown fox jumps over the lazy dog " * 3000)[:rec]
    with open(path, "wb") as f:
        for i in range(records):
            if is_hole(i):
                f.seek(rec, 1)
            elif i % 4 == 0:
                f.write(pattern[i % 8])  # each met records / 32 times
            elif i % 4 == 1:
                f.write(text)
            elif i % 4 == 2:
                f.write(rnd.read(rec))
            else:
                f.write(rnd.read(rec // 2) + bytes(rec // 2))
        f.write(rnd.read(tail))
        f.truncate(records * rec + tail)
    return pattern, text


def huge_tree():
    """A 64 MiB file with structure (repeating, compressible and random 128K records, a hole)
    and a few small files, one a copy of the huge file's first records."""
    path = os.path.join(WORK, "huge")
    if os.path.isdir(path):
        return path
    os.makedirs(path)
    pattern, text = structured_image(os.path.join(path, "image.raw"), 512, lambda i: i % 64 == 3)
    for k in range(6):
        with open(os.path.join(path, f"small{k}.bin"), "wb") as f:
            f.write(pattern[k] + text[: 1000 * (k + 1)])
    return path


def split_tree():
    """One 100 MiB file (plus 12345 bytes: a last partial record at every recordsize) with
    structure and 16 MiB of holes (two whole pieces), reached by a hard link too, and a small
    file holding some of its records."""
    path = os.path.join(WORK, "split")
    if os.path.isdir(path):
        return path
    os.makedirs(path)
    image = os.path.join(path, "disk.img")
    pattern, text = structured_image(image, 800, lambda i: 320 <= i < 448, tail=12345)
    os.link(image, os.path.join(path, "disk.link"))
    with open(os.path.join(path, "small.bin"), "wb") as f:
        f.write(pattern[3] + text[:5000])
    return path


def case_split():
    t = split_tree()
    image = os.path.join(t, "disk.img")
    # The root twice and the image as a root of its own: each byte still counted once.
    compare("split", ["--recordsize", "512,8K,128K,1M", "--compression", "lz4,zstd-3", t, t,
                      image], pieces=True)
    compare("split_zvol", ["--volblocksize", "16K", "--compression", "lz4", t], ranks=(2, 3),
            pieces=True)
    # Key sampling and a budget the whole outgrows, over pieces.
    compare("split_sample", ["--sample", "1/16", "--recordsize", "16K,128K", t], ranks=(2, 4),
            pieces=True)
    compare("split_budget", ["--max-memory", "1M", "--recordsize", "1K", "--compression", "lz4",
                             t], ranks=(3,), pieces=True, sampled=True)


def case_tiny():
    compare("tiny", [tiny()])


def case_codecs():
    t = tiny()
    compare("codecs", ["--recordsize", "4K,128K,1M", "--compression", "off,lz4,gzip-6,zstd-3", t])
    compare("volblocksize", ["--volblocksize", "16K", "--compression", "lz4,zle", t])
    # A long list: the codecs' cost is said once, by rank 0, as one process says it (compare
    # checks that), and the budget's levels (the constant cap, the top-up's cap of ten default
    # scans) are one process's.
    compare("codecs_all", ["--recordsize", "16K,128K", "--compression", "all", t], ranks=(2,))
    # sha256: the DDT is laid out on the keys, which the ranks hold in parts; with lz4 and
    # gzip the keys of the bytes a compressed block writes travel with the entries (and the
    # census codes them for the heavy blocks a sampled codec skipped); zstd keeps the model.
    got = compare("codecs_sha256", ["--checksum", "sha256", "--recordsize", "4K,16K",
                                    "--compression", "off,lz4,gzip-6,zstd-3", t], ranks=(1, 3))
    for n, report in got.items():
        for r in report["results"]:
            for f in r["dedup"]["ddt_formats"]:
                check(f["leaves_from_keys"] == (r["compression"] != "zstd-3"),
                      f"codecs_sha256 n={n}: {r['recordsize']} {r['compression']} {f['format']}: "
                      f"leaves_from_keys {f['leaves_from_keys']}")


def case_sample():
    t = tiny()
    compare("sample", ["--sample", "1/16", t])
    compare("sample_codecs", ["--sample", "1/16", "--recordsize", "16K,128K",
                              "--compression", "off,lz4,zstd-19", t])
    compare("max_memory", ["--recordsize", "4K", "--max-memory", "2M", t])


def case_huge():
    t = huge_tree()
    compare("huge", ["--recordsize", "16K,128K", "--compression", "lz4,zstd-3", t])
    # --max-memory that the whole's table outgrows and each rank's part alone may not: the
    # budget is applied to the merged tables, so they keep one process's key space.
    compare("huge_budget_1k", ["--recordsize", "1K", "--compression", "lz4", "--max-memory", "1M",
                               t], spread=False, sampled=True)
    # Many unique blocks per rank: the sampled codecs' levels rise at different times in each
    # rank and in one process, so each codes a different set of low-level blocks; the block-size
    # histogram and the breakdowns use only the codes every run has (finish/known_codes.h).
    compare("huge_budget_512", ["--recordsize", "512", "--compression", "lz4,zstd-3",
                                "--max-memory", "1M", t], spread=False, sampled=True)


def case_partition_edges():
    path = os.path.join(WORK, "budget_edge")
    data = os.path.join(path, "random.bin")
    if not os.path.isfile(data):
        os.makedirs(path, exist_ok=True)
        with open(data, "wb") as f:
            f.write(random.Random(7).randbytes(16 << 20))
    args = ["--recordsize", "512", "--ashift", "9", "--compression", "lz4,gzip-6",
            "--max-memory", "1M", path]
    one = json.loads(run([ZSIM, "scan", "--json", "--no-progress"] + args).stdout)
    used = one["memory"]["ddt_table_bytes"] + one["memory"]["distinct_sketch_bytes"]
    rows = len(one["results"])
    # What an index of 64 slots in each of the 256 - 256/N shards a rank gave away would add.
    dropped = rows * 3 * (256 - 256 // 3) * 64 * 4
    check(used <= 1 << 20 < used + dropped,
          f"budget_edge: one process uses {used} bytes of 1M: not at the edge the test needs")
    compare("budget_edge", args, ranks=(3, 4), spread=False, sampled=True)
    # Each rank's part of a shard (about 40 entries of 26 bytes here) split over rounds of 260
    # bytes: the bound that keeps an owner's receive counts within MPI's int at any scale.
    compare("exchange_split", args[:-3] + [path], ranks=(3,), spread=False, round_bytes=260)
    # A shard limit of 64 entries (ZSIM_MPI_SHARD_ENTRIES; one process's is 2^23) over about 128
    # per shard: the owners' merged shards sample after the exchange, every rank alike, as one
    # process with that sample of the key space does (never keys left out of a full shard).
    env = dict(SMALL_BATCHES, ZSIM_MPI_SHARD_ENTRIES="64")
    got = mpirun(3, ["scan", "--json", "--no-progress"] + args[:-3] + [path], env)
    check(got.returncode == 0, f"shard_limit: exit {got.returncode}: {got.stderr[-500:]}")
    report = json.loads(got.stdout)
    moduli = {r["dedup"]["sample_modulus"] for r in report["results"]}
    check(len(moduli) == 1 and min(moduli) > 1, f"shard_limit: sample moduli {moduli}")
    owned = rank_stats(got.stderr, "owned_entries")
    check(0 < sum(owned) <= 256 * 64, f"shard_limit: the ranks own {owned} entries")
    one = run([ZSIM, "scan", "--json", "--no-progress", "--sample", f"1/{max(moduli)}"] +
              args[:-3] + [path])
    d = first_difference(normalized(json.loads(one.stdout)), normalized(report))
    check(d is None, f"shard_limit: differs from one process at --sample 1/{max(moduli)} at {d}")
    print(f"ok shard_limit: sampled 1/{max(moduli)}, owned {owned}", flush=True)


def case_overlap():
    # The entries shipped to their owners while the ranks read, after every 300 bytes of them
    # (about 10 entries): merged as they come, the same report as one process, with sampled
    # codecs, a split file, --sample and a budget the whole outgrows.
    t = tiny()
    compare("overlap_codecs", ["--recordsize", "4K,128K", "--compression", "off,lz4,gzip-6,zstd-3",
                               t], ship_bytes=300)
    s = split_tree()
    compare("overlap_split", ["--recordsize", "8K,128K", "--compression", "lz4,zstd-3", s],
            ranks=(2, 4), pieces=True, ship_bytes=300)
    compare("overlap_sample", ["--sample", "1/16", "--recordsize", "16K", s], ranks=(3,),
            pieces=True, ship_bytes=300)
    h = huge_tree()
    compare("overlap_budget", ["--recordsize", "1K", "--compression", "lz4", "--max-memory", "1M",
                               h], ranks=(2, 3), spread=False, sampled=True, ship_bytes=300)


def census_tree():
    """8 copies of one 256 KiB file of 1K records that compress unevenly (a random prefix of
    random length, then zeros), each a file of its own, and 14 MiB of random data: at 1K records
    the sampled codecs run on 1 key in 4 (level 2), and each of the copies' keys is referenced 8
    times in all, so one process codes every one of them in its census."""
    path = os.path.join(WORK, "census")
    if os.path.isdir(path):
        return path
    os.makedirs(path)
    rnd = random.Random(16)
    heavy = b"".join(rnd.randbytes(n) + bytes(1024 - n)
                     for n in (rnd.randrange(1024) for _ in range(256)))
    for k in range(8):
        with open(os.path.join(path, f"copy{k}.bin"), "wb") as f:
            f.write(heavy)
        with open(os.path.join(path, f"filler{k}.bin"), "wb") as f:
            f.write(rnd.randbytes(14 << 17))
    return path


# The census cases' scan: 1K records, a sampled codec (zstd-3) beside lz4, one thread per rank,
# and small work batches so that every rank reads part of the copies.
CENSUS_BATCHES = {"ZSIM_MPI_BATCH_BYTES": "65536"}


def census_args(tree):
    return ["--recordsize", "1K", "--ashift", "9", "--compression", "lz4,zstd-3", "--threads",
            "1", tree]


def case_census():
    # Keys referenced 8 times in all but fewer times on each rank, read while the ranks ship
    # their entries: the census counts each rank's own references to ceil(8/N) and counts a key
    # shipped before as repeated, so every such key is coded as in one process. With the census
    # at 8 own references (ZSIM_MPI_CENSUS_AT=8, before the fix) some are not, and the sampled
    # codec's figures differ: the case is one the fix matters for.
    t = census_tree()
    args = census_args(t)
    batches = dict(CENSUS_BATCHES)
    reports = compare("census", args, ship_bytes=3000, env_extra=batches)
    want = reports[0]
    # Without the fix: with shipping, and without (ships above the data's size: the exchange
    # after the scan, as before the overlap).
    for ship in ("3000", str(1 << 30)):
        differed = []
        for n in (2, 3):
            env = dict(SMALL_BATCHES, ZSIM_MPI_SHIP_BYTES=ship, ZSIM_MPI_CENSUS_AT="8", **batches)
            got = mpirun(n, ["scan", "--json", "--no-progress"] + args, env)
            check(got.returncode == 0, f"census_unfixed n={n}: exit {got.returncode}: {got.stderr}")
            d = first_difference(want, normalized(json.loads(got.stdout)))
            print(f"census_unfixed ship={ship} n={n}: differs from one process at {d}", flush=True)
            if d is not None:
                differed.append(n)
        check(differed, f"census_unfixed ship={ship}: the census at 8 own references gives one "
                        "process's report: the case does not test the fix")
    # The fix without shipping too.
    compare("census_no_ship", args, ranks=(2, 3), env_extra=dict(batches, ZSIM_MPI_SHIP_BYTES=str(
        1 << 30)))


def census_one_file_tree():
    """census_tree's 8 copies in one 2 MiB file (read whole by one rank under 4 MiB batches),
    and its 14 MiB of random data: every reference of a copied key on one rank."""
    path = os.path.join(WORK, "census_one_file")
    if os.path.isdir(path):
        return path
    src = census_tree()
    os.makedirs(path)
    with open(os.path.join(src, "copy0.bin"), "rb") as f:
        heavy = f.read()
    with open(os.path.join(path, "copies.bin"), "wb") as f:
        f.write(heavy * 8)
    for k in range(8):
        shutil.copyfile(os.path.join(src, f"filler{k}.bin"), os.path.join(path, f"filler{k}.bin"))
    return path


def case_census8():
    # From N = 8 the census counts 8 of a rank's own references (docs/scale.md). With all 8
    # references of each copied key on one rank and nothing shipped during the scan that rank
    # sees what one process sees: the same keys coded, the same report. Before the fix the
    # census was at 1 reference from N = 8 on, which no duplicate reaches: no key was coded.
    t = census_one_file_tree()
    args = ["--recordsize", "1K", "--ashift", "9", "--compression", "lz4,zstd-3", "--threads",
            "1", t]
    compare("census8", args, ranks=(8,), env_extra={"ZSIM_MPI_BATCH_BYTES": str(4 << 20),
                                                    "ZSIM_MPI_SHIP_BYTES": str(1 << 30)})


def census_spread_tree():
    """Three sets of 128 1K records that compress unevenly (census_tree's kind), each copied
    into small files: set a once in each of 8 files, set b as 2+2+1+1+1+1, set c as
    3+1+1+1+1+1 (8 references in all each: heavy), set d once in each of 7 files (not heavy); and
    6 MiB of random filler in 24 files. Under 64 KiB batches each file is a batch of its own."""
    path = os.path.join(WORK, "census_spread")
    if os.path.isdir(path):
        return path
    os.makedirs(path)
    rnd = random.Random(1608)

    def records():
        return b"".join(rnd.randbytes(n) + bytes(1024 - n)
                        for n in (rnd.randrange(1, 1024) for _ in range(128)))

    k = 0
    for name, copies in (("a", [1] * 8), ("b", [2, 2, 1, 1, 1, 1]), ("c", [3, 1, 1, 1, 1, 1]),
                         ("d", [1] * 7)):
        data = records()
        for c in copies:
            with open(os.path.join(path, f"{name}{k:02d}.bin"), "wb") as f:
                f.write(data * c)
            k += 1
    for i in range(24):
        with open(os.path.join(path, f"filler{i:02d}.bin"), "wb") as f:
            f.write(rnd.randbytes(1 << 18))
    return path


def case_census_spread():
    # From N = 8 no rank's own count finds these keys (each rank reads at most a few of a key's
    # 8 references); the owners find them heavy after the exchange and have one block of each
    # read again where its entry's origin says.
    t = census_spread_tree()
    args = census_args(t)
    batches = dict(CENSUS_BATCHES)
    for ship in ("3000", str(1 << 30)):
        env = dict(batches, ZSIM_MPI_SHIP_BYTES=ship)
        compare(f"census_spread ship={ship}", args, ranks=(8, 9), env_extra=env)
    one = run([ZSIM, "scan", "--json", "--no-progress"] + args)
    want = normalized(json.loads(one.stdout))
    env = dict(SMALL_BATCHES, **batches)
    got = mpirun(8, ["scan", "--json", "--no-progress"] + args, env)
    reread = sum(rank_stats(got.stderr, "census_reread"))
    changed = sum(rank_stats(got.stderr, "census_changed"))
    print(f"census_spread n=8: {reread} blocks read again, {changed} changed", flush=True)
    check(reread > 0 and changed == 0,
          f"census_spread n=8: {reread} blocks read again, {changed} changed")
    # Without the fix: the census at 8 own references and nothing after the exchange.
    got = mpirun(8, ["scan", "--json", "--no-progress"] + args,
                 dict(env, ZSIM_MPI_CENSUS_AT="8"))
    check(got.returncode == 0, f"census_spread_unfixed: exit {got.returncode}: {got.stderr}")
    d = first_difference(want, normalized(json.loads(got.stdout)))
    print(f"census_spread_unfixed n=8: differs from one process at {d}", flush=True)
    check(d is not None, "census_spread_unfixed: the census at 8 own references gives one "
                         "process's report: the case does not test the fix")


def codec_bytes(report, compression):
    return sum(r["timing"]["codec_bytes"] for r in report["results"]
               if r["compression"] == compression)


def case_census_costly():
    # Costly sampled codecs (engine/mpi/census.h CensusCodecsCostly: zstd-19) from N = 2 on: the
    # ranks count 8 of their own references and the owners have the heavy keys left without codes
    # read again, as from N = 8 on. The report is one process's; at N = 2 blocks are read again;
    # and zstd-19 codes fewer bytes than under the count at ceil(8/N) (ZSIM_MPI_CENSUS_AT=4, the
    # path before), which also codes set d (7 references, not heavy) where a rank meets 4 of them
    # and every key met again after its entry was shipped. A cheap list (census_args: zstd-3)
    # keeps that count: nothing is read again.
    t = census_spread_tree()
    costly = ["--recordsize", "1K", "--ashift", "9", "--compression", "lz4,zstd-19", "--threads",
              "1", t]
    env = dict(CENSUS_BATCHES, ZSIM_MPI_SHIP_BYTES="3000")
    compare("census_costly", costly, ranks=(2, 3), env_extra=env)
    runs = {}
    for label, args, extra in (("costly", costly, {}),
                               ("costly_count_at_4", costly, {"ZSIM_MPI_CENSUS_AT": "4"}),
                               ("cheap", census_args(t), {})):
        got = mpirun(2, ["scan", "--json", "--no-progress"] + args,
                     dict(SMALL_BATCHES, **env, **extra))
        check(got.returncode == 0, f"census_costly {label}: exit {got.returncode}: {got.stderr}")
        check(ranks_with_files(got.stderr) == 2,
              f"census_costly {label}: {ranks_with_files(got.stderr)} of 2 ranks read files")
        runs[label] = (sum(rank_stats(got.stderr, "census_reread")), json.loads(got.stdout))
    for label, (reread, report) in runs.items():
        print(f"census_costly {label} n=2: {reread} blocks read again, zstd-19 coded "
              f"{codec_bytes(report, 'zstd-19')} bytes", flush=True)
    check(runs["costly"][0] > 0, "census_costly: at N = 2 no block was read again")
    check(runs["cheap"][0] == 0, "census_costly: the cheap list read blocks again")
    check(codec_bytes(runs["costly"][1], "zstd-19") <
          codec_bytes(runs["costly_count_at_4"][1], "zstd-19"),
          "census_costly: zstd-19 coded no less than under the count at ceil(8/N)")


def rare_shipped_tree():
    """One file, read whole by one rank: 14 records of 1K whose lz4 output fits 512 bytes (a rare
    lz4 class: estimate/anchor_class.h), 8 MiB of random data (a chunk, after which the rank ships
    the entries other ranks own), the same 14 records again, 8 MiB more, and 2 more such
    records: 16 distinct keys of that class in all."""
    path = os.path.join(WORK, "rare_shipped")
    if os.path.isdir(path):
        return path
    os.makedirs(path)
    rnd = random.Random(1)
    rare = [rnd.randbytes(200) + bytes(824) for _ in range(16)]
    with open(os.path.join(path, "one.bin"), "wb") as f:
        f.write(b"".join(rare[:14]))
        f.write(rnd.randbytes(8 << 20))
        f.write(b"".join(rare[:14]))
        f.write(rnd.randbytes(8 << 20))
        f.write(b"".join(rare[14:]))
    return path


def case_rare_shipped():
    # A rank counts the distinct keys it meets per rare lz4 class; a key met again after the rank
    # shipped its entry must not count twice (the Bloom filter of shipped keys), or the class's
    # last keys go uncoded and the estimate samples a class one process takes whole. Whichever
    # census runs (engine/mpi/census.h): at N = 2 with a costly codec (the reread) and at N = 8.
    # Before the filter was kept for them both differed from one process in the codec's interval.
    t = rare_shipped_tree()
    env = {"ZSIM_MPI_BATCH_BYTES": str(64 << 20)}
    for codec, ranks in (("zstd-19", (2,)), ("zstd-3", (8,))):
        args = ["--recordsize", "1K", "--ashift", "9", "--compression", "lz4," + codec,
                "--threads", "1", t]
        compare(f"rare_shipped {codec}", args, ranks=ranks, spread=False, ship_bytes=3000,
                env_extra=env)


def case_binding():
    # Open MPI binds each rank to a core where the job has 2 ranks or fewer (engine/mpi/binding.h):
    # with one rank, the scan then runs on one core of the cores mpirun may use (this process's).
    # Rank 0 says so, and how to lift it; and where --threads asks for more threads than the
    # bound cores; not where --threads fits them, under --bind-to none (one thread per core), nor
    # with --quiet.
    cores = len(os.sched_getaffinity(0))
    if cores < 2:
        print(f"binding: {cores} core(s) here, no binding to find: skipped")
        return
    t = tiny()
    cause = ("(Open MPI binds each rank to a core where the job has 2 ranks or fewer, to a socket "
             "beyond that): `mpirun --bind-to none` lets the scan use them all")
    cases = (
        ("bound", [], [], 1, f"zsim: mpirun bound 1 rank to 1 of the {cores} cores the job may use "
                              f"on this host, and each rank runs one thread per core it may use "
                              f"{cause}"),
        ("bound_threads_1", [], ["--threads", "1"], 1, None),
        ("bound_threads_2", [], ["--threads", "2"], 2,
         f"zsim: mpirun bound 1 rank of 2 threads to 1 of the {cores} cores the job may use on "
         f"this host, so the threads share them {cause}"),
        ("unbound", ["--bind-to", "none"], [], cores, None),
        ("quiet", [], ["--quiet"], 1, None))
    for label, launch, args, want_threads, want in cases:
        got = run([MPIRUN, "--allow-run-as-root", "-n", "1"] + launch +
                  [ZSIM, "scan", "--json", "--no-progress"] + args + [t])
        check(got.returncode == 0, f"binding {label}: exit {got.returncode}: {got.stderr}")
        said = [line for line in got.stderr.splitlines() if "--bind-to none" in line]
        threads = json.loads(got.stdout)["settings"]["threads"]
        print(f"binding {label}: threads {threads}, said: {said}", flush=True)
        check(said == ([want] if want else []), f"binding {label}: said {said}, want {want}")
        check(threads == want_threads, f"binding {label}: {threads} threads, want {want_threads}")


def case_roots():
    t = tiny()
    compare("roots", [t, t, os.path.join(t, os.listdir(t)[0]), t + "/"])


def case_samples():
    found = False
    for name in ("source", "fileserver", "vmstore", "database"):
        path = os.path.join(SAMPLES_DATA, name)
        if os.path.isdir(path):
            found = True
            compare(f"sample_{name}", ["--recordsize", "16K,128K", path], ranks=(2, 4))
    if not found:
        print("no sample under", SAMPLES_DATA, "(built by the samples tests): skipped")
        sys.exit(77)


def case_text_html():
    t = tiny()
    one_html = os.path.join(WORK, "one.html")
    many_html = os.path.join(WORK, "many.html")
    one = run([ZSIM, "scan", "--no-progress", "--html", one_html, t])
    for n in (2, 3):
        got = mpirun(n, ["scan", "--no-progress", "--html", many_html, t], SMALL_BATCHES)
        check(got.returncode == one.returncode, f"text n={n}: exit {got.returncode}")
        # Wrapped lines joined first: a speed may wrap between its number and its unit.
        strip = lambda s: CODEC_CPU.sub("<codec cpu>", DURATION.sub(
            "<time>", SPEED.sub("<speed>", re.sub(r"\n  (?=\S)", " ", s))))
        check(strip(got.stdout) == strip(one.stdout), f"text n={n}: differs from one process")
        check(got.stdout.count("zsim") == one.stdout.count("zsim"),
              f"text n={n}: report printed more than once")
        a = open(one_html).read()
        b = open(many_html).read()
        # The embedded JSON carries the timings: compare the page without numbers per second.
        norm = lambda s: re.sub(r'"(seconds|compress_bytes_per_second|codec_seconds|codec_bytes|'
                                r'ddt_table_bytes|ddt_table_entries|distinct_sketch_bytes|file_state_bytes|'
                                r'cpu_seconds_per_gb|threads)":'
                                r'\s*[0-9.e+-]+', "", strip(s))
        check(norm(a) == norm(b), f"html n={n}: differs from one process")
        print(f"ok text_html n={n}", flush=True)


def case_save():
    t = tiny()
    one_state = os.path.join(WORK, "one.zstate")
    many_state = os.path.join(WORK, "many.zstate")
    opts = ["--recordsize", "16K,128K", "--compression", "lz4,zstd-3"]
    run([ZSIM, "scan", "--no-progress", "--save", one_state] + opts + [t])
    want = normalized(json.loads(run([ZSIM, "report", "--json", one_state]).stdout))
    for n in (2, 4):
        if os.path.exists(many_state):
            os.remove(many_state)
        got = mpirun(n, ["scan", "--no-progress", "--save", many_state] + opts + [t],
                     SMALL_BATCHES)
        check(got.returncode == 0, f"save n={n}: exit {got.returncode}: {got.stderr}")
        check(ranks_with_files(got.stderr) >= 2, f"save n={n}: one rank scanned everything")
        rep = run([ZSIM, "report", "--json", many_state])
        check(rep.returncode == 0, f"save n={n}: zsim report exits {rep.returncode}: {rep.stderr}")
        if rep.returncode == 0:
            d = first_difference(want, normalized(json.loads(rep.stdout)))
            check(d is None, f"save n={n}: the saved state reports differently at {d}")
        print(f"ok save n={n}", flush=True)


def save_tree(name="save_bytes", links=False, pieces=False):
    """Files shared within and across directories, all-zero and random ones, tiny ones. `links`:
    some with a second name, in another directory or the same one (a distributed scan must keep
    its linked files). `pieces`: two files larger than a piece (pipeline::ChunkBytes, 8 MiB),
    with holes and records repeated within and across them, one of them with a second name (read
    in pieces, a distributed scan must keep their records)."""
    path = os.path.join(WORK, name)
    if os.path.isdir(path):
        return path
    rnd = random.Random(15)
    text = b"".join(b"line %d of the log, status %d\n" % (i, i % 7) for i in range(4000))
    shared = bytes(rnd.getrandbits(8) for _ in range(96 * 1024)) + text[:64 * 1024]
    for i in range(90):
        d = os.path.join(path, ["a", "b/deep", "c"][i % 3])
        os.makedirs(d, exist_ok=True)
        body = text[(i * 977) % 50000:][: 700 + (i % 30) * 1500]
        if i % 4 == 0:
            body = shared[(i % 3) * 32 * 1024:][: 64 * 1024] + body
        if i % 9 == 0:
            body += bytes(rnd.getrandbits(8) for _ in range(20000))
        with open(os.path.join(d, f"f{i:03d}" + (".log" if i % 2 else ".dat")), "wb") as f:
            f.write(body)
    for name in ("a/shared.bin", "c/shared-copy.bin"):
        with open(os.path.join(path, name), "wb") as f:
            f.write(shared)
    with open(os.path.join(path, "c/zeros.img"), "wb") as f:
        f.write(bytes(300 * 1024))
    with open(os.path.join(path, "b/empty"), "wb"):
        pass
    if links:
        # Spread over the walk, so that the ranks other than 0 count some of them.
        for i in range(0, 90, 7):
            src = os.path.join(path, ["a", "b/deep", "c"][i % 3],
                               f"f{i:03d}" + (".log" if i % 2 else ".dat"))
            other = ["c", "a", "b/deep"][i % 3] if i % 2 else ["a", "b/deep", "c"][i % 3]
            os.link(src, os.path.join(path, other, f"link{i:03d}.bin"))
        os.link(os.path.join(path, "c/zeros.img"), os.path.join(path, "a/zeros-link.img"))
    if pieces:
        os.makedirs(os.path.join(path, "big"), exist_ok=True)
        rec = 64 * 1024
        pattern = [rnd.randbytes(rec) for _ in range(4)]
        for name, records, linked in (("big/disk.img", 330, False), ("big/linked.img", 170, True)):
            image = os.path.join(path, name)
            with open(image, "wb") as f:
                for k in range(records):
                    if 100 <= k < 140:
                        f.seek(rec, 1)  # a hole of 2.5 MiB
                    elif k % 3 == 0:
                        f.write(pattern[k % 4])
                    elif k % 3 == 1:
                        f.write(text[(k * 131) % 50000:][:rec].ljust(rec, b"."))
                    else:
                        f.write(shared[:rec // 2] + rnd.randbytes(rec // 2))
                f.write(text[:4321])  # a partial last record
            if linked:
                os.link(image, os.path.join(path, "c", "linked-big.img"))
    return path


def state_data(path):
    """A state file's bytes before its run section (the last frame before the end frame)."""
    b = open(path, "rb").read()
    # magic, version, text header, its checksum and, from format 23, the version's checksum
    version = int.from_bytes(b[8:12], "little")
    at = 16 + int.from_bytes(b[12:16], "little") + (16 if version >= 23 else 8)
    last = None
    while at + 4 <= len(b):
        n = int.from_bytes(b[at:at + 4], "little")
        if n == 0:
            break
        last = at
        at += 4 + n + 8
    check(last is not None and at + 4 + 8 == len(b), f"{path}: not a state file's frames")
    return b[:last or 0]


def same_bytes(label, want, got):
    if want == got:
        return True
    first = next((i for i, (x, y) in enumerate(zip(want, got)) if x != y), min(len(want), len(got)))
    check(False, f"{label}: {len(got)} bytes against one process's {len(want)}, the first "
                 f"difference at offset {first}")
    return False


def case_save_bytes():
    one_state = os.path.join(WORK, "bytes-one.zstate")
    many_state = os.path.join(WORK, "bytes-many.zstate")
    again_state = os.path.join(WORK, "bytes-again.zstate")
    exact = ["--recordsize", "4K,128K", "--compression", "off,lz4,zstd-3"]
    sample = ["--recordsize", "16K,1M", "--compression", "lz4", "--sample", "1/4"]
    trees = (("plain", save_tree(), (1, 2, 3, 4)),
             ("links", save_tree("save_links", links=True), (1, 2, 3, 4)),
             ("tiny", tiny(), (2, 3)),
             ("pieces", save_tree("save_pieces", links=True, pieces=True), (1, 2, 3, 4)))
    for tree, t, ranks in trees:
        for label, opts in (("exact", exact), ("sample", sample)):
            label = f"{tree} {label}"
            got = run([ZSIM, "scan", "-q", "--threads", "2", "--save", one_state] + opts + [t])
            check(got.returncode == 0, f"save_bytes {label}: one process exits {got.returncode}: "
                                       f"{got.stderr}")
            want = state_data(one_state)
            for n in ranks:
                if os.path.exists(many_state):
                    os.remove(many_state)
                got = mpirun(n, ["scan", "-q", "--save", many_state] + opts + [t], SMALL_BATCHES)
                check(got.returncode == 0, f"save_bytes {label} n={n}: exit {got.returncode}: "
                                           f"{got.stderr}")
                if n > 1:
                    check(ranks_with_files(got.stderr) >= 2,
                          f"save_bytes {label} n={n}: one rank scanned everything")
                    # Linked files counted by ranks other than 0 travel to it, their blocks'
                    # entries held by their owners.
                    linked = {int(m.group(1)): int(m.group(2)) for m in re.finditer(
                        r"zsim-mpi-stats rank=(\d+) .*\blinked_files=(\d+)", got.stderr)}
                    check(tree != "links" or sum(v for r, v in linked.items() if r != 0) > 0,
                          f"save_bytes {label} n={n}: linked files per rank {linked}")
                    if tree == "pieces":
                        per_rank = rank_stats(got.stderr, "pieces")
                        check(len([p for p in per_rank if p > 0]) >= 2,
                              f"save_bytes {label} n={n}: pieces read per rank {per_rank}")
                if not same_bytes(f"save_bytes {label} n={n}", want, state_data(many_state)):
                    continue
                if label.endswith("exact") and n in (2, ranks[-1]):
                    # The distributed save as the base of a rescan: nothing changed, nothing
                    # read, the same bytes.
                    got = run([ZSIM, "scan", "-q", "--since", many_state, "--save", again_state] +
                              opts + [t])
                    check(got.returncode == 0, f"save_bytes {label} since n={n}: exit "
                                               f"{got.returncode}: {got.stderr}")
                    same_bytes(f"save_bytes {label} since n={n}", want, state_data(again_state))
                    read = run([ZSIM, "report", "--json", again_state])
                    if read.returncode == 0:
                        check(json.loads(read.stdout)["input"]["bytes_read"] == 0,
                              f"save_bytes {label} since n={n}: the rescan read files again")
                print(f"ok save_bytes {label} n={n}", flush=True)


def case_unreadable():
    t = os.path.join(WORK, "unreadable")
    if not os.path.isdir(t):
        shutil.copytree(tiny(), t, symlinks=True)
    missing = os.path.join(WORK, "no-such-path")
    # A directory nobody may list (root may: then a path that does not exist stands in).
    locked = os.path.join(t, "locked")
    os.makedirs(locked, exist_ok=True)
    os.chmod(locked, 0)
    compare("unreadable", [t, missing], ranks=(2, 3))


def reading(path):
    """True once a zsim process has `path` open."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if open(f"/proc/{pid}/comm").read().strip() != "zsim":
                continue
            fds = os.listdir(f"/proc/{pid}/fd")
            if any(os.readlink(f"/proc/{pid}/fd/{fd}") == path for fd in fds):
                return True
        except OSError:
            continue
    return False


def interrupted(sig):
    """mpirun -n 2 over the split tree read at 4 MB/s per rank (about 12 s), sent `sig` once the
    ranks read the image. Returns (exit code, stdout, stderr, seconds after the signal)."""
    t = split_tree()
    image = os.path.realpath(os.path.join(t, "disk.img"))
    proc = subprocess.Popen([MPIRUN, "--allow-run-as-root", "--oversubscribe", "-n", "2", ZSIM,
                             "scan", "--threads", "1", "--max-rate", "4M/s", "--json",
                             "--no-progress", t], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=ENV)
    deadline = time.time() + 60
    while not reading(image) and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    time.sleep(0.5)
    sent = time.time()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err, time.time() - sent


def case_interrupted():
    # Ctrl-C to mpirun: Open MPI aborts the job (SIGCONT to every rank, SIGTERM a second later,
    # then SIGKILL), so zsim ends each rank at once: no report, rank 0 says why. mpirun reads
    # the ranks' output only after it has sent SIGKILL, and under load it sometimes exits
    # without relaying rank 0's line (strace: the line written at the SIGTERM, read by mpirun
    # after its SIGKILL; about 1 abort in 15 lost at a load average of 15 on 2 cores, with or
    # without the rank staying alive after writing it). So the line is looked for over up to 3
    # aborts: a zsim that does not write it fails all 3.
    for attempt in range(1, 4):
        code, out, err, seconds = interrupted(signal.SIGINT)
        check(code != 0, f"interrupted SIGINT: exit 0")
        check(out.strip() == "", f"interrupted SIGINT: something on stdout: {out[:300]}")
        check(seconds < 20, f"interrupted SIGINT: the job took {seconds:.1f} s to end")
        if "no report is printed" in err:
            break
        print(f"interrupted SIGINT: mpirun relayed no message (abort {attempt} of 3): "
              f"{err[:300]!r}", flush=True)
    check("no report is printed" in err, f"interrupted SIGINT: no message in 3 aborts: {err[:600]}")
    print(f"ok interrupted SIGINT ({seconds:.1f} s)", flush=True)
    # SIGUSR1 to mpirun, passed on to every rank: the partial report of what was scanned.
    code, out, err, seconds = interrupted(signal.SIGUSR1)
    check(code == 130, f"interrupted SIGUSR1: exit {code}: {err[:600]}")
    try:
        report = json.loads(out)
        check(report["partial"] is True, "interrupted SIGUSR1: the report is not marked partial")
        check(report["input"]["bytes_read"] < 100 * 2**20,
              f"interrupted SIGUSR1: everything was read: {report['input']['bytes_read']}")
    except json.JSONDecodeError as e:
        check(False, f"interrupted SIGUSR1: stdout is not one JSON report ({e}): {out[:300]}")
    check("interrupted: the report covers what was scanned" in err,
          f"interrupted SIGUSR1: no message: {err[:600]}")
    check(seconds < 20, f"interrupted SIGUSR1: the job took {seconds:.1f} s to end")
    print(f"ok interrupted SIGUSR1 ({seconds:.1f} s)", flush=True)


def case_rank_killed():
    t = huge_tree()
    # Rank 1 is killed (SIGKILL) while it scans: gzip-9 over 64 MiB at 1 thread takes seconds.
    script = (f'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then "{ZSIM}" scan --threads 1 '
              f'--compression gzip-9,zstd-19 --no-progress {t} & pid=$!; sleep 0.5; '
              f'kill -9 $pid; wait $pid; exit $?; else exec "{ZSIM}" scan --threads 1 '
              f'--compression gzip-9,zstd-19 --no-progress {t}; fi')
    got = run([MPIRUN, "--allow-run-as-root", "--oversubscribe", "-n", "2", "sh", "-c", script],
              {"ZSIM_MPI_BATCH_BYTES": "1048576"}, timeout=300)
    check(got.returncode != 0, f"rank_killed: the job exited 0: {got.stdout[:300]}")
    check("zsim" not in got.stdout, f"rank_killed: a report was printed: {got.stdout[:300]}")
    check(re.search(r"rank 1|process rank 1|rank: 1", got.stderr) is not None or
          "exited on signal 9" in got.stderr or "non-zero status" in got.stderr,
          f"rank_killed: no message naming the failed rank: {got.stderr[:600]}")
    print("ok rank_killed:", got.stderr.strip().splitlines()[:3], flush=True)



def case_overrides():
    """A ZSIM_MPI_* override set on one rank only (here the census's count, which shapes the
    wire) is refused on every rank with a message naming it: exit 2, no report."""
    t = tiny()
    script = (f'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then export ZSIM_MPI_CENSUS_AT=8; fi; '
              f'exec "{ZSIM}" scan --json --no-progress --recordsize 4K {t}')
    got = run([MPIRUN, "--allow-run-as-root", "--oversubscribe", "-n", "2", "sh", "-c", script],
              timeout=300)
    check(got.returncode == 2, f"overrides: exit {got.returncode}: {got.stderr[:600]}")
    check(got.stdout.strip() == "", f"overrides: a report was printed: {got.stdout[:300]}")
    check("ZSIM_MPI_CENSUS_AT differs between ranks (rank 0: 0, rank 1: 8" in got.stderr,
          f"overrides: no message naming the override: {got.stderr[:600]}")
    # Set alike on every rank it runs (the tests' own way to shape the exchanges).
    got = mpirun(2, ["scan", "--json", "--no-progress", "--recordsize", "4K", t],
                 {"ZSIM_MPI_CENSUS_AT": "8"})
    check(got.returncode == 0, f"overrides alike: exit {got.returncode}: {got.stderr[:600]}")
    print("ok overrides", flush=True)

def case_refused_since():
    """--since under mpirun is refused on every rank (exit 2) with the reason, and nothing else: a
    rank's abort reached rank 0 as mpirun's SIGTERM, which rank 0 took for a Ctrl-C and said
    "interrupted" after the reason (2 runs in 4 in a review)."""
    t = tiny()
    state = os.path.join(WORK, "refused_since.zstate")
    got = run([ZSIM, "scan", "-q", "--save", state, t])
    check(got.returncode == 0, f"refused_since: the base: exit {got.returncode}: {got.stderr[:300]}")
    for n in range(4):
        got = mpirun(2, ["scan", "-q", "--since", state, t])
        check(got.returncode == 2, f"refused_since {n}: exit {got.returncode}: {got.stderr[:600]}")
        check("--since is not available under mpirun" in got.stderr,
              f"refused_since {n}: no reason: {got.stderr[:600]}")
        check("interrupted" not in got.stderr,
              f"refused_since {n}: said interrupted: {got.stderr[:600]}")
    print("ok refused_since", flush=True)


def pilot_tree():
    """8,192 records of 4K in 8 files: 1,300 random bytes then zeros, which lz4 and gzip-1 store
    alike, so the pilot (engine/estimate/pilot_level.h) raises gzip-1 from the budget's level 1
    to 3 (tests/pipeline/pilot_scan_test.cc); and 8 files of records whose letters gzip-1 packs
    and lz4 does not, so an interval has a spread to show."""
    path = os.path.join(WORK, "pilot")
    if os.path.isdir(path):
        return path
    os.makedirs(path)
    rng = random.Random(40)
    for f in range(8):
        with open(os.path.join(path, f"alike{f}"), "wb") as out:
            for _ in range(1024):
                out.write(rng.randbytes(1300).ljust(4096, b"\0"))
    for f in range(2):
        with open(os.path.join(path, f"mixed{f}"), "wb") as out:
            for _ in range(256):
                letters = bytes(b"ACGT"[b & 3] for b in rng.randbytes(rng.randrange(2000)))
                out.write((rng.randbytes(rng.randrange(200, 1700)) + letters).ljust(4096, b"\0"))
    return path


def case_pilot():
    # Each rank sizes the whole tree and runs the same pilot: the figures, intervals included,
    # are one process's for any number of ranks.
    compare("pilot", ["--recordsize", "4K", "--ashift", "9", "--compression", "lz4,gzip-1",
                      pilot_tree()], ranks=(1, 2, 3))


def image_tree(name, seed, record):
    """WORK/name: 16 files of 1,024 records of 4K, record(distinct, f, i) of file f: `distinct`
    holds 48 distinct records (200 to 3,000 random bytes, then ACGT letters, then zeros)."""
    path = os.path.join(WORK, name)
    if os.path.isdir(path):
        return path
    os.makedirs(path)
    rng = random.Random(seed)
    distinct = []
    for _ in range(48):
        letters = bytes(b"ACGT"[b & 3] for b in rng.randbytes(rng.randrange(100, 900)))
        distinct.append((rng.randbytes(rng.randrange(200, 3000)) + letters)[:4096].ljust(4096, b"\0"))
    for f in range(16):
        with open(os.path.join(path, f"image{f}"), "wb") as out:
            for i in range(1024):
                out.write(record(distinct, f, i))
    return path


def top_up_tree():
    """The 48 distinct records over and over, each file from its own offset, so that every rank
    meets most of them first: 16,384 planned blocks put gzip-1 at the budget's level 2, and the
    48 unique blocks alone at 0 (engine/estimate/top_up.h)."""
    return image_tree("top_up", 41, lambda distinct, f, i: distinct[(i + 5 * f) % 48])


def reread_tree():
    """Zeros but for 6 records of each file, the 48 distinct ones each met in two files: met
    twice, none is heavy, and gzip-1 alone has no anchor (no rare-class census), so the top-up
    reads the blocks below the budget's level again."""
    def record(distinct, f, i):
        k = i // 170
        return distinct[(3 * f + k) % 48] if i % 170 == 0 and k < 6 else bytes(4096)
    return image_tree("reread", 43, record)


def interval_tree():
    """16,384 unique 4K records (200 to 3,000 random bytes, then ACGT letters, then zeros):
    lzjb alone, estimated on lsize at the budget's level 2 (some 4,096 blocks), is wider than
    +-0.5% (+-1%), and the row is small enough to be coded whole
    (engine/estimate/interval_top_up.h; gzip-1's blocks left would cost more than the default
    codecs' wishes on the row, and stay sampled)."""
    def record(distinct, f, i):
        rng = random.Random(f * 1024 + i)
        letters = bytes(b"ACGT"[b & 3] for b in rng.randbytes(rng.randrange(100, 900)))
        return (rng.randbytes(rng.randrange(200, 3000)) + letters)[:4096].ljust(4096, b"\0")
    return image_tree("interval", 47, record)


def top_up_of(args, n):
    got = mpirun(n, ["scan", "--json", "--no-progress"] + args) if n else \
        run([ZSIM, "scan", "--json", "--no-progress"] + args)
    check(got.returncode == 0, f"reread n={n}: exit {got.returncode}: {got.stderr}")
    return json.loads(got.stdout)["input"]["top_up"]


def case_top_up():
    # A row of few unique blocks is topped up after the scan: one process gives gzip-1's exact
    # figures, and so does any number of ranks, each of which listed the blocks it skipped and
    # coded those the owners asked for after the exchange.
    args = ["--recordsize", "4K", "--ashift", "9", "--compression", "lz4,gzip-1", top_up_tree()]
    reports = compare("top_up", args, ranks=(1, 2, 3))
    # From 8 ranks a rank that meets a key again after shipping its entry lists it again (no
    # filter of shipped keys there): the lists keep each key once, and the row is still topped
    # up. Entries shipped every 4 KiB, so each rank ships many times while it reads.
    compare("top_up_ship", args + ["--threads", "1"], ranks=(8,),
            env_extra={"ZSIM_MPI_SHIP_BYTES": str(4 << 10)})
    exact = run([ZSIM, "scan", "--json", "--no-progress", "--exact"] + args)
    check(exact.returncode == 0, f"top_up: --exact exits {exact.returncode}: {exact.stderr}")
    want = {(r["recordsize"], r["compression"]): r for r in json.loads(exact.stdout)["results"]}
    for r in reports[0]["results"]:
        e = want[(r["recordsize"], r["compression"])]
        check(r["exact"] and r["psize"] == e["psize"] and r["asize"] == e["asize"],
              f"top_up: {r['compression']} exact={r['exact']} psize {r['psize']} asize "
              f"{r['asize']}, --exact {e['psize']} {e['asize']}")
    # Every report says the row was topped up, with nothing read again: the heavy census (each
    # block is met 341 times) and the rare-class census had coded every block (the normalized
    # comparison holds the same for every number of ranks).
    check(reports[0]["input"]["top_up"] == [{"block_size": 4096, "topped": True, "left": None,
                                             "blocks_read_again": 0, "bytes_read_again": 0}],
          f"top_up: the report's top-up: {reports[0]['input']['top_up']}")
    print("ok top_up exact", flush=True)
    # Blocks read again (the tree above's are all coded by the heavy and rare-class censuses):
    # the report counts each block coded once, as one process reads it, for any number of ranks
    # (a block several ranks met first is read by each; the normalized comparison holds the
    # counts equal).
    args = ["--recordsize", "4K", "--ashift", "9", "--compression", "gzip-1", reread_tree()]
    compare("reread", args, ranks=(1, 2, 3))
    one = top_up_of(args, 0)
    check(len(one) == 1 and one[0]["topped"] and 0 < one[0]["blocks_read_again"] < 48 and
          one[0]["bytes_read_again"] == 4096 * one[0]["blocks_read_again"],
          f"reread: one process's top-up: {one}")
    print("ok top_up reread", flush=True)
    # The interval top-up: lzjb coded on every unique block after the scan, its figures the
    # --exact scan's, for one process and any number of ranks (each rank's sample statistics
    # summed before the rule is applied).
    args = ["--recordsize", "4K", "--ashift", "9", "--compression", "lzjb", interval_tree()]
    # What the top-up reads again depends on when the pilot answered: where it foresaw the top-up
    # the scan coded every block from then on (estimate/interval_top_up.h ForeseenWhole).
    reports = compare("interval", args, ranks=(1, 2, 3),
                      also_run_dependent=("blocks_read_again", "bytes_read_again"))
    exact = run([ZSIM, "scan", "--json", "--no-progress", "--exact"] + args)
    check(exact.returncode == 0, f"interval: --exact exits {exact.returncode}: {exact.stderr}")
    e = json.loads(exact.stdout)["results"][0]
    r = reports[0]["results"][0]
    check(r["exact"] and r["psize"] == e["psize"] and r["asize"] == e["asize"],
          f"interval: lzjb exact={r['exact']} psize {r['psize']} asize {r['asize']}, "
          f"--exact {e['psize']} {e['asize']}")
    one = top_up_of(args, 0)
    check(len(one) == 1 and one[0]["topped"] and one[0]["blocks_read_again"] <= 16384 - 4096 + 64,
          f"interval: one process's top-up: {one}")
    print("ok top_up interval", flush=True)


os.makedirs(WORK, exist_ok=True)
globals()["case_" + CASE]()
if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
