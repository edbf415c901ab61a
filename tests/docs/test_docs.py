#!/usr/bin/env python3
"""Keeps docs/ and the README honest where that is cheap to check: the documented column lists equal what
the code writes (the results CSV header of the CI baseline and of the column table in src/, the memory CSV
header, the case list header), the documented JSON keys exist in the committed baseline report, no link
points outside the repository (../shared), every relative link and anchor resolves, and every repository
path named in docs/ exists. Plain unittest, stdlib only: `python3 tests/docs/test_docs.py` (ctest runs
exactly that, with ATTNBENCH_BINARY set so the case list is also taken from the built binary)."""

import csv
import glob
import json
import os
import re
import subprocess
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = os.path.join(ROOT, "docs")
SCHEMA_DOC = os.path.join(DOCS, "result-schema.md")
BASELINE_CSV = os.path.join(ROOT, "results", "baseline", "smoke.csv")
BASELINE_JSON = os.path.join(ROOT, "results", "baseline", "smoke.json")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def markdown_files():
    return [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(DOCS, "*.md")))


def source_files():
    out = []
    for ext in ("cpp", "hpp", "cu", "cuh"):
        out += glob.glob(os.path.join(ROOT, "src", "**", "*." + ext), recursive=True)
    return sorted(out)


def documented_columns(marker):
    """The first backticked cell of each table row between <!-- MARKER: begin --> and <!-- MARKER: end -->."""
    text = read(SCHEMA_DOC)
    m = re.search(r"<!-- %s: begin -->(.*?)<!-- %s: end -->" % (re.escape(marker), re.escape(marker)), text, re.S)
    if not m:
        raise AssertionError("docs/result-schema.md has no '%s' table markers" % marker)
    cols = []
    for line in m.group(1).splitlines():
        cell = re.match(r"^\|\s*`([^`]+)`\s*\|", line)
        if cell:
            cols.append(cell.group(1))
    if not cols:
        raise AssertionError("docs/result-schema.md: the '%s' table is empty" % marker)
    return cols


def csv_header(path):
    with open(path, encoding="utf-8", newline="") as f:
        return next(csv.reader(f))


