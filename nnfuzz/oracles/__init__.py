"""The oracles: what one kind of test is, one module each behind one interface (base.py ``Oracle``):
reference.py (torch eager or the backend's reference), compare.py (optlevel, devices, cmp: another run
of the same model), metamorphic.py (a rewrite of the model, with rewrite_probe.py), invalid.py (invalid
models, ``mgen.invalid``), grad.py (gradients: the backward against torch eager's). docs/oracles.md describes them and how to add one."""
from nnfuzz.oracles.base import ORACLES, Oracle, Skip, Tested, campaign_oracles, oracle_class, oracle_names

__all__ = ["ORACLES", "Oracle", "Skip", "Tested", "campaign_oracles", "oracle_class", "oracle_names"]
