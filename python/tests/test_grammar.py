"""``ToolManager.grammar``: the grammar of the calls the checker accepts, for constrained decoding."""

import pytest

import fexpr


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def scale(x: float, factor: float = 2.0) -> float:
    """Scale a number."""
    return x * factor


def test_a_grammar_of_the_tools_calls():
    manager = fexpr.ToolManager(tools=[add, scale])
    grammar = manager.grammar()
    assert isinstance(grammar, fexpr.Grammar)
    assert (grammar.format, grammar.markup, grammar.tool_choice) == ("lark", "pythonic", "required")
    assert grammar.text.startswith("%llguidance {}")
    assert '"add" P_LPARS' in grammar.text and '"scale" P_LPARS' in grammar.text
    assert grammar.left_out == []
    assert grammar.vllm() == {"structured_outputs": {"grammar": grammar.text}}
    tool = grammar.openai_tool("calls", "Write the calls.")
    assert tool["format"] == {"type": "grammar", "syntax": "lark", "definition": grammar.text}
    with pytest.raises(ValueError, match="EBNF"):
        grammar.sglang()


def test_formats_markups_and_tool_choices():
    manager = fexpr.ToolManager(tools=[add])
    ebnf = manager.grammar(format="ebnf", markup="hermes", tool_choice="required")
    assert ebnf.text.startswith("root ::= calls")
    assert ebnf.sglang() == {"ebnf": ebnf.text}
    with pytest.raises(ValueError, match="Lark"):
        ebnf.openai_tool()
    tag = manager.grammar(format="structural-tag", markup="qwen3-coder", tool_choice="add")
    assert tag.vllm()["structured_outputs"]["structural_tag"] == tag.text
    assert tag.sglang()["response_format"]["type"] == "structural_tag"
    for bad in [dict(format="yaml"), dict(markup="llama2"), dict(tool_choice="sub")]:
        with pytest.raises(ValueError):
            manager.grammar(**bad)


def test_what_a_grammar_cannot_state_is_listed():
    manager = fexpr.ToolManager(tools=[add])
    assert manager.grammar(format="gbnf").approximations == []
    # GBNF's prose excludes only the markup's trigger, not a line that is a call: listed.
    grammar = manager.grammar(format="gbnf", tool_choice="auto")
    assert [a["kind"] for a in grammar.approximations] == ["UnknownTool"]
    assert grammar.approximations[0]["what"].startswith("prose")
