"""The operator library's layout (nnfuzz/ops/<family>/<aspect>.py): the families are the folder
listing, each op declares the family it lives in, and the aspects stay apart (the generator's
aspects import no framework)."""
import pathlib
import subprocess
import sys

import pytest

import nnfuzz.ops
from nnfuzz.abstract import load_builtin_ops
from nnfuzz.ops import ASPECTS, families

OPS_DIR = pathlib.Path(nnfuzz.ops.__file__).parent


def test_every_builtin_op_declares_the_family_of_its_folder():
    builtin = [c for c in load_builtin_ops().values() if c.__module__.startswith("nnfuzz.ops.")]
    assert len(builtin) >= 100
    wrong = [(c.name, c.family, c.__module__) for c in builtin if c.__module__ != f"nnfuzz.ops.{c.family}.spec"]
    assert not wrong, f"ops whose family is not their folder: {wrong}"
    assert {c.family for c in builtin} == set(families())


def test_families_are_the_folders_and_hold_only_aspect_modules():
    folders = sorted(p.name for p in OPS_DIR.iterdir() if p.is_dir() and (p / "__init__.py").exists())
    assert families() == folders
    for fam in folders:
        mods = {p.stem for p in (OPS_DIR / fam).glob("*.py")} - {"__init__"}
        assert "spec" in mods and mods <= set(ASPECTS), f"{fam}: {sorted(mods)}"


@pytest.mark.slow
def test_generator_aspects_import_no_framework():
    code = ("import sys\nfrom nnfuzz.ops import load_aspect\nfor a in ('spec', 'ranges', 'numpy'): load_aspect(a)\n"
            "from nnfuzz.abstract.ranges import RANGE_RULES\nassert len(RANGE_RULES) > 50\n"
            "print([m for m in ('torch', 'onnx', 'tensorflow', 'tvm', 'onnxruntime') if m in sys.modules])")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.stdout.strip() == "[]", r.stdout + r.stderr


def test_one_op_lives_in_one_folder():
    """The issue's check: an op's name appears in its own family's folder and nowhere else in nnfuzz."""
    root = OPS_DIR.parent
    hits = {p.relative_to(root).parts[:-1] for p in root.rglob("*.py") if "LeakyRelu" in p.read_text()}
    assert hits == {("ops", "elementwise")}, hits


def test_op_table_dispatches_on_the_nearest_registered_base():
    from multipledispatch import Dispatcher

    from nnfuzz.abstract.optable import OpTable

    class Base: ...
    class Mid(Base): ...
    class Leaf(Mid): ...

    table = OpTable("test")
    assert isinstance(table._dispatcher, Dispatcher)
    assert table.lookup(Leaf) is None
    table.register(Base)(len)
    assert table.lookup(Leaf) is len  # a cached None must not survive a registration
    table[Mid] = abs
    assert table.lookup(Leaf) is abs and table.lookup(Base) is len
    assert set(table) == {Base, Mid} and Mid in table and table.get(Leaf) is None
    del table[Mid]
    assert table.lookup(Leaf) is len and len(table) == 1


def test_an_unknown_aspect_is_an_error():
    from nnfuzz.ops import load_aspect

    with pytest.raises(ValueError, match="relay"):
        load_aspect("relay")


def test_a_second_thread_waits_for_the_aspect_import_under_way(monkeypatch):
    """Two lanes localizing at once: the second caller used to return while the first was still importing,
    and found no numpy eval for the op ("operator Add has no numpy reference eval")."""
    import threading

    importing, release = threading.Event(), threading.Event()
    real_import = nnfuzz.ops.importlib.import_module

    def slow_import(name):
        importing.set()
        release.wait(5)
        return real_import(name)

    load_aspect_ = nnfuzz.ops.load_aspect
    monkeypatch.setattr(nnfuzz.ops, "_loaded", set())
    monkeypatch.setattr(nnfuzz.ops.importlib, "import_module", slow_import)
    first = threading.Thread(target=load_aspect_, args=("numpy",))
    first.start()
    assert importing.wait(5)
    seen = []
    second = threading.Thread(target=lambda: (load_aspect_("numpy"), seen.append(set(nnfuzz.ops._loaded))))
    second.start()
    second.join(0.2)
    assert second.is_alive(), "the second caller returned while the first was still importing"
    release.set()
    first.join(5)
    second.join(5)
    assert seen == [{"numpy"}]
