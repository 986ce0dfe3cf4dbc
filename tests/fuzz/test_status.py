"""The campaign's status display (fuzz/status.py): the rich panel is rebuilt at most PANEL_HZ times a
second however many tests end (a campaign runs dozens a second), and always once more at the end."""
from nnfuzz.fuzz import status as status_mod
from nnfuzz.fuzz.status import Counters, Status


def test_the_rich_panel_is_rebuilt_at_most_panel_hz_times_a_second(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(status_mod.time, "monotonic", lambda: now[0])
    built = []
    monkeypatch.setattr(Status, "_panel", lambda self: built.append(now[0]) or "panel")
    c = Counters()
    with Status(c, deadline=now[0] + 60, ui="rich", title="t") as s:
        assert s.rich
        n0 = len(built)  # the one the display starts with
        for _ in range(50):  # 50 tests within the same instant
            s.refresh()
        assert len(built) - n0 == 1
        now[0] += 1.0 / status_mod.PANEL_HZ
        s.refresh()
        assert len(built) - n0 == 2
        done = len(built)
    assert len(built) == done + 1  # the final state is shown

