//! `tool-host agent ...`: the core's agent method on files. The skill reader is here, not in
//! the core: the core reads no files.

use crate::{usage, Fail};
use clap::Subcommand;
use serde_json::json;
use std::path::{Path, PathBuf};
use tool_host_core::agent::json::{parse, DOCUMENT};
use tool_host_core::agent::prepare::{self, Skill, SkillFile};
use tool_host_core::agent::provider::{self, Api};
use tool_host_core::agent::{self as method, AgentError, Json, PreparedAgent};

/// Entries a skill directory may hold, directories included.
const MAX_SKILL_ENTRIES: usize = 4096;
/// UTF-8 bytes of a file's path inside its skill.
const MAX_SKILL_PATH: usize = 4096;

#[derive(Subcommand)]
pub enum AgentCommand {
    /// Prepares a request: { request: { prompt, response_schema? }, session? }.
    Prepare {
        /// The input: { instructions, guidance?, response_schema?, session? } (JSON).
        #[arg(long)]
        input: PathBuf,
        /// A skill directory (its name is the directory's name; it holds SKILL.md). Repeatable.
        #[arg(long = "skill")]
        skills: Vec<PathBuf>,
    },
    /// The provider request body for a prepared request.
    Request {
        #[arg(long)]
        prepared: PathBuf,
        #[arg(long)]
        model: String,
        /// chat-completions (default) or responses.
        #[arg(long)]
        api: Option<String>,
        /// prompt (default) or json-schema.
        #[arg(long = "structured-output")]
        structured_output: Option<String>,
        /// 1 to 65536 (default 4096).
        #[arg(long = "max-completion-tokens")]
        max_completion_tokens: Option<i64>,
    },
    /// Interprets a provider's reply (or the transport's facts) for a prepared request.
    Finish {
        #[arg(long)]
        prepared: PathBuf,
        /// The provider's decoded reply body (JSON).
        #[arg(
            long,
            conflicts_with = "transport",
            required_unless_present = "transport"
        )]
        response: Option<PathBuf>,
        /// The reply's HTTP status (default 200).
        #[arg(long, default_value_t = 200)]
        status: u16,
        /// The wire API of the reply: chat-completions (default) or responses.
        #[arg(long)]
        api: Option<String>,
        /// The transport's facts instead: { outcome: "done", output: { text, stop } }.
        #[arg(long)]
        transport: Option<PathBuf>,
    },
    /// Checks a response schema against the profile and prints its projection.
    CheckSchema { schema: PathBuf },
    /// Checks a result envelope, with the schema it was requested with.
    CheckResult {
        #[arg(long)]
        result: PathBuf,
        #[arg(long)]
        schema: Option<PathBuf>,
    },
}

fn fail(e: AgentError) -> Fail {
    Fail(json!({ "error": e }), 1)
}

