"""Backends by name (``<engine>-<device>``, the system meta.json records), loaded lazily: the one place a
backend name becomes its class.

A name is a built-in backend (``BACKENDS``), a backend another package registers in the
``nnfuzz.backends`` entry-point group (the entry's name is the backend's name, its value
``"module:Class"``: docs/backends.md), or a ``"module:Class"`` path itself. A backend's module is
imported only when the backend is named.
"""
from __future__ import annotations

import importlib
from typing import Dict, List, Optional

from nnfuzz.errors import ConfigError

ENTRY_POINT_GROUP = "nnfuzz.backends"

BACKENDS = {
    "ort-cpu": "nnfuzz.backends.ort:OrtBackend",
    "tvm-cpu": "nnfuzz.backends.tvm:TvmCpuBackend",
    "tvm-gpu": "nnfuzz.backends.tvm:TvmGpuBackend",
    "ort-gpu": "nnfuzz.backends.ort:OrtGpuBackend",
    "openvino-cpu": "nnfuzz.backends.openvino:OpenVinoBackend",
    "inductor-cpu": "nnfuzz.backends.inductor:InductorCpuBackend",
    "inductor-gpu": "nnfuzz.backends.inductor:InductorGpuBackend",
    "trt-gpu": "nnfuzz.backends.tensorrt:TensorRtBackend",
    "tf-cpu": "nnfuzz.backends.tf:TfEagerBackend",
    "xla-cpu": "nnfuzz.backends.tf:XlaCpuBackend",
    "xla-gpu": "nnfuzz.backends.tf:XlaGpuBackend",
    "tflite-cpu": "nnfuzz.backends.tflite:TfliteBackend",
}


def plugin_backends() -> Dict[str, str]:
    """The backends other packages register: ``{name: "module:Class"}`` of the ``nnfuzz.backends``
    entry points installed in this environment (a built-in name cannot be taken over)."""
    from importlib.metadata import entry_points

    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name not in BACKENDS}


def known_backends() -> List[str]:
    """Every backend name this environment knows: the built-ins and the entry points, sorted."""
    return sorted({*BACKENDS, *plugin_backends()})


def known_target(name: str) -> Optional[str]:
    """The ``"module:Class"`` that backend ``name`` names, or None where nothing here resolves it."""
    if name in BACKENDS:
        return BACKENDS[name]
    plugins = plugin_backends()
    if name in plugins:
        return plugins[name]
    return name if ":" in str(name) else None


def target_of(name: str) -> str:
    """The ``"module:Class"`` that backend ``name`` names; ConfigError listing the known names if none."""
    target = known_target(name)
    if target is not None:
        return target
    from nnfuzz.config_errors import did_you_mean

    known = sorted({*BACKENDS, *plugin_backends()})
    raise ConfigError(f"backend={name!r} is unknown{did_you_mean(name, known)}; known backends: {', '.join(known)} "
                      f"(or a 'module:Class' path; other packages add backends through the "
                      f"{ENTRY_POINT_GROUP!r} entry-point group: docs/backends.md)")


def backend_class(name: str):
    """The class of backend ``name``: a built-in or entry-point name, or ``"module:Class"``. Imports its
    module (backends import their framework only when used, so this stays light)."""
    target = target_of(name)
    mod, _, cls_name = target.partition(":")
    if not mod or not cls_name:
        raise ConfigError(f"backend {name!r} names {target!r}; expected 'module:Class', e.g. "
                          f"'nnfuzz.backends.ort:OrtBackend'")
    module = importlib.import_module(mod)
    try:
        return getattr(module, cls_name)
    except AttributeError:
        raise ConfigError(f"backend {name!r} names {target!r}, but module {mod!r} has no {cls_name!r}; "
                          f"its public names: {sorted(n for n in vars(module) if not n.startswith('_'))}") from None


def builtin_classes():
    """The built-in backends' classes, one per name, in ``BACKENDS`` order (imports their modules)."""
    return [backend_class(n) for n in BACKENDS]


def get_backend(name: str, **options):
    """An instance of backend ``name``; raises BackendUnavailable if it cannot run on this machine."""
    cls = backend_class(name)
    cls.check_available()
    return cls(**options)


PLUGIN_GROUP_OPTION = "plugin"  # conf/backend/plugin.yaml: the config of a backend with no YAML of its own


def config_overrides(overrides, conf) -> list:
    """``overrides`` with ``backend=NAME`` for a backend that has no ``conf/backend/NAME.yaml`` (an entry
    point's name, or "module:Class") turned into ``backend=plugin backend.name=NAME`` (its options then
    come as ``+backend.options.KEY=VALUE``). An unknown name fails here with the list of known ones."""
    out = []
    for o in overrides:
        key, _, name = o.partition("=")
        if key == "backend" and name and not (conf / "backend" / f"{name}.yaml").is_file():
            target_of(name)  # unknown: ConfigError listing the known names
            out += [f"backend={PLUGIN_GROUP_OPTION}", f"backend.name={name}"]
        else:
            out.append(o)
    return out
