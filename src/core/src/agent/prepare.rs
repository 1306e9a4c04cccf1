//! Preparing one bounded request: the caller's instructions, its guidance and the skills it
//! selected, rendered into one prompt, with an optional response schema and session request
//! kept beside it. Everything is checked and bounded; nothing is cut to fit.

use super::error::{join, AgentError};
use super::json::{check_value, quote, Json, DOCUMENT};
use super::schema::{self, compile};
use std::collections::BTreeSet;

/// Skills plus guidance items.
pub const MAX_GROUPS: usize = 64;
/// Skill files plus guidance items.
pub const MAX_ITEMS: usize = 1024;
/// UTF-8 bytes of the instructions, the guidance texts and the skill files' texts together.
pub const MAX_CONTENT_BYTES: usize = 1 << 20;
/// UTF-8 bytes of the rendered prompt, escaping, labels, paths and schema text included.
pub const MAX_PROMPT_BYTES: usize = 1 << 20;
pub const MAX_SKILL_NAME: usize = 64;
/// Every skill holds this file, at its top.
pub const SKILL_FILE: &str = "SKILL.md";

#[derive(Clone, Debug, PartialEq)]
pub struct Guidance {
    pub label: String,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SkillFile {
    pub path: String,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Skill {
    pub name: String,
    pub files: Vec<SkillFile>,
}

/// Native state handling a compatible implementation may be asked for. It grants nothing and
/// never enters the prompt.
#[derive(Clone, Debug, PartialEq)]
pub enum SessionRequest {
    /// `lifetime_run`: bound the state to the active run.
    Retain { lifetime_run: bool },
    /// An opaque UUID reference to restore.
    Restore(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct AgentInput {
    pub instructions: String,
    pub guidance: Vec<Guidance>,
    pub response_schema: Option<Json>,
    pub session: Option<SessionRequest>,
}

/// The prepared value: plain data, to inspect, store or send; `finish_agent` checks it again.
/// It authorizes nothing.
#[derive(Clone, Debug, PartialEq)]
pub struct PreparedAgent {
    pub prompt: String,
    pub response_schema: Option<Json>,
    pub session: Option<SessionRequest>,
}

/// Prepares a request from `input` (an `AgentInput` object) and `skills` (an array of
/// `{ name, files: [{ path, text }] }`, or none).
pub fn prepare_agent(input: &Json, skills: Option<&Json>) -> Result<PreparedAgent, AgentError> {
    check_value(input, &DOCUMENT, "")?;
    if let Some(s) = skills {
        check_value(s, &DOCUMENT, "skills")?;
    }
    let input = read_input(input)?;
    let skills = match skills {
        None => Vec::new(),
        Some(s) => read_skills(s)?,
    };
    prepare(&input, skills)
}

/// Prepares a request from values already read; the same checks apply.
pub fn prepare(input: &AgentInput, mut skills: Vec<Skill>) -> Result<PreparedAgent, AgentError> {
    check_input(input)?;
    check_skills(&mut skills)?;
    let groups = skills.len() + input.guidance.len();
    if groups > MAX_GROUPS {
        return Err(AgentError::exhausted(
            "",
            format!("{groups} skills and guidance items, over the {MAX_GROUPS} allowed"),
        ));
    }
    let items = skills.iter().map(|s| s.files.len()).sum::<usize>() + input.guidance.len();
    if items > MAX_ITEMS {
        return Err(AgentError::exhausted(
            "",
            format!("{items} skill files and guidance items, over the {MAX_ITEMS} allowed"),
        ));
    }
    let content = input.instructions.len()
        + input.guidance.iter().map(|g| g.text.len()).sum::<usize>()
        + skills
            .iter()
            .flat_map(|s| &s.files)
            .map(|f| f.text.len())
            .sum::<usize>();
    if content > MAX_CONTENT_BYTES {
        return Err(AgentError::exhausted(
            "",
            format!("{content} bytes of instructions, guidance and skill text, over the {MAX_CONTENT_BYTES} allowed"),
        ));
    }
    let prompt = render(input, &skills);
    // Only the instructions are written as they are: they alone could hold an answer section.
    check_prompt(&prompt, input.response_schema.as_ref(), "").map_err(|e| {
        AgentError::input(
            "instructions",
            format!("{} (the instructions hold it)", e.message),
        )
    })?;
    if prompt.len() > MAX_PROMPT_BYTES {
        return Err(AgentError::exhausted(
            "",
            format!(
                "the rendered prompt is {} bytes, over the {MAX_PROMPT_BYTES} allowed",
                prompt.len()
            ),
        ));
    }
    Ok(PreparedAgent {
        prompt,
        response_schema: input.response_schema.clone(),
        session: input.session.clone(),
    })
}

/// The prompt: the instructions as written, then each skill file and each guidance item as one
/// line of JSON (so no text can pose as a heading or another item), then the answer's schema.
fn render(input: &AgentInput, skills: &[Skill]) -> String {
    let mut out = String::with_capacity(input.instructions.len() + 256);
    out.push_str(&input.instructions);
    if !skills.is_empty() {
        section(&mut out, "Skills");
        out.push_str("Each line is one file of a selected skill: its skill name, its path and its text, as JSON.\n");
        for s in skills {
            for f in &s.files {
                out.push_str(&format!(
                    "{{\"skill\":{},\"path\":{},\"text\":{}}}\n",
                    quote(&s.name),
                    quote(&f.path),
                    quote(&f.text)
                ));
            }
        }
    }
    if !input.guidance.is_empty() {
        section(&mut out, "Guidance");
        out.push_str("Each line is one item of guidance, in the order given: its label and its text, as JSON.\n");
        for g in &input.guidance {
            out.push_str(&format!(
                "{{\"label\":{},\"text\":{}}}\n",
                quote(&g.label),
                quote(&g.text)
            ));
        }
    }
    if let Some(s) = &input.response_schema {
        blank_line(&mut out);
        out.push_str(&answer_section(s));
    }
    out
}

/// The opening of the answer's section: a prompt holding it asks for a schema.
const ANSWER_LEAD: &str =
    "\n\n# Answer\n\nAnswer with one JSON value that matches the JSON Schema below";

/// The prompt's last section, for `schema`.
fn answer_section(schema: &Json) -> String {
    format!(
        "# Answer\n\n{}, and nothing before or after it (one ```json fence around it is accepted). Every property is required; use null only where the schema allows it.\n{}\n",
        &ANSWER_LEAD[12..],
        schema::project(schema).canonical()
    )
}

/// What ties a prompt to the schema beside it: with a schema, the prompt ends with that
/// schema's answer section; without one, it holds no answer section. A schema swapped or
/// dropped on the way would let an answer through unchecked, or checked by another schema.
fn check_prompt(prompt: &str, schema: Option<&Json>, place: &str) -> Result<(), AgentError> {
    match schema {
        Some(s) if !prompt.ends_with(&format!("\n\n{}", answer_section(s))) => Err(AgentError::input(
            join(place, "response_schema"),
            "not the schema the prompt asks for: the prompt ends with its answer section",
        )),
        None if prompt.contains(ANSWER_LEAD) => Err(AgentError::input(
            join(place, "prompt"),
            "the prompt holds an answer section, but there is no response schema to check the answer by",
        )),
        _ => Ok(()),
    }
}

/// Ends `out` with a blank line, whatever it ended with.
fn blank_line(out: &mut String) {
    out.push_str(if out.ends_with('\n') { "\n" } else { "\n\n" });
}

fn section(out: &mut String, heading: &str) {
    blank_line(out);
    out.push_str("# ");
    out.push_str(heading);
    out.push_str("\n\n");
}

fn closed(v: &Json, keys: &[&str], what: &str, place: &str) -> Result<(), AgentError> {
    let Some(m) = v.members() else {
        return Err(AgentError::input(
            place,
            format!("{what} is an object, not {}", v.kind()),
        ));
    };
    for (k, _) in m {
        if !keys.contains(&k.as_str()) {
            return Err(AgentError::input(
                join(place, k),
                format!("not a member of {what} (it has {})", keys.join(", ")),
            ));
        }
    }
    Ok(())
}

fn text(v: &Json, key: &str, place: &str) -> Result<String, AgentError> {
    match v.get(key) {
        Some(Json::String(s)) => Ok(s.clone()),
        Some(other) => Err(AgentError::input(
            join(place, key),
            format!("a string, not {}", other.kind()),
        )),
        None => Err(AgentError::input(join(place, key), "missing")),
    }
}

fn array<'a>(v: &'a Json, key: &str, place: &str) -> Result<&'a [Json], AgentError> {
    match v.get(key) {
        Some(Json::Array(a)) => Ok(a),
        Some(other) => Err(AgentError::input(
            join(place, key),
            format!("an array, not {}", other.kind()),
        )),
        None => Err(AgentError::input(join(place, key), "missing")),
    }
}

pub fn read_input(v: &Json) -> Result<AgentInput, AgentError> {
    closed(
        v,
        &["instructions", "guidance", "response_schema", "session"],
        "the input",
        "",
    )?;
    let instructions = text(v, "instructions", "")?;
    let guidance = match v.get("guidance") {
        None => Vec::new(),
        Some(_) => {
            let items = array(v, "guidance", "")?;
            // Bounded before anything is copied: the group bound would refuse it anyway.
            if items.len() > MAX_GROUPS {
                return Err(AgentError::exhausted(
                    "guidance",
                    format!(
                        "{} items, over the {MAX_GROUPS} groups allowed",
                        items.len()
                    ),
                ));
            }
            items
                .iter()
                .enumerate()
                .map(|(i, g)| {
                    let at = format!("guidance[{i}]");
                    closed(g, &["label", "text"], "a guidance item", &at)?;
                    Ok(Guidance {
                        label: text(g, "label", &at)?,
                        text: text(g, "text", &at)?,
                    })
                })
                .collect::<Result<_, AgentError>>()?
        }
    };
    let session = match v.get("session") {
        None => None,
        Some(s) => Some(read_session(s, "session")?),
    };
    Ok(AgentInput {
        instructions,
        guidance,
        response_schema: v.get("response_schema").cloned(),
        session,
    })
}

fn read_session(v: &Json, place: &str) -> Result<SessionRequest, AgentError> {
    closed(
        v,
        &["retain", "lifetime", "restore"],
        "a session request",
        place,
    )?;
    match (v.get("retain"), v.get("restore")) {
        (Some(_), Some(_)) => Err(AgentError::input(place, "retain or restore, not both")),
        (Some(Json::Bool(true)), None) => match v.get("lifetime") {
            None => Ok(SessionRequest::Retain {
                lifetime_run: false,
            }),
            Some(Json::String(l)) if l == "run" => {
                Ok(SessionRequest::Retain { lifetime_run: true })
            }
            Some(_) => Err(AgentError::input(
                join(place, "lifetime"),
                "the only lifetime is \"run\"",
            )),
        },
        (Some(_), None) => Err(AgentError::input(
            join(place, "retain"),
            "retain is true when given",
        )),
        (None, Some(r)) => {
            if v.get("lifetime").is_some() {
                return Err(AgentError::input(
                    join(place, "lifetime"),
                    "a restored session inherits its lifetime",
                ));
            }
            match r.as_str() {
                Some(u) if is_uuid(u) => Ok(SessionRequest::Restore(u.to_string())),
                _ => Err(AgentError::input(
                    join(place, "restore"),
                    "a UUID, as 01234567-89ab-cdef-0123-456789abcdef",
                )),
            }
        }
        (None, None) => Err(AgentError::input(
            place,
            "{ retain: true } or { restore: <UUID> }",
        )),
    }
}

/// A UUID in its textual form (8-4-4-4-12 hexadecimal digits, either case).
pub fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

pub fn read_skills(v: &Json) -> Result<Vec<Skill>, AgentError> {
    let Json::Array(items) = v else {
        return Err(AgentError::input(
            "skills",
            format!("an array of skills, not {}", v.kind()),
        ));
    };
    if items.len() > MAX_GROUPS {
        return Err(AgentError::exhausted(
            "skills",
            format!(
                "{} skills, over the {MAX_GROUPS} groups allowed",
                items.len()
            ),
        ));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let at = format!("skills[{i}]");
            closed(s, &["name", "files"], "a skill", &at)?;
            let name = text(s, "name", &at)?;
            let files = array(s, "files", &at)?;
            if files.len() > MAX_ITEMS {
                return Err(AgentError::exhausted(
                    join(&at, "files"),
                    format!("{} files, over the {MAX_ITEMS} items allowed", files.len()),
                ));
            }
            let files = files
                .iter()
                .enumerate()
                .map(|(j, f)| {
                    let at = format!("{at}.files[{j}]");
                    closed(f, &["path", "text"], "a skill file", &at)?;
                    Ok(SkillFile {
                        path: text(f, "path", &at)?,
                        text: text(f, "text", &at)?,
                    })
                })
                .collect::<Result<_, AgentError>>()?;
            Ok(Skill { name, files })
        })
        .collect()
}

fn check_input(input: &AgentInput) -> Result<(), AgentError> {
    if input.instructions.is_empty() {
        return Err(AgentError::input(
            "instructions",
            "the instructions are not empty",
        ));
    }
    if input.guidance.len() > MAX_GROUPS {
        return Err(AgentError::exhausted(
            "guidance",
            format!(
                "{} items, over the {MAX_GROUPS} groups allowed",
                input.guidance.len()
            ),
        ));
    }
    let mut labels = BTreeSet::new();
    for (i, g) in input.guidance.iter().enumerate() {
        let at = format!("guidance[{i}].label");
        if g.label.is_empty() {
            return Err(AgentError::input(at, "a label is not empty"));
        }
        if !labels.insert(g.label.as_str()) {
            return Err(AgentError::input(
                at,
                format!("the label \"{}\" is used twice", g.label),
            ));
        }
    }
    if let Some(s) = &input.response_schema {
        compile(s, "response_schema")?;
    }
    if let Some(SessionRequest::Restore(u)) = &input.session {
        if !is_uuid(u) {
            return Err(AgentError::input("session.restore", "a UUID"));
        }
    }
    Ok(())
}

/// Lowercase letters and digits in hyphen-separated runs, at most 64 characters.
pub fn is_skill_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_SKILL_NAME
        && s.split('-').all(|run| {
            !run.is_empty()
                && run
                    .bytes()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
}

/// Why `path` is not a skill file path, if it is not: relative, `/`-separated, no empty, `.`
/// or `..` component, no backslash, no NUL.
pub fn path_fault(path: &str) -> Option<&'static str> {
    if path.contains('\0') {
        Some("a path holds no NUL")
    } else if path.contains('\\') {
        Some("a path holds no backslash (components are separated by /)")
    } else if path.starts_with('/') {
        Some("a path is relative to its skill")
    } else if path.split('/').any(str::is_empty) {
        Some("a path has no empty component")
    } else if path.split('/').any(|c| c == "." || c == "..") {
        Some("a path has no . or .. component")
    } else {
        None
    }
}

fn check_skills(skills: &mut [Skill]) -> Result<(), AgentError> {
    // Checked in the order given, so a place names what the caller sent; then sorted.
    for (i, s) in skills.iter().enumerate() {
        let at = format!("skills[{i}]");
        if !is_skill_name(&s.name) {
            return Err(AgentError::input(
                join(&at, "name"),
                format!("a skill name is lowercase letters and digits with separating hyphens, at most {MAX_SKILL_NAME} characters"),
            ));
        }
        let mut paths = BTreeSet::new();
        for (j, f) in s.files.iter().enumerate() {
            let at = format!("{at}.files[{j}].path");
            if let Some(why) = path_fault(&f.path) {
                return Err(AgentError::input(at, why));
            }
            if !paths.insert(f.path.as_str()) {
                return Err(AgentError::input(
                    at,
                    format!("\"{}\" is listed twice", f.path),
                ));
            }
        }
        if !paths.contains(SKILL_FILE) {
            return Err(AgentError::input(
                join(&at, "files"),
                format!("every skill has {SKILL_FILE}"),
            ));
        }
    }
    let mut names = BTreeSet::new();
    for (i, s) in skills.iter().enumerate() {
        if !names.insert(s.name.as_str()) {
            return Err(AgentError::input(
                format!("skills[{i}].name"),
                format!("the skill \"{}\" is selected twice", s.name),
            ));
        }
    }
    // Unsigned UTF-8 byte order: `str`'s `Ord` is exactly that.
    skills.sort_by(|a, b| a.name.cmp(&b.name));
    for s in skills.iter_mut() {
        s.files.sort_by(|a, b| a.path.cmp(&b.path));
    }
    Ok(())
}

impl PreparedAgent {
    /// `{ request: { prompt, response_schema? }, session? }`.
    pub fn to_json(&self) -> Json {
        let mut request = vec![("prompt".to_string(), Json::str(&self.prompt))];
        if let Some(s) = &self.response_schema {
            request.push(("response_schema".to_string(), s.clone()));
        }
        let mut out = vec![("request".to_string(), Json::Object(request))];
        if let Some(s) = &self.session {
            out.push(("session".to_string(), session_json(s)));
        }
        Json::Object(out)
    }

