"""Where nnfuzz keeps what it learns about this machine between runs (the op x dtype probe, inductor's warm-up
kernels): ``$NNFUZZ_CACHE``, else ``~/.cache/nnfuzz``."""
from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    return Path(os.environ.get("NNFUZZ_CACHE", Path.home() / ".cache" / "nnfuzz"))
