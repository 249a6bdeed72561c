//! A fast path for the plain shapes models write most often, such as
//! `add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))`: it builds the IR directly from the
//! bytes and answers `None` for anything else, which then goes to `ruff_python_parser`.
//!
//! It accepts only a strict subset whose meaning is not in doubt: names and dotted names
//! (ASCII, not keywords, not dunder), calls with positional then keyword arguments (a repeated
//! keyword is kept, as ruff keeps it, for the binder to refuse; keywords may be the string
//! keys of a dict display after `**`), decimal ints that fit in
//! `i64` (no `_`, no leading zero), floats written `digits.digits`, `-` directly before such a
//! number, single-line string literals without prefix or backslash, `True`/`False`/`None`, and
//! lists and dicts of these. Tokens may be
//! separated by spaces and tabs; the text may end in whitespace. On everything it accepts it
//! gives exactly the tree (spans included) that the ruff path gives; `tests/properties.rs` and
//! the `parse` fuzz target check this against [`super::parse_with_ruff`].
//!
//! Recursion is bounded by [`Limits::max_depth`]: deeper input is left to the ruff path.
//!
//! The pre-parse scan ([`super::scan`]) runs only when this path answers `None`: on what it
//! accepts, the scan could refuse nothing but the depth (its size check runs first; the
//! scan's other refusals, NUL bytes, f-strings, backslashes and stray closers, are outside
//! this subset), so it keeps the scan's depth estimate as it reads (the same tokens counted,
//! the same resets at commas and closers) and gives up past [`Limits::max_depth`].

use super::ir::{Call, Expr, ExprKind, Keyword, UnaryOp};
use super::is_dunder;
use crate::error::Span;
use crate::limits::Limits;

/// The expression `source` holds, when it is of the plain shape described above and within
/// the scan's depth estimate. The caller has checked the source's size.
pub(super) fn parse(source: &str, limits: &Limits) -> Option<Expr> {
    let mut p = Fast {
        text: source,
        src: source.as_bytes(),
        pos: 0,
        max_depth: limits.max_depth,
        max_int_digits: limits.max_int_digits,
        open: 0,
        estimate: 0,
        segment: 0,
    };
    let expr = p.expr(1)?;
    while matches!(p.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        p.pos += 1;
    }
    (p.pos == p.src.len()).then_some(expr)
}

/// Whether `word` is a reserved word ([`PYTHON_KEYWORDS`](super::PYTHON_KEYWORDS)) or a soft
/// keyword (`match`, `case`, `type`, and `_`: valid names, but left to ruff, which knows where
/// they are keywords). One `match`, which compiles to a switch on the length and a compare or
/// two, where scanning the lists compared every name read with 39 words (a test checks that
/// it is the two lists).
fn is_keyword(word: &str) -> bool {
    matches!(
        word,
        "False"
            | "None"
            | "True"
            | "and"
            | "as"
            | "assert"
            | "async"
            | "await"
            | "break"
            | "class"
            | "continue"
            | "def"
            | "del"
            | "elif"
            | "else"
            | "except"
            | "finally"
            | "for"
            | "from"
            | "global"
            | "if"
            | "import"
            | "in"
            | "is"
            | "lambda"
            | "nonlocal"
            | "not"
            | "or"
            | "pass"
            | "raise"
            | "return"
            | "try"
            | "while"
            | "with"
            | "yield"
            | "match"
            | "case"
            | "type"
            | "_"
    )
}

struct Fast<'a> {
    text: &'a str,
    src: &'a [u8],
    pos: usize,
    max_depth: usize,
    max_int_digits: usize,
    /// Open brackets at the cursor: inside them, line breaks are blanks too.
    open: usize,
    /// The pre-parse scan's depth estimate at the cursor ([`super::scan`]): the operators
    /// counted at the top level plus, per open bracket, one plus those of its current
    /// comma-separated segment.
    estimate: usize,
    /// The operators counted in the current segment of the innermost level.
    segment: usize,
}

impl<'a> Fast<'a> {
    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<u8> {
        self.src.get(self.pos + offset).copied()
    }

    fn skip_blanks(&mut self) {
        while let Some(b) = self.peek() {
            let blank = match b {
                b' ' | b'\t' => true,
                b'\n' | b'\r' => self.open > 0,
                _ => false,
            };
            if !blank {
                break;
            }
            self.pos += 1;
        }
    }

