//! The `#[fexpr::tool]` and `#[fexpr::tools]` attributes: a [`FunctionTool`] from a Rust
//! function or from an `impl` block's methods, with the parameter names taken from the
//! signature and the descriptions from the doc comment.
//!
//! Use them through `fexpr` (its `macros` feature, on by default), which documents them with
//! examples: `fexpr::tool` and `fexpr::tools`.
//!
//! [`FunctionTool`]: https://docs.rs/fexpr/latest/fexpr/tool/struct.FunctionTool.html

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{
    Attribute, Error, Expr, FnArg, Ident, ImplItem, ItemFn, ItemImpl, LitStr, Pat, Result,
    Signature, Type,
};

/// A tool from a function.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand_fn(attr.into(), item.into())
        .unwrap_or_else(Error::into_compile_error)
        .into()
}

/// Every `#[tool]` method of an `impl` block a tool of the type.
#[proc_macro_attribute]
pub fn tools(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand_impl(attr.into(), item.into())
        .unwrap_or_else(Error::into_compile_error)
        .into()
}

/// The options inside `#[fexpr::tool(...)]`.
#[derive(Default)]
struct Options {
    /// `inline`: run a sync function on the calling task (`FunctionTool::inline`).
    inline: Option<Span>,
    /// `name = "..."`: the name the model calls, instead of the function's.
    name: Option<LitStr>,
}

impl Options {
    fn parse(attr: TokenStream2) -> Result<Options> {
        let mut options = Options::default();
        let parser = syn::meta::parser(|meta| {
            if meta.path.is_ident("inline") {
                options.inline = Some(meta.path.span());
                Ok(())
            } else if meta.path.is_ident("name") {
                options.name = Some(meta.value()?.parse()?);
                Ok(())
            } else {
                Err(meta.error("unknown tool option: expected `inline` or `name = \"...\"`"))
            }
        });
        syn::parse::Parser::parse2(parser, attr)?;
        Ok(options)
    }
}

/// How the generated closure reaches the function.
enum Callee {
    /// A free function: `f(..)`.
    Free,
    /// A method taking `&self`: `this.f(..)` on the component's `Arc<Self>`.
    Method,
    /// An associated function without `self`: `Self::f(..)`.
    Associated,
}

/// What the attribute read from one function.
struct ToolFn {
    /// The name the model calls.
    name: String,
    fn_ident: Ident,
    is_async: bool,
    inline: bool,
    description: String,
    /// The model's parameters, in order: name and type.
    params: Vec<(Ident, Type)>,
    /// The arguments of the call, in the signature's order: `None` is the injected context.
    call_args: Vec<Option<Ident>>,
    takes_context: bool,
    defaults: Vec<(String, Expr)>,
    param_docs: Vec<(String, String)>,
    callee: Callee,
}

