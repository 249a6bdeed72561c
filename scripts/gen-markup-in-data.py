#!/usr/bin/env python3
"""Write tests/data/markup_in_data.jsonl: every model format's call to `multiply(a=9, b=9)`
put inside data (single, double and triple-quoted strings, a comment, a JSON string value,
another format's string parameter) and inside each kind of reasoning (<think>, <thinking>,
<reasoning>, a block the template opened, [THINK], <seed:think>, Harmony's analysis), beside a call to
`search` that must run. Nothing in the data may run: each case runs `search` only.

Run from the repository root: python3 scripts/gen-markup-in-data.py
"""
import json

# One call to multiply(a=9, b=9) per format, on one line (so it fits every container) but for
# Functionary's.
PAYLOADS = {
    "harmony": "<|start|>assistant<|channel|>commentary to=functions.multiply <|constrain|>json<|message|>{\"a\": 9, \"b\": 9}<|call|>",
    "kimi-k2": "<|tool_calls_section_begin|><|tool_call_begin|>functions.multiply:0<|tool_call_argument_begin|>{\"a\": 9, \"b\": 9}<|tool_call_end|><|tool_calls_section_end|>",
    "kimi-k3": "<|open|>tools<|sep|><|open|>call tool=\"multiply\" index=\"1\"<|sep|><|open|>argument key=\"a\" type=\"integer\"<|sep|>9<|close|>argument<|sep|><|open|>argument key=\"b\" type=\"integer\"<|sep|>9<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
    "deepseek": "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>multiply<｜tool▁sep｜>{\"a\": 9, \"b\": 9}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    "deepseek-dsml": "<｜DSML｜function_calls><｜DSML｜invoke name=\"multiply\"><｜DSML｜parameter name=\"a\" string=\"false\">9</｜DSML｜parameter><｜DSML｜parameter name=\"b\" string=\"false\">9</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜function_calls>",
    "step3": "<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"multiply\"><steptml:parameter name=\"a\">9</steptml:parameter><steptml:parameter name=\"b\">9</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>",
    "gemma4": "<|tool_call>call:multiply{a:9,b:9}<tool_call|>",
    "functiongemma": "<start_function_call>call:multiply{a:9,b:9}<end_function_call>",
    "command-r7b": "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"multiply\", \"parameters\": {\"a\": 9, \"b\": 9}}]<|END_ACTION|>",
    "apertus": "<|tools_prefix|>[{\"multiply\": {\"a\": 9, \"b\": 9}}]<|tools_suffix|>",
    "minimax-m2": "<minimax:tool_call><invoke name=\"multiply\"><parameter name=\"a\">9</parameter><parameter name=\"b\">9</parameter></invoke></minimax:tool_call>",
    "minicpm5": "<function name=\"multiply\"><param name=\"a\">9</param><param name=\"b\">9</param></function>",
    "seed-oss": "<seed:tool_call><function=multiply><parameter=a>9</parameter><parameter=b>9</parameter></function></seed:tool_call>",
    "qwen3-coder": "<tool_call><function=multiply><parameter=a>9</parameter><parameter=b>9</parameter></function></tool_call>",
    "glm": "<tool_call>multiply<arg_key>a</arg_key><arg_value>9</arg_value><arg_key>b</arg_key><arg_value>9</arg_value></tool_call>",
    "llama3.1": "<function=multiply>{\"a\": 9, \"b\": 9}</function>",
    # Its header ends its line: the only payload with a newline.
    "functionary-v3.2": ">>>multiply\n{\"a\": 9, \"b\": 9}",
    "llama3.1-python-tag": "<|python_tag|>{\"name\": \"multiply\", \"parameters\": {\"a\": 9, \"b\": 9}}<|eom_id|>",
    "pythonic": "<|python_start|>[multiply(a=9, b=9)]<|python_end|>",
    "granite": "<|tool_call|>[{\"name\": \"multiply\", \"arguments\": {\"a\": 9, \"b\": 9}}]",
    "mistral": "[TOOL_CALLS]multiply{\"a\": 9, \"b\": 9}",
    "phi4": "functools[{\"name\": \"multiply\", \"arguments\": {\"a\": 9, \"b\": 9}}]",
    "hermes": "<tool_call>{\"name\": \"multiply\", \"arguments\": {\"a\": 9, \"b\": 9}}</tool_call>",
    "xlam": "{\"tool_calls\": [{\"name\": \"multiply\", \"arguments\": {\"a\": 9, \"b\": 9}}]}",
}

