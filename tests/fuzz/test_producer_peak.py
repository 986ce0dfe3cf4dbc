"""A model that makes a producer's memory spike is named in its record (fuzz/producer_peak.py)."""
import numpy as np

from nnfuzz.fuzz import producer_peak


def test_a_spike_over_the_bar_is_noted_and_the_peak_resets(monkeypatch):
    monkeypatch.setattr(producer_peak, "PEAK_NOTE_MB", 0)
    producer_peak.reset()
    base = producer_peak.peak_mb()
    big = np.ones(64 << 20, np.uint8)  # 64 MiB touched
    spiked = producer_peak.peak_mb()
    assert spiked >= base + 60
    rec = {}
    producer_peak.note(rec)
    assert rec["producer_peak_mb"] >= spiked
    del big
    producer_peak.reset()
    assert producer_peak.peak_mb() < spiked - 50  # the next model's peak is its own
    monkeypatch.setattr(producer_peak, "PEAK_NOTE_MB", 1 << 30)
    quiet = {}
    producer_peak.note(quiet)
    assert quiet == {}
