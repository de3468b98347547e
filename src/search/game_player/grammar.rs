//! The grammar every kind of player shares: `NAME[:key=value,...]`, each
//! key at most once and one the kind takes, a bad value refused with its
//! key, the value and what was expected.

use crate::search::SearchError;
use std::fmt;
use std::time::Duration;

/// The error for spec `text`, saying `why`.
pub(crate) fn bad(text: &str, why: impl Into<String>) -> SearchError {
    SearchError::BadSpec {
        spec: text.to_string(),
        why: why.into(),
    }
}

/// Names `spec` in an error met while building its player (a bad option,
/// a checkpoint that cannot be loaded), so that a user with several
/// players sees which one failed.
pub(crate) fn in_spec(spec: &impl fmt::Display) -> impl Fn(SearchError) -> SearchError + '_ {
    move |e| match e {
        SearchError::BadSpec { why, .. } => bad(&spec.to_string(), why),
        SearchError::Checkpoint(e) => bad(&spec.to_string(), e.to_string()),
        other => other,
    }
}

/// A spec's `key=value` options.
pub struct Options<'a> {
    text: &'a str,
    pairs: Vec<(&'a str, &'a str)>,
}

impl<'a> Options<'a> {
    /// The options `args` (the spec's text after `:`, if any) of spec
    /// `text` for the kind `name`, which takes `keys`.
    pub fn parse(
        text: &'a str,
        name: &str,
        args: Option<&'a str>,
        keys: &[&str],
    ) -> Result<Self, SearchError> {
        let mut pairs: Vec<(&str, &str)> = Vec::new();
        if let Some(args) = args {
            for part in args.split(',') {
                let (k, v) = part
                    .split_once('=')
                    .ok_or_else(|| bad(text, format!("option '{part}' is not key=value")))?;
                let (k, v) = (k.trim(), v.trim());
                if pairs.iter().any(|&(seen, _)| seen == k) {
                    return Err(bad(text, format!("option '{k}' given twice")));
                }
                pairs.push((k, v));
            }
        }
        for &(k, _) in &pairs {
            if !keys.contains(&k) {
                let expected = if keys.is_empty() {
                    "it takes no options".to_string()
                } else {
                    format!("expected {}", keys.join(" or "))
                };
                return Err(bad(
                    text,
                    format!("unknown option '{k}' for {name}: {expected}"),
                ));
            }
        }
        Ok(Options { text, pairs })
    }

    /// The options in the order given.
    pub fn pairs(&self) -> &[(&'a str, &'a str)] {
        &self.pairs
    }

    /// Option `key`'s text, if given.
    pub fn get(&self, key: &str) -> Option<&'a str> {
        self.pairs.iter().find(|&&(k, _)| k == key).map(|&(_, v)| v)
    }

    /// Option `key` read by `parse` (`None` when absent); a value `parse`
    /// refuses is an error naming the key, the value and what was
    /// `expected`.
    pub fn read<T>(
        &self,
        key: &str,
        expected: &str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<Option<T>, SearchError> {
        self.get(key)
            .map(|v| parse(v).ok_or_else(|| self.bad(format!("{key} '{v}' is not {expected}"))))
            .transpose()
    }

    /// The `eval=` option: an evaluator's name, never empty.
    pub fn eval(&self) -> Result<Option<String>, SearchError> {
        match self.get("eval") {
            Some("") => Err(self.bad("eval= needs an evaluator name")),
            v => Ok(v.map(str::to_string)),
        }
    }

    /// An error for this spec.
    pub fn bad(&self, why: impl Into<String>) -> SearchError {
        bad(self.text, why)
    }
}

/// The options of the searches that take a depth, a time and a node
/// budget a move and an evaluator (`alphabeta`, `steps`).
pub(crate) const SEARCH_KEYS: [&str; 4] = ["depth", "time", "nodes", "eval"];

/// A search's limits a move, `depth`, `time` and `nodes`, and its
/// evaluator's name (the game's first hand evaluator when `None`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchOptions {
    pub depth: Option<u32>,
    pub time: Option<Duration>,
    pub nodes: Option<u64>,
    pub eval: Option<String>,
}

impl SearchOptions {
    /// The options `opts` gives, `depth` in `least..=most`.
    pub fn read(opts: &Options, least: u32, most: u32) -> Result<Self, SearchError> {
        Ok(SearchOptions {
            depth: opts.read(
                "depth",
                &format!("a whole number in {least}..={most}"),
                |t| t.parse().ok().filter(|d| (least..=most).contains(d)),
            )?,
            time: opts.read("time", "a positive number of seconds", |t| {
                let secs: f64 = t.parse().ok().filter(|&t: &f64| t > 0.0)?;
                Duration::try_from_secs_f64(secs).ok()
            })?,
            nodes: opts.read("nodes", "a whole number of at least 1", |t| {
                t.parse().ok().filter(|&n: &u64| n > 0)
            })?,
            eval: opts.eval()?,
        })
    }

    /// `name[:depth=D,time=T,nodes=N,eval=E]`, the options given.
    pub fn write(&self, f: &mut fmt::Formatter<'_>, name: &str) -> fmt::Result {
        let mut args = Vec::new();
        if let Some(d) = self.depth {
            args.push(format!("depth={d}"));
        }
        if let Some(t) = self.time {
            args.push(format!("time={}", t.as_secs_f64()));
        }
        if let Some(n) = self.nodes {
            args.push(format!("nodes={n}"));
        }
        if let Some(e) = &self.eval {
            args.push(format!("eval={e}"));
        }
        f.write_str(name)?;
        if args.is_empty() {
            Ok(())
        } else {
            write!(f, ":{}", args.join(","))
        }
    }
}
