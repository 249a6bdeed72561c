//! [`ToolManager`]: tools plus context, definitions for prompts, and execution of what a model
//! wrote (expressions, `Function` JSON, `FunctionExpression` JSON), natively on tokio.

use indexmap::IndexMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::Poll;
use std::time::{Duration, Instant};

use crate::call::{Function, FunctionOutput};
use crate::dispatch::observe::summarize;
use crate::dispatch::session::{CallContext, Dependencies, EventKind, Session};
use crate::dispatch::tool::{Component, Memo, Tool, ToolDefinition, ToolOutput};
use crate::error::{clip, Error, ErrorKind, LimitKind, Span};
use crate::eval::{self, Dispatch, ToolRequest, UnitOutcome};
use crate::front::json_input;
use crate::limits::Limits;
use crate::resolve::context::{check_tool_name, Context, Entry};
#[cfg(doc)]
use crate::resolve::context::{python_alias, valid_tool_name};
use crate::syntax;
use crate::value::Value;

/// Tools, the context expressions may use, and limits: built once with
/// [`ToolManager::builder`], then shared.
///
/// ```
/// use fexpr::{Context, FunctionTool, ToolManager};
/// let manager = ToolManager::builder()
///     .tool(FunctionTool::new("add", ["a", "b"], |a: i64, b: i64| a + b))
///     .context(Context::new().variable("x", 2))
///     .build()?;
/// let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
/// let out = rt.block_on(manager.execute_func_expr("add(a=x, b=3)"));
/// assert_eq!(out.output, Ok(fexpr::Value::Int(5)));
/// let bad = rt.block_on(manager.execute_func_expr("add(a=1, c=2)"));
/// assert_eq!(bad.output.as_ref().err().unwrap().kind, fexpr::ErrorKind::Arguments);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// A manager is immutable once built and cheap to clone (one `Arc`): clones share the tools,
/// context and limits, so a server keeps one and hands a clone to every request. To derive
/// another manager from it, start from [`to_builder`](ToolManager::to_builder).
#[derive(Clone, Default)]
pub struct ToolManager {
    pub(crate) inner: Arc<Inner>,
}

/// What a [`ToolManager`] holds, shared by its clones.
#[derive(Clone, Default)]
pub(crate) struct Inner {
    tools: IndexMap<String, Arc<dyn Tool>, foldhash::fast::RandomState>,
    context: Context,
    limits: Limits,
    /// Values tools receive by type ([`CallContext::dependency`]).
    dependencies: Arc<Dependencies>,
    #[cfg(feature = "sandbox")]
    pub(crate) sandboxed: super::sandboxed::ManagerSandbox,
}

/// Builds a [`ToolManager`]: tools, context, dependencies and limits, then
/// [`build`](ToolManagerBuilder::build), which checks every registration at once.
///
/// ```
/// use fexpr::{FunctionTool, ToolManager};
/// let result = ToolManager::builder()
///     .tool(FunctionTool::new("f", ["n"], |n: Option<i64>| n).default("n", "one"))
///     .tool(FunctionTool::new("g", ["n", "k"], |n: i64, k: i64| n + k).default("m", 1))
///     .build();
/// let problems = result.err().unwrap();
/// assert_eq!(problems.problems().len(), 2);
/// assert_eq!(problems.problems()[0].message, "tool `f`: default for `n` is 'one', not an int | None");
/// ```
#[derive(Clone, Default)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct ToolManagerBuilder {
    inner: Inner,
    /// The tool names added to this builder, and those added more than once.
    added: std::collections::HashSet<String>,
    twice: Vec<String>,
    /// Tools left out for a name no provider allows, each with why.
    bad_names: Vec<Error>,
}

impl ToolManagerBuilder {
    /// Drop what the manager this builder came from prepared from its settings.
    fn forget_prepared(&mut self) {
        #[cfg(feature = "sandbox")]
        self.inner.sandboxed.reset();
    }

    /// The names registered so far: tools, variables, record types, functions.
    pub fn names(&self) -> &Context {
        &self.inner.context
    }

    /// Add a tool, under its definition's name: any name [`valid_tool_name`] allows (what the
    /// providers and MCP allow; another name is a registration problem). Python call text also
    /// reaches it by its [`python_alias`]. Two tools of one name added to one builder are a
    /// registration problem ([`build`](ToolManagerBuilder::build) refuses them: which one a
    /// model meant is unknown); a builder from [`ToolManager::to_builder`] may replace the
    /// tools it started with.
    ///
    /// ```
    /// use fexpr::{FunctionTool, ToolManager};
    /// let problems = ToolManager::builder()
    ///     .tool(FunctionTool::new("f", ["n"], |n: i64| n))
    ///     .tool(FunctionTool::new("f", ["n"], |n: i64| -n))
    ///     .build()
    ///     .err()
    ///     .unwrap();
    /// assert_eq!(problems.problems()[0].message, "the tool `f` is registered twice");
    /// ```
    pub fn tool(mut self, tool: impl Tool + 'static) -> ToolManagerBuilder {
        self.add_tool(Arc::new(tool));
        self
    }

