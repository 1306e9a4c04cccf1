//! Property tests of the agent method: arbitrary JSON (and JSON shaped like the method's own
//! values, with keys named like the real fields) fed to preparation, schema checking, finishing,
//! result checking, both providers' reply readers and the JSON/0 parser never panics; valid
//! schemas of the profile pass the check, project to themselves minus the root `$schema`, and
//! accept the values generated to match them, through finishing too.

use proptest::prelude::*;
use proptest::sample::{select, Index};
use tool_host_core::agent::finish::finish;
use tool_host_core::agent::json::{self, Json, Number, DOCUMENT, MAX_SAFE_INTEGER};
use tool_host_core::agent::schema::{self, MAX_ENUM_VALUES, MAX_PROPERTIES};
use tool_host_core::agent::{
    assert_response_schema, check_agent_result, finish_agent, prepare_agent,
    project_response_schema, transport_result, Api, Outcome, PreparedAgent, Stop, TransportResult,
    DIALECT,
};

// ---- arbitrary JSON ----

/// Names of the method's real fields, so arbitrary objects sometimes look like its values.
const NAMES: &[&str] = &[
    "instructions",
    "guidance",
    "label",
    "text",
    "response_schema",
    "session",
    "retain",
    "lifetime",
    "restore",
    "request",
    "prompt",
    "skills",
    "name",
    "files",
    "path",
    "$schema",
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "maxItems",
    "minItems",
    "enum",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "$ref",
    "anyOf",
    "outcome",
    "output",
    "stop",
    "structured",
    "status",
    "reference",
    "reason",
    "choices",
    "message",
    "role",
    "content",
    "refusal",
    "finish_reason",
    "tool_calls",
    "function_call",
    "error",
    "incomplete_details",
];

/// Values the method gives meaning to.
const WORDS: &[&str] = &[
    DIALECT,
    "object",
    "array",
    "string",
    "integer",
    "null",
    "boolean",
    "number",
    "done",
    "blocked",
    "limit",
    "end-turn",
    "refusal",
    "retained",
    "unavailable",
    "capacity",
    "run",
    "01234567-89ab-cdef-0123-456789abcdef",
    "SKILL.md",
    "completed",
    "incomplete",
    "in_progress",
    "queued",
    "failed",
    "cancelled",
    "message",
    "output_text",
    "reasoning",
    "function_call",
    "assistant",
    "user",
    "stop",
    "length",
    "content_filter",
    "tool_calls",
    "max_output_tokens",
    "```json\n{}\n```",
    "",
];

const EDGE_INTS: &[i64] = &[
    0,
    1,
    -1,
    255,
    256,
    257,
    4096,
    65_536,
    65_537,
    MAX_SAFE_INTEGER,
    -MAX_SAFE_INTEGER,
    MAX_SAFE_INTEGER + 1,
    -MAX_SAFE_INTEGER - 1,
    i64::MAX,
    i64::MIN,
];

fn int() -> BoxedStrategy<i64> {
    prop_oneof![
        3 => -300i64..300,
        2 => any::<i64>(),
        2 => select(EDGE_INTS),
    ]
    .boxed()
}

fn float() -> BoxedStrategy<f64> {
    prop_oneof![
        any::<f64>(),
        select(
            &[
                0.5,
                -0.0,
                1.0,
                1e300,
                9_007_199_254_740_992.0,
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
            ][..]
        ),
    ]
    .boxed()
}

fn text() -> BoxedStrategy<String> {
    prop_oneof![
        2 => select(WORDS).prop_map(String::from),
        2 => "\\PC{0,12}",
        1 => "(?s).{0,12}",
    ]
    .boxed()
}

fn key() -> BoxedStrategy<String> {
    prop_oneof![
        3 => select(NAMES).prop_map(String::from),
        1 => "\\PC{0,8}",
        1 => "(?s).{0,4}",
    ]
    .boxed()
}

fn leaf() -> BoxedStrategy<Json> {
    prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        int().prop_map(Json::int),
        float().prop_map(|f| Json::Number(Number::Float(f))),
        text().prop_map(Json::String),
    ]
    .boxed()
}

/// Any JSON value (as built in code, so an object may even repeat a key), of bounded size.
fn arb_json() -> BoxedStrategy<Json> {
    leaf()
        .prop_recursive(5, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Json::Array),
                prop::collection::vec((key(), inner), 0..6).prop_map(Json::Object),
            ]
        })
        .boxed()
}

// ---- edits of a valid value ----

#[derive(Clone, Debug)]
enum Edit {
    Replace(Json),
    Remove,
    /// The node again beside itself: in an object, a duplicate member.
    Duplicate,
}

fn arb_edit() -> BoxedStrategy<Edit> {
    prop_oneof![
        3 => arb_json().prop_map(Edit::Replace),
        1 => Just(Edit::Remove),
        1 => Just(Edit::Duplicate),
    ]
    .boxed()
}

