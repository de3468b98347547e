//! The model card, `README.md`, with Hugging Face front matter: what a hub
//! page shows and filters on (library, tags for the game, encoder and
//! model kind, the training data's manifest sha256, the metrics with the
//! dataset they were measured on) and how to use the checkpoint.

use super::CheckpointConfig;

/// A YAML scalar: JSON's quoting is YAML's double-quoted style.
fn yaml(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// The evaluation figures among the free-form training metrics (losses,
/// accuracy, errors, equity: not learning rates, timings or counters), as
/// (`dotted.name`, value), in name order.
fn numeric_metrics(v: &serde_json::Value) -> Vec<(String, f64)> {
    fn walk(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, f64)>) {
        match v {
            serde_json::Value::Object(map) => {
                for (k, x) in map {
                    let name = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&name, x, out);
                }
            }
            serde_json::Value::Number(n) if is_evaluation(prefix) => {
                if let Some(x) = n.as_f64().filter(|x| x.is_finite()) {
                    out.push((prefix.to_string(), x));
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk("", v, &mut out);
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn is_evaluation(name: &str) -> bool {
    let leaf = name.rsplit('.').next().unwrap_or(name);
    ["loss", "acc", "mse", "mae", "r2", "equity", "elo"]
        .iter()
        .any(|k| leaf.contains(k))
}

/// The YAML front matter of the card.
fn front_matter(cfg: &CheckpointConfig) -> String {
    let kind = cfg.model.kind();
    let mut y = String::from("---\nlibrary_name: plies\ntags:\n- board-games\n- value-network\n");
    for tag in [cfg.game.as_str(), cfg.encoder.name.as_str(), kind] {
        y += &format!("- {}\n", yaml(tag));
    }
    let sha = cfg.training.dataset_manifest_sha256.as_deref();
    y += &format!(
        "plies:\n  game: {}\n  encoder: {}\n  encoder_version: {}\n  model: {}\n  training: {}\n",
        yaml(&cfg.game),
        yaml(&cfg.encoder.name),
        cfg.encoder.version,
        yaml(kind),
        yaml(&cfg.training.method)
    );
    if let Some(sha) = sha {
        y += &format!("  dataset_manifest_sha256: {}\n", yaml(sha));
    }
    let metrics = numeric_metrics(&cfg.training.metrics);
    if !metrics.is_empty() {
        let dataset = cfg
            .training
            .dataset
            .as_deref()
            .map(|d| {
                std::path::Path::new(d)
                    .file_name()
                    .map_or(d.to_string(), |n| n.to_string_lossy().to_string())
            })
            .unwrap_or_else(|| "unknown".into());
        y += &format!(
            "model-index:\n- name: {}\n  results:\n  - task:\n      type: position-evaluation\n      \
             name: {} position evaluation\n    dataset:\n      name: {}\n      type: plies-dataset\n",
            yaml(&format!("{}-{}", cfg.game, kind)),
            cfg.game,
            yaml(&dataset),
        );
        if let Some(sha) = sha {
            y += &format!("      revision: {}\n", yaml(sha));
        }
        y += "    metrics:\n";
        for (name, value) in metrics {
            y += &format!("    - type: {}\n      value: {value}\n", yaml(&name));
        }
    }
    y + "---\n"
}

pub fn model_card(cfg: &CheckpointConfig) -> String {
    let tensors: Vec<String> = cfg
        .model
        .expected_tensors()
        .iter()
        .map(|(n, s)| format!("| `{n}` | {s:?} |"))
        .collect();
    let pretty =
        |v: &serde_json::Value| serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string());
    format!(
        "{front}\n\
# {game} value network ({model})\n\n\
An evaluation function for {game}, trained by `{program}`.\n\n\
- Encoder: `{enc}` v{ver}, planes {shape:?}, {globals} global features, values from the \
{persp:?} point of view (positive is good for that side).\n\
- Model: {model}\n\
- Training: {method}, {examples} examples, seed {seed}\n\
- Dataset manifest sha256: {ds}\n\n\
## Tensors (`model.safetensors`, float32)\n\n| name | shape |\n| --- | --- |\n{tensors}\n\n\
## Hyperparameters\n\n```json\n{hp}\n```\n\n## Metrics\n\n```json\n{metrics}\n```\n\n\
## Use\n\n\
Shared on a hub as ORG/NAME, any plies command that takes a checkpoint reads it as \
`ckpt:hf:ORG/NAME[@REVISION]`, through the shared Hugging Face cache:\n\n\
```sh\nplies match --game {game} --a greedy:eval=ckpt:hf:ORG/NAME --b random --games 100\n\
plies hub download ORG/NAME --out {game}-checkpoint\n\
plies match --game {game} --a greedy:eval=ckpt:{game}-checkpoint --b random --games 100\n```\n\n\
From Python: `safetensors.numpy.load_file(\"model.safetensors\")`; the layouts are \
PyTorch's (`nn.Linear` weights `[out, in]`, `nn.Conv2d` `[out, in, kh, kw]`, \
`nn.BatchNorm2d`), and `scripts/torch_models.py` rebuilds the model in PyTorch.\n",
        front = front_matter(cfg),
        game = cfg.game,
        model = cfg.model.describe(),
        program = cfg.program,
        enc = cfg.encoder.name,
        ver = cfg.encoder.version,
        shape = cfg.encoder.shape,
        globals = cfg.encoder.globals,
        persp = cfg.encoder.perspective,
        method = cfg.training.method,
        examples = cfg.training.examples,
        seed = cfg
            .training
            .seed
            .map(|s| s.to_string())
            .unwrap_or_else(|| "none".into()),
        ds = cfg
            .training
            .dataset_manifest_sha256
            .as_deref()
            .unwrap_or("none"),
        tensors = tensors.join("\n"),
        hp = pretty(&cfg.training.hyperparameters),
        metrics = pretty(&cfg.training.metrics),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_has_tags_dataset_sha_and_metrics() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("checkpoints")
            .join("tictactoe-mlp80-td");
        let mut cfg = crate::checkpoint::load(&dir, None, None).unwrap().config;
        cfg.training.dataset = Some("runs/data/ttt-train".into());
        cfg.training.metrics = serde_json::json!({"epoch": 4, "last": {"valid_loss": 0.25, "valid_accuracy": 0.5, "lr": 0.01, "seconds": 2.5}, "kind": "best"});
        let card = model_card(&cfg);
        let front = card.split("---\n").nth(1).unwrap();
        for line in [
            "library_name: plies",
            "- \"tictactoe\"",
            "- \"tictactoe-9\"",
            "- \"mlp\"",
            "      name: \"ttt-train\"",
            "    - type: \"last.valid_loss\"\n      value: 0.25",
            "    - type: \"last.valid_accuracy\"\n      value: 0.5",
        ] {
            assert!(front.contains(line), "{line:?} missing from\n{front}");
        }
        let sha = cfg.training.dataset_manifest_sha256.clone().unwrap();
        assert!(front.contains(&format!("  dataset_manifest_sha256: \"{sha}\"")));
        assert!(front.contains(&format!("      revision: \"{sha}\"")));
        for not_a_metric in ["epoch", "lr", "seconds"] {
            assert!(!front.contains(not_a_metric), "{not_a_metric} in\n{front}");
        }
        assert!(card.contains("ckpt:hf:ORG/NAME"));
    }
}
