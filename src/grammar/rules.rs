//! The grammar as data: rules of [`Node`]s, and one printer per syntax (Lark as llguidance
//! reads it, llama.cpp's GBNF, XGrammar's EBNF).
//!
//! A rule is either a terminal (regular: literals, character classes, repetition; Lark makes it
//! one lexeme, which is what keeps llguidance fast) or a rule of the grammar. A
//! [`Body::Keywords`] rule is a set of items (keyword arguments, a record's keys) each written at
//! most once, the required ones exactly once, in any order: in Lark with llguidance's
//! parametric rules (one bit per item), elsewhere in the order given (the schema's).

use std::fmt::Write as _;

use super::GrammarFormat;

/// A piece of a rule.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Node {
    /// Nothing (matches the empty string).
    Empty,
    /// This text, exactly.
    Lit(String),
    /// One character of these ranges (or, `negated`, any character outside them).
    Class {
        ranges: Vec<(char, char)>,
        negated: bool,
    },
    /// A rule by name.
    Ref(String),
    /// One after the other.
    Seq(Vec<Node>),
    /// One of.
    Alt(Vec<Node>),
    /// `min` to `max` (unbounded: `None`) times.
    Repeat(Box<Node>, u32, Option<u32>),
    /// Lark only: a terminal expression in llguidance's syntax (its `&` and `~` operators),
    /// with what the other syntaxes write instead (a superset or an exact rewrite).
    Lark(String, Box<Node>),
}

impl Node {
    /// A literal.
    pub(crate) fn lit(text: impl Into<String>) -> Node {
        Node::Lit(text.into())
    }

    /// One character in `ranges`.
    pub(crate) fn class(ranges: &[(char, char)]) -> Node {
        Node::Class {
            ranges: ranges.to_vec(),
            negated: false,
        }
    }

    /// One character outside `ranges`.
    pub(crate) fn not_class(ranges: &[(char, char)]) -> Node {
        Node::Class {
            ranges: ranges.to_vec(),
            negated: true,
        }
    }

    /// A sequence, flattened, without empty parts.
    pub(crate) fn seq(parts: Vec<Node>) -> Node {
        let mut out = Vec::with_capacity(parts.len());
        for part in parts {
            match part {
                Node::Empty => {}
                Node::Seq(inner) => out.extend(inner),
                other => out.push(other),
            }
        }
        // Runs of one character class become a repetition (`[0-9]{3}`).
        let mut merged: Vec<Node> = Vec::with_capacity(out.len());
        for part in out {
            match merged.last_mut() {
                Some(Node::Repeat(inner, min, Some(max)))
                    if min == max && **inner == part && matches!(part, Node::Class { .. }) =>
                {
                    *min += 1;
                    *max += 1;
                }
                Some(last) if *last == part && matches!(part, Node::Class { .. }) => {
                    *last = Node::Repeat(Box::new(part), 2, Some(2));
                }
                _ => merged.push(part),
            }
        }
        match merged.len() {
            0 => Node::Empty,
            1 => merged.pop().unwrap_or(Node::Empty),
            _ => Node::Seq(merged),
        }
    }

    /// Alternatives, flattened and without repeats; an empty alternative makes the rest
    /// optional.
    pub(crate) fn alt(alts: Vec<Node>) -> Node {
        let mut out: Vec<Node> = Vec::with_capacity(alts.len());
        let mut empty = false;
        for alt in alts {
            match alt {
                Node::Empty => empty = true,
                Node::Alt(inner) => {
                    for a in inner {
                        if !out.contains(&a) {
                            out.push(a);
                        }
                    }
                }
                other => {
                    if !out.contains(&other) {
                        out.push(other);
                    }
                }
            }
        }
        let node = match out.len() {
            0 => return Node::Empty,
            1 => out.pop().unwrap_or(Node::Empty),
            _ => Node::Alt(out),
        };
        if empty {
            node.opt()
        } else {
            node
        }
    }

    /// Zero or one time.
    pub(crate) fn opt(self) -> Node {
        match self {
            Node::Empty => Node::Empty,
            Node::Repeat(inner, 0, max) => Node::Repeat(inner, 0, max),
            other => Node::Repeat(Box::new(other), 0, Some(1)),
        }
    }

    /// Zero or more times.
    pub(crate) fn star(self) -> Node {
        Node::Repeat(Box::new(self), 0, None)
    }

