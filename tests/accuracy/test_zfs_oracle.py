#!/usr/bin/env python3
"""Unit tests of the accuracy suite's own logic, no ZFS needed: the parsers (on output captured
from zfs-fuse's zdb, zfs and zpool: testdata/), the exact histogram, the comparison and the
extent-exact copy. Run: python3 tests/accuracy/test_zfs_oracle.py"""
import copy
import json
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_accuracy  # noqa: E402
import zfs_oracle  # noqa: E402


def fixture():
    # zdb -e -p DIR -C -DDDDD -b of a pool (ashift 9, recordsize 128k, lzjb, dedup=on) holding a
    # 128K random block five times, another twice, a 50000-byte text file and a 300-byte file.
    with open(os.path.join(HERE, "testdata", "zdb-C-DDDDD-b.txt")) as f:
        return f.read()


class ParseTest(unittest.TestCase):
    def test_nicenum(self):
        self.assertEqual(zfs_oracle.parse_nicenum("512"), 512)
        self.assertEqual(zfs_oracle.parse_nicenum("128K"), 131072)
        self.assertEqual(zfs_oracle.parse_nicenum("2.50K"), 2560)
        self.assertEqual(zfs_oracle.parse_nicenum("1.5M"), 1572864)

    def test_zfs_get(self):
        got = zfs_oracle.parse_zfs_get("p/data\tused\t946688\t-\np/data\treferenced\t946688\t-\n"
                                       "p/data\tcompressratio\t1.05x\t-\n")
        self.assertEqual(got, {"used": 946688, "referenced": 946688, "compressratio": "1.05"})

    def test_zpool_list(self):
        got = zfs_oracle.parse_zpool_list("zacc1_1\t7.94G\t479K\t7.94G\t3.47x\n")
        self.assertEqual(got["alloc"], "479K")
        self.assertEqual(got["alloc_bytes"], 479 * 1024)
        self.assertEqual(got["dedup"], "3.47")

    def test_zdb_dd(self):
        dd = zfs_oracle.parse_zdb_dd(fixture())
        self.assertEqual(dd["objects"]["duplicate"],
                         {"checksum": "sha256", "entries": 2, "on_disk": 2304, "in_core": 2048})
        self.assertEqual(dd["objects"]["unique"]["entries"], 2)
        self.assertEqual(dd["ratio"], {"dedup": "3.48", "compress": "1.05", "copies": "1.00",
                                       "total": "3.66"})
        # Only the aggregated histogram, not the per-object ones: 3 rows and Total.
        self.assertEqual([r["refcnt"] for r in dd["histogram"]], ["1", "2", "4", "Total"])
        self.assertEqual(dd["histogram"][2]["referenced"]["blocks"], 5)
        self.assertEqual(dd["histogram"][0]["allocated"]["lsize"], 50688)

    def test_empty_ddt(self):
        dd = zfs_oracle.parse_zdb_dd("All DDTs are empty\n")
        self.assertEqual(dd["objects"], {})
        self.assertIsNone(dd["ratio"])

    def test_exact_histogram_from_entries(self):
        hist, classes = zfs_oracle.histogram_from_entries(fixture().splitlines())
        self.assertEqual(classes, {"duplicate": 2, "unique": 2})
        self.assertEqual(sorted(hist), [0, 1, 2])
        # refcnt 5 lands in bucket 2 ("4"): one 128K block allocated, five referenced.
        self.assertEqual(hist[2]["allocated"], {"blocks": 1, "lsize": 131072, "psize": 131072,
                                                "dsize": 131072})
        self.assertEqual(hist[2]["referenced"]["blocks"], 5)
        self.assertEqual(hist[2]["referenced"]["dsize"], 5 * 131072)
        # The unique entries: 512-byte block stored as is (v23 never compresses 512 bytes) and
        # the text file (lsize 0xc400) compressed by lzjb into 0x800, dsize = asize of the DVA.
        self.assertEqual(hist[0]["allocated"], {"blocks": 2, "lsize": 512 + 50176,
                                                "psize": 512 + 2048, "dsize": 512 + 2048})
        # The exact figures agree with zdb's rounded ones.
        dd = zfs_oracle.parse_zdb_dd(fixture())
        for row in dd["histogram"][:-1]:
            b = zfs_oracle.bucket_of(int(row["refcnt"]))
            for side in ("allocated", "referenced"):
                self.assertEqual(row[side]["blocks"], hist[b][side]["blocks"])
                self.assertAlmostEqual(row[side]["dsize"], hist[b][side]["dsize"],
                                       delta=0.005 * hist[b][side]["dsize"])

    def test_ditto_slots_of_one_entry_are_one_entry(self):
        lines = ["DDT-sha256-zap-duplicate: 1 entries, size 1 on disk, 1 in core",
                 "index 1a refcnt 3 single DVA[0]=<0:0:20000> size=20000L/20000P birth=1L/1P",
                 "index 1a refcnt 2 double DVA[0]=<0:0:20000> DVA[1]=<0:40000:20000> "
                 "size=20000L/20000P birth=1L/1P"]
        hist, classes = zfs_oracle.histogram_from_entries(lines)
        self.assertEqual(classes, {"duplicate": 1})
        self.assertEqual(list(hist), [2])  # total refcount 5
        self.assertEqual(hist[2]["allocated"]["blocks"], 2)
        self.assertEqual(hist[2]["allocated"]["dsize"], 3 * 131072)
        self.assertEqual(hist[2]["referenced"]["blocks"], 5)

    def test_zdb_b_and_ashift(self):
        zb = zfs_oracle.parse_zdb_b(fixture())
        self.assertEqual(zb["spa_allocated"], 419840)
        self.assertEqual(zb["bp_deduped"], 655360)
        self.assertNotIn("leaks", zb)
        self.assertEqual(zfs_oracle.parse_ashift(fixture()), 9)

    def test_zdb_types(self):
        text = ("Blocks\tLSIZE\tPSIZE\tASIZE\t  avg\t comp\t%Total\tType\n"
                "     -\t    -\t    -\t    -\t    -\t    -\t     -\tunallocated\n"
                "     2\t  32K\t   2K\t  16K\t   8K\t16.00\t  0.32\t    L1 DMU dnode\n"
                "    18\t 288K\t25.0K\t 152K\t8.44K\t11.52\t  3.05\tDMU dnode\n"
                "   681\t5.08M\t3.22M\t3.75M\t5.64K\t 1.58\t 77.06\t    L0 ZFS plain file\n"
                " 9.94K\t68.9M\t68.9M\t69.1M\t7.11K\t 1.00\t 95.80\tTotal\n")
        got = zfs_oracle.parse_zdb_types(text)
        self.assertEqual([(r["type"], r["level"], r["blocks"]) for r in got],
                         [("DMU dnode", 1, 2), ("DMU dnode", None, 18),
                          ("ZFS plain file", 0, 681), ("Total", None, 10179)])
        self.assertEqual(got[1]["asize"], 152 * 1024)
        self.assertEqual(got[2]["lsize"], int(round(5.08 * (1 << 20))))

    def test_bucket(self):
        self.assertEqual([zfs_oracle.bucket_of(r) for r in (1, 2, 3, 4, 7, 8, 1024)],
                         [0, 1, 1, 2, 2, 3, 10])


