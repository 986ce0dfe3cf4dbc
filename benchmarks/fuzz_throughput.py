"""Campaign throughput with the sandbox on: tests per second for 10-node graphs, and where the time goes.

    python benchmarks/fuzz_throughput.py [--seconds 120] [--backends ort-cpu,tvm-cpu] [--oracle optlevel]
                                         [--via onnx,torch]

For each backend (default: every CPU backend that can run here): a campaign of --seconds (after a
warm-up that fills the probe cache), printing tests/s and the share of time in generation / value
search / export / compile / run / IPC (sandbox round trip). compile and execute include the oracle's
expected side when it is another run (TF eager for xla-cpu and tflite-cpu, the unoptimised run for
--oracle optlevel). ``--no-search`` measures the same with plain random values. ``--via`` names the
ONNX paths measured (onnx: written directly, opsets and spellings drawn; torch: torch's exporter at
opset 17), one campaign each. ``--no-reduce`` turns the background reducer off (fuzz.reduce defaults to on).
With producer processes, generation and export overlap the tests, so their shares are of the
producers' summed time and the shares can add up to more than 100%. ``system`` is the share of the
campaign's wall time spent in the system's own compile + execute (timed in the sandbox worker);
``first test`` when the first test ended (producers warming up, probe); ``peak RSS`` the peak over
time of the resident memory summed over every process of the campaign (the campaign's, producers,
sandbox workers), sampled from /proc, with the same for PSS (shared pages split) beside it. The
measured campaign runs in a fresh process, as ``nnfuzz fuzz`` does.
``disk`` is the campaign's output folder (campaign log, bug folders, state files) per hour of campaign
and extrapolated to 8 hours at the measured rate; the log is rotated and compressed (fuzz/runlog.py),
so a short campaign's log is mostly its uncompressed live file (at most 2 MiB) and overstates the
hourly figure. Bugs go to a temporary folder that is deleted afterwards.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
from proc_memory import PeakMemory  # noqa: E402


def one(backend: str, seconds: float, out: Path, producers: int, search: bool = True, oracle: str = "reference",
        via: str = "onnx", reduce: bool = True):
    from nnfuzz.fuzz.campaign import CampaignConfig, run_campaign
    from nnfuzz.generate.policy import GenPolicy
    from nnfuzz.materialize.onnx.spec import ExportSpec
    from nnfuzz.materialize.search import SearchConfig

    export = ExportSpec(via="onnx", opset=None) if via == "onnx" else ExportSpec(via="torch", opset=17)
    cc = CampaignConfig(backend=backend, backend_options={}, policy=GenPolicy(max_nodes=10, seed=1),
                        time_s=seconds, out=out, ui="plain", producers=producers,
                        search=SearchConfig() if search else None, oracle=oracle, export=export, reduce=reduce)
    return run_campaign(cc)


def measured(params: dict) -> SimpleNamespace:
    """The measured campaign, run as ``nnfuzz fuzz`` runs it: in a fresh process (whose own imports
    overlap the producers' start), with the peak memory of that process and all below it."""
    cmd = [sys.executable, __file__, "--measure", json.dumps(params)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    with PeakMemory(root=proc.pid) as mem:
        out, _ = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"the measured campaign failed (exit code {proc.returncode}); its output is above")
    c = SimpleNamespace(**json.loads(out.strip().splitlines()[-1]))
    c.mem = mem
    return c


def _measure(params: dict) -> None:
    """In the fresh process: run the campaign, print its counters as one JSON line."""
    params["out"] = Path(params["out"])
    c = one(**params)
    print(json.dumps({"tests": c.tests, "rate": c.rate(), "elapsed": c.elapsed, "seconds": dict(c.seconds),
                      "verdicts": dict(c.verdicts),
                      "first_test": getattr(c, "first_test", None)}))  # (None: a tree from before it was kept)


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--measure":
        return _measure(json.loads(sys.argv[2]))
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=120.0)
    ap.add_argument("--backends", default="all", help="comma-separated names, or all (the CPU ones usable here)")
    ap.add_argument("--oracle", default="reference", help="reference | optlevel | devices")
    ap.add_argument("--warmup", type=float, default=60.0, help="seconds of the probe-filling warm-up campaign")
    ap.add_argument("--producers", type=int, default=2, help="model-producing processes (0: in-process)")
    ap.add_argument("--no-search", action="store_true", help="plain random values (search=none)")
    ap.add_argument("--via", default="onnx,torch", help="ONNX paths to measure: onnx, torch or both")
    ap.add_argument("--no-reduce", action="store_true",
                    help="fuzz.reduce=false (the default reduces each new root cause in the background, on a core of its own)")
    args = ap.parse_args()
    rows = []
    for backend in _backends(args.backends):
        for via in args.via.split(","):
            with tempfile.TemporaryDirectory() as tmp:
                one(backend, args.warmup, Path(tmp) / "warm", 0, oracle=args.oracle, via=via)  # probing: not measured
                c = measured(dict(backend=backend, seconds=args.seconds, out=str(Path(tmp) / "bugs"),
                                  producers=args.producers, search=not args.no_search, oracle=args.oracle, via=via,
                                  reduce=not args.no_reduce))
                c.disk = disk_use(Path(tmp) / "bugs")
            secs = c.seconds
            total = c.elapsed
            phases = ("generate", "search", "export", "compile", "execute", "ipc")
            share = {k: 100.0 * secs.get(k, 0.0) / total for k in phases}
            other = 100.0 - sum(share.values()) if args.producers == 0 else float("nan")  # overlapping shares
            system = share["compile"] + share["execute"]
            rows.append((f"{backend} via={via}", c, share, other, system, c.mem))
    print(f"\n10-node graphs, {args.seconds:g}s campaigns, sandbox on, {args.producers} producer processes, "
          f"value search {'off' if args.no_search else 'on'}, oracle {args.oracle}, reduce {'off' if args.no_reduce else 'on'}")
    for backend, c, share, other, system, mem in rows:
        parts = "  ".join(f"{k} {v:4.1f}%" for k, v in share.items())
        first = f"{c.first_test:.1f}s" if c.first_test is not None else "never"
        print(f"{backend:22s} {c.rate:6.1f} tests/s ({c.tests} tests)  system {system:4.1f}%  first test {first}  "
              f"peak RSS {mem.rss_mb:5.0f} MiB (PSS {mem.pss_mb:5.0f}, {mem.processes} processes)")
        print(f"{'':22s} {parts}  other {other:4.1f}%  verdicts {dict(c.verdicts)}")
        print(f"{'':22s} {disk_line(c.disk, c.elapsed, c.tests)}")


