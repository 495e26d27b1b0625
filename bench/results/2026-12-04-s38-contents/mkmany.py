import os, sys
root = sys.argv[1]; n = int(sys.argv[2])
# n files of 200 bytes in 1000-file directories; every 10th file repeats the content of the
# file 5 before it (a duplicate), so n/10 duplicate files of 200 bytes.
for i in range(n):
    d = os.path.join(root, "d%04d" % (i // 1000))
    if i % 1000 == 0: os.makedirs(d, exist_ok=True)
    src = i - 5 if i % 10 == 9 else i
    data = (b"content %d " % src) * 20
    with open(os.path.join(d, "f%06d" % i), "wb") as f: f.write(data[:200])