def oracle_from_fixture():
    text = fixture()
    hist, classes = zfs_oracle.histogram_from_entries(text.splitlines())
    dd = zfs_oracle.parse_zdb_dd(text)
    return {"zdb": {"objects": dd["objects"], "ratio": dd["ratio"]},
            "histogram": {str(b): r for b, r in hist.items()}, "entries": classes,
            "zdb_b": zfs_oracle.parse_zdb_b(text),
            "zfs": {"used": 946688, "referenced": 946688, "compressratio": "1.05"},
            "zpool": {"alloc": "479K", "dedup": "3.47"}}


def zsim_result(oracle):
    """A zsim result object carrying exactly the oracle's figures."""
    hist = []
    for b, r in sorted(oracle["histogram"].items()):
        hist.append(dict(copy.deepcopy(r), refcnt=1 << int(b)))
    per = {c: {"in_core": o["in_core"], "on_disk": o["on_disk"]}
           for c, o in oracle["zdb"]["objects"].items()}
    return {"compressratio": 1.05, "used": 946688, "pool_alloc": 419840,
            "dedup": {"ratio": 3.47,
                      "entries": {c: o["entries"] for c, o in oracle["zdb"]["objects"].items()},
                      "histogram": hist, "ddt_per_entry": per}}


class WatchTest(unittest.TestCase):
    """run_watched: the copy into a pool runs in a child whose progress is watched."""

    def test_returns_what_the_work_returns(self):
        def work(n, progress):
            for _ in range(n):
                progress.value += 1
            return n * 2
        self.assertEqual(zfs_oracle.run_watched(work, (5,), "work", stall_seconds=5), 10)

    def test_an_error_in_the_work_is_an_oracle_error(self):
        def work(progress):
            raise OSError(28, "No space left on device")
        with self.assertRaisesRegex(zfs_oracle.OracleError, "No space left"):
            zfs_oracle.run_watched(work, (), "copying", stall_seconds=5)

    def test_work_that_stops_progressing_is_killed(self):
        import time

        def work(progress):
            progress.value += 1
            time.sleep(3600)  # as a write into a hung FUSE mount waits
        t0 = time.time()
        stalled = []
        with self.assertRaisesRegex(zfs_oracle.DaemonStalled, "no progress for 1 s after 1 steps"):
            zfs_oracle.run_watched(work, (), "copying", stall_seconds=1,
                                   on_stall=lambda: stalled.append(True))
        self.assertEqual(stalled, [True])
        self.assertLess(time.time() - t0, 30)

    def test_a_child_that_ends_without_an_answer_is_an_oracle_error(self):
        def work(progress):
            os._exit(3)
        with self.assertRaisesRegex(zfs_oracle.OracleError, "without an answer .exit 3"):
            zfs_oracle.run_watched(work, (), "copying", stall_seconds=5)

    def test_slow_work_that_progresses_is_not_stopped(self):
        import time

        def work(progress):
            for _ in range(6):
                time.sleep(0.4)
                progress.value += 1
            return "done"
        self.assertEqual(zfs_oracle.run_watched(work, (), "copying", stall_seconds=1), "done")

    def test_copy_tree_steps_its_progress(self):
        import multiprocessing
        with tempfile.TemporaryDirectory() as src, tempfile.TemporaryDirectory() as dst:
            os.mkdir(os.path.join(src, "d"))
            with open(os.path.join(src, "d", "f"), "wb") as f:
                f.write(b"x" * 100)
            os.link(os.path.join(src, "d", "f"), os.path.join(src, "d", "g"))
            os.symlink("f", os.path.join(src, "d", "s"))
            progress = multiprocessing.Value("Q", 0)
            self.assertEqual(zfs_oracle.copy_tree(src, dst, progress=progress), 100)
            # the directory; f made and written; the link; the symlink
            self.assertEqual(progress.value, 5)


