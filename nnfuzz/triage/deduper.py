"""A campaign's view of its bug store (docs/known-bugs.md): the signatures its folders hold, a few
examples per signature, and what to do with each new bug.

syzbot's rule: one signature is one bug, and a few reports of it are kept. A new bug whose signature is
known (a kept folder's or a known-bugs file entry's, triage/known.py) or already in the store is saved
while the store holds fewer than ``keep`` examples of that signature; beyond that it is counted, not
saved, unless it is smaller (fewer nodes) than the largest example, which it then replaces in place
(``replace_folder``: the folder keeps its number, so numbering stays without gaps). ``keep`` 0: every
bug is saved (no limit). Examples of a kept-in-repo known bug are counted in this store only: the
repository's kept folders are not in it.
"""
from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

from nnfuzz.triage.dedup import index_store, signature

STATUSES = ("new", "known", "duplicate")   # a bug's status in campaign.jsonl (``bug_status``)
ACTIONS = ("save", "replace", "count")


@dataclasses.dataclass(frozen=True)
class Decision:
    signature: str
    status: str                      # new: a signature neither known nor in the store | known | duplicate
    action: str                      # save: a new folder | replace: ``replace`` takes it | count: not saved
    duplicate_of: Optional[str]      # the store's first folder of the signature (None: this one is the first)
    known: Optional[str] = None      # what it is known as (a kept folder, a known-bugs file entry)
    replace: Optional[str] = None    # the folder it replaces (action "replace")


class Deduper:
    """Signatures in the store with their examples (folder, nodes), and each new bug's Decision."""

    def __init__(self, root, keep: int = 0, known=None):
        self.keep, self.known = int(keep), known
        self.first: Dict[str, str] = {}
        self.examples: Dict[str, List[Tuple[str, Optional[int]]]] = {}
        self.pinned: Set[str] = set()    # folders never replaced (handed to the background reducer)
        root = Path(root)
        if root.is_dir():
            for row in index_store(root)["rows"]:
                self.saved(row["signature"], row["id"], row["nodes"])

    def check(self, meta, err_log: str) -> tuple:
        """(signature, the folder this duplicates or None)."""
        sig = signature(meta, err_log)
        return sig, self.first.get(sig)

    def decide(self, meta, err_log: str) -> Decision:
        sig, first = self.check(meta, err_log)
        known = self.known.match(meta, sig, err_log) if self.known is not None else None
        status = "known" if known is not None else ("duplicate" if first is not None else "new")
        examples = self.examples.get(sig, [])
        if self.keep <= 0 or len(examples) < self.keep:
            return Decision(sig, status, "save", first, known)
        nodes = meta.nodes
        largest = max((e for e in examples if e[0] not in self.pinned and e[1] is not None),
                      key=lambda e: (e[1], e[0]), default=None)
        if nodes is not None and largest is not None and nodes < largest[1]:
            dup = None if largest[0] == first else first
            return Decision(sig, status, "replace", dup, known, largest[0])
        return Decision(sig, status, "count", first, known)

    def saved(self, sig: str, folder: str, nodes: Optional[int] = None) -> None:
        self.first.setdefault(sig, folder)
        self.examples.setdefault(sig, []).append((folder, nodes))

    def replaced(self, sig: str, folder: str, nodes: Optional[int]) -> None:
        self.examples[sig] = [(f, nodes if f == folder else n) for f, n in self.examples[sig]]

    @property
    def unique(self) -> int:
        return len(self.first)


def replace_folder(store, name: str, **files) -> Path:
    """Write a bug (``files``: BugStore.save's) over the store's folder ``name``, atomically: built in a
    hidden sibling, then swapped in under the store's lock, so the number is never free and a reader
    sees the old folder or the new one."""
    from nnfuzz.triage.bugstore import BugStore

    root = Path(store.root)
    staging = root / f".{name}.replacing"
    shutil.rmtree(staging, ignore_errors=True)
    built = BugStore(staging).save(**files)
    dest, aside = root / name, root / f".{name}.replaced"
    shutil.rmtree(aside, ignore_errors=True)
    with store.lock:
        dest.rename(aside)
        built.rename(dest)
    shutil.rmtree(aside, ignore_errors=True)
    shutil.rmtree(staging, ignore_errors=True)
    return dest
