//! Reasoning: the markers every model format writes around its thinking, in one table, and the
//! blocks they make in a text. Every format reader steps over these blocks (markup of any format
//! inside reasoning is never a call), and the front door's lexical cutter can read the same
//! table.
//!
//! A block runs from its opening marker to the first of its closing markers. A block left open
//! runs to the end of the text (a stream cut inside reasoning is still reasoning), or to the
//! first of the reader's own ends (Kimi K2's template ends reasoning at
//! `<|tool_calls_section_begin|>`). A closing marker before any opening one closes a block the
//! chat template opened in the prompt (Qwen3 and DeepSeek R1 end their prompt with `<think>`):
//! from the start of the text. A marker is a marker wherever it stands, next to a quote or not
//! (``I'll use `add`</think>`` closes the block).

use crate::error::Span;

use super::scan::{find, span};

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

/// The reasoning blocks of a text, found in reading order: a reader asks for the next block
/// after the text it has read, so a marker inside text a reader took (a call's string
/// argument) opens no block. Each marker is searched for forward only: linear in the text.
pub(crate) struct Finder<'t> {
    text: &'t str,
    markers: Vec<&'static Marker>,
    ends: &'static [&'static str],
    /// Each marker's next opening at or after the last place asked (`None`: no more).
    opens: Vec<Option<usize>>,
}

impl<'t> Finder<'t> {
    /// The blocks of `text` of every marker but those opening with one of `except`; a block
    /// left open ends at the first of `ends` after its opening marker, else at the end.
    pub(crate) fn new(text: &'t str, ends: &'static [&'static str], except: &[&str]) -> Finder<'t> {
        let markers: Vec<&'static Marker> = MARKERS
            .iter()
            .filter(|m| !except.contains(&m.open))
            .collect();
        let opens = markers.iter().map(|m| find(text, 0, m.open)).collect();
        Finder {
            text,
            markers,
            ends,
            opens,
        }
    }

    /// The block the chat template opened, if a closing marker comes before any opening one:
    /// from the start of the text to that marker's end.
    pub(crate) fn opened_by_template(&self) -> Option<Span> {
        let first_open = self.opens.iter().flatten().min().copied();
        let end = self
            .markers
            .iter()
            .filter(|m| m.template_opened)
            .flat_map(|m| m.closes.iter())
            .filter_map(|c| find(self.text, 0, c).map(|p| p + c.len()))
            .min()?;
        first_open.is_none_or(|o| end <= o).then(|| span(0, end))
    }

    /// Where the next block opens at or after `from`.
    pub(crate) fn next_open(&mut self, from: usize) -> Option<usize> {
        for (k, m) in self.markers.iter().enumerate() {
            if self.opens[k].is_some_and(|o| o < from) {
                self.opens[k] = find(self.text, from, m.open);
            }
        }
        self.opens.iter().flatten().min().copied()
    }

    /// The next block opening at or after `from`.
    pub(crate) fn next(&mut self, from: usize) -> Option<Span> {
        let open = self.next_open(from)?;
        let k = self.opens.iter().position(|o| *o == Some(open))?;
        let marker = self.markers[k];
        let body = open + marker.open.len();
        let first = |patterns: &[&str]| {
            patterns
                .iter()
                .filter_map(|p| find(self.text, body, p).map(|at| (at, at + p.len())))
                .min()
        };
        let end = match first(marker.closes) {
            Some((_, end)) => end,
            None => first(self.ends).map_or(self.text.len(), |(at, _)| at),
        };
        Some(span(open, end))
    }
}

#[cfg(test)]
mod tests {
    use super::Finder;

    /// Every block, read from the start of the text.
    fn spans<'t>(text: &'t str, ends: &'static [&'static str]) -> Vec<&'t str> {
        let mut finder = Finder::new(text, ends, &[]);
        let mut out: Vec<&str> = finder
            .opened_by_template()
            .map(|s| &text[s.range()])
            .into_iter()
            .collect();
        let mut from = out.first().map_or(0, |s| s.len());
        while let Some(s) = finder.next(from) {
            out.push(&text[s.range()]);
            from = s.end as usize;
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
    fn markers_a_reader_steps_past_open_nothing() {
        let text = "call(\"<think>\") then <think>x</think>";
        let mut finder = Finder::new(text, &[], &[]);
        let s = finder.next(14).unwrap();
        assert_eq!(&text[s.range()], "<think>x</think>");
        // Excluded markers are the reader's own.
        let text = "<|channel|>analysis<|message|>x<|end|>";
        assert!(Finder::new(text, &[], &[super::HARMONY_ANALYSIS])
            .next(0)
            .is_none());
    }
}
