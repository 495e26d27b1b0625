#!/usr/bin/env python3
"""Real ZFS (Debian's zfs-fuse, pool version 23) as the oracle of zsim's `--profile v23`.

Library of the accuracy suite (tests/accuracy/run_accuracy.py), standard library only:
  Daemon        finds a running zfs-fuse daemon or starts one (and later stops only that one)
  copy_tree     copies a tree the way the suite models it: holes kept, data written byte for byte,
                hard links kept (see COPY_MODEL below)
  measure       one pool per setting: create on a file, dataset with the properties under test,
                copy, settle, read `zfs get`, `zpool list`, export, read `zdb -DD`, `zdb -DDDDD`
                (exact histogram) and `zdb -b` (exact allocated bytes), destroy, always
  parse_*       the parsers of those outputs (pure functions of text, unit-tested by
                test_zfs_oracle.py)

Command line (used by ctest's fixtures, see CMakeLists.txt):
  zfs_oracle.py daemon-start STATEFILE   ensure a daemon runs; record in STATEFILE whether we started it
  zfs_oracle.py daemon-stop STATEFILE    stop the daemon only if STATEFILE says we started it
  zfs_oracle.py measure SRC --recordsize 128k --compression lzjb --ashift 12 [--workdir DIR]
                                         one measurement, printed as JSON (for debugging)
Exit code 77 means "skipped": /dev/fuse is absent, so zfs-fuse cannot run here.
"""
import argparse
import errno
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

SKIP = 77
ZFS_FUSE = "/sbin/zfs-fuse"
POOL_PREFIX = "zacc"

# How the suite writes a tree into ZFS, and therefore what zsim must model. Every data extent of
# the source (SEEK_DATA/SEEK_HOLE) is written with its exact bytes, zeros included; every hole of
# the source stays a hole. So a record that holds any source data is written (with compression=off
# an all-zero record is then stored and deduplicated, with compression on it becomes a hole), a
# record lying entirely in source holes is never written. This is zsim's read model exactly, and
# unlike `cp --sparse=auto` (which, on a source it finds sparse, also drops zero runs inside data)
# or `cp --sparse=always` (which drops zero runs in chunks of the destination's st_blksize, aligned
# to the source's extents, not to records), it depends only on the source's extents and bytes.
COPY_MODEL = "extents"


class OracleError(Exception):
    """A step against real ZFS failed (command, parse or settle)."""


class DaemonStalled(OracleError):
    """A copy into a zfs-fuse pool made no progress for STALL_SECONDS: the daemon stopped
    answering (seen once: every FUSE request of the copy waiting, the daemon's threads idle)."""


# A copy that writes nothing for this long is taken as a hung daemon (a healthy one writes a MiB
# in well under a second here; a whole sample copies in under a minute).
STALL_SECONDS = 180
# Set once a copy stalled: every later command against the daemon would wait for its timeout.
_daemon_stalled = None


def log(msg):
    sys.stderr.write("zfs_oracle: %s\n" % msg)
    sys.stderr.flush()


def run(cmd, check=True, timeout=600):
    """Runs cmd (a list), returns its stdout; raises OracleError with stderr when check fails."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       errors="replace", timeout=timeout)
    if check and p.returncode != 0:
        raise OracleError("%s: exit %d: %s" % (" ".join(cmd), p.returncode,
                                               (p.stderr or p.stdout).strip()[-2000:]))
    return p.stdout if check else p


# A pool's or a dataset's creation takes well under a second; one that takes this long waits on
# a daemon that no longer answers.
ADMIN_SECONDS = 120


def admin(cmd):
    """run() for a command that must be quick; one that waits ADMIN_SECONDS is an OracleError, so
    that the caller's failure path (run_accuracy.py: revive_daemon, then once more) takes it."""
    try:
        return run(cmd, timeout=ADMIN_SECONDS)
    except subprocess.TimeoutExpired:
        raise OracleError("%s: no answer in %d s (the zfs-fuse daemon hung)" %
                          (" ".join(cmd), ADMIN_SECONDS))


# ----------------------------------------------------------------------------------------------
# The daemon

def fuse_device():
    # ZSIM_ACC_FUSE_DEVICE points elsewhere only to test the skip path.
    return os.environ.get("ZSIM_ACC_FUSE_DEVICE", "/dev/fuse")


def fuse_available():
    return os.path.exists(fuse_device())


