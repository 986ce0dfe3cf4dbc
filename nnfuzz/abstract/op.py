"""AbsOpBase: the extension point every operator subclasses, and the registry it fills.

An operator declares
  * ``in_dtypes`` (or its documented spelling ``inp_dtypes``) / ``out_dtypes``: one tuple per viable
    dtype combination (row i of one goes with row i of the other);
  * ``inp_ranks`` / ``out_ranks``: one tuple of viable ranks per input / output (class defaults,
    overridable per instance in ``__init__``);
  * ``weight_inputs``: indices of inputs that must come from a fresh placeholder (a weight or model
    input), for kernels whose shape exporters need to know statically;
  * ``__init__(self, *symbolic_ints, **choices)``: positional parameters are symbolic ints solved by
    Z3 (a ``*args`` parameter takes a count from ``num_var_param``); keyword-only parameters are
    discrete choices drawn from ``attr_choices``;
  * ``type_transfer(inputs) -> outputs`` (or its documented spelling ``type_infer``) and
    ``requires(inputs) -> [predicates]``; both run on z3 terms during generation and on ints after
    (``//`` and ``%`` work on both: see nnfuzz.abstract.arith for where they differ);
  * optionally ``deduct_inp_ranks_and_dtype(outputs)`` for backward insertion.

``UnaryOpBase`` / ``BinaryOpBase`` preset one or two inputs and one output. docs/operator-api.md
documents the whole API. Callers use the ``checked_*`` wrappers, which validate counts, ranks and dtypes and name the operator
in every error. Defining a concrete subclass registers it under ``name`` (default: the class name).
"""
from __future__ import annotations

from typing import Any, ClassVar, Dict, List, Optional, Sequence, Tuple

from nnfuzz.abstract import arith
from nnfuzz.abstract.accuracy import Accuracy
from nnfuzz.abstract.dtype import DType
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.abstract.opdef import ATTR_KINDS, OP_REGISTRY, read_signature, register, resolve_aliases, validate_class
from nnfuzz.errors import ConstraintError, ControlSignal, InternalError, NNFuzzError, OpDefinitionError

MAX_RANK = 5
RANK_ALL: Tuple[int, ...] = tuple(range(MAX_RANK + 1))


def ranks(lo: int, hi: int = MAX_RANK) -> Tuple[int, ...]:
    """The ranks lo..hi inclusive."""
    return tuple(range(lo, hi + 1))

__all__ = ["AbsOpBase", "UnaryOpBase", "BinaryOpBase", "OP_REGISTRY", "ATTR_KINDS", "MAX_RANK", "RANK_ALL",
           "ranks", "op_from_json", "load_builtin_ops"]


