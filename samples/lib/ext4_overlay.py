#!/usr/bin/env python3
"""Prints the debugfs commands that turn an ext4 image made from tree FROM into one holding tree TO.

Usage: ext4_overlay.py FROM TO EPOCH > cmds; debugfs -w -f cmds IMAGE

This is how a cloned VM disk diverges from its template: entries only in FROM are removed, entries
new or changed in TO are written anew (debugfs allocates their blocks in free space), the rest of
the image is left as it was. Modes, owners and every timestamp are set explicitly (to EPOCH for the
times) so the result does not depend on when it was built. Hard links between new files in TO are
written as separate copies; device nodes and fifos are made with mknod; sockets are not supported.
"""
import os
import stat
import sys


def quote(path):
    if any(c in path for c in ' "\t\n'):
        if '"' in path or "\n" in path:
            sys.exit("ext4_overlay.py: unsupported file name %r" % path)
        return '"%s"' % path
    return path


def same_file(a, b, sa, sb):
    if sa.st_size != sb.st_size:
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x = fa.read(1 << 20)
            y = fb.read(1 << 20)
            if x != y:
                return False
            if not x:
                return True


def entries(root):
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for n in dirnames + sorted(filenames):
            full = os.path.join(dirpath, n)
            out[os.path.relpath(full, root)] = os.lstat(full)
    return out


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    src, dst, epoch = argv[0], argv[1], int(argv[2])
    a, b = entries(src), entries(dst)
    cmds = []
    touched = []

    def kind(st):
        return stat.S_IFMT(st.st_mode)

    # Removals, deepest first: what FROM has and TO has not (or has as another kind of entry).
    for rel in sorted(a, reverse=True):
        sa = a[rel]
        sb = b.get(rel)
        if sb is not None and kind(sa) == kind(sb):
            continue
        p = "/" + rel
        cmds.append(("rmdir %s" if stat.S_ISDIR(sa.st_mode) else "rm %s") % quote(p))
    # Additions and changes, parents first.
    for rel in sorted(b):
        sb = b[rel]
        sa = a.get(rel)
        p = "/" + rel
        full = os.path.join(dst, rel)
        same_kind = sa is not None and kind(sa) == kind(sb)
        if stat.S_ISDIR(sb.st_mode):
            if not same_kind:
                cmds.append("mkdir %s" % quote(p))
        elif stat.S_ISREG(sb.st_mode):
            if same_kind and same_file(os.path.join(src, rel), full, sa, sb):
                if (sa.st_mode, sa.st_uid, sa.st_gid) == (sb.st_mode, sb.st_uid, sb.st_gid):
                    continue
            else:
                if same_kind:
                    cmds.append("rm %s" % quote(p))
                cmds.append("write %s %s" % (quote(full), quote(p)))
        elif stat.S_ISLNK(sb.st_mode):
            target = os.readlink(full)
            if same_kind and os.readlink(os.path.join(src, rel)) == target:
                continue
            if same_kind:
                cmds.append("rm %s" % quote(p))
            cmds.append("symlink %s %s" % (quote(p), quote(target)))
        elif stat.S_ISCHR(sb.st_mode) or stat.S_ISBLK(sb.st_mode) or stat.S_ISFIFO(sb.st_mode):
            if same_kind and sa.st_rdev == sb.st_rdev and (sa.st_mode, sa.st_uid, sa.st_gid) == (
                    sb.st_mode, sb.st_uid, sb.st_gid):
                continue
            if same_kind:
                cmds.append("rm %s" % quote(p))
            if stat.S_ISFIFO(sb.st_mode):
                cmds.append("mknod %s p" % quote(p))
            else:
                cmds.append("mknod %s %s %d %d" % (quote(p), "c" if stat.S_ISCHR(sb.st_mode) else "b",
                                                   os.major(sb.st_rdev), os.minor(sb.st_rdev)))
        else:
            sys.exit("ext4_overlay.py: unsupported file type at %s" % rel)
        touched.append((p, sb))
    for p, st in touched:
        q = quote(p)
        if not stat.S_ISLNK(st.st_mode):
            cmds.append("sif %s mode 0%o" % (q, st.st_mode))
        cmds.append("sif %s uid %d" % (q, st.st_uid))
        cmds.append("sif %s gid %d" % (q, st.st_gid))
    # Every path, and the directories whose entries changed, get the fixed timestamps.
    for rel in sorted(b):
        q = quote("/" + rel)
        for field in ("atime", "ctime", "mtime", "crtime"):
            cmds.append("sif %s %s @%d" % (q, field, epoch))
    for field in ("atime", "ctime", "mtime", "crtime"):
        cmds.append("sif / %s @%d" % (field, epoch))
    sys.stdout.write("".join(c + "\n" for c in cmds))


if __name__ == "__main__":
    main(sys.argv[1:])
