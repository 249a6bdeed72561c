//! Values from types: the rules for the values a [`Type`] accepts, written as Python literals
//! (pythonic calls), as JSON (the JSON markups in GBNF/EBNF), or as text (Qwen3-Coder's
//! `<parameter=…>` values), and the keyword arguments of a call.
//!
//! Each rule admits only values the checker accepts for the type: literals of the type itself
//! (an `int` where an `int` is asked, never `5.0`), an enum's members, a record's keys (each at
//! most once, the required ones present), arrays within their item bounds, integers within
//! their range. What a context-free grammar cannot state (a float's bounds, `multipleOf`, a
//! `pattern`, duplicates in a set, …) is recorded as an [`Approximation`], never dropped
//! silently.

use std::collections::HashMap;
use std::sync::Arc;

use super::numbers;
use super::rules::{Body, Node, Rule};
use super::Approximation;
use crate::error::ErrorKind;
use crate::resolve::context::{Context, Entry};
use crate::types::{Bounds, Field, RecordType, Recursive, Type};
use crate::value::Value;

/// How values are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Syntax {
    /// Python literals: `True`, `None`, `'a'` or `"a"`, `[1, 2]`, `{'k': 1}`, `Point(x=1)`.
    Python,
    /// JSON: `true`, `null`, `"a"`, `[1, 2]`, `{"k": 1}`.
    Json,
}

/// How deep a value of type `Any` nests in the grammar (lists and dicts of lists and dicts…).
const ANY_DEPTH: usize = 4;

/// The longest string or list bound written out as a repetition count; past it the bound is
/// an approximation (a count of thousands would make the grammar large for little gain).
const MAX_COUNT: u64 = 1000;

/// Spaces allowed around punctuation (Python allows more; this is what a model writes).
fn spaces() -> Node {
    Node::class(&[(' ', ' ')]).star()
}

/// The generator: rules made so far, names taken, approximations found.
pub(crate) struct Gen<'a> {
    pub(crate) ctx: &'a Context,
    pub(crate) rules: Vec<Rule>,
    taken: HashMap<String, usize>,
    shared: HashMap<String, String>,
    records: Vec<(Arc<RecordType>, Syntax, String)>,
    recursive: Vec<(Recursive, Syntax, String)>,
    pub(crate) approximations: Vec<Approximation>,
    /// The tool whose values are being written (for approximations).
    pub(crate) tool: String,
}