def running_daemons():
    """Pids of processes whose command name is zfs-fuse, zombies left out (a killed daemon whose
    parent has not reaped it keeps its /proc entry, but serves nothing)."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/comm" % d) as f:
                if f.read().strip() != "zfs-fuse":
                    continue
            with open("/proc/%s/stat" % d) as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
            pids.append(int(d))
        except (OSError, IndexError):
            pass
    return pids


def zpool_answers():
    try:
        return run(["zpool", "list", "-H"], check=False, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


# zfs-fuse's own FUSE mount (its kstats): a stat of it is a FUSE request the daemon answers.
KSTAT = "/zfs-kstat"


def fuse_answers():
    """False where a stat of KSTAT waits (the daemon's FUSE side hung: seen once in CI, `zfs
    create` waiting in fuse_get_req while `zpool list` still answered); True otherwise, also
    where KSTAT is a plain directory."""
    try:
        subprocess.run(["stat", KSTAT], capture_output=True, timeout=10)
    except subprocess.TimeoutExpired:
        return False
    except OSError:
        pass
    return True


def daemon_answers():
    return zpool_answers() and fuse_answers()


def kstat_state():
    """'dead' where KSTAT is a FUSE mount nobody serves ("Transport endpoint is not
    connected"), 'hung' where a stat of it waits, else 'ok'. The stat runs in a child with a
    timeout: a hung mount must not hold the suite."""
    try:
        p = subprocess.run(["stat", KSTAT], capture_output=True, text=True, timeout=10,
                           env=dict(os.environ, LC_ALL="C"))
    except subprocess.TimeoutExpired:
        return "hung"
    except OSError:
        return "ok"
    return "dead" if "not connected" in p.stderr else "ok"


def clear_stale_kstat():
    """A daemon that died without unmounting leaves KSTAT a dead FUSE mount, which the next
    daemon fails to mount over ("failed to access mountpoint"); so does one stopped while hung,
    whose mount then waits. Called only before starting a daemon, where none of ours is left:
    unmounted lazily, as nobody serves it."""
    state = kstat_state()
    if state == "hung" and running_daemons():
        return  # perhaps a live daemon's, slow: not ours to take away
    if state != "ok":
        log("%s is the mount of a daemon that %s: unmounting it" %
            (KSTAT, "died" if state == "dead" else "hung"))
        # -c: the path as given, not resolved (which would stat the hung mount).
        try:
            subprocess.run(["umount", "-l", "-c", KSTAT], capture_output=True, timeout=30)
        except subprocess.TimeoutExpired:
            log("umount -l %s did not return: the new daemon may fail to mount it" % KSTAT)


class Daemon:
    """Uses the zfs-fuse daemon that runs, or starts one; stop() ends only the one it started."""

    def __init__(self):
        self.pid = None  # set only when we started it

    def ensure(self):
        if not fuse_available():
            raise SkipTest("%s is absent: zfs-fuse (the real ZFS the accuracy suite compares "
                           "zsim with) cannot run on this machine; skipped" % fuse_device())
        if os.geteuid() != 0:
            raise OracleError("zfs-fuse needs root (pools on files, FUSE mounts)")
        if not os.path.exists(ZFS_FUSE) or shutil.which("zpool") is None:
            install_zfs_fuse()
        if running_daemons():
            if not wait_for(zpool_answers, 60):
                raise OracleError("a zfs-fuse daemon runs but `zpool list` does not answer")
            return
        log("no zfs-fuse daemon runs")
        self.pid = start_daemon()

    def stop(self):
        if self.pid is None:
            return
        stop_pid(self.pid)
        self.pid = None


def wait_gone(pid, seconds):
    """Whether pid (a zfs-fuse) has gone within `seconds`: reaped where it is our child, else its
    /proc entry gone or a zombie (running_daemons no longer lists it)."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        except ChildProcessError:
            if pid not in running_daemons():
                return True
        time.sleep(0.1)
    return False


def stop_pid(pid):
    """SIGTERM to pid (a zfs-fuse we started), then SIGKILL after 30 s, and up to 10 s more for
    it to go."""
    for sig, seconds in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        if wait_gone(pid, seconds):
            return


def start_daemon():
    """Starts /sbin/zfs-fuse --no-daemon in its own session; its pid once `zpool list` answers.
    Where a daemon was just stopped (revive_daemon) and would not go, its dead mount is cleared
    after 15 s more. Seen in CI: the daemon still listed, the mount was left, and the new daemon
    failed on it ("failed to access mountpoint /zfs-kstat: Transport endpoint is not
    connected")."""
    wait_for(lambda: not running_daemons(), 15)
    clear_stale_kstat()
    log("starting %s --no-daemon" % ZFS_FUSE)
    logf = open(os.path.join(tempfile.gettempdir(), "zacc-zfs-fuse.log"), "ab")
    p = subprocess.Popen([ZFS_FUSE, "--no-daemon"], stdin=subprocess.DEVNULL, stdout=logf,
                         stderr=logf, start_new_session=True)
    logf.close()
    if not wait_for(lambda: p.poll() is None and zpool_answers(), 60):
        code = p.poll()
        stop_pid(p.pid)
        raise OracleError("zfs-fuse did not start (exit %s); see %s" %
                          (code, os.path.join(tempfile.gettempdir(), "zacc-zfs-fuse.log")))
    return p.pid


def revive_daemon(state):
    """After a measurement failed: if the daemon the fixture (daemon-start, STATEFILE `state`)
    relies on has died, or is one the fixture started and no longer answers, starts another and
    records it in `state` (so daemon-stop ends it), and returns True: the measurement may be
    tried again (once: a failure that is not the daemon's fails again). True too where a daemon
    runs and answers (the other dataset's run revived it). False where the daemon that hangs is
    not one this suite may stop, or without a state. Seen once in CI: zfs-fuse exited mid-suite
    ("zfsfuse_ioctl_read_loop(): file descriptor closed"), failing every later setting. The
    datasets run in parallel (ctest -j2): a lock beside the state makes one of them revive it,
    and the other finds it answering."""
    global _daemon_stalled
    if not state or not os.path.exists(state):
        return False
    import fcntl
    with open(state + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(state) as f:
                started = json.load(f).get("started_pid")
        except (OSError, ValueError):
            return False
        pids = running_daemons()
        if pids and wait_for(daemon_answers, 30):
            # Alive: revived by the other dataset's run, or never dead.
            _daemon_stalled = None
            return True
        if pids:
            if started not in pids:
                return False  # a daemon this suite did not start: not ours to stop
            log("the zfs-fuse daemon we started (pid %d) does not answer: stopping it" % started)
            stop_pid(started)
        log("the zfs-fuse daemon is gone: starting another for the rest of the suite")
        pid = start_daemon()
        with open(state + ".tmp", "w") as f:
            json.dump({"started_pid": pid}, f)
        os.rename(state + ".tmp", state)
        _daemon_stalled = None
        return True


def install_zfs_fuse():
    log("zfs-fuse is missing: apt-get install -y zfs-fuse")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    p = subprocess.run(["apt-get", "install", "-y", "zfs-fuse"], env=env, capture_output=True,
                       text=True)
    if p.returncode != 0:
        subprocess.run(["apt-get", "update"], env=env, capture_output=True)
        p = subprocess.run(["apt-get", "install", "-y", "zfs-fuse"], env=env, capture_output=True,
                           text=True)
    if p.returncode != 0 or not os.path.exists(ZFS_FUSE):
        raise OracleError("could not install zfs-fuse: %s" % p.stderr.strip()[-1000:])


def wait_for(pred, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(0.5)
    return False


class SkipTest(Exception):
    """The suite cannot run here (no /dev/fuse): skipped, not failed."""


# ----------------------------------------------------------------------------------------------
# Copying a tree

def copy_tree(src, dst, exclude=(".zsim-sample", ".zsim-sample.partial"), progress=None):
    """Copies src into the existing directory dst: directories, regular files (data extents written
    byte for byte, holes kept, size set), symlinks, hard links (by (dev, ino)), modes and mtimes.
    Special files are skipped (zsim skips them too). Returns the number of bytes written.
    `progress`: a multiprocessing Value counting the steps done (a name made, a MiB written)."""
    def step():
        if progress is not None:
            progress.value += 1
    seen = {}
    written = 0
    dirs = []
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames.sort()
        rel = os.path.relpath(dirpath, src)
        out_dir = dst if rel == "." else os.path.join(dst, rel)
        for name in sorted(dirnames):
            full = os.path.join(dirpath, name)
            st = os.lstat(full)
            target = os.path.join(out_dir, name)
            if stat.S_ISLNK(st.st_mode):  # os.walk lists symlinks to directories as dirs
                os.symlink(os.readlink(full), target)
                step()
                continue
            os.mkdir(target)
            step()
            dirs.append((target, st))
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
        for name in sorted(filenames):
            if rel == "." and name in exclude:
                continue
            full = os.path.join(dirpath, name)
            target = os.path.join(out_dir, name)
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                os.symlink(os.readlink(full), target)
                step()
            elif stat.S_ISREG(st.st_mode):
                key = (st.st_dev, st.st_ino)
                if key in seen:
                    os.link(seen[key], target)
                    step()
                    continue
                seen[key] = target
                written += copy_file(full, target, st.st_size, step)
                os.chmod(target, stat.S_IMODE(st.st_mode))
                os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    for target, st in reversed(dirs):
        os.chmod(target, stat.S_IMODE(st.st_mode))
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    return written


def data_extents(fd, size):
    """(offset, length) of every data extent of fd, from SEEK_DATA/SEEK_HOLE."""
    out = []
    pos = 0
    while pos < size:
        try:
            start = os.lseek(fd, pos, os.SEEK_DATA)
        except OSError as e:
            if e.errno == errno.ENXIO:
                break
            raise
        end = os.lseek(fd, start, os.SEEK_HOLE)
        end = min(end, size)
        if end > start:
            out.append((start, end - start))
        pos = end
    return out


def copy_file(src, dst, size, step=lambda: None):
    chunk = 1 << 20
    written = 0
    fin = os.open(src, os.O_RDONLY)
    try:
        fout = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        step()
        try:
            for off, length in data_extents(fin, size):
                end = off + length
                while off < end:
                    buf = os.pread(fin, min(chunk, end - off), off)
                    if not buf:
                        break
                    view = memoryview(buf)
                    while view:
                        n = os.pwrite(fout, view, off)
                        step()
                        view = view[n:]
                        off += n
                        written += n
            os.ftruncate(fout, size)
        finally:
            os.close(fout)
    finally:
        os.close(fin)
    return written


# ----------------------------------------------------------------------------------------------
# Parsers (pure)

SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}


def parse_nicenum(text):
    """'1.43M' -> 1499463 (approximate: zdb's and zpool's rounded numbers), '512' -> 512."""
    m = re.fullmatch(r"([0-9.]+)([KMGTP]?)", text.strip())
    if not m:
        raise OracleError("not a number: %r" % text)
    return int(round(float(m.group(1)) * SUFFIX[m.group(2)]))


def parse_zfs_get(text):
    """`zfs get -Hp used,referenced,compressratio DS` -> {'used': int, 'referenced': int,
    'compressratio': '1.81'} (the ratio as printed, without the x)."""
    out = {}
    for line in text.splitlines():
        f = line.split("\t")
        if len(f) < 3:
            continue
        prop, value = f[1], f[2]
        if prop == "compressratio":
            out[prop] = value.rstrip("x")
        else:
            out[prop] = int(value)
    for need in ("used", "referenced", "compressratio"):
        if need not in out:
            raise OracleError("zfs get: no %s in %r" % (need, text))
    return out


def parse_zpool_list(text):
    """`zpool list -H -o name,size,allocated,free,dedupratio POOL` -> dict of printed strings and
    approximate byte counts."""
    f = text.strip().split("\t")
    if len(f) < 5:
        raise OracleError("zpool list: unexpected %r" % text)
    return {"size": f[1], "alloc": f[2], "alloc_bytes": parse_nicenum(f[2]), "free": f[3],
            "dedup": f[4].rstrip("x")}


OBJ_RE = re.compile(r"^DDT-(\w+)-(\w+)-(\w+): (\d+) entries, size (\d+) on disk, (\d+) in core")
RATIO_RE = re.compile(r"^dedup = ([0-9.]+), compress = ([0-9.]+), copies = ([0-9.]+), "
                      r"dedup \* compress / copies = ([0-9.]+)")
HIST_ROW_RE = re.compile(r"^\s*(\d+[KMGTP]?|Total)\s+" + r"\s+".join([r"([0-9.]+[KMGTP]?)"] * 8) +
                         r"\s*$")


def parse_zdb_dd(text):
    """`zdb -DD` -> {'objects': {class: {'entries', 'on_disk', 'in_core'}}, 'histogram': [rows with
    rounded numbers], 'ratio': {dedup, compress, copies, total} as printed strings}.
    A pool without dedup'd blocks prints no objects and 'All DDTs are empty'."""
    objects = {}
    hist = []
    ratio = None
    in_hist = False
    for line in text.splitlines():
        m = OBJ_RE.match(line)
        if m:
            objects[m.group(3)] = {"checksum": m.group(1), "entries": int(m.group(4)),
                                   "on_disk": int(m.group(5)), "in_core": int(m.group(6))}
            continue
        if line.startswith("DDT histogram"):
            in_hist = True
            continue
        m = RATIO_RE.match(line)
        if m:
            ratio = {"dedup": m.group(1), "compress": m.group(2), "copies": m.group(3),
                     "total": m.group(4)}
            in_hist = False
            continue
        if in_hist:
            m = HIST_ROW_RE.match(line)
            if m:
                v = [parse_nicenum(x) for x in m.groups()[1:]]
                hist.append({"refcnt": m.group(1),
                             "allocated": dict(zip(("blocks", "lsize", "psize", "dsize"), v[:4])),
                             "referenced": dict(zip(("blocks", "lsize", "psize", "dsize"), v[4:]))})
    if ratio is None and "All DDTs are empty" not in text:
        raise OracleError("zdb -DD: no ratio line in %r" % text[-2000:])
    return {"objects": objects, "histogram": hist, "ratio": ratio}


ENTRY_RE = re.compile(r"^index ([0-9a-f]+) refcnt (\d+) (\w+) (.*)$")
DVA_RE = re.compile(r"DVA\[\d+\]=<(\d+):([0-9a-f]+):([0-9a-f]+)>")
SIZE_RE = re.compile(r"size=([0-9a-f]+)L/([0-9a-f]+)P")


def bucket_of(refcnt):
    """zdb's histogram bucket: floor(log2(refcnt))."""
    return refcnt.bit_length() - 1


def histogram_from_entries(lines):
    """Exact histogram from the entry lines of `zdb -DDDDD` (an iterable of lines). One line is one
    phys slot of an entry (v23: 'index I refcnt R single DVA[0]=<vdev:offset:asize> ...
    size=LSIZEL/PSIZEP ...'); the slots of one entry are consecutive lines with the same index.
    As ddt_stat_generate: allocated counts each slot, referenced multiplies by its refcnt, dsize is
    the sum of the DVAs' asize (single-disk vdevs: deflate ratio 1), the bucket is that of the
    entry's total refcount. Returns ({bucket: row}, {class: entries})."""
    buckets = {}
    classes = {}
    entry = None
    current_class = None

    def flush(e):
        if e is None:
            return
        b = bucket_of(e["ref"])
        row = buckets.setdefault(b, {"allocated": dict.fromkeys(("blocks", "lsize", "psize",
                                                                 "dsize"), 0),
                                     "referenced": dict.fromkeys(("blocks", "lsize", "psize",
                                                                  "dsize"), 0)})
        for slot in e["slots"]:
            ref, lsize, psize, dsize = slot
            a, r = row["allocated"], row["referenced"]
            a["blocks"] += 1
            a["lsize"] += lsize
            a["psize"] += psize
            a["dsize"] += dsize
            r["blocks"] += ref
            r["lsize"] += ref * lsize
            r["psize"] += ref * psize
            r["dsize"] += ref * dsize

    for line in lines:
        if line.startswith("DDT-"):
            m = re.match(r"^DDT-\w+-\w+-(\w+)", line)
            if m:
                current_class = m.group(1)
            continue
        m = ENTRY_RE.match(line)
        if not m:
            continue
        index, ref, rest = m.group(1), int(m.group(2)), m.group(4)
        s = SIZE_RE.search(rest)
        if not s:
            raise OracleError("zdb entry without size: %r" % line)
        lsize, psize = int(s.group(1), 16), int(s.group(2), 16)
        dsize = sum(int(d.group(3), 16) for d in DVA_RE.finditer(rest))
        if entry is not None and entry["index"] == index and entry["class"] == current_class:
            entry["slots"].append((ref, lsize, psize, dsize))
            entry["ref"] += ref
            continue
        flush(entry)
        classes[current_class] = classes.get(current_class, 0) + 1
        entry = {"index": index, "class": current_class, "ref": ref,
                 "slots": [(ref, lsize, psize, dsize)]}
    flush(entry)
    return buckets, classes


def parse_zdb_b(text):
    """`zdb -b` -> {'spa_allocated': bytes, 'bp_count', 'bp_logical', 'bp_physical',
    'bp_allocated', 'bp_deduped'}."""
    out = {}
    for key, pat in (("bp_count", r"bp count:\s+(\d+)"), ("bp_logical", r"bp logical:\s+(\d+)"),
                     ("bp_physical", r"bp physical:\s+(\d+)"),
                     ("bp_allocated", r"bp allocated:\s+(\d+)"),
                     ("bp_deduped", r"bp deduped:\s+(\d+)"),
                     ("spa_allocated", r"SPA allocated:\s+(\d+)")):
        m = re.search(pat, text)
        if m:
            out[key] = int(m.group(1))
    if "spa_allocated" not in out:
        raise OracleError("zdb -b: no 'SPA allocated' in %r" % text[-2000:])
    if "No leaks" not in text:
        out["leaks"] = True
    return out


TYPE_ROW_RE = re.compile(r"^\s*([0-9.]+[KMGTP]?)\t\s*([0-9.]+[KMGTP]?)\t\s*([0-9.]+[KMGTP]?)\t"
                         r"\s*([0-9.]+[KMGTP]?)\t[^\t]*\t[^\t]*\t[^\t]*\t(\s*)(L\d+ )?(.+)$")


def parse_zdb_types(text):
    """The per-type block table of `zdb -bbb` (every number rounded by zdb, block counts too:
    '9.94K'): [{'type', 'level' (None for the
    type's total), 'blocks', 'lsize', 'psize', 'asize'}], types without blocks left out. Shows
    the metadata ZFS writes: dnodes, indirect blocks (level > 0), directories, DDT ZAPs, MOS."""
    out = []
    for line in text.splitlines():
        m = TYPE_ROW_RE.match(line)
        if not m:
            continue
        out.append({"type": m.group(7).strip(),
                    "level": int(m.group(6)[1:]) if m.group(6) else None,
                    "blocks": parse_nicenum(m.group(1)), "lsize": parse_nicenum(m.group(2)),
                    "psize": parse_nicenum(m.group(3)), "asize": parse_nicenum(m.group(4))})
    return out


def parse_ashift(text):
    m = re.search(r"\bashift: (\d+)", text)
    return int(m.group(1)) if m else None


# ----------------------------------------------------------------------------------------------
# A measurement: one pool, one dataset, one setting

class Pool:
    """A file-backed pool in its own temporary directory; destroy() removes everything, and is
    safe to call at any point (and twice)."""

    seq = 0

    def __init__(self, workdir, ashift, image_size):
        Pool.seq += 1
        self.name = "%s%d_%d" % (POOL_PREFIX, os.getpid(), Pool.seq)
        self.dir = tempfile.mkdtemp(prefix=self.name + "-", dir=workdir)
        self.image = os.path.join(self.dir, "vdev.img")
        self.mnt = os.path.join(self.dir, "mnt")
        self.ashift = ashift
        self.image_size = image_size
        self.imported = False

    def create(self):
        with open(self.image, "wb") as f:
            f.truncate(self.image_size)
        admin(["zpool", "create", "-f", "-o", "ashift=%d" % self.ashift, "-m", self.mnt,
               self.name, self.image])
        self.imported = True

    def export(self):
        run(["zpool", "export", self.name])
        self.imported = False

    def zdb(self, *args, timeout=900):
        return run(["zdb", "-e", "-p", self.dir] + list(args) + [self.name], timeout=timeout)

    def abandon(self):
        """Leaves the pool to the daemon's end: a hung daemon answers no destroy."""
        log("leaving pool %s (%s) to the daemon's end: it does not answer" % (self.name, self.dir))
        self.imported = False
        self.dir = None

    def destroy(self):
        if self.dir is None:
            return
        if self.imported:
            # Right after an import or a copy the mount can be busy for a moment.
            for attempt in range(20):
                p = run(["zpool", "destroy", "-f", self.name], check=False)
                if p.returncode == 0:
                    break
                time.sleep(1)
            else:
                log("zpool destroy %s failed: %s" % (self.name, p.stderr.strip()))
                # Its vdev must stay: removing the file under an imported pool would wedge it.
                return
            self.imported = False
        shutil.rmtree(self.dir, ignore_errors=True)


def settle(pool, dataset, tries=20):
    """Forces transaction groups out (zfs-fuse's `sync` does not) until two successive reads of
    the dataset and pool figures agree. Returns (zfs get text, zpool list text)."""
    prev = None
    for i in range(tries):
        run(["zfs", "set", "user:settle=%d" % i, pool])
        cur = (run(["zfs", "get", "-Hp", "used,referenced,compressratio", dataset]),
               run(["zpool", "list", "-H", "-o", "name,size,allocated,free,dedupratio", pool]))
        if cur == prev:
            return cur
        prev = cur
        time.sleep(0.5 if i < 4 else 2)
    raise OracleError("figures of %s did not settle after %d forced txgs" % (pool, tries))


def run_watched(fn, args, what, stall_seconds=None, on_stall=None):
    """Runs fn(*args, progress) in a child process and returns what it returns (a picklable
    value); `progress` is a shared counter fn steps as it goes. If the counter stands still for
    stall_seconds (STALL_SECONDS), on_stall() runs (copy_with aborts the FUSE connection there:
    a request the daemon has taken and never answers holds its caller past SIGKILL), the child
    is killed and DaemonStalled raised: a clear failure within minutes rather than a test
    sitting to its timeout. An exception in fn, or a child that ends without an answer, comes
    back as OracleError."""
    import multiprocessing
    stall = STALL_SECONDS if stall_seconds is None else stall_seconds
    ctx = multiprocessing.get_context("fork")
    progress = ctx.Value("Q", 0)
    reader, writer = ctx.Pipe(duplex=False)

    def child():
        try:
            writer.send(("ok", fn(*args, progress)))
        except BaseException as e:  # noqa: B902: everything goes back to the parent
            writer.send(("error", "%s: %s" % (type(e).__name__, e)))

    p = ctx.Process(target=child, daemon=True)
    p.start()
    writer.close()
    last, since = -1, time.monotonic()
    try:
        while True:
            if reader.poll(min(5.0, max(stall / 4.0, 0.05))):
                try:
                    kind, value = reader.recv()
                except EOFError:  # the child ended without sending
                    p.join(30)
                    raise OracleError("%s: the copying process ended without an answer (exit "
                                      "%s)" % (what, p.exitcode))
                p.join()
                if kind == "error":
                    raise OracleError("%s: %s" % (what, value))
                return value
            now = progress.value
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since > stall:
                if on_stall is not None:
                    on_stall()
                p.kill()
                p.join(30)
                raise DaemonStalled("%s made no progress for %d s after %d steps: the zfs-fuse "
                                    "daemon stopped answering (its log: %s)" % (
                                        what, stall, now, os.path.join(
                                            tempfile.gettempdir(), "zacc-zfs-fuse.log")))
    finally:
        reader.close()
        if p.is_alive():
            p.kill()
            p.join(30)


FUSECTL = "/sys/fs/fuse/connections"


def abort_fuse_connection(minor):
    """Aborts the FUSE connection of the mount whose st_dev minor is `minor` (fusectl's abort:
    every request pending on it fails, so processes blocked on the mount return). Mounts
    fusectl for it if it is not, and unmounts what it mounted. Best effort: logs what fails."""
    mounted_here = False
    try:
        if not os.path.isdir(os.path.join(FUSECTL, str(minor))) and not os.listdir(FUSECTL):
            p = subprocess.run(["mount", "-t", "fusectl", "fusectl", FUSECTL],
                               capture_output=True, text=True, timeout=10)
            mounted_here = p.returncode == 0
        with open(os.path.join(FUSECTL, str(minor), "abort"), "w") as f:
            f.write("1")
        log("aborted FUSE connection %d" % minor)
    except (OSError, subprocess.SubprocessError) as e:
        log("could not abort FUSE connection %d: %s" % (minor, e))
    finally:
        if mounted_here:
            subprocess.run(["umount", FUSECTL], capture_output=True, timeout=10)


def copy_with(mode, src, dst):
    """Copies src into dst with COPY_MODEL ("extents") or, to compare, with cp: "cp-auto",
    "cp-always", "cp-never" (`cp -a --sparse=...`). Returns the bytes copy_tree wrote (0 for cp).
    The extents copy is watched (run_watched): a hung daemon fails it with DaemonStalled."""
    if mode == "extents":
        minor = os.minor(os.stat(dst).st_dev)  # now, while the mount answers
        return run_watched(lambda s, d, progress: copy_tree(s, d, progress=progress), (src, dst),
                           "copying %s into %s" % (src, dst),
                           on_stall=lambda: abort_fuse_connection(minor))
    sparse = {"cp-auto": "auto", "cp-always": "always", "cp-never": "never"}[mode]
    names = [n for n in os.listdir(src) if n not in (".zsim-sample", ".zsim-sample.partial")]
    if names:
        run(["cp", "-a", "--sparse=" + sparse, "--"] + [os.path.join(src, n) for n in names] +
            [dst + "/"], timeout=3600)
    return 0


def measure(src, recordsize, compression, ashift, workdir, image_size=8 << 30, keep_dump=None,
            copy=COPY_MODEL):
    """Writes the tree src into a fresh pool with dataset properties recordsize, compression,
    dedup=on, atime=off on a file vdev with ashift, and returns every figure read from ZFS:
    {'zfs': {used, referenced, compressratio}, 'zpool': {alloc, dedup, ...}, 'zdb': {objects,
    ratio, histogram_rounded}, 'histogram': {bucket: exact row}, 'entries': {class: n},
    'zdb_b': {...}, 'ashift': as zdb -C shows, 'seconds': {...}}. The pool is destroyed
    whatever happens."""
    global _daemon_stalled
    if _daemon_stalled:
        raise OracleError("not measured: %s" % _daemon_stalled)
    pool = Pool(workdir, ashift, image_size)
    t = {}
    try:
        t0 = time.time()
        pool.create()
        ds = pool.name + "/data"
        admin(["zfs", "create", "-o", "recordsize=%s" % recordsize, "-o",
               "compression=%s" % compression, "-o", "dedup=on", "-o", "atime=off", ds])
        t["create"] = time.time() - t0
        t0 = time.time()
        try:
            written = copy_with(copy, src, os.path.join(pool.mnt, "data"))
        except DaemonStalled as e:
            _daemon_stalled = str(e)
            pool.abandon()
            raise
        t["copy"] = time.time() - t0
        t0 = time.time()
        zget, zlist = settle(pool.name, ds)
        t["settle"] = time.time() - t0
        t0 = time.time()
        pool.export()
        # One zdb run on the exported pool: -C (ashift), -DDDDD (per-object lines, every entry,
        # aggregated histogram, ratio line), -bbb (exact allocated bytes, blocks per type and
        # level). Streamed to a file: with -DDDDD it holds a line per DDT entry.
        dump_path = os.path.join(pool.dir, "zdb.txt")
        with open(dump_path, "w") as f:
            p = subprocess.run(["zdb", "-e", "-p", pool.dir, "-C", "-DDDDD", "-bbb", pool.name],
                               stdout=f, stderr=subprocess.PIPE, text=True, timeout=1800)
        if p.returncode != 0:
            raise OracleError("zdb -C -DDDDD -bbb: exit %d: %s" % (p.returncode,
                                                                p.stderr.strip()[-1000:]))
        with open(dump_path) as f:
            hist, classes = histogram_from_entries(f)
        with open(dump_path) as f:
            text = f.read()
        dd = parse_zdb_dd(text)
        zb = parse_zdb_b(text)
        types = parse_zdb_types(text)
        ashift_zdb = parse_ashift(text)
        del text
        if keep_dump:
            shutil.copyfile(dump_path, keep_dump)
        t["zdb"] = time.time() - t0
        return {"recordsize": recordsize, "compression": compression, "ashift": ashift,
                "ashift_zdb": ashift_zdb, "copy_model": copy,
                "bytes_written": written, "zfs": parse_zfs_get(zget),
                "zpool": parse_zpool_list(zlist),
                "zdb": {"objects": dd["objects"], "ratio": dd["ratio"],
                        "histogram_rounded": dd["histogram"]},
                "histogram": {str(b): row for b, row in sorted(hist.items())},
                "entries": classes, "zdb_b": zb, "zdb_types": types, "seconds": t}
    finally:
        pool.destroy()


# ----------------------------------------------------------------------------------------------
# Command line

def state_start(state):
    d = Daemon()
    d.ensure()
    os.makedirs(os.path.dirname(os.path.abspath(state)), exist_ok=True)
    with open(state, "w") as f:
        json.dump({"started_pid": d.pid}, f)
    if d.pid:
        log("started zfs-fuse pid %d (stopped by daemon-stop)" % d.pid)
    else:
        log("using the zfs-fuse daemon already running (pid %s)" % running_daemons())


def state_stop(state):
    try:
        with open(state) as f:
            pid = json.load(f).get("started_pid")
    except (OSError, ValueError):
        return
    if pid:
        # Our own pools are gone by now; anything named zacc<pid>_ of a dead run is ours too.
        log("stopping the zfs-fuse daemon we started (pid %d)" % pid)
        stop_pid(pid)
    os.unlink(state)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("daemon-start")
    s.add_argument("state")
    s = sub.add_parser("daemon-stop")
    s.add_argument("state")
    s = sub.add_parser("measure")
    s.add_argument("src")
    s.add_argument("--recordsize", default="128k")
    s.add_argument("--compression", default="off")
    s.add_argument("--ashift", type=int, default=12)
    s.add_argument("--workdir", default=tempfile.gettempdir())
    s.add_argument("--keep-dump")
    s.add_argument("--copy", default=COPY_MODEL,
                   choices=("extents", "cp-auto", "cp-always", "cp-never"))
    a = ap.parse_args(argv)
    try:
        if a.cmd == "daemon-start":
            state_start(a.state)
        elif a.cmd == "daemon-stop":
            state_stop(a.state)
        else:
            d = Daemon()
            d.ensure()
            try:
                print(json.dumps(measure(a.src, a.recordsize, a.compression, a.ashift, a.workdir,
                                         keep_dump=a.keep_dump, copy=a.copy), indent=1, sort_keys=True))
            finally:
                d.stop()
    except SkipTest as e:
        print("SKIPPED: %s" % e)
        return SKIP
    except OracleError as e:
        log("error: %s" % e)
        return 1
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sys.exit(main(sys.argv[1:]))
