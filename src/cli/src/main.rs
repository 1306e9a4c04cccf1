//! `tool-host`: the core engine on the command line, for profile authors and for trying a form
//! without a canister.

use clap::{Args, Parser, Subcommand};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use tool_host_core::classify::Classifier;
use tool_host_core::form::parse_form;
use tool_host_core::plan::{build_tool_plans, FormRef, CANISTER_PARAM};
use tool_host_core::read::{parse_input, read_tool_input, Canister, ReadContext};
use tool_host_core::text::principal::parse_principal;
use tool_host_core::{bus, candid_types, codec, display, packs};

mod agent;

#[derive(Parser)]
#[command(
    name = "tool-host",
    version,
    about = "Agent tools from Candid Profile resolved forms: list, lint, read inputs, classify replies."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Args)]
struct Forms {
    /// Resolved form files (JSON).
    forms: Vec<String>,
    /// A shipped pack: icrc1 or icrc2 (repeatable).
    #[arg(long = "pack")]
    packs: Vec<String>,
}

#[derive(Subcommand)]
enum Command {
    /// The tools, sorted by name, in a provider's format (docs/bus.md).
    Tools {
        #[command(flatten)]
        forms: Forms,
        /// A JSON array of {id, label, refs} for the target canisters.
        #[arg(long)]
        canisters: Option<String>,
        /// mcp, openai, openai_responses, anthropic, markdown or jsonschema.
        #[arg(long, default_value = "mcp")]
        format: String,
    },
    /// The tools a set of forms gives, the methods it skips, the declarations a provider would
    /// refuse and the pairs of tools a model could not tell apart (warnings).
    Lint {
        #[command(flatten)]
        forms: Forms,
    },
    /// Reads one tool input: the Candid argument, the intent's identity and its preview.
    Read {
        #[command(flatten)]
        forms: Forms,
        #[arg(long)]
        tool: String,
        /// The tool input as a JSON object.
        #[arg(long)]
        input: String,
        /// The canister's refs as JSON, e.g. {"query:icrc1_decimals": 8}.
        #[arg(long)]
        refs: Option<String>,
        /// A JSON array of {id, label, refs}; without it the input's canister_id is used with --refs.
        #[arg(long)]
        canisters: Option<String>,
        /// The clock in ns since the Unix epoch (default: this machine's).
        #[arg(long)]
        now: Option<u64>,
        /// The principal on whose behalf the call would be made.
        #[arg(long)]
        owner: Option<String>,
    },
    /// Classifies a reply (Candid text) by the method's outcome keys.
    Classify {
        #[command(flatten)]
        forms: Forms,
        #[arg(long)]
        method: String,
        #[arg(long)]
        reply: String,
    },
    /// The agent method: prepare one bounded model request, render it for a provider, and
    /// check the answer (docs/agent.md).
    Agent {
        #[command(subcommand)]
        command: agent::AgentCommand,
    },
}

/// A failure: what to print (JSON) and the exit code.
pub(crate) struct Fail(pub(crate) Value, pub(crate) u8);

pub(crate) fn usage(msg: impl Into<String>) -> Fail {
    Fail(json!({ "error": msg.into() }), 2)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(Printed::Value(v)) => {
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            ExitCode::SUCCESS
        }
        Ok(Printed::Json(v)) => {
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            ExitCode::SUCCESS
        }
        Ok(Printed::Text(t)) => {
            println!("{t}");
            ExitCode::SUCCESS
        }
        Err(Fail(v, code)) => {
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            ExitCode::from(code)
        }
    }
}