impl<'a> Gen<'a> {
    pub(crate) fn new(ctx: &'a Context) -> Gen<'a> {
        Gen {
            ctx,
            rules: Vec::new(),
            taken: HashMap::new(),
            shared: HashMap::new(),
            records: Vec::new(),
            recursive: Vec::new(),
            approximations: Vec::new(),
            tool: String::new(),
        }
    }

    /// A fresh rule name from `base`: lower-case ASCII letters, digits and `_`, unique.
    pub(crate) fn fresh(&mut self, base: &str) -> String {
        let mut clean = String::new();
        for c in base.chars() {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_alphanumeric() {
                clean.push(c);
            } else if !clean.ends_with('_') && !clean.is_empty() {
                clean.push('_');
            }
        }
        let clean = clean.trim_end_matches('_');
        let clean = if clean.is_empty() || clean.starts_with(|c: char| c.is_ascii_digit()) {
            format!("r_{clean}")
        } else {
            clean.to_string()
        };
        let count = self.taken.entry(clean.clone()).or_insert(0);
        *count += 1;
        if *count == 1 {
            clean
        } else {
            format!("{clean}_{count}")
        }
    }

    /// Add a rule; its name.
    pub(crate) fn rule(&mut self, base: &str, terminal: bool, body: Body) -> String {
        let name = self.fresh(base);
        self.rules.push(Rule {
            name: name.clone(),
            terminal,
            body,
        });
        name
    }

    /// A rule made once and shared under `key`.
    pub(crate) fn shared(
        &mut self,
        key: &str,
        terminal: bool,
        make: impl FnOnce(&mut Gen<'a>) -> Node,
    ) -> Node {
        self.shared_as(key, key, terminal, make)
    }

    /// [`Gen::shared`], the rule named after `base`.
    pub(crate) fn shared_as(
        &mut self,
        key: &str,
        base: &str,
        terminal: bool,
        make: impl FnOnce(&mut Gen<'a>) -> Node,
    ) -> Node {
        if let Some(name) = self.shared.get(key) {
            return Node::Ref(name.clone());
        }
        let name = self.fresh(base);
        self.shared.insert(key.to_string(), name.clone());
        let node = make(self);
        self.rules.push(Rule {
            name: name.clone(),
            terminal,
            body: Body::Node(node),
        });
        Node::Ref(name)
    }

    /// Record that the grammar lets through values of `path` that check refuses.
    pub(crate) fn approximate(&mut self, path: &str, what: String, kind: ErrorKind) {
        let entry = Approximation {
            tool: self.tool.clone(),
            path: path.to_string(),
            what,
            kind,
        };
        if !self.approximations.contains(&entry) {
            self.approximations.push(entry);
        }
    }

    /// Punctuation with the spaces around it that Python allows (`" , "`), as one terminal.
    pub(crate) fn punct(&mut self, text: &str, before: bool, after: bool) -> Node {
        let key = format!(
            "p_{}{}{}",
            if before { "s" } else { "" },
            match text {
                "(" => "lpar",
                ")" => "rpar",
                "[" => "lsqb",
                "]" => "rsqb",
                "{" => "lbrace",
                "}" => "rbrace",
                "," => "comma",
                ":" => "colon",
                "=" => "equal",
                "**" => "stars",
                _ => "x",
            },
            if after { "s" } else { "" }
        );
        let text = text.to_string();
        self.shared(&key, true, |_| {
            Node::seq(vec![
                if before { spaces() } else { Node::Empty },
                Node::Lit(text),
                if after { spaces() } else { Node::Empty },
            ])
        })
    }

    fn comma(&mut self) -> Node {
        self.punct(",", true, true)
    }

    /// `open item (, item)* close`, `min` to `max` items.
    fn sequence(
        &mut self,
        open: &str,
        close: &str,
        item: Node,
        min: u64,
        max: Option<u64>,
    ) -> Node {
        let open = self.punct(open, false, true);
        let close = self.punct(close, true, false);
        let comma = self.comma();
        let more = Node::seq(vec![comma, item.clone()]);
        let count = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
        let items = match (min, max) {
            (_, Some(0)) => Node::Empty,
            (0, max) => Node::seq(vec![
                item,
                more.repeat(0, max.map(|m| count(m.saturating_sub(1)))),
            ])
            .opt(),
            (min, max) => Node::seq(vec![
                item,
                more.repeat(count(min - 1), max.map(|m| count(m.saturating_sub(1)))),
            ]),
        };
        Node::seq(vec![open, items, close])
    }

    /// The rule for values of `ty` in `syntax`, or `None` when no value is accepted (an
    /// unchecked schema, an empty enum, an impossible range). `path` names the value in
    /// approximations (`p1.x`, `tags[]`).
    pub(crate) fn value(&mut self, ty: &Type, path: &str, syntax: Syntax) -> Option<Node> {
        match ty {
            Type::Any => Some(self.any(syntax, ANY_DEPTH)),
            Type::None => Some(Node::lit(none(syntax))),
            Type::Bool => Some(self.boolean(syntax)),
            Type::Int => Some(self.int()),
            Type::Float => Some(self.float(false)),
            Type::Str => Some(self.string(syntax, 0, None)),
            Type::Bytes => (syntax == Syntax::Python).then(|| self.bytes()),
            Type::List(item) | Type::Set(item) => {
                let item = self.value(item, &format!("{path}[]"), syntax)?;
                Some(self.sequence("[", "]", item, 0, None))
            }
            Type::Tuple(types) => self.tuple(types, path, syntax),
            Type::Dict(item) => {
                let item = self.value(item, &format!("{path}[]"), syntax)?;
                Some(self.dict(item, syntax, 0, None))
            }
            Type::Record(rt) => self.record(rt, syntax),
            Type::Array => {
                let number = self.float(false);
                Some(self.sequence("[", "]", number, 0, None))
            }
            Type::Union(alts) => {
                let alts: Vec<Node> = alts
                    .iter()
                    .filter_map(|t| self.value(t, path, syntax))
                    .collect();
                (!alts.is_empty()).then(|| Node::alt(alts))
            }
            Type::Enum(values) => {
                let members: Vec<Node> = values
                    .iter()
                    .flat_map(|v| literals(v, syntax))
                    .map(Node::Lit)
                    .collect();
                (!members.is_empty()).then(|| Node::alt(members))
            }
            Type::Bounded(inner, bounds) => self.bounded(inner, bounds, path, syntax),
            Type::All(parts) => self.all(parts, path, syntax),
            Type::Recursive(r) => self.recursive(r, path, syntax),
            Type::Unchecked(_) => None,
        }
    }

    fn boolean(&mut self, syntax: Syntax) -> Node {
        match syntax {
            Syntax::Python => Node::alt(vec![Node::lit("True"), Node::lit("False")]),
            Syntax::Json => Node::alt(vec![Node::lit("true"), Node::lit("false")]),
        }
    }

    /// An integer: at most 18 digits, so within every 64-bit range (Python reads longer ones
    /// too, up to `Limits::max_int_digits`; a model needs no more).
    pub(crate) fn int(&mut self) -> Node {
        self.shared("int", true, |_| {
            Node::seq(vec![
                Node::lit("-").opt(),
                Node::alt(vec![
                    Node::lit("0"),
                    Node::seq(vec![
                        Node::class(&[('1', '9')]),
                        Node::class(&[('0', '9')]).repeat(0, Some(17)),
                    ]),
                ]),
            ])
        })
    }

    /// A number: an integer or a decimal with an optional exponent (two digits at most, so
    /// that it stays finite). `unsigned`: no minus sign.
    pub(crate) fn float(&mut self, unsigned: bool) -> Node {
        let key = if unsigned {
            "unsigned_number"
        } else {
            "number"
        };
        self.shared(key, true, |_| {
            let digits = Node::class(&[('0', '9')]);
            Node::seq(vec![
                if unsigned {
                    Node::Empty
                } else {
                    Node::lit("-").opt()
                },
                Node::alt(vec![
                    Node::lit("0"),
                    Node::seq(vec![
                        Node::class(&[('1', '9')]),
                        digits.clone().repeat(0, Some(15)),
                    ]),
                ]),
                Node::seq(vec![Node::lit("."), digits.clone().repeat(1, Some(17))]).opt(),
                Node::seq(vec![
                    Node::class(&[('e', 'e'), ('E', 'E')]),
                    Node::class(&[('+', '+'), ('-', '-')]).opt(),
                    digits.repeat(1, Some(2)),
                ])
                .opt(),
            ])
        })
    }

    /// A string literal of `min` to `max` characters.
    pub(crate) fn string(&mut self, syntax: Syntax, min: u64, max: Option<u64>) -> Node {
        let count = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
        let key = match (syntax, min, max) {
            (Syntax::Python, 0, None) => "str".to_string(),
            (Syntax::Json, 0, None) => "json_str".to_string(),
            (Syntax::Python, ..) => {
                format!("str_{min}_{}", max.map_or("n".into(), |m| m.to_string()))
            }
            (Syntax::Json, ..) => {
                format!(
                    "json_str_{min}_{}",
                    max.map_or("n".into(), |m| m.to_string())
                )
            }
        };
        self.shared(&key, true, |_| match syntax {
            Syntax::Python => Node::alt(
                ['"', '\'']
                    .into_iter()
                    .map(|q| {
                        Node::seq(vec![
                            Node::Lit(q.to_string()),
                            python_char(q).repeat(count(min), max.map(count)),
                            Node::Lit(q.to_string()),
                        ])
                    })
                    .collect(),
            ),
            Syntax::Json => Node::seq(vec![
                Node::lit("\""),
                json_char().repeat(count(min), max.map(count)),
                Node::lit("\""),
            ]),
        })
    }

    fn bytes(&mut self) -> Node {
        self.shared("bytes", true, |_| {
            Node::alt(
                ['"', '\'']
                    .into_iter()
                    .map(|q| {
                        Node::seq(vec![
                            Node::Lit(format!("b{q}")),
                            Node::alt(vec![
                                Node::class(&[(' ', '!'), ('#', '&'), ('(', '['), (']', '~')]),
                                Node::seq(vec![
                                    Node::lit("\\"),
                                    Node::class(&[
                                        ('"', '"'),
                                        ('\'', '\''),
                                        ('\\', '\\'),
                                        ('n', 'n'),
                                        ('t', 't'),
                                    ]),
                                ]),
                            ])
                            .star(),
                            Node::Lit(q.to_string()),
                        ])
                    })
                    .collect(),
            )
        })
    }

    /// Any value, nested at most `depth` levels.
    fn any(&mut self, syntax: Syntax, depth: usize) -> Node {
        let key = format!(
            "any_{}_{depth}",
            if syntax == Syntax::Python {
                "py"
            } else {
                "json"
            }
        );
        if let Some(name) = self.shared.get(&key) {
            return Node::Ref(name.clone());
        }
        let name = self.fresh(&key);
        self.shared.insert(key, name.clone());
        let mut alts = vec![
            Node::lit(none(syntax)),
            self.boolean(syntax),
            self.float(false),
            self.string(syntax, 0, None),
        ];
        if depth > 0 {
            let inner = self.any(syntax, depth - 1);
            alts.push(self.sequence("[", "]", inner.clone(), 0, None));
            alts.push(self.dict(inner, syntax, 0, None));
        }
        self.rules.push(Rule {
            name: name.clone(),
            terminal: false,
            body: Body::Node(Node::alt(alts)),
        });
        Node::Ref(name)
    }

    /// `{key: value, …}` with string keys, `min` to `max` entries.
    fn dict(&mut self, value: Node, syntax: Syntax, min: u64, max: Option<u64>) -> Node {
        let key = self.string(syntax, 0, None);
        let colon = self.punct(":", true, true);
        let entry = Node::seq(vec![key, colon, value]);
        self.sequence("{", "}", entry, min, max)
    }

    fn tuple(&mut self, types: &[Type], path: &str, syntax: Syntax) -> Option<Node> {
        let mut items = Vec::with_capacity(types.len());
        for (i, t) in types.iter().enumerate() {
            items.push(self.value(t, &format!("{path}[{i}]"), syntax)?);
        }
        let comma = self.comma();
        let mut joined = Vec::new();
        for (i, item) in items.into_iter().enumerate() {
            if i > 0 {
                joined.push(comma.clone());
            }
            joined.push(item);
        }
        let body = Node::seq(joined.clone());
        let brackets = |g: &mut Gen<'a>, open: &str, close: &str, inner: Node| {
            let open = g.punct(open, false, true);
            let close = g.punct(close, true, false);
            Node::seq(vec![open, inner, close])
        };
        let list = brackets(self, "[", "]", body.clone());
        if syntax == Syntax::Json {
            return Some(list);
        }
        // A tuple of one is `(a,)`.
        let tuple_body = if types.len() == 1 {
            Node::seq(vec![body, Node::lit(",")])
        } else {
            body
        };
        let tuple = brackets(self, "(", ")", tuple_body);
        Some(Node::alt(vec![list, tuple]))
    }

    /// A record: a dict (object) of its keys, or in Python also its constructor when the
    /// context names the same record type (`Point(x=1, y=2)`).
    fn record(&mut self, rt: &Arc<RecordType>, syntax: Syntax) -> Option<Node> {
        if rt.unchecked.is_some() {
            return None;
        }
        if let Some((_, _, name)) = self
            .records
            .iter()
            .find(|(r, s, _)| *s == syntax && (Arc::ptr_eq(r, rt) || same_fields(r, rt)))
        {
            return Some(Node::Ref(name.clone()));
        }
        let name = self.fresh(&format!("rec_{}", rt.name));
        self.records.push((rt.clone(), syntax, name.clone()));
        let colon = self.punct(":", true, true);
        let mut keys = Vec::with_capacity(rt.fields.len());
        for field in &rt.fields {
            let Some(value) = self.value(&field.ty, &field.name, syntax) else {
                if field.required {
                    self.unsatisfiable_record(&name);
                    return None;
                }
                continue;
            };
            let key = Node::alt(
                literals(&Value::Str(field.name.clone()), syntax)
                    .into_iter()
                    .map(Node::Lit)
                    .collect(),
            );
            keys.push((Node::seq(vec![key, colon.clone(), value]), field.required));
        }
        let comma = self.comma();
        let keys_rule = self.rule(
            &format!("{name}_keys"),
            false,
            Body::Keywords {
                items: keys,
                sep: comma,
            },
        );
        let open = self.punct("{", false, true);
        let close = self.punct("}", true, false);
        let mut forms = vec![Node::seq(vec![open, Node::Ref(keys_rule), close])];
        if syntax == Syntax::Python {
            if let Some(Entry::Record(own)) = self.ctx.get(&rt.name) {
                if same_fields(own, rt) {
                    let args = self.keywords(&format!("{name}_args"), &rt.fields)?;
                    let open = self.punct("(", false, true);
                    let close = self.punct(")", true, false);
                    forms.push(Node::seq(vec![Node::lit(&rt.name), open, args, close]));
                }
            }
        }
        self.rules.push(Rule {
            name: name.clone(),
            terminal: false,
            body: Body::Node(Node::alt(forms)),
        });
        Some(Node::Ref(name))
    }

    /// A record whose required field takes no value: no rule is written for it (and none
    /// refers to it: its callers get `None`).
    fn unsatisfiable_record(&mut self, name: &str) {
        self.records.retain(|(_, _, n)| n != name);
    }

    /// The keyword arguments of a call of `fields` (Python): each at most once, the required
    /// ones once, any order; `None` when a required one takes no value.
    pub(crate) fn keywords(&mut self, base: &str, fields: &[Field]) -> Option<Node> {
        let equal = self.punct("=", true, true);
        let colon = self.punct(":", true, true);
        let mut items = Vec::with_capacity(fields.len());
        for field in fields {
            let Some(value) = self.value(&field.ty, &field.name, Syntax::Python) else {
                if field.required {
                    return None;
                }
                continue;
            };
            let item = keyword_item(self, &field.name, value, &equal, &colon);
            items.push((item, field.required));
        }
        if items.is_empty() {
            return Some(Node::Empty);
        }
        let comma = self.comma();
        let name = self.rule(base, false, Body::Keywords { items, sep: comma });
        Some(Node::Ref(name))
    }

    fn bounded(
        &mut self,
        inner: &Type,
        bounds: &Bounds,
        path: &str,
        syntax: Syntax,
    ) -> Option<Node> {
        let count = |min: Option<u64>, max: Option<u64>| (min.unwrap_or(0), max);
        match inner {
            Type::Union(alts) => {
                let alts: Vec<Node> = alts
                    .iter()
                    .filter_map(|t| self.bounded(t, bounds, path, syntax))
                    .collect();
                (!alts.is_empty()).then(|| Node::alt(alts))
            }
            Type::Int => {
                if bounds.multiple_of.is_some() {
                    self.approximate(
                        path,
                        format!("multipleOf {}", bounds.multiple_of.unwrap_or(0.0)),
                        ErrorKind::Value,
                    );
                }
                let (lo, hi) = numbers::int_bounds(bounds)?;
                if (lo, hi) == (-numbers::WIDEST, numbers::WIDEST) {
                    return Some(self.int());
                }
                let key = format!("int_range {lo} {hi}");
                Some(self.shared_as(&key, "int_range", true, |_| numbers::int_range(lo, hi)))
            }
            Type::Float => {
                let (unsigned, rest) = numbers::float_bounds(bounds);
                if let Some(rest) = rest {
                    self.approximate(path, rest, ErrorKind::Value);
                }
                Some(self.float(unsigned))
            }
            Type::Str => {
                let (min, max) = count(bounds.min_length, bounds.max_length);
                if let Some(pattern) = &bounds.pattern {
                    self.approximate(
                        path,
                        format!("pattern `{}`", pattern.as_str()),
                        ErrorKind::Value,
                    );
                }
                let (max, over) = within(max);
                if over {
                    self.approximate(
                        path,
                        format!("maxLength {}", max_text(bounds.max_length)),
                        ErrorKind::Value,
                    );
                }
                let min = if min > MAX_COUNT {
                    self.approximate(path, format!("minLength {min}"), ErrorKind::Value);
                    0
                } else {
                    min
                };
                Some(self.string(syntax, min, max))
            }
            Type::List(item_type) | Type::Set(item_type) => {
                let (min, max) = count(bounds.min_items, bounds.max_items);
                if matches!(inner, Type::Set(_)) && (min > 1 || max.is_some()) {
                    self.approximate(
                        path,
                        "uniqueItems with an item count: duplicates are merged before the count"
                            .into(),
                        ErrorKind::Value,
                    );
                }
                let item = self.value(item_type, &format!("{path}[]"), syntax)?;
                let (max, over) = within(max);
                if over {
                    self.approximate(
                        path,
                        format!("maxItems {}", max_text(bounds.max_items)),
                        ErrorKind::Value,
                    );
                }
                let min = min.min(MAX_COUNT);
                if max.is_some_and(|m| m < min) {
                    return None;
                }
                Some(self.sequence("[", "]", item, min, max))
            }
            Type::Dict(item) => self.bounded_dict(item, bounds, path, syntax),
            other => {
                let node = self.value(other, path, syntax)?;
                if *bounds != Bounds::default() {
                    self.approximate(
                        path,
                        format!("the bounds of a value of type `{other}`"),
                        ErrorKind::Value,
                    );
                }
                Some(node)
            }
        }
    }

    /// A dict with required keys (exactly them when no others are allowed) or a key count.
    fn bounded_dict(
        &mut self,
        item: &Type,
        bounds: &Bounds,
        path: &str,
        syntax: Syntax,
    ) -> Option<Node> {
        let value = self.value(item, &format!("{path}[]"), syntax)?;
        let required = &bounds.required;
        if !required.is_empty() {
            let exact = bounds.max_properties == Some(required.len() as u64);
            if !exact {
                self.approximate(
                    path,
                    format!(
                        "the required keys {} of a dict that may hold others",
                        required.join(", ")
                    ),
                    ErrorKind::Value,
                );
            } else {
                let colon = self.punct(":", true, true);
                let items = required
                    .iter()
                    .map(|k| {
                        let key = Node::alt(
                            literals(&Value::Str(k.clone()), syntax)
                                .into_iter()
                                .map(Node::Lit)
                                .collect(),
                        );
                        (Node::seq(vec![key, colon.clone(), value.clone()]), true)
                    })
                    .collect();
                let comma = self.comma();
                let keys = self.rule(
                    &format!("dict_{path}"),
                    false,
                    Body::Keywords { items, sep: comma },
                );
                let open = self.punct("{", false, true);
                let close = self.punct("}", true, false);
                return Some(Node::seq(vec![open, Node::Ref(keys), close]));
            }
        }
        if bounds.min_properties.is_some() || bounds.max_properties.is_some() {
            self.approximate(
                path,
                "a dict's key count: a key written twice counts once".into(),
                ErrorKind::Value,
            );
        }
        let (max, _) = within(bounds.max_properties);
        let min = bounds.min_properties.unwrap_or(0).min(MAX_COUNT);
        Some(self.dict(value, syntax, min, max))
    }

    /// `allOf`: an enum's members that every part accepts (exact); otherwise the first part,
    /// with bounds-only parts applied to it, and the rest approximated.
    fn all(&mut self, parts: &[Type], path: &str, syntax: Syntax) -> Option<Node> {
        let whole = Type::All(parts.to_vec());
        if let Some(Type::Enum(values)) = parts.first() {
            let members: Vec<Node> = values
                .iter()
                .filter(|v| whole.coerce((*v).clone(), path).is_ok())
                .flat_map(|v| literals(v, syntax))
                .map(Node::Lit)
                .collect();
            return (!members.is_empty()).then(|| Node::alt(members));
        }
        let (first, rest) = parts.split_first()?;
        let mut ty = first.clone();
        for part in rest {
            match part {
                Type::Bounded(inner, bounds) if **inner == Type::Any => {
                    ty = Type::Bounded(Box::new(ty), bounds.clone());
                }
                other if *other == ty => {}
                other => self.approximate(
                    path,
                    format!("allOf: only the first part is written, not `{other}`"),
                    ErrorKind::Type,
                ),
            }
        }
        match ty {
            Type::Bounded(inner, bounds) => self.bounded(&inner, &bounds, path, syntax),
            ty => self.value(&ty, path, syntax),
        }
    }

    fn recursive(&mut self, r: &Recursive, path: &str, syntax: Syntax) -> Option<Node> {
        if let Some((_, _, name)) = self
            .recursive
            .iter()
            .find(|(known, s, _)| known == r && *s == syntax)
        {
            return Some(Node::Ref(name.clone()));
        }
        let name = self.fresh(&format!("def_{}", r.name()));
        self.recursive.push((r.clone(), syntax, name.clone()));
        self.approximate(
            path,
            format!(
                "`{}` nests as deep as the model writes it (Limits::max_depth bounds it)",
                r.name()
            ),
            ErrorKind::Limit,
        );
        let node = r
            .resolved(|ty| ty.clone())
            .and_then(|ty| self.value(&ty, path, syntax))?;
        self.rules.push(Rule {
            name: name.clone(),
            terminal: false,
            body: Body::Node(node),
        });
        Some(Node::Ref(name))
    }
}

/// Whether two record types take the same values: one name, and fields of the same names,
/// types, defaults and requiredness in the same order (descriptions aside). A constructor of
/// the context's record type then makes a value the parameter's type accepts.
fn same_fields(a: &RecordType, b: &RecordType) -> bool {
    a.name == b.name
        && a.unchecked == b.unchecked
        && a.fields.len() == b.fields.len()
        && a.fields.iter().zip(&b.fields).all(|(x, y)| {
            x.name == y.name && x.ty == y.ty && x.required == y.required && x.default == y.default
        })
}

/// `(max, over)`: a count bound as written, or `None` with `over` when it is too large to
/// write out.
fn within(max: Option<u64>) -> (Option<u64>, bool) {
    match max {
        Some(m) if m > MAX_COUNT => (None, true),
        other => (other, false),
    }
}

fn max_text(max: Option<u64>) -> String {
    max.map_or_else(String::new, |m| m.to_string())
}

fn none(syntax: Syntax) -> &'static str {
    match syntax {
        Syntax::Python => "None",
        Syntax::Json => "null",
    }
}

/// One character of a Python string in `quote`s: anything but the quote, a backslash or a
/// control character, or an escape (`\n`, `\'`, `\x41`, `\u00e9`; no surrogates).
fn python_char(quote: char) -> Node {
    let hex = Node::class(&[('0', '9'), ('a', 'f'), ('A', 'F')]);
    Node::alt(vec![
        Node::not_class(&[
            ('\0', '\x1f'),
            (quote, quote),
            ('\\', '\\'),
            ('\x7f', '\x7f'),
        ]),
        Node::seq(vec![
            Node::lit("\\"),
            Node::alt(vec![
                Node::class(&[
                    ('"', '"'),
                    ('\'', '\''),
                    ('\\', '\\'),
                    ('n', 'n'),
                    ('r', 'r'),
                    ('t', 't'),
                ]),
                Node::seq(vec![Node::lit("x"), hex.clone().repeat(2, Some(2))]),
                Node::seq(vec![Node::lit("u"), no_surrogate(&hex)]),
            ]),
        ]),
    ])
}

/// Four hex digits that are not a surrogate (`D800`–`DFFF`).
fn no_surrogate(hex: &Node) -> Node {
    Node::alt(vec![
        Node::seq(vec![
            Node::class(&[('0', '9'), ('a', 'c'), ('A', 'C'), ('e', 'f'), ('E', 'F')]),
            hex.clone().repeat(3, Some(3)),
        ]),
        Node::seq(vec![
            Node::class(&[('d', 'd'), ('D', 'D')]),
            Node::class(&[('0', '7')]),
            hex.clone().repeat(2, Some(2)),
        ]),
    ])
}

/// One character of a JSON string.
fn json_char() -> Node {
    let hex = Node::class(&[('0', '9'), ('a', 'f'), ('A', 'F')]);
    Node::alt(vec![
        Node::not_class(&[('\0', '\x1f'), ('"', '"'), ('\\', '\\')]),
        Node::seq(vec![
            Node::lit("\\"),
            Node::alt(vec![
                Node::class(&[
                    ('"', '"'),
                    ('\\', '\\'),
                    ('/', '/'),
                    ('b', 'b'),
                    ('f', 'f'),
                    ('n', 'n'),
                    ('r', 'r'),
                    ('t', 't'),
                ]),
                Node::seq(vec![Node::lit("u"), no_surrogate(&hex)]),
            ]),
        ]),
    ])
}

/// A keyword argument `key=value`; a key Python cannot write as a keyword (`from`,
/// `max-results`) as `**{"from": value}`, a dict display with a string key right after `**`.
pub(crate) fn keyword_item(
    g: &mut Gen<'_>,
    key: &str,
    value: Node,
    equal: &Node,
    colon: &Node,
) -> Node {
    if is_identifier(key) {
        return Node::seq(vec![Node::lit(key), equal.clone(), value]);
    }
    let stars = Node::lit("**");
    let open = g.punct("{", false, true);
    let close = g.punct("}", true, false);
    let key = Node::alt(
        literals(&Value::Str(key.to_string()), Syntax::Python)
            .into_iter()
            .map(Node::Lit)
            .collect(),
    );
    Node::seq(vec![stars, open, key, colon.clone(), value, close])
}

/// The name Python call text calls a tool by: its own name when Python can write it (an
/// identifier, or dotted identifiers), else one alias with every other character replaced by
/// `_` (`get-current-weather` → `get_current_weather`).
pub fn python_name(name: &str) -> String {
    if name.split('.').all(is_identifier) {
        return name.to_string();
    }
    let mut alias: String = name
        .chars()
        .map(|c| {
            if c == '_' || c.is_alphanumeric() {
                c
            } else {
                '_'
            }
        })
        .collect();
    if alias.starts_with(|c: char| c.is_numeric()) || alias.is_empty() {
        alias.insert(0, '_');
    }
    if is_keyword(&alias) {
        alias.push('_');
    }
    alias
}

/// Whether Python can write `name` as a keyword argument or a name: an identifier that is not
/// a keyword.
pub(crate) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
        && !is_keyword(name)
}

