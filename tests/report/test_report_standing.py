"""What the report says of each bug (issue 31): new or known, the user's note, first seen, the op its
heading names, the ONNX attributes of the blamed node, the system's message, and error boxes that show
the system's part first. Real kept bugs (bugs/kept/), copied into stores."""
import json
import re
import types

import pytest
from report_stores import KEPT, copy_bugs

from nnfuzz.cli import main
from nnfuzz.report.errbox import error_box
from nnfuzz.report.store import gather
from nnfuzz.triage.folder import BugFolderError
from nnfuzz.triage.meta import BugMeta


def _html(store, tmp_path, capsys) -> str:
    out = tmp_path / "r.html"
    assert main(["report", str(store), "-o", str(out), "--no-stats"]) == 0
    capsys.readouterr()
    return out.read_text()


def _section(html: str, bug: str) -> str:
    sec = html[html.index(f'<section class="bug" id="bug-{bug}">'):]
    return sec[:sec.index("</section>")]


def _edit(folder, **changes):
    meta = json.loads((folder / "meta.json").read_text())
    (folder / "meta.json").write_text(json.dumps({**meta, **changes}))


def test_status_new_known_and_from_the_log(tmp_path):
    store = copy_bugs(tmp_path / "s", ["0002", "0013", "0011"])
    # 0001: a HardSigmoid fault on a system no kept bug or known.yaml entry names: new
    _edit(store / "0001", system="ort-cpu")
    # 0002: the campaign's log says what it was (known as a known.yaml entry), which wins over matching now
    (store / "campaign.jsonl").write_text(json.dumps({"campaign": {"seed": 1, "started": "2026-11-26T10:00:00Z"}, "t": 0})
                                          + "\n" + json.dumps({"verdict": "inconsistency", "t": 75.0, "bug": str(store / "0002"),
                                                               "bug_status": "known", "known": "somefile.yaml entry 7 (a note)"})
                                          + "\n")
    by_id = {b.id: b for b in gather(store, with_stats=False).bugs}
    assert (by_id["0000"].status, by_id["0000"].known_as) == ("known", "bugs/kept/0002")  # its signature is 0002's
    assert by_id["0001"].status == "new" and by_id["0001"].known_as == ""
    assert (by_id["0002"].status, by_id["0002"].known_as) == ("known", "somefile.yaml entry 7 (a note)")
    from nnfuzz.report.standing import seen_text, status_text

    assert status_text(by_id["0002"]) == "known: somefile.yaml entry 7"
    assert seen_text(by_id["0002"]) == "campaign 1 at +75 s (started 2026-11-26 10:00 UTC)"
    # the note: the folder's own (meta.json note), for a copy of a kept bug the one its kept folder carries
    assert by_id["0000"].note == json.loads((KEPT / "0002" / "meta.json").read_text())["note"]
    assert "axes=[-1]" in by_id["0000"].note


def test_kept_store_reads_kept_with_notes_and_first_seen():
    data = gather(KEPT, with_stats=False)
    assert {b.status for b in data.bugs} == {"kept"}
    missing = [b.id for b in data.bugs if not b.note]
    assert missing == [], f"kept bugs without a note (meta.json note): {missing}"
    from nnfuzz.report.standing import seen_text

    unseen = [b.id for b in data.bugs if seen_text(b) == "not recorded"]
    assert unseen == []
    assert re.fullmatch(r"2026-\d\d-\d\d \d\d:\d\d UTC \(git: commit \w+ first holds the folder; .*\)",
                        seen_text(data.bugs[0])), seen_text(data.bugs[0])


def test_page_shows_status_note_op_onnx_attributes_and_the_systems_message(tmp_path, capsys):
    store = copy_bugs(tmp_path / "s", ["0002", "0001", "0017", "0013"])
    _edit(store / "0003", note="my own words <b>bold</b>")
    html = _html(store, tmp_path, capsys)
    table = html[html.index('id="bug-table"'):html.index("</table>", html.index('id="bug-table"'))]
    assert "known: bugs/kept/0002" in table and "All axes values should less than input rank" in table
    assert "Exception from src/inference/src/cpp/core.cpp:105" not in table  # the outermost wrapper is not the message
    assert "my own words &lt;b&gt;bold&lt;/b&gt;" in table
    s0 = _section(html, "0000")
    assert "Bug 0000: openvino-cpu crash in Resize" in s0
    assert "Resize(axes=[-1], " in s0 and "mode=&#x27;linear&#x27;" in s0   # the ONNX the system was given
    assert '<p class="bugnote">OpenVINO&#x27;s ONNX frontend rejects a Resize' in s0
    # kept 0001's error names no op, but the value whose producer a pass removed (root_cause method dropped)
    assert "Bug 0001: ort-cpu crash in Softplus" in _section(html, "0001")
    assert "Bug 0002: inductor-cpu crash in Sign / Max" in _section(html, "0002")
    assert '<p class="legend">' in s0 and "graph input" in s0
    # the node the error names (the graph's one Resize) is drawn red, its ONNX spelling as its third line
    node = re.search(r'<g class="node op out divergent">.*?</g>', s0, re.S).group(0)
    assert "ResizeLinear(align_corners=False)" in node and 'class="t3">ONNX Resize(axes=[-1], ' in node


