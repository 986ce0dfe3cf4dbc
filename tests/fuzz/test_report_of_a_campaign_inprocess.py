"""What a campaign writes for the report (issue 31), on the in-process executor with a fake backend: each
saved bug's meta.json ``found`` (when, which campaign), and the report's status and first seen of its
folders read from the campaign log (new, then duplicate)."""
import re

from fake_backends import SAFE_OPS, fake_campaign, folders

from nnfuzz.report.standing import seen_text, status_text
from nnfuzz.report.store import gather
from nnfuzz.triage.bugstore import load_bug


def test_saved_bugs_carry_found_and_the_report_reads_their_status_from_the_log(tmp_path):
    from nnfuzz.generate.policy import GenPolicy

    out = tmp_path / "bugs"
    fake_campaign(out, {"always": "raise"}, max_tests=2, rerun=False, keep_per_signature=2,
                  policy=GenPolicy(max_nodes=3, dtypes=["float32"], include=SAFE_OPS, seed=5))
    saved = folders(out)
    assert len(saved) == 2
    found = load_bug(saved[0]).meta.found
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", found["at"]) and found["campaign"] == {"seed": 5}
    bugs = gather(out, with_stats=False).bugs
    assert [b.status for b in bugs] == ["new", "duplicate"]   # the log's bug_status, not matched again
    assert status_text(bugs[0]) == "new"
    assert re.fullmatch(r"campaign 1 at \+\d+ s \(started \d{4}-\d\d-\d\d \d\d:\d\d UTC\)", seen_text(bugs[0]))
