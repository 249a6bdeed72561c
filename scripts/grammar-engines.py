#!/usr/bin/env python3
"""Check `fexpr grammar` with the engines' own Python packages, on the BFCL cases.

For every BFCL Python case (target/bfcl, from scripts/ci-bfcl.sh) it writes the case's tools
to a file and asks `fexpr grammar --tools-json F` for a grammar, then:

- Lark, pythonic, `required`: compiled by Python's `llguidance` (`grammar_from("lark", ...)`,
  the byte tokenizer); the ground truth written as model text (as tests/bfcl.rs writes it)
  must be accepted when `fexpr check --strict` accepts it; for every fourth case, mutations
  (unknown keyword, unknown tool, wrong-typed literal, missing required argument) must be
  refused by the grammar and by `fexpr check`, and strings sampled from the grammar (random
  walks over its token mask, every allowed token equally likely) must be valid calls for
  `fexpr check`;
- for every tenth case, GBNF (llguidance's GBNF reader), EBNF and the structural tag
  (XGrammar's `Grammar.from_ebnf` / `from_structural_tag`) must compile, and EBNF must accept
  the ground truth;
- for the demo tools, every format, markup and tool choice compiles in its engine and accepts
  a call of `add` in that markup exactly when the tool choice allows one.

Usage (in a venv with `pip install llguidance==1.9.1 xgrammar`):

    python scripts/grammar-engines.py [path/to/fexpr] [--all]

`--all` runs the mutations and samples on every case. Prints counts; exits 1 on a failure.
"""

import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import llguidance
import xgrammar

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "target/bfcl/bfcl_eval/data"
CATEGORIES = [
    "simple_python", "multiple", "parallel", "parallel_multiple",
    "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
]
TOK = llguidance.LLTokenizer("byte")


