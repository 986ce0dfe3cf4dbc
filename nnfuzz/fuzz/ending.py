"""The few lines a campaign ends with (on stderr): what it ran, the new bugs with their op, dtype, symptom
and folder, the known ones counted, where everything is, and the commands to run next.

It reads the campaign's summary dict (the document ``nnfuzz fuzz --json`` prints): a key this module
does not know is still shown, as ``key: value``, under "other counts", so a counter added to the summary
is never lost from the ending."""
from __future__ import annotations

from typing import List

from nnfuzz.output import plural

# keys shown in their own words below; any other key with a non-zero value goes to "other counts"
SHOWN = {"backend", "oracle", "seed", "stopped", "tests", "tests_per_s", "verdicts", "formats", "bugs_saved",
         "new_unique", "unique_in_store", "flaky", "bugs", "new_bugs", "out", "workers", "slow", "noise",
         "checked", "no_graph", "undefined_values", "nnfuzz_errors", "no_rewrite", "invalid", "lost", "reduced",
         "tests_per_compile", "dynamic"}
NOT_BUGS = (("noise", "disagreements within every op's accuracy budget"), ("slow", "slow, not hung"),
            ("undefined_values", "values outside an op's domain"), ("no_graph", "no graph within bounds"),
            ("no_rewrite", "no rewrite applied"))
UNSUPPORTED = "unsupported: an op or dtype the system says it lacks; not bugs"
SHOWN_NEW = 10  # new bugs listed one per line; the rest are in the store's README.md after `nnfuzz dedup`


def ending(doc: dict) -> str:
    out = doc.get("out", "bugs")
    lines = [f"nnfuzz fuzz {doc.get('backend')}: {plural(doc.get('tests', 0), 'test')} "
             f"({doc.get('tests_per_s', 0)}/s), seed {doc.get('seed')}"
             + (f", stopped by {doc['stopped']}" if doc.get("stopped") else "")]
    if not doc.get("tests") and not doc.get("stopped"):
        lines.append("  no test ran: starting the system (its probe, imports and first compiles) took the whole "
                     "time bound; give the campaign more time (time=2m)")
    dyn = doc.get("dynamic") or {}
    if dyn.get("tests"):  # fuzz.dynamic (docs/dynamic-shapes.md)
        lines.append(f"  {doc.get('tests_per_compile')} tests per compile: {plural(dyn['tests'], 'dynamic test')} ran "
                     f"{plural(dyn.get('shapes_run', 0), 'shape')} on {plural(dyn.get('compiles', 0), 'compile')}")
    verdicts = {k: v for k, v in (doc.get("verdicts") or {}).items() if v}
    if verdicts:
        lines.append("  verdicts: " + ", ".join(f"{k} {v}" for k, v in verdicts.items())
                     + (f" ({UNSUPPORTED})" if verdicts.get("unsupported") else ""))
    lines += _bug_lines(doc)
    not_bugs = [f"{doc[k]} {what}" for k, what in NOT_BUGS if doc.get(k)]
    if not_bugs:
        lines.append("  not bugs: " + ", ".join(not_bugs))
    if doc.get("nnfuzz_errors"):
        lines.append(f"  {plural(doc['nnfuzz_errors'], 'error')} inside nnfuzz (shown above): please report them")
    if doc.get("lost"):
        lines.append(f"  {plural(doc['lost'], 'test')} lost with a worker process or node that died")
    other = _other(doc)
    if other:
        lines.append("  other counts: " + ", ".join(other))
    lines.append(f"  bug folders and log: {out}/ (campaign.jsonl)")
    return "\n".join(lines + _next(doc, out))


def _bug_lines(doc: dict) -> List[str]:
    bugs = doc.get("bugs") or {}
    new, known = bugs.get("new") or {}, bugs.get("known") or {}
    listed = doc.get("new_bugs") or []
    lines = []
    if new.get("root_causes"):
        lines.append(f"  {plural(new['root_causes'], 'new bug')} ({plural(new.get('hits', 0), 'hit')}, "
                     f"{plural(new.get('folders', 0), 'folder')} saved)" + (":" if listed else ""))
        for b in listed[:SHOWN_NEW]:
            where = f" in {b['op']}" + (f" ({b['dtype']})" if b.get("dtype") else "") if b.get("op") else ""
            lines.append(f"    {b['folder']}  {b['symptom']}{where}: {b['message'][:140]}")
        if len(listed) > SHOWN_NEW:
            lines.append(f"    ... and {len(listed) - SHOWN_NEW} more (`nnfuzz dedup {doc.get('out')}` lists them all)")
    else:
        lines.append("  no new bugs")
    if known.get("root_causes"):
        lines.append(f"  {plural(known['root_causes'], 'known bug')} met {plural(known.get('hits', 0), 'time')}"
                     f" ({plural(known.get('folders', 0), 'folder')} saved)")
    if bugs.get("counted"):
        lines.append(f"  {bugs['counted']} counted, not saved: their root cause has fuzz.keep_per_signature examples")
    if doc.get("flaky"):
        lines.append(f"  {plural(doc['flaky'], 'bug')} flaky (the re-run gave another verdict)")
    return lines


def _other(doc: dict) -> List[str]:
    shown = []
    for k, v in doc.items():
        if k in SHOWN or not v or isinstance(v, (str, list)):
            continue
        if isinstance(v, dict):
            v = ", ".join(f"{a} {b}" for a, b in v.items() if b)
            if not v:
                continue
        shown.append(f"{k.replace('_', ' ')}: {v}")
    return shown


def _next(doc: dict, out: str) -> List[str]:
    listed = doc.get("new_bugs") or []
    steps = [(f"nnfuzz report {out}", "one page with every bug, its graph and its error")]
    if listed:
        first = listed[0]["folder"]
        steps += [(f"nnfuzz repro {first}", "replay it (--script writes a standalone reproducer)"),
                  (f"nnfuzz reduce {first}", "shrink its graph while the bug holds")]
    width = max(len(cmd) for cmd, _ in steps)
    return ["next:"] + [f"  {cmd:<{width}}  {what}" for cmd, what in steps]
