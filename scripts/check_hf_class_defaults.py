#!/usr/bin/env python3
"""Checks configs/hf-class-defaults.json against an installed transformers.

attnbench fills a config.json's absent keys with the class defaults of transformers' config classes (the table in
configs/hf-class-defaults.json, read by src/engine/hf_config.cpp), as SGLang's loading through transformers does.
This script reads every entry with defaults, finds its class through transformers' CONFIG_MAPPING (by model_type),
and compares each default with the class's: the __init__ parameter's default, else the dataclass field's, else the
class attribute. A null in the table is a None default (the class derives the value from other keys, as attnbench
does). Prints one line per mismatch, a summary, and exits 1 on any mismatch or missing class; 2 without
transformers. Run it where the transformers version SGLang pins is installed (0.5.23: 5.19), e.g.
  python3 -m pip install --target /tmp/tf transformers==5.19.0 && PYTHONPATH=/tmp/tf scripts/check_hf_class_defaults.py

Usage: scripts/check_hf_class_defaults.py [TABLE]   (default: configs/hf-class-defaults.json)
"""
import dataclasses
import inspect
import json
import os
import sys


def class_default(cls, key):
    params = inspect.signature(cls.__init__).parameters
    if key in params and params[key].default is not inspect.Parameter.empty:
        return params[key].default
    if dataclasses.is_dataclass(cls):
        for f in dataclasses.fields(cls):
            if f.name == key and f.default is not dataclasses.MISSING:
                return f.default
    return getattr(cls, key, "<no default>")


def main(argv):
    if len(argv) > 2:
        sys.stderr.write("usage: check_hf_class_defaults.py [TABLE]\n")
        return 2
    table_path = argv[1] if len(argv) == 2 else os.path.join(os.path.dirname(__file__), "..", "configs",
                                                               "hf-class-defaults.json")
    try:
        import transformers
        from transformers import CONFIG_MAPPING
    except ImportError:
        sys.stderr.write("check_hf_class_defaults.py: transformers is not importable (set PYTHONPATH)\n")
        return 2
    with open(table_path, encoding="utf-8") as f:
        types = json.load(f)["model_types"]
    checked = problems = 0
    for mt, entry in types.items():
        if mt.startswith("_") or "defaults" not in entry:
            continue
        try:
            cls = CONFIG_MAPPING[mt]
        except KeyError:
            print(f"{mt}: no config class in transformers {transformers.__version__}")
            problems += 1
            continue
        if cls.__name__ != entry["class"]:
            print(f"{mt}: class {cls.__name__}, the table says {entry['class']}")
            problems += 1
        for key, want in entry["defaults"].items():
            checked += 1
            got = class_default(cls, key)
            if got != want:
                print(f"{mt}.{key}: the table has {want!r}, transformers {transformers.__version__} {got!r}")
                problems += 1
    print(f"{checked} defaults of {table_path} checked against transformers {transformers.__version__}: "
          f"{problems} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
