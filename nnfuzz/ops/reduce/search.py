"""Value-search aids of the reductions (nnfuzz/materialize/search.py)."""
from nnfuzz.materialize.torch.proxy import no_surrogate, surrogate
from nnfuzz.ops.reduce import spec as R

surrogate(R.ArgMax, R.ArgMin)(no_surrogate)
