"""GraphIR: a concrete graph of abstract ops in SSA form, serialised as JSON (never pickle).

Vars are named and typed by AbsTensor. ``inputs`` are fed by the user, ``weights`` are placeholders
finalised as model parameters, every instruction reads defined vars and defines new ones, and
``outputs`` are the vars nothing consumes.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Dict, List

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
class GraphIR:
    vars: Dict[str, AbsTensor] = field(default_factory=dict)
    inputs: List[str] = field(default_factory=list)
    weights: List[str] = field(default_factory=list)
    insts: List[Inst] = field(default_factory=list)
    outputs: List[str] = field(default_factory=list)

    @property
    def n_nodes(self) -> int:
        return len(self.insts)

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
        unused = [v for v in self.inputs + self.weights if v not in used]
        if unused:
            raise InternalError(f"GraphIR: placeholders {unused} are never used")
        return self

    # ---- serialisation ----------------------------------------------------------------------
    def to_json(self) -> dict:
        return {
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
        )

    @staticmethod
    def loads(text: str) -> "GraphIR":
        return GraphIR.from_json(json.loads(text))

    # ---- display ----------------------------------------------------------------------------
    def pretty(self) -> str:
        lines = []
        for v in self.inputs:
            lines.append(f"%{v}: {self.vars[v]} = input")
        for v in self.weights:
            lines.append(f"%{v}: {self.vars[v]} = weight")
        for inst in self.insts:
            lhs = ", ".join(f"%{v}: {self.vars[v]}" for v in inst.outputs)
            rhs = ", ".join(f"%{v}" for v in inst.inputs)
            lines.append(f"{lhs} = {inst.op!r}({rhs})")
        lines.append("return " + ", ".join(f"%{v}" for v in self.outputs))
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