def test_statistics_of_a_store_mixing_graphs_and_migrated_tests(tmp_path, capsys):
    store = copy_bugs(tmp_path / "s", ["0002", "0013", "0039"])   # 0039: a migrated test, model.onnx only
    out = tmp_path / "r.html"
    assert main(["report", str(store), "-o", str(out)]) == 0
    capsys.readouterr()
    html = out.read_text()
    stats = html[html.index('id="stats"'):]
    # gir.json would keep 2 of them, model.onnx all 3: read at the level that keeps more, and said so
    assert "<td>3</td><td>bug graphs read</td>" in stats and "ONNX op types, read from each folder" in stats
    assert "skipped-table" not in html


def test_error_box_puts_the_systems_message_and_frames_first():
    box = error_box((KEPT / "0002" / "err.log").read_text())
    lines = box.splitlines()
    assert lines[0] == "RuntimeError: Exception from src/inference/src/cpp/core.cpp:105:"
    assert box.index("All axes values should less than input rank") < box.index("Traceback")
    assert "fuzz/worker.py:138 _run, backends/openvino.py:61 compile" in box  # nnfuzz's frames, named in one line
    assert 'File "/work/main/nnfuzz/' not in box and "openvino/_ov_api.py" in box
    assert box.count("Exception from src/inference/src/cpp/core.cpp:105:") == 1  # the summary line is not repeated
    summary = "v0: 1/1 values off (max abs 0.208, max rel 0.263; rtol 0.01, atol 0.01)"
    box = error_box((KEPT / "0013" / "err.log").read_text())
    assert box.count(summary) == 1 and "[reduced from 10 to 1 nodes]" in box


def test_error_box_of_an_exception_raised_in_nnfuzz_says_so():
    err = ("ValueError: bad\n\nTraceback (most recent call last):\n  File \"/x/nnfuzz/fuzz/worker.py\", line 5, in run\n"
           "    f()\nValueError: bad\n")
    box = error_box(err)
    assert box.splitlines()[0] == "ValueError: bad" and box.count("ValueError: bad") == 1
    assert "fuzz/worker.py:5 run" in box and "raised in nnfuzz's own code" in box


def test_meta_note_and_found_are_checked():
    meta = BugMeta.from_json({"system": "ort-cpu", "symptom": "crash", "note": "n", "found": {"at": "2026-11-26T10:00:00Z"}})
    assert meta.note == "n" and meta.to_json()["found"]["at"] == "2026-11-26T10:00:00Z"
    with pytest.raises(BugFolderError, match="note=3 must be a string"):
        BugMeta.from_json({"system": "ort-cpu", "note": 3})
    with pytest.raises(BugFolderError, match="found=.* must be an object with 'at'"):
        BugMeta.from_json({"system": "ort-cpu", "found": "yesterday"})


def test_a_campaign_saves_when_it_found_a_bug():
    from nnfuzz.fuzz.saving import found_now

    ctx = types.SimpleNamespace(cfg=types.SimpleNamespace(policy=types.SimpleNamespace(seed=42)))
    found = found_now(ctx)
    assert found["campaign"] == {"seed": 42} and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", found["at"])


def test_a_folder_the_matcher_cannot_read_is_listed_not_fatal(tmp_path, monkeypatch):
    from nnfuzz.triage.known import KnownBugs

    def broken(self, meta, signature, err_log=""):
        raise TypeError("a field the matcher cannot read")

    monkeypatch.setattr(KnownBugs, "match", broken)   # no real folder reaches it: _bugs skips malformed ones first
    data = gather(copy_bugs(tmp_path / "s", ["0013"]), with_stats=False)
    assert [b.status for b in data.bugs] == ["?"] and data.bugs[0].note   # its own note still shown
    assert [(s.what, "a field the matcher cannot read" in s.error) for s in data.skipped] == [("0000", True)]


def test_error_box_of_a_signal_puts_the_crashing_threads_stack_first():
    box = error_box((KEPT / "0021" / "err.log").read_text())   # TF's Conv3D aborts: a faulthandler dump
    assert box.index("Current thread") < box.index("Thread 0x") and "gen_nn_ops.py\", line 2219 in conv3d" in box
    assert "(nnfuzz's frames left out: fuzz/lifeline.py:34 watch)" in box and 'nnfuzz/fuzz/lifeline.py"' not in box
    assert box.startswith("killed by SIGABRT")