    /// Consume `byte` (after blanks) or fail.
    fn expect(&mut self, byte: u8) -> Option<()> {
        self.skip_blanks();
        (self.peek() == Some(byte)).then(|| self.pos += 1)
    }

    /// One operator the scan counts (`=`, `.`, `:`, `**`, a unary `-`, a call's `(` after
    /// its name): `None` past the scan's limit.
    fn op(&mut self) -> Option<()> {
        self.segment += 1;
        self.estimate += 1;
        (self.estimate <= self.max_depth).then_some(())
    }

    /// An opening bracket (after [`op`](Self::op) for a call's): a level with a fresh
    /// segment. Gives the outer segment's count, for [`leave`](Self::leave).
    fn enter(&mut self) -> Option<usize> {
        self.estimate += 1;
        let outer = std::mem::replace(&mut self.segment, 0);
        (self.estimate <= self.max_depth).then_some(outer)
    }

    /// The closing bracket of the level [`enter`](Self::enter) opened.
    fn leave(&mut self, outer: usize) {
        self.estimate = self.estimate.saturating_sub(1 + self.segment);
        self.segment = outer;
    }

    fn span(&self, start: usize) -> Span {
        // The pre-parse scan rejected sources longer than `u32::MAX`.
        let at = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Span::new(at(start), at(self.pos))
    }

