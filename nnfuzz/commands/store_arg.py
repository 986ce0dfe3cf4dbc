"""The one bug-store argument of `nnfuzz dedup` and `nnfuzz report`."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional


def one_store(command: str, paths: List[str], usage: str) -> Optional[Path]:
    """The store folder named by ``paths`` (exactly one, an existing folder), else None after saying why
    on stderr (the command then exits 2)."""
    if len(paths) != 1:
        why = f"one bug store, not {len(paths)}: {' '.join(paths)}" if paths else "which bug store? name one, e.g. bugs/"
        print(f"nnfuzz {command}: {why}\n{usage}", file=sys.stderr)
        return None
    root = Path(paths[0])
    if not root.is_dir():
        print(f"nnfuzz {command}: {root} is not a folder; pass a bug store such as bugs/", file=sys.stderr)
        return None
    return root