/// `v` with the `target`-th node (in preorder) edited; removing the root gives null.
fn edit(v: &Json, target: usize, e: &Edit) -> Json {
    fn go(v: &Json, target: usize, n: &mut usize, e: &Edit) -> Vec<Json> {
        let here = *n;
        *n += 1;
        if here == target {
            return match e {
                Edit::Replace(x) => vec![x.clone()],
                Edit::Remove => vec![],
                Edit::Duplicate => vec![v.clone(), v.clone()],
            };
        }
        vec![match v {
            Json::Array(a) => Json::Array(a.iter().flat_map(|x| go(x, target, n, e)).collect()),
            Json::Object(m) => Json::Object(
                m.iter()
                    .flat_map(|(k, x)| {
                        go(x, target, n, e)
                            .into_iter()
                            .map(move |y| (k.clone(), y))
                            .collect::<Vec<_>>()
                    })
                    .collect(),
            ),
            other => other.clone(),
        }]
    }
    go(v, target, &mut 0, e)
        .into_iter()
        .next()
        .unwrap_or(Json::Null)
}

/// `v`, or `v` with one to three random edits.
fn edited(v: Json) -> BoxedStrategy<Json> {
    prop::collection::vec((any::<Index>(), arb_edit()), 0..=3)
        .prop_map(move |edits| {
            edits.iter().fold(v.clone(), |acc, (i, e)| {
                let target = i.index(acc.count());
                edit(&acc, target, e)
            })
        })
        .boxed()
}

fn obj(members: Vec<(&str, Json)>) -> Json {
    Json::object(members)
}