class CompareTest(unittest.TestCase):
    def test_equal_figures_pass(self):
        o = oracle_from_fixture()
        checks = run_accuracy.compare(o, zsim_result(o))
        self.assertTrue(all(c["ok"] for c in checks), [c for c in checks if not c["ok"]])
        self.assertEqual(len([c for c in checks if c["figure"].startswith("DDT") and
                              "bytes/entry" in c["figure"]]), 4)

    def test_each_figure_fails_outside_its_tolerance(self):
        o = oracle_from_fixture()

        def failing(mutate):
            r = zsim_result(o)
            mutate(r)
            return sorted(c["figure"] for c in run_accuracy.compare(o, r) if not c["ok"])

        self.assertEqual(failing(lambda r: r["dedup"]["entries"].update(unique=3)),
                         ["DDT unique entries"])
        self.assertEqual(failing(lambda r: r["dedup"]["histogram"][2]["referenced"].update(
            blocks=4)), ["histogram rows (alloc+ref blocks)"])
        self.assertEqual(failing(lambda r: r["dedup"].update(ratio=3.48)), ["zpool DEDUP"])
        self.assertEqual(failing(lambda r: r.update(compressratio=1.07)), ["compressratio"])
        self.assertEqual(failing(lambda r: r.update(compressratio=1.06)), [])
        self.assertEqual(failing(lambda r: r.update(used=int(946688 * 1.011))), ["dataset used"])
        self.assertEqual(failing(lambda r: r.update(used=int(946688 * 1.009))), [])
        self.assertEqual(failing(lambda r: r.update(pool_alloc=int(419840 * 0.979))),
                         ["pool ALLOC (zdb -b)"])
        # The fixture's DDT objects are small (2 entries): ZFS's own spread widens it to 25%.
        self.assertEqual(failing(lambda r: r["dedup"]["ddt_per_entry"]["unique"].update(
            in_core=2048 * 1.11)), [])
        self.assertEqual(failing(lambda r: r["dedup"]["ddt_per_entry"]["unique"].update(
            in_core=2048 * 1.26)), ["DDT unique bytes/entry in core"])
        self.assertEqual(failing(lambda r: r["dedup"].pop("ddt_per_entry")),
                         ["DDT duplicate bytes/entry in core", "DDT duplicate bytes/entry on disk",
                          "DDT unique bytes/entry in core", "DDT unique bytes/entry on disk"])

    def test_ddt_per_entry_tolerance_is_10_percent_on_large_objects(self):
        o = oracle_from_fixture()
        o["zdb"]["objects"]["unique"]["entries"] = run_accuracy.SMALL_DDT_ENTRIES
        r = zsim_result(o)
        r["dedup"]["ddt_per_entry"]["unique"]["on_disk"] = 2304 * 1.11
        bad = [c["figure"] for c in run_accuracy.compare(o, r) if not c["ok"]]
        self.assertEqual(bad, ["DDT unique bytes/entry on disk"])
        r["dedup"]["ddt_per_entry"]["unique"]["on_disk"] = 2304 * 1.09
        self.assertTrue(all(c["ok"] for c in run_accuracy.compare(o, r)))

    def test_missing_result_fails(self):
        self.assertFalse(run_accuracy.compare(oracle_from_fixture(), None)[0]["ok"])

    def test_nicenum_as_zpool_prints(self):
        self.assertEqual(run_accuracy.zfs_nicenum(512), "512")
        self.assertEqual(run_accuracy.zfs_nicenum(131072), "128K")
        self.assertEqual(run_accuracy.zfs_nicenum(2711552), "2.59M")
        self.assertEqual(run_accuracy.zfs_nicenum(490496), "479K")


