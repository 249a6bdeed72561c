//! What a tool needs beyond a plain call: [`ToolFeatures`] (observations, availability,
//! ending the turn, inline results, a result cache) and their setters on [`FunctionTool`].

use super::*;

impl FunctionTool {
    fn features_mut(&mut self) -> &mut ToolFeatures {
        self.features.get_or_insert_with(Box::default)
    }

    /// Write the model's observation of each output with `format` (unless the tool returned
    /// a [`ToolOutput`] with its own). The full output stays in `FunctionOutput::output`.
    pub fn observe(
        mut self,
        format: impl Fn(&Value) -> String + Send + Sync + 'static,
    ) -> FunctionTool {
        let features = std::mem::take(self.features_mut());
        *self.features_mut() = features.observe(format);
        self
    }

    /// Offer the tool only while `available` holds for the caller's session (see
    /// [`ToolFeatures::available_when`]).
    pub fn available_when(
        mut self,
        available: impl Fn(&Session) -> bool + Send + Sync + 'static,
        when: impl Into<String>,
    ) -> FunctionTool {
        let features = std::mem::take(self.features_mut());
        *self.features_mut() = features.available_when(available, when);
        self
    }

    /// Mark the tool as one that can end the turn (see [`ToolManager::ends_turn`](crate::ToolManager::ends_turn)).
    pub fn ends_turn(mut self) -> FunctionTool {
        self.features_mut().ends_turn = true;
        self
    }

    /// Remember up to `max_entries` outputs keyed by canonical arguments (see
    /// [`ToolFeatures::cached`] for what the key holds and what it does not).
    ///
    /// A tool made with [`with_context`](FunctionTool::with_context) or
    /// [`with_context_async`](FunctionTool::with_context_async) cannot be cached: its result
    /// may depend on the session, state, dependencies or `tool_call_id` it receives, and a
    /// cache keyed by arguments would give one session's result to another. It is not cached
    /// but refused: [`Tool::check`] reports the problem, and every call of the tool fails with
    /// it (a `ToolFailed` error) rather than run.
    pub fn cached(mut self, max_entries: usize) -> FunctionTool {
        if self.takes_context {
            let problem = Error::new(
                ErrorKind::Config,
                format!(
                    "tool `{}` receives injected values (CallContext) and cannot be cached: its result may differ per session",
                    self.definition.name
                ),
            )
            .with_hint("remove `.cached(..)` from this tool");
            self.problems.push(problem);
            return self;
        }
        self.features_mut().memo = Some(Arc::new(Memo::new(max_entries)));
        self
    }
}

type Observe = dyn Fn(&Value) -> String + Send + Sync;
type Available = dyn Fn(&Session) -> bool + Send + Sync;

/// What a tool needs beyond a plain call; see [`Tool::features`]. Build it with the methods
/// below (or the same methods on [`FunctionTool`]).
///
/// ```
/// use fexpr::tool::ToolFeatures;
/// let features = ToolFeatures::new().ends_turn().cached(100).observe(|v| format!("got {}", v.repr()));
/// assert!(features.is_ends_turn());
/// assert_eq!(features.observation(&fexpr::Value::Int(3)).as_deref(), Some("got 3"));
/// ```
#[derive(Clone, Default)]
pub struct ToolFeatures {
    observe: Option<Arc<Observe>>,
    available: Option<(Arc<Available>, String)>,
    ends_turn: bool,
    memo: Option<Arc<Memo>>,
}

impl ToolFeatures {
    /// No features beyond receiving a [`CallContext`].
    pub fn new() -> ToolFeatures {
        ToolFeatures::default()
    }

    /// Write the model's observation of an output (unless the tool gave one itself).
    pub fn observe(
        mut self,
        format: impl Fn(&Value) -> String + Send + Sync + 'static,
    ) -> ToolFeatures {
        self.observe = Some(Arc::new(format));
        self
    }