def py_repr(v):
    """Python's repr of a JSON value (what `fexpr::Value::repr` writes)."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(py_repr(x) for x in v) + "]"
    return "{" + ", ".join(f"{py_repr(k)}: {py_repr(x)}" for k, x in v.items()) + "}"


def first(v):
    if isinstance(v, dict):
        out = {}
        for k, alts in v.items():
            if isinstance(alts, list):
                pick = [a for a in alts if a != ""]
                if pick:
                    out[k] = first(pick[0])
            else:
                out[k] = first(alts)
        return out
    if isinstance(v, list):
        return [first(x) for x in v]
    return v


def cases():
    for category in CATEGORIES:
        questions = [json.loads(l) for l in open(DATA / f"BFCL_v4_{category}.json") if l.strip()]
        answers = {
            a["id"]: a["ground_truth"]
            for a in (json.loads(l) for l in open(DATA / f"possible_answer/BFCL_v4_{category}.json") if l.strip())
        }
        for q in questions:
            truth = answers.get(q["id"])
            if truth is None:
                continue
            calls = []
            for call in truth:
                (name, params), = call.items()
                args = []
                for k, values in params.items():
                    pick = [v for v in values if v != ""]
                    if pick:
                        args.append((k, py_repr(first(pick[0]))))
                calls.append((name, args))
            yield q["id"], q["function"], calls


def text_of(calls):
    return "[" + ", ".join(f"{n}({', '.join(f'{k}={v}' for k, v in a)})" for n, a in calls) + "]"


def run(fexpr, *args):
    return subprocess.run([fexpr, *args], capture_output=True, text=True)


def grammar(fexpr, tools, fmt, choice="required"):
    out = run(fexpr, "grammar", "--tools-json", tools, "--format", fmt, "--markup", "pythonic",
              "--tool-choice", choice)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    return out.stdout


def check_valid(fexpr, tools, text, strict):
    args = ["check", "--tools-json", tools, "--format", "json"] + (["--strict"] if strict else []) + [text]
    out = run(fexpr, *args)
    rows = [json.loads(l) for l in out.stdout.split("\n") if l.strip()]
    return bool(rows) and all(r.get("valid") for r in rows)


def lark_matcher(text):
    m = llguidance.LLMatcher(TOK, text if text.lstrip().startswith("{") else llguidance.grammar_from("lark", text))
    if m.is_error():
        raise RuntimeError(m.get_error())
    return m


def accepts(matcher, text):
    m = matcher.deep_copy()
    tokens = TOK.tokenize_bytes(text.encode())
    return m.validate_tokens(tokens) == len(tokens) and m.consume_tokens(tokens) and m.is_accepting()


def sample(matcher, rng, max_bytes=4000):
    m = matcher.deep_copy()
    out = bytearray()
    while True:
        mask = m.compute_logit_bias()
        allowed = [t for t in range(TOK.vocab_size) if mask[t] > 0]
        t = rng.choice(allowed)
        if t == TOK.eos_token:
            return out.decode()
        out += TOK.decode_bytes([t])
        if len(out) > max_bytes:
            return None
        m.consume_token(t)
        if m.is_stopped():
            return out.decode()


def mutations(calls, functions):
    """(kind, text) mutations of the first call."""
    name, args = calls[0]
    rest = calls[1:]
    fn = next((f for f in functions if f["name"] == name), None)
    out = [("unknown keyword", [(name, args + [("zz_unknown", "1")])] + rest),
           ("unknown tool", [(name + "_zz", args)] + rest)]
    if args:
        k, v = args[0]
        wrong = "12345" if v.startswith(("'", '"')) else "'zz'"
        out.append(("wrong-typed literal", [(name, [(k, wrong)] + args[1:])] + rest))
    required = (fn or {}).get("parameters", {}).get("required", [])
    given = [k for k, _ in args if k in required]
    if given:
        out.append(("missing required", [(name, [(k, v) for k, v in args if k != given[0]])] + rest))
    return [(kind, text_of(c)) for kind, c in out]


DEMO_CALLS = {
    "pythonic": "[add(a=1, b=2)]",
    "hermes": '<tool_call>\n{"name": "add", "arguments": {"a": 1, "b": 2}}\n</tool_call>',
    "llama3-json": '{"name": "add", "parameters": {"a": 1, "b": 2}}',
    "qwen3-coder": "<tool_call>\n<function=add>\n<parameter=a>\n1\n</parameter>\n"
                   "<parameter=b>\n2\n</parameter>\n</function>\n</tool_call>",
}


def demo_matrix(fexpr):
    """Every format, markup and tool choice for the demo tools: (checked, failures)."""
    failures, checked = [], 0
    for markup, call in DEMO_CALLS.items():
        for choice in ["required", "auto", "none", "add", "multiply"]:
            for fmt in ["lark", "gbnf", "ebnf", "structural-tag"]:
                out = run(fexpr, "grammar", "--tools", "demo", "--format", fmt, "--markup", markup,
                          "--tool-choice", choice)
                text = out.stdout
                if fmt == "ebnf" or fmt == "structural-tag":
                    g = (xgrammar.Grammar.from_ebnf(text) if fmt == "ebnf"
                         else xgrammar.Grammar.from_structural_tag(text))
                    accepted = xgrammar.testing._is_grammar_accept_string(g, call)
                else:
                    m = lark_matcher(llguidance.grammar_from("gbnf", text) if fmt == "gbnf" else text)
                    accepted = accepts(m, call)
                checked += 1
                if accepted != (choice in ("required", "auto", "add")):
                    failures.append(f"demo {fmt} {markup} {choice}: accepts the add call: {accepted}")
    return checked, failures


def main():
    fexpr = next((a for a in sys.argv[1:] if not a.startswith("--")), str(ROOT / "target/debug/fexpr"))
    every = 1 if "--all" in sys.argv else 4
    rng = random.Random(40)
    counts = dict(cases=0, strict_valid=0, lark_accepts=0, mutations=0, mutations_refused=0,
                  samples=0, samples_valid=0, other_formats=0, ebnf_accepts=0)
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        tools = str(Path(tmp) / "tools.json")
        for i, (cid, functions, calls) in enumerate(cases()):
            counts["cases"] += 1
            Path(tools).write_text(json.dumps(functions))
            text = text_of(calls)
            lark = grammar(fexpr, tools, "lark")
            m = lark_matcher(lark)
            valid = check_valid(fexpr, tools, text, strict=True)
            if valid:
                counts["strict_valid"] += 1
                if accepts(m, text):
                    counts["lark_accepts"] += 1
                else:
                    failures.append(f"{cid}: Lark refuses the ground truth {text}")
            if i % every == 0:
                for kind, mutated in mutations(calls, functions):
                    if check_valid(fexpr, tools, mutated, strict=False):
                        continue  # not a mutation for this schema (an `Any` parameter, say)
                    counts["mutations"] += 1
                    if accepts(m, mutated):
                        failures.append(f"{cid}: Lark accepts the {kind} mutation {mutated}")
                    else:
                        counts["mutations_refused"] += 1
                s = sample(m, rng)
                if s is not None:
                    counts["samples"] += 1
                    if check_valid(fexpr, tools, s, strict=False):
                        counts["samples_valid"] += 1
                    else:
                        failures.append(f"{cid}: check refuses the sample {s!r}")
            if i % 10 == 0:
                counts["other_formats"] += 1
                lark_matcher(llguidance.grammar_from("gbnf", grammar(fexpr, tools, "gbnf")))
                ebnf = xgrammar.Grammar.from_ebnf(grammar(fexpr, tools, "ebnf"))
                xgrammar.Grammar.from_structural_tag(grammar(fexpr, tools, "structural-tag"))
                if valid:
                    if xgrammar.testing._is_grammar_accept_string(ebnf, text):
                        counts["ebnf_accepts"] += 1
                    else:
                        failures.append(f"{cid}: EBNF refuses the ground truth {text}")
    counts["demo_matrix"], matrix_failures = demo_matrix(fexpr)
    failures += matrix_failures
    print(json.dumps(counts, indent=1))
    for f in failures[:40]:
        print("FAIL", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
