"""GraphIR: a concrete graph of abstract ops in SSA form, serialised as JSON (never pickle).

Vars are named and typed by AbsTensor. ``inputs`` are fed by the user, ``weights`` are placeholders
finalised as model parameters, every instruction reads defined vars and defines new ones, and
``outputs`` are the vars nothing consumes.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set

from nnfuzz.abstract.op import AbsOpBase, op_from_json
from nnfuzz.abstract.tensor import AbsTensor
from nnfuzz.errors import InternalError

GIR_VERSION = 1


@dataclass
class Inst:
    op: AbsOpBase
    inputs: List[str]
    outputs: List[str]


@dataclass
class ShapeFamily:
    """The shapes a dynamic graph is valid over (docs/dynamic-shapes.md). ``dims``: per input, per axis,
    the name of the symbol that axis takes (None: the axis is static); ``assignments``: concrete values
    of every symbol, each satisfying every op's ``requires``. The graph's ``vars`` hold assignment 0."""

    dims: Dict[str, List[Optional[str]]]
    assignments: List[Dict[str, int]]

    def symbols(self) -> List[str]:
        return sorted({s for axes in self.dims.values() for s in axes if s is not None})

    def input_shape(self, shape: List[int], name: str, k: int) -> List[int]:
        """Input ``name`` (of static ``shape``, assignment 0's) under assignment ``k``."""
        axes = self.dims.get(name) or [None] * len(shape)
        return [int(d) if s is None else int(self.assignments[k][s]) for d, s in zip(shape, axes)]

    def to_json(self) -> dict:
        return {"dims": {k: list(v) for k, v in self.dims.items()},
                "assignments": [{s: int(v) for s, v in a.items()} for a in self.assignments]}

    @staticmethod
    def from_json(data: dict) -> "ShapeFamily":
        dims = {str(k): [None if s is None else str(s) for s in v] for k, v in data["dims"].items()}
        fam = ShapeFamily(dims, [{str(s): int(v) for s, v in a.items()} for a in data["assignments"]])
        missing = [(k, a) for k, a in enumerate(fam.assignments) if set(a) != set(fam.symbols())]
        if missing:
            raise ValueError(f"gir.json family: assignment {missing[0][0]} gives {sorted(missing[0][1])}, "
                             f"expected every symbol {fam.symbols()}")
        return fam


@dataclass
class GraphIR:
    vars: Dict[str, AbsTensor] = field(default_factory=dict)
    inputs: List[str] = field(default_factory=list)
    weights: List[str] = field(default_factory=list)
    insts: List[Inst] = field(default_factory=list)
    outputs: List[str] = field(default_factory=list)
    family: Optional[ShapeFamily] = None  # a dynamic graph's shapes (None: static, the default)

    @property
    def n_shapes(self) -> int:
        return 1 if self.family is None else len(self.family.assignments)

    def at(self, k: int) -> "GraphIR":
        """The static graph of assignment ``k`` of the family (types recomputed by each op's rules, which
        the family's every assignment satisfies); a static graph is its own only assignment."""
        if self.family is None:
            if k != 0:
                raise InternalError(f"GraphIR.at({k}): a static graph has one shape")
            return self
        vars = dict(self.vars)
        for i in self.inputs:
            vars[i] = AbsTensor(self.family.input_shape(self.vars[i].shape, i, k), self.vars[i].dtype)
        for inst in self.insts:
            outs = inst.op.checked_type_transfer([vars[v] for v in inst.inputs])
            vars.update((v, AbsTensor([int(d) for d in t.shape], t.dtype)) for v, t in zip(inst.outputs, outs))
        return GraphIR(vars, list(self.inputs), list(self.weights), list(self.insts), list(self.outputs)).check()

    @property
    def n_nodes(self) -> int:
        return len(self.insts)

    def feeding(self, vars) -> Set[int]:
        """The indices of the instructions whose outputs reach ``vars`` (their ancestors)."""
        made = {v: k for k, inst in enumerate(self.insts) for v in inst.outputs}
        feeds, todo = set(), [made[v] for v in vars if v in made]
        while todo:
            k = todo.pop()
            if k not in feeds:
                feeds.add(k)
                todo.extend(made[v] for v in self.insts[k].inputs if v in made)
        return feeds

    def sub(self, keep, outputs) -> "GraphIR":
        """The graph of the instructions at indices ``keep`` (in program order) with ``outputs`` as its
        outputs, and only the vars, inputs and weights they use."""
        insts = [inst for k, inst in enumerate(self.insts) if k in keep]
        used = {v for inst in insts for v in (*inst.inputs, *inst.outputs)}
        return dataclasses.replace(self, vars={n: t for n, t in self.vars.items() if n in used},
                                   inputs=[i for i in self.inputs if i in used],
                                   weights=[w for w in self.weights if w in used], insts=insts, outputs=list(outputs))

    def op_names(self) -> List[str]:
        return [inst.op.name for inst in self.insts]

    def check(self, types: bool = True) -> "GraphIR":
        """Well-formedness: SSA, topological order, types agree with each op's rules (``types``: the
        generator, whose every insertion passed the same rules on these types, leaves that out).
        Raises InternalError."""
        defined = set()
        for name in self.inputs + self.weights:
            if name in defined:
                raise InternalError(f"GraphIR: var {name} defined twice")
            if name not in self.vars:
                raise InternalError(f"GraphIR: placeholder {name} has no type")
            defined.add(name)
        used = set()
        for k, inst in enumerate(self.insts):
            for v in inst.inputs:
                if v not in defined:
                    raise InternalError(f"GraphIR: instruction {k} ({inst.op!r}) reads {v} before it is defined")
                used.add(v)
            if not types:
                for v in inst.outputs:
                    if v in defined or v not in self.vars:
                        raise InternalError(f"GraphIR: var {v} defined twice or untyped")
                    defined.add(v)
                continue
            ins = [self.vars[v] for v in inst.inputs]
            want = inst.op.checked_type_transfer(ins)
            bad = [p for p in inst.op.checked_requires(ins) if p is not True]
            if bad:
                raise InternalError(f"GraphIR: instruction {k} ({inst.op!r}) violates its requires on {ins}")
            for v, w in zip(inst.outputs, want):
                if v in defined:
                    raise InternalError(f"GraphIR: var {v} defined twice")
                got = self.vars.get(v)
                if got is None or got.to_json() != w.to_json():
                    raise InternalError(f"GraphIR: {v} is typed {got} but {inst.op!r} gives {w}")
                defined.add(v)
        for v in self.outputs:
            if v not in defined:
                raise InternalError(f"GraphIR: output {v} is not defined")
        held = [f"{v}: {self.vars[v]}" for v in self.inputs + self.weights + self.outputs
                if self.vars[v].dtype.quant_only]
        if held:
            raise InternalError(f"GraphIR: graph inputs, weights or outputs {held} hold a quantized-tensor type, "
                                "which only flows from a QuantizeLinear to a DequantizeLinear (DType.quant_only)")
        unused = [v for v in self.inputs + self.weights if v not in used]
        if unused:
            raise InternalError(f"GraphIR: placeholders {unused} are never used")
        return self

    # ---- serialisation ----------------------------------------------------------------------
    def to_json(self) -> dict:
        fam = {} if self.family is None else {"family": self.family.to_json()}
        return {
            **fam,
            "version": GIR_VERSION,
            "vars": {k: t.to_json() for k, t in self.vars.items()},
            "inputs": list(self.inputs),
            "weights": list(self.weights),
            "insts": [{"op": i.op.to_json(), "inputs": i.inputs, "outputs": i.outputs} for i in self.insts],
            "outputs": list(self.outputs),
        }

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=1)

    @staticmethod
    def from_json(data: dict) -> "GraphIR":
        if data.get("version") != GIR_VERSION:
            raise ValueError(f"gir.json version {data.get('version')!r} is not supported (expected {GIR_VERSION})")
        return GraphIR(
            vars={k: AbsTensor.from_json(t) for k, t in data["vars"].items()},
            inputs=list(data["inputs"]),
            weights=list(data["weights"]),
            insts=[Inst(op_from_json(i["op"]), list(i["inputs"]), list(i["outputs"])) for i in data["insts"]],
            outputs=list(data["outputs"]),
            family=ShapeFamily.from_json(data["family"]) if data.get("family") is not None else None,
        )

    @staticmethod
    def loads(text: str) -> "GraphIR":
        return GraphIR.from_json(json.loads(text))

    # ---- display ----------------------------------------------------------------------------
    def pretty(self) -> str:
        lines = []
        for v in self.inputs:
            sym = "" if self.family is None or v not in self.family.dims else f" dims {self.family.dims[v]}"
            lines.append(f"%{v}: {self.vars[v]}{sym} = input")
        for v in self.weights:
            lines.append(f"%{v}: {self.vars[v]} = weight")
        for inst in self.insts:
            lhs = ", ".join(f"%{v}: {self.vars[v]}" for v in inst.outputs)
            rhs = ", ".join(f"%{v}" for v in inst.inputs)
            lines.append(f"{lhs} = {inst.op!r}({rhs})")
        lines.append("return " + ", ".join(f"%{v}" for v in self.outputs))
        if self.family is not None:
            lines.append(f"shapes {self.family.assignments}")
        return "\n".join(lines)

    def to_dot(self) -> str:
        out = ["digraph G {"]
        for v in self.inputs + self.weights:
            out.append(f'  "{v}" [shape=box label="{v}\\n{self.vars[v]}"];')
        for k, inst in enumerate(self.insts):
            out.append(f'  n{k} [label="{inst.op.name}"];')
            for v in inst.inputs:
                src = next((f"n{j}" for j, i in enumerate(self.insts) if v in i.outputs), f'"{v}"')
                out.append(f'  {src} -> n{k} [label="{self.vars[v]}"];')
        out.append("}")
        return "\n".join(out)
