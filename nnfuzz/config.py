"""Hydra config composition (compose API: no working-directory change, no outputs/ folder)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import List, Sequence

from nnfuzz.backends.registry import config_overrides
from nnfuzz.errors import ConfigError


def conf_dir() -> Path:
    """The YAML configs: ``NNFUZZ_CONF`` if set, else the package's ``conf/`` (in a checkout a symlink
    to the repository's top-level conf/, in an installed wheel a copy of it)."""
    env = os.environ.get("NNFUZZ_CONF")
    d = Path(env) if env else Path(__file__).resolve().parent / "conf"
    if not (d / "main.yaml").is_file():
        raise ConfigError(
            f"config folder {d} has no main.yaml; "
            + (f"NNFUZZ_CONF={env!r} must name a folder like the repository's conf/" if env else
               "this nnfuzz was installed without its configs: reinstall it (`pip install .` or the wheel), "
               "or point NNFUZZ_CONF at the repository's conf/ folder")
        )
    return d


def load_config(overrides: List[str]):
    """Compose conf/main.yaml with ``key=value`` overrides; unknown keys fail with the valid ones."""
    from hydra import compose, initialize_config_dir
    from hydra.errors import HydraException
    from omegaconf import OmegaConf

    for o in overrides:
        if "=" not in o:
            raise ConfigError(f"argument {o!r} is not key=value; example: `nnfuzz generate n=5 mgen.seed=1`")
    overrides = config_overrides(overrides, conf_dir())  # backend=<a plug-in's name>
    try:
        with initialize_config_dir(config_dir=str(conf_dir()), version_base=None):
            cfg = compose(config_name="main", overrides=list(overrides))
    except HydraException as e:
        from nnfuzz.config_errors import explain

        debug = any(o.replace(" ", "").lower() in ("debug=true", "debug=1") for o in overrides)
        raise ConfigError(explain(e, overrides, conf_dir(), _valid_keys(), debug)) from None
    OmegaConf.set_struct(cfg, True)
    return cfg


def keys_help(sections: Sequence[str], overrides: List[str]) -> str:
    """The keys under ``sections`` with their values under ``overrides`` and one line of help each
    (the comments next to them in conf/*.yaml: nnfuzz/confhelp.py)."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from nnfuzz.confhelp import config_help, format_rows, key_lines

    cfg = OmegaConf.to_container(load_config(overrides), resolve=True)  # bad keys fail here as on a run
    conf = conf_dir()
    with initialize_config_dir(config_dir=str(conf), version_base=None):
        full = compose(config_name="main", overrides=config_overrides(overrides, conf), return_hydra_config=True)
    choices = {g: str(c) for g, c in full.hydra.runtime.choices.items() if not g.startswith("hydra")}
    rows = key_lines(cfg, sections, config_help(conf, choices), conf, choices)
    return format_rows(rows)


def _valid_keys() -> List[str]:
    """Every key of the default configuration, dotted (groups such as backend= listed by Hydra)."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    with initialize_config_dir(config_dir=str(conf_dir()), version_base=None):
        cfg = OmegaConf.to_container(compose(config_name="main"))
    keys: List[str] = []

    def walk(node, prefix):
        for k, v in node.items():
            if isinstance(v, dict) and v and k not in ("tolerances", "options"):
                walk(v, f"{prefix}{k}.")
            else:
                keys.append(f"{prefix}{k}")

    walk(cfg, "")
    groups = sorted(p.name for p in conf_dir().iterdir() if p.is_dir())
    return keys + [f"{g}=<{'|'.join(sorted(f.stem for f in (conf_dir() / g).glob('*.yaml')))}>" for g in groups]


def parse_duration(value) -> float:
    """Seconds in ``30s``, ``10m``, ``8h``, ``1d`` or a plain number of seconds."""
    import re

    text = str(value).strip()
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([smhd]?)", text)
    if not m or float(m.group(1)) <= 0:
        raise ConfigError(f"time={value!r} is not a duration; use e.g. 30s, 10m, 8h or 1d")
    return float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)]


def gen_policy(cfg):
    from omegaconf import OmegaConf

    from nnfuzz.generate.policy import GenPolicy

    return GenPolicy.from_dict(OmegaConf.to_container(cfg.mgen, resolve=True))


def search_config(cfg):
    """The value search settings (the ``search`` group), or None with ``search=none``."""
    from omegaconf import OmegaConf

    from nnfuzz.materialize.search import SearchConfig

    sc = SearchConfig.from_dict(OmegaConf.to_container(cfg.search, resolve=True))
    return sc if sc.enabled else None


def export_config(cfg):
    """The models' ExportSpec template (the ``export`` section); a bad value is a ConfigError showing it."""
    from nnfuzz.materialize.onnx.spec import ExportSpec

    e = cfg.export
    timeout = e.timeout_s
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise ConfigError(f"export.timeout_s={timeout!r} must be a number of seconds > 0")
    return ExportSpec(via=str(e.via), opset=e.opset, spelling=str(e.spelling), timeout_s=float(timeout))
