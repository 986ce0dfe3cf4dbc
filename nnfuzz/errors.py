"""The error taxonomy: each says what was wrong, the bad value, and how to fix it."""


class NNFuzzError(Exception):
    """Base class of every error nnfuzz raises on purpose."""


class ConfigError(NNFuzzError):
    """A configuration key or value is invalid (shows the value and the valid choices)."""


class ConstraintError(NNFuzzError):
    """A generation step could not be satisfied; the generator retries with other choices."""


class OpDefinitionError(NNFuzzError):
    """An operator class is malformed, or its rules disagree with its lowering."""


class InternalError(NNFuzzError):
    """A bug in nnfuzz itself. Never swallowed."""


class ExportError(NNFuzzError):
    """A model could not be turned into a file (ONNX export failed or timed out)."""