    /// `min` to `max` times.
    pub(crate) fn repeat(self, min: u32, max: Option<u32>) -> Node {
        match (self, min, max) {
            (_, _, Some(0)) | (Node::Empty, _, _) => Node::Empty,
            (node, 1, Some(1)) => node,
            (node, min, max) => Node::Repeat(Box::new(node), min, max),
        }
    }
}

/// What a rule matches.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Body {
    /// A node.
    Node(Node),
    /// Items each written at most once (the `required` ones exactly once), separated by `sep`:
    /// keyword arguments, a record's keys.
    Keywords {
        /// Each item, whole (`a=` and its value), with whether it is required.
        items: Vec<(Node, bool)>,
        /// Between two items.
        sep: Node,
    },
}

/// One rule.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Rule {
    /// Its name, as the printers write it (lower case for a rule, upper case for a terminal).
    pub(crate) name: String,
    /// Whether it is a terminal (regular; Lark lexes it as one lexeme).
    pub(crate) terminal: bool,
    /// What it matches.
    pub(crate) body: Body,
}

/// The most items a keyword set tracks with llguidance's 64-bit rule parameter; a larger set
/// is written in the schema's order.
pub(crate) const PARAMETRIC_ITEMS: usize = 64;

/// Every rule of a grammar, the start rule first.
#[derive(Clone, Debug, Default)]
pub(crate) struct Rules {
    pub(crate) rules: Vec<Rule>,
}

impl Rules {
    /// The grammar in `format`'s syntax (`StructuralTag` takes XGrammar's EBNF).
    pub(crate) fn print(&self, format: GrammarFormat) -> String {
        let mut out = String::new();
        let syntax = match format {
            GrammarFormat::Lark => Syntax::Lark,
            GrammarFormat::Gbnf => Syntax::Gbnf,
            GrammarFormat::Ebnf | GrammarFormat::StructuralTag => Syntax::Ebnf,
        };
        let terminals: std::collections::HashSet<&str> = self
            .rules
            .iter()
            .filter(|r| r.terminal)
            .map(|r| r.name.as_str())
            .collect();
        let printer = Printer {
            syntax,
            terminals: &terminals,
        };
        if syntax == Syntax::Lark {
            out.push_str("%llguidance {}\n\n");
        }
        for rule in &self.rules {
            printer.rule(&mut out, rule);
        }
        out
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Syntax {
    Lark,
    Gbnf,
    Ebnf,
}

struct Printer<'a> {
    syntax: Syntax,
    terminals: &'a std::collections::HashSet<&'a str>,
}

impl Printer<'_> {
    /// A rule's name as this syntax writes it: Lark's terminals upper case, its rules lower
    /// case; GBNF and EBNF names with `-` (GBNF allows no `_`).
    fn name(&self, name: &str) -> String {
        match self.syntax {
            Syntax::Gbnf | Syntax::Ebnf if name == "start" => "root".to_string(),
            Syntax::Lark if self.terminals.contains(name) => name.to_ascii_uppercase(),
            Syntax::Lark => name.to_ascii_lowercase(),
            Syntax::Gbnf | Syntax::Ebnf => name.to_ascii_lowercase().replace('_', "-"),
        }
    }

    fn rule(&self, out: &mut String, rule: &Rule) {
        let define = match self.syntax {
            Syntax::Lark => ":",
            Syntax::Gbnf | Syntax::Ebnf => "::=",
        };
        let name = self.name(&rule.name);
        match &rule.body {
            Body::Keywords { items, .. } if items.is_empty() => {
                let _ = writeln!(out, "{name} {define} \"\"");
            }
            Body::Node(node) => {
                let _ = writeln!(out, "{name} {define} {}", self.node(node, true));
            }
            Body::Keywords { items, sep } => {
                if self.syntax == Syntax::Lark && items.len() <= PARAMETRIC_ITEMS {
                    self.parametric(out, &name, items, sep);
                } else {
                    self.in_order(out, &name, items, sep);
                }
            }
        }
    }

