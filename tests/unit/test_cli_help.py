"""`nnfuzz <command> --help` lists the command's keys with their defaults and one line each, taken from
the comments next to the keys in conf/*.yaml; every key is documented."""
import pytest

from nnfuzz.cli import COMMAND_KEYS, COMMANDS, main
from nnfuzz.config import conf_dir, keys_help
from nnfuzz.confhelp import UNDOCUMENTED, yaml_help


def _help(capsys, *args) -> str:
    assert main(list(args)) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("cmd", sorted(COMMANDS))
def test_each_command_help_lists_its_keys_all_documented(capsys, cmd):
    out = _help(capsys, cmd, "--help")
    assert out.startswith(f"nnfuzz {cmd}: {COMMANDS[cmd]}")
    assert UNDOCUMENTED not in out
    for section in COMMAND_KEYS[cmd]:
        assert f"  {section}" in out, section


def test_fuzz_help_shows_defaults_and_the_yaml_comment(capsys):
    out = _help(capsys, "fuzz", "--help")
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ") and line.split()}
    assert "hard bound on the whole campaign (30s, 10m, 8h, 1d)" in lines["time=10m"]
    assert "bound on one Z3 check" in lines["mgen.solver_timeout_ms=100"]
    assert "one of " in lines["backend=ort-cpu"] and "tvm-cpu" in lines["backend=ort-cpu"]
    # a comment continued on the next line is one line of help
    assert "optlevel (the same system, optimisations off)" in lines["oracle=reference"]


def test_help_follows_the_overrides_given_with_it(capsys):
    out = _help(capsys, "fuzz", "backend=tvm-cpu", "search=none", "time=1h", "--help")
    assert "backend.options.pipeline=default" in out and "time=1h" in out and "search.enabled=false" in out


@pytest.mark.parametrize("backend", sorted(p.stem for p in (conf_dir() / "backend").glob("*.yaml")))
def test_every_backend_key_is_documented(backend):
    assert UNDOCUMENTED not in keys_help(("backend",), [f"backend={backend}"])


def test_a_bad_key_in_help_is_a_configuration_error(capsys):
    assert main(["generate", "mgen.no_such_key=1", "--help"]) == 2
    assert "no_such_key" in capsys.readouterr().err


def test_yaml_help_reads_nested_keys_and_continued_comments(tmp_path):
    f = tmp_path / "x.yaml"
    f.write_text("# header\ndefaults:\n  - grp: a   # pick one\ntop: 1   # the top\n  #   and more\n"
                 "nest:\n  inner: 2  # inside\n  bare: 3\n")
    assert yaml_help(f, "p.") == {"grp=": "pick one", "p.top": "the top and more", "p.nest.inner": "inside"}