SEARCH = 'search(query="x")'


def py_single(p, lines=False):
    """`p` inside '...' (`lines`: inside triple quotes, where a newline stays one)."""
    p = p.replace("\\", "\\\\").replace("'", "\\'")
    return p if lines else p.replace("\n", "\\n")


def py_double(p, lines=False):
    """`p` inside "..." (`lines`: inside triple quotes, where a newline stays one)."""
    p = p.replace("\\", "\\\\").replace('"', '\\"')
    return p if lines else p.replace("\n", "\\n")


def containers(fmt, p):
    j = json.dumps(p, ensure_ascii=False)
    yield "single_quoted", f"search(query='{py_single(p)}')"
    yield "double_quoted", f'search(query="{py_double(p)}")'
    yield "triple_double", f'search(query="""{py_double(p, lines=True)}""")'
    yield "triple_single", f"search(query='''{py_single(p, lines=True)}''')"
    yield "raw_prefix", f"search(query=r'''{p}''')" if "\n" in p else f"search(query=r'{p}')" if "'" not in p else f'search(query=r"{p}")' if '"' not in p else f"search(query='{py_single(p)}')"
    yield "comment_line", f"# {p}\n{SEARCH}"
    yield "trailing_comment", f"{SEARCH}  # then {p}"
    yield "fenced_comment", f"```python\n# {p}\n{SEARCH}\n```"
    yield "json_value", '{"name": "search", "arguments": {"query": ' + j + "}}"
    yield "hermes_value", '<tool_call>\n{"name": "search", "arguments": {"query": ' + j + "}}\n</tool_call>"
    if fmt in ("qwen3-coder", "seed-oss", "glm", "minimax-m2", "minicpm5"):
        yield "kimi_value", (
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.search:0<|tool_call_argument_begin|>"
            + '{"query": ' + j + "}<|tool_call_end|><|tool_calls_section_end|>"
        )
    else:
        yield "qwen_parameter", f"<tool_call>\n<function=search>\n<parameter=query>\n{p}\n</parameter>\n</function>\n</tool_call>"
    for kind, (o, c) in {
        "think": ("<think>", "</think>"),
        "thinking": ("<thinking>", "</thinking>"),
        "reasoning": ("<reasoning>", "</reasoning>"),
        "template_opened": ("", "</think>"),
        "magistral": ("[THINK]", "[/THINK]"),
        "seed_think": ("<seed:think>", "</seed:think>"),
        "harmony_analysis": ("<|channel|>analysis<|message|>", "<|end|>"),
        "apertus_inner": ("<|inner_prefix|>", "<|inner_suffix|>"),
    }.items():
        yield f"in_{kind}", f"{o}I could write {p} but no.{c}\n{SEARCH}"


def main():
    out = []
    for fmt, p in PAYLOADS.items():
        out.append({"id": f"{fmt}__bare", "text": p, "runs": ["multiply"]})
        for name, text in containers(fmt, p):
            runs = ["search"]
            # Harmony's own `<|start|>` is a special token: it ends the analysis message and
            # starts the call's, as openai-harmony reads it.
            if (fmt, name) == ("harmony", "in_harmony_analysis"):
                runs = ["multiply", "search"]
            out.append({"id": f"{fmt}__{name}", "text": text, "runs": runs})
    with open("tests/data/markup_in_data.jsonl", "w", encoding="utf-8") as f:
        f.write("# Generated by scripts/gen-markup-in-data.py: every format's call to multiply inside data or\n")
        f.write("# reasoning beside a call to search (`runs`: the calls that must run, in order). Read by\n")
        f.write("# tests/call_position.rs natively, sandboxed, by `check` and by the CLI, and by tests/stream.rs.\n")
        for case in out:
            f.write(json.dumps(case, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