    /// Add a shared tool, for tools registered in a loop (as [`tool`](ToolManagerBuilder::tool)).
    pub fn add_tool(&mut self, tool: Arc<dyn Tool>) -> &mut ToolManagerBuilder {
        let def = tool.definition();
        if let Err(problem) = check_tool_name(&def.name) {
            self.bad_names.push(
                Error::new(
                    ErrorKind::Config,
                    format!(
                        "the tool name `{}` is not allowed: {problem}",
                        clip(&def.name, 140)
                    ),
                )
                .with_hint("rename the tool"),
            );
            return self;
        }
        if !self.added.insert(def.name.clone()) && !self.twice.contains(&def.name) {
            self.twice.push(def.name.clone());
        }
        self.inner
            .context
            .insert(def.name.clone(), Entry::Tool(def.signature.clone()));
        self.inner.tools.insert(def.name.clone(), tool);
        self
    }

    /// Add every tool of a [`Component`] (a struct whose methods are tools).
    pub fn component<C: Component>(mut self, component: Arc<C>) -> ToolManagerBuilder {
        for tool in component.tools() {
            self.add_tool(Arc::new(tool));
        }
        self
    }

    /// Register a dependency: tools made with
    /// [`FunctionTool::with_context`](crate::FunctionTool::with_context) get it with
    /// [`CallContext::dependency::<T>()`](CallContext::dependency). It is never a parameter.
    pub fn dependency<T: std::any::Any + Send + Sync>(
        mut self,
        value: Arc<T>,
    ) -> ToolManagerBuilder {
        Arc::make_mut(&mut self.inner.dependencies).insert(value);
        self
    }

    /// Add the names of `context` (variables, record types, functions); tools stay.
    pub fn context(mut self, context: Context) -> ToolManagerBuilder {
        for (name, entry) in context.entries() {
            self.inner.context.insert(name, entry.clone());
        }
        self
    }

    /// Replace the limits (a request may still narrow or widen them:
    /// [`Request::limits`](crate::Request::limits)).
    pub fn limits(mut self, limits: Limits) -> ToolManagerBuilder {
        self.inner.limits = limits;
        self
    }

    /// Evaluate in `sandbox` (for instance one with its own
    /// [`SandboxConfig`](crate::sandbox::SandboxConfig)) instead of the process-wide default one.
    #[cfg(feature = "sandbox")]
    pub fn sandbox(mut self, sandbox: crate::sandbox::Sandbox) -> ToolManagerBuilder {
        self.inner.sandboxed.set(sandbox);
        self
    }

    /// The manager, or every registration problem at once: a default of the wrong type or
    /// for a parameter the tool does not have, a description of a missing parameter, a cached
    /// tool that reads its call's context ([`Tool::check`]), a tool name no provider allows, a
    /// context entry added after a tool under the tool's name, two names Python call text
    /// cannot tell apart ([`Context::name_problems`]), limits that cannot work
    /// ([`Limits::check`]).
    pub fn build(self) -> Result<ToolManager, BuildError> {
        let mut problems: Vec<Error> = self
            .inner
            .tools
            .values()
            .filter_map(|tool| tool.check().err())
            .collect();
        problems.extend(self.bad_names.iter().cloned());
        for name in &self.twice {
            problems.push(
                Error::new(
                    ErrorKind::Config,
                    format!("the tool `{name}` is registered twice"),
                )
                .with_hint("give every tool its own name"),
            );
        }
        for name in self.inner.tools.keys() {
            if !matches!(self.inner.context.get(name), Some(Entry::Tool(_))) {
                problems.push(
                    Error::new(
                        ErrorKind::Config,
                        format!("the context's `{name}` hides the tool `{name}`"),
                    )
                    .with_hint("rename the context entry or the tool"),
                );
            }
        }
        problems.extend(self.inner.context.name_problems());
        if let Err(e) = self.inner.limits.check() {
            problems.push(e);
        }
        if problems.is_empty() {
            Ok(ToolManager {
                inner: Arc::new(self.inner),
            })
        } else {
            Err(BuildError { problems })
        }
    }
}

/// Why [`ToolManagerBuilder::build`] refused: every problem found, in registration order
/// (tools first, then the limits).
#[derive(Clone, Debug)]
pub struct BuildError {
    problems: Vec<Error>,
}

impl BuildError {
    /// The problems, each an [`ErrorKind::Config`] error with its hint.
    pub fn problems(&self) -> &[Error] {
        &self.problems
    }
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.problems.as_slice() {
            [one] => write!(f, "cannot build the tool manager: {}", one.message)?,
            many => {
                write!(f, "cannot build the tool manager: {} problems", many.len())?;
                for problem in many {
                    write!(f, "\n- {}", problem.message)?;
                    if let Some(hint) = &problem.hint {
                        write!(f, " ({hint})")?;
                    }
                }
            }
        }
        Ok(())
    }
}

