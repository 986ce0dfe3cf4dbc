"""Which operators a campaign may use: the registry filtered by the policy and by a lowering."""
from __future__ import annotations

import importlib
import os
import sys
from typing import Callable, Collection, Dict, List, Optional

from nnfuzz.abstract.op import OP_REGISTRY, load_builtin_ops
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.config_errors import did_you_mean
from nnfuzz.errors import ConfigError
from nnfuzz.generate.policy import GenPolicy


def import_user_modules(modules) -> None:
    """Import ``mgen.include_modules``, looking in the working folder too (the ``nnfuzz`` console script,
    unlike ``python -m``, does not put it on the import path). It is appended, so it never shadows an
    installed module; spawned producers and sandbox workers inherit the path."""
    if modules:
        cwd = os.getcwd()
        if not any(os.path.abspath(p or ".") == cwd for p in sys.path):
            sys.path.append(cwd)
    for mod in modules:
        try:
            importlib.import_module(mod)
        except ImportError as e:
            raise ConfigError(
                f"mgen.include_modules: cannot import {mod!r} ({e}); run from the folder that "
                f"holds it (working folder: {os.getcwd()}) or put its folder on PYTHONPATH"
            ) from e


def select_ops(policy: GenPolicy, usable: Optional[Callable[[type], bool]] = None,
               dialects: Collection[str] = ()) -> List[type]:
    """Registered ops allowed by ``policy`` (include/exclude by op or family name, dtypes) and ``usable``.
    An op of a dialect (``AbsOpBase.dialect``) is kept only if its dialect is in ``dialects`` or
    ``mgen.include`` names it."""
    load_builtin_ops()
    import_user_modules(policy.include_modules)
    ops = sorted(OP_REGISTRY.values(), key=lambda c: c.name)
    names = {c.name for c in ops} | {c.family for c in ops}
    for key in ("include", "exclude", "op_weights"):
        for n in getattr(policy, key):
            if n not in names:
                raise ConfigError(f"mgen.{key} names unknown op or family {n!r}{did_you_mean(n, names)}; "
                                  f"valid: {', '.join(sorted(names))} (`nnfuzz ops` lists them)")
    if policy.include:
        ops = [c for c in ops if c.name in policy.include or c.family in policy.include]
    ops = [c for c in ops if c.name not in policy.exclude and c.family not in policy.exclude]
    ops = [c for c in ops if c.dialect is None or c.dialect in dialects or c.name in policy.include]
    allowed = policy.dtype_set
    ops = [c for c in ops if _any_row_allowed(c, allowed)]
    if usable is not None:
        ops = [c for c in ops if usable(c)]
    for c in ops:
        if not c.__module__.startswith("nnfuzz."):
            check_satisfiable(c, policy)
    if not ops:
        raise ConfigError(
            f"no operator is left after filtering (include={policy.include}, exclude={policy.exclude}, "
            f"dtypes={policy.dtypes}); widen the filters"
        )
    return ops


def op_weight(cls, policy: GenPolicy) -> float:
    w = policy.op_weights
    return w.get(cls.name, w.get(cls.family, 1.0))


_WEIGHTS: Dict[tuple, List[float]] = {}  # (ops, mgen.op_weights) -> each op's weight


def op_weights(ops: List[type], policy: GenPolicy) -> List[float]:
    """``op_weight`` of each of ``ops``, computed once per (ops, mgen.op_weights) in a process."""
    key = (tuple(ops), tuple(sorted(policy.op_weights.items())))
    hit = _WEIGHTS.get(key)
    if hit is None:
        if len(_WEIGHTS) > 1000:
            _WEIGHTS.clear()
        hit = _WEIGHTS[key] = [op_weight(c, policy) for c in ops]
    return list(hit)


