"""A store whose disk fills up (ENOSPC, or EDQUOT: a quota) while a campaign writes it: the campaign
stops cleanly and says why. A bug folder is written whole or not at all (triage/folder.py), so the
store holds no half folder; the producers, workers and reducer end as after a stop signal; the last
records (campaign_end, campaign_state.json) are written if there is room, and said to be missing if not.
"""
from __future__ import annotations

import errno
from typing import Optional

from nnfuzz.errors import NNFuzzError

FULL = (errno.ENOSPC, errno.EDQUOT)


class StoreFull(NNFuzzError):
    """The campaign's store ran out of space (or quota); the campaign stopped."""


def disk_full(e: BaseException) -> Optional[OSError]:
    """The OSError saying "no space left" (or "quota exceeded") among ``e`` and its causes, else None."""
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, OSError) and e.errno in FULL:
            return e
        e = e.__cause__ or e.__context__
    return None


def store_full(out, e: OSError) -> StoreFull:
    return StoreFull(f"the disk holding {out} is full ({e.strerror}: {e.filename or out}); the campaign stopped "
                     "and left no half-written bug folder. Free space there (or set fuzz.out to a folder on a "
                     "disk with room) and run the same command again: it resumes where this one stopped")


def write_unless_full(write, what: str, note) -> None:
    """Run ``write()``; on a full disk say (``note``) that ``what`` could not be written, and go on."""
    try:
        write()
    except OSError as e:
        if disk_full(e) is None:
            raise
        note(f"could not write {what}: {e.strerror} (the disk is full)")
