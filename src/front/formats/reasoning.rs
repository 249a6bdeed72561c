//! Reasoning: the markers every model format writes around its thinking, in one table. The
//! front door's lexical reading ([`crate::front::lex`]) finds the blocks they make, for every
//! format reader and for the rest of the front door alike: markup of any format inside
//! reasoning is never a call.
//!
//! A block runs from its opening marker to the first of its closing markers. A block left open
//! runs to the end of the text (a stream cut inside reasoning is still reasoning), or to the
//! first of the reader's own ends (Kimi K2's template ends reasoning at
//! `<|tool_calls_section_begin|>`). A closing marker before any opening one closes a block the
//! chat template opened in the prompt (Qwen3 and DeepSeek R1 end their prompt with `<think>`):
//! from the start of the text. A marker opens a block only outside the text's data (a string
//! argument, a comment); inside reasoning, a closing marker closes it wherever it stands, next
//! to a quote or not (``I'll use `add`</think>`` closes the block).

/// One kind of reasoning block.
pub(crate) struct Marker {
    /// What opens it.
    pub open: &'static str,
    /// What closes it (the first of these).
    pub closes: &'static [&'static str],
    /// Whether a closing marker with no opening one before it closes a block the chat
    /// template opened (from the start of the text).
    pub template_opened: bool,
}

/// Every reasoning marker the formats write.
pub(crate) const MARKERS: &[Marker] = &[
    // Qwen3, DeepSeek R1 and V3.1+, GLM, Kimi K2-Thinking, MiniMax-M2, Step3, Hermes-style models.
    Marker {
        open: "<think>",
        closes: &["</think>"],
        template_opened: true,
    },
    Marker {
        open: "<thinking>",
        closes: &["</thinking>"],
        template_opened: true,
    },
    Marker {
        open: "<reasoning>",
        closes: &["</reasoning>"],
        template_opened: true,
    },
    // Seed-OSS.
    Marker {
        open: "<seed:think>",
        closes: &["</seed:think>"],
        template_opened: true,
    },
    // Magistral.
    Marker {
        open: "[THINK]",
        closes: &["[/THINK]"],
        template_opened: true,
    },
    // Command R7B and Command A.
    Marker {
        open: "<|START_THINKING|>",
        closes: &["<|END_THINKING|>"],
        template_opened: true,
    },
    // Apertus.
    Marker {
        open: "<|inner_prefix|>",
        closes: &["<|inner_suffix|>"],
        template_opened: true,
    },
    // Kimi's `◁think▷` (Kimi-VL, Kimi K2 when served without special tokens).
    Marker {
        open: "◁think▷",
        closes: &["◁/think▷"],
        template_opened: true,
    },
    // Kimi K3's `think` channel.
    Marker {
        open: "<|open|>think<|sep|>",
        closes: &["<|close|>think<|sep|>"],
        template_opened: true,
    },
    // Gemma 4's thought channel (its prompt may open it after a tool response).
    Marker {
        open: "<|channel>thought",
        closes: &["<channel|>"],
        template_opened: true,
    },
    // gpt-oss (Harmony): the `analysis` channel, up to the message's end or the next message.
    Marker {
        open: HARMONY_ANALYSIS,
        closes: &["<|end|>", "<|start|>"],
        template_opened: false,
    },
];

/// Harmony's analysis message (the Harmony reader reads its messages itself).
pub(crate) const HARMONY_ANALYSIS: &str = "<|channel|>analysis<|message|>";

#[cfg(test)]
mod tests {
    use crate::front::lex::{markers, opened_by_template, reasoning_at};

    /// Every block of `text`, read from its start (data stepped over as the readers do).
    fn spans<'t>(text: &'t str, ends: &'static [&'static str]) -> Vec<&'t str> {
        let all = markers(&[]);
        let b = text.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        if let Some(s) = opened_by_template(text, 0, text.len(), &all) {
            out.push(&text[s.range()]);
            i = s.end as usize;
        }
        while i < b.len() {
            if let Some(s) = reasoning_at(text, i, &all, ends) {
                out.push(&text[s.range()]);
                i = s.end as usize;
            } else if let Some(end) = crate::front::lex::data_end(b, i) {
                i = end;
            } else {
                i += 1;
            }
        }
        out
    }

    #[test]
    fn every_kind_of_block() {
        let text = "<think>a</think> x <seed:think>b</seed:think> [THINK]c[/THINK] <|START_THINKING|>d<|END_THINKING|> <|channel>thought\ne<channel|> <|channel|>analysis<|message|>f<|end|> <thinking>g</thinking><reasoning>h</reasoning> ◁think▷i◁/think▷";
        assert_eq!(
            spans(text, &[]),
            [
                "<think>a</think>",
                "<seed:think>b</seed:think>",
                "[THINK]c[/THINK]",
                "<|START_THINKING|>d<|END_THINKING|>",
                "<|channel>thought\ne<channel|>",
                "<|channel|>analysis<|message|>f<|end|>",
                "<thinking>g</thinking>",
                "<reasoning>h</reasoning>",
                "◁think▷i◁/think▷",
            ]
        );
    }

    #[test]
    fn opened_by_the_template_left_open_and_ended_by_the_reader() {
        assert_eq!(
            spans("I'll use `add`</think>add(a=1)", &[]),
            ["I'll use `add`</think>"]
        );
        assert_eq!(spans("ok <think>still going", &[]), ["<think>still going"]);
        let text = "<think>two calls<|tool_calls_section_begin|>…";
        assert_eq!(
            spans(text, &["<|tool_calls_section_begin|>"]),
            ["<think>two calls"]
        );
        // A closed block holds the reader's end as text.
        let text = "<think>a <|tool_calls_section_begin|> b</think>c";
        assert_eq!(
            spans(text, &["<|tool_calls_section_begin|>"]),
            ["<think>a <|tool_calls_section_begin|> b</think>"]
        );
    }

    #[test]
    fn other_markers_inside_a_block_are_its_text() {
        let text = "<think>say <seed:think> or </seed:think></think>[THINK]x";
        assert_eq!(
            spans(text, &[]),
            [
                "<think>say <seed:think> or </seed:think></think>",
                "[THINK]x"
            ]
        );
        // A lone closing marker after an opened block is text.
        assert_eq!(
            spans("<think>a</think>b</think>", &[]),
            ["<think>a</think>"]
        );
        assert!(spans("no reasoning here", &[]).is_empty());
    }

    #[test]
    fn markers_in_data_open_nothing() {
        assert_eq!(
            spans("call(\"<think>\") then <think>x</think>", &[]),
            ["<think>x</think>"]
        );
        assert!(spans("search(q='</think>')  # <think>", &[]).is_empty());
        // Excluded markers are the reader's own.
        let only = markers(&[super::HARMONY_ANALYSIS]);
        assert!(reasoning_at("<|channel|>analysis<|message|>x<|end|>", 0, &only, &[]).is_none());
    }
}
