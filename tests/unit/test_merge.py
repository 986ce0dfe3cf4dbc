"""`nnfuzz merge`: stores of campaigns run apart become one, renumbered and re-deduplicated; sources are
never changed; unreadable folders and symbolic links are reported, not copied."""
import hashlib
import json
import shutil
from pathlib import Path

from nnfuzz.cli import main
from nnfuzz.triage.bugstore import load_bug

KEPT = Path(__file__).parent.parent.parent / "bugs" / "kept"


def _store(tmp_path, name, ids):
    root = tmp_path / name
    root.mkdir()
    for k, i in enumerate(ids):
        shutil.copytree(KEPT / i, root / f"{k:04d}")
    return root


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        h.update(str(p.relative_to(root)).encode())
        if p.is_file() and not p.is_symlink():
            h.update(p.read_bytes())
    return h.hexdigest()


def test_two_stores_merge_renumbered_and_deduplicated(tmp_path, capsys):
    a = _store(tmp_path, "a", ["0000", "0001"])
    b = _store(tmp_path, "b", ["0001", "0002"])  # b/0000 is the same bug as a/0001
    before = _digest(a), _digest(b)
    out = tmp_path / "c"
    assert main(["merge", "--json", str(a), str(b), "-o", str(out)]) == 0
    s = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (s["merged"], s["duplicates"], s["unique_in_store"]) == (4, 1, 3)
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["0000", "0001", "0002", "0003"]
    third = load_bug(out / "0002")
    assert third.meta.duplicate_of == "0001" and third.meta.extra["merged_from"] == str(b / "0000")
    assert (out / "0000" / "original").is_dir()  # whole folders are copied
    assert (_digest(a), _digest(b)) == before
    index = json.loads((out / "index.json").read_text())
    assert index["bugs"] == 4 and index["unique"] == 3


def test_merging_into_a_store_continues_its_numbering(tmp_path, capsys):
    out = _store(tmp_path, "out", ["0000"])
    b = _store(tmp_path, "b", ["0000", "0002"])
    assert main(["merge", "--json", str(b), "-o", str(out)]) == 0
    s = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (s["merged"], s["duplicates"]) == (2, 1)
    assert load_bug(out / "0001").meta.duplicate_of == "0000" and load_bug(out / "0002").meta.duplicate_of is None


def test_hostile_folders_are_reported_and_left_out(tmp_path, capsys):
    a = _store(tmp_path, "a", ["0000", "0002"])
    (a / "0000" / "oracle.pkl").write_bytes(b"cos\nsystem\n(S'echo pwned'\ntR.")  # a pickle that would run code
    (a / "0001" / "leak").symlink_to("/etc/passwd")
    out = tmp_path / "c"
    assert main(["merge", "--json", str(a), "-o", str(out)]) == 0
    captured = capsys.readouterr()
    s = json.loads(captured.out.strip().splitlines()[-1])
    assert s["merged"] == 1 and len(s["unreadable"]) == 1 and str(a / "0000") in s["unreadable"][0]
    assert "symbolic link not copied" in captured.err and not (out / "0000" / "leak").exists()


def test_bad_arguments(tmp_path, capsys):
    assert main(["merge", str(tmp_path)]) == 2
    assert "-o OUT" in capsys.readouterr().err
    assert main(["merge", str(tmp_path / "nope"), "-o", str(tmp_path / "c")]) == 2
    assert "is not a folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["merge", str(tmp_path / "empty"), "-o", str(tmp_path / "c")]) == 2
    assert main(["merge", str(tmp_path / "empty"), "-o", str(tmp_path / "empty")]) == 2


def test_weights_spelled_as_constant_nodes_are_read_back(tmp_path):
    """The direct ONNX path may write a weight as a Constant node instead of an initializer: reduction
    and replays still find it (bug_weights)."""
    import numpy as np
    import onnx
    from onnx import helper

    from nnfuzz.triage.bugstore import bug_weights

    root = _store(tmp_path, "a", ["0000"])
    bug = load_bug(root / "0000")
    want = bug_weights(bug)
    assert want and set(want) == {"w0"}
    m = onnx.load(str(root / "0000" / "model.onnx"))
    init = m.graph.initializer[0]
    m.graph.node.insert(0, helper.make_node("Constant", [], [init.name], value=init))
    del m.graph.initializer[:]
    onnx.save(m, str(root / "0000" / "model.onnx"))
    got = bug_weights(load_bug(root / "0000"))
    assert got is not None and np.array_equal(got["w0"], want["w0"])
