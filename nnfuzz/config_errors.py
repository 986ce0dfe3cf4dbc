"""Hydra's composition errors in one or two lines: the bad key or value, the valid choices and, for a
typo, the nearest one ("did you mean"). Hydra's own text (its search path, its hints) is shown only
with ``debug=true``."""
from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Iterable, List, Sequence

_NOT_FOUND = re.compile(r"Could not find '(?P<group>[^/']+)/(?P<value>[^']+)'")


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``" (did you mean 'time'?)"`` for the choice nearest ``word``, or "" when none is near."""
    near = difflib.get_close_matches(str(word), list(choices), n=1, cutoff=0.7)
    return f" (did you mean {near[0]!r}?)" if near else ""


def explain(e: Exception, overrides: Sequence[str], conf: Path, valid_keys: List[str], debug: bool) -> str:
    """The message of a ConfigError for Hydra's exception ``e`` (``valid_keys``: every dotted key of
    the default configuration, as ``config._valid_keys`` lists them)."""
    text = _short(e, overrides, conf, valid_keys)
    return f"{text}\nHydra said: {e}" if debug else text


def _short(e: Exception, overrides, conf: Path, valid_keys: List[str]) -> str:
    cause = str(e.__cause__ or "")
    m = re.search(r"full_key: (\S+)", cause)
    if "not in struct" in cause and m:
        return _unknown_key(m.group(1), overrides, valid_keys)
    m = _NOT_FOUND.search(str(e))
    if m:
        group, value = m["group"], m["value"]
        options = getattr(e, "options", None) or sorted(f.stem for f in (conf / group).glob("*.yaml"))
        return f"{group}={value!r} is not a choice{did_you_mean(value, options)}; valid: {', '.join(options)}"
    override = getattr(e, "override", None)  # OverrideParseException: the override's text
    first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    if override is not None:
        return (f"cannot read {str(override)!r}: {first}; settings are key=value, e.g. time=20s or "
                "mgen.include=[Add,Mul]")
    return first + (f" ({cause.splitlines()[0]})" if cause.strip() else "")


def _unknown_key(key: str, overrides, valid_keys: List[str]) -> str:
    given = next((o for o in overrides if o.lstrip("+~").split("=", 1)[0] == key), key)
    section, _, leaf = key.rpartition(".")
    names = [k.split("=")[0] for k in valid_keys]
    if section:
        siblings = [k[len(section) + 1:] for k in names if k.startswith(section + ".")]
        hint = did_you_mean(leaf, siblings).replace("'", f"'{section}.", 1) if siblings else did_you_mean(key, names)
        listing = f"keys of {section}: {', '.join(s.split('.')[0] for s in dict.fromkeys(siblings))}" \
            if siblings else f"keys: {', '.join(dict.fromkeys(k.split('.')[0] for k in names))}"
    else:
        hint = did_you_mean(key, dict.fromkeys(k.split(".")[0] for k in names))
        listing = f"keys: {', '.join(dict.fromkeys(k.split('.')[0] for k in names))}"
    return f"unknown key {key!r} in {given!r}{hint}\n{listing} (`--help` shows each with its default)"