fn fixture(name: &str) -> Json {
    let path = format!("{}/tests/fixtures/agent/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    json::parse(&text, &DOCUMENT, name).unwrap()
}

// ---- valid schemas of the profile, and values that match them ----

#[derive(Clone, Debug)]
enum S {
    Object {
        props: Vec<(String, S)>,
        description: Option<String>,
        /// `required` lists the properties in reverse order.
        reversed: bool,
        /// An object without properties leaves out `required` (else it is `[]`).
        bare: bool,
    },
    Array {
        items: Box<S>,
        min: Option<i64>,
        max: i64,
        description: Option<String>,
    },
    Str {
        nullable: bool,
        null_first: bool,
        /// `None` in an enum is `null`.
        options: Option<Vec<Option<String>>>,
        min_len: Option<i64>,
        max_len: Option<i64>,
        description: Option<String>,
    },
    Int {
        nullable: bool,
        null_first: bool,
        min: Option<i64>,
        max: Option<i64>,
        description: Option<String>,
    },
}

impl S {
    fn properties(&self) -> usize {
        match self {
            S::Object { props, .. } => {
                props.len() + props.iter().map(|(_, p)| p.properties()).sum::<usize>()
            }
            S::Array { items, .. } => items.properties(),
            _ => 0,
        }
    }
    fn enum_values(&self) -> usize {
        match self {
            S::Object { props, .. } => props.iter().map(|(_, p)| p.enum_values()).sum(),
            S::Array { items, .. } => items.enum_values(),
            S::Str { options, .. } => options.as_ref().map_or(0, Vec::len),
            S::Int { .. } => 0,
        }
    }
    fn depth(&self) -> usize {
        match self {
            S::Object { props, .. } => 1 + props.iter().map(|(_, p)| p.depth()).max().unwrap_or(0),
            S::Array { items, .. } => 1 + items.depth(),
            _ => 1,
        }
    }
}

fn description() -> BoxedStrategy<Option<String>> {
    prop::option::weighted(0.3, "\\PC{0,16}").boxed()
}

fn prop_name() -> BoxedStrategy<String> {
    prop_oneof![
        2 => "[a-z_]{1,10}",
        1 => select(NAMES).prop_map(String::from),
        1 => "(?s).{0,6}",
    ]
    .boxed()
}

fn type_json(name: &str, nullable: bool, null_first: bool) -> Json {
    match (nullable, null_first) {
        (false, _) => Json::str(name),
        (true, false) => Json::Array(vec![Json::str(name), Json::str("null")]),
        (true, true) => Json::Array(vec![Json::str("null"), Json::str(name)]),
    }
}

fn string_node() -> BoxedStrategy<S> {
    let options = (
        prop::collection::btree_set("\\PC{0,8}", 1..6),
        any::<Index>(),
        any::<bool>(),
    );
    let lengths = (prop::option::of(0i64..4), prop::option::of(0i64..12));
    (
        any::<bool>(),
        any::<bool>(),
        prop::option::of(options),
        lengths,
        description(),
    )
        .prop_map(|(nullable, null_first, options, (lo, span), description)| {
            let options = options.map(|(set, at, _)| {
                let mut o: Vec<Option<String>> = set.into_iter().map(Some).collect();
                if nullable {
                    o.insert(at.index(o.len() + 1), None);
                }
                o
            });
            // The profile has no string length bounds (strict structured output does not take
            // them); the generator keeps the fields so that a bound would be easy to bring back.
            let _ = (lo, span);
            let (min_len, max_len): (Option<i64>, Option<i64>) = (None, None);
            S::Str {
                nullable,
                null_first,
                options,
                min_len,
                max_len,
                description,
            }
        })
        .boxed()
}

fn integer_node() -> BoxedStrategy<S> {
    let bound = prop_oneof![
        -1000i64..1000,
        -MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER,
        select(&[0, MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER][..]),
    ];
    (
        any::<bool>(),
        any::<bool>(),
        prop::option::of(bound.clone()),
        prop::option::of(bound),
        description(),
    )
        .prop_map(|(nullable, null_first, a, b, description)| {
            let (min, max) = match (a, b) {
                (Some(a), Some(b)) => (Some(a.min(b)), Some(a.max(b))),
                other => other,
            };
            S::Int {
                nullable,
                null_first,
                min,
                max,
                description,
            }
        })
        .boxed()
}

fn object_node(props: BoxedStrategy<Vec<(String, S)>>) -> BoxedStrategy<S> {
    (props, description(), any::<bool>(), any::<bool>())
        .prop_map(|(props, description, reversed, bare)| {
            let mut seen = std::collections::BTreeSet::new();
            let props = props
                .into_iter()
                .filter(|(k, _)| seen.insert(k.clone()))
                .collect();
            S::Object {
                props,
                description,
                reversed,
                bare,
            }
        })
        .boxed()
}

/// A node below the root: at most 7 levels, so with the root at most 8.
fn node() -> BoxedStrategy<S> {
    prop_oneof![string_node(), integer_node()]
        .prop_recursive(6, 40, 4, |inner| {
            let array = (
                inner.clone(),
                prop_oneof![0i64..=4, 0i64..=256, Just(256)],
                prop::option::of(0i64..=3),
                description(),
            )
                .prop_map(|(items, max, min, description)| S::Array {
                    items: Box::new(items),
                    min: min.map(|m| m.min(max)),
                    max,
                    description,
                });
            prop_oneof![
                object_node(prop::collection::vec((prop_name(), inner), 0..5).boxed()),
                array,
            ]
        })
        .boxed()
}

/// A root schema: a nonempty object within the profile's totals.
fn valid_schema() -> BoxedStrategy<(S, bool)> {
    (
        object_node(prop::collection::vec((prop_name(), node()), 1..6).boxed()),
        any::<bool>(),
    )
        .prop_filter("within the profile's totals", |(s, _)| {
            s.properties() <= MAX_PROPERTIES && s.enum_values() <= MAX_ENUM_VALUES && s.depth() <= 8
        })
        .boxed()
}

fn with_description(mut m: Vec<(&'static str, Json)>, d: &Option<String>) -> Json {
    if let Some(d) = d {
        m.insert(1, ("description", Json::str(d)));
    }
    obj(m)
}

fn schema_json(s: &S) -> Json {
    match s {
        S::Object {
            props,
            description,
            reversed,
            bare,
        } => {
            let mut names: Vec<Json> = props.iter().map(|(k, _)| Json::str(k)).collect();
            if *reversed {
                names.reverse();
            }
            let mut m = vec![
                ("type", Json::str("object")),
                (
                    "properties",
                    Json::Object(
                        props
                            .iter()
                            .map(|(k, p)| (k.clone(), schema_json(p)))
                            .collect(),
                    ),
                ),
            ];
            if !(props.is_empty() && *bare) {
                m.push(("required", Json::Array(names)));
            }
            m.push(("additionalProperties", Json::Bool(false)));
            with_description(m, description)
        }
        S::Array {
            items,
            min,
            max,
            description,
        } => {
            let mut m = vec![("type", Json::str("array")), ("items", schema_json(items))];
            if let Some(min) = min {
                m.push(("minItems", Json::int(*min)));
            }
            m.push(("maxItems", Json::int(*max)));
            with_description(m, description)
        }
        S::Str {
            nullable,
            null_first,
            options,
            min_len,
            max_len,
            description,
        } => {
            let mut m = vec![("type", type_json("string", *nullable, *null_first))];
            if let Some(o) = options {
                let o = o
                    .iter()
                    .map(|x| x.as_ref().map_or(Json::Null, Json::str))
                    .collect();
                m.push(("enum", Json::Array(o)));
            }
            if let Some(n) = min_len {
                m.push(("minLength", Json::int(*n)));
            }
            if let Some(n) = max_len {
                m.push(("maxLength", Json::int(*n)));
            }
            with_description(m, description)
        }
        S::Int {
            nullable,
            null_first,
            min,
            max,
            description,
        } => {
            let mut m = vec![("type", type_json("integer", *nullable, *null_first))];
            if let Some(n) = min {
                m.push(("minimum", Json::int(*n)));
            }
            if let Some(n) = max {
                m.push(("maximum", Json::int(*n)));
            }
            with_description(m, description)
        }
    }
}

/// The root's JSON: the schema with `$schema` first or last.
fn root_json(s: &S, dialect_first: bool) -> Json {
    let Json::Object(mut m) = schema_json(s) else {
        unreachable!()
    };
    let d = ("$schema".to_string(), Json::str(DIALECT));
    if dialect_first {
        m.insert(0, d);
    } else {
        m.push(d);
    }
    Json::Object(m)
}

/// Values that match `s`.
fn value(s: &S) -> BoxedStrategy<Json> {
    match s {
        S::Object { props, .. } => {
            let keys: Vec<String> = props.iter().map(|(k, _)| k.clone()).collect();
            let values: Vec<BoxedStrategy<Json>> = props.iter().map(|(_, p)| value(p)).collect();
            values
                .prop_map(move |vs| Json::Object(keys.iter().cloned().zip(vs).collect()))
                .boxed()
        }
        S::Array {
            items, min, max, ..
        } => {
            let lo = min.unwrap_or(0) as usize;
            let hi = (*max as usize).min(lo + 3);
            prop::collection::vec(value(items), lo..=hi)
                .prop_map(Json::Array)
                .boxed()
        }
        S::Str {
            options: Some(o), ..
        } => select(o.clone())
            .prop_map(|x| x.map_or(Json::Null, Json::String))
            .boxed(),
        S::Str {
            nullable,
            min_len,
            max_len,
            ..
        } => {
            let lo = min_len.unwrap_or(0) as usize;
            let hi = max_len.map_or(lo + 8, |m| (m as usize).min(lo + 8));
            let s = prop::collection::vec(any::<char>(), lo..=hi)
                .prop_map(|cs| Json::String(cs.into_iter().collect()));
            if *nullable {
                prop_oneof![3 => s, 1 => Just(Json::Null)].boxed()
            } else {
                s.boxed()
            }
        }
        S::Int {
            nullable, min, max, ..
        } => {
            let lo = min.unwrap_or(-MAX_SAFE_INTEGER);
            let hi = max.unwrap_or(MAX_SAFE_INTEGER);
            let i = prop_oneof![3 => lo..=hi, 1 => Just(lo), 1 => Just(hi)].prop_map(Json::int);
            if *nullable {
                prop_oneof![3 => i, 1 => Just(Json::Null)].boxed()
            } else {
                i.boxed()
            }
        }
    }
}

/// A valid schema (its JSON) and a value that matches it.
fn schema_and_value() -> BoxedStrategy<(Json, Json)> {
    valid_schema()
        .prop_flat_map(|(s, first)| (Just(root_json(&s, first)), value(&s)))
        .boxed()
}

// ---- values shaped like the method's ----

/// Some members, each perhaps left out.
fn shaped(members: Vec<(&'static str, BoxedStrategy<Json>)>) -> BoxedStrategy<Json> {
    let n = members.len();
    let (names, values): (Vec<_>, Vec<_>) = members.into_iter().unzip();
    (
        values,
        prop::collection::vec(prop::bool::weighted(0.95), n),
        prop::option::weighted(0.05, (key(), arb_json())),
    )
        .prop_map(move |(vs, keep, extra)| {
            let mut m: Vec<(String, Json)> = names
                .iter()
                .zip(vs)
                .zip(keep)
                .filter(|(_, k)| *k)
                .map(|((n, v), _)| (n.to_string(), v))
                .collect();
            m.extend(extra);
            Json::Object(m)
        })
        .boxed()
}

fn string_or_any() -> BoxedStrategy<Json> {
    prop_oneof![10 => text().prop_map(Json::String), 1 => arb_json()].boxed()
}

/// Any schema-ish value: valid, a valid one edited, or arbitrary.
fn schemaish() -> BoxedStrategy<Json> {
    prop_oneof![
        2 => schema_and_value().prop_map(|(s, _)| s),
        3 => schema_and_value().prop_flat_map(|(s, _)| edited(s)),
        1 => arb_json(),
    ]
    .boxed()
}

fn arb_input() -> BoxedStrategy<Json> {
    let label = prop_oneof![5 => "[a-z]{1,6}".prop_map(Json::String), 1 => string_or_any()];
    let guidance_item = shaped(vec![("label", label.boxed()), ("text", string_or_any())]);
    let session = prop_oneof![
        Just(obj(vec![("retain", Json::Bool(true))])),
        Just(obj(vec![
            ("retain", Json::Bool(true)),
            ("lifetime", Json::str("run"))
        ])),
        Just(obj(vec![(
            "restore",
            Json::str("01234567-89ab-cdef-0123-456789ABCDEF")
        )])),
        shaped(vec![
            ("retain", leaf()),
            ("lifetime", leaf()),
            ("restore", leaf())
        ]),
        arb_json(),
    ]
    .boxed();
    let session = prop::option::weighted(0.4, session).prop_map(|s| s.unwrap_or(Json::Null));
    prop_oneof![
        1 => arb_json(),
        4 => shaped(vec![
            (
                "instructions",
                prop_oneof![6 => "\\PC{1,40}".prop_map(Json::String), 1 => string_or_any()].boxed()
            ),
            (
                "guidance",
                prop_oneof![
                    8 => prop::collection::vec(guidance_item, 0..5).prop_map(Json::Array),
                    1 => arb_json()
                ]
                .boxed()
            ),
            (
                "response_schema",
                prop_oneof![
                    3 => schema_and_value().prop_map(|(s, _)| s),
                    1 => schemaish()
                ]
                .boxed()
            ),
            ("session", session.boxed()),
        ])
        // No session is no member (a null one is refused, which the arbitrary values try).
        .prop_map(|v| match v {
            Json::Object(m) => Json::Object(m.into_iter().filter(|(k, x)| k != "session" || *x != Json::Null).collect()),
            other => other,
        }),
    ]
    .boxed()
}

fn arb_skills() -> BoxedStrategy<Json> {
    let path = prop_oneof![
        3 => Just(Json::str("SKILL.md")),
        3 => "[a-z]{1,5}(/[a-z]{1,5}){0,2}\\.md".prop_map(Json::String),
        1 => "[a-z./\\\\]{0,8}".prop_map(Json::String),
        1 => string_or_any(),
    ];
    let file = shaped(vec![("path", path.boxed()), ("text", string_or_any())]);
    let name = prop_oneof![
        4 => "[a-z0-9]{1,4}(-[a-z0-9]{1,4}){0,2}".prop_map(Json::String),
        1 => string_or_any(),
    ];
    let skill = shaped(vec![
        ("name", name.boxed()),
        (
            "files",
            prop::collection::vec(file, 1..4)
                .prop_map(Json::Array)
                .boxed(),
        ),
    ]);
    prop_oneof![
        6 => prop::collection::vec(skill, 0..4).prop_map(Json::Array),
        1 => arb_json(),
    ]
    .boxed()
}

fn stop_word() -> BoxedStrategy<Json> {
    prop_oneof![
        10 => select(&["end-turn", "refusal", "limit"][..]).prop_map(Json::str),
        1 => leaf(),
    ]
    .boxed()
}

/// Texts an answer may hold: prose, JSON, fenced JSON, prose around fences, two fences.
fn answer_text(value: BoxedStrategy<Json>) -> BoxedStrategy<String> {
    let pretty = |v: &Json| serde_json::to_string_pretty(v).unwrap();
    prop_oneof![
        2 => value.clone().prop_map(|v| v.compact()),
        1 => value.clone().prop_map(move |v| format!("```json\n{}\n```", pretty(&v))),
        1 => value.clone().prop_map(move |v| format!("Here it is:\n```json\n{}\n```\n", pretty(&v))),
        1 => value.clone().prop_map(|v| format!("```json\n{0}\n```\n```json\n{0}\n```", v.compact())),
        1 => value.clone().prop_map(|v| format!("```\n{}\n```", v.compact())),
        1 => value.prop_flat_map(|v| mutated_text(v.compact())),
        1 => "(?s).{0,40}",
    ]
    .boxed()
}

fn arb_transport(text: BoxedStrategy<String>) -> BoxedStrategy<Json> {
    let output = shaped(vec![
        ("text", text.prop_map(Json::String).boxed()),
        ("stop", stop_word()),
    ]);
    prop_oneof![
        1 => arb_json(),
        4 => shaped(vec![
            (
                "outcome",
                prop_oneof![12 => Just(Json::str("done")), 1 => leaf()].boxed()
            ),
            ("output", output),
        ]),
    ]
    .boxed()
}

fn receipt() -> BoxedStrategy<Json> {
    prop_oneof![
        Just(obj(vec![
            ("status", Json::str("retained")),
            (
                "reference",
                Json::str("01234567-89ab-cdef-0123-456789abcdef")
            )
        ])),
        select(&["capacity", "missing-history", "other"][..]).prop_map(|r| obj(vec![
            ("status", Json::str("unavailable")),
            ("reason", Json::str(r))
        ])),
        shaped(vec![
            ("status", leaf()),
            ("reference", leaf()),
            ("reason", leaf())
        ]),
    ]
    .boxed()
}

fn arb_result(value: BoxedStrategy<Json>) -> BoxedStrategy<Json> {
    let outcome = prop_oneof![
        10 => select(&["done", "blocked", "limit"][..]).prop_map(Json::str),
        1 => leaf(),
    ];
    let output = shaped(vec![
        (
            "text",
            answer_text(value.clone()).prop_map(Json::String).boxed(),
        ),
        ("structured", value),
        ("session", receipt()),
    ]);
    prop_oneof![
        1 => arb_json(),
        4 => shaped(vec![("outcome", outcome.boxed()), ("output", output)]),
    ]
    .boxed()
}

/// A text with one to four byte-level mutations (kept valid UTF-8).
fn mutated_text(t: String) -> BoxedStrategy<String> {
    let op = (0u8..5, any::<Index>(), any::<char>());
    prop::collection::vec(op, 1..=4)
        .prop_map(move |ops| {
            let mut s: Vec<char> = t.chars().collect();
            for (kind, at, c) in ops {
                let i = at.index(s.len() + 1);
                match kind {
                    0 => s.insert(i, c),
                    1 if i < s.len() => {
                        s.remove(i);
                    }
                    2 if i < s.len() => s[i] = c,
                    3 => s.truncate(i),
                    _ => {
                        let tail: Vec<char> = s[i..].to_vec();
                        s.extend(tail);
                    }
                }
            }
            s.into_iter().collect()
        })
        .boxed()
}

/// Every reply fixture of both APIs (tests/fixtures/agent/{chat,responses}/).
fn reply_fixtures() -> Vec<Json> {
    let mut out = Vec::new();
    for api in ["chat", "responses"] {
        let dir = format!("{}/tests/fixtures/agent/{api}", env!("CARGO_MANIFEST_DIR"));
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".json"))
            .collect();
        names.sort();
        out.extend(names.iter().map(|n| fixture(&format!("{api}/{n}"))));
    }
    assert!(out.len() >= 20, "{} reply fixtures", out.len());
    out
}

fn arb_reply() -> BoxedStrategy<Json> {
    prop_oneof![
        1 => arb_json(),
        4 => select(reply_fixtures()).prop_flat_map(edited),
    ]
    .boxed()
}

/// The prepared value for a schema: as preparation makes it when it can (so its prompt asks for
/// that schema), else written by hand.
fn prepared_with(schema: Option<Json>) -> Json {
    if let Ok(p) = prepare_agent(&answer_input(schema.clone()), None) {
        return p.to_json();
    }
    let mut request = vec![("prompt", Json::str("Answer the question."))];
    if let Some(s) = schema {
        request.push(("response_schema", s));
    }
    obj(vec![("request", obj(request))])
}

fn answer_input(schema: Option<Json>) -> Json {
    let mut m = vec![("instructions", Json::str("Answer the question."))];
    m.extend(schema.map(|s| ("response_schema", s)));
    obj(m)
}

/// What preparation makes of a valid schema.
fn prepared(schema: &Json) -> PreparedAgent {
    prepare_agent(&answer_input(Some(schema.clone())), None)
        .unwrap_or_else(|e| panic!("{e}: {}", schema.compact()))
}

fn arb_prepared() -> BoxedStrategy<Json> {
    prop_oneof![
        1 => arb_json(),
        1 => Just(prepared_with(None)),
        3 => schema_and_value().prop_map(|(s, _)| prepared_with(Some(s))),
        1 => schemaish().prop_map(|s| prepared_with(Some(s))),
        1 => schemaish().prop_flat_map(|s| edited(prepared_with(Some(s)))),
    ]
    .boxed()
}

fn strip_dialect(v: &Json) -> Json {
    match v {
        Json::Object(m) => {
            Json::Object(m.iter().filter(|(k, _)| k != "$schema").cloned().collect())
        }
        other => other.clone(),
    }
}

/// `a` and `b` are the same value, a float's last binary digits aside: serde_json's default float
/// reading (without its `float_roundtrip` feature) may land a few units in the last place away
/// from the value the shortest text was written for, and so may even read `-3874670683045024.5`
/// as the integer `-3874670683045025`; see `a_float_reads_back_exactly_from_its_shortest_text`.
fn same_read(a: &Json, b: &Json) -> bool {
    let number = |v: &Json| match v {
        Json::Number(Number::Float(f)) => Some(*f),
        Json::Number(Number::Int(i)) => Some(*i as f64),
        _ => None,
    };
    match (a, b) {
        (Json::Number(_), Json::Number(_)) if a != b => {
            let (x, y) = (number(a).unwrap(), number(b).unwrap());
            (x - y).abs() <= x.abs().max(y.abs()) * 1e-14
        }
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_read(a, b))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k, a), (l, b))| k == l && same_read(a, b))
        }
        _ => a == b,
    }
}

