"""Backend names resolve in one place (nnfuzz/backends/registry.py): built-ins, the `nnfuzz.backends`
entry points of other packages, and "module:Class" paths; each backend's knowledge is read through its
class. The entry points are faked here (importlib.metadata.entry_points); tests/backends/test_plugin.py
installs a real backend package and fuzzes it."""
import importlib.metadata
import sys
import textwrap

import pytest

from nnfuzz.backends import known, registry
from nnfuzz.backends.known import classify
from nnfuzz.backends.ort import OrtBackend
from nnfuzz.config import conf_dir, load_config
from nnfuzz.errors import ConfigError
from nnfuzz.triage import rootcause

TOY = textwrap.dedent('''
    from nnfuzz.backends.base import Backend
    from nnfuzz.backends.known import Known

    class ToyBackend(Backend):
        name = "toy-cpu"
        engine = "toy"
        known = (Known(r"toy cannot do (\\w+)", op="Toy", note="the toy's own limitation"),)
        error_ops = (r"toy failed in <(\\w+)>",)
''')


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """A backend module ``toy_backend`` on sys.path, registered as ``toy-cpu`` by a faked entry point (and
    one that tries to take over the built-in name ``ort-cpu``)."""
    (tmp_path / "toy_backend.py").write_text(TOY)
    monkeypatch.syspath_prepend(str(tmp_path))
    eps = [importlib.metadata.EntryPoint(name, "toy_backend:ToyBackend", registry.ENTRY_POINT_GROUP)
           for name in ("toy-cpu", "ort-cpu")]
    real = importlib.metadata.entry_points

    def entry_points(**kw):
        return [e for e in eps if e.group == kw["group"]] if kw.get("group") == registry.ENTRY_POINT_GROUP \
            else real(**kw)

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    for cache in (known.known_of, rootcause._patterns):
        cache.cache_clear()
    yield
    for cache in (known.known_of, rootcause._patterns):
        cache.cache_clear()
    sys.modules.pop("toy_backend", None)


def test_an_entry_point_resolves_by_name_and_brings_its_knowledge(toy):
    cls = registry.backend_class("toy-cpu")
    assert cls.__module__ == "toy_backend" and cls.name == "toy-cpu"
    assert "toy-cpu" in registry.known_backends() and "ort-cpu" in registry.known_backends()
    assert registry.backend_class("ort-cpu") is OrtBackend  # a built-in name is never taken over
    k = classify("toy", "RuntimeError: toy cannot do Conv")
    assert k is not None and k.note == "the toy's own limitation" and k.op == "Toy"
    assert classify("ort", "toy cannot do Conv") is None  # the toy's knowledge is the toy's only
    assert rootcause.root_cause("RuntimeError: boom", "toy failed in <Conv>", "toy-cpu")[0] == "Conv"


def test_an_unknown_name_lists_the_built_ins_and_the_entry_points(toy):
    with pytest.raises(ConfigError) as e:
        registry.backend_class("nosuch-cpu")
    known = str(e.value).split("known backends: ", 1)[1].split(" (", 1)[0].split(", ")
    assert "'nosuch-cpu'" in str(e.value) and "toy-cpu" in known and "tvm-gpu" in known, str(e.value)


def test_module_class_paths_resolve_and_a_bad_one_says_what_is_wrong(toy):
    assert registry.backend_class("toy_backend:ToyBackend").engine == "toy"
    assert registry.backend_class("nnfuzz.backends.ort:OrtGpuBackend").name == "ort-gpu"
    with pytest.raises(ConfigError, match="has no 'NoSuch'.*ToyBackend"):
        registry.backend_class("toy_backend:NoSuch")


def test_backend_equals_an_entry_point_name_selects_it_in_the_config(toy):
    assert registry.config_overrides(["backend=toy-cpu", "time=1s"], conf_dir()) == \
        ["backend=plugin", "backend.name=toy-cpu", "time=1s"]
    assert registry.config_overrides(["backend=tvm-cpu"], conf_dir()) == ["backend=tvm-cpu"]
    cfg = load_config(["backend=toy-cpu", "+backend.options.level=2"])
    assert cfg.backend.name == "toy-cpu" and dict(cfg.backend.options) == {"level": 2}
    with pytest.raises(ConfigError, match="known backends.*toy-cpu"):
        load_config(["backend=nosuch-cpu"])


def test_every_built_in_carries_its_knowledge():
    """The knowledge lives on the classes: every built-in has known limitations, and a repro snippet
    where it has one is (what the script needs, the code that compiles MODEL, the code that fills OUTPUTS)."""
    for name in registry.BACKENDS:
        cls = registry.backend_class(name)
        assert cls.known, name
        assert cls.repro_onnx is None or len(cls.repro_onnx) == 3 and "OUTPUTS" in cls.repro_onnx[2] \
            and "OUTPUTS" not in cls.repro_onnx[1] and "MODEL" in cls.repro_onnx[1], name


@pytest.mark.slow
def test_reading_every_backends_knowledge_imports_no_framework():
    """The knowledge is data next to the backend: reading all of it (known limitations, error patterns,
    snippets, templates) imports neither the systems nor torch/onnx."""
    import subprocess

    code = ("import sys; from nnfuzz.backends.registry import builtin_classes; from nnfuzz.backends.known import "
            "classify; from nnfuzz.triage.rootcause import root_cause; "
            "[(c.known, c.error_ops, c.repro_onnx, c.repro_gir, c.issue_template) for c in builtin_classes()]; "
            "assert classify('tvm', 'TopK k must be a constant'); root_cause('E: x', 'Node (a) Op (Mul)'); "
            "print([m for m in ('torch', 'onnx', 'tensorflow', 'tvm', 'onnxruntime', 'openvino', 'tensorrt') "
            "if m in sys.modules])")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stdout + r.stderr
