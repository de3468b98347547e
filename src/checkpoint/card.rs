//! The model card, `README.md`, with Hugging Face front matter.

use super::CheckpointConfig;

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
        "---\nlibrary_name: plies\ntags:\n- board-games\n- {game}\n- value-network\n---\n\n\
# {game} value network ({model})\n\n\
An evaluation function for {game}, trained by `{program}`.\n\n\
- Encoder: `{enc}` v{ver}, planes {shape:?}, {globals} global features, values from the \
{persp:?} point of view (positive is good for that side).\n\
- Model: {model}\n\
- Training: {method}, {examples} examples, seed {seed}\n\
- Dataset manifest sha256: {ds}\n\n\
## Tensors (`model.safetensors`, float32)\n\n| name | shape |\n| --- | --- |\n{tensors}\n\n\
## Hyperparameters\n\n```json\n{hp}\n```\n\n## Metrics\n\n```json\n{metrics}\n```\n\n\
## Use\n\n```sh\nplies match --game {game} --a greedy:PATH --b expert --games 1000\n```\n\n\
From Python: `safetensors.numpy.load_file(\"model.safetensors\")`; the layouts are \
PyTorch's (`nn.Linear` weights `[out, in]`, `nn.Conv2d` `[out, in, kh, kw]`, \
`nn.BatchNorm2d`), and `scripts/torch_models.py` rebuilds the model in PyTorch.\n",
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