    /// A keyword set in llguidance's parametric rules: bit `i` says item `i` was written; the
    /// required items take the low bits, so "all required written" is one range test.
    fn parametric(&self, out: &mut String, name: &str, items: &[(Node, bool)], sep: &Node) {
        let mut order: Vec<usize> = (0..items.len()).collect();
        order.sort_by_key(|&i| !items.get(i).is_some_and(|(_, required)| *required));
        let required = items.iter().filter(|(_, r)| *r).count();
        let done = if required == 0 {
            "true".to_string()
        } else {
            format!("is_ones([0:{required}])")
        };
        let sep = self.node(sep, false);
        let _ = writeln!(out, "{name} : {name}__first::0x0");
        for (which, lead) in [("first", ""), ("more", sep.as_str())] {
            let _ = write!(out, "{name}__{which}::_ : \"\" %if {done}");
            for (bit, &i) in order.iter().enumerate() {
                let Some((item, _)) = items.get(i) else {
                    continue;
                };
                let item = self.node(item, false);
                let lead = if lead.is_empty() {
                    String::new()
                } else {
                    format!("{lead} ")
                };
                let _ = write!(
                    out,
                    "\n    | {lead}{item} {name}__more::set_bit({bit}) %if bit_clear({bit})"
                );
            }
            out.push('\n');
        }
    }

    /// A keyword set in the given order: `s_k` starts at item `k`, `r_k` follows a written item.
    fn in_order(&self, out: &mut String, name: &str, items: &[(Node, bool)], sep: &Node) {
        let define = match self.syntax {
            Syntax::Lark => ":",
            Syntax::Gbnf | Syntax::Ebnf => "::=",
        };
        let n = items.len();
        let part = |kind: &str, k: usize| {
            if k >= n {
                Node::Empty
            } else {
                Node::Ref(format!("{name}__{kind}{k}"))
            }
        };
        let mut rules = Vec::new();
        rules.push((name.to_string(), part("s", 0)));
        // `s_k` is needed while the items before `k` are all optional; `r_k` (k >= 1) always.
        let mut starts = true;
        for (k, (item, required)) in items.iter().enumerate() {
            if starts {
                let then = Node::seq(vec![item.clone(), part("r", k + 1)]);
                let start = if *required {
                    then
                } else {
                    Node::alt(vec![then, part("s", k + 1)])
                };
                rules.push((format!("{name}__s{k}"), start));
                starts = !*required;
            }
            if k >= 1 {
                let follow = Node::seq(vec![sep.clone(), item.clone()]);
                let follow = if *required { follow } else { follow.opt() };
                rules.push((
                    format!("{name}__r{k}"),
                    Node::seq(vec![follow, part("r", k + 1)]),
                ));
            }
        }
        for (rule, node) in rules {
            let _ = writeln!(
                out,
                "{} {define} {}",
                self.name(&rule),
                self.node(&node, true)
            );
        }
    }

    /// A node; `top`: it is a whole rule body (no parentheses needed around alternatives).
    fn node(&self, node: &Node, top: bool) -> String {
        match node {
            Node::Empty => "\"\"".to_string(),
            Node::Lit(text) => quote(text, self.syntax),
            Node::Class { ranges, negated } => self.class(ranges, *negated),
            Node::Ref(name) => self.name(name),
            Node::Seq(parts) => {
                let inner: Vec<String> = parts.iter().map(|p| self.node(p, false)).collect();
                let joined = inner.join(" ");
                if top || parts.len() < 2 {
                    joined
                } else {
                    format!("({joined})")
                }
            }
            Node::Alt(alts) => {
                let inner: Vec<String> = alts.iter().map(|a| self.node(a, true)).collect();
                let joined = inner.join(" | ");
                if top {
                    joined
                } else {
                    format!("({joined})")
                }
            }
            Node::Repeat(inner, min, max) => {
                let body = self.node(inner, false);
                let body = match inner.as_ref() {
                    Node::Seq(parts) if parts.len() > 1 => body,
                    Node::Alt(_) => body,
                    _ => body,
                };
                match (min, max) {
                    (0, Some(1)) => format!("{body}?"),
                    (0, None) => format!("{body}*"),
                    (1, None) => format!("{body}+"),
                    (m, None) => format!("{body}{{{m},}}"),
                    (m, Some(x)) if m == x => format!("{body}{{{m}}}"),
                    (m, Some(x)) => format!("{body}{{{m},{x}}}"),
                }
            }
            Node::Lark(text, fallback) => match self.syntax {
                Syntax::Lark if top => text.clone(),
                Syntax::Lark => format!("({text})"),
                _ => self.node(fallback, top),
            },
        }
    }