/// `v` as its compact text reads back: an integral float is an integer.
fn read_back(v: &Json) -> Json {
    match v {
        Json::Number(Number::Float(f)) if f.fract() == 0.0 => Json::int(*f as i64),
        Json::Array(a) => Json::Array(a.iter().map(read_back).collect()),
        Json::Object(m) => Json::Object(m.iter().map(|(k, x)| (k.clone(), read_back(x))).collect()),
        other => other.clone(),
    }
}

/// 256 cases a property; no regression file is written beside this one (a failure prints its
/// minimal input, to be pinned as a named test).
fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ---- nothing panics ----

proptest! {
    #![proptest_config(config())]

    #[test]
    fn preparing_arbitrary_input_and_skills_never_panics(
        input in arb_input(),
        skills in prop::option::of(arb_skills()),
    ) {
        if let Ok(p) = prepare_agent(&input, skills.as_ref()) {
            // What preparation gives, finishing and the wire formats take back.
            prop_assert!(PreparedAgent::from_json(&p.to_json()).is_ok());
            prop_assert!(!p.prompt.is_empty());
        }
    }

    #[test]
    fn checking_and_projecting_arbitrary_schemas_never_panics(s in schemaish()) {
        let checked = assert_response_schema(&s);
        let projected = project_response_schema(&s);
        prop_assert_eq!(checked.is_ok(), projected.is_ok());
        prop_assert_eq!(checked.is_ok(), schema::compile(&s, "s").is_ok());
        if let Ok(p) = projected {
            // Compared as text: a NaN (under a duplicate member, see
            // `a_schema_built_in_code_with_a_duplicate_member_is_refused`) is not equal to itself.
            prop_assert_eq!(p.compact(), strip_dialect(&s).compact());
        }
    }

    #[test]
    fn finishing_arbitrary_values_never_panics(
        prepared in arb_prepared(),
        transport in arb_transport(answer_text(arb_json())),
    ) {
        let _ = finish_agent(&prepared, &transport);
    }

    #[test]
    fn finishing_answers_to_a_valid_schema_never_panics(
        (schema, value) in schema_and_value(),
        other in arb_json(),
        stop in select(&[Stop::EndTurn, Stop::Refusal, Stop::Limit][..]),
        pick in any::<bool>(),
        text in any::<Index>(),
    ) {
        let v = if pick { value } else { other };
        let c = v.compact();
        let texts = [
            c.clone(),
            format!("```json\n{c}\n```"),
            format!("Sure:\n{c}"),
            c.chars().take(c.chars().count() / 2).collect(),
        ];
        let t = TransportResult { text: texts[text.index(texts.len())].clone(), stop };
        let prepared = prepared(&schema);
        if let Ok(r) = finish(&prepared, &t) {
            // A completed answer to a schema holds its structured answer, which matches.
            prop_assert!(r.outcome != Outcome::Done || r.structured.is_some());
            if let Some(x) = &r.structured {
                prop_assert!(schema::compile(&schema, "s").unwrap().check(x, "x").is_ok());
            }
        }
    }

    #[test]
    fn checking_arbitrary_results_never_panics(
        result in arb_result(arb_json()),
        schema in prop_oneof![
            Just(None),
            schema_and_value().prop_map(|(s, _)| Some(s)),
            schemaish().prop_map(Some),
        ],
    ) {
        let _ = check_agent_result(&result, schema.as_ref());
    }

    #[test]
    fn checking_results_for_a_valid_schema_never_panics(
        (schema, value) in schema_and_value(),
        result in arb_result(arb_json()),
    ) {
        let _ = check_agent_result(&result, Some(&schema));
        let r = obj(vec![
            ("outcome", Json::str("done")),
            ("output", obj(vec![("text", Json::str(value.compact())), ("structured", value.clone())])),
        ]);
        let checked = check_agent_result(&r, Some(&schema));
        prop_assert!(checked.is_ok(), "{:?}", checked);
        prop_assert_eq!(checked.unwrap().structured, Some(value));
    }

    #[test]
    fn reading_arbitrary_provider_replies_never_panics(
        body in arb_reply(),
        status in prop_oneof![4 => Just(200u16), 1 => any::<u16>()],
    ) {
        for api in [Api::ChatCompletions, Api::Responses] {
            match transport_result(api, status, &body) {
                Ok(t) => {
                    prop_assert_eq!(status, 200);
                    prop_assert!(t.text.len() <= 8 << 20);
                }
                Err(e) if status != 200 => prop_assert_eq!(e.place, "response"),
                Err(_) => {}
            }
        }
    }

    #[test]
    fn parsing_arbitrary_text_never_panics(
        t in prop_oneof![
            2 => "(?s).{0,64}",
            2 => arb_json().prop_map(|v| v.compact()),
            3 => arb_json().prop_flat_map(|v| mutated_text(v.compact())),
            1 => arb_json().prop_map(|v| serde_json::to_string_pretty(&v).unwrap()),
            1 => "[\\[\\]{}\",:0-9eE.+\\-a-z\\\\ ]{0,64}",
        ],
    ) {
        let _ = json::parse(&t, &DOCUMENT, "t");
    }

    #[test]
    fn a_checked_value_reads_back_from_its_compact_text(v in arb_json()) {
        if json::check_value(&v, &DOCUMENT, "v").is_ok() {
            let back = json::parse(&v.compact(), &DOCUMENT, "v");
            prop_assert!(back.is_ok(), "{:?}", back);
            let want = read_back(&v);
            let back = back.unwrap();
            prop_assert!(same_read(&back, &want), "{:?} read back as {:?}", want, back);
        }
    }
}

