#!/usr/bin/env python3
"""Write the fuzz seed corpora from the tests (run from the repository root; idempotent).

- fuzz/seeds/parse/ and fuzz/seeds/evaluate/: the expressions of tests/*.rs (Rust string
  literals that look like calls) and the small cases of tests/adversarial/cases.jsonl.
- fuzz/seeds/frontend/: the model outputs of tests/data/model_outputs.jsonl.
- fuzz/seeds/json_input/: the JSON cases of tests/adversarial/cases.jsonl (forms `json` and
  `model_output`) and the model outputs that are JSON.
- fuzz/seeds/wire_decode/: written by `cargo run --example fuzz_wire_seeds` (real wire messages
  need the encoder), which this script runs last.
"""
import hashlib, json, pathlib, re, subprocess, sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\", '"': '"', "'": "'"}


def unescape(s):
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s):
            c = s[i + 1]
            if c in ESCAPES:
                out.append(ESCAPES[c]); i += 2; continue
            if c == "u":
                m = re.match(r"\{([0-9a-fA-F]+)\}", s[i + 2:])
                if m:
                    out.append(chr(int(m.group(1), 16))); i += 2 + m.end(); continue
            return None
        out.append(s[i]); i += 1
    return "".join(out)


def expressions():
    for path in sorted((ROOT / "tests").glob("*.rs")):
        for m in LITERAL.finditer(path.read_text()):
            text = unescape(m.group(1))
            if text and "(" in text and len(text) < 500:
                yield text
    for line in (ROOT / "tests/adversarial/cases.jsonl").read_text().splitlines():
        if line.startswith("{"):
            case = json.loads(line)
            text = case.get("source") or "".join(t * n for t, n in case["parts"])
            if len(text) <= 4096:
                yield text


def main():
    texts = sorted(set(expressions()))
    for target in ["parse", "evaluate"]:
        out = ROOT / "fuzz/seeds" / target
        out.mkdir(parents=True, exist_ok=True)
        for text in texts:
            data = text.encode()
            (out / hashlib.sha1(data).hexdigest()[:16]).write_bytes(data)
    print(f"{len(texts)} expressions -> fuzz/seeds/{{parse,evaluate}}")
    out = ROOT / "fuzz/seeds/frontend"
    out.mkdir(parents=True, exist_ok=True)
    outputs = [json.loads(line)["output"]
               for line in (ROOT / "tests/data/model_outputs.jsonl").read_text().splitlines()
               if line.strip()]
    for text in outputs:
        data = text.encode()
        (out / hashlib.sha1(data).hexdigest()[:16]).write_bytes(data)
    print(f"{len(outputs)} model outputs -> fuzz/seeds/frontend")
    out = ROOT / "fuzz/seeds/json_input"
    out.mkdir(parents=True, exist_ok=True)
    jsons = [text for text in outputs if text.lstrip()[:1] in ("{", "[")]
    for line in (ROOT / "tests/adversarial/cases.jsonl").read_text().splitlines():
        if line.startswith("{"):
            case = json.loads(line)
            if case.get("form") in ("json", "model_output"):
                text = case.get("source") or "".join(t * n for t, n in case["parts"])
                if len(text) <= 4096:
                    jsons.append(text)
    for text in jsons:
        data = text.encode()
        (out / hashlib.sha1(data).hexdigest()[:16]).write_bytes(data)
    print(f"{len(jsons)} JSON inputs -> fuzz/seeds/json_input")
    subprocess.run(["cargo", "run", "-q", "--example", "fuzz_wire_seeds", "--",
                    str(ROOT / "fuzz/seeds/wire_decode")], cwd=ROOT, check=True)


if __name__ == "__main__":
    sys.exit(main())
