import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

pytest_plugins = ["tier_guard"]  # a test that starts a process or compiles must be marked slow (tests/tier_guard.py)
