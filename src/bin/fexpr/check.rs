//! `fexpr check`: one verdict per call, against the tools given or the definitions of
//! `--tools-json` (checked, never run).

use super::*;

/// The tool definitions in the file of `--tools-json`; a file that cannot be read or
/// understood is a usage error.
pub(super) fn read_tools_json(path: &std::path::Path) -> Result<Vec<fexpr::ToolDefinition>, Stop> {
    std::fs::read_to_string(path)
        .map_err(|e| e.to_string())
        .and_then(|text| serde_json::from_str(&text).map_err(|e| format!("not valid JSON ({e})")))
        .and_then(|json| fexpr::tooldefs::from_json(&json).map_err(|e| e.message))
        .map_err(|e| Stop::Usage(format!("--tools-json {}: {e}", path.display())))
}

/// A tool of `serve --tools-json`: a definition without code. A call to it is bound, checked
/// and repaired like any other; its result is the checked call, `{"name", "kwargs"}` (the
/// arguments given, as bound), and nothing runs.
pub(super) struct CheckedCall(pub(super) fexpr::ToolDefinition);

impl fexpr::Tool for CheckedCall {
    fn definition(&self) -> &fexpr::ToolDefinition {
        &self.0
    }

    fn call(&self, args: Vec<Option<fexpr::Value>>) -> fexpr::tool::ToolFuture {
        let kwargs: serde_json::Map<String, serde_json::Value> = self
            .0
            .signature
            .fields
            .iter()
            .zip(args)
            .filter_map(|(field, arg)| arg.map(|value| (field.name.clone(), value.to_json())))
            .collect();
        let call = serde_json::json!({"name": self.0.name, "kwargs": kwargs});
        let output = fexpr::ToolOutput::new(fexpr::Value::from_json(&call));
        Box::pin(std::future::ready(Ok(output)))
    }
}

/// `fexpr check`: verdicts on stdout, ignored text on stderr, against `manager`'s tools (its
/// limits). A text without a call gets no verdict: stderr says there is nothing to check.
pub(super) fn check(
    out: &mut Output,
    manager: &ToolManager,
    options: fexpr::repair::RepairOptions,
    human: Option<Human>,
    exprs: Vec<OsString>,
) -> Result<(), Stop> {
    let mut inputs = Inputs {
        max_bytes: manager.limits().max_source_bytes,
        stdin_read: false,
    };
    // The row of an input that yields no verdict of its own.
    let failed = |error: Error| Verdict {
        name: String::new(),
        span: Span::new(0, 0),
        input: String::new(),
        args: Vec::new(),
        kwargs: Default::default(),
        valid: false,
        error: Some(error),
        repairs: Vec::new(),
    };
    for expr in exprs {
        let (text, checked) = match inputs.text(expr) {
            Ok(text) => {
                let request = manager.run(Input::model_output(text.as_str()));
                let checked = request.repair(options).check();
                (text, checked)
            }
            Err(e) => (
                String::new(),
                Checked {
                    error: Some(e),
                    ..Checked::default()
                },
            ),
        };
        for ignored in &checked.ignored {
            match human {
                Some(human) => out.note(human.show(ignored, &text) + "\n")?,
                None => out.note(serde_json::json!({ "ignored": ignored }))?,
            }
        }
        if let Some(mut e) = checked.error {
            flag_hint(&mut e);
            match human {
                Some(human) => out.row(human.show(&e, &text) + "\n")?,
                None => out.row(failed(e).to_json())?,
            }
        } else if checked.verdicts.is_empty() {
            nothing_to_run(out, human, &checked.ignored)?;
        }
        for mut verdict in checked.verdicts {
            if let Some(e) = verdict.error.as_mut() {
                flag_hint(e);
            }
            let verdict = &verdict;
            match human {
                Some(human) => out.row(human.verdict(verdict, &text))?,
                None => out.row(verdict.to_json())?,
            }
        }
        out.flush()?;
    }
    Ok(())
}
