"""The contained runner (tests/contained.py): a native crash in its worker fails only the call that
made it, naming the signal and the last message, and the next call runs in a fresh worker."""
import os

import pytest
from contained import Contained, last_message

LAST = "free(): corrupted unsorted chunks (simulated by the test)"


def _add(a, b):
    return a + b


def _pid():
    return os.getpid()


def _abort():
    os.write(2, (LAST + "\n").encode())  # as glibc does: straight to fd 2, then abort()
    os.abort()


def _raise():
    assert 1 + 1 == 3, "the worker's assertion message"


def _skip():
    pytest.skip("no kernel for it here")


@pytest.fixture
def runner():
    r = Contained(timeout=60)
    yield r
    r.close()


@pytest.mark.slow
def test_a_crash_fails_one_call_with_its_signal_and_last_message_and_the_next_call_works(runner):
    assert runner(_add, 1, b=2) == 3
    first = runner(_pid)
    assert runner(_pid) == first != os.getpid()  # one long-lived worker, not this process
    with pytest.raises(pytest.fail.Exception) as e:
        runner(_abort)
    text = str(e.value)
    assert "crashed in the contained worker (killed by SIGABRT, signal 6" in text, text
    assert f"the system's last message: {LAST}\n" in text, text
    assert "Fatal Python error: Aborted" in text and "_abort" in text, text  # faulthandler's stack
    assert runner(_add, 2, 3) == 5
    assert runner(_pid) != first


@pytest.mark.slow
def test_an_exception_fails_with_the_workers_traceback_and_skip_skips(runner):
    with pytest.raises(pytest.fail.Exception) as e:
        runner(_raise)
    assert "test_contained._raise raised in the contained worker: AssertionError: the worker's assertion" \
           in str(e.value) and "assert 1 + 1 == 3" in str(e.value), str(e.value)
    with pytest.raises(pytest.skip.Exception, match="no kernel for it here"):
        runner(_skip)
    first = runner(_pid)
    assert runner(_pid) == first  # neither took the worker down


def test_last_message_is_the_line_before_faulthandlers_report():
    out = "some warning\ndouble free or corruption (!prev)\nFatal Python error: Aborted\n\nThread 0x1:\n  File x\n"
    assert last_message(out) == "double free or corruption (!prev)"
    assert last_message("a\nexit without a report\n\n") == "exit without a report"
    assert last_message("") == "(nothing)"
