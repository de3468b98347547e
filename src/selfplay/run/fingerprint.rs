//! A run directory's configuration as its fingerprint
//! ([`crate::util::run_dir::check_fingerprint`]): stored on the first
//! start, and another run's refused naming every differing field in the
//! order [`SelfplayConfig`] declares them (what people set first, e.g. the
//! seed before the id prefix it implies), the first with both values.

use super::{SelfplayConfig, SelfplayError};
use crate::util::run_dir::{
    check_fingerprint, first_difference, Depth, Difference, JsonLayout, RunDirError,
};
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Stores `cfg` as the run's configuration at `path`, or checks it against
/// the one there: field by field, a differing one named with its whole
/// values.
pub(super) fn check_config(path: &Path, cfg: &SelfplayConfig) -> Result<(), SelfplayError> {
    check_fingerprint(path, cfg, Depth::TopLevel, JsonLayout::PrettyLine).map_err(|e| match e {
        RunDirError::Mismatch { path, difference } => mismatch(path, cfg, difference),
        RunDirError::Unreadable { path, why } => SelfplayError::BadConfigFile { path, why },
        RunDirError::Io { path, source } => SelfplayError::Io { path, source },
        e => e.into(),
    })?;
    Ok(())
}

/// The refusal of the run stored at `path`, `first` being the first
/// difference in sorted field order.
fn mismatch(path: PathBuf, cfg: &SelfplayConfig, first: Difference) -> SelfplayError {
    let mut all = vec![first];
    all.extend(other_differences(&path, cfg, &all[0].field));
    let declared = declared_fields(cfg);
    // Stable: fields only the stored run has stay after, in sorted order.
    all.sort_by_key(|d| {
        declared
            .iter()
            .position(|f| *f == d.field)
            .unwrap_or(declared.len())
    });
    let named = all.remove(0);
    let more = if all.is_empty() {
        String::new()
    } else {
        let rest: Vec<&str> = all.iter().map(|d| d.field.as_str()).collect();
        format!(" (also {})", rest.join(", "))
    };
    // An absent field shows as `null`.
    let text = |v: Option<Value>| v.unwrap_or_default().to_string();
    SelfplayError::ConfigMismatch {
        path,
        field: named.field,
        was: text(named.saved),
        now: text(named.given),
        more,
    }
}

/// The differences after `first` between the configuration stored at
/// `path` and `cfg`, in sorted field order.
fn other_differences(path: &Path, cfg: &SelfplayConfig, first: &str) -> Vec<Difference> {
    let stored = std::fs::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok());
    let (Some(Value::Object(mut saved)), Ok(Value::Object(mut given))) =
        (stored, serde_json::to_value(cfg))
    else {
        return Vec::new();
    };
    let mut rest = Vec::new();
    let mut field = first.to_string();
    loop {
        saved.remove(&field);
        given.remove(&field);
        let (a, b) = (Value::Object(saved.clone()), Value::Object(given.clone()));
        let Some(d) = first_difference(&a, &b, Depth::TopLevel) else {
            return rest;
        };
        field = d.field.clone();
        rest.push(d);
    }
}

/// The fields of `cfg` as it serialises them: in declaration order.
fn declared_fields(cfg: &SelfplayConfig) -> Vec<String> {
    serde_json::to_string(cfg)
        .ok()
        .and_then(|text| serde_json::from_str::<FieldNames>(&text).ok())
        .map_or_else(Vec::new, |names| names.0)
}

/// The keys of a JSON object in the order written (a `Value` sorts them).
struct FieldNames(Vec<String>);

impl<'de> Deserialize<'de> for FieldNames {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Keys;
        impl<'de> Visitor<'de> for Keys {
            type Value = FieldNames;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<FieldNames, A::Error> {
                let mut keys = Vec::new();
                while let Some((key, IgnoredAny)) = map.next_entry::<String, IgnoredAny>()? {
                    keys.push(key);
                }
                Ok(FieldNames(keys))
            }
        }
        d.deserialize_map(Keys)
    }
}
