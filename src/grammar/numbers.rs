//! Numbers within bounds: an integer range as an exact regular expression (digit by digit, as
//! `to-regex-range` writes it), and what a float's bounds leave to the checker.

use super::rules::Node;
use crate::types::Bounds;

/// The widest integers the grammar writes: 18 digits, within every 64-bit range (Python's
/// ints go further; a model needs no more).
pub(crate) const WIDEST: i128 = 999_999_999_999_999_999;

/// The integer range `bounds` allow (`minimum`, `maximum`, the exclusive ones, an integer
/// `format`), clamped to 19 digits; `None` when it is empty.
pub(crate) fn int_bounds(bounds: &Bounds) -> Option<(i128, i128)> {
    let mut lo = -WIDEST;
    let mut hi = WIDEST;
    let clamp = |x: f64| x.clamp(-(WIDEST as f64), WIDEST as f64);
    if let Some(m) = bounds.minimum {
        lo = lo.max(clamp(m.ceil()) as i128);
    }
    if let Some(m) = bounds.exclusive_minimum {
        lo = lo.max(clamp(m.floor()) as i128 + 1);
    }
    if let Some(m) = bounds.maximum {
        hi = hi.min(clamp(m.floor()) as i128);
    }
    if let Some(m) = bounds.exclusive_maximum {
        hi = hi.min(clamp(m.ceil()) as i128 - 1);
    }
    if let Some((a, b, _)) = &bounds.int_range {
        lo = lo.max(*a);
        hi = hi.min(*b);
    }
    (lo <= hi).then_some((lo.max(-WIDEST), hi.min(WIDEST)))
}

/// The integers `lo..=hi` as Python and JSON write them (no leading zeros, `-` for negatives).
pub(crate) fn int_range(lo: i128, hi: i128) -> Node {
    let mut alts = Vec::new();
    if lo < 0 {
        let neg_hi = hi.min(-1);
        // -lo..=-neg_hi, as positive numbers after a minus sign.
        let magnitudes = unsigned_range(neg_hi.unsigned_abs(), lo.unsigned_abs());
        alts.push(Node::seq(vec![Node::lit("-"), magnitudes]));
    }
    if hi >= 0 {
        alts.push(unsigned_range(lo.max(0).unsigned_abs(), hi.unsigned_abs()));
    }
    Node::alt(alts)
}

/// The non-negative integers `lo..=hi`: split into ranges whose numbers share a prefix and
/// then differ in one digit range followed by full digit positions.
fn unsigned_range(lo: u128, hi: u128) -> Node {
    // Up to the widest: the numbers of `lo`'s length, then any longer one (`[1-9][0-9]{d,17}`).
    if hi == WIDEST.unsigned_abs() && lo > 0 {
        let digits = lo.to_string().len() as u32;
        if digits < 18 {
            let same = unsigned_range(lo, 10u128.pow(digits) - 1);
            let longer = Node::seq(vec![
                Node::class(&[('1', '9')]),
                Node::class(&[('0', '9')]).repeat(digits, Some(17)),
            ]);
            return Node::alt(vec![same, longer]);
        }
    }
    if hi == WIDEST.unsigned_abs() && lo == 0 {
        return Node::alt(vec![
            Node::lit("0"),
            Node::seq(vec![
                Node::class(&[('1', '9')]),
                Node::class(&[('0', '9')]).repeat(0, Some(17)),
            ]),
        ]);
    }
    let mut stops = vec![hi];
    let mut nines = 1;
    let mut stop = fill_nines(lo, nines);
    while lo <= stop && stop < hi {
        stops.push(stop);
        nines += 1;
        stop = fill_nines(lo, nines);
    }
    let mut zeros = 1;
    let mut stop = zero_tail(hi + 1, zeros).wrapping_sub(1);
    while lo < stop && stop < hi && zero_tail(hi + 1, zeros) > 0 {
        stops.push(stop);
        zeros += 1;
        stop = zero_tail(hi + 1, zeros).wrapping_sub(1);
    }
    stops.sort_unstable();
    stops.dedup();
    let mut alts = Vec::new();
    let mut start = lo;
    for stop in stops {
        if stop < start {
            continue;
        }
        alts.push(digits_pattern(start, stop));
        start = stop + 1;
    }
    Node::alt(alts)
}

/// `n` with its last `count` digits made 9.
fn fill_nines(n: u128, count: u32) -> u128 {
    let p = 10u128.saturating_pow(count);
    n - n % p + (p - 1)
}

/// `n` with its last `count` digits made 0.
fn zero_tail(n: u128, count: u32) -> u128 {
    let p = 10u128.saturating_pow(count);
    n - n % p
}