// ---- valid schemas ----

proptest! {
    #![proptest_config(config())]

    #[test]
    fn a_valid_schema_passes_and_projects_to_itself_without_its_root_dialect(
        (schema, _) in schema_and_value(),
    ) {
        let checked = assert_response_schema(&schema);
        prop_assert!(checked.is_ok(), "{:?}\n{}", checked, schema.compact());
        let projected = project_response_schema(&schema).unwrap();
        prop_assert_eq!(&projected, &strip_dialect(&schema));
        prop_assert_eq!(projected.get("$schema"), None);
        // Re-adding the dialect gives back the original, member order aside.
        let Json::Object(mut m) = projected.clone() else { unreachable!() };
        m.push(("$schema".into(), Json::str(DIALECT)));
        prop_assert_eq!(Json::Object(m).canonical(), schema.canonical());
        // A property named `$schema` below the root is not the dialect: it stays.
        let props = |v: &Json| v.get("properties").cloned();
        prop_assert_eq!(props(&projected), props(&schema));
        // And the projection of the projection is refused: it declares no dialect.
        prop_assert!(assert_response_schema(&projected).is_err());
    }

    #[test]
    fn a_value_generated_for_a_valid_schema_matches_it_and_finishes_structured(
        (schema, value) in schema_and_value(),
    ) {
        let compiled = schema::compile(&schema, "response_schema").unwrap();
        let checked = compiled.check(&value, "value");
        prop_assert!(checked.is_ok(), "{:?}\n{}\n{}", checked, schema.compact(), value.compact());
        let prepared = prepared(&schema);
        for (text, stop, outcome) in [
            (value.compact(), Stop::EndTurn, Outcome::Done),
            (format!("```json\n{}\n```", serde_json::to_string_pretty(&value).unwrap()), Stop::EndTurn, Outcome::Done),
            (value.compact(), Stop::Limit, Outcome::Limit),
            (value.compact(), Stop::Refusal, Outcome::Blocked),
        ] {
            let t = TransportResult { text, stop };
            let r = finish(&prepared, &t);
            prop_assert!(r.is_ok(), "{:?}", r);
            let r = r.unwrap();
            prop_assert_eq!(r.outcome, outcome);
            prop_assert_eq!(r.structured.as_ref(), Some(&value));
            prop_assert_eq!(&finish_agent(&prepared.to_json(), &t.to_json()).unwrap(), &r);
            prop_assert_eq!(check_agent_result(&r.to_json(), Some(&schema)).unwrap(), r);
        }
    }

    #[test]
    fn a_valid_schema_prepares_into_a_request(
        (schema, _) in schema_and_value(),
    ) {
        let input = obj(vec![
            ("instructions", Json::str("Answer.")),
            ("response_schema", schema.clone()),
        ]);
        let p = prepare_agent(&input, None);
        prop_assert!(p.is_ok(), "{:?}", p);
        let p = p.unwrap();
        prop_assert_eq!(p.response_schema.as_ref(), Some(&schema));
        prop_assert!(p.prompt.contains(&strip_dialect(&schema).canonical()));
    }
}

