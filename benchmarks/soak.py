"""A long campaign watched from outside (issue 30): does anything grow, slow down or fail over an hour?

    python benchmarks/soak.py --backend ort-cpu --minutes 60 [--every 30] [--out DIR] [-- OVERRIDE ...]

Runs ``nnfuzz fuzz backend=B time=Mm fuzz.reduce=true`` (the default campaign, plus any Hydra overrides
after ``--``, e.g. ``fuzz.workers=1``) in a process of its own and samples it every ``--every`` seconds:

- RSS and PSS (MiB) of every process of the campaign, by role: the campaign, its producers, its sandbox
  workers (those of the lanes and the background reducer's), others (multiprocessing's tracker);
- open file descriptors (all of the campaign's processes together);
- disk used by the store and by its log (campaign.jsonl and its parts);
- tests/s over the last interval (the log's test records); the CPU time the campaign's processes used per
  test over it (ms), and the share of the machine's CPU time the hypervisor took (steal, /proc/stat): on a
  VM whose host is busy, tests/s can fall while nnfuzz does the same work per test;
- worker restarts (worker processes seen so far minus those alive), producer restarts (the log's
  ``producer_died``) and nnfuzz errors (the log's ``nnfuzz-error`` verdicts).

Then it checks the issue's aims between the sample nearest minute 10 (half-way through shorter
runs) and the last one: no long-lived process's RSS grows by more than 10 % (the median of up to 3 samples
at each end); tests/s at the end within 10 % of then (with the CPU per test and the steal beside it, to
tell nnfuzz slowing down from the machine giving it less); 0 nnfuzz errors; the store's growth per hour.
Figures mean something only on a quiet machine (one campaign, nothing else running).
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.proc_memory import _field_kb, tree  # noqa: E402
from nnfuzz.fuzz.producer_peak import PEAK_NOTE_MB  # noqa: E402
from nnfuzz.fuzz.runlog import parts, read_log  # noqa: E402

ROLES = ("campaign", "producer", "worker", "other")
AIM_GROWTH = 0.10   # memory of a process, and tests/s, between the reference sample and the last


def role(pid: int, root: int) -> str:
    if pid == root:
        return "campaign"
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "other"
    if "nnfuzz.fuzz.worker" in cmd:
        return "worker"
    if ("spawn_main" in cmd and "resource_tracker" not in cmd) or comm.startswith("nnfuzz-produc"):
        return "producer"
    return "other"


def fds(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def cpu_s(pid: int) -> float:
    """User and system CPU seconds a live process has used (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime (fields 14, 15)


def machine_ticks() -> tuple:
    """(steal, total) CPU ticks of the whole machine since boot (/proc/stat's first line)."""
    ticks = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    return ticks[7], sum(ticks)


def du_mb(path: Path, pattern: str = "**/*") -> float:
    return sum(p.stat().st_size for p in path.glob(pattern) if p.is_file()) / 2 ** 20 if path.exists() else 0.0


def _count(path: Path) -> Counter:
    """Counts of one file of the log (a rotated part, or the live file without the parts before it)."""
    c = Counter()
    for r in read_log(path, [], with_parts=False):  # (a line being written is noted, not counted)
        if "producer_died" in r:
            c["producer_restarts"] += 1
        elif "producers_recycled" in r:
            c["producer_recycles"] += 1
        elif r.get("verdict") == "nnfuzz-error":
            c["nnfuzz_errors"] += 1
        elif r.get("verdict") not in (None, "no-graph", "cut", "lost"):
            c["tests"] += 1
        if r.get("producer_peak_mb"):  # (fuzz/producer_peak.py: a model that made its producer's memory spike)
            c["producer_spikes"] += 1
    return c


class LogCounts:
    """Tests, nnfuzz errors and producer deaths in the campaign's log so far. A rotated part (compressed) never
    changes and is read once: re-reading the whole log every sample took a growing share of a core (an
    hour of ort-cpu is ~150,000 records), which lowered the very tests/s being measured."""

    def __init__(self, out: Path):
        self.live, self.parts = out / "campaign.jsonl", {}

    def __call__(self) -> dict:
        total = Counter()
        for part in parts(self.live) if self.live.parent.is_dir() else ():
            if part.suffix != ".bz2":
                total += _count(part)  # (being compressed)
            else:
                if part.name not in self.parts:
                    self.parts[part.name] = _count(part)
                total += self.parts[part.name]
        if self.live.is_file():
            total += _count(self.live)
        return {k: total[k] for k in ("tests", "nnfuzz_errors", "producer_restarts", "producer_recycles",
                                   "producer_spikes")}


class Sampler:
    def __init__(self, root: int, out: Path):
        self.root, self.out = root, out
        self.workers_seen = set()
        self.rows = []
        self.t0 = time.monotonic()
        self.last_tests, self.last_t = 0, self.t0
        self.log_counts = LogCounts(out)
        self.cpu_seen = {}  # pid: its CPU seconds at the last sample
        self.ticks = machine_ticks()

    def sample(self) -> dict:
        now = time.monotonic()
        procs = {}
        for pid in tree(self.root):
            r = role(pid, self.root)
            rss = _field_kb(f"/proc/{pid}/status", "VmRSS:") / 1024
            pss = _field_kb(f"/proc/{pid}/smaps_rollup", "Pss:") / 1024
            if rss:
                procs[pid] = (r, rss, pss, fds(pid))
        workers = {p for p, v in procs.items() if v[0] == "worker"}
        self.workers_seen |= workers
        counts = self.log_counts()
        tests = counts["tests"] - self.last_tests
        rate = tests / max(1e-6, now - self.last_t)
        self.last_tests, self.last_t = counts["tests"], now
        # CPU used since the last sample by the processes alive now (a process that ended since takes its last
        # interval with it: a replaced producer's few seconds)
        cpu = {pid: cpu_s(pid) for pid in procs}
        used = sum(c - self.cpu_seen.get(pid, 0.0) for pid, c in cpu.items())
        self.cpu_seen = cpu
        ticks = machine_ticks()
        steal = (ticks[0] - self.ticks[0]) / max(1, ticks[1] - self.ticks[1])
        self.ticks = ticks
        row = {"min": (now - self.t0) / 60, "procs": procs, "fds": sum(v[3] for v in procs.values()),
               "store_mb": du_mb(self.out), "log_mb": du_mb(self.out, "campaign*.jsonl*"), "tests_s": rate,
               "cpu_ms_per_test": 1000 * used / tests if tests else 0.0, "steal": steal,
               "worker_restarts": len(self.workers_seen) - len(workers), **counts}
        self.rows.append(row)
        return row


def fmt_row(row: dict) -> str:
    by = {r: [v for v in row["procs"].values() if v[0] == r] for r in ROLES}
    mem = "  ".join(f"{sum(v[1] for v in by[r]):6.0f}/{sum(v[2] for v in by[r]):6.0f} ({len(by[r])})" for r in ROLES)
    return (f"{row['min']:5.1f}  {mem}  {row['fds']:4d}  {row['store_mb']:8.1f}  {row['log_mb']:7.1f}  "
            f"{row['tests_s']:7.2f}  {row['cpu_ms_per_test']:11.1f}  {100 * row['steal']:7.1f}  {row['worker_restarts']:4d}  {row['producer_restarts']:4d}  {row['nnfuzz_errors']:4d}")


HEADER = ("  min  " + "  ".join(f"{r + ' RSS/PSS MiB (n)':>20s}" for r in ROLES)
          + "   fds  store MB   log MB  tests/s  ms CPU/test  steal %  wrst  prst  errs")


def aims(rows: list, minutes: float) -> list:
    """The issue's aims between the sample nearest minute 10 (half-way through a shorter run) and the last."""
    if len(rows) < 2:
        return ["too few samples to compare"]
    ref_min = 10.0 if minutes >= 30 else minutes / 2
    at = min(range(len(rows) - 1), key=lambda i: abs(rows[i]["min"] - ref_min))
    ref, last = rows[at], rows[-1]
    # a process's size near minute 10 and at the end: the median of the samples around each (up to 3), since one
    # sample may catch a passing peak (the ort-cpu soak's campaign: +16 to +20 MiB for a sample or two, while it
    # writes its coverage state)
    near, end = rows[max(0, at - 1):at + 2], rows[-3:]
    lines = []
    for pid, (r, _, _, _) in sorted(ref["procs"].items()):
        before, after = _median_rss(near, pid), _median_rss(end, pid)
        if pid in last["procs"] and before > 0:
            growth = after / before - 1
            flag = "ok" if growth <= AIM_GROWTH else "GROWS"
            lines.append(f"{r} {pid}: RSS {before:.0f} -> {after:.0f} MiB ({100 * growth:+.1f} %; medians of up to 3 "
                         f"samples; single samples {ref['procs'][pid][1]:.0f} -> {last['procs'][pid][1]:.0f}) {flag}")
    window = [r for r in rows if r["min"] >= ref["min"]]
    lines.append(_producers_peak(ref, window))
    def mean(key, part):
        return sum(r.get(key, 0.0) for r in part) / len(part)

    early, late = mean("tests_s", window[:3]), mean("tests_s", window[-3:])
    ok = early > 0 and abs(late / early - 1) <= AIM_GROWTH
    lines.append(f"tests/s: {early:.2f} near minute {ref['min']:.0f}, {late:.2f} at the end "
                 f"({'ok' if ok else 'CHANGED'}; means of up to 3 samples)")
    lines.append(f"CPU per test: {mean('cpu_ms_per_test', window[:3]):.1f} ms near minute {ref['min']:.0f}, "
                 f"{mean('cpu_ms_per_test', window[-3:]):.1f} at the end; the host's steal: "
                 f"{100 * mean('steal', window[:3]):.1f} % then, {100 * mean('steal', window[-3:]):.1f} % at the end, "
                 f"{100 * mean('steal', rows):.1f} % over the run")
    lines.append(f"nnfuzz errors: {last['nnfuzz_errors']} ({'ok' if last['nnfuzz_errors'] == 0 else 'NOT 0'})")
    hours = max(1e-6, (last["min"] - ref["min"]) / 60)
    lines.append(f"disk: store {last['store_mb']:.1f} MB (log {last['log_mb']:.1f} MB); "
                 f"{(last['store_mb'] - ref['store_mb']) / hours:.1f} MB/hour since minute {ref['min']:.0f}")
    lines.append(f"worker restarts {last['worker_restarts']}, producer restarts {last['producer_restarts']}, "
                 f"producers replaced on purpose {last.get('producer_recycles', 0)} (fuzz.producer_growth), "
                 f"models that took a producer over {PEAK_NOTE_MB} MB {last.get('producer_spikes', 0)} "
                 f"(campaign.jsonl: producer_peak_mb)")
    return lines


def _median_rss(rows: list, pid: int) -> float:
    got = sorted(r["procs"][pid][1] for r in rows if pid in r["procs"])
    return got[len(got) // 2] if got else 0.0


def _producers_peak(ref: dict, window: list) -> str:
    """The producers together, from the reference sample to their most at any later sample: fresh ones
    replace them as they grow (fuzz.producer_growth: new pids, which the per-process lines cannot follow)."""
    def total(row):
        return sum(v[1] for v in row["procs"].values() if v[0] == "producer")

    start, peak = total(ref), max(total(r) for r in window)
    if start <= 0:
        return "producers: none at the reference sample"
    growth = peak / start - 1
    return (f"producers together: RSS {start:.0f} MiB near minute {ref['min']:.0f}, at most {peak:.0f} MiB after "
            f"({100 * growth:+.1f} %) {'ok' if growth <= AIM_GROWTH else 'GROWS'}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="ort-cpu")
    ap.add_argument("--minutes", type=float, default=60.0)
    ap.add_argument("--every", type=float, default=30.0, help="seconds between samples")
    ap.add_argument("--out", type=Path, default=None, help="the store (default: a fresh temporary folder)")
    ap.add_argument("overrides", nargs="*", help="Hydra overrides for nnfuzz fuzz, after --")
    a = ap.parse_args(argv)
    out = a.out or Path(tempfile.mkdtemp(prefix="nnfuzz-soak-")) / "bugs"
    cmd = [sys.executable, "-m", "nnfuzz.cli", "fuzz", "--json", f"backend={a.backend}", f"time={a.minutes:g}m",
           f"fuzz.out={out}", "fuzz.reduce=true", "ui=plain", *a.overrides]
    print("soak:", " ".join(cmd), flush=True)
    errlog = out.parent / f"soak-{a.backend}.stderr"
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(errlog, "w") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL, text=True)
        s = Sampler(proc.pid, out)
        print(HEADER, flush=True)
        try:
            while proc.poll() is None:
                time.sleep(a.every)
                if proc.poll() is None:
                    print(fmt_row(s.sample()), flush=True)
        except KeyboardInterrupt:
            proc.send_signal(signal.SIGINT)
        summary = proc.communicate()[0]
    print(f"campaign exit code {proc.returncode}; its stderr: {errlog}")
    try:  # (--json: stdout is the summary document alone)
        print("summary:", json.dumps({k: v for k, v in json.loads(summary).items()
                                      if k in ("tests", "tests_per_s", "nnfuzz_errors", "lost", "producer_restarts", "producer_recycles",
                                               "bugs_saved", "reduced", "workers")}))
    except ValueError:
        print("summary: (none printed)", summary[-300:])
    for line in aims(s.rows, a.minutes):
        print("aim:", line)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