def github_anchor(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped (except - and _), spaces to hyphens."""
    text = re.sub(r"`", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors_of(path):
    anchors, counts = set(), {}
    in_code = False
    for line in read(path).splitlines():
        if line.startswith("```"):
            in_code = not in_code
        if in_code:
            continue
        m = re.match(r"^#{1,6}\s+(.*)$", line)
        if m:
            a = github_anchor(m.group(1))
            n = counts.get(a, 0)
            counts[a] = n + 1
            anchors.add(a if n == 0 else "%s-%d" % (a, n))
    return anchors


def strip_code(text):
    """The text without fenced code blocks and inline code spans (links inside code are not links)."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.sub(r"`[^`\n]*`", "", text)


class ResultsCsvColumns(unittest.TestCase):
    def test_documented_columns_are_the_baseline_header(self):
        """The CI baseline is rewritten by the tool itself (scripts/update_baseline.sh), in file order."""
        self.assertEqual(documented_columns("results-csv-columns"), csv_header(BASELINE_CSV))

    def test_documented_columns_are_the_source_column_table(self):
        """The column table in src/ ({"name", &ResultRow::member}) that the writer and reader both walk."""
        found = []
        for path in source_files():
            text = read(path)
            cols = re.findall(r'\{\s*"([a-z0-9_]+)"\s*,\s*&ResultRow::[a-z0-9_]+\s*\}', text)
            if cols:
                found.append((path, cols))
        self.assertEqual(len(found), 1, "expected one results column table in src/, found %s"
                         % [os.path.relpath(p, ROOT) for p, _ in found])
        self.assertEqual(documented_columns("results-csv-columns"), found[0][1])


class OtherFormats(unittest.TestCase):
    @unittest.skipUnless(os.environ.get("ATTNBENCH_BINARY"), "ATTNBENCH_BINARY not set")
    def test_memory_csv_header(self):
        # The memory CSV is printed through the table model (no header literal in src/): ask the binary.
        out = subprocess.run([os.environ["ATTNBENCH_BINARY"], "memory", "--model", "tiny", "--device", "cpu",
                              "--disable-cuda-graph", "--format", "csv"],
                             capture_output=True, text=True, timeout=120, check=True).stdout
        self.assertEqual(documented_columns("memory-csv-columns"), out.splitlines()[0].split(","))

    def test_case_list_header_in_source(self):
        lists = []
        for path in source_files():
            m = re.search(r'"case_list_version"\s*,(.*?)\}', read(path), re.S)
            if m:
                lists.append(["case_list_version"] + re.findall(r'"([a-z0-9_]+)"', m.group(1)))
        self.assertEqual(len(lists), 1, "expected one case list column list in src/, found %d" % len(lists))
        self.assertEqual(documented_columns("case-list-columns"), lists[0])

    @unittest.skipUnless(os.environ.get("ATTNBENCH_BINARY"), "ATTNBENCH_BINARY not set")
    def test_case_list_header_from_the_binary(self):
        out = subprocess.run([os.environ["ATTNBENCH_BINARY"], "run", "--config",
                              os.path.join(ROOT, "configs", "smoke.toml"), "--device", "cpu", "--list-cases",
                              "--format", "csv"], capture_output=True, text=True, timeout=120, check=True).stdout
        header = next(csv.reader(out.splitlines()))
        self.assertEqual(documented_columns("case-list-columns"), header)

    @unittest.skipUnless(os.environ.get("ATTNBENCH_BINARY"), "ATTNBENCH_BINARY not set")
    def test_compare_csv_columns_are_documented(self):
        """Every column of `compare --format csv` is named in the compare section (X_delta via X)."""
        out = subprocess.run([os.environ["ATTNBENCH_BINARY"], "compare", BASELINE_JSON, BASELINE_JSON, "--format",
                              "csv"], capture_output=True, text=True, timeout=120, check=True).stdout
        header = next(csv.reader(out.splitlines()))
        doc = read(SCHEMA_DOC)
        section = doc[doc.index("## `attnbench compare BASE NEW`"):doc.index("### Model against library")]
        self.assertIn("`<column>_delta`", section)
        for col in header:
            name = col[: -len("_delta")] if col.endswith("_delta") else col
            self.assertTrue("`%s`" % name in section, "compare CSV column %r is not in docs/result-schema.md" % col)

    def test_json_report_keys_are_documented(self):
        """Every key of the baseline JSON report (top level, row extras, ledger entries) is named in the doc."""
        doc = read(SCHEMA_DOC)
        report = json.loads(read(BASELINE_JSON))
        self.assertEqual(report["schema"], "attnbench.results")
        row = report["rows"][0]
        extras = [k for k in row if k not in csv_header(BASELINE_CSV)]
        keys = list(report) + extras + list(row["ledger"][0]) + list(report["environment"])
        for key in keys:
            self.assertTrue("`%s`" % key in doc, "key %r of results/baseline/smoke.json is not in docs/result-schema.md" % key)
        self.assertEqual(sorted(extras), ["ledger", "samples_us"])


class Links(unittest.TestCase):
    def test_no_links_outside_the_repository(self):
        for path in markdown_files():
            self.assertFalse("../shared" in read(path), os.path.relpath(path, ROOT) + " links to ../shared")

    def test_relative_links_and_anchors_resolve(self):
        for path in markdown_files():
            for target in re.findall(r"\]\(([^)\s]+)\)", strip_code(read(path))):
                if re.match(r"^[a-z]+:", target):
                    continue  # http:, https:, mailto:
                file_part, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
                where = "%s -> %s" % (os.path.relpath(path, ROOT), target)
                self.assertTrue(os.path.exists(dest), where + ": no such file")
                self.assertTrue(os.path.realpath(dest).startswith(os.path.realpath(ROOT) + os.sep),
                                where + ": outside the repository")
                if anchor and dest.endswith(".md"):
                    self.assertIn(anchor, anchors_of(dest), where + ": no such heading")

    def test_repository_paths_named_in_docs_exist(self):
        prefixes = ("src", "kernels", "reference", "tests", "scripts", "configs", "results", "bench", "fuzz",
                    "cmake", "docs")
        for path in sorted(glob.glob(os.path.join(DOCS, "*.md"))):
            for token in re.findall(r"`([^`\s]+)`", read(path)):
                if token.split("/")[0] in prefixes and "/" in token and re.fullmatch(r"[\w./-]+", token):
                    self.assertTrue(os.path.exists(os.path.join(ROOT, token)),
                                    "%s names %s, which does not exist" % (os.path.relpath(path, ROOT), token))


if __name__ == "__main__":
    unittest.main()