    fn class(&self, ranges: &[(char, char)], negated: bool) -> String {
        let caret = if negated { "^" } else { "" };
        match self.syntax {
            Syntax::Lark => {
                let mut body = String::new();
                for &(lo, hi) in ranges {
                    body.push_str(&class_char(lo, true));
                    if hi != lo {
                        body.push('-');
                        body.push_str(&class_char(hi, true));
                    }
                }
                format!("/[{caret}{}]/", body.replace('/', "\\/"))
            }
            // GBNF and XGrammar escape no `-` or `^` in a class: a `-` goes last, a `^` not
            // first.
            Syntax::Gbnf | Syntax::Ebnf => {
                let (mut body, mut specials) = (String::new(), String::new());
                for &(lo, hi) in ranges {
                    if lo == hi && (lo == '-' || lo == '^') {
                        specials.push(lo);
                        continue;
                    }
                    body.push_str(&class_char(lo, false));
                    if hi != lo {
                        body.push('-');
                        body.push_str(&class_char(hi, false));
                    }
                }
                if specials.contains('^') {
                    if body.is_empty() && !negated {
                        body.push_str("\\x5E");
                    } else {
                        body.push('^');
                    }
                }
                if specials.contains('-') {
                    body.push('-');
                }
                format!("[{caret}{body}]")
            }
        }
    }
}

/// A character inside a class, escaped (`regex`: Rust's regex syntax, else GBNF's).
fn class_char(c: char, regex: bool) -> String {
    match c {
        '\\' | ']' | '[' => format!("\\{c}"),
        '^' | '-' if regex => format!("\\{c}"),
        '\n' => "\\n".into(),
        '\r' => "\\r".into(),
        '\t' => "\\t".into(),
        c if (c as u32) < 0x20 || c as u32 == 0x7f => format!("\\x{:02X}", c as u32),
        c => c.to_string(),
    }
}

/// A literal in double quotes, escaped for `syntax`.
fn quote(text: &str, syntax: Syntax) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02X}", c as u32);
            }
            // GBNF and XGrammar read UTF-8 in literals as it is; so does Lark.
            c => out.push(c),
        }
    }
    let _ = syntax;
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(body: Body) -> Rules {
        Rules {
            rules: vec![Rule {
                name: "args".into(),
                terminal: false,
                body,
            }],
        }
    }

    #[test]
    fn keyword_sets_are_parametric_in_lark_and_ordered_elsewhere() {
        let set = Body::Keywords {
            items: vec![(Node::lit("a=1"), false), (Node::lit("b=2"), true)],
            sep: Node::lit(", "),
        };
        let lark = rules(set.clone()).print(GrammarFormat::Lark);
        assert!(
            lark.contains("args__first::_ : \"\" %if is_ones([0:1])"),
            "{lark}"
        );
        assert!(
            lark.contains("| \"b=2\" args__more::set_bit(0) %if bit_clear(0)"),
            "{lark}"
        );
        assert!(
            lark.contains("| \", \" \"a=1\" args__more::set_bit(1) %if bit_clear(1)"),
            "{lark}"
        );
        let gbnf = rules(set).print(GrammarFormat::Gbnf);
        assert!(
            gbnf.contains("args--s0 ::= \"a=1\" args--r1 | args--s1"),
            "{gbnf}"
        );
        assert!(gbnf.contains("args--s1 ::= \"b=2\""), "{gbnf}");
        assert!(gbnf.contains("args--r1 ::= \", \" \"b=2\""), "{gbnf}");
        assert!(!gbnf.contains("args--r0"), "{gbnf}");
    }

    #[test]
    fn classes_and_literals_are_escaped() {
        let node = Node::seq(vec![
            Node::lit("a\"b\\\n"),
            Node::not_class(&[('"', '"'), ('\\', '\\'), ('\n', '\n'), ('/', '/')]),
        ]);
        let r = Rules {
            rules: vec![Rule {
                name: "x".into(),
                terminal: true,
                body: Body::Node(node),
            }],
        };
        assert_eq!(
            r.print(GrammarFormat::Lark),
            "%llguidance {}\n\nX : \"a\\\"b\\\\\\n\" /[^\"\\\\\\n\\/]/\n"
        );
        assert_eq!(
            r.print(GrammarFormat::Gbnf),
            "x ::= \"a\\\"b\\\\\\n\" [^\"\\\\\\n/]\n"
        );
    }
}
