//! The benchmark's results file (`docs/perf-results.json`), the gate that compares a run with
//! it, and the generated part of `docs/perf.md`.
//!
//! A figure is instructions of one flow, on the IC cost model (the gate's count) and in wasmi
//! fuel beside it. Both counts are deterministic for a given wasm, so the gate's tolerance is
//! tight: a figure that grows past it fails, one that shrinks past it asks for the file to be
//! written again (so that an improvement is locked in).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Where the committed figures live, relative to the workspace root.
pub const RESULTS_FILE: &str = "docs/perf-results.json";
/// The document whose results section is generated from [`RESULTS_FILE`].
pub const PERF_DOC: &str = "docs/perf.md";
/// How much a quick-set figure may grow over the committed one before the gate fails.
pub const TOLERANCE_PERCENT: f64 = 1.0;

const BEGIN: &str = "<!-- BEGIN results: generated from docs/perf-results.json by `bench --write`; edit the file, not this section -->";
const END: &str = "<!-- END results -->";

/// Which run a figure belongs to: the gate's quick set, or the full benchmark (steady state,
/// scale, growth tables).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Set {
    Quick,
    Full,
}

/// One flow's figure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    pub set: Set,
    /// The table it is shown in (`transfers`, `growth: forms`, …).
    pub group: String,
    /// What was measured, unique within its set.
    pub flow: String,
    /// Instructions on the IC cost model (`docs/local-ic.md`).
    pub ic: u64,
    /// The same flow in wasmi fuel (a separate run with the plain count); `None` where that
    /// run was not made (the full set's largest fills).
    pub fuel: Option<u64>,
    /// The goal on the IC model, where issue 13 sets one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<u64>,
    /// What the figure is in (`instructions`, `bytes`, `instructions per block`, …) when it is
    /// not instructions of one flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
}