// ---- found by the properties above: regressions, and one known difference ----

/// Regression (found by `parsing_arbitrary_text_never_panics`, input
/// `[{"&instructions":-9223372036854775808}]`): an integer's bound checked with `i.abs()`
/// overflowed for `i64::MIN`, a panic in a debug build, and in a release build `i64::MIN` passed
/// as if it were safe.
#[test]
fn the_smallest_i64_is_refused_as_unsafe_not_a_panic() {
    let t = i64::MIN.to_string();
    let e = json::parse(&t, &DOCUMENT, "t").unwrap_err();
    assert_eq!(e.code, tool_host_core::agent::AgentErrorCode::InvalidInput);
    assert!(json::check_value(&Json::int(i64::MIN), &DOCUMENT, "v").is_err());
}

/// JSON/0 promises a number means the same to every reader, and a JavaScript reader reads this
/// text (the shortest one for the value) back exactly; serde_json without `float_roundtrip`
/// reads a neighbouring value; the workspace turns that feature on.
#[test]
fn a_float_reads_back_exactly_from_its_shortest_text() {
    for (f, text) in [
        (1.580_575_481_732_324_4e-257, "1.5805754817323244e-257"),
        // Read as the integer -3874670683045025: not even a float any more.
        (-3_874_670_683_045_024.5, "-3874670683045024.5"),
    ] {
        let v = Json::Number(Number::Float(f));
        assert_eq!(v.compact(), text);
        assert_eq!(json::parse(text, &DOCUMENT, "t").unwrap(), v, "{text}");
    }
}

