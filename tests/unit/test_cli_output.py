"""What a user reads (issue 31), in-process: configuration errors in one or two lines with a did-you-mean,
``--json`` as the only thing on stdout, usage messages, exit codes in ``--help``, the campaign's closing
summary and the status panel's words."""
import io
import json
import shutil
import time
import types
from pathlib import Path

import pytest

from nnfuzz.backends.registry import BACKENDS
from nnfuzz.cli import main
from nnfuzz.fuzz.ending import ending
from nnfuzz.fuzz.status import WAITING, Counters, Status
from nnfuzz.output import plural

KEPT = Path(__file__).parents[2] / "bugs" / "kept"


def _err(capsys, *args) -> str:
    assert main(list(args)) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Config search path" not in err and "provider=" not in err, err
    return err


def test_a_typo_in_a_key_names_the_key_meant_in_at_most_three_lines(capsys):
    err = _err(capsys, "fuzz", "tme=20s")
    lines = err.splitlines()
    assert len(lines) <= 3, err
    assert lines[0] == "nnfuzz: configuration error: unknown key 'tme' in 'tme=20s' (did you mean 'time'?)"
    assert lines[1].startswith("keys: ") and " time, " in lines[1], lines[1]
    assert lines[1].endswith("(`--help` shows each with its default)")


def test_a_typo_in_a_nested_key_lists_its_section(capsys):
    lines = _err(capsys, "fuzz", "fuzz.wokers=2").splitlines()
    assert lines[0] == ("nnfuzz: configuration error: unknown key 'fuzz.wokers' in 'fuzz.wokers=2' "
                        "(did you mean 'fuzz.workers'?)")
    assert lines[1].startswith("keys of fuzz: out, ") and " workers, " in lines[1] and len(lines) == 2


def test_an_unknown_key_far_from_every_key_gets_no_guess(capsys):
    first = _err(capsys, "fuzz", "mgen.bogus=1").splitlines()[0]
    assert first == "nnfuzz: configuration error: unknown key 'mgen.bogus' in 'mgen.bogus=1'"


def test_an_unknown_backend_lists_the_backends_in_one_line(capsys):
    err = _err(capsys, "fuzz", "backend=nope")
    assert err == (f"nnfuzz: configuration error: backend='nope' is unknown; known backends: "
                   f"{', '.join(sorted(BACKENDS))} (or a 'module:Class' path; other packages add backends "
                   "through the 'nnfuzz.backends' entry-point group: docs/backends.md)\n")
    assert "(did you mean 'ort-cpu'?)" in _err(capsys, "fuzz", "backend=ort-cpuu")


def test_an_unknown_group_choice_lists_the_choices(capsys):
    assert _err(capsys, "fuzz", "search=nope") == \
        "nnfuzz: configuration error: search='nope' is not a choice (did you mean 'none'?); valid: default, none\n"


def test_bad_override_syntax_says_how_settings_are_written(capsys):
    assert _err(capsys, "fuzz", "time=[1") == (
        "nnfuzz: configuration error: cannot read 'time=[1': no viable alternative at input '[1'; settings are "
        "key=value, e.g. time=20s or mgen.include=[Add,Mul]\n")


def test_an_unknown_op_name_is_refused_before_any_process_starts(capsys, tmp_path):
    err = _err(capsys, "fuzz", "mgen.include=[Relux]", "time=1s", f"fuzz.out={tmp_path}")
    assert err.startswith("nnfuzz: configuration error: mgen.include names unknown op or family 'Relux' "
                          "(did you mean 'Relu'?); valid: Abs, Acos, ") and err.count("\n") == 1, err
    assert err.endswith(" (`nnfuzz ops` lists them)\n")


def test_debug_adds_hydras_own_text(capsys):
    assert main(["fuzz", "tme=20s", "debug=true"]) == 2
    assert "Hydra said: Could not override 'tme'." in capsys.readouterr().err


@pytest.mark.parametrize("args, why", [
    (["repro"], "nnfuzz repro: which bug folder? name one, e.g. bugs/0000"),
    (["reduce"], "nnfuzz reduce: which bug folder? name one, e.g. bugs/0000"),
    (["dedup"], "nnfuzz dedup: which bug store? name one, e.g. bugs/"),
    (["report"], "nnfuzz report: which bug store? name one, e.g. bugs/"),
    (["stats"], "nnfuzz stats: which folder? name one or two folders of models, e.g. models/"),
    (["merge"], "nnfuzz merge: which stores? name them and the output, e.g. nnfuzz merge a/bugs b/bugs -o merged"),
    (["repro", "a", "b"], "nnfuzz repro: one bug folder, not 2"),
])
def test_a_missing_argument_is_asked_for(capsys, args, why):
    err = _err(capsys, *args)
    assert err.splitlines()[0] == why and "got []" not in err and err.splitlines()[1].startswith("usage: ")


