"""The campaign log's bounds (fuzz/runlog.py, fuzz/logcodec.py): the live file is rotated at its size
into compressed parts, the reader gives back every record in order across them, a killed campaign's
cut last line is noted and never an error, and the per-minute aggregates add up to the tests logged.
No processes: records are written as a campaign writes them, with their own ``t``."""
import bz2
import json
import random

import pytest

from nnfuzz.fuzz import logcodec
from nnfuzz.fuzz.runlog import LogError, RunLog, minutes_path, parts, read_log, read_minutes

OPS = ["Add", "Conv2d", "ReduceSum", "Shrink", "Gather", "Softmax", "Cast", "Where"]
VERDICTS = ["pass"] * 5 + ["unsupported"] * 3 + ["crash", "inconsistency", "no-graph", "nnfuzz-error"]


def _records(n: int, seed: int = 0) -> list:
    """``n`` per-test records shaped as fuzz/loop.py logs them, 0.05 s apart."""
    rng = random.Random(seed)
    out = []
    for k in range(n):
        t = round(k * 0.05 + 1.0, 3)
        v = rng.choice(VERDICTS)
        if v in ("no-graph", "nnfuzz-error"):
            out.append({"seed": 100 + k, "worker": "w0", "began": round(t - 0.01, 3), "verdict": v,
                        "error": "ConstraintError: no graph", "t": t})
            continue
        ops = [rng.choice(OPS) for _ in range(rng.randint(1, 10))]
        rec = {"seed": 100 + k, "nodes": len(ops), "ops": ops, "opset": rng.randint(14, 27),
               "search": {"ok": rng.random() < 0.9, "ms": round(rng.random(), 2)}, "worker": f"w{k % 2}",
               "began": round(t - 0.012, 3), "verdict": v, "format": "onnx", "stage": "compile" if v == "crash" else None,
               "seconds": {"generate": round(rng.random() / 50, 4), "search": 0.0003, "export": 0.0021,
                           "compile": round(rng.random() / 100, 4), "execute": 0.0004, "ipc": 0.0033}}
        if v in ("crash", "inconsistency"):
            rec["bug"] = f"/store/{k:04d}"
        rec.update(ended=t, t=t)
        out.append(rec)
    return out


def _write(path, recs, rotate_bytes=20_000):
    log = RunLog(path, rotate_bytes=rotate_bytes)
    log.write({"campaign": {"seed": 100, "backend": "fake-cpu"}, "t": 0.5})
    for r in recs:
        log.write(r)
    log.write({"campaign_end": {"stopped": None, "tests": len(recs), "lost": 0}, "t": recs[-1]["t"] + 0.1})
    log.close()


def _same(a: dict, b: dict) -> bool:
    """Equal, phase seconds to the millisecond (the compact spelling's precision)."""
    sa, sb = a.get("seconds", {}), b.get("seconds", {})
    return ({**a, "seconds": None} == {**b, "seconds": None} and set(sa) == set(sb)
            and all(abs(sa[k] - sb[k]) <= 0.0005 + 1e-12 for k in sa))


def test_the_live_log_is_rotated_at_its_size_into_compressed_parts(tmp_path):
    live = tmp_path / "campaign.jsonl"
    _write(live, _records(1500))
    names = sorted(p.name for p in tmp_path.iterdir())
    got = parts(live)
    assert len(got) >= 10 and all(p.suffix == ".bz2" for p in got), names
    assert [p.name for p in got] == [f"campaign.{k:03d}.jsonl.bz2" for k in range(len(got))]
    assert set(names) - {p.name for p in got} == {"campaign.jsonl", "campaign.minutes.jsonl"}, names  # no plain part
    assert live.stat().st_size < 20_000 + 1000          # what is left since the last rotation
    for p in got:  # each part: compact per-test lines, the size of ~1/10 of what it held
        lines = bz2.open(p, "rt").read().splitlines()
        assert lines and all(logcodec.is_compact(json.loads(x)) for x in lines if '"v"' in x)
        assert p.stat().st_size < 20_000 / 5


def test_the_reader_returns_every_record_in_order_across_the_parts(tmp_path):
    recs = _records(1500)
    _write(tmp_path / "campaign.jsonl", recs)
    log = list(read_log(tmp_path))
    assert log[0]["campaign"]["seed"] == 100 and log[-1]["campaign_end"]["tests"] == 1500
    body = log[1:-1]
    assert len(body) == len(recs) and [r["seed"] for r in body] == [r["seed"] for r in recs]
    assert all(_same(a, b) for a, b in zip(body, recs)), next((a, b) for a, b in zip(body, recs) if not _same(a, b))


