"""What the peer scripts' tests share: the repository root, scripts/ on the import path, the attnbench binary
under test (ATTNBENCH_BINARY, set by ctest) and a TestCase with a temporary folder."""

import os
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if os.path.join(ROOT, "scripts") not in sys.path:
    sys.path.insert(0, os.path.join(ROOT, "scripts"))

BINARY = os.environ.get("ATTNBENCH_BINARY", "")


class TempDir(unittest.TestCase):
    """A TestCase with a fresh temporary folder (self.tmp) per test."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def write(self, name, text):
        """Writes `text` to self.tmp/name; returns the path."""
        p = os.path.join(self.tmp, name)
        with open(p, "w", encoding="utf-8") as f:
            f.write(text)
        return p