class AbsOpBase:
    # ---- declared by subclasses -------------------------------------------------------------
    in_dtypes: ClassVar[List[Tuple[DType, ...]]] = []
    inp_dtypes: ClassVar[List[Tuple[DType, ...]]] = []  # the documented spelling of in_dtypes (either works)
    out_dtypes: ClassVar[List[Tuple[DType, ...]]] = []
    num_var_param: ClassVar[Optional[List[int]]] = None
    same_inp_dims: ClassVar[bool] = False
    weight_inputs: ClassVar[Tuple[int, ...]] = ()  # inputs always fed by a fresh placeholder (e.g. conv kernels)
    attr_choices: ClassVar[Dict[str, Sequence[Any]]] = {}
    attr_kinds: ClassVar[Dict[str, str]] = {}
    inp_ranks: List[Tuple[int, ...]] = [RANK_ALL]
    out_ranks: List[Tuple[int, ...]] = [RANK_ALL]
    # None: every system is offered the op. "tf": an op TF has and the core set lacks, offered to systems
    # whose models are all built with TF lowerings (and wherever mgen.include names it)
    dialect: ClassVar[Optional[str]] = None
    # input index -> the Domain (nnfuzz/abstract/domain.py) every element of that input must lie in; the
    # generator's range check and the value search's loss are both derived from it
    domains: ClassVar[Dict[int, "Domain"]] = {}
    # input index -> the Kink (nnfuzz/abstract/kink.py) where the op's derivative jumps; the value search keeps
    # values a margin away from it when gradients are compared (oracle=grad)
    kinks: ClassVar[Dict[int, "Kink"]] = {}
    # how far a correct kernel may be from the exactly rounded result (nnfuzz/abstract/accuracy.py); an op
    # that declares none is judged leniently, as if it could accumulate all of its largest input
    accuracy: ClassVar[Accuracy] = Accuracy(16, 1.0, "largest")
    # how quantization tools quantize the op in a QDQ graph (nnfuzz/generate/qdq.py): "compute" (its float
    # inputs dequantized, its output quantized), "same" (data movement: its output keeps its input's scale)
    # or None (left in float); ``qdq_weight``: (input index, axis) of its weight, quantized per output channel
    # along that axis (None: per tensor only)
    qdq: ClassVar[Optional[str]] = None
    qdq_weight: ClassVar[Optional[Tuple[int, Optional[int]]]] = None

    # ---- filled on class creation -----------------------------------------------------------
    name: ClassVar[str]
    family: ClassVar[str]
    _abstract: ClassVar[bool] = True
    _sym_params: ClassVar[Tuple[str, ...]] = ()
    _var_param: ClassVar[Optional[str]] = None
    _kw_params: ClassVar[Tuple[str, ...]] = ()

    def __init_subclass__(cls, abstract: bool = False, **kwargs):
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__:
            cls.name = cls.__name__
        if "family" not in cls.__dict__ and not any("family" in b.__dict__ for b in cls.__mro__[1:-1]):
            cls.family = cls.__module__.rsplit(".", 1)[-1]
        cls._abstract = abstract
        resolve_aliases(cls)
        read_signature(cls)
        if not abstract:
            validate_class(cls)
            register(cls)

    def __new__(cls, *args, **kwargs):
        if cls._abstract:
            raise OpDefinitionError(f"{cls.__name__} is an abstract operator family; instantiate a subclass")
        obj = super().__new__(cls)
        object.__setattr__(obj, "_args", args)  # (not aliased names: past __setattr__)
        object.__setattr__(obj, "_kwargs", kwargs)
        return obj

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise OpDefinitionError(
                f"{type(self).__name__} takes no attributes but got args={args} kwargs={kwargs}; "
                "declare them as parameters of its __init__"
            )

    def __setattr__(self, name, value):
        if name in _INSTANCE_ALIASES:  # ``self.inp_dtypes = ...`` in __init__ sets in_dtypes too, and back
            object.__setattr__(self, _INSTANCE_ALIASES[name], value)
        object.__setattr__(self, name, value)

    # ---- hooks ------------------------------------------------------------------------------
    def type_transfer(self, inputs: List[AbsTensor]) -> List[AbsTensor]:
        raise NotImplementedError(f"{self.name} must implement type_transfer")

    def type_infer(self, inputs: List[AbsTensor]) -> List[AbsTensor]:
        """The documented spelling of ``type_transfer``: a class defines either one, both name it."""
        return self.type_transfer(inputs)

    def requires(self, inputs: List[AbsTensor]) -> list:
        return []

    def deduct_inp_ranks_and_dtype(self, outputs: List[AbsTensor], rng=None) -> List[Tuple[int, DType]]:
        """Input (rank, dtype) pairs that can produce ``outputs``. Default: rank-preserving op."""
        in_row = self._pick_in_row([o.dtype for o in outputs], rng)
        rank = outputs[0].ndims
        if any(rank not in r for r in self.inp_ranks):
            raise ConstraintError(f"{self.name} cannot take rank-{rank} inputs")
        return [(rank, dt) for dt in in_row]

    # ---- checked wrappers -------------------------------------------------------------------
    def checked_type_transfer(self, inputs: List[AbsTensor], validated: bool = False) -> List[AbsTensor]:
        """``type_transfer`` with its inputs and outputs validated (``validated``: the caller just ran
        ``checked_requires`` on the same inputs, which validated them)."""
        if not validated:
            self._check_inputs(inputs)
        try:
            outputs = self.type_transfer(list(inputs))
        except (NNFuzzError, ControlSignal):
            raise
        except Exception as e:
            raise OpDefinitionError(
                f"{self!r}.type_transfer raised {type(e).__name__}: {e} on inputs {_fmt(inputs)}{_hint(e)}"
            ) from e
        self._check_outputs(inputs, outputs)
        return outputs

    def checked_requires(self, inputs: List[AbsTensor], validated: bool = False) -> list:
        """``requires`` flattened, True dropped (``validated``: as for ``checked_type_transfer``)."""
        if not validated:
            self._check_inputs(inputs)
        try:
            preds = self.requires(list(inputs))
        except (NNFuzzError, ControlSignal):
            raise
        except Exception as e:
            raise OpDefinitionError(
                f"{self!r}.requires raised {type(e).__name__}: {e} on inputs {_fmt(inputs)}{_hint(e)}"
            ) from e
        if not isinstance(preds, (list, tuple)):
            raise OpDefinitionError(f"{self.name}.requires must return a list of predicates, got {preds!r}")
        out = []
        for p in preds:
            if p is True:  # the common case on concrete values, checked first
                continue
            if p is False:
                out.append(False)
            elif isinstance(p, _BoolRef):
                out.append(p)
            else:
                out += self._nested_preds([p])
        return out

    def _nested_preds(self, preds) -> list:
        """``preds`` flattened (nested lists allowed), True dropped; anything else not a bool or z3
        predicate is an OpDefinitionError."""
        out = []
        for p in arith._flatten(preds):
            if isinstance(p, bool):
                if not p:
                    out.append(False)
            elif isinstance(p, _BoolRef):
                out.append(p)
            else:
                raise OpDefinitionError(
                    f"{self.name}.requires returned {p!r} ({type(p).__name__}); expected a bool or z3 predicate"
                )
        return out

    def checked_deduct(self, outputs: List[AbsTensor], rng=None) -> List[Tuple[int, DType]]:
        pairs = self.deduct_inp_ranks_and_dtype(outputs, rng)
        if len(pairs) != self.n_inputs:
            raise OpDefinitionError(
                f"{self.name}.deduct_inp_ranks_and_dtype returned {len(pairs)} inputs, expected {self.n_inputs}"
            )
        return pairs

    # ---- helpers for subclasses -------------------------------------------------------------
    def out_dtypes_for(self, inputs: List[AbsTensor]) -> Tuple[DType, ...]:
        key = tuple(t.dtype for t in inputs)
        for i, row in enumerate(self.in_dtypes):
            if row == key:
                return self.out_dtypes[i]
        raise InternalError(f"{self.name}: no dtype row for inputs {key}; rows: {self.in_dtypes}")

    def _pick_in_row(self, out_dts, rng) -> Tuple[DType, ...]:
        key = tuple(out_dts)
        rows = [self.in_dtypes[i] for i, r in enumerate(self.out_dtypes) if r == key]
        if not rows:
            raise ConstraintError(f"{self.name} cannot produce dtypes {key}")
        return rows[rng.randrange(len(rows))] if rng is not None else rows[0]

    # ---- introspection ----------------------------------------------------------------------
    @property
    def n_inputs(self) -> int:
        return len(self.inp_ranks)

    @property
    def n_outputs(self) -> int:
        return len(self.out_ranks)

    @property
    def args(self) -> tuple:
        return self._args

    @property
    def kwargs(self) -> dict:
        return self._kwargs

    @property
    def attrs(self) -> Dict[str, Any]:
        """Attribute names to values, in declaration order (a ``*args`` parameter becomes a list)."""
        out: Dict[str, Any] = {}
        n = len(self._sym_params)
        for pname, v in zip(self._sym_params, self._args[:n]):
            out[pname] = v
        if self._var_param is not None:
            out[self._var_param] = list(self._args[n:])
        out.update(self._kwargs)
        return out

    @classmethod
    def sym_param_names(cls, n_var: int = 0) -> List[str]:
        names = list(cls._sym_params)
        if cls._var_param is not None:
            names += [f"{cls._var_param}{i}" for i in range(n_var)]
        return names

    @classmethod
    def attr_kind(cls, pname: str) -> str:
        if pname in cls.attr_kinds:
            return cls.attr_kinds[pname]
        if cls._var_param is not None and pname.startswith(cls._var_param):
            return cls.attr_kinds.get(cls._var_param, "size")
        return "size"

    def is_concrete(self) -> bool:
        return not any(arith.is_sym(a) for a in self._args)

    def to_json(self) -> dict:
        return {
            "op": self.name,
            "module": type(self).__module__,
            "args": [_enc(a) for a in self._args],
            "kwargs": {k: _enc(v) for k, v in self._kwargs.items()},
        }

    def __repr__(self) -> str:
        parts = []
        for k, v in self.attrs.items():
            parts.append(f"{k}={v}")
        return f"{self.name}({', '.join(parts)})"

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.is_concrete() and other.is_concrete() and \
            self._args == other._args and self._kwargs == other._kwargs

    def __hash__(self) -> int:
        return hash((self.name, self._args if self.is_concrete() else id(self)))

    # ---- validation -------------------------------------------------------------------------
    def _check_inputs(self, inputs: List[AbsTensor]) -> None:
        ranks = self.inp_ranks
        if len(inputs) != len(ranks):
            raise InternalError(f"{self!r} takes {self.n_inputs} inputs, got {len(inputs)}: {_fmt(inputs)}")
        for i, (t, viable) in enumerate(zip(inputs, ranks)):
            if len(t.shape) not in viable:
                raise InternalError(f"{self!r} input {i} has rank {t.ndims}, viable ranks {viable}")
        if self.same_inp_dims and len({len(t.shape) for t in inputs}) > 1:
            raise InternalError(f"{self!r} needs inputs of one rank, got {_fmt(inputs)}")
        key = tuple([t.dtype for t in inputs])
        if key not in self.in_dtypes:
            raise InternalError(f"{self!r} got input dtypes {key}, viable: {self.in_dtypes}")

    def _check_outputs(self, inputs, outputs) -> None:
        if not isinstance(outputs, (list, tuple)) or not all(isinstance(o, AbsTensor) for o in outputs):
            raise OpDefinitionError(f"{self!r}.type_transfer must return a list of AbsTensor, got {outputs!r}")
        if len(outputs) != len(self.out_ranks):
            raise OpDefinitionError(
                f"{self!r}.type_transfer returned {len(outputs)} outputs but out_ranks declares {self.n_outputs}"
            )
        for i, (o, viable) in enumerate(zip(outputs, self.out_ranks)):
            if len(o.shape) not in viable:
                raise OpDefinitionError(
                    f"{self!r}.type_transfer gave output {i} rank {o.ndims}, outside out_ranks {viable} "
                    f"(inputs {_fmt(inputs)})"
                )
        key = tuple([o.dtype for o in outputs])
        if key not in self.out_dtypes:
            raise OpDefinitionError(
                f"{self!r}.type_transfer gave output dtypes {key}, not among out_dtypes {self.out_dtypes}"
            )


