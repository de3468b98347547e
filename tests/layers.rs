//! Modules depend one way: every `crate::` path outside test code names a
//! module at the importing module's layer or below, in the order of
//! docs/architecture.md ("Dependencies"), and no two modules of one layer
//! reach each other. A failure names the file, the line and the import.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers from the bottom, as docs/architecture.md lists them (`hub`
/// beside `checkpoint`).
const LAYERS: &[&[&str]] = &[
    &["util", "report", "optim"],
    &["game"],
    &["record", "encode", "dataset"],
    &["model", "checkpoint", "hub", "infer"],
    &["games"],
    &["positions", "search"],
    &["arena", "eval", "train"],
    &["selfplay", "protocol", "tune", "evolve", "experiment"],
    &["improve"],
    &["bench"],
    &["cli"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// One import of another top-level module: where, and what it names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Import {
    file: String,
    line: usize,
    from: String,
    to: String,
    text: String,
}

/// The top-level modules `text` (the source of a file of module `from`)
/// names through `crate::` paths, test code left out: a `#[cfg(test)]`
/// item and everything after it in the file (test modules close files
/// here), and lines that are comments.
fn imports(file: &str, from: &str, text: &str) -> Vec<Import> {
    let mut out = Vec::new();
    let mut in_use_group = false;
    for (n, line) in text.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with("#[cfg(test)]") {
            break;
        }
        if code.starts_with("//") {
            continue;
        }
        let code = code.split("//").next().unwrap_or("");
        let mut names: Vec<String> = Vec::new();
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            // Not part of a longer identifier (`candle_crate::`).
            let before = rest[..at].chars().last();
            rest = &rest[at + "crate::".len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            if let Some(group) = rest.strip_prefix('{') {
                // `use crate::{a, b::c, ...}`: the first segment of each
                // top-level entry, possibly over several lines.
                names.extend(group_heads(group));
                in_use_group = !group.contains('}');
                continue;
            }
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            names.push(name);
        }
        if in_use_group && !code.contains("crate::{") {
            names.extend(group_heads(code));
            if code.contains('}') {
                in_use_group = false;
            }
        }
        for to in names {
            if !to.is_empty() && to != from && layer_of(&to).is_some() {
                out.push(Import {
                    file: file.to_string(),
                    line: n + 1,
                    from: from.to_string(),
                    to,
                    text: line.trim().to_string(),
                });
            }
        }
    }
    out
}

/// The first path segment of each entry of a `{...}` group at its own
/// nesting level (`a, b::{c, d}, e::f` gives a, b, e).
fn group_heads(group: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut entry = String::new();
    let flush = |entry: &mut String, heads: &mut Vec<String>| {
        let head: String = entry
            .trim()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !head.is_empty() {
            heads.push(head);
        }
        entry.clear();
    };
    for c in group.chars() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => flush(&mut entry, &mut heads),
            _ if depth == 0 => entry.push(c),
            _ => {}
        }
    }
    flush(&mut entry, &mut heads);
    heads
}