def disk_use(out: Path) -> dict:
    """Bytes of a campaign's output folder: its log (the live campaign.jsonl, its rotated .bz2 parts and
    campaign.minutes.jsonl: fuzz/runlog.py), its bug folders, and the rest (state files)."""
    import shutil

    from nnfuzz.fuzz.runlog import LOG, RunLog, minutes_path, parts

    log_files = {LOG, minutes_path(out / LOG).name} | {p.name for p in parts(out / LOG)}
    use = {"log": 0, "bugs": 0, "other": 0, "folders": 0, "live": 0, "live_packed": 0}
    if (out / LOG).is_file():  # the live file as its rotation would compress it
        with tempfile.TemporaryDirectory() as tmp:
            part = Path(tmp) / "campaign.000.jsonl"
            shutil.copyfile(out / LOG, part)
            RunLog._compress(part)
            use["live"], use["live_packed"] = (out / LOG).stat().st_size, part.with_name(part.name + ".bz2").stat().st_size
    for p in out.iterdir() if out.is_dir() else ():
        if p.is_dir():
            use["bugs"] += sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
            use["folders"] += 1
        else:
            use["log" if p.name in log_files else "other"] += p.stat().st_size
    return use


def disk_line(use: dict, elapsed: float, tests: int) -> str:
    """Disk per hour of campaign, and over 8 hours at the campaign's rate: the log counted as rotated
    (its live file as compressed, plus one live file of ROTATE_BYTES at the end), bug folders as saved;
    the state files (rewritten, not appended to) once."""
    from nnfuzz.fuzz.runlog import ROTATE_BYTES

    hours = max(elapsed, 1e-9) / 3600
    log = use["log"] - use["live"] + use["live_packed"]
    per_h = (log + use["bugs"]) / hours
    return (f"disk {per_h / 1e6:7.1f} MB/h, {(8 * per_h + ROTATE_BYTES + use['other']) / 1e6:7.1f} MB per 8 h "
            f"(log {log / hours / 1e6:.1f} MB/h = {log / max(tests, 1):.1f} B/test compressed, "
            f"live file {use['live'] / 1e6:.1f} MB; {use['folders']} bug folders "
            f"{use['bugs'] / hours / 1e6:.1f} MB/h)")


def _backends(arg: str):
    """The named backends, or every CPU backend whose check_available passes here."""
    from nnfuzz.backends.base import BackendUnavailable
    from nnfuzz.backends.registry import BACKENDS, backend_class

    if arg != "all":
        return arg.split(",")
    usable = []
    for name in sorted(BACKENDS):
        cls = backend_class(name)
        if cls.device != "cpu":
            continue
        try:
            cls.check_available()
            usable.append(name)
        except BackendUnavailable as e:
            print(f"skipping {name}: {e}")
    return usable


if __name__ == "__main__":
    main()