/// Reads a JSON/0 file, refusing one over the document bound before reading it.
fn read_json(path: &Path, place: &str) -> Result<Json, Fail> {
    let shown = path.display();
    let len = std::fs::metadata(path)
        .map_err(|e| usage(format!("{shown}: {e}")))?
        .len();
    if len > DOCUMENT.max_bytes as u64 {
        return Err(fail(AgentError::exhausted(
            place,
            format!(
                "{shown} is {len} bytes, over the {} a document may have",
                DOCUMENT.max_bytes
            ),
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| usage(format!("{shown}: {e}")))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| fail(AgentError::input(place, format!("{shown} is not UTF-8"))))?;
    parse(&text, &DOCUMENT, place).map_err(fail)
}

/// A provider's reply body: a malformed one fails as a bad result, with its position but none of
/// its text (a parse message may quote a member's name).
fn read_reply(path: &Path) -> Result<Json, Fail> {
    read_json(path, "response").map_err(|Fail(v, code)| {
        let message = v["error"]["message"].as_str().unwrap_or_default();
        let at = message
            .rfind(" at line ")
            .map(|i| message[i..].to_string())
            .unwrap_or_default();
        let kind = if v["error"]["code"] == "RESOURCE_EXHAUSTED" {
            AgentError::exhausted(
                "response",
                format!("the reply body passes a JSON/0 bound{at}"),
            )
        } else {
            AgentError::result(
                "response",
                format!("the reply body is not JSON/0{at}; it is not repeated here"),
            )
        };
        if code == 2 {
            Fail(v, code)
        } else {
            fail(kind)
        }
    })
}

fn api(name: Option<&str>) -> Result<Api, Fail> {
    match name {
        None => Ok(Api::ChatCompletions),
        Some(a) => Api::parse(a).ok_or_else(|| usage("--api is chat-completions or responses")),
    }
}

/// Reads a skill directory: real directories and regular UTF-8 files only, no symlink
/// anywhere in its path or below it, bounded in entries, path length and bytes. `budget` is the
/// content bytes left for every skill read so far: no file is read once it would pass it.
fn read_skill(dir: &Path, budget: &mut u64) -> Result<Skill, Fail> {
    let shown = dir.display().to_string();
    let place = format!("--skill {shown}");
    let refuse = |m: String| fail(AgentError::input(place.clone(), m));
    let absolute = std::path::absolute(dir).map_err(|e| usage(format!("{shown}: {e}")))?;
    for ancestor in absolute.ancestors() {
        let meta = std::fs::symlink_metadata(ancestor)
            .map_err(|e| usage(format!("{}: {e}", ancestor.display())))?;
        if meta.file_type().is_symlink() {
            return Err(refuse(format!(
                "{} is a symlink; a skill's path holds real directories only",
                ancestor.display()
            )));
        }
    }
    if !std::fs::symlink_metadata(dir)
        .map_err(|e| usage(format!("{shown}: {e}")))?
        .is_dir()
    {
        return Err(refuse("a skill is a directory".into()));
    }
    let name = dir
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| refuse("a skill directory's name is its skill name".into()))?
        .to_string();
    let mut files = Vec::new();
    let mut entries = 0usize;
    let mut stack = vec![(dir.to_path_buf(), String::new())];
    while let Some((path, rel)) = stack.pop() {
        let list =
            std::fs::read_dir(&path).map_err(|e| usage(format!("{}: {e}", path.display())))?;
        let mut list = list
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| usage(format!("{}: {e}", path.display())))?;
        list.sort_by_key(|e| e.file_name());
        for entry in list {
            entries += 1;
            if entries > MAX_SKILL_ENTRIES {
                return Err(fail(AgentError::exhausted(
                    place.clone(),
                    format!("over {MAX_SKILL_ENTRIES} entries"),
                )));
            }
            let file_name = entry.file_name();
            let Some(part) = file_name.to_str() else {
                return Err(refuse(format!(
                    "{}: a name that is not UTF-8",
                    entry.path().display()
                )));
            };
            let child = if rel.is_empty() {
                part.to_string()
            } else {
                format!("{rel}/{part}")
            };
            if child.len() > MAX_SKILL_PATH {
                return Err(fail(AgentError::exhausted(
                    place.clone(),
                    format!("a path of over {MAX_SKILL_PATH} bytes"),
                )));
            }
            let kind = entry
                .file_type()
                .map_err(|e| usage(format!("{child}: {e}")))?;
            if kind.is_symlink() {
                return Err(refuse(format!(
                    "{child} is a symlink; a skill holds real files only"
                )));
            } else if kind.is_dir() {
                stack.push((entry.path(), child));
            } else if kind.is_file() {
                let len = entry
                    .metadata()
                    .map_err(|e| usage(format!("{child}: {e}")))?
                    .len();
                if len > *budget {
                    return Err(fail(AgentError::exhausted(
                        format!("{place} ({child})"),
                        format!(
                            "{len} bytes: the skills' text would pass the {} bytes of content a request may have",
                            prepare::MAX_CONTENT_BYTES
                        ),
                    )));
                }
                *budget -= len;
                let bytes =
                    std::fs::read(entry.path()).map_err(|e| usage(format!("{child}: {e}")))?;
                let text = String::from_utf8(bytes)
                    .map_err(|_| refuse(format!("{child} is not UTF-8 text")))?;
                files.push(SkillFile { path: child, text });
            } else {
                return Err(refuse(format!("{child} is not a regular file")));
            }
        }
    }
    Ok(Skill { name, files })
}