@pytest.mark.parametrize("cmd, code, what", [
    ("repro", 3, "it fails differently"), ("fuzz", 130, "stopped by Ctrl-C"), ("backends", 0, "listed"),
])
def test_help_lists_the_exit_codes_and_json(capsys, cmd, code, what):
    assert main([cmd, "--help"]) == 0
    out = capsys.readouterr().out
    assert "\nexit codes:\n" in out and f"  {code:>3}  {what}" in out and "\n--json: stdout carries exactly one" in out


def test_report_help_shows_where_the_page_goes(capsys):
    assert main(["report", "--help"]) == 0
    out = capsys.readouterr().out
    assert "[-o report.html]" not in out and "default bugs/report.html" in out


@pytest.fixture
def store(tmp_path):
    """Two kept bug folders (an OpenVINO crash and an ORT inconsistency) as a store."""
    for name in ("0002", "0000"):
        shutil.copytree(KEPT / name, tmp_path / "bugs" / name)
    return tmp_path / "bugs"


def test_json_is_the_only_thing_on_stdout_and_human_text_has_no_json(store, capsys):
    assert main(["dedup", str(store), "--json"]) == 0
    out = capsys.readouterr().out
    doc = json.loads(out)  # one document: anything else on stdout fails here
    assert doc["bugs"] == 2 and doc["unique"] == 2 and out.count("\n") == 1
    assert main(["dedup", str(store)]) == 0
    out = capsys.readouterr().out
    assert "{" not in out and out.startswith("2 bug folders, 2 unique bugs (root causes):\n"), out
    # the table shows the system's innermost message, not OpenVINO's outer wrapper
    assert "0002 (x1)  openvino-cpu crash: RuntimeError: Resize: All axes values should less than input rank: 3" in out
    assert "core.cpp" not in out
    assert "All axes values should less than input rank" in (store / "README.md").read_text()


