"""What happens once, when an operator class is defined: read its signature, accept the documented
spellings, validate its tables, and register it by name."""
from __future__ import annotations

import inspect
from typing import Dict

from nnfuzz.abstract.dtype import DType
from nnfuzz.errors import OpDefinitionError

# Kinds of symbolic attribute, used by attribute binning.
ATTR_KINDS = ("size", "pad", "index", "any")

OP_REGISTRY: Dict[str, type] = {}

# The documented spelling -> nnfuzz's name. Both stay readable; a class that defines both must give them
# one value.
ALIASES = {"inp_dtypes": "in_dtypes", "type_infer": "type_transfer"}


def resolve_aliases(cls) -> None:
    """Make each alias pair name one value on ``cls``: whichever of the two the class itself defines."""
    where = f"operator {cls.__module__}.{cls.__qualname__}"
    for doc_name, name in ALIASES.items():
        own = cls.__dict__
        if doc_name in own and name in own and own[doc_name] is not own[name] and own[doc_name] != own[name]:
            raise OpDefinitionError(
                f"{where} defines both {doc_name} and {name} with different values; they are two spellings "
                f"of one thing: keep one ({doc_name} = {own[doc_name]!r}, {name} = {own[name]!r})"
            )
        if doc_name in own:
            setattr(cls, name, own[doc_name])
        elif name in own:
            setattr(cls, doc_name, own[name])


def read_signature(cls) -> None:
    init = cls.__dict__.get("__init__")
    if init is None:
        return  # inherited
    sym, var, kw = [], None, []
    for p in list(inspect.signature(init).parameters.values())[1:]:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            sym.append(p.name)
        elif p.kind == p.VAR_POSITIONAL:
            var = p.name
        elif p.kind == p.KEYWORD_ONLY:
            kw.append(p.name)
    cls._sym_params, cls._var_param, cls._kw_params = tuple(sym), var, tuple(kw)


def validate_class(cls) -> None:
    where = f"operator {cls.__module__}.{cls.__qualname__}"
    if not cls.in_dtypes or not cls.out_dtypes:
        raise OpDefinitionError(
            f"{where} must declare non-empty dtype tables, e.g. "
            "in_dtypes = [(DType.float32,)] and out_dtypes = [(DType.float32,)] (in_dtypes may be spelled inp_dtypes)"
        )
    if len(cls.in_dtypes) != len(cls.out_dtypes):
        raise OpDefinitionError(
            f"{where}: in_dtypes has {len(cls.in_dtypes)} rows but out_dtypes has {len(cls.out_dtypes)}; "
            "row i of one pairs with row i of the other"
        )
    for rows, label in ((cls.in_dtypes, "in_dtypes"), (cls.out_dtypes, "out_dtypes")):
        for row in rows:
            if not isinstance(row, tuple) or not all(isinstance(d, DType) for d in row):
                raise OpDefinitionError(f"{where}: each {label} row must be a tuple of DType, got {row!r}")
    if cls._var_param is None and cls.num_var_param is not None:
        raise OpDefinitionError(f"{where} sets num_var_param but its __init__ has no *args parameter")
    if cls._var_param is not None and not cls.num_var_param:
        raise OpDefinitionError(f"{where} has *{cls._var_param} in __init__; list its accepted counts in num_var_param")
    for k in cls._kw_params:
        if k not in cls.attr_choices or not cls.attr_choices[k]:
            raise OpDefinitionError(f"{where}: keyword-only attribute {k!r} needs a non-empty attr_choices[{k!r}]")
    for k, v in cls.attr_kinds.items():
        if v not in ATTR_KINDS:
            raise OpDefinitionError(f"{where}: attr_kinds[{k!r}] = {v!r}; valid kinds: {ATTR_KINDS}")


def register(cls) -> None:
    prev = OP_REGISTRY.get(cls.name)
    if prev is not None and (prev.__module__, prev.__qualname__) != (cls.__module__, cls.__qualname__):
        raise OpDefinitionError(
            f"operator name {cls.name!r} of {cls.__module__}.{cls.__qualname__} is already taken by "
            f"{prev.__module__}.{prev.__qualname__}; set a distinct class attribute `name = ...`"
        )
    OP_REGISTRY[cls.name] = cls