    /// Reads a prepared value back, checking it as preparation would have left it.
    pub fn from_json(v: &Json) -> Result<PreparedAgent, AgentError> {
        let at = "prepared";
        check_value(v, &DOCUMENT, at)?;
        closed(v, &["request", "session"], "a prepared value", at)?;
        let Some(request) = v.get("request") else {
            return Err(AgentError::input(join(at, "request"), "missing"));
        };
        let rat = join(at, "request");
        closed(
            request,
            &["prompt", "response_schema"],
            "a prepared request",
            &rat,
        )?;
        let prompt = text(request, "prompt", &rat)?;
        if prompt.is_empty() {
            return Err(AgentError::input(
                join(&rat, "prompt"),
                "a prompt is not empty",
            ));
        }
        if prompt.len() > MAX_PROMPT_BYTES {
            return Err(AgentError::exhausted(
                join(&rat, "prompt"),
                format!(
                    "{} bytes, over the {MAX_PROMPT_BYTES} a prompt may have",
                    prompt.len()
                ),
            ));
        }
        let response_schema = request.get("response_schema").cloned();
        if let Some(s) = &response_schema {
            compile(s, &join(&rat, "response_schema"))?;
        }
        check_prompt(&prompt, response_schema.as_ref(), &rat)?;
        let session = match v.get("session") {
            None => None,
            Some(s) => Some(read_session(s, &join(at, "session"))?),
        };
        Ok(PreparedAgent {
            prompt,
            response_schema,
            session,
        })
    }
}

pub fn session_json(s: &SessionRequest) -> Json {
    match s {
        SessionRequest::Retain {
            lifetime_run: false,
        } => Json::object(vec![("retain", Json::Bool(true))]),
        SessionRequest::Retain { lifetime_run: true } => Json::object(vec![
            ("retain", Json::Bool(true)),
            ("lifetime", Json::str("run")),
        ]),
        SessionRequest::Restore(u) => Json::object(vec![("restore", Json::str(u))]),
    }
}
