"""The torch (``gir``) form of a dynamic model is shape-generic only if its lowerings make the same
constants at every shape (nnfuzz/materialize/dynamic.py): GatherElements' indices are made from the
input's sizes (static_tensor), which torch.compile keeps as one constant for every shape, so inductor
refused every such dynamic model ("assume_constant_result argument conversion failed"), and the campaign
took it for a limitation of torch's: 20 of an inductor-cpu campaign's 44 dynamic tests were lost."""
import random

import torch

from nnfuzz.generate import GenPolicy, generate_graph
from nnfuzz.generate.dynamic import lift
from nnfuzz.materialize.dynamic import build_dynamic
from nnfuzz.materialize.torch.lowering import static_calls


def test_a_lowering_whose_constant_follows_a_symbolic_size_keeps_the_gir_form_static():
    whys = []
    for seed in range(12):
        g = generate_graph(GenPolicy(max_nodes=1, dtypes=["float32"], include=["GatherElements"]), seed=seed)
        fam = lift(g, 4096, random.Random(seed))
        if fam is None:
            continue
        b = build_dynamic(fam, seed, export=False)
        if b.family is None:
            continue
        whys.append(b.forms["gir"])
        if b.forms["gir"] == "dynamic":  # its constants do not follow the symbols: one for every shape
            made = []
            for s in b.shapes:
                with static_calls() as calls:
                    b.model.module(*[torch.from_numpy(s.input[i]) for i in b.model.gir.inputs])
                made.append(calls)
            assert all(m == made[0] for m in made), seed
    assert any(w.startswith("a lowering makes a constant from a symbolic size") for w in whys), whys