fn load_forms(f: &Forms) -> Result<Vec<FormRef>, Fail> {
    if f.forms.is_empty() && f.packs.is_empty() {
        return Err(usage("give at least one form file or --pack NAME"));
    }
    let mut out = vec![];
    let mut problems = vec![];
    for name in &f.packs {
        match packs::pack(name) {
            Some(fr) => out.push(fr),
            None => return Err(usage(format!("no pack '{name}' (packs: icrc1, icrc2)"))),
        }
    }
    for path in &f.forms {
        let bytes = std::fs::read(path).map_err(|e| usage(format!("{path}: {e}")))?;
        match parse_form(&bytes) {
            Ok(form) => {
                let id = form.name.clone().unwrap_or_else(|| {
                    std::path::Path::new(path)
                        .file_stem()
                        .map(|s| s.to_string_lossy().to_string())
                        .unwrap_or_else(|| path.clone())
                });
                out.push(FormRef {
                    id,
                    form: Arc::new(form),
                });
            }
            Err(ps) => {
                for p in ps {
                    problems.push(json!({ "form": path, "path": p.path, "reason": p.reason }));
                }
            }
        }
    }
    if !problems.is_empty() {
        return Err(Fail(json!({ "problems": problems }), 1));
    }
    Ok(out)
}

fn parse_canisters(text: &str) -> Result<Vec<Canister>, Fail> {
    let v: Value =
        serde_json::from_str(text).map_err(|e| usage(format!("canisters: not JSON: {e}")))?;
    let Value::Array(items) = v else {
        return Err(usage("canisters: a JSON array of {id, label, refs}"));
    };
    let mut out = vec![];
    for (i, item) in items.iter().enumerate() {
        let id = item
            .get("id")
            .and_then(Value::as_str)
            .ok_or_else(|| usage(format!("canisters[{i}].id is missing")))?;
        let id =
            parse_principal(id).map_err(|f| usage(format!("canisters[{i}].id: {}", f.message)))?;
        let label = item
            .get("label")
            .and_then(Value::as_str)
            .map(str::to_string);
        let refs = match item.get("refs") {
            Some(Value::Object(m)) => m.clone().into_iter().collect(),
            None => BTreeMap::new(),
            Some(_) => return Err(usage(format!("canisters[{i}].refs is an object"))),
        };
        let forms = item.get("forms").and_then(Value::as_array).map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        });
        out.push(Canister {
            id,
            label,
            refs,
            forms,
        });
    }
    Ok(out)
}

/// `tools --format F`: the host's declarations rendered as the bus renders them.
fn tools(forms: &Forms, canisters: Option<&str>, format: &str) -> Result<String, Fail> {
    let format = bus::ToolFormat::from_name(format).ok_or_else(|| {
        let names: Vec<&str> = bus::ToolFormat::ALL.iter().map(|f| f.as_str()).collect();
        usage(format!(
            "no format '{format}' (formats: {})",
            names.join(", ")
        ))
    })?;
    let forms = load_forms(forms)?;
    let canisters = match canisters {
        Some(c) => parse_canisters(&read_file_or_text(c)?)?,
        None => vec![],
    };
    let plans = build_tool_plans(&forms);
    let decls = bus::host_decls(&plans, &canisters);
    let refs: Vec<&bus::ToolDecl> = decls.iter().collect();
    Ok(bus::render(&refs, format))
}

fn read_file_or_text(arg: &str) -> Result<String, Fail> {
    if arg.trim_start().starts_with('[') || arg.trim_start().starts_with('{') {
        Ok(arg.to_string())
    } else {
        std::fs::read_to_string(arg).map_err(|e| usage(format!("{arg}: {e}")))
    }
}

/// What a command prints: the agent method's JSON/0 keeps its members' order (serde_json's
/// `Value` sorts them).
enum Printed {
    Value(Value),
    Json(tool_host_core::agent::Json),
    /// Already rendered (a provider format: JSON text or Markdown).
    Text(String),
}

fn run(cmd: Command) -> Result<Printed, Fail> {
    match cmd {
        Command::Agent { command } => agent::run(command).map(Printed::Json),
        Command::Tools {
            forms,
            canisters,
            format,
        } => tools(&forms, canisters.as_deref(), &format).map(Printed::Text),
        other => run_forms(other).map(Printed::Value),
    }
}