/// Regression (found by `checking_and_projecting_arbitrary_schemas_never_panics`): a schema built
/// in code (not parsed, so nothing refused its duplicates) may repeat a member, and `compile` read
/// the first and let the rest through unchecked, into the prompt and the provider's strict
/// schema. JSON/0's no-duplicate and finite-number rules apply throughout.
#[test]
fn a_schema_built_in_code_with_a_duplicate_member_is_refused() {
    let string = || obj(vec![("type", Json::str("string"))]);
    let schema = |props: Json, extra: Vec<(&'static str, Json)>| {
        let mut m = vec![
            ("$schema", Json::str(DIALECT)),
            ("type", Json::str("object")),
            ("properties", props),
            ("required", Json::Array(vec![Json::str("a")])),
            ("additionalProperties", Json::Bool(false)),
        ];
        m.extend(extra);
        obj(m)
    };
    let fine = schema(obj(vec![("a", string())]), vec![]);
    assert!(assert_response_schema(&fine).is_ok());
    // A second `properties`, with a NaN under it.
    let nan = Json::Number(Number::Float(f64::NAN));
    let twice = schema(
        obj(vec![("a", string())]),
        vec![("properties", obj(vec![("b", nan)]))],
    );
    // A property named twice, differently.
    let name_twice = schema(
        obj(vec![
            ("a", string()),
            ("a", obj(vec![("type", Json::str("integer"))])),
        ]),
        vec![],
    );
    for s in [twice, name_twice] {
        assert!(
            assert_response_schema(&s).is_err(),
            "accepted: {}",
            s.compact()
        );
        let input = obj(vec![
            ("instructions", Json::str("x")),
            ("response_schema", s),
        ]);
        assert!(prepare_agent(&input, None).is_err());
    }
}