    fn expr(&mut self, depth: usize) -> Option<Expr> {
        if depth > self.max_depth {
            return None;
        }
        self.skip_blanks();
        let start = self.pos;
        let kind = match self.peek()? {
            b'[' => {
                self.pos += 1;
                self.open += 1;
                let outer = self.enter()?;
                let items = self.items(b']', depth + 1)?;
                self.leave(outer);
                self.open -= 1;
                ExprKind::List(items)
            }
            b'{' => {
                self.pos += 1;
                self.open += 1;
                let outer = self.enter()?;
                let pairs = self.pairs(depth + 1)?;
                self.leave(outer);
                self.open -= 1;
                ExprKind::Dict(pairs)
            }
            b'"' | b'\'' => ExprKind::Str(self.string()?),
            b'0'..=b'9' => self.number()?,
            b'-' if self.peek_at(1).is_some_and(|b| b.is_ascii_digit()) => {
                if depth + 1 > self.max_depth {
                    return None;
                }
                self.op()?;
                self.pos += 1;
                let operand_start = self.pos;
                let operand = self.number()?;
                let operand = Expr {
                    kind: operand,
                    span: self.span(operand_start),
                };
                ExprKind::Unary(UnaryOp::Neg, Box::new(operand))
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => return self.name_or_call(depth),
            _ => return None,
        };
        Some(Expr {
            kind,
            span: self.span(start),
        })
    }

    /// Comma-separated expressions up to `close` (a trailing comma allowed).
    fn items(&mut self, close: u8, depth: usize) -> Option<Vec<Expr>> {
        let mut items = Vec::new();
        loop {
            self.skip_blanks();
            if self.peek()? == close {
                self.pos += 1;
                return Some(items);
            }
            items.push(self.expr(depth)?);
            if !self.comma_or(close)? {
                return Some(items);
            }
        }
    }

    /// After an element: `,` (true: more may follow) or `close` (false: done).
    fn comma_or(&mut self, close: u8) -> Option<bool> {
        self.skip_blanks();
        match self.peek()? {
            b',' => {
                self.pos += 1;
                // A new segment: the operators of the element before no longer nest.
                self.estimate = self.estimate.saturating_sub(self.segment);
                self.segment = 0;
                Some(true)
            }
            b if b == close => {
                self.pos += 1;
                Some(false)
            }
            _ => None,
        }
    }

    /// `key: value` pairs up to `}` (the `{` is consumed).
    fn pairs(&mut self, depth: usize) -> Option<Vec<(Expr, Expr)>> {
        let mut pairs = Vec::new();
        loop {
            self.skip_blanks();
            if self.peek()? == b'}' {
                self.pos += 1;
                return Some(pairs);
            }
            let key = self.expr(depth)?;
            self.expect(b':')?;
            self.op()?;
            let value = self.expr(depth)?;
            pairs.push((key, value));
            if !self.comma_or(b'}')? {
                return Some(pairs);
            }
        }
    }

    /// A single-line string literal without prefix, escapes or triple quotes.
    fn string(&mut self) -> Option<String> {
        let quote = self.peek()?;
        let start = self.pos + 1;
        if self.peek_at(1) == Some(quote) && self.peek_at(2) == Some(quote) {
            return None;
        }
        let len = self.src.get(start..)?.iter().position(|&b| b == quote)?;
        let end = start + len;
        let body = self.text.get(start..end)?;
        if body.bytes().any(|b| b == b'\\' || b < 0x20 || b == 0x7f) {
            return None;
        }
        self.pos = end + 1;
        Some(body.to_owned())
    }

    /// A decimal int that fits in `i64`, or a float `digits.digits`.
    fn number(&mut self) -> Option<ExprKind> {
        let start = self.pos;
        let digits = self.digits();
        let kind = if self.peek() == Some(b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return None;
            }
            ExprKind::Float(self.text.get(start..self.pos)?.parse().ok()?)
        } else {
            if digits > 19
                || digits > self.max_int_digits
                || (digits > 1 && self.src[start] == b'0')
            {
                return None;
            }
            ExprKind::Int(self.text.get(start..self.pos)?.parse().ok()?)
        };
        // `1e3`, `1_000`, `1j`, `0x1`, `1.5.2`: the ruff path decides.
        if self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b >= 0x80)
        {
            return None;
        }
        Some(kind)
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        self.pos - start
    }

    /// An ASCII identifier that is not a keyword, not dunder, and not followed by more
    /// identifier characters (non-ASCII ones included).
    fn ident(&mut self) -> Option<&'a str> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            self.pos += 1;
        }
        if self.pos == start
            || self.src[start].is_ascii_digit()
            || self.peek().is_some_and(|b| b >= 0x80)
        {
            return None;
        }
        let word = self.text.get(start..self.pos)?;
        let keyword = is_keyword(word);
        // `True`, `False`, `None` are reserved words the caller turns into literals.
        let literal = matches!(word, "True" | "False" | "None");
        (!is_dunder(word) && (literal || !keyword)).then_some(word)
    }

    fn name_or_call(&mut self, depth: usize) -> Option<Expr> {
        let start = self.pos;
        let literal = |name: &str| match name {
            "True" => Some(ExprKind::Bool(true)),
            "False" => Some(ExprKind::Bool(false)),
            "None" => Some(ExprKind::None),
            _ => None,
        };
        let first = self.ident()?;
        if let Some(kind) = literal(first) {
            return Some(Expr {
                kind,
                span: self.span(start),
            });
        }
        let mut path = first.to_owned();
        while self.peek() == Some(b'.') {
            self.op()?;
            self.pos += 1;
            let part = self.ident()?;
            if literal(part).is_some() {
                return None;
            }
            path.push('.');
            path.push_str(part);
        }
        let func_span = self.span(start);
        self.skip_blanks();
        if self.peek() != Some(b'(') {
            return Some(Expr {
                kind: ExprKind::Name(path),
                span: func_span,
            });
        }
        // The scan counts a bracket right after an operand (a call's) as an operator.
        self.op()?;
        self.pos += 1;
        self.open += 1;
        let outer = self.enter()?;
        let (args, kwargs) = self.arguments(depth + 1)?;
        self.leave(outer);
        self.open -= 1;
        Some(Expr {
            kind: ExprKind::Call(Call {
                func: path,
                func_span,
                args,
                kwargs,
            }),
            span: self.span(start),
        })
    }

    /// Call arguments up to `)` (the `(` is consumed): positional ones, then keywords, written
    /// `name=value` or as the string keys of a dict display after `**`.
    fn arguments(&mut self, depth: usize) -> Option<(Vec<Expr>, Vec<Keyword>)> {
        let mut args = Vec::new();
        let mut kwargs: Vec<Keyword> = Vec::new();
        let mut keywords = false;
        loop {
            self.skip_blanks();
            if self.peek()? == b')' {
                self.pos += 1;
                return Some((args, kwargs));
            }
            if self.peek() == Some(b'*') && self.peek_at(1) == Some(b'*') {
                self.op()?;
                self.pos += 2;
                self.splatted_dict(depth, &mut kwargs)?;
                keywords = true;
            } else if let Some((name, name_span)) = self.keyword_name() {
                // Its `=`.
                self.op()?;
                let value = self.expr(depth)?;
                kwargs.push(Keyword {
                    name: name.to_owned(),
                    name_span,
                    value,
                });
                keywords = true;
            } else if !keywords {
                args.push(self.expr(depth)?);
            } else {
                return None;
            }
            if !self.comma_or(b')')? {
                return Some((args, kwargs));
            }
        }
    }

    /// After `**`: a dict display whose keys are string literals, each pair a keyword argument
    /// named by its key (its span the key's literal).
    fn splatted_dict(&mut self, depth: usize, kwargs: &mut Vec<Keyword>) -> Option<()> {
        self.expect(b'{')?;
        self.open += 1;
        let outer = self.enter()?;
        loop {
            self.skip_blanks();
            if self.peek()? == b'}' {
                self.pos += 1;
                self.leave(outer);
                self.open -= 1;
                return Some(());
            }
            let start = self.pos;
            if !matches!(self.peek()?, b'"' | b'\'') {
                return None;
            }
            let name = self.string()?;
            let name_span = self.span(start);
            self.expect(b':')?;
            self.op()?;
            let value = self.expr(depth)?;
            kwargs.push(Keyword {
                name,
                name_span,
                value,
            });
            if !self.comma_or(b'}')? {
                self.leave(outer);
                self.open -= 1;
                return Some(());
            }
        }
    }

    /// `name =` (not `==`) at the cursor: consumes it and returns the name and its span.
    fn keyword_name(&mut self) -> Option<(&'a str, Span)> {
        let start = self.pos;
        if !self
            .peek()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        {
            return None;
        }
        let found = self
            .ident()
            .filter(|name| !matches!(*name, "True" | "False" | "None"));
        let found = found.and_then(|name| {
            let span = self.span(start);
            self.skip_blanks();
            (self.peek() == Some(b'=') && self.peek_at(1) != Some(b'=')).then(|| {
                self.pos += 1;
                (name, span)
            })
        });
        if found.is_none() {
            self.pos = start;
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::super::PYTHON_KEYWORDS;
    use super::*;

    /// The soft keywords (and `_`) the fast path leaves to ruff.
    const SOFT_KEYWORDS: &[&str] = &["match", "case", "type", "_"];

    fn fast(source: &str) -> Option<Expr> {
        parse(source, &Limits::default())
    }

    fn ruff(source: &str) -> Expr {
        super::super::parse_with_ruff(source, &Limits::default()).expect("ruff parses it")
    }

    #[test]
    fn plain_calls_take_the_fast_path_and_match_ruff() {
        for source in [
            "add(a=2, b=3)",
            "add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))",
            "numpy_sum(arr=np.array([[1, 2], [3, 4]]))",
            "[get_weather(city=\"Paris\"), add(a=2, b=x)]",
            "divide(a=2.0, b=-3.25)",
            "f(1, 'x', None, True, False, k={'a': [1, 2,], \"b\": {}},)",
            "f ( a = 1 )  \n",
            "[f(a=1),\n g(b=[1,\r\n 2])]\n",
            "a.b.c(d=e.f)",
            "search(query=\"naïve café\")",
            "f(-9223372036854775807, 0, 00.5)",
            "[]",
            "x",
            " \tadd(a=1)",
            "f(a=1, a=2)",
            "convert(**{\"from\": \"USD\", 'to': 'EUR'}, amount=3)",
            "f(a=1, ** { 'max-results' : [1] , }, b=2)",
            "f(**{})",
            "f(**{'城市': '北京'})",
        ] {
            assert_eq!(fast(source).as_ref(), Some(&ruff(source)), "{source}");
        }
    }

    #[test]
    fn anything_unusual_is_left_to_ruff() {
        for source in [
            "add(a=1); import os",
            "add(a=1) # comment",
            "add(a=1)\nadd(a=2)",
            "f(a=1, 2)",
            "f(*a)",
            "f(**a)",
            "f(**{k: 1})",
            "f(**{1: 1})",
            "f(**{'a' 'b': 1})",
            "f(**{'a': 1}, 2)",
            "f(**{**a})",
            "f(**dict(a=1))",
            "f(a == 1)",
            "f(a=1 + 2)",
            "f(x=1e3)",
            "f(x=1_000)",
            "f(x=0x10)",
            "f(x=01)",
            "f(x=1j)",
            "f(x=1.)",
            "f(x=.5)",
            "f(x=99999999999999999999)",
            "f(x=\"a\\n\")",
            "f(x='''a''')",
            "f(x=b'a')",
            "f(x=f'{a}')",
            "f(x='a' 'b')",
            "f('it''s')",
            "f(True=1)",
            "f(__=1)",
            "f(x=___)",
            "f(x=(1, 2))",
            "f(x={1, 2})",
            "f(x=-y)",
            "f(x=not y)",
            "f(x=y[0])",
            "f(x=y.__class__)",
            "__import__(name='os')",
            "f(lambda=1)",
            "if(a=1)",
            "np.True(a=1)",
            "None(a=1)",
            "f(x=é)",
            "fé(x=1)",
            "f(x=1)\n(y)",
            "f\n(x=1)",
            "\u{feff}f(x=1)",
            "f(x='a\tb')",
            "f(x=1",
            "f((a)=1)",
            "f(ａ=1)",
            "\u{3000}f(a=1)",
        ] {
            assert_eq!(fast(source), None, "{source}");
        }
    }

    /// Without the scan before it, the fast path must refuse whatever the scan refuses: at
    /// every small depth limit, `parse` (fast path first) and `parse_with_ruff` (scan, then
    /// ruff) give the same tree or the same error.
    #[test]
    fn the_fast_path_keeps_the_scans_depth_estimate() {
        let sources = [
            "add(a=2, b=3)",
            "add_points(p1=Point(x=1, y=2), p2=Point(x=3, y=4))",
            "numpy_sum(arr=np.array([[1, 2], [3, 4]]))",
            "f(a=-1, b=-2.5, c=[-1, -2, -3])",
            "f(**{'from': 1, 'to': {'a': -1}})",
            "f(g(h(1)), x=a.b.c.d)",
            "f({'a': [1, {'b': -2}]}, k=[[[]]])",
            "f()",
            "f(\n  a=1,\n  b=g(c=2),\n)",
            "[1, [2, [3, [4]]]]",
            "{'a': {'b': {'c': -1}}}",
            "a.b.c.d.e.f",
            "-1",
        ];
        for depth in 1..=10 {
            let limits = Limits {
                max_depth: depth,
                ..Limits::default()
            };
            for source in sources {
                assert_eq!(
                    super::super::parse(source, &limits),
                    super::super::parse_with_ruff(source, &limits),
                    "{source} at max_depth {depth}"
                );
            }
        }
    }

    #[test]
    fn is_keyword_is_the_two_lists() {
        let listed = |w: &str| PYTHON_KEYWORDS.contains(&w) || SOFT_KEYWORDS.contains(&w);
        let mut words: Vec<String> = ["add", "a", "b", "x", "np", "array", "Point", "__", "A"]
            .iter()
            .map(|w| w.to_string())
            .collect();
        for w in PYTHON_KEYWORDS.iter().chain(SOFT_KEYWORDS) {
            words.push(w.to_string());
            words.push(format!("{w}_"));
            words.push(format!("_{w}"));
            words.push(w.to_uppercase());
            words.push(w.to_lowercase());
            words.push(w.chars().skip(1).collect());
            words.push(w.chars().take(w.len().saturating_sub(1)).collect());
        }
        for w in &words {
            assert_eq!(is_keyword(w), listed(w), "{w}");
        }
    }

    #[test]
    fn depth_and_digit_limits_leave_the_input_to_ruff() {
        let limits = Limits {
            max_depth: 3,
            max_int_digits: 2,
            ..Limits::default()
        };
        assert!(parse("f(a=1)", &limits).is_some());
        // The scan's estimate: the call's `(` and its level, `=`, the list's level.
        assert_eq!(parse("f(a=[1])", &limits), None);
        assert!(super::super::scan::precheck("f(a=[1])", &limits).is_err());
        assert_eq!(parse("f(a=[[1]])", &limits), None);
        assert_eq!(
            parse(
                "f(a=-1)",
                &Limits {
                    max_depth: 2,
                    ..limits.clone()
                }
            ),
            None
        );
        assert_eq!(parse("f(a=100)", &limits), None);
    }
}
