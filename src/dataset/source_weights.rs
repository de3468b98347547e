//! [`SourceWeights`]: how much each row counts in a loss, by where its game
//! came from (the `source` column).
//!
//! A rule `PREFIX=W` gives weight `W` to every row whose source starts with
//! `PREFIX`; the longest matching prefix wins, and rows no rule matches
//! weigh 1. Sources are what the importers and self-play wrote: an
//! archive's `FILE:LINE` (`allgames2002.txt:17`) or `selfplay:A-vs-B`. So
//! `allgames2002.txt=20` makes each position of that file count as twenty
//! self-play positions: the way to mix a few hundred expert games into a
//! hundred thousand positions of weak self-play without the self-play
//! drowning them out.
//!
//! A weighted loss is `sum(w_i l_i) / sum(w_i)` over the batch, so weights
//! scale sources against each other, not the learning rate.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::error::Result;
use super::reader::Dataset;
use super::split::Split;

/// One rule: rows whose source starts with `prefix` weigh `weight`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SourceWeight {
    pub prefix: String,
    pub weight: f32,
}

/// A rule that cannot be used: the rule as given and why.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{rule:?}: {why}")]
pub struct SourceWeightError {
    pub rule: String,
    pub why: String,
}

impl FromStr for SourceWeight {
    type Err = SourceWeightError;

    /// `PREFIX=W`: a non-empty prefix and a finite weight above 0 (the
    /// last `=` splits them, so a prefix may hold one).
    fn from_str(s: &str) -> Result<Self, SourceWeightError> {
        let bad = |why: String| SourceWeightError {
            rule: s.to_string(),
            why,
        };
        let (prefix, weight) = s
            .rsplit_once('=')
            .ok_or_else(|| bad("expected PREFIX=WEIGHT, e.g. allgames2002.txt=20".into()))?;
        if prefix.is_empty() {
            return Err(bad(
                "the source prefix is empty (every row would match; scale the learning rate instead)"
                    .into(),
            ));
        }
        let weight: f32 = weight
            .trim()
            .parse()
            .map_err(|_| bad(format!("weight {weight:?} is not a number")))?;
        if !(weight.is_finite() && weight > 0.0) {
            return Err(bad(format!(
                "weight {weight}, expected a finite number above 0 (leave a source out of the dataset to drop it)"
            )));
        }
        Ok(SourceWeight {
            prefix: prefix.to_string(),
            weight,
        })
    }
}

impl fmt::Display for SourceWeight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.prefix, self.weight)
    }
}

/// The rules of a run; empty: every row weighs 1 and losses are plain means.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SourceWeights {
    rules: Vec<SourceWeight>,
}

impl SourceWeights {
    /// The rules, refusing a prefix given twice.
    pub fn new(rules: Vec<SourceWeight>) -> Result<Self, SourceWeightError> {
        for (i, r) in rules.iter().enumerate() {
            if rules[..i].iter().any(|o| o.prefix == r.prefix) {
                return Err(SourceWeightError {
                    rule: r.to_string(),
                    why: format!("the prefix {:?} is given twice", r.prefix),
                });
            }
        }
        Ok(SourceWeights { rules })
    }

    /// No rules: every row weighs 1.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    pub fn rules(&self) -> &[SourceWeight] {
        &self.rules
    }

    /// The index of the rule deciding `source` (the longest matching
    /// prefix), `None` when no rule matches.
    pub fn rule_of(&self, source: &str) -> Option<usize> {
        self.rules
            .iter()
            .enumerate()
            .filter(|(_, r)| source.starts_with(&r.prefix))
            .max_by_key(|(_, r)| r.prefix.len())
            .map(|(i, _)| i)
    }

    /// The weight of a row from `source`.
    pub fn weight_of(&self, source: &str) -> f32 {
        self.rule_of(source).map_or(1.0, |i| self.rules[i].weight)
    }
}

/// How many rows of a dataset each rule decides.
#[derive(Clone, Debug, PartialEq)]
pub struct RuleRows {
    /// Rows per rule, in the rules' order.
    pub per_rule: Vec<u64>,
    /// Rows no rule matches (weight 1).
    pub unmatched: u64,
    /// A few of the unmatched rows' sources, their line numbers cut
    /// (`selfplay:material-vs-material`, `allgames2002.txt`), for messages.
    pub unmatched_sources: Vec<String>,
}