class CopyTest(unittest.TestCase):
    def test_copy_keeps_holes_zero_data_links_and_symlinks(self):
        with tempfile.TemporaryDirectory() as src, tempfile.TemporaryDirectory() as dst:
            os.mkdir(os.path.join(src, "d"))
            sparse = os.path.join(src, "d", "sparse")
            with open(sparse, "wb") as f:
                f.write(b"a" * 4096)
                f.seek(1 << 20)
                f.write(bytes(8192))  # zeros written as data must stay data
                f.truncate(4 << 20)
            os.link(sparse, os.path.join(src, "hard"))
            os.symlink("d/sparse", os.path.join(src, "sym"))
            with open(os.path.join(src, ".zsim-sample"), "w") as f:
                f.write("stamp\n")
            written = zfs_oracle.copy_tree(src, dst)
            out = os.path.join(dst, "d", "sparse")
            self.assertEqual(os.path.getsize(out), 4 << 20)
            with open(out, "rb") as f, open(sparse, "rb") as g:
                self.assertEqual(f.read(), g.read())
            fd = os.open(out, os.O_RDONLY)
            try:
                self.assertEqual(zfs_oracle.data_extents(fd, 4 << 20),
                                 zfs_oracle.data_extents(os.open(sparse, os.O_RDONLY), 4 << 20))
            finally:
                os.close(fd)
            self.assertEqual(written, sum(n for _, n in zfs_oracle.data_extents(
                os.open(sparse, os.O_RDONLY), 4 << 20)))
            self.assertEqual(os.stat(out).st_ino, os.stat(os.path.join(dst, "hard")).st_ino)
            self.assertEqual(os.readlink(os.path.join(dst, "sym")), "d/sparse")
            self.assertFalse(os.path.exists(os.path.join(dst, ".zsim-sample")))