def test_a_cut_last_line_is_noted_and_the_next_campaign_starts_on_a_line_of_its_own(tmp_path, capsys):
    live = tmp_path / "campaign.jsonl"
    recs = _records(20)
    _write(live, recs[:10])
    with open(live, "a") as fh:   # killed while writing a line
        fh.write(json.dumps(recs[10])[:37])
    problems = []
    assert len(list(read_log(tmp_path, problems))) == 12
    assert len(problems) == 1 and problems[0][0] == "campaign.jsonl line 13" and "cut" in problems[0][1]
    assert len(list(read_log(tmp_path))) == 12  # without a list: a note on stderr, no error
    assert "campaign.jsonl line 13 cut (the campaign was killed" in capsys.readouterr().err
    _write(live, recs[11:])                      # a campaign resumed into the same store
    problems = []
    log = list(read_log(tmp_path, problems))
    assert [r["seed"] for r in log if "seed" in r] == [r["seed"] for r in recs if r is not recs[10]]
    assert len(problems) == 1 and "cut" in problems[0][1] and json.dumps(recs[10])[:37] in problems[0][1]
    with open(live, "a") as fh:                  # a broken line that is whole is an error
        fh.write("{not json}\n")
    with pytest.raises(LogError, match=r"campaign.jsonl line \d+"):
        list(read_log(tmp_path))


def test_a_part_left_plain_by_a_killed_campaign_is_read_then_compressed(tmp_path):
    live = tmp_path / "campaign.jsonl"
    recs = _records(300)
    _write(live, recs)
    first = parts(live)[0]
    plain = first.with_name(first.name[:-len(".bz2")])
    plain.write_bytes(bz2.decompress(first.read_bytes()))  # as if killed between the rename and the compressing
    first.unlink()
    assert parts(live)[0] == plain and len(list(read_log(tmp_path))) == 302
    RunLog(live).close()                          # the next campaign compresses it
    assert parts(live)[0] == first and not plain.exists() and len(list(read_log(tmp_path))) == 302


def test_minutes_add_up_to_the_tests_logged(tmp_path):
    recs = _records(3000)   # 150 s: two whole minutes and a part of a third
    _write(tmp_path / "campaign.jsonl", recs, rotate_bytes=50_000)
    lines = read_minutes(tmp_path)
    assert "campaign" in lines[0] and "campaign_end" in lines[-1] and minutes_path(tmp_path / "campaign.jsonl").is_file()
    minutes = [x["minute"] for x in lines if "minute" in x]
    assert [m["m"] for m in minutes] == [0, 1, 2] and minutes[1]["span_s"] == 60.0
    tested = [r for r in recs if r["verdict"] in ("pass", "unsupported", "crash", "inconsistency")]
    assert sum(m["tests"] for m in minutes) == len(tested)
    for v in set(VERDICTS):
        assert sum(m["verdicts"].get(v, 0) for m in minutes) == sum(r["verdict"] == v for r in recs), v
    assert [b for m in minutes for b in m["bugs"]] == [r["bug"].rsplit("/", 1)[1] for r in recs if "bug" in r]
    assert sorted(o for m in minutes for o in m["ops_new"]) == sorted({o for r in tested for o in r["ops"]})
    total = sum(r["seconds"]["compile"] for r in recs if "seconds" in r)
    assert abs(sum(m["seconds"]["compile"] for m in minutes) - total) < 1e-3
    assert minutes[1]["rate"] == pytest.approx(minutes[1]["tests"] / 60, abs=0.01)


def test_the_compact_spelling_keeps_what_it_cannot_spell():
    rec = {"seed": 1, "ops": ["A B"], "verdict": "pass", "t": 2.0, "seconds": {"mine": 0.5}, "extra": [1]}
    enc = logcodec.encode(rec)
    assert enc["o"] == ["A B"] and enc["ms"] == {"mine": 500} and enc["extra"] == [1]
    assert logcodec.decode(enc) == rec
    clash = {"seed": 1, "verdict": "pass", "t": 1.0, "v": "mine"}   # a key the spelling uses: kept as it is
    assert logcodec.encode(clash) is clash and logcodec.decode(clash) == clash
    with pytest.raises(ValueError, match="'ms'"):
        logcodec.decode({"v": "pass", "T": 1.0, "ms": "x"})
