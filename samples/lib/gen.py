#!/usr/bin/env python3
"""Deterministic generated content for the sample builders (standard library only).

  gen.py prose LABEL BYTES FILE         pseudo-English text, seeded by LABEL
  gen.py maildir LABEL COUNT DIR        COUNT small e-mail files (150-1500 bytes) under DIR/{cur,new}
  gen.py random LABEL BYTES FILE        incompressible bytes, seeded by LABEL

The same LABEL gives the same bytes on every machine and Python version (SHAKE-256 stream).
"""
import hashlib
import os
import sys


class Stream:
    def __init__(self, label):
        self.label = label.encode()
        self.counter = 0
        self.buf = b""

    def bytes(self, n):
        parts = [self.buf]
        have = len(self.buf)
        while have < n:
            chunk = hashlib.shake_256(self.label + b"/%d" % self.counter).digest(1 << 16)
            self.counter += 1
            parts.append(chunk)
            have += len(chunk)
        data = b"".join(parts)
        out, self.buf = data[:n], data[n:]
        return out

    def below(self, n):
        return int.from_bytes(self.bytes(4), "little") % n


WORDS = ("the pool dataset record block checksum table snapshot replica volume share backup "
         "storage quota archive policy customer invoice report quarterly release build server "
         "network latency throughput cluster node disk mirror raid scrub resilver compression "
         "deduplication ratio memory cache index query transaction commit rollback schema user "
         "group permission access audit retention migration upgrade config service daemon log "
         "error warning notice debug metric alert threshold capacity growth forecast budget "
         "team project meeting review draft final approved pending owner deadline milestone "
         "and of to in for with on by from is are was be will should must may can not a an").split()


def prose(s, nbytes, width=78):
    out, size, line, col, left = [], 0, [], 0, 0
    while size < nbytes:
        w = WORDS[s.below(len(WORDS))]
        if left == 0:
            w = w.capitalize()
            left = 6 + s.below(14)
        left -= 1
        if left == 0:
            w += "."
        if col + len(w) + 1 > width:
            text = " ".join(line) + ("\n\n" if s.below(7) == 0 else "\n")
            out.append(text)
            size += len(text)
            line, col = [], 0
        line.append(w)
        col += len(w) + 1
    return "".join(out).encode()[:nbytes]


def maildir(label, count, root):
    s = Stream(label)
    names = ("alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi")
    for sub in ("cur", "new", "tmp"):
        os.makedirs(os.path.join(root, sub), exist_ok=True)
    t = 1704067200
    for i in range(count):
        t += 30 + s.below(3600)
        a, b = names[s.below(len(names))], names[s.below(len(names))]
        body = prose(s, 100 + s.below(1300)).decode()
        msg = ("From: %s@example.com\nTo: %s@example.com\nSubject: %s\nMessage-ID: <%08x.%d@example.com>\n"
               "Date: @%d\n\n%s\n" % (a, b, prose(s, 20 + s.below(40)).decode().replace("\n", " "),
                                      s.below(1 << 32), i, t, body))
        sub = "new" if i % 10 == 0 else "cur"
        with open(os.path.join(root, sub, "%d.M%dP%d.fileserver:2,S" % (t, i, 1000 + i)), "wb") as f:
            f.write(msg.encode())


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__)
    cmd, label, n, path = argv[0], argv[1], int(argv[2]), argv[3]
    if cmd == "prose":
        data = prose(Stream(label), n)
    elif cmd == "random":
        data = Stream(label).bytes(n)
    elif cmd == "maildir":
        maildir(label, n, path)
        return
    else:
        sys.exit(__doc__)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main(sys.argv[1:])