fn is_keyword(name: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
        "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
        "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return",
        "try", "while", "with", "yield",
    ];
    KEYWORDS.contains(&name)
}

/// The ways `syntax` writes `value` as a literal (a string in both quote styles in Python);
/// none for a value it cannot write (a NaN, a record, bytes in JSON).
pub(crate) fn literals(value: &Value, syntax: Syntax) -> Vec<String> {
    match (value, syntax) {
        (Value::Str(s), Syntax::Python) => vec![python_str(s, '\''), python_str(s, '"')],
        (Value::Float(f), _) if !f.is_finite() => Vec::new(),
        (Value::Record(_) | Value::Array(_), _) => Vec::new(),
        (Value::Bytes(_) | Value::Set(_) | Value::Tuple(_), Syntax::Json) => Vec::new(),
        (v, Syntax::Python) => {
            if contains_nonfinite(v) {
                Vec::new()
            } else {
                vec![v.repr()]
            }
        }
        (v, Syntax::Json) => {
            if contains_nonfinite(v) {
                Vec::new()
            } else {
                serde_json::to_string(&v.to_json()).into_iter().collect()
            }
        }
    }
}

fn contains_nonfinite(v: &Value) -> bool {
    match v {
        Value::Float(f) => !f.is_finite(),
        Value::List(items) | Value::Tuple(items) => items.iter().any(contains_nonfinite),
        Value::Set(items) => items.iter().any(contains_nonfinite),
        Value::Dict(d) => d
            .iter()
            .any(|(k, v)| contains_nonfinite(k) || contains_nonfinite(v)),
        Value::Record(_) | Value::Array(_) => true,
        _ => false,
    }
}

/// `s` as a Python string literal in `quote`s.
pub(crate) fn python_str(s: &str, quote: char) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}