    /// Offer the tool only while `available` holds for the caller's session: otherwise it is
    /// left out of the definitions and a call is refused with a message that includes `when`
    /// (say when it becomes available, e.g. "after a search has returned results").
    pub fn available_when(
        mut self,
        available: impl Fn(&Session) -> bool + Send + Sync + 'static,
        when: impl Into<String>,
    ) -> ToolFeatures {
        self.available = Some((Arc::new(available), when.into()));
        self
    }

    /// Mark the tool as one that can end the agent's turn (a final answer, say).
    pub fn ends_turn(mut self) -> ToolFeatures {
        self.ends_turn = true;
        self
    }

    /// Remember up to `max_entries` outputs keyed by the canonical bound arguments (the oldest
    /// entry is dropped first). Only successful outputs are remembered.
    ///
    /// The key is the arguments and nothing else, so a cached result is given to every caller
    /// that passes the same arguments, whatever its session. Cache only tools whose result
    /// depends on their arguments alone:
    /// - a cached tool is called through [`Tool::call`], never [`Tool::call_in`]: it receives
    ///   no [`CallContext`] (session, state, dependencies, `tool_call_id`), so no session's
    ///   data can reach another through the cache;
    /// - [`FunctionTool::cached`] refuses tools made with `with_context*`, whose function takes
    ///   a `CallContext`: see there;
    /// - state a tool keeps itself (a [`Component`]'s fields, a client's connection) is not in
    ///   the key either: a component tool whose result depends on that state must not be cached.
    pub fn cached(mut self, max_entries: usize) -> ToolFeatures {
        self.memo = Some(Arc::new(Memo::new(max_entries)));
        self
    }

    /// The formatter's observation of `output`, if there is a formatter.
    pub fn observation(&self, output: &Value) -> Option<String> {
        self.observe.as_ref().map(|f| f(output))
    }

    /// Whether the tool is available in `session`; `Err` holds when it becomes available.
    pub fn availability(&self, session: &Session) -> Result<(), &str> {
        match &self.available {
            Some((available, when)) if !available(session) => Err(when),
            _ => Ok(()),
        }
    }

    /// Whether the tool can end the turn.
    pub fn is_ends_turn(&self) -> bool {
        self.ends_turn
    }

    /// The memo, when the tool is cached.
    pub fn memo(&self) -> Option<&Memo> {
        self.memo.as_deref()
    }
}

/// Remembered outputs of a cached tool, keyed by canonical arguments, bounded in entries.
pub struct Memo {
    max_entries: usize,
    entries: std::sync::Mutex<indexmap::IndexMap<String, ToolOutput>>,
}

impl Memo {
    fn new(max_entries: usize) -> Memo {
        Memo {
            max_entries,
            entries: std::sync::Mutex::new(indexmap::IndexMap::new()),
        }
    }

    /// The key of bound arguments: their Python forms, with dict and set entries sorted so
    /// that equal values give equal keys.
    pub fn key(args: &[Option<Value>]) -> String {
        let mut key = String::new();
        for arg in args {
            match arg {
                Some(v) => canonical(v, &mut key),
                None => key.push('-'),
            }
            key.push('\u{1f}');
        }
        key
    }

    /// The remembered output for `key`.
    pub fn get(&self, key: &str) -> Option<ToolOutput> {
        self.entries.lock().ok()?.get(key).cloned()
    }

    /// Remember `output` under `key`, dropping the oldest entry when full.
    pub fn put(&self, key: String, output: ToolOutput) {
        if self.max_entries == 0 {
            return;
        }
        if let Ok(mut entries) = self.entries.lock() {
            if !entries.contains_key(&key) && entries.len() >= self.max_entries {
                entries.shift_remove_index(0);
            }
            entries.insert(key, output);
        }
    }

    /// Entries remembered now.
    pub fn len(&self) -> usize {
        self.entries.lock().map(|e| e.len()).unwrap_or(0)
    }

