#!/usr/bin/env python3
"""scripts/sglang_site.py's import scan on a fake site (no wheels): the modules a kept file reaches, including a
package that imports its own submodules by a list of names (sglang/kernels/ops/__init__.py in 0.5.23, which the
scan missed until 2026-12-04: `No module named 'sglang.kernels.ops.diffusion'` on the H200), and the
function-level imports of the files under HOP_TREES but not of those under HOP_SKIP.

Plain unittest: `python3 tests/peers/test_sglang_site.py`."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_test_util import TempDir  # noqa: E402
import sglang_site as ss  # noqa: E402


class ImportScan(TempDir):
    def make(self, files):
        for rel, text in files.items():
            p = os.path.join(self.tmp, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(text)

    def kept(self, roots):
        return sorted(os.path.relpath(f, self.tmp) for f in ss.closure(self.tmp, roots))

    def test_a_package_importing_its_submodules_by_name_keeps_them(self):
        self.make({
            "pkg/__init__.py": "from importlib import import_module\n_GROUPS = ('alpha', 'beta', 'not-a-name')\n"
                               "for _g in _GROUPS:\n    import_module(f\"{__name__}.{_g}\")\n",
            "pkg/alpha/__init__.py": "from pkg.gamma import x\n",
            "pkg/beta.py": "",
            "pkg/gamma.py": "x = 1\n",
            "pkg/unused.py": "",
        })
        self.assertEqual(self.kept(["pkg"]), ["pkg/__init__.py", "pkg/alpha/__init__.py", "pkg/beta.py",
                                              "pkg/gamma.py"])

    def test_a_plain_string_list_without_the_dynamic_import_adds_nothing(self):
        self.make({"pkg/__init__.py": "NAMES = ('beta',)\n", "pkg/beta.py": ""})
        self.assertEqual(self.kept(["pkg"]), ["pkg/__init__.py"])

    def test_function_level_imports_of_the_hop_trees_are_followed_but_not_of_the_skipped_folders(self):
        self.make({
            "sglang/__init__.py": "",
            "sglang/srt/__init__.py": "",
            "sglang/srt/arg_groups/__init__.py": "",
            "sglang/srt/arg_groups/pipeline.py": "def f():\n    from sglang.srt.arg_groups.parallel_hook import g\n",
            "sglang/srt/arg_groups/parallel_hook.py": "def g():\n    pass\n",
            "sglang/srt/models/__init__.py": "",
            "sglang/srt/models/big.py": "def h():\n    from sglang.other.lonely import z\n",
            "sglang/other/__init__.py": "",
            "sglang/other/lonely.py": "z = 0\n",
        })
        saved = ss.ROOTS, ss.HOP_DIRS, ss.HOP_FILES
        ss.ROOTS, ss.HOP_DIRS, ss.HOP_FILES = ["sglang"], [], []
        try:
            keep = sorted(os.path.relpath(f, self.tmp) for f in ss.python_keep(self.tmp) if f.endswith(".py"))
        finally:
            ss.ROOTS, ss.HOP_DIRS, ss.HOP_FILES = saved
        self.assertIn("sglang/srt/arg_groups/parallel_hook.py", keep)
        self.assertNotIn("sglang/srt/models/big.py", keep)
        self.assertNotIn("sglang/other/lonely.py", keep)


if __name__ == "__main__":
    unittest.main()