class UnaryOpBase(AbsOpBase, abstract=True):
    """One input, one output, any rank (``inp_ranks``/``out_ranks`` narrow it, per class or in ``__init__``).

    The dtype tables are the subclass's: ``inp_dtypes``/``out_dtypes``, one row per viable combination."""

    inp_ranks = [RANK_ALL]
    out_ranks = [RANK_ALL]


class BinaryOpBase(AbsOpBase, abstract=True):
    """Two inputs, one output, any ranks (narrowed by ``inp_ranks``/``out_ranks``); dtype rows are pairs,
    e.g. ``inp_dtypes = [(DType.float32, DType.float32)]`` with ``out_dtypes = [(DType.float32,)]``."""

    inp_ranks = [RANK_ALL, RANK_ALL]
    out_ranks = [RANK_ALL]


_INSTANCE_ALIASES = {"inp_dtypes": "in_dtypes", "in_dtypes": "inp_dtypes"}
_BoolRef = arith.z3.BoolRef


def _enc(v):
    if isinstance(v, DType):
        return {"dtype": v.value}
    if isinstance(v, (list, tuple)):
        return [_enc(x) for x in v]
    if arith.is_sym(v):
        raise ValueError(f"cannot serialise symbolic attribute {v}")
    return v


def _dec(v):
    if isinstance(v, dict) and set(v) == {"dtype"}:
        return DType.parse(v["dtype"])
    if isinstance(v, list):
        return tuple(_dec(x) for x in v)
    return v