impl std::error::Error for BuildError {}

impl From<BuildError> for Error {
    /// One `Config` error whose message lists every problem.
    fn from(e: BuildError) -> Error {
        Error::new(ErrorKind::Config, e.to_string())
    }
}

impl std::fmt::Debug for ToolManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.fmt("ToolManager", f)
    }
}

impl std::fmt::Debug for ToolManagerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.fmt("ToolManagerBuilder", f)
    }
}

impl Inner {
    /// The tools by name and the limits: what tells two managers apart when debugging.
    fn fmt(&self, name: &str, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(name)
            .field("tools", &self.tools.keys().collect::<Vec<_>>())
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl ToolManager {
    /// Start building a manager: no tools, an empty context, default limits.
    pub fn builder() -> ToolManagerBuilder {
        ToolManagerBuilder::default()
    }

    /// A builder holding this manager's tools, context, dependencies, limits and sandbox, to
    /// derive another manager (the two then share nothing prepared).
    pub fn to_builder(&self) -> ToolManagerBuilder {
        let mut builder = ToolManagerBuilder {
            inner: Inner::clone(&self.inner),
            added: Default::default(),
            twice: Vec::new(),
            bad_names: Vec::new(),
        };
        builder.forget_prepared();
        builder
    }

    /// The bound of observations: [`Limits::max_observation_chars`].
    pub(crate) fn max_observation_chars(&self) -> usize {
        self.inner.limits.max_observation_chars
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// The tools, in registration order.
    pub fn tools(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.inner.tools.values()
    }

    /// The tool called `name` (its own name, or its Python alias:
    /// [`python_alias`]).
    pub fn tool(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.inner.tools.get(name).or_else(|| {
            self.inner
                .context
                .tool_name(name)
                .and_then(|own| self.inner.tools.get(own))
        })
    }

    /// Everything an expression can reach: tools, variables, record types, functions.
    pub fn context(&self) -> &Context {
        &self.inner.context
    }

    /// The grammar of the calls this manager's checker accepts, for constrained decoding
    /// (see [`crate::grammar`]): its tools' typed signatures in `options`' syntax, markup and
    /// tool choice.
    ///
    /// ```
    /// use fexpr::grammar::{GrammarOptions, GrammarFormat, ToolChoice};
    /// let manager = fexpr::demo::manager();
    /// let options = GrammarOptions::default().format(GrammarFormat::Gbnf).tool_choice(ToolChoice::Required);
    /// let grammar = manager.grammar(&options)?;
    /// assert!(grammar.text.starts_with("root ::= calls"));
    /// # Ok::<(), fexpr::Error>(())
    /// ```
    ///
    /// # Errors
    /// A `Config` error when `options.tool_choice` names a tool the manager does not have, or
    /// asks for a call when no tool can be called validly.
    pub fn grammar(
        &self,
        options: &crate::grammar::GrammarOptions,
    ) -> Result<crate::grammar::Grammar, Error> {
        crate::grammar::grammar(self.context(), options)
    }

    /// Whether any successful output came from a tool marked
    /// [`ends_turn`](crate::FunctionTool::ends_turn): the agent may stop after these calls.
    pub fn ends_turn(&self, outputs: &[FunctionOutput]) -> bool {
        outputs.iter().any(|out| {
            out.output.is_ok()
                && self
                    .inner
                    .tools
                    .get(&out.name)
                    .and_then(|t| t.features())
                    .is_some_and(|f| f.is_ends_turn())
        })
    }

    /// The text a model should see for `output`: the tool's observation if it gave one, else
    /// a bounded summary of the output ([`summarize`]), else the error with its hint. Never
    /// longer than the observation limit (plus `…`).
    pub fn observation(&self, output: &FunctionOutput) -> String {
        let max = self.max_observation_chars();
        match (&output.observation, &output.output) {
            (Some(text), _) => clip(text, max),
            (None, Ok(value)) => summarize(value, max),
            (None, Err(error)) => clip(&format!("error: {error}"), max),
        }
    }

    /// Run a [`Function`] natively within `scope`.
    pub(crate) async fn run_function(&self, func: Function, scope: &Scope) -> FunctionOutput {
        let input = func.to_json().to_string();
        self.run_checked(func, None, input, Span::default(), scope)
            .await
    }

    /// Run the call `call`, whose arguments are already values (`bound`: the same values bound
    /// to the tool's signature, when the front door's check did it; `input`: the call's text,
    /// `span`: where it is in it), natively within `scope`.
    pub(crate) async fn run_checked(
        &self,
        mut call: Function,
        bound: Option<Vec<Option<Value>>>,
        input: String,
        span: Span,
        scope: &Scope,
    ) -> FunctionOutput {
        // An output carries the tool's own name, whichever name the call used; the tool is
        // looked up once, for both.
        let tool = self.tool(&call.name);
        if let Some(tool) = tool {
            let own = &tool.definition().name;
            if *own != call.name {
                call.name.clone_from(own);
            }
        }
        let result = {
            let run =
                std::pin::pin!(self.run_bound(&call, bound, tool.map(AsRef::as_ref), span, scope));
            scope.within(span, run).await
        };
        let result = scope.keep(span, result);
        let call_id = scope.output_id(span);
        let mut out = output(call_id, call.name.clone(), input, Some(call), result);
        scope.attach(&mut out, span);
        out
    }

    /// Parse and evaluate expression text natively within `scope`: one output per unit.
    pub(crate) async fn run_expr(&self, text: &str, scope: &Scope) -> Vec<FunctionOutput> {
        match syntax::parse(text, &scope.limits) {
            Ok(parsed) => self.run_tree(text, &parsed, scope).await,
            Err(e) => vec![scope.failed(text, e)],
        }
    }

    /// [`run_expr`](Self::run_expr) of a text that should hold one call: its one output, or
    /// `Err(n)`, before anything runs, when it holds `n` calls (a list or tuple of them). The
    /// parse that runs the text is the one that counts its calls.
    ///
    /// Its last lines repeat [`run_tree`](Self::run_tree)'s one-unit branch on purpose: an
    /// async helper shared by both cost every native call 280 instructions (callgrind, `add`),
    /// its future built and then copied into its caller's.
    pub(crate) async fn run_expr_one(
        &self,
        text: &str,
        scope: &Scope,
    ) -> Result<FunctionOutput, usize> {
        let tree = match syntax::parse(text, &scope.limits) {
            Ok(tree) => tree,
            Err(e) => return Ok(scope.failed(text, e)),
        };
        let Some(unit) = eval::one_unit(&tree) else {
            return Err(eval::units(&tree).len());
        };
        let dispatch = NativeDispatch {
            manager: self,
            scope,
        };
        let outcome = eval::run_one(unit, &self.inner.context, &scope.limits, &dispatch).await;
        Ok(scope.unit_output(text, outcome))
    }

    /// Evaluate the expression `tree` (its spans index `text`) natively within `scope`: one
    /// output per unit.
    pub(crate) async fn run_tree(
        &self,
        text: &str,
        tree: &syntax::Expr,
        scope: &Scope,
    ) -> Vec<FunctionOutput> {
        let limits = &scope.limits;
        let dispatch = NativeDispatch {
            manager: self,
            scope,
        };
        // One unit (the common case: one call) needs no ids registered and no vectors of
        // units and outcomes.
        if let Some(unit) = eval::one_unit(tree) {
            let outcome = eval::run_one(unit, &self.inner.context, limits, &dispatch).await;
            return vec![scope.unit_output(text, outcome)];
        }
        let units = eval::units(tree);
        scope.register_units(&units);
        let outcomes = eval::run(&units, &self.inner.context, limits, &dispatch).await;
        outcomes
            .into_iter()
            .map(|outcome| scope.unit_output(text, outcome))
            .collect()
    }

    /// Evaluate JSON text in fexpr's forms ([`json_input::run`]) natively within `scope`.
    pub(crate) async fn run_json(&self, text: &str, scope: &Scope) -> Vec<FunctionOutput> {
        let dispatch = NativeDispatch {
            manager: self,
            scope,
        };
        match json_input::run(text, &self.inner.context, &scope.limits, &dispatch).await {
            Ok(outcomes) => outcomes
                .into_iter()
                .map(|outcome| scope.unit_output(text, outcome))
                .collect(),
            Err(e) => vec![scope.failed(text, e)],
        }
    }

    /// Bind, check and run one request against the registered tool.
    async fn run_request(&self, request: ToolRequest, scope: &Scope) -> Result<ToolOutput, Error> {
        let ToolRequest {
            name,
            span,
            args,
            kwargs,
        } = request;
        self.run_call(&name, span, args, kwargs, scope).await
    }

    /// [`run_request`](Self::run_request) of the call of tool `name` at `span` whose keyword
    /// names are owned (`String`) or borrowed from the parsed call (`&str`): a plain tool binds
    /// them as they are, only the observed path makes a [`ToolRequest`] of them.
    async fn run_call<K: AsRef<str> + Into<String>>(
        &self,
        name: &str,
        span: Span,
        args: Vec<(Value, Span)>,
        kwargs: Vec<(K, Value, Span)>,
        scope: &Scope,
    ) -> Result<ToolOutput, Error> {
        let Some(tool) = self.tool(name) else {
            return Err(Error::new(
                ErrorKind::UnknownTool,
                format!("tool `{}` is not defined", clip(name, 60)),
            )
            .at(span)
            .suggest(name, self.inner.tools.keys().map(String::as_str)));
        };
        if tool.features().is_none() && scope.session.events.is_none() {
            // A plain tool and nobody listening: nothing beyond binding and the call.
            let def = tool.definition();
            let args = def.signature.bind_named(args, kwargs, span)?;
            let out = match tool.call_now(args) {
                Ok(result) => result,
                Err(args) => tool.call(args).await,
            };
            let out = out.map_err(|e| e.at(span))?;
            return self.checked(def, out, span, &scope.limits);
        }
        let request = ToolRequest {
            name: name.to_string(),
            span,
            args,
            kwargs: kwargs
                .into_iter()
                .map(|(k, v, s)| (k.into(), v, s))
                .collect(),
        };
        // Boxed: this path's future (context, memo, events) is most of this one's size, and
        // inline it would enlarge every call's future, which each await up the chain copies.
        super::boxed(|| self.run_observed(tool.as_ref(), request, scope)).await
    }

    /// Run the call `call` (at `span`) whose arguments the front door may have bound to the
    /// tool's signature already (`bound`), calling `tool` (the call's, looked up by its caller):
    /// a plain tool with nobody listening takes them as they are; otherwise the call is a
    /// request, bound and run as usual ([`run_request`](Self::run_request)).
    async fn run_bound(
        &self,
        call: &Function,
        bound: Option<Vec<Option<Value>>>,
        tool: Option<&dyn Tool>,
        span: Span,
        scope: &Scope,
    ) -> Result<ToolOutput, Error> {
        if let (Some(args), Some(tool)) = (bound, tool) {
            if tool.features().is_none() && scope.session.events.is_none() {
                let out = match tool.call_now(args) {
                    Ok(result) => result,
                    Err(args) => tool.call(args).await,
                };
                let out = out.map_err(|e| e.at(span))?;
                return self.checked(tool.definition(), out, span, &scope.limits);
            }
        }
        let request = ToolRequest {
            name: call.name.clone(),
            span,
            args: call.args.iter().cloned().map(|v| (v, span)).collect(),
            kwargs: call
                .kwargs
                .iter()
                .map(|(k, v)| (k.clone(), v.clone(), span))
                .collect(),
        };
        self.run_request(request, scope).await
    }

    /// A call with features or listeners: [`run_in`](Self::run_in), then the final event.
    async fn run_observed(
        &self,
        tool: &dyn Tool,
        request: ToolRequest,
        scope: &Scope,
    ) -> Result<ToolOutput, Error> {
        let context = scope.context(self, &tool.definition().name, request.span);
        let result = self.run_in(tool, request, &context, &scope.limits).await;
        if let Some(events) = &scope.session.events {
            let kind = match &result {
                Ok(out) => EventKind::Final(out.clone()),
                Err(e) => EventKind::Error(e.clone()),
            };
            // A closed channel means nobody listens any more: not the call's failure.
            let _ = events.send(context.event(kind)).await;
        }
        result
    }

    /// A call with its context: availability, memo, observation formatter.
    async fn run_in(
        &self,
        tool: &dyn Tool,
        request: ToolRequest,
        context: &CallContext,
        limits: &Limits,
    ) -> Result<ToolOutput, Error> {
        let def = tool.definition();
        let features = tool.features();
        let span = request.span;
        if let Some(Err(when)) = features.map(|f| f.availability(context.session())) {
            return Err(Error::new(
                ErrorKind::ToolFailed,
                format!("tool `{}` is not available now", def.name),
            )
            .with_hint(format!("it becomes available {when}"))
            .at(span));
        }
        let args = def.signature.bind(request.args, request.kwargs, span)?;
        let memo = features.and_then(|f| f.memo());
        let key = memo.map(|_| Memo::key(&args));
        if let (Some(memo), Some(key)) = (memo, &key) {
            if let Some(hit) = memo.get(key) {
                return Ok(hit);
            }
        }
        // A cached tool gets no context: its result may depend on its arguments only, the key.
        let out = match memo {
            Some(_) => tool.call(args),
            None => tool.call_in(args, context.clone()),
        }
        .await
        .map_err(|e| e.at(span))?;
        let mut out = self.checked(def, out, span, limits)?;
        out.is_streaming |= context.has_streamed();
        if out.observation.is_none() {
            if let Some(text) = features.and_then(|f| f.observation(&out.output)) {
                out.observation = Some(bounded(text, limits));
            }
        }
        if let (Some(memo), Some(key)) = (memo, key) {
            memo.put(key, out.clone());
        }
        Ok(out)
    }

    /// Check a tool's output against the limits, refuse one that holds an infinite or NaN
    /// float (see [`Value`]), give it its return type and bound its observation. Every tool
    /// result passes here: native, MCP, and those a sandbox guest asks for.
    fn checked(
        &self,
        def: &ToolDefinition,
        mut out: ToolOutput,
        span: Span,
        limits: &Limits,
    ) -> Result<ToolOutput, Error> {
        let size = out.output.approx_size();
        if size > limits.max_output_bytes {
            return Err(
                Error::limit(LimitKind::OutputBytes, limits.max_output_bytes, size).at(span),
            );
        }
        if let Some(bad) = out.output.find_non_finite() {
            return Err(bad
                .error(&format!("the result of `{}`", def.name))
                .at(span)
                .with_hint(
                    "a tool's result must hold finite floats only (JSON has no inf or NaN); \
                     the tool can return None or raise an error instead",
                ));
        }
        out.output = def.return_type.coerce_result(out.output);
        if let Some(text) = out.observation.take() {
            out.observation = Some(bounded(text, limits));
        }
        Ok(out)
    }
}

/// Whether `tool` may be offered and called in `session`.
pub(crate) fn is_available(tool: &dyn Tool, session: &Session) -> bool {
    tool.features()
        .is_none_or(|f| f.availability(session).is_ok())
}

/// One run of a request (an expression, a `Function`, or one call of a model's output): the
/// caller's session and limits, the calls started so far, the call id of each top-level call,
/// and the observations of calls (by span) to attach to the outputs.
pub(crate) struct Scope {
    pub(crate) session: Session,
    /// The request's limits (the manager's unless the request gave its own).
    pub(crate) limits: Limits,
    /// When the request began: [`Limits::deadline`] counts from here.
    started: Instant,
    next_index: AtomicU32,
    /// The id of the run's one top-level call, when it is known before it runs (the model's
    /// id of a call in its output, or the id of a `Function`).
    preset: Option<Arc<str>>,
    /// The top-level calls of a native run of several, in source order, with their ids:
    /// set before the run (see [`Scope::unit_id`]).
    units: OnceLock<Vec<(Span, Arc<str>)>>,
    /// The ids given to calls that no known top-level call contains (in the sandbox, where the
    /// guest alone knows the top-level calls; or a run of one), by the call's span.
    found: Mutex<Vec<(Span, Arc<str>)>>,
    observations: Mutex<Vec<(Span, String)>>,
    /// Bytes of tool results so far in the whole request, charged to
    /// [`Limits::max_eval_bytes`].
    results: Charged,
}

/// A request's count of tool result bytes, as a scope holds it.
enum Charged {
    /// The scope is the request's only one: the count is its own (no allocation).
    Own(AtomicU64),
    /// The request's count, shared by its scopes.
    Shared(Arc<AtomicU64>),
}

impl Scope {
    /// A scope for one run of `session` under `limits`, charging its tool results to
    /// `results`, the request's count (shared by its scopes).
    pub(crate) fn new(
        session: Session,
        limits: &Limits,
        preset: Option<Arc<str>>,
        results: &Arc<AtomicU64>,
    ) -> Scope {
        Scope::with(session, limits, preset, Charged::Shared(results.clone()))
    }

    /// A scope that is its request's only one (a text of one call run natively): [`new`]
    /// without a shared count of result bytes, so nothing is allocated for it.
    ///
    /// [`new`]: Scope::new
    pub(crate) fn only(session: Session, limits: &Limits) -> Scope {
        Scope::with(session, limits, None, Charged::Own(AtomicU64::new(0)))
    }

    fn with(
        session: Session,
        limits: &Limits,
        preset: Option<Arc<str>>,
        results: Charged,
    ) -> Scope {
        Scope {
            session,
            limits: limits.clone(),
            started: Instant::now(),
            next_index: AtomicU32::new(0),
            preset,
            units: OnceLock::new(),
            found: Mutex::new(Vec::new()),
            observations: Mutex::new(Vec::new()),
            results,
        }
    }

    /// Give each top-level call (`units`, in source order) of the run its id, before
    /// anything runs. A run of one needs none: its calls share the first id given.
    fn register_units(&self, units: &[&syntax::Expr]) {
        if self.preset.is_some() || units.len() < 2 {
            return;
        }
        let ids = units
            .iter()
            .map(|unit| (unit.span, crate::call::fresh_call_id().into()));
        let _ = self.units.set(ids.collect());
    }

    /// The call id of the top-level call a call at `span` belongs to: the preset one, the
    /// registered unit that contains `span` (a binary search: units are in source order), or
    /// one given to a call at a span inside or around `span`. A call none of these covers gets
    /// a fresh id, registered at its span, that the calls around it then share — so in the
    /// sandbox a top-level call with two nested calls side by side may see two ids there.
    pub(crate) fn unit_id(&self, span: Span) -> Arc<str> {
        self.known_id(span).unwrap_or_else(|| {
            let id: Arc<str> = crate::call::fresh_call_id().into();
            if let Ok(mut found) = self.found.lock() {
                found.push((span, id.clone()));
            }
            id
        })
    }

    /// The id of the top-level call at `span`, for its output: as [`unit_id`](Scope::unit_id),
    /// and a fresh one (not registered) when no call of it asked for one.
    fn output_id(&self, span: Span) -> String {
        match self.known_id(span) {
            // Copied as a `str` (`to_string` of an `Arc<str>` would go through `Display`).
            Some(id) => String::from(&*id),
            None => crate::call::fresh_call_id(),
        }
    }

    fn known_id(&self, span: Span) -> Option<Arc<str>> {
        if let Some(id) = &self.preset {
            return Some(id.clone());
        }
        if let Some(units) = self.units.get() {
            let after = units.partition_point(|(at, _)| at.start <= span.start);
            if let Some((at, id)) = after.checked_sub(1).and_then(|i| units.get(i)) {
                if contains(*at, span) {
                    return Some(id.clone());
                }
            }
        }
        let found = self.found.lock().ok()?;
        found
            .iter()
            .find(|(at, _)| contains(*at, span) || contains(span, *at))
            .map(|(_, id)| id.clone())
    }

    /// The output of a run refused as a whole (`text` did not parse, or broke a limit).
    pub(crate) fn failed(&self, text: &str, error: Error) -> FunctionOutput {
        let mut out = FunctionOutput::failed(clip(text, 60), text, error);
        if let Some(id) = &self.preset {
            out.call_id = id.to_string();
        }
        out
    }

    /// The context of the next call, to `tool`, at `span`.
    fn context(&self, manager: &ToolManager, tool: &str, span: Span) -> CallContext {
        CallContext {
            session: self.session.clone(),
            dependencies: manager.inner.dependencies.clone(),
            tool: tool.into(),
            tool_call_id: self.unit_id(span),
            index: self.next_index.fetch_add(1, Ordering::Relaxed),
            streamed: self.session.events.as_ref().map(|_| Arc::default()),
        }
    }

    /// Run one tool call within [`Limits::call_deadline`] and what is left of the request's
    /// [`Limits::deadline`]: past either, a `Limit` error at `span`, and the call's future is
    /// dropped (a sync tool already running on the blocking pool runs on; its result is
    /// discarded). A call that completes on its first poll (an inline tool) arms no timer,
    /// so the fast path reads no clock and touches no timer wheel. Any Tokio runtime will do,
    /// with or without its time driver (see [`crate::deadline`]).
    ///
    /// The call comes pinned by the caller: taken by value, it would be stored twice in this
    /// future (as the argument and as the pinned local), and every caller's future with it.
    async fn within<T>(
        &self,
        span: Span,
        mut call: Pin<&mut impl Future<Output = Result<T, Error>>>,
    ) -> Result<T, Error> {
        let first = std::future::poll_fn(|cx| Poll::Ready(call.as_mut().poll(cx))).await;
        if let Poll::Ready(result) = first {
            return result;
        }
        // Boxed: the timer's future is large, and only calls that wait need it.
        super::boxed(|| self.until_deadline(span, call)).await
    }

    /// The rest of [`within`](Self::within), for a call that was not ready at once.
    async fn until_deadline<T>(
        &self,
        span: Span,
        call: Pin<&mut impl Future<Output = Result<T, Error>>>,
    ) -> Result<T, Error> {
        let now = Instant::now();
        let (deadline, call_deadline) = (self.limits.deadline, self.limits.call_deadline);
        let request_end = self.started.checked_add(deadline);
        let call_end = now.checked_add(call_deadline);
        let (end, kind, budget) = match (request_end, call_end) {
            (Some(r), Some(c)) if r < c => (Some(r), LimitKind::Deadline, deadline),
            (Some(r), None) => (Some(r), LimitKind::Deadline, deadline),
            (_, c) => (c, LimitKind::CallDeadline, call_deadline),
        };
        let Some(end) = end else {
            return call.await;
        };
        match crate::runtime::until(end, call).await {
            Some(result) => result,
            None => {
                let from = if kind == LimitKind::Deadline {
                    self.started
                } else {
                    now
                };
                Err(deadline_error(kind, budget, from.elapsed()).at(span))
            }
        }
    }

    /// Keep a call's result for its unit: the observation by span, the value for evaluation.
    fn keep(&self, span: Span, result: Result<ToolOutput, Error>) -> Result<Value, Error> {
        let out = result?;
        // Every result is charged to the request's budget, natively and for a sandbox guest
        // alike: over it, this call fails and later calls find the budget spent.
        let size = u64::try_from(out.output.approx_size()).unwrap_or(u64::MAX);
        let results = match &self.results {
            Charged::Own(own) => own,
            Charged::Shared(shared) => &**shared,
        };
        let total = results
            .fetch_add(size, Ordering::Relaxed)
            .saturating_add(size);
        let budget = self.limits.max_eval_bytes;
        if total > u64::try_from(budget).unwrap_or(u64::MAX) {
            return Err(Error::limit_message(
                LimitKind::EvalBytes,
                format!(
                    "max_eval_bytes limit exceeded: the results of this request's tool calls \
                     total {total} bytes > {budget}"
                ),
            )
            .at(span));
        }
        Ok(out).map(|out| {
            if let Some(text) = out.observation {
                if let Ok(mut observations) = self.observations.lock() {
                    observations.push((span, text));
                }
            }
            out.output
        })
    }

    /// Give `out` the observation of the call at `span`, if it succeeded and there is one.
    pub(crate) fn attach(&self, out: &mut FunctionOutput, span: Span) {
        if out.output.is_err() {
            return;
        }
        if let Ok(observations) = self.observations.lock() {
            out.observation = observations
                .iter()
                .rev()
                .find(|(at, _)| *at == span)
                .map(|(_, text)| text.clone());
        }
    }

    /// [`unit_output`] with the unit's call id and observation.
    pub(crate) fn unit_output(&self, source: &str, outcome: UnitOutcome) -> FunctionOutput {
        let span = outcome.span;
        let mut out = unit_output(source, outcome, self.output_id(span));
        self.attach(&mut out, span);
        out
    }
}

/// Whether `outer` covers `inner`.
fn contains(outer: Span, inner: Span) -> bool {
    outer.start <= inner.start && inner.end <= outer.end
}

/// The one output of a text that should hold one call, or an error saying it held several.
pub(crate) fn single_output(text: &str, mut outputs: Vec<FunctionOutput>) -> FunctionOutput {
    if outputs.len() == 1 {
        if let Some(output) = outputs.pop() {
            return output;
        }
    }
    FunctionOutput::failed(
        clip(text, 60),
        text,
        Error::new(
            ErrorKind::Unsupported,
            format!("expected one call, found {}", outputs.len()),
        )
        .with_hint("use ToolManager::run for a list of calls"),
    )
}

/// Turn a unit's outcome into the output a caller sees, with its call id.
fn unit_output(source: &str, outcome: UnitOutcome, call_id: String) -> FunctionOutput {
    let input = source
        .get(outcome.span.range())
        .unwrap_or(source)
        .to_string();
    let name = outcome
        .call
        .as_ref()
        .map_or_else(|| clip(&input, 60), |f| f.name.clone());
    output(call_id, name, input, outcome.call, outcome.result)
}

fn output(
    call_id: String,
    name: String,
    input: String,
    call: Option<Function>,
    result: Result<Value, Error>,
) -> FunctionOutput {
    FunctionOutput {
        call_id,
        name,
        input,
        parsed_input: call,
        output: result,
        observation: None,
        receipt: None,
        repairs: Vec::new(),
    }
}

/// The `Limit` error of a tool call still running at its deadline (`kind` is
/// [`LimitKind::Deadline`] or [`LimitKind::CallDeadline`]).
fn deadline_error(kind: LimitKind, budget: Duration, waited: Duration) -> Error {
    let what = match kind {
        LimitKind::Deadline => "the request's time ran out while a tool call was running",
        _ => "the tool call was still running",
    };
    Error::limit_message(
        kind,
        format!(
            "{} limit exceeded: {what} (waited {waited:.1?}; {} {budget:?})",
            kind.field(),
            kind.field()
        ),
    )
}

/// Runs a batch of requests concurrently on the current task.
pub(crate) struct NativeDispatch<'m> {
    pub(crate) manager: &'m ToolManager,
    pub(crate) scope: &'m Scope,
}

impl Dispatch for NativeDispatch<'_> {
    async fn dispatch_one(&self, request: ToolRequest) -> Result<Value, Error> {
        let span = request.span;
        let run = std::pin::pin!(self.manager.run_request(request, self.scope));
        let result = self.scope.within(span, run).await;
        self.scope.keep(span, result)
    }

    async fn dispatch_call(
        &self,
        name: &str,
        span: Span,
        args: Vec<(Value, Span)>,
        kwargs: Vec<(&str, Value, Span)>,
    ) -> Result<Value, Error> {
        let run = std::pin::pin!(self.manager.run_call(name, span, args, kwargs, self.scope));
        let result = self.scope.within(span, run).await;
        self.scope.keep(span, result)
    }

    async fn dispatch(&self, requests: Vec<ToolRequest>) -> Vec<Result<Value, Error>> {
        if let [_] = requests.as_slice() {
            let request = requests.into_iter().next();
            return match request {
                Some(r) => vec![self.dispatch_one(r).await],
                None => vec![],
            };
        }
        let futures = requests.into_iter().map(|r| self.dispatch_one(r));
        futures_util::future::join_all(futures).await
    }
}

/// `text` cut to [`Limits::max_observation_chars`].
fn bounded(text: String, limits: &Limits) -> String {
    let max = limits.max_observation_chars;
    if text.len() <= max {
        text
    } else {
        clip(&text, max)
    }
}
