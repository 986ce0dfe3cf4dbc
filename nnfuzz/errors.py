"""The error taxonomy, and apart from it the control-flow signals.

An ``NNFuzzError`` is a real error: each says what was wrong, the bad value, and how to fix it, and a
campaign that meets one counts it as an nnfuzz problem. A ``ControlSignal`` is not an error: it tells
the caller to retry or give up a step (like Hypothesis' ``StopTest``), so no handler of nnfuzz's
errors can mistake one for the other.
"""


class NNFuzzError(Exception):
    """Base class of every error nnfuzz raises on purpose."""


class ControlSignal(Exception):
    """Base class of control-flow signals: expected outcomes handled by the caller, never bugs.

    One that reaches the command line was left unhandled, which is an nnfuzz bug (exit 1)."""


class ConstraintError(ControlSignal):
    """A generation step could not be satisfied; the generator retries with other choices."""


class ConfigError(NNFuzzError):
    """A configuration key or value is invalid (shows the value and the valid choices)."""


class OpDefinitionError(NNFuzzError):
    """An operator class is malformed, or its rules disagree with its lowering."""


class InternalError(NNFuzzError):
    """A bug in nnfuzz itself. Never swallowed."""


class ModelBuildError(InternalError):
    """nnfuzz's own code failed to build a model in the system's API inside the sandbox (a Relax module
    from its GraphIR): a bug in nnfuzz, never the system's crash. The sandbox raises it in the parent."""


class ExportError(NNFuzzError):
    """A model could not be turned into a file (ONNX export failed or timed out)."""
