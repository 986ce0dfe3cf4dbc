"""`nnfuzz merge A B -o C`: bug stores of campaigns run apart, as one store.

Each source folder is checked as `nnfuzz repro` checks it (load_bug: files present, model parses, the
oracle holds only arrays), copied under the next free number of the output store (which may already
hold bugs: merging into it continues its numbering), and given its signature by today's rules with
``duplicate_of`` pointing into the merged store; meta.json's ``merged_from`` names the source folder.
Sources are never changed. A folder that cannot be read is reported and left where it is; symbolic
links inside a folder are not followed (reported, not copied). The merged store's index.json and
README.md are written at the end (as `nnfuzz dedup` does). Campaign logs (campaign.jsonl) stay with
their sources.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Dict, List

from nnfuzz.triage.bugstore import BUG_DIR, BugStore, load_bug, read_err_log
from nnfuzz.triage.dedup import write_index
from nnfuzz.triage.deduper import Deduper
from nnfuzz.triage.folder import BugFolderError
from nnfuzz.triage.meta import write_meta


def _copier(src: Path):
    if src.is_dir():
        return lambda dst: shutil.copytree(src, dst, symlinks=True)
    return lambda dst: shutil.copyfile(src, dst)


def merge_stores(sources: List[Path], out: Path, progress=None) -> Dict[str, object]:
    store, dedup = BugStore(out), Deduper(out)
    merged, skipped, links = [], [], []
    for src in sources:
        for folder in sorted(p for p in Path(src).iterdir() if p.is_dir() and BUG_DIR.match(p.name)):
            try:
                bug = load_bug(folder)
            except BugFolderError as e:
                skipped.append(f"{folder}: {e}")
                continue
            err = read_err_log(folder)
            sig, first = dedup.check(bug.meta, err)
            meta = bug.meta.replace(signature=sig, duplicate_of=first,
                                    extra={**bug.meta.extra, "merged_from": str(folder)})
            writers = {}
            for entry in sorted(folder.iterdir()):
                if entry.is_symlink():
                    links.append(str(entry))
                elif entry.name != "meta.json":
                    writers[entry.name] = _copier(entry)
            writers["meta.json"] = write_meta(meta)
            dest = store.add(writers)
            if first is None:
                dedup.saved(sig, dest.name)
            merged.append({"from": str(folder), "to": dest.name, "duplicate_of": first})
            if progress:
                progress(f"{folder} -> {dest.name}")
    index = write_index(out) if Path(out).is_dir() else {"unique": 0}
    return {"merged": len(merged), "duplicates": sum(1 for m in merged if m["duplicate_of"]),
            "unique_in_store": index["unique"], "unreadable": skipped, "links_not_followed": links,
            "out": str(out), "folders": merged}