    /// Whether nothing is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Append the canonical form of `v`: its repr, except that dict and set entries are sorted.
fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Dict(map) => {
            let mut items: Vec<String> = map
                .iter()
                .map(|(k, v)| {
                    let mut item = String::new();
                    canonical(k, &mut item);
                    item.push_str(": ");
                    canonical(v, &mut item);
                    item
                })
                .collect();
            items.sort();
            out.push('{');
            out.push_str(&items.join(", "));
            out.push('}');
        }
        Value::Set(set) => {
            let mut items: Vec<String> = set
                .iter()
                .map(|v| {
                    let mut item = String::new();
                    canonical(v, &mut item);
                    item
                })
                .collect();
            items.sort();
            out.push_str("set(");
            out.push_str(&items.join(", "));
            out.push(')');
        }
        Value::List(items) | Value::Tuple(items) => {
            out.push(if matches!(v, Value::List(_)) {
                '['
            } else {
                '('
            });
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                canonical(item, out);
            }
            out.push(if matches!(v, Value::List(_)) {
                ']'
            } else {
                ')'
            });
        }
        Value::Record(r) => {
            out.push_str(&r.name);
            out.push('(');
            for (i, (name, v)) in r.fields.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(name);
                out.push('=');
                canonical(v, out);
            }
            out.push(')');
        }
        other => out.push_str(&other.repr()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dict(pairs: &[(&str, i64)]) -> Value {
        Value::Dict(
            pairs
                .iter()
                .map(|(k, v)| (Value::Str(k.to_string()), Value::Int(*v)))
                .collect(),
        )
    }

    #[test]
    fn memo_keys_are_canonical() {
        let a = Memo::key(&[Some(dict(&[("x", 1), ("y", 2)])), None]);
        let b = Memo::key(&[Some(dict(&[("y", 2), ("x", 1)])), None]);
        assert_eq!(a, b);
        // Position, absence and type still count.
        assert_ne!(a, Memo::key(&[None, Some(dict(&[("x", 1), ("y", 2)]))]));
        assert_ne!(
            Memo::key(&[Some(Value::Int(1))]),
            Memo::key(&[Some(Value::Str("1".into()))])
        );
        assert_ne!(
            Memo::key(&[Some(Value::List(vec![]))]),
            Memo::key(&[Some(Value::Tuple(vec![]))])
        );
    }

    #[test]
    fn the_memo_keeps_at_most_its_bound() {
        let memo = Memo::new(2);
        for i in 0..5 {
            memo.put(format!("k{i}"), ToolOutput::new(Value::Int(i)));
        }
        assert_eq!(memo.len(), 2);
        assert_eq!(memo.get("k0"), None);
        assert_eq!(memo.get("k4"), Some(ToolOutput::new(Value::Int(4))));
        let none = Memo::new(0);
        none.put("k".into(), ToolOutput::new(Value::None));
        assert!(none.is_empty());
    }

    #[test]
    fn plain_tools_have_no_features_and_context_tools_do() {
        let plain = FunctionTool::new("add", ["a", "b"], |a: i64, b: i64| a + b);
        assert!(plain.features().is_none());
        let ctx = FunctionTool::with_context("who", [], |c: CallContext| c.tool().to_string());
        assert!(ctx.features().is_some());
        assert_eq!(ctx.definition().parameters["properties"], json!({}));
        // Called outside a manager, a context tool gets a detached context.
        let out = futures_util::FutureExt::now_or_never(ctx.call(vec![]));
        assert_eq!(
            out.and_then(Result::ok).map(|o| o.output),
            Some(Value::Str("who".into()))
        );
        let session = Session::new();
        let hidden = plain.available_when(|_| false, "later");
        assert_eq!(
            hidden.features().map(|f| f.availability(&session)),
            Some(Err("later"))
        );
    }
}
