#!/usr/bin/env python3
"""Canonical content listing of a sample directory, and its checksum.

Usage: manifest.py DIR [--exclude GLOB]... [--list]

Walks DIR without following symlinks, in sorted path order, and describes every entry on one line:
  d <mode> <path>
  f <mode> <size> <sha256> <path> [= <first path of the same inode>]
  l <target> <path>
  o <kind> <path>                      (fifo, socket, device)
Paths are relative to DIR. Ownership, timestamps, directory sizes and the placement of holes are
left out on purpose: they depend on the file system and on who built the sample, not on its content.
A regular file with several links inside DIR is hashed once; its later paths name the first one,
so the listing records the hard-link structure.

GLOB patterns (fnmatch, matched against the relative path) leave entries, and everything under an
excluded directory, out of the listing (for what varies between two builds); they are still counted
in files and bytes. `.zsim-sample*` (the stamp) is always left out, and not counted.

Prints `files=N bytes=N checksum=SHA256` where files counts distinct regular-file inodes, bytes
sums their apparent sizes (what a scan of DIR reads, the stamp aside), and checksum is the sha256
of the listing. With --list, prints the
listing itself first (to diff two builds).
"""
import fnmatch
import hashlib
import os
import stat
import sys


def file_sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            chunk = f.read(1 << 20)
            if not chunk:
                break
            h.update(chunk)
    return h.hexdigest()


def main(argv):
    root = None
    excludes = [".zsim-sample*"]
    show = False
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--exclude":
            excludes.append(argv[i + 1])
            i += 2
            continue
        if a == "--list":
            show = True
        elif root is None:
            root = a
        else:
            sys.exit("manifest.py: unexpected argument " + a)
        i += 1
    if root is None:
        sys.exit(__doc__)

    def excluded(rel):
        return any(fnmatch.fnmatchcase(rel, g) for g in excludes)

    def always_excluded(rel):
        return "/" not in rel and rel.startswith(".zsim-sample")

    lines = []
    seen = {}  # (dev, ino) -> first relative path
    files = 0
    total = 0

    counted = set()  # (dev, ino) of regular files counted in files and bytes

    def visit(dirpath, rel_dir, hidden):
        nonlocal files, total
        for name in sorted(os.listdir(dirpath)):
            full = os.path.join(dirpath, name)
            rel = name if not rel_dir else rel_dir + "/" + name
            if always_excluded(rel):
                continue
            skip = hidden or excluded(rel)
            st = os.lstat(full)
            mode = "%04o" % stat.S_IMODE(st.st_mode)
            if stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) not in counted:
                counted.add((st.st_dev, st.st_ino))
                files += 1
                total += st.st_size
            if skip:
                if stat.S_ISDIR(st.st_mode):
                    visit(full, rel, True)
                continue
            if stat.S_ISDIR(st.st_mode):
                lines.append("d %s %s" % (mode, rel))
                visit(full, rel, False)
            elif stat.S_ISREG(st.st_mode):
                key = (st.st_dev, st.st_ino)
                if key in seen:
                    first = seen[key]
                    lines.append("f %s %d %s %s = %s" % (mode, st.st_size, first[1], rel, first[0]))
                    continue
                digest = file_sha256(full)
                seen[key] = (rel, digest)
                lines.append("f %s %d %s %s" % (mode, st.st_size, digest, rel))
            elif stat.S_ISLNK(st.st_mode):
                lines.append("l %s %s" % (os.readlink(full), rel))
            else:
                kind = "fifo" if stat.S_ISFIFO(st.st_mode) else "sock" if stat.S_ISSOCK(
                    st.st_mode) else "dev"
                lines.append("o %s %s" % (kind, rel))

    visit(root, "", False)
    text = "".join(line + "\n" for line in lines)
    if show:
        sys.stdout.write(text)
    print("files=%d bytes=%d checksum=%s" %
          (files, total, hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()))


if __name__ == "__main__":
    main(sys.argv[1:])
