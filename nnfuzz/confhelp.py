"""`nnfuzz <command> --help`: a command's keys with their defaults and one line each.

The help is the comment next to each key in conf/*.yaml, the files users read and edit, so a key and its
meaning are written once, side by side: ``key: value  # help``, continued on indented comment-only lines
below it. A group's choice (``backend=ort-cpu``) takes its help from its line in main.yaml's defaults.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

_KEY = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z_][\w-]*):[^#]*?(?:#\s?(?P<help>.*))?$")
_CHOICE = re.compile(r"^ *- *(?P<group>\w+): *\S+ *(?:#\s?(?P<help>.*))?$")
UNDOCUMENTED = "(undocumented)"


def yaml_help(path: Path, prefix: str = "") -> Dict[str, str]:
    """Dotted key (with ``prefix``) -> its comment, for every key of a YAML file with a trailing comment.
    ``defaults:`` entries of main.yaml give their group's help under the group's name followed by '='."""
    helps: Dict[str, str] = {}
    stack: List[Tuple[int, str]] = []
    last = None  # the key whose comment an indented comment-only line continues
    for line in path.read_text().splitlines():
        text = line.strip()
        if text.startswith("#") and last is not None and line.startswith(" "):
            helps[last] += " " + text.lstrip("#").strip()
            continue
        last = None
        choice = _CHOICE.match(line)
        if choice:
            if choice["help"]:
                helps[choice["group"] + "="] = choice["help"].strip()
            continue
        m = _KEY.match(line)
        if not m:
            continue
        indent = len(m["indent"])
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, m["key"]))
        if m["help"]:
            key = prefix + ".".join(k for _, k in stack)
            helps[key] = m["help"].strip()
            last = key
    return helps


def config_help(conf: Path, choices: Dict[str, str]) -> Dict[str, str]:
    """The help of every key of the composed configuration (main.yaml and each group's chosen file)."""
    helps = yaml_help(conf / "main.yaml")
    for group, choice in choices.items():
        f = conf / group / f"{choice}.yaml"
        if f.is_file():
            helps.update(yaml_help(f, prefix=f"{group}."))
    return helps


def key_lines(cfg: dict, sections: Sequence[str], helps: Dict[str, str], conf: Path,
              choices: Dict[str, str]) -> List[Tuple[str, str, str]]:
    """(key, default, help) for the keys under ``sections`` (top-level keys or groups), in that order.
    A mapping with its own help is one entry; one without is listed key by key."""
    rows: List[Tuple[str, str, str]] = []

    def walk(node, key):
        if isinstance(node, dict) and node and key not in helps:
            for k, v in node.items():
                walk(v, f"{key}.{k}")
        else:
            rows.append((key, _fmt(node), helps.get(key, UNDOCUMENTED)))

    for s in sections:
        head = s.split(".")[0]
        options = sorted(f.stem for f in (conf / head).glob("*.yaml")) if head in choices else []
        if s == head and len(options) > 1:  # a group with a choice
            rows.append((head, choices[head], f"{helps.get(head + '=', UNDOCUMENTED)}; one of {'|'.join(options)}"))
        node = cfg
        for part in s.split("."):
            node = node[part]
        walk(node, s)
    return rows


def format_rows(rows: List[Tuple[str, str, str]]) -> str:
    width = min(44, max(len(f"{k}={v}") for k, v, _ in rows) + 2) if rows else 0
    out = []
    for k, v, h in rows:
        kv = f"{k}={v}"
        out.append(f"  {kv:<{width}} {h}" if len(kv) < width else f"  {kv}\n  {'':<{width}} {h}")
    return "\n".join(out)


def _fmt(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_fmt(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ",".join(f"{k}:{_fmt(x)}" for k, x in v.items()) + "}"
    return str(v)