/// How many distinct unmatched sources [`RuleRows`] keeps.
const SOURCE_EXAMPLES: usize = 6;

/// A source without a trailing `:LINE` (an archive row's line number).
fn source_stem(source: &str) -> &str {
    match source.rsplit_once(':') {
        Some((stem, line)) if !line.is_empty() && line.bytes().all(|b| b.is_ascii_digit()) => stem,
        _ => source,
    }
}

impl SourceWeights {
    /// Counts the rows of `splits` of `dataset` that each rule decides
    /// (one pass over the shards).
    pub fn count_rows(&self, dataset: &Dataset, splits: &[Split]) -> Result<RuleRows> {
        let parts = dataset.map_shards(None, |cols| {
            let mut counts = RuleRows {
                per_rule: vec![0; self.rules.len()],
                unmatched: 0,
                unmatched_sources: Vec::new(),
            };
            for i in 0..cols.len() {
                if !splits.iter().any(|s| s.as_str() == cols.split.value(i)) {
                    continue;
                }
                let source = cols.source.value(i);
                match self.rule_of(source) {
                    Some(r) => counts.per_rule[r] += 1,
                    None => {
                        counts.unmatched += 1;
                        note_source(&mut counts.unmatched_sources, source_stem(source));
                    }
                }
            }
            Ok(counts)
        })?;
        let mut all = RuleRows {
            per_rule: vec![0; self.rules.len()],
            unmatched: 0,
            unmatched_sources: Vec::new(),
        };
        for part in parts.into_iter().flatten() {
            for (a, b) in all.per_rule.iter_mut().zip(&part.per_rule) {
                *a += b;
            }
            all.unmatched += part.unmatched;
            for s in &part.unmatched_sources {
                note_source(&mut all.unmatched_sources, s);
            }
        }
        Ok(all)
    }
}

fn note_source(seen: &mut Vec<String>, stem: &str) {
    if seen.len() < SOURCE_EXAMPLES && !seen.iter().any(|s| s == stem) {
        seen.push(stem.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(specs: &[&str]) -> SourceWeights {
        SourceWeights::new(specs.iter().map(|s| s.parse().unwrap()).collect()).unwrap()
    }

    #[test]
    fn the_longest_matching_prefix_decides_and_the_rest_weigh_one() {
        let w = rules(&["allgames=4", "allgames2002.txt=20", "selfplay:=0.5"]);
        assert_eq!(w.weight_of("allgames2002.txt:17"), 20.0);
        assert_eq!(w.weight_of("allgames2003.txt:1"), 4.0);
        assert_eq!(w.weight_of("selfplay:material-vs-material"), 0.5);
        assert_eq!(w.weight_of("fake_archive.txt:3"), 1.0);
        assert_eq!(w.rule_of("fake_archive.txt:3"), None);
        assert!(SourceWeights::default().is_empty());
        assert_eq!(SourceWeights::default().weight_of("anything"), 1.0);
    }

    #[test]
    fn source_stems_drop_only_a_line_number() {
        assert_eq!(source_stem("allgames2002.txt:17"), "allgames2002.txt");
        assert_eq!(
            source_stem("selfplay:material-vs-material"),
            "selfplay:material-vs-material"
        );
        assert_eq!(source_stem("x:"), "x:");
    }

    #[test]
    fn bad_rules_are_refused_with_what_was_expected() {
        let err = |s: &str| s.parse::<SourceWeight>().unwrap_err().to_string();
        assert!(
            err("allgames").contains("expected PREFIX=WEIGHT"),
            "{}",
            err("allgames")
        );
        assert!(err("=3").contains("prefix is empty"));
        assert!(err("a=x").contains("not a number"));
        for bad in ["a=0", "a=-1", "a=inf", "a=NaN"] {
            assert!(err(bad).contains("above 0"), "{bad}: {}", err(bad));
        }
        // The last `=` splits, so a prefix may hold one.
        let r: SourceWeight = "k=v=2.5".parse().unwrap();
        assert_eq!((r.prefix.as_str(), r.weight), ("k=v", 2.5));
        assert_eq!(r.to_string(), "k=v=2.5");
        let twice = SourceWeights::new(vec!["a=1".parse().unwrap(), "a=2".parse().unwrap()]);
        assert!(twice.unwrap_err().to_string().contains("given twice"));
    }
}