impl Figure {
    pub fn key(&self) -> (Set, &str) {
        (self.set, &self.flow)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Results {
    /// How the figures were made (machine-independent: the counts do not depend on it).
    pub about: String,
    pub tolerance_percent: f64,
    /// Per set, the code it was measured on (`git describe --always --dirty`) and the date.
    #[serde(default)]
    pub measured: BTreeMap<Set, String>,
    pub figures: Vec<Figure>,
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

impl Results {
    pub fn load() -> Result<Results, String> {
        let path = root().join(RESULTS_FILE);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn save(&self) -> Result<(), String> {
        let path = root().join(RESULTS_FILE);
        let mut text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        text.push('\n');
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// Replaces the figures of the sets in `fresh` (the others are kept), in `fresh`'s order.
    pub fn merge(&mut self, fresh: Vec<Figure>) {
        let sets: Vec<Set> = fresh.iter().map(|f| f.set).collect();
        self.figures.retain(|f| !sets.contains(&f.set));
        self.figures.extend(fresh);
        self.figures.sort_by_key(|f| f.set);
    }
}

/// Figures of the IC-model run joined with the fuel run's figures of the same flows.
pub fn with_fuel(mut ic: Vec<Figure>, fuel: &[Figure]) -> Vec<Figure> {
    let by: BTreeMap<(Set, &str), u64> = fuel.iter().map(|f| (f.key(), f.ic)).collect();
    for f in &mut ic {
        if f.unit.is_none() || f.unit.as_deref() == Some("instructions per block") {
            f.fuel = by.get(&(f.set, f.flow.as_str())).copied();
        }
    }
    ic
}

/// The gate: each committed figure of `set` against the same flow measured now. Answers the
/// report lines and whether the gate passes.
pub fn gate(committed: &Results, measured: &[Figure], set: Set) -> (Vec<String>, bool) {
    let tol = committed.tolerance_percent;
    let mut lines = vec![];
    let mut ok = true;
    let now: BTreeMap<&str, &Figure> = measured
        .iter()
        .filter(|f| f.set == set)
        .map(|f| (f.flow.as_str(), f))
        .collect();
    let before: BTreeMap<&str, &Figure> = committed
        .figures
        .iter()
        .filter(|f| f.set == set)
        .map(|f| (f.flow.as_str(), f))
        .collect();
    for (flow, old) in &before {
        let Some(new) = now.get(flow) else {
            lines.push(format!(
                "FAIL  {flow}: committed but not measured (write the file again)"
            ));
            ok = false;
            continue;
        };
        let change = (new.ic as f64 - old.ic as f64) / (old.ic.max(1) as f64) * 100.0;
        let verdict = if change > tol {
            ok = false;
            "FAIL"
        } else if change < -tol {
            "less"
        } else {
            "ok"
        };
        lines.push(format!(
            "{verdict:<5} {flow}: {} (committed {}, {change:+.2} %)",
            new.ic, old.ic
        ));
        if let Some(goal) = new.goal {
            if new.ic > goal {
                lines.push(format!("      over its goal of {goal}"));
            }
        }
    }
    for flow in now.keys() {
        if !before.contains_key(flow) {
            lines.push(format!(
                "FAIL  {flow}: measured but not committed (write the file again)"
            ));
            ok = false;
        }
    }
    if lines.iter().any(|l| l.starts_with("less")) {
        lines.push(format!(
            "figures fell by more than {tol} %: lock the improvement in with `bench --write`"
        ));
    }
    (lines, ok)
}

fn n(x: u64) -> String {
    let s = x.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push('\u{202f}');
        }
        out.push(c);
    }
    out
}

/// The results section of `docs/perf.md`: one table per group, in the file's order.
pub fn render(r: &Results) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{BEGIN}\n");
    let _ = writeln!(
        out,
        "{}\n\nThe gate (`scripts/test.sh`) runs the quick set and fails when an IC-model figure \
         grows more than {} % over the committed one.\n",
        r.about, r.tolerance_percent
    );
    let mut groups: Vec<(Set, &str)> = vec![];
    for f in &r.figures {
        if !groups.contains(&(f.set, f.group.as_str())) {
            groups.push((f.set, &f.group));
        }
    }
    for (set, on) in &r.measured {
        let _ = writeln!(out, "- {set:?} set measured on {on}");
    }
    if !r.measured.is_empty() {
        out.push('\n');
    }
    for (set, group) in groups {
        let title = match set {
            Set::Quick => "the quick set, which the gate runs",
            Set::Full => "the full set",
        };
        let _ = writeln!(out, "### {group} ({title})\n");
        let _ = writeln!(out, "| flow | IC model | wasmi fuel | goal (IC model) |");
        let _ = writeln!(out, "|---|---:|---:|---|");
        for f in r
            .figures
            .iter()
            .filter(|f| f.set == set && f.group == group)
        {
            let unit = f
                .unit
                .as_deref()
                .map(|u| format!(" {u}"))
                .unwrap_or_default();
            let goal = match f.goal {
                Some(g) if f.ic <= g => format!("≤ {} ✓", n(g)),
                Some(g) => format!(
                    "≤ {} ✗ (+{:.0} %)",
                    n(g),
                    (f.ic as f64 / g as f64 - 1.0) * 100.0
                ),
                None => String::new(),
            };
            let fuel = f.fuel.map(n).unwrap_or_else(|| "—".into());
            let _ = writeln!(out, "| {} | {}{unit} | {fuel} | {goal} |", f.flow, n(f.ic));
        }
        out.push('\n');
    }
    out.push_str(END);
    out
}

/// `docs/perf.md` with its results section replaced by `section`.
pub fn splice(doc: &str, section: &str) -> Result<String, String> {
    let start = doc
        .find(BEGIN)
        .ok_or_else(|| format!("{PERF_DOC} has no line `{BEGIN}`"))?;
    let end = doc[start..]
        .find(END)
        .map(|i| start + i + END.len())
        .ok_or_else(|| format!("{PERF_DOC} has no line `{END}` after its BEGIN line"))?;
    Ok(format!("{}{section}{}", &doc[..start], &doc[end..]))
}

/// Whether `docs/perf.md`'s results section is what the committed file renders to.
pub fn doc_agrees(r: &Results) -> Result<(), String> {
    let path = root().join(PERF_DOC);
    let doc = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let wanted = splice(&doc, &render(r))?;
    if wanted == doc {
        Ok(())
    } else {
        Err(format!(
            "{PERF_DOC}'s results section differs from {RESULTS_FILE}: run `bench --write` (or \
             `bench --render`) to generate it"
        ))
    }
}

/// Writes the results section of `docs/perf.md` from `r`.
pub fn write_doc(r: &Results) -> Result<(), String> {
    let path = root().join(PERF_DOC);
    let doc = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let new = splice(&doc, &render(r))?;
    std::fs::write(&path, new).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fig(flow: &str, ic: u64) -> Figure {
        Figure {
            set: Set::Quick,
            group: "g".into(),
            flow: flow.into(),
            ic,
            fuel: None,
            goal: None,
            unit: None,
        }
    }

    fn results(figs: Vec<Figure>) -> Results {
        Results {
            about: "a".into(),
            tolerance_percent: 1.0,
            measured: BTreeMap::new(),
            figures: figs,
        }
    }

    #[test]
    fn the_gate_fails_a_figure_that_grows_past_the_tolerance() {
        let c = results(vec![fig("a", 1_000_000), fig("b", 1_000)]);
        let (_, ok) = gate(&c, &[fig("a", 1_009_999), fig("b", 1_000)], Set::Quick);
        assert!(ok);
        let (lines, ok) = gate(&c, &[fig("a", 1_010_001), fig("b", 1_000)], Set::Quick);
        assert!(!ok, "{lines:?}");
        assert!(lines.iter().any(|l| l.starts_with("FAIL  a")));
    }

    #[test]
    fn the_gate_fails_a_flow_missing_on_either_side() {
        let c = results(vec![fig("a", 10)]);
        assert!(!gate(&c, &[], Set::Quick).1);
        assert!(!gate(&c, &[fig("a", 10), fig("new", 5)], Set::Quick).1);
    }

    #[test]
    fn a_fall_passes_and_asks_for_the_file_to_be_written() {
        let c = results(vec![fig("a", 1_000)]);
        let (lines, ok) = gate(&c, &[fig("a", 900)], Set::Quick);
        assert!(ok);
        assert!(lines.iter().any(|l| l.contains("bench --write")));
    }

    #[test]
    fn the_doc_section_is_replaced_whole() {
        let doc = format!("head\n{BEGIN}\nold\n{END}\ntail\n");
        let r = results(vec![fig("a", 1_234_567)]);
        let new = splice(&doc, &render(&r)).unwrap();
        assert!(new.starts_with("head\n"));
        assert!(new.ends_with(&format!("{END}\ntail\n")));
        assert!(new.contains("| a | 1\u{202f}234\u{202f}567 |"));
        assert!(!new.contains("old"));
        assert!(splice("no markers", "x").is_err());
    }
}