/// `start..=stop` (as many digits each, differing in one range then free digits).
fn digits_pattern(start: u128, stop: u128) -> Node {
    let a = start.to_string();
    let b = stop.to_string();
    let mut parts = Vec::new();
    for (x, y) in a.chars().zip(b.chars()) {
        if x == y {
            parts.push(Node::Lit(x.to_string()));
        } else {
            parts.push(Node::class(&[(x, y)]));
        }
    }
    Node::seq(parts)
}

/// What a float's bounds ask: whether the grammar writes unsigned numbers only (a minimum
/// of 0 or more, which is all it states), and the bounds it leaves to the checker, said in
/// words (`None` when it states them all).
pub(crate) fn float_bounds(bounds: &Bounds) -> (bool, Option<String>) {
    let unsigned = bounds.minimum.is_some_and(|m| m >= 0.0)
        || bounds.exclusive_minimum.is_some_and(|m| m >= 0.0);
    let mut rest = Vec::new();
    match bounds.minimum {
        Some(m) if m != 0.0 => rest.push(format!("minimum {m}")),
        _ => {}
    }
    if let Some(m) = bounds.exclusive_minimum {
        rest.push(format!("exclusiveMinimum {m}"));
    }
    if let Some(m) = bounds.maximum {
        rest.push(format!("maximum {m}"));
    }
    if let Some(m) = bounds.exclusive_maximum {
        rest.push(format!("exclusiveMaximum {m}"));
    }
    if let Some(m) = bounds.multiple_of {
        rest.push(format!("multipleOf {m}"));
    }
    (unsigned, (!rest.is_empty()).then(|| rest.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `text` matches `node` (a small matcher over the nodes a range is made of).
    fn matches(node: &Node, text: &str) -> bool {
        ends(node, text, 0).contains(&text.len())
    }

    fn ends(node: &Node, text: &str, at: usize) -> Vec<usize> {
        match node {
            Node::Empty => vec![at],
            Node::Lit(l) => {
                if text[at..].starts_with(l.as_str()) {
                    vec![at + l.len()]
                } else {
                    vec![]
                }
            }
            Node::Repeat(inner, min, max) => {
                let mut now = vec![at];
                let mut all = Vec::new();
                for i in 0..=max.unwrap_or(20) {
                    if i >= *min {
                        all.extend(now.iter().copied());
                    }
                    now = now.into_iter().flat_map(|j| ends(inner, text, j)).collect();
                    if now.is_empty() {
                        break;
                    }
                }
                all
            }
            Node::Class { ranges, negated } => match text[at..].chars().next() {
                Some(c) if ranges.iter().any(|(a, b)| *a <= c && c <= *b) != *negated => {
                    vec![at + c.len_utf8()]
                }
                _ => vec![],
            },
            Node::Seq(parts) => {
                let mut now = vec![at];
                for p in parts {
                    now = now.into_iter().flat_map(|i| ends(p, text, i)).collect();
                }
                now
            }
            Node::Alt(alts) => alts.iter().flat_map(|a| ends(a, text, at)).collect(),
            _ => unreachable!(),
        }
    }

    #[test]
    fn integer_ranges_are_exact() {
        for (lo, hi) in [
            (0, 9),
            (5, 123),
            (-17, 33),
            (1, 100),
            (-1000, -7),
            (0, 255),
            (18, 65),
            (10, 10),
            (-5, 0),
        ] {
            let node = int_range(lo, hi);
            for n in (lo - 150)..=(hi + 150) {
                assert_eq!(
                    matches(&node, &n.to_string()),
                    (lo..=hi).contains(&n),
                    "{n} in {lo}..={hi}"
                );
            }
            assert!(!matches(&node, "007"));
            assert!(!matches(&node, "-0"));
        }
        let big = int_range(-WIDEST, WIDEST);
        assert!(matches(&big, "999999999999999999"));
        assert!(!matches(&big, "1000000000000000000"));
        assert!(matches(&big, "-42"));
        assert!(matches(&big, "0"));
        assert!(!matches(&big, "-0"));
        let from = int_range(120, WIDEST);
        assert!(matches(&from, "120") && matches(&from, "1000") && !matches(&from, "119"));
    }

    #[test]
    fn bounds_become_a_range() {
        let b = Bounds {
            minimum: Some(1.0),
            exclusive_maximum: Some(10.0),
            ..Bounds::default()
        };
        assert_eq!(int_bounds(&b), Some((1, 9)));
        let empty = Bounds {
            minimum: Some(5.0),
            maximum: Some(4.5),
            ..Bounds::default()
        };
        assert_eq!(int_bounds(&empty), None);
        let unsigned = Bounds {
            minimum: Some(0.0),
            ..Bounds::default()
        };
        assert_eq!(float_bounds(&unsigned), (true, None));
        let some = Bounds {
            minimum: Some(0.0),
            maximum: Some(1.0),
            ..Bounds::default()
        };
        assert_eq!(float_bounds(&some), (true, Some("maximum 1".into())));
    }
}