/// The core places a skill by its index (`skills[1].files[2].path`); on the command line the
/// directory and the file say it better.
fn place_skill(mut e: AgentError, dirs: &[PathBuf], skills: &[Skill]) -> AgentError {
    let Some(rest) = e.place.strip_prefix("skills[") else {
        return e;
    };
    let Some((i, rest)) = rest.split_once(']') else {
        return e;
    };
    let Ok(i) = i.parse::<usize>() else { return e };
    let (Some(dir), Some(skill)) = (dirs.get(i), skills.get(i)) else {
        return e;
    };
    let file = rest
        .strip_prefix(".files[")
        .and_then(|r| r.split_once(']'))
        .and_then(|(j, _)| j.parse::<usize>().ok())
        .and_then(|j| skill.files.get(j));
    e.place = match file {
        Some(f) => format!("--skill {} ({})", dir.display(), f.path),
        None => format!("--skill {}", dir.display()),
    };
    e
}

pub fn run(cmd: AgentCommand) -> Result<Json, Fail> {
    match cmd {
        AgentCommand::Prepare { input, skills } => {
            let input = read_json(&input, "input")?;
            let input = prepare::read_input(&input).map_err(fail)?;
            let mut budget = prepare::MAX_CONTENT_BYTES as u64;
            let read = skills
                .iter()
                .map(|d| read_skill(d, &mut budget))
                .collect::<Result<Vec<_>, _>>()?;
            let prepared = prepare::prepare(&input, read.clone())
                .map_err(|e| fail(place_skill(e, &skills, &read)))?;
            Ok(prepared.to_json())
        }
        AgentCommand::Request {
            prepared,
            model,
            api,
            structured_output,
            max_completion_tokens,
        } => {
            let prepared = read_json(&prepared, "prepared")?;
            let mut settings = vec![("model", Json::str(model))];
            if let Some(a) = api {
                settings.push(("api", Json::str(a)));
            }
            if let Some(s) = structured_output {
                settings.push(("structured_output", Json::str(s)));
            }
            if let Some(n) = max_completion_tokens {
                settings.push(("max_completion_tokens", Json::int(n)));
            }
            let settings = provider::read_settings(&Json::object(settings)).map_err(fail)?;
            provider::request_body(&prepared, &settings).map_err(fail)
        }
        AgentCommand::Finish {
            prepared,
            response,
            status,
            api: api_name,
            transport,
        } => {
            let prepared =
                PreparedAgent::from_json(&read_json(&prepared, "prepared")?).map_err(fail)?;
            let facts = match (response, transport) {
                (Some(r), _) => {
                    let api = api(api_name.as_deref())?;
                    if status != 200 {
                        // The status decides before the body is read: nothing of it can be
                        // repeated.
                        let empty = Json::Object(vec![]);
                        return Err(match provider::transport_result(api, status, &empty) {
                            Err(e) => fail(e),
                            Ok(_) => usage("a status other than 200 is refused"),
                        });
                    }
                    let body = read_reply(&r)?;
                    provider::transport_result(api, status, &body).map_err(fail)?
                }
                (None, Some(t)) => {
                    method::finish::read_transport(&read_json(&t, "transport")?).map_err(fail)?
                }
                (None, None) => return Err(usage("give --response FILE or --transport FILE")),
            };
            Ok(method::finish::finish(&prepared, &facts)
                .map_err(fail)?
                .to_json())
        }
        AgentCommand::CheckSchema { schema } => {
            let s = read_json(&schema, "response_schema")?;
            let projected = method::project_response_schema(&s).map_err(fail)?;
            Ok(Json::object(vec![
                ("ok", Json::Bool(true)),
                ("projected", projected),
            ]))
        }
        AgentCommand::CheckResult { result, schema } => {
            let r = read_json(&result, "result")?;
            let s = match schema {
                Some(p) => Some(read_json(&p, "response_schema")?),
                None => None,
            };
            let checked = method::check_agent_result(&r, s.as_ref()).map_err(fail)?;
            Ok(checked.to_json())
        }
    }
}