def allowed_rows(op, allowed, limit=None) -> List[int]:
    """Indices of ``op``'s dtype rows (class or instance) that use only ``allowed`` dtypes and, if a
    ``limit`` set of (in_dtypes, out_dtypes) pairs is given (probed support), are in it."""
    return [k for k, (i, o) in enumerate(zip(op.in_dtypes, op.out_dtypes))
            if set(i) | set(o) <= allowed and (limit is None or (i, o) in limit)]


def _any_row_allowed(cls, allowed) -> bool:
    return bool(allowed_rows(cls, allowed))


def check_satisfiable(cls, policy: GenPolicy, tries: int = 12) -> None:
    """Raise OpDefinitionError unless ``cls``'s requires and type_transfer admit some valid instance.

    Poses the op over fresh symbolic inputs for a spread of ranks and dtype rows and asks Z3 for any
    attributes and input shapes under which requires holds and every output dim is >= 1.
    """
    import random

    import z3

    from nnfuzz.errors import ConstraintError, OpDefinitionError

    rng = random.Random(0)
    allowed = policy.dtype_set
    tried = []
    for t in range(tries):
        kw = {k: rng.choice(list(cls.attr_choices[k])) for k in cls._kw_params}
        n_var = rng.choice(cls.num_var_param) if cls.num_var_param else 0
        names = cls.sym_param_names(n_var)
        syms = [z3.Int(f"chk{t}_{n}") for n in names]
        try:
            op = cls(*syms, **kw)
        except ConstraintError:
            continue
        rows = [r for r in op.in_dtypes if set(r) <= allowed] or list(op.in_dtypes)
        row = rng.choice(rows)
        rank0 = rng.choice([r for r in op.inp_ranks[0] if r <= policy.max_rank] or list(op.inp_ranks[0])) \
            if op.n_inputs else 0
        inputs = []
        for i, dt in enumerate(row):
            viable = op.inp_ranks[i]
            r = rank0 if (op.same_inp_dims or rank0 in viable) else rng.choice(viable)
            inputs.append(AbsTensor([z3.Int(f"chk{t}_x{i}_{d}") for d in range(r)], dt))
        outs = op.checked_type_transfer(inputs)
        cons = op.checked_requires(inputs)
        cons += [d >= 1 for x in inputs for d in x.shape] + [d >= 1 for o in outs for d in o.shape]
        s = z3.Solver()
        s.set("timeout", 2000)
        s.add(*cons)
        if s.check() == z3.sat:
            return
        tried.append(f"{kw or ''} ranks {[x.ndims for x in inputs]} dtypes {[d.value for d in row]}")
    raise OpDefinitionError(
        f"operator {cls.name} ({cls.__module__}): its requires and type_transfer admit no valid instance "
        f"(every output dim >= 1) in any of {len(tried)} tries, e.g. {tried[:3]}; check that requires "
        "does not contradict type_transfer"
    )


def usable_with(lowerings, via=None):
    """The op filter for systems built from ``lowerings``: every model has a torch lowering (the value
    search and the reference run on torch); TF systems also need a TF lowering, and ONNX models written
    directly (``via="onnx"``) an ONNX lowering or else one torch's exporter can write, and those torch
    exports (``via="torch"``) no entry in NO_TORCH_EXPORT. (Ops of the "tf" dialect are offered only when every side
    is built from TF lowerings: select_ops' ``dialects``.)"""
    from nnfuzz.materialize.torch.lowering import has_torch_lowering

    needs = [has_torch_lowering]
    if "tf" in lowerings:
        from nnfuzz.materialize.tensorflow.lowering import has_tf_lowering

        needs.append(has_tf_lowering)
    if via == "onnx":  # written directly, or by torch's exporter when the op has no ONNX lowering (to_onnx)
        from nnfuzz.materialize.onnx.export import torch_exports
        from nnfuzz.materialize.onnx.lowering import has_onnx_lowering

        needs.append(lambda c: has_onnx_lowering(c) or torch_exports(c))
    elif via == "torch":
        from nnfuzz.materialize.onnx.export import torch_exports

        needs.append(torch_exports)
    return lambda c: all(f(c) for f in needs)
