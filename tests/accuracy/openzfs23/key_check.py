#!/usr/bin/env python3
"""Do zsim's compressors write OpenZFS 2.3.2's bytes? Writes TREE into a fresh pool (the harness,
dedup=on, checksum=sha256, one disk) per setting, reads every DDT entry's key back with the
packaged `zdb -DDDDD` (each entry's block pointer, cksum=W0:W1:W2:W3), and compares the set of
first words with the one `ddt_keys` computes from zsim's codecs and write rules (the SHA-256 of
the compressor's output padded to its psize). A DDT key holds a checksum of the bytes on disk, so
equal sets mean equal bytes for every block of the tree, compressed or stored, not only equal
sizes. That is what a DDT laid out on its own keys needs for compressed settings (docs/
accuracy.md, "Bytes, not only sizes").
  key_check.py --env BUILD/accuracy/openzfs23/env \\
      --ddt-keys BUILD/tests/accuracy/openzfs23/ddt_keys --tree BUILD/samples-data/tiny \\
      [--setting lz4:128k:12 ...] [--workdir DIR]
Exit 0 when every setting's sets are equal and each codec (not off) compressed some block, 1
otherwise, 77 when OpenZFS 2.3.2 is not there (accuracy23_prepare skipped). zstd is not among the
defaults: OpenZFS 2.3 carries zstd 1.4.5 and zsim links Debian's 1.5, whose bytes differ
(`--setting zstd-3:128k:12` shows by how much; docs/accuracy.md).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import oracle23  # noqa: E402

# Every codec whose output zsim claims is OpenZFS's byte for byte, at both ashifts and at a small
# and a large recordsize between them.
DEFAULT_SETTINGS = ["lz4:128k:12", "lz4:16k:9", "gzip-6:128k:9", "gzip-6:16k:12",
                    "lzjb:16k:12", "lzjb:128k:9", "zle:16k:9", "zle:128k:12"]


def pool_keys(env, tree, compression, recordsize, ashift, workdir):
    """The first key word of every DDT entry OpenZFS 2.3.2 made of TREE."""
    tmp = tempfile.mkdtemp(prefix="zsim-keys-", dir=workdir)
    try:
        cmd = oracle23.harness_command(env, tree, tmp, {
            "vdev": "disk", "ashift": ashift, "recordsize": recordsize,
            "compression": compression, "ddt": "fast"})
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            raise SystemExit("key_check: harness exit %d: %s" % (p.returncode, p.stderr[-2000:]))
        z = subprocess.run([env["ZDB"], "-e", "-p", tmp, "-DDDDD", oracle23.POOL],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=dict(os.environ, LD_LIBRARY_PATH=env["LIBDIR"]))
        if z.returncode != 0:
            raise SystemExit("key_check: zdb -DDDDD exit %d: %s" % (z.returncode, z.stderr[-2000:]))
        keys = set()
        for line in z.stdout.splitlines():
            at = line.find(" cksum=")
            if line.startswith("index ") and at >= 0:
                keys.add(int(line[at + 7:].split(":")[0], 16))
        return keys
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def zsim_keys(ddt_keys, tree, compression, recordsize, ashift):
    """{word: 'compressed' | 'stored'} as zsim computes them for the same tree."""
    out = subprocess.run([ddt_keys, tree, compression, recordsize, str(ashift)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if out.returncode != 0:
        raise SystemExit("key_check: ddt_keys exit %d: %s" % (out.returncode, out.stderr))
    keys = {}
    for line in out.stdout.splitlines():
        word, kind, _, path = line.split(" ", 3)
        # The harness skips every entry named so, directories with all they hold.
        if not any(part.startswith(oracle23.EXCLUDE) for part in path.split("/")):
            keys[int(word, 16)] = kind
    return keys


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--env", required=True)
    ap.add_argument("--ddt-keys", required=True)
    ap.add_argument("--tree", required=True)
    ap.add_argument("--setting", action="append", help="COMPRESSION:RECORDSIZE:ASHIFT")
    ap.add_argument("--workdir")
    a = ap.parse_args(argv)
    if not os.path.exists(a.env):
        print("key_check: skipped: no OpenZFS 2.3.2 harness (%s)" % a.env)
        return 77
    env = oracle23.load_env(a.env)
    failed = 0
    for setting in a.setting or DEFAULT_SETTINGS:
        compression, recordsize, ashift = setting.split(":")
        pool = pool_keys(env, a.tree, compression, recordsize, int(ashift), a.workdir)
        ours = zsim_keys(a.ddt_keys, a.tree, compression, recordsize, int(ashift))
        both = pool & set(ours)
        compressed = sum(1 for k in ours.values() if k == "compressed")
        equal_compressed = sum(1 for k in both if ours[k] == "compressed")
        # A codec that compressed nothing here had none of its bytes checked: not a pass.
        checked = compressed > 0 or compression == "off"
        ok = pool == set(ours) and checked
        print("%-16s OpenZFS %5d keys, zsim %5d (%d compressed), equal %5d (%d compressed): %s" % (
            setting, len(pool), len(ours), compressed, len(both), equal_compressed,
            "ok" if ok else "FAIL"))
        if not checked:
            print("  no block compressed: %s's bytes were not checked" % compression)
        if not ok:
            failed += 1
            for k in sorted(pool - set(ours))[:5]:
                print("  only in OpenZFS's DDT: %016x" % k)
            for k in sorted(set(ours) - pool)[:5]:
                print("  only in zsim's: %016x (%s)" % (k, ours[k]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
