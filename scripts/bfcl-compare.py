#!/usr/bin/env python3
"""Compare `fexpr check` with BFCL's own decoder on a corpus of model outputs.

Usage: scripts/bfcl-compare.py [CORPUS.jsonl] [TOOLS.json]
(defaults: tests/data/model_outputs.jsonl and tests/data/corpus_tools.json)

Needs the bfcl-eval wheel extracted by scripts/ci-bfcl.sh (target/bfcl) and a built `fexpr`
binary (target/debug/fexpr or target/release/fexpr, or $FEXPR). BFCL's decoder is
`default_decode_ast_prompting` and the functions it calls, taken verbatim from
bfcl_eval/model_handler/utils.py (extracted with `ast`, so the wheel's heavy imports —
tree-sitter, tenacity, ... — are not needed). Note that BFCL's decoder `eval()`s binary
operations and lambdas found in the text: run it only on trusted corpora such as this one.

A decoded call counts as correct when its name and arguments equal an expected call's
(numbers compared by value, tuples as lists); every other decoded call counts as unsupported
(neither the text nor the schema supports it). For fexpr only `valid` verdicts count.
"""

import ast
import importlib.util
import json
import os
import re
import subprocess
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BFCL = os.path.join(ROOT, "target", "bfcl", "bfcl_eval")


def load_bfcl_decoder():
    enums_path = os.path.join(BFCL, "constants", "enums.py")
    spec = importlib.util.spec_from_file_location("bfcl_enums", enums_path)
    enums = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(enums)
    source = open(os.path.join(BFCL, "model_handler", "utils.py")).read()
    wanted = {"ast_parse", "resolve_ast_call", "resolve_ast_by_type", "default_decode_ast_prompting"}
    tree = ast.parse(source)
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in wanted]
    assert {d.name for d in defs} == wanted, "BFCL decoder functions not found"
    namespace = {"ast": ast, "re": re, "ReturnFormat": enums.ReturnFormat}
    exec(compile(ast.Module(body=defs, type_ignores=[]), "bfcl_utils", "exec"), namespace)
    return namespace["default_decode_ast_prompting"]


def normalize(v):
    if isinstance(v, tuple):
        v = list(v)
    if isinstance(v, list):
        return [normalize(x) for x in v]
    if isinstance(v, dict):
        return {k: normalize(x) for k, x in v.items()}
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, (int, float)):
        return float(v)
    return v


def score(calls, expected):
    """(correct, unsupported) for decoded `calls` [(name, kwargs)] against expected calls."""
    left = [(e["name"], normalize(e["kwargs"])) for e in expected]
    correct = unsupported = 0
    for name, kwargs in calls:
        key = (name, normalize(kwargs))
        if key in left:
            left.remove(key)
            correct += 1
        else:
            unsupported += 1
    return correct, unsupported


def bfcl_calls(decode, output):
    try:
        decoded = decode(output)
    except Exception:
        return []
    calls = []
    for item in decoded if isinstance(decoded, list) else []:
        if isinstance(item, dict) and len(item) == 1:
            (name, kwargs), = item.items()
            calls.append((name, kwargs if isinstance(kwargs, dict) else {}))
    return calls


def fexpr_calls(binary, tools, output):
    out = subprocess.run([binary, "check", "--tools-json", tools, output],
                         capture_output=True, text=True, check=True)
    verdicts = [json.loads(l) for l in out.stdout.splitlines() if l.strip()]
    return [(v["name"], v["kwargs"]) for v in verdicts if v["valid"]]


def main():
    corpus = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests/data/model_outputs.jsonl")
    tools = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "tests/data/corpus_tools.json")
    binary = os.environ.get("FEXPR") or next(
        (p for p in (os.path.join(ROOT, "target", d, "fexpr") for d in ("release", "debug")) if os.path.exists(p)),
        None)
    if binary is None or not os.path.isdir(BFCL):
        sys.exit("need target/bfcl (scripts/ci-bfcl.sh) and a built fexpr binary")
    decode = load_bfcl_decoder()
    totals = defaultdict(lambda: [0, 0, 0, 0, 0])  # expected, bfcl ok, bfcl bad, fexpr ok, fexpr bad
    for line in open(corpus):
        if not line.strip():
            continue
        case = json.loads(line)
        row = totals[case["category"]]
        row[0] += len(case["expected"])
        ok, bad = score(bfcl_calls(decode, case["output"]), case["expected"])
        row[1] += ok
        row[2] += bad
        ok, bad = score(fexpr_calls(binary, tools, case["output"]), case["expected"])
        row[3] += ok
        row[4] += bad
    print(f"{'category':<20} {'expected':>8} {'BFCL ok':>8} {'BFCL bad':>9} {'fexpr ok':>9} {'fexpr bad':>10}")
    grand = [0, 0, 0, 0, 0]
    for cat, row in sorted(totals.items()):
        print(f"{cat:<20} {row[0]:>8} {row[1]:>8} {row[2]:>9} {row[3]:>9} {row[4]:>10}")
        grand = [a + b for a, b in zip(grand, row)]
    print(f"{'total':<20} {grand[0]:>8} {grand[1]:>8} {grand[2]:>9} {grand[3]:>9} {grand[4]:>10}")


if __name__ == "__main__":
    main()
