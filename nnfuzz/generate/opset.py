"""Which operators a campaign may use: the registry filtered by the policy and by a lowering."""
from __future__ import annotations

import importlib
from typing import Callable, List, Optional

from nnfuzz.abstract.op import OP_REGISTRY, load_builtin_ops
from nnfuzz.errors import ConfigError
from nnfuzz.generate.policy import GenPolicy


def import_user_modules(modules) -> None:
    for mod in modules:
        try:
            importlib.import_module(mod)
        except ImportError as e:
            raise ConfigError(
                f"mgen.include_modules: cannot import {mod!r} ({e}); make sure it is on PYTHONPATH "
                "(e.g. run from the folder that contains it)"
            ) from e


def select_ops(policy: GenPolicy, usable: Optional[Callable[[type], bool]] = None) -> List[type]:
    """Registered ops allowed by ``policy`` (include/exclude by op or family name, dtypes) and ``usable``."""
    load_builtin_ops()
    import_user_modules(policy.include_modules)
    ops = sorted(OP_REGISTRY.values(), key=lambda c: c.name)
    names = {c.name for c in ops} | {c.family for c in ops}
    for key in ("include", "exclude"):
        for n in getattr(policy, key):
            if n not in names:
                raise ConfigError(f"mgen.{key} names unknown op or family {n!r}; valid: {sorted(names)}")
    for n in policy.op_weights:
        if n not in names:
            raise ConfigError(f"mgen.op_weights names unknown op or family {n!r}; valid: {sorted(names)}")
    if policy.include:
        ops = [c for c in ops if c.name in policy.include or c.family in policy.include]
    ops = [c for c in ops if c.name not in policy.exclude and c.family not in policy.exclude]
    allowed = policy.dtype_set
    ops = [c for c in ops if _any_row_allowed(c, allowed)]
    if usable is not None:
        ops = [c for c in ops if usable(c)]
    if not ops:
        raise ConfigError(
            f"no operator is left after filtering (include={policy.include}, exclude={policy.exclude}, "
            f"dtypes={policy.dtypes}); widen the filters"
        )
    return ops


def op_weight(cls, policy: GenPolicy) -> float:
    w = policy.op_weights
    return w.get(cls.name, w.get(cls.family, 1.0))


def _any_row_allowed(cls, allowed) -> bool:
    return any(set(i) | set(o) <= allowed for i, o in zip(cls.in_dtypes, cls.out_dtypes))