def test_repro_script_is_not_written_over_without_force(store, capsys):
    bug = store / "0002"
    script = bug / "repro_openvino-cpu.py"
    script.write_text("# edited by hand\n")
    err = _err(capsys, "repro", str(bug), "--script")
    assert err == f"nnfuzz repro: {script} exists already (edited by hand?); add --force to write over it\n"
    assert script.read_text() == "# edited by hand\n"
    assert main(["repro", str(bug), "--script", "--force", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["written"] == [str(script)] and err == f"wrote {script}\n"
    assert "import openvino" in script.read_text()


def test_ops_piped_prints_tab_separated_rows_not_a_box(capsys):
    assert main(["ops", "mgen.include=[Conv2d,Relu]"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "name\tfamily\tin dtypes -> out\tinput ranks\tattributes\ttorch\ttf"
    assert sorted(line.split("\t")[0] for line in lines[1:]) == ["Conv2d", "Relu"]
    assert not any(ch in "".join(lines) for ch in "┃│━─┏")
    assert main(["ops", "mgen.include=[Relu]", "--json"]) == 0
    assert [r["name"] for r in json.loads(capsys.readouterr().out)["ops"]] == ["Relu"]


DOC = {"backend": "ort-cpu", "oracle": "reference", "seed": 7, "stopped": None, "tests": 1, "tests_per_s": 0.5,
       "verdicts": {"pass": 0, "unsupported": 0, "inconsistency": 1}, "formats": {"onnx": 1}, "bugs_saved": 1,
       "new_unique": 1, "unique_in_store": 1, "flaky": 0,
       "bugs": {"new": {"root_causes": 1, "hits": 1, "folders": 1}, "known": {"root_causes": 2, "hits": 5,
                                                                              "folders": 0},
                "counted": 0, "replaced": 0},
       "slow": 0, "noise": 2, "checked": 3, "reduced": 1, "lost": 0, "workers": 1, "no_rewrite": 0, "invalid": {},
       "no_graph": 0, "undefined_values": 0, "nnfuzz_errors": 0, "out": "bugs",
       "new_bugs": [{"folder": "bugs/0000", "op": "Softshrink", "dtype": "float64", "symptom": "inconsistency",
                     "stage": "verify", "message": "v0: 3/4 values off"}],
       "gradient_tests": 12, "quantized": {"int8": 3, "uint8": 0}}  # keys the ending does not know


def test_a_campaign_ends_with_its_new_bugs_and_the_next_commands():
    assert ending(DOC) == """\
nnfuzz fuzz ort-cpu: 1 test (0.5/s), seed 7
  verdicts: inconsistency 1
  1 new bug (1 hit, 1 folder saved):
    bugs/0000  inconsistency in Softshrink (float64): v0: 3/4 values off
  2 known bugs met 5 times (0 folders saved)
  not bugs: 2 disagreements within every op's accuracy budget
  other counts: gradient tests: 12, quantized: int8 3
  bug folders and log: bugs/ (campaign.jsonl)
next:
  nnfuzz report bugs       one page with every bug, its graph and its error
  nnfuzz repro bugs/0000   replay it (--script writes a standalone reproducer)
  nnfuzz reduce bugs/0000  shrink its graph while the bug holds"""


def test_a_campaign_without_bugs_says_so_and_explains_unsupported():
    doc = {**DOC, "verdicts": {"pass": 3, "unsupported": 2}, "new_bugs": [], "noise": 0, "checked": 0,
           "bugs": {"new": {}, "known": {}, "counted": 0}, "gradient_tests": 0, "quantized": {}}
    text = ending(doc)
    assert "  verdicts: pass 3, unsupported 2 (unsupported: an op or dtype the system says it lacks; not bugs)" in text
    assert "  no new bugs\n" in text and "repro" not in text and "other counts" not in text


def test_a_campaign_that_ran_no_test_says_the_start_took_its_time_and_what_to_give_it():
    doc = {**DOC, "tests": 0, "verdicts": {}, "new_bugs": [], "bugs": {"new": {}, "known": {}, "counted": 0}}
    assert "no test ran" in ending(doc) and "time=2m" in ending(doc)
    assert "no test ran" not in ending({**doc, "stopped": "SIGINT"})  # the user ended it
    assert "no test ran" not in ending(DOC)


def test_a_campaign_with_dynamic_tests_says_how_many_tests_each_compile_gave():
    doc = {**DOC, "tests_per_compile": 2.4, "dynamic": {"tests": 5, "shapes_run": 19, "compiles": 5}}
    text = ending(doc)
    assert "  2.4 tests per compile: 5 dynamic tests ran 19 shapes on 5 compiles\n" in text
    assert "tests_per_compile" not in text and "shapes_run" not in text  # not again under "other counts"
    assert "tests per compile" not in ending({**DOC, "tests_per_compile": 1.0,
                                              "dynamic": {"tests": 0, "shapes_run": 0, "compiles": 0}})


def test_plural():
    assert [plural(1, "bug"), plural(2, "bug"), plural(0, "entry", "entries")] == ["1 bug", "2 bugs", "0 entries"]


def _render(status) -> str:
    from rich.console import Console

    console = Console(file=io.StringIO(), width=240)
    console.print(status._panel())
    return console.file.getvalue()


def test_the_panel_names_a_starved_stage_and_explains_its_words():
    c = Counters(started=time.monotonic() - 60)
    c.verdicts["unsupported"] = 4
    c.seconds.update(generate=6.0, compile=2.0)
    lanes = [types.SimpleNamespace(name=str(i), state=WAITING, describe=lambda: "waiting", waited=0.0)
             for i in range(2)]
    status = Status(c, time.monotonic() + 60, "plain", "t", lanes, producers=1)
    for t in range(10):  # both lanes waited 0.9 s of every second
        status.sample(float(t))
        for lane in lanes:
            lane.waited += 0.9
    hint = "workers wait for models 90% of the time: raise fuzz.producers (now 1) if cores are free"
    assert status.bottleneck() == hint
    assert status.line().endswith(f" | {hint}")  # the plain status line carries it too
    text = _render(status)
    assert "unsupported: an op or dtype the system says it lacks" in text and "time per stage" in text
    assert "generate 75%  compile 25%  (shares of the seconds all processes spent)" in text and hint in text
    for t in range(10, 200):  # from now on they wait a tenth of the time: the moving average forgets
        status.sample(float(t))
        for lane in lanes:
            lane.waited += 0.1
    assert status.bottleneck() == ""
    inline = Status(c, time.monotonic() + 60, "plain", "t", lanes[:1], producers=0)
    for t in range(10):
        inline.sample(float(t))
        lanes[0].waited += 0.8
    assert inline.bottleneck() == ("workers wait for models 80% of the time: each makes its own "
                                   "(fuzz.producers=0); fuzz.producers=N makes them in N other processes")


def test_the_coverage_row_says_what_is_new_only_when_an_earlier_campaign_covered_some(tmp_path):
    from nnfuzz.fuzz.guidestate import CampaignGuide

    guide = CampaignGuide(tmp_path, log=None, enabled=True)
    guide.state.sizes = lambda: {"op_dtype": 5, "op_shape": 3, "edges": 2, "graphs": 1}
    assert guide.summary() == ("5 op-dtype pairs tested, 3 shape bins, 2 op-to-op edges; "
                               "steered away from (bugs found): none")
    guide.start = {"op_dtype": 2, "op_shape": 0, "edges": 0, "graphs": 0}  # a resumed store
    assert guide.summary().startswith("5 op-dtype pairs tested (3 new in this campaign), 3 shape bins")


def test_report_and_merge_say_what_they_wrote_in_a_line_or_a_json_document(store, tmp_path, capsys):
    assert main(["report", str(store), "--no-stats"]) == 0
    assert capsys.readouterr().out == (f"wrote {store / 'report.html'}: 2 unique bugs of 2 folders, 0 campaigns, "
                                       "0 entries skipped\n")
    assert main(["report", str(store), "--no-stats", "--json", "-o", str(tmp_path / "r.html")]) == 0
    assert json.loads(capsys.readouterr().out) == {"out": str(tmp_path / "r.html"), "unique": 2, "folders": 2,
                                                   "campaigns": 0, "skipped": 0}
    assert main(["merge", str(store), "-o", str(tmp_path / "merged")]) == 0
    assert capsys.readouterr().out == (f"merged 2 bug folders into {tmp_path / 'merged'}: 0 duplicates, "
                                       "2 unique bugs in the store\n")