def _hint(e: Exception) -> str:
    text = str(e)
    on_terms = isinstance(e, TypeError) and ("ArithRef" in text or "BoolRef" in text or "Z3" in text)
    if on_terms or "cannot be cast to concrete Boolean" in text:  # max(), min(), if/and/or on a z3 term
        return ("; the rules also run on z3 terms: use nnfuzz.abstract.arith (smax/smin for max/min, "
                "If/And/Or for if/and/or); // and % work on symbolic ints directly")
    return ""


def _fmt(tensors) -> str:
    return "[" + ", ".join(str(t) for t in tensors) + "]"


def op_from_json(data: dict) -> AbsOpBase:
    name = data.get("op")
    cls = OP_REGISTRY.get(name)
    if cls is None:
        load_builtin_ops()
        cls = OP_REGISTRY.get(name)
    if cls is None:
        raise OpDefinitionError(
            f"unknown operator {name!r} (defined in module {data.get('module')!r}); import that module first, "
            "e.g. with mgen.include_modules=[...]"
        )
    return cls(*[_dec(a) for a in data.get("args", [])], **{k: _dec(v) for k, v in data.get("kwargs", {}).items()})


def load_builtin_ops() -> Dict[str, type]:
    """Import nnfuzz's own operator library (idempotent) and return the registry."""
    from nnfuzz.ops import load_aspect

    load_aspect("spec")  # registers on import

    return OP_REGISTRY