class CollectTest(unittest.TestCase):
    def test_docs_keep_what_follows_the_generated_part(self):
        with tempfile.TemporaryDirectory() as out:
            with open(os.path.join(out, "accuracy-tiny.json"), "w") as f:
                json.dump({"dataset": "tiny", "settings": [], "tree": "/t", "summary": "",
                           "seconds": {"total": 1, "zsim": 0.5}, "when": "now",
                           "zsim_version": "z"}, f)
            docs = os.path.join(out, "doc.md")
            with open(docs, "w") as f:
                f.write("# A\n\nintro\n\n" + run_accuracy.DOC_MARK + "\n\nold table\n\n"
                        "## Next suite\n\nits text\n")
            run_accuracy.collect(out, docs)
            with open(docs) as f:
                text = f.read()
        self.assertTrue(text.startswith("# A\n\nintro\n\n" + run_accuracy.DOC_MARK))
        self.assertNotIn("old table", text)
        self.assertIn("Latest run: now, zsim z; 1 datasets", text)
        self.assertTrue(text.endswith("\n\n## Next suite\n\nits text\n"), text[-200:])


class ReviveTest(unittest.TestCase):
    """zfs_oracle.revive_daemon with the daemon's probes replaced: what it starts, stops and
    records, never a real zfs-fuse."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="zacc-revive-")
        self.state = os.path.join(self.dir, "daemon-state.json")
        self.saved = {k: getattr(zfs_oracle, k) for k in
                      ("running_daemons", "zpool_answers", "fuse_answers", "start_daemon",
                       "stop_pid")}
        self.pids, self.answers, self.started, self.stopped = [], False, [], []
        self.fuse = True
        zfs_oracle.running_daemons = lambda: list(self.pids)
        zfs_oracle.zpool_answers = lambda: self.answers
        zfs_oracle.fuse_answers = lambda: self.fuse
        zfs_oracle.stop_pid = self.stopped.append

        def start():
            self.started.append(4242)
            self.pids, self.answers, self.fuse = [4242], True, True
            return 4242
        zfs_oracle.start_daemon = start
        self.wait = zfs_oracle.wait_for
        zfs_oracle.wait_for = lambda pred, seconds: pred()

    def tearDown(self):
        for k, v in self.saved.items():
            setattr(zfs_oracle, k, v)
        zfs_oracle.wait_for = self.wait
        shutil.rmtree(self.dir)

    def write_state(self, pid):
        with open(self.state, "w") as f:
            json.dump({"started_pid": pid}, f)

    def recorded(self):
        with open(self.state) as f:
            return json.load(f)["started_pid"]

    def test_a_dead_daemon_is_started_again_and_recorded(self):
        self.write_state(100)
        self.assertTrue(zfs_oracle.revive_daemon(self.state))
        self.assertEqual(self.started, [4242])
        self.assertEqual(self.recorded(), 4242)  # daemon-stop ends the new one
        self.assertEqual(self.stopped, [])

    def test_a_hung_daemon_we_started_is_stopped_first(self):
        self.write_state(100)
        self.pids = [100]
        self.assertTrue(zfs_oracle.revive_daemon(self.state))
        self.assertEqual(self.stopped, [100])
        self.assertEqual(self.recorded(), 4242)

    def test_a_daemon_whose_fuse_side_hung_is_stopped_though_zpool_answers(self):
        # Seen in CI: `zfs create` waiting in fuse_get_req, `zpool list` still answering.
        self.write_state(100)
        self.pids, self.answers, self.fuse = [100], True, False
        self.assertTrue(zfs_oracle.revive_daemon(self.state))
        self.assertEqual(self.stopped, [100])
        self.assertEqual(self.started, [4242])
        self.assertEqual(self.recorded(), 4242)

    def test_a_hung_daemon_we_did_not_start_is_left_alone(self):
        self.write_state(None)
        self.pids = [77]
        self.assertFalse(zfs_oracle.revive_daemon(self.state))
        self.assertEqual(self.stopped, [])
        self.assertEqual(self.started, [])

    def test_an_answering_daemon_is_tried_again_without_a_restart(self):
        self.write_state(100)
        self.pids, self.answers = [4242], True
        self.assertTrue(zfs_oracle.revive_daemon(self.state))
        self.assertEqual(self.started, [])
        self.assertEqual(self.recorded(), 100)

    def test_without_a_state_nothing_is_revived(self):
        self.assertFalse(zfs_oracle.revive_daemon(None))
        self.assertFalse(zfs_oracle.revive_daemon(os.path.join(self.dir, "absent.json")))
        self.assertEqual(self.started, [])


if __name__ == "__main__":
    unittest.main()