fn run_forms(cmd: Command) -> Result<Value, Fail> {
    match cmd {
        Command::Agent { .. } => Err(usage("the agent commands are run by agent::run")),
        Command::Tools { .. } => Err(usage("the tools command is run by tools()")),
        Command::Lint { forms } => {
            let forms = load_forms(&forms)?;
            let plans = build_tool_plans(&forms);
            let decls = bus::host_decls(&plans, &[]);
            // The review `register_form` runs, every tool here being new.
            let review = bus::review(&decls, &[]);
            // The labels a gate acts on, as `describe_tools` gives them: by name.
            let mut destructive = bus::destructive(&decls);
            destructive.sort_unstable();
            let mut unannotated = bus::unannotated(&decls);
            unannotated.sort_unstable();
            Ok(json!({
                "tools": plans.tool_names(),
                "skipped": plans.skipped,
                "declaration_issues": review.issues,
                "overlaps": review.overlaps,
                "more_overlaps": review.more_overlaps,
                "destructive": destructive,
                "unannotated": unannotated,
            }))
        }
        Command::Read {
            forms,
            tool,
            input,
            refs,
            canisters,
            now,
            owner,
        } => {
            let forms = load_forms(&forms)?;
            let plans = build_tool_plans(&forms);
            let plan = plans.plans.get(&tool).ok_or_else(|| {
                usage(format!(
                    "no tool '{tool}' (tools: {})",
                    plans.tool_names().join(", ")
                ))
            })?;
            // The canister's bound and reading: over MAX_INPUT_BYTES is refused whole, unread.
            let input: Value =
                parse_input(&input).map_err(|issues| Fail(json!({ "issues": issues }), 1))?;
            let refs: BTreeMap<String, Value> = match refs {
                Some(r) => match serde_json::from_str::<Value>(&r) {
                    Ok(Value::Object(m)) => m.into_iter().collect(),
                    _ => return Err(usage("--refs is a JSON object")),
                },
                None => BTreeMap::new(),
            };
            let canisters = match canisters {
                Some(c) => parse_canisters(&read_file_or_text(&c)?)?,
                None => match input
                    .get(CANISTER_PARAM)
                    .and_then(Value::as_str)
                    .map(parse_principal)
                {
                    Some(Ok(id)) => vec![Canister {
                        id,
                        label: None,
                        refs,
                        forms: None,
                    }],
                    _ => vec![],
                },
            };
            let owner = match owner {
                Some(o) => Some(
                    parse_principal(&o).map_err(|f| usage(format!("--owner: {}", f.message)))?,
                ),
                None => None,
            };
            let now = now.unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(0)
            });
            let ctx = ReadContext {
                canisters: &canisters,
                now_ns: Some(now),
                owner,
                names: None,
                memo: None,
            };
            match read_tool_input(plan, &input, &ctx) {
                Ok(out) => {
                    let bytes = codec::encode_args(plan, &out.args)
                        .map_err(|e| Fail(json!({ "error": e }), 1))?;
                    let canister = canisters
                        .iter()
                        .find(|c| c.id == out.canister)
                        .cloned()
                        .unwrap_or(Canister {
                            id: out.canister,
                            label: None,
                            refs: BTreeMap::new(),
                            forms: None,
                        });
                    let preview = display::preview(plan, &out, &canister, &bytes, "cli");
                    Ok(
                        json!({ "value": out.args.to_string(), "identity": out.identity, "preview": preview }),
                    )
                }
                Err(issues) => Err(Fail(json!({ "issues": issues }), 1)),
            }
        }
        Command::Classify {
            forms,
            method,
            reply,
        } => {
            let forms = load_forms(&forms)?;
            let (fr, m) = forms
                .iter()
                .find_map(|fr| fr.form.methods.get(&method).map(|m| (fr, m)))
                .ok_or_else(|| usage(format!("no method '{method}' in the forms")))?;
            let classifier =
                Classifier::new(&fr.form, m).map_err(|e| Fail(json!({ "error": e }), 1))?;
            let args = candid_parser::parse_idl_args(&reply)
                .map_err(|e| usage(format!("--reply is not Candid text: {e}")))?;
            let env = candid_types::type_env(&fr.form);
            let types = candid_types::to_types(&m.results);
            let typed = args.annotate_types(true, &env, &types).map_err(|e| {
                Fail(
                    json!({ "error": format!("the reply does not fit {method}'s results: {e}") }),
                    1,
                )
            })?;
            let c = classifier.classify(typed.args.first());
            Ok(json!({ "class": c.class, "path": c.path, "key": c.key }))
        }
    }
}