/// Every violation among `imports`: an import of a higher layer, and both
/// directions of two modules of one layer that import each other.
fn violations(imports: &[Import]) -> Vec<String> {
    let mut out = BTreeSet::new();
    let mut same_layer: BTreeMap<(String, String), &Import> = BTreeMap::new();
    for i in imports {
        let (Some(a), Some(b)) = (layer_of(&i.from), layer_of(&i.to)) else {
            continue;
        };
        if b > a {
            out.insert(format!(
                "{}:{}: `{}` (layer {a}) imports `{}` (layer {b}, above it): {}",
                i.file, i.line, i.from, i.to, i.text
            ));
        } else if a == b {
            same_layer
                .entry((i.from.clone(), i.to.clone()))
                .or_insert(i);
        }
    }
    for ((from, to), i) in &same_layer {
        // Each pair once.
        if from > to {
            continue;
        }
        if let Some(back) = same_layer.get(&(to.clone(), from.clone())) {
            out.insert(format!(
                "{}:{}: `{from}` and `{to}` import each other ({}; and {}:{}: {})",
                i.file, i.line, i.text, back.file, back.line, back.text
            ));
        }
    }
    out.into_iter().collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The files and folders of modules declared under `#[cfg(test)]`
/// (`#[cfg(test)] mod x;` in `dir/mod.rs` or `dir.rs`: `dir/x.rs` and
/// `dir/x/`): test code, whatever it imports.
fn test_modules(files: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(path).expect("a source file");
        let dir = match path.file_name().and_then(|n| n.to_str()) {
            Some("mod.rs") | Some("lib.rs") | Some("main.rs") => {
                path.parent().expect("a folder").to_path_buf()
            }
            _ => path.with_extension(""),
        };
        let mut after_cfg_test = false;
        for line in text.lines().map(str::trim) {
            if line.starts_with("#[cfg(test)]") {
                after_cfg_test = true;
                continue;
            }
            if after_cfg_test {
                let decl = line.strip_prefix("pub(crate) ").unwrap_or(line);
                let decl = decl.strip_prefix("pub ").unwrap_or(decl);
                if let Some(name) = decl.strip_prefix("mod ").and_then(|d| d.strip_suffix(';')) {
                    out.push(dir.join(format!("{name}.rs")));
                    out.push(dir.join(name));
                }
            }
            // Other attributes may sit between `#[cfg(test)]` and its item.
            after_cfg_test &= line.starts_with("#[");
        }
    }
    out
}

/// The imports of every file of `src/` outside test code.
fn source_imports() -> Vec<Import> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let tests = test_modules(&files);
    files.retain(|f| !tests.iter().any(|t| f.starts_with(t)));
    let mut all = Vec::new();
    for path in files {
        let rel = path.strip_prefix(&src).expect("under src/");
        let module = rel
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .map(|m| m.trim_end_matches(".rs").to_string())
            .expect("a module name");
        // Test files and the crate root are not layered code.
        let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "tests.rs" || name.ends_with("_tests.rs") || module == "lib" || module == "main"
        {
            continue;
        }
        assert!(
            layer_of(&module).is_some(),
            "src/{}: module `{module}` is in no layer of tests/layers.rs (add it where docs/architecture.md puts it)",
            rel.display()
        );
        let text = std::fs::read_to_string(&path).expect("a source file");
        all.extend(imports(&format!("src/{}", rel.display()), &module, &text));
    }
    all
}

#[test]
fn modules_import_only_their_own_layer_and_below() {
    let imports = source_imports();
    assert!(imports.len() > 100, "only {} imports found", imports.len());
    let bad = violations(&imports);
    assert!(
        bad.is_empty(),
        "{} import(s) against the layer order of docs/architecture.md:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn a_planted_upward_import_is_named() {
    let text = "use crate::util::atomic;\nuse crate::{game::Game, search::{Mcts, Node}};\n\
                fn f() { crate::cli::run(); }\n#[cfg(test)]\nmod tests { use crate::bench::x; }\n";
    let found = imports("src/encode/planted.rs", "encode", text);
    let names: Vec<&str> = found.iter().map(|i| i.to.as_str()).collect();
    assert_eq!(names, ["util", "game", "search", "cli"], "{found:?}");
    let bad = violations(&found);
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert!(
        bad[0].contains("src/encode/planted.rs:2: `encode` (layer 2) imports `search`"),
        "{}",
        bad[0]
    );
    assert!(
        bad[1].contains("src/encode/planted.rs:3") && bad[1].contains("`cli`"),
        "{}",
        bad[1]
    );
    // A group over several lines.
    let text = "use crate::{\n    model::Net,\n    infer::Evaluator,\n};\n";
    let names: Vec<String> = imports("src/games/x.rs", "games", text)
        .into_iter()
        .map(|i| i.to)
        .collect();
    assert_eq!(names, ["model", "infer"]);
    // Two modules of one layer that reach each other.
    let a = imports("src/arena/a.rs", "arena", "use crate::eval::x;\n");
    let b = imports("src/eval/b.rs", "eval", "use crate::arena::y;\n");
    let both: Vec<Import> = a.into_iter().chain(b).collect();
    let bad = violations(&both);
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(
        bad[0].contains("`arena` and `eval` import each other"),
        "{}",
        bad[0]
    );
}