fn expand_fn(attr: TokenStream2, item: TokenStream2) -> Result<TokenStream2> {
    let options = Options::parse(attr)?;
    let mut item: ItemFn = syn::parse2(item).map_err(|e| {
        Error::new(
            e.span(),
            "`#[fexpr::tool]` goes on a function (or, as `#[tool]`, on a method inside a `#[fexpr::tools]` impl block)",
        )
    })?;
    // On a mistake, the function stays as written (without the `#[default]` attributes), so
    // the only errors are the attribute's, not "cannot find function" wherever it is used.
    let tool = match analyse(&mut item.sig, &item.attrs, options, false) {
        Ok(tool) => tool,
        Err(e) => {
            let e = e.into_compile_error();
            return Ok(quote!(#item #e));
        }
    };
    let vis = &item.vis;
    let ctor = format_ident!(
        "{}_tool",
        tool.fn_ident.unraw(),
        span = tool.fn_ident.span()
    );
    let doc = format!(
        "The tool made from [`{0}`]: the `fexpr::FunctionTool` a model calls as `{1}`, with the parameters and doc comment of [`{0}`].",
        tool.fn_ident.unraw(),
        tool.name
    );
    let body = build(&tool);
    Ok(quote! {
        #item
        #[doc = #doc]
        // The closure spells out the parameter types the schema is made from.
        #[allow(clippy::redundant_closure)]
        #vis fn #ctor() -> ::fexpr::FunctionTool #body
    })
}

fn expand_impl(attr: TokenStream2, item: TokenStream2) -> Result<TokenStream2> {
    if !attr.is_empty() {
        return Err(Error::new_spanned(
            attr,
            "`#[fexpr::tools]` takes no options: put them on each method's `#[tool(...)]`",
        ));
    }
    let mut item: ItemImpl = syn::parse2(item).map_err(|e| {
        Error::new(
            e.span(),
            "`#[fexpr::tools]` goes on an `impl` block whose `#[tool]` methods are the tools",
        )
    })?;
    if let Some((_, path, _)) = &item.trait_ {
        return Err(Error::new_spanned(
            path,
            "`#[fexpr::tools]` goes on an inherent `impl` block (`impl MyType { .. }`), not on a trait implementation",
        ));
    }
    let mut tools = Vec::new();
    let mut errors: Option<Error> = None;
    for impl_item in &mut item.items {
        let ImplItem::Fn(method) = impl_item else {
            continue;
        };
        let Some(at) = method.attrs.iter().position(is_tool_attr) else {
            continue;
        };
        let marker = method.attrs.remove(at);
        let options = match &marker.meta {
            syn::Meta::Path(_) => Ok(Options::default()),
            syn::Meta::List(list) => Options::parse(list.tokens.clone()),
            syn::Meta::NameValue(nv) => Err(Error::new_spanned(
                nv,
                "expected `#[tool]` or `#[tool(inline, name = \"...\")]`",
            )),
        };
        match options.and_then(|o| analyse(&mut method.sig, &method.attrs, o, true)) {
            Ok(tool) => tools.push(build(&tool)),
            Err(e) => combine(&mut errors, e),
        }
    }
    if let Some(errors) = errors {
        let errors = errors.into_compile_error();
        return Ok(quote!(#item #errors));
    }
    if tools.is_empty() {
        return Err(Error::new_spanned(
            &item.self_ty,
            "`#[fexpr::tools]` found no `#[tool]` method in this impl block: mark each method the model may call with `#[tool]`",
        ));
    }
    let (impl_generics, _, where_clause) = item.generics.split_for_impl();
    let self_ty = &item.self_ty;
    Ok(quote! {
        #item
        impl #impl_generics ::fexpr::tool::Component for #self_ty #where_clause {
            #[allow(clippy::redundant_closure)]
            fn tools(self: ::std::sync::Arc<Self>) -> ::std::vec::Vec<::fexpr::FunctionTool> {
                ::std::vec![#(#tools),*]
            }
        }
    })
}

/// `#[tool]`, `#[tool(..)]`, `#[fexpr::tool]`, `#[fexpr::tool(..)]`.
fn is_tool_attr(attr: &Attribute) -> bool {
    let path = attr.path();
    let names: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    names == ["tool"] || names == ["fexpr", "tool"]
}

fn combine(errors: &mut Option<Error>, error: Error) {
    match errors {
        Some(errors) => errors.combine(error),
        None => *errors = Some(error),
    }
}

/// Reads a tool from a function's signature and doc comment, and strips the `#[default(..)]`
/// attributes from its parameters. Reports every problem at once.
fn analyse(
    sig: &mut Signature,
    attrs: &[Attribute],
    options: Options,
    in_impl: bool,
) -> Result<ToolFn> {
    let mut errors: Option<Error> = None;
    let name = options
        .name
        .as_ref()
        .map_or_else(|| sig.ident.unraw().to_string(), LitStr::value);
    let is_async = sig.asyncness.is_some();
    if let (Some(span), true) = (options.inline, is_async) {
        combine(
            &mut errors,
            Error::new(
                span,
                "`inline` is for sync functions: an async tool already runs on the calling task",
            ),
        );
    }
    if !sig.generics.params.is_empty() {
        combine(
            &mut errors,
            Error::new_spanned(
                &sig.generics,
                "a tool function cannot be generic: the model is shown one schema, made from concrete parameter types",
            ),
        );
    }
    if let Some(unsafety) = &sig.unsafety {
        combine(
            &mut errors,
            Error::new_spanned(unsafety, "a tool function cannot be `unsafe`"),
        );
    }
    let mut callee = if in_impl {
        Callee::Associated
    } else {
        Callee::Free
    };
    let mut params = Vec::new();
    let mut refused: Vec<syn::Ident> = Vec::new();
    let mut call_args = Vec::new();
    let mut context: Option<Ident> = None;
    let mut defaults = Vec::new();
    for input in &mut sig.inputs {
        let arg = match input {
            FnArg::Receiver(receiver) => {
                let problem = if !in_impl {
                    Some("`#[fexpr::tool]` takes a free function; for a method taking `&self`, put `#[fexpr::tools]` on the impl block and `#[tool]` on the method")
                } else if receiver.colon_token.is_some() {
                    Some("a tool method takes `&self` (the component is shared by its tools through an `Arc`)")
                } else if receiver.reference.is_none() {
                    Some("a tool method takes `&self`, not `self` by value: the component is shared by its tools and every call, so no call can consume it")
                } else if receiver.mutability.is_some() {
                    Some("a tool method takes `&self`, not `&mut self`: calls may run concurrently; keep mutable state behind a `Mutex` or an atomic")
                } else {
                    None
                };
                match problem {
                    Some(problem) => combine(&mut errors, Error::new_spanned(&receiver, problem)),
                    None => callee = Callee::Method,
                }
                continue;
            }
            FnArg::Typed(arg) => arg,
        };
        let mut default = None;
        let mut kept = Vec::new();
        for attr in std::mem::take(&mut arg.attrs) {
            if attr.path().is_ident("default") {
                match attr.parse_args::<Expr>() {
                    Ok(expr) => default = Some((attr.clone(), expr)),
                    Err(_) => combine(
                        &mut errors,
                        Error::new_spanned(
                            &attr,
                            "expected `#[default(value)]`, e.g. `#[default(10)]` or `#[default(\"celsius\")]`",
                        ),
                    ),
                }
            } else {
                kept.push(attr);
            }
        }
        arg.attrs = kept;
        let ident = match &*arg.pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => p.ident.clone(),
            pat => {
                combine(
                    &mut errors,
                    Error::new_spanned(
                        pat,
                        "a tool parameter needs a plain name (`city: String`): the model passes arguments by that name; patterns such as `_` or `(a, b)` have none",
                    ),
                );
                continue;
            }
        };
        let ty = (*arg.ty).clone();
        if is_call_context(&ty) {
            if let Some((attr, _)) = &default {
                combine(
                    &mut errors,
                    Error::new_spanned(
                        attr,
                        format!("`#[default]` on `{ident}`: a `CallContext` is injected by the manager, not given by the model, so it has no default"),
                    ),
                );
            }
            if context.is_some() {
                combine(
                    &mut errors,
                    Error::new_spanned(&ty, "a tool function takes at most one `CallContext`"),
                );
            }
            context = Some(ident);
            call_args.push(None);
            continue;
        }
        if let Type::Reference(r) = &ty {
            let hint = if is_call_context(&r.elem) {
                "take the `CallContext` by value: `ctx: CallContext`".to_string()
            } else {
                format!("tool arguments are converted to owned values: take an owned type (`String` for `&str`, `Vec<T>` for `&[T]`) for `{ident}`")
            };
            combine(&mut errors, Error::new_spanned(&ty, hint));
            // Refused for its type, it is still a parameter the doc comment may describe.
            refused.push(ident);
            continue;
        }
        if let Type::ImplTrait(_) = &ty {
            combine(
                &mut errors,
                Error::new_spanned(
                    &ty,
                    "a tool function cannot be generic: the model is shown one schema, made from concrete parameter types",
                ),
            );
            refused.push(ident);
            continue;
        }
        if let Some((_, expr)) = default {
            defaults.push((ident.unraw().to_string(), expr));
        }
        call_args.push(Some(ident.clone()));
        params.push((ident, ty));
    }
    let max = if context.is_some() { 6 } else { 8 };
    if params.len() > max {
        combine(
            &mut errors,
            Error::new(
                sig.ident.span(),
                format!(
                    "tool `{name}` has {} parameters; a tool function takes at most 8 (6 beside a `CallContext`): group some into a struct",
                    params.len()
                ),
            ),
        );
    }
    let docs = Docs::parse(attrs);
    for (param, _, span) in &docs.params {
        let known = params.iter().any(|(p, _)| p.unraw() == param.as_str())
            || refused.iter().any(|p| p.unraw() == param.as_str())
            || context
                .as_ref()
                .is_some_and(|c| c.unraw() == param.as_str());
        if !known {
            let listed: Vec<String> = params
                .iter()
                .map(|(p, _)| format!("`{}`", p.unraw()))
                .collect();
            combine(
                &mut errors,
                Error::new(
                    span.unwrap_or_else(|| sig.ident.span()),
                    format!(
                        "the doc comment describes `{param}`, but `{}` has no parameter `{param}` (its parameters: {})",
                        sig.ident.unraw(),
                        if listed.is_empty() { "none".to_string() } else { listed.join(", ") }
                    ),
                ),
            );
        }
    }
    if let Some(errors) = errors {
        return Err(errors);
    }
    let param_docs = docs
        .params
        .into_iter()
        .filter(|(p, _, _)| params.iter().any(|(q, _)| q.unraw() == p.as_str()))
        .map(|(p, d, _)| (p, d))
        .collect();
    Ok(ToolFn {
        name,
        fn_ident: sig.ident.clone(),
        is_async,
        inline: options.inline.is_some(),
        description: docs.description,
        params,
        call_args,
        takes_context: context.is_some(),
        defaults,
        param_docs,
        callee,
    })
}

/// `CallContext`, `fexpr::CallContext`, `fexpr::session::CallContext`...: the injected type.
fn is_call_context(ty: &Type) -> bool {
    match ty {
        Type::Path(p) if p.qself.is_none() => p
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == "CallContext" && s.arguments.is_none()),
        Type::Paren(p) => is_call_context(&p.elem),
        Type::Group(g) => is_call_context(&g.elem),
        _ => false,
    }
}

/// The `FunctionTool` expression for one tool.
fn build(tool: &ToolFn) -> TokenStream2 {
    let name = &tool.name;
    let span = tool.fn_ident.span();
    let fn_ident = &tool.fn_ident;
    let names = tool.params.iter().map(|(p, _)| p.unraw().to_string());
    let context = Ident::new("__fexpr_context", Span::call_site());
    let this = Ident::new("__fexpr_this", Span::call_site());
    let context_param = tool
        .takes_context
        .then(|| quote!(#context: ::fexpr::CallContext,));
    let params = tool.params.iter().map(|(p, ty)| quote!(#p: #ty));
    let args = tool.call_args.iter().map(|a| match a {
        Some(p) => quote!(#p),
        None => quote!(#context),
    });
    let call = match tool.callee {
        Callee::Free => quote_spanned!(span=> #fn_ident(#(#args),*)),
        Callee::Associated => quote_spanned!(span=> Self::#fn_ident(#(#args),*)),
        Callee::Method => quote_spanned!(span=> #this.#fn_ident(#(#args),*)),
    };
    let body = match (&tool.callee, tool.is_async) {
        (Callee::Method, true) => quote! {{
            let #this = ::std::sync::Arc::clone(&#this);
            async move { #call.await }
        }},
        _ => call,
    };
    let constructor = match (tool.is_async, tool.takes_context) {
        (false, false) => quote!(new),
        (true, false) => quote!(new_async),
        (false, true) => quote!(with_context),
        (true, true) => quote!(with_context_async),
    };
    let capture = matches!(tool.callee, Callee::Method)
        .then(|| quote!(let #this = ::std::sync::Arc::clone(&self);));
    let description = (!tool.description.is_empty()).then(|| {
        let d = &tool.description;
        quote!(.description(#d))
    });
    let param_docs = tool
        .param_docs
        .iter()
        .map(|(p, d)| quote!(.param_description(#p, #d)));
    let defaults = tool.defaults.iter().map(|(p, expr)| {
        let span = expr.span();
        quote_spanned!(span=> .default(#p, #expr))
    });
    let inline = tool.inline.then(|| quote!(.inline()));
    quote_spanned! {span=> {
        #capture
        ::fexpr::FunctionTool::#constructor(
            #name,
            [#(#names),*],
            move |#context_param #(#params),*| #body,
        )
        #description
        #(#param_docs)*
        #(#defaults)*
        #inline
    }}
}

/// A doc comment read as a tool's description and its parameters' descriptions.
#[derive(Default)]
struct Docs {
    /// The text before the first heading.
    description: String,
    /// The items of the `# Arguments` (or `# Parameters`) list: name, text, and the doc line
    /// that names the parameter (for errors about it).
    params: Vec<(String, String, Option<Span>)>,
}

impl Docs {
    fn parse(attrs: &[Attribute]) -> Docs {
        let mut lines = Vec::new();
        for attr in attrs {
            if !attr.path().is_ident("doc") {
                continue;
            }
            if let syn::Meta::NameValue(nv) = &attr.meta {
                if let Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) = &nv.value
                {
                    for line in s.value().split('\n') {
                        lines.push((line.to_string(), Some(attr.span())));
                    }
                }
            }
        }
        Docs::from_lines(lines)
    }

    fn from_lines(lines: Vec<(String, Option<Span>)>) -> Docs {
        let mut description = Vec::new();
        let mut params: Vec<(String, String, Option<Span>)> = Vec::new();
        let mut section: Option<String> = None;
        let mut in_fence = false;
        let mut in_item = false;
        for (line, span) in &lines {
            let line = line.strip_prefix(' ').unwrap_or(line).trim_end();
            let trimmed = line.trim_start();
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                in_fence = !in_fence;
            }
            if !in_fence && trimmed.starts_with('#') && !trimmed.starts_with("#[") {
                section = Some(trimmed.trim_start_matches('#').trim().to_lowercase());
                in_item = false;
                continue;
            }
            match section.as_deref() {
                None => description.push(line),
                Some("arguments" | "parameters" | "args") => {
                    if let Some(item) = trimmed
                        .strip_prefix("* ")
                        .or_else(|| trimmed.strip_prefix("- "))
                    {
                        in_item = match list_item(item) {
                            Some((name, doc)) => {
                                params.push((name, doc, *span));
                                true
                            }
                            None => false,
                        };
                    } else if trimmed.is_empty() {
                        in_item = false;
                    } else if let (true, Some((_, doc, _))) = (in_item, params.last_mut()) {
                        doc.push(' ');
                        doc.push_str(trimmed);
                    }
                }
                Some(_) => {}
            }
        }
        Docs {
            description: description.join("\n").trim().to_string(),
            params,
        }
    }
}

/// `` `name` - text ``, `name: text`, `name – text`: a parameter and its description.
fn list_item(item: &str) -> Option<(String, String)> {
    let (name, rest) = match item.strip_prefix('`') {
        Some(quoted) => quoted.split_once('`')?,
        None => {
            let end = item
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(item.len());
            item.split_at(end)
        }
    };
    let name = name.trim();
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let rest = rest.trim_start();
    let rest = ["-", "–", "—", ":"]
        .iter()
        .find_map(|sep| rest.strip_prefix(sep))
        .unwrap_or(rest);
    Some((name.to_string(), rest.trim().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(name: &str, doc: &str) -> (String, String) {
        (name.to_string(), doc.to_string())
    }

    /// The doc comment `///` lines of `text`, as `Docs::parse` reads them.
    fn docs(text: &str) -> Docs {
        Docs::from_lines(text.lines().map(|l| (l.to_string(), None)).collect())
    }

    fn params(docs: &Docs) -> Vec<(String, String)> {
        docs.params
            .iter()
            .map(|(p, d, _)| (p.clone(), d.clone()))
            .collect()
    }

    #[test]
    fn description_is_the_text_before_the_first_heading() {
        let docs = docs(
            " Add two numbers.\n\n The sum is exact.\n # Examples\n ```\n # let x = 1;\n ```\n",
        );
        assert_eq!(docs.description, "Add two numbers.\n\nThe sum is exact.");
        assert!(params(&docs).is_empty());
    }

    #[test]
    fn arguments_list_items_in_every_common_form() {
        let docs = docs(
            " Weather.\n\n # Arguments\n\n * `city` - The city,\n   in English.\n * unit: `C` or `F`\n - `days` – How many days.\n\n # Errors\n * `x` - not a parameter\n",
        );
        assert_eq!(docs.description, "Weather.");
        assert_eq!(
            params(&docs),
            [
                param("city", "The city, in English."),
                param("unit", "`C` or `F`"),
                param("days", "How many days."),
            ]
        );
    }

    #[test]
    fn a_heading_inside_a_code_fence_is_code() {
        let docs = docs(" Run.\n ```\n # hidden line\n ```\n More.\n");
        assert_eq!(docs.description, "Run.\n```\n# hidden line\n```\nMore.");
    }

    #[test]
    fn list_items_without_a_name_are_skipped() {
        assert_eq!(list_item("`` - nothing"), None);
        assert_eq!(list_item("`a b` - two words"), None);
        assert_eq!(list_item("`n`"), Some(param("n", "")));
    }
}
