"""Corpus statistics (`nnfuzz stats`): Isra's eleven diversity metrics and HirGen's coverage criteria over
any folder of models, read from nnfuzz's gir.json or from model.onnx (docs/stats.md defines each one)."""
from nnfuzz.stats.corpus import Graph, Node, load_corpus
from nnfuzz.stats.metrics import OpCorpus, compute

__all__ = ["Graph", "Node", "OpCorpus", "compute", "load_corpus"]
