//! The report of `plies bench device`: one table (text) and one JSON
//! object, with plies/PyTorch ratios and the GPU check's targets marked
//! met, unmet or unmeasured.

use std::fmt;

use serde::Serialize;

use super::super::mcts::MctsRow;
use super::super::peer::PeerError;
use super::super::report::{num, ratio};
use super::torch::TunedRates;

/// Positions/s of one forward pass at one batch size.
#[derive(Serialize, Clone, Debug)]
pub struct InferRow {
    pub net: String,
    pub batch: usize,
    pub plies: f64,
    /// plies with bf16 weights and inputs.
    pub plies_bf16: Option<f64>,
    /// The native backend (the inference plan on cuDNN; CUDA only), f32
    /// and bf16, copies to and from the device included.
    pub native: Option<f64>,
    pub native_bf16: Option<f64>,
    pub torch_eager: Option<f64>,
    pub torch_compile: Option<f64>,
    /// PyTorch as its users tune it (CUDA only).
    pub torch_tuned: TunedRates,
}

impl InferRow {
    /// plies' faster f32 backend: candle's model or the native plan.
    pub fn best_f32(&self) -> f64 {
        self.native.map_or(self.plies, |n| n.max(self.plies))
    }
}

/// Positions/s of training steps: f32, and bf16 (plies' mixed precision,
/// PyTorch's bf16 autocast; f32 weights in both).
#[derive(Serialize, Clone, Debug)]
pub struct TrainRow {
    pub net: String,
    pub batch: usize,
    pub plies: f64,
    pub plies_bf16: Option<f64>,
    pub torch_eager: Option<f64>,
    pub torch_compile: Option<f64>,
    pub torch_bf16: Option<f64>,
    /// Why plies has no bf16 figure.
    pub bf16_note: Option<String>,
}

/// What is known of one network beyond its speed.
#[derive(Serialize, Clone, Debug)]
pub struct NetInfo {
    pub net: String,
    pub architecture: String,
    pub parameters: usize,
    /// Max and mean |bf16 - f32| of plies' values on the checked rows.
    pub bf16_max_abs_diff: Option<f64>,
    pub bf16_mean_abs_diff: Option<f64>,
    /// Why there is no bf16 figure.
    pub bf16_note: Option<String>,
    /// The native backend's name (`cuda-native-f32`, `-eager` when graphs
    /// could not be captured), its values' max |native - candle f32| in
    /// f32 and bf16, and why a native figure is missing.
    pub native_backend: Option<String>,
    pub native_max_abs_diff: Option<f64>,
    pub native_bf16_max_abs_diff: Option<f64>,
    pub native_note: Option<String>,
    /// Max |PyTorch - plies| of the values on the checked rows (f32): the
    /// peer computes the same function.
    pub torch_max_abs_diff: Option<f64>,
    /// Why torch.compile gave no figure.
    pub compile_note: Option<String>,
    /// Why a tuned PyTorch figure is missing.
    pub tuned_note: Option<String>,
}

#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Met,
    Unmet,
    Unmeasured,
}

/// One of the GPU check's targets, judged on this run's rows.
#[derive(Serialize, Clone, Debug)]
pub struct Target {
    pub target: &'static str,
    pub status: Status,
    /// The rows that decide it, or why none did.
    pub detail: String,
}

pub struct DeviceReport {
    /// The `--device` value.
    pub device: String,
    /// The GPU's name (from PyTorch) when the device is a GPU; `None` on
    /// a CPU, so that no figure reads as a GPU's.
    pub gpu: Option<String>,
    pub quick: bool,
    pub seconds: f64,
    pub rounds: usize,
    /// PyTorch's version, or why it did not run.
    pub torch: Result<String, PeerError>,
    pub nets: Vec<NetInfo>,
    pub infer: Vec<InferRow>,
    pub train: Vec<TrainRow>,
    /// MCTS on Arimaa with the batched evaluator against unbatched.
    pub mcts_model: String,
    pub mcts_sims: u64,
    pub mcts_positions: usize,
    pub mcts: Vec<MctsRow>,
    /// cuDNN's version and the algorithms it chose for the training
    /// convolutions, when they ran on cuDNN.
    pub cudnn: Option<crate::model::device_kernels::conv::CudnnChoices>,
}

/// Rows at or above `factor` times their peer: met when all are, unmet
/// (naming those below) otherwise, unmeasured when no row has both sides.
fn judge(
    target: &'static str,
    rows: &[(String, f64, Option<f64>)],
    factor: f64,
    none: &str,
) -> Target {
    let compared: Vec<(&String, f64)> = rows
        .iter()
        .filter_map(|(name, ours, theirs)| theirs.map(|t| (name, ours / t)))
        .collect();
    let below: Vec<String> = compared
        .iter()
        .filter(|(_, r)| *r < factor)
        .map(|(name, r)| format!("{name} {r:.2}x"))
        .collect();
    let (status, detail) = if compared.is_empty() {
        (Status::Unmeasured, none.to_string())
    } else if below.is_empty() {
        (Status::Met, format!("all {} rows", compared.len()))
    } else {
        (
            Status::Unmet,
            format!(
                "{} of {} rows below: {}",
                below.len(),
                compared.len(),
                below.join(", ")
            ),
        )
    };
    Target {
        target,
        status,
        detail,
    }
}

impl DeviceReport {
    /// The three targets, judged on this run.
    pub fn targets(&self) -> Vec<Target> {
        let eager: Vec<_> = self
            .infer
            .iter()
            .map(|r| {
                (
                    format!("infer {} @{}", r.net, r.batch),
                    r.best_f32(),
                    r.torch_eager,
                )
            })
            .chain(self.train.iter().map(|r| {
                (
                    format!("train {} @{}", r.net, r.batch),
                    r.plies,
                    r.torch_eager,
                )
            }))
            .collect();
        let compiled: Vec<_> = self
            .infer
            .iter()
            .filter(|r| r.batch >= 1024)
            .map(|r| {
                (
                    format!("infer {} @{}", r.net, r.batch),
                    r.best_f32(),
                    r.torch_compile,
                )
            })
            .collect();
        // Rows where plies has no bf16 figure (the MDRNN trains in f32)
        // are left out: there is nothing to compare.
        let train_bf16: Vec<_> = self
            .train
            .iter()
            .filter_map(|r| {
                Some((
                    format!("train {} @{}", r.net, r.batch),
                    r.plies_bf16?,
                    r.torch_bf16,
                ))
            })
            .collect();
        let mcts: Vec<_> = self
            .mcts
            .iter()
            .filter(|r| r.threads == 512)
            .map(|r| {
                (
                    "512 threads".to_string(),
                    r.batched_sims_per_s,
                    Some(r.unbatched_sims_per_s),
                )
            })
            .collect();
        vec![
            judge(
                "plies >= PyTorch eager on every row",
                &eager,
                1.0,
                "no row has a PyTorch eager figure",
            ),
            judge(
                "plies >= torch.compile for inference at batch >= 1024",
                &compiled,
                1.0,
                "no inference row at batch >= 1024 has a torch.compile figure",
            ),
            judge(
                "plies bf16 training >= PyTorch bf16 autocast on every row",
                &train_bf16,
                1.0,
                "no training row has both bf16 figures",
            ),
            judge(
                "batched evaluator >= 20x unbatched inside MCTS at 512 threads",
                &mcts,
                20.0,
                "no MCTS row at 512 threads",
            ),
        ]
    }

    pub fn to_json(&self) -> serde_json::Value {
        let infer: Vec<_> = self
            .infer
            .iter()
            .map(|r| {
                let mut v = serde_json::to_value(r).expect("plain rows serialise");
                v["plies_over_eager"] = serde_json::json!(ratio(Some(r.plies), r.torch_eager));
                v["plies_over_compile"] = serde_json::json!(ratio(Some(r.plies), r.torch_compile));
                v["bf16_over_f32"] = serde_json::json!(ratio(r.plies_bf16, Some(r.plies)));
                v["native_over_candle"] = serde_json::json!(ratio(r.native, Some(r.plies)));
                v["native_over_eager"] = serde_json::json!(ratio(r.native, r.torch_eager));
                v
            })
            .collect();
        let train: Vec<_> = self
            .train
            .iter()
            .map(|r| {
                let mut v = serde_json::to_value(r).expect("plain rows serialise");
                v["plies_over_eager"] = serde_json::json!(ratio(Some(r.plies), r.torch_eager));
                v["plies_over_compile"] = serde_json::json!(ratio(Some(r.plies), r.torch_compile));
                v["bf16_over_autocast"] = serde_json::json!(ratio(r.plies_bf16, r.torch_bf16));
                v
            })
            .collect();
        serde_json::json!({
            "device": self.device,
            "gpu": self.gpu,
            "quick": self.quick,
            "seconds": self.seconds,
            "rounds": self.rounds,
            "torch": self.torch.as_ref().ok(),
            "torch_note": self.torch.as_ref().err().map(|e| e.to_string()),
            "nets": self.nets,
            "infer": infer,
            "train": train,
            "mcts": {
                "game": "arimaa",
                "model": self.mcts_model,
                "sims": self.mcts_sims,
                "positions": self.mcts_positions,
                "rows": self.mcts,
            },
            "targets": self.targets(),
            "cudnn": self.cudnn,
        })
    }

    fn where_run(&self) -> String {
        match &self.gpu {
            Some(gpu) => format!("{} ({gpu})", self.device),
            None => format!("{} (not a GPU: no figure here is a GPU's)", self.device),
        }
    }
}

impl fmt::Display for DeviceReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "plies bench device on {}", self.where_run())?;
        let torch = match &self.torch {
            Ok(v) => format!("PyTorch {v}"),
            Err(e) => format!("PyTorch did not run: {e}"),
        };
        writeln!(
            f,
            "{torch}; positions/s, best of {} rounds of >= {} s, inputs on the device, synchronised after every call{}",
            self.rounds,
            self.seconds,
            if self.quick { "; --quick: tiny sizes, figures not to quote" } else { "" }
        )?;
        writeln!(f, "\nnetworks")?;
        writeln!(
            f,
            "{:<16} {:>10} {:>12} {:>12} {:>12}  architecture",
            "net", "params", "bf16 max|d|", "bf16 mean|d|", "torch max|d|"
        )?;
        for n in &self.nets {
            writeln!(
                f,
                "{:<16} {:>10} {:>12} {:>12} {:>12}  {}",
                n.net,
                n.parameters,
                sci(n.bf16_max_abs_diff),
                sci(n.bf16_mean_abs_diff),
                sci(n.torch_max_abs_diff),
                n.architecture
            )?;
        }
        writeln!(f, "\ninference (forward pass of one batch)")?;
        writeln!(
            f,
            "{:<16} {:>6} {:>12} {:>12} {:>12} {:>12} {:>8} {:>8} {:>8}",
            "net",
            "batch",
            "plies",
            "plies bf16",
            "eager",
            "compile",
            "/eager",
            "/compile",
            "bf16/f32"
        )?;
        for r in &self.infer {
            writeln!(
                f,
                "{:<16} {:>6} {:>12} {:>12} {:>12} {:>12} {:>8} {:>8} {:>8}",
                r.net,
                r.batch,
                num(Some(r.plies), 0),
                num(r.plies_bf16, 0),
                num(r.torch_eager, 0),
                num(r.torch_compile, 0),
                num(ratio(Some(r.plies), r.torch_eager), 2),
                num(ratio(Some(r.plies), r.torch_compile), 2),
                num(ratio(r.plies_bf16, Some(r.plies)), 2),
            )?;
        }
        if self.infer.iter().any(|r| r.torch_tuned.any()) {
            writeln!(
                f,
                "\ninference against PyTorch tuned (cudnn.benchmark; TF32; bf16 autocast; CUDA-graph replay at batch <= 64), equal precisions side by side"
            )?;
            writeln!(
                f,
                "{:<16} {:>6} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>9} {:>9}",
                "net",
                "batch",
                "plies f32",
                "graph f32",
                "torch tf32",
                "plies bf16",
                "torch bf16",
                "graph bf16",
                "f32/graph",
                "bf16/bf16"
            )?;
            for r in &self.infer {
                let t = &r.torch_tuned;
                let best_bf16 = t.best_bf16();
                writeln!(
                    f,
                    "{:<16} {:>6} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12} {:>9} {:>9}",
                    r.net,
                    r.batch,
                    num(Some(r.plies), 0),
                    num(t.graph, 0),
                    num(t.tf32, 0),
                    num(r.plies_bf16, 0),
                    num(t.bf16, 0),
                    num(t.graph_bf16, 0),
                    num(ratio(Some(r.plies), t.graph), 2),
                    num(ratio(r.plies_bf16, best_bf16), 2),
                )?;
            }
        }
        if self
            .infer
            .iter()
            .any(|r| r.native.is_some() || r.native_bf16.is_some())
        {
            self.native_table(f)?;
        }
        writeln!(
            f,
            "\ntraining (forward + MSE + backward + SGD Nesterov step); bf16: plies' bf16 \
             copies of f32 weights beside PyTorch's bf16 autocast"
        )?;
        writeln!(
            f,
            "{:<16} {:>6} {:>12} {:>12} {:>12} {:>8} {:>8} {:>12} {:>12} {:>9}",
            "net",
            "batch",
            "plies",
            "eager",
            "compile",
            "/eager",
            "/compile",
            "plies bf16",
            "autocast",
            "/autocast"
        )?;
        for r in &self.train {
            writeln!(
                f,
                "{:<16} {:>6} {:>12} {:>12} {:>12} {:>8} {:>8} {:>12} {:>12} {:>9}",
                r.net,
                r.batch,
                num(Some(r.plies), 0),
                num(r.torch_eager, 0),
                num(r.torch_compile, 0),
                num(ratio(Some(r.plies), r.torch_eager), 2),
                num(ratio(Some(r.plies), r.torch_compile), 2),
                num(r.plies_bf16, 0),
                num(r.torch_bf16, 0),
                num(ratio(r.plies_bf16, r.torch_bf16), 2),
            )?;
        }
        for r in self.train.iter().filter(|r| r.bf16_note.is_some()) {
            writeln!(
                f,
                "  {} @{}: no bf16 figure: {}",
                r.net,
                r.batch,
                r.bf16_note.as_deref().unwrap_or_default()
            )?;
        }
        if let Some(c) = &self.cudnn {
            writeln!(
                f,
                "  training convolutions on cuDNN {}.{}.{} (forward / input gradient / filter gradient):",
                c.version / 10_000,
                c.version / 100 % 100,
                c.version % 100
            )?;
            for k in &c.convolutions {
                let [b, ch, h, w] = k.x;
                let [f_out, _, kh, kw] = k.w;
                writeln!(
                    f,
                    "    {} {b}x{ch}x{h}x{w} * {f_out}x{kh}x{kw} pad {}: {} / {} / {}, workspace {} KiB",
                    k.precision,
                    k.pad,
                    k.forward.as_deref().unwrap_or("-"),
                    k.data.as_deref().unwrap_or("-"),
                    k.filter.as_deref().unwrap_or("-"),
                    k.workspace_bytes.div_ceil(1024)
                )?;
            }
        }
        if self.mcts.is_empty() {
            writeln!(f, "\nMCTS: not measured in this run (--no-mcts)")?;
        } else {
            writeln!(
                f,
                "\nMCTS on Arimaa, {} evaluator, {} simulations x {} positions: batched evaluator against unbatched",
                self.mcts_model, self.mcts_sims, self.mcts_positions
            )?;
            write!(
                f,
                "{}",
                super::super::mcts::MctsReport {
                    rows: self.mcts.clone()
                }
            )?;
        }
        writeln!(f, "\ntargets (on {})", self.where_run())?;
        for t in self.targets() {
            let status = match t.status {
                Status::Met => "met",
                Status::Unmet => "UNMET",
                Status::Unmeasured => "unmeasured",
            };
            writeln!(f, "  {:<10} {}: {}", status, t.target, t.detail)?;
        }
        let notes: Vec<String> = self
            .nets
            .iter()
            .flat_map(|n| {
                [
                    n.bf16_note
                        .as_ref()
                        .map(|s| format!("{}: no bf16: {s}", n.net)),
                    n.compile_note
                        .as_ref()
                        .map(|s| format!("{}: no torch.compile: {s}", n.net)),
                    n.native_note
                        .as_ref()
                        .map(|s| format!("{}: native backend: {s}", n.net)),
                ]
            })
            .flatten()
            .collect();
        if !notes.is_empty() {
            writeln!(f, "\nnotes")?;
            for n in notes {
                writeln!(f, "  {n}")?;
            }
        }
        Ok(())
    }
}

impl DeviceReport {
    /// The native backend beside candle's model and PyTorch at equal
    /// precisions: f32 against PyTorch's f32 graph replay where it has
    /// one (else eager), bf16 against its faster bf16 mode.
    fn native_table(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "\nnative backend (inference plan on cuDNN + cuBLAS, CUDA graphs; copies to and from the device included)"
        )?;
        for n in self.nets.iter().filter(|n| n.native_backend.is_some()) {
            writeln!(
                f,
                "  {}: {}, max |native - candle f32| {} (f32), {} (bf16)",
                n.net,
                n.native_backend.as_deref().unwrap_or("-"),
                sci(n.native_max_abs_diff),
                sci(n.native_bf16_max_abs_diff),
            )?;
        }
        writeln!(
            f,
            "{:<16} {:>6} {:>12} {:>12} {:>12} {:>12} {:>12} {:>9} {:>9} {:>9}",
            "net",
            "batch",
            "candle f32",
            "native f32",
            "native bf16",
            "torch f32",
            "torch bf16",
            "/candle",
            "f32/torch",
            "bf16/torch"
        )?;
        for r in &self.infer {
            let t = &r.torch_tuned;
            let torch_f32 = t.graph.or(r.torch_eager);
            let torch_bf16 = t.best_bf16();
            writeln!(
                f,
                "{:<16} {:>6} {:>12} {:>12} {:>12} {:>12} {:>12} {:>9} {:>9} {:>9}",
                r.net,
                r.batch,
                num(Some(r.plies), 0),
                num(r.native, 0),
                num(r.native_bf16, 0),
                num(torch_f32, 0),
                num(torch_bf16, 0),
                num(ratio(r.native, Some(r.plies)), 2),
                num(ratio(r.native, torch_f32), 2),
                num(ratio(r.native_bf16, torch_bf16), 2),
            )?;
        }
        Ok(())
    }
}

fn sci(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.2e}"))
}

impl super::super::report::Report for DeviceReport {
    fn json(&self) -> serde_json::Result<String> {
        serde_json::to_string_pretty(&self.to_json())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, ours: f64, theirs: Option<f64>) -> (String, f64, Option<f64>) {
        (name.into(), ours, theirs)
    }

    #[test]
    fn a_target_is_met_unmet_or_unmeasured() {
        let met = judge(
            "t",
            &[row("a", 2.0, Some(1.0)), row("b", 1.0, None)],
            1.0,
            "none",
        );
        assert_eq!(
            (met.status, met.detail.as_str()),
            (Status::Met, "all 1 rows")
        );
        let unmet = judge(
            "t",
            &[row("a", 2.0, Some(1.0)), row("b", 1.0, Some(4.0))],
            1.0,
            "none",
        );
        assert_eq!(unmet.status, Status::Unmet);
        assert_eq!(unmet.detail, "1 of 2 rows below: b 0.25x");
        let unmeasured = judge("t", &[row("b", 1.0, None)], 1.0, "no peer");
        assert_eq!(
            (unmeasured.status, unmeasured.detail.as_str()),
            (Status::Unmeasured, "no peer")
        );
        // 19x unbatched is short of 20x.
        let mcts = judge("t", &[row("512 threads", 19.0, Some(1.0))], 20.0, "none");
        assert_eq!(mcts.status, Status::Unmet);
    }
}

#[cfg(test)]
mod tuned_tests {
    use super::*;

    fn report(rows: Vec<InferRow>) -> DeviceReport {
        DeviceReport {
            device: "cuda".into(),
            gpu: Some("a GPU".into()),
            quick: false,
            seconds: 0.5,
            rounds: 2,
            torch: Ok("2.11".into()),
            nets: Vec::new(),
            infer: rows,
            train: Vec::new(),
            mcts_model: "resnet-small".into(),
            mcts_sims: 1,
            mcts_positions: 1,
            mcts: Vec::new(),
            cudnn: None,
        }
    }

    fn row(batch: usize, tuned: TunedRates) -> InferRow {
        InferRow {
            net: "cnn3".into(),
            batch,
            plies: 1000.0,
            plies_bf16: Some(3000.0),
            native: None,
            native_bf16: None,
            torch_eager: Some(500.0),
            torch_compile: None,
            torch_tuned: tuned,
        }
    }

    #[test]
    fn tuned_peer_rows_compare_equal_precisions() {
        let tuned = TunedRates {
            tf32: Some(800.0),
            bf16: Some(1000.0),
            graph: Some(4000.0),
            graph_bf16: Some(6000.0),
        };
        let text = report(vec![row(64, tuned)]).to_string();
        let line = text
            .lines()
            .skip_while(|l| !l.starts_with("inference against PyTorch tuned"))
            .nth(2)
            .unwrap_or_else(|| panic!("no tuned table:\n{text}"));
        // f32 against f32 graph replay; bf16 against the faster bf16 mode.
        let cells: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(cells[cells.len() - 2..], ["0.25", "0.50"], "{line}");
        let json = report(vec![row(64, tuned)]).to_json();
        assert_eq!(json["infer"][0]["torch_tuned"]["graph_bf16"], 6000.0);
        // Without tuned figures (a CPU run) there is no such table.
        let text = report(vec![row(64, TunedRates::default())]).to_string();
        assert!(!text.contains("PyTorch tuned"), "{text}");
    }

    #[test]
    fn native_rows_are_judged_with_plies_best_backend_and_tabled_at_equal_precisions() {
        let tuned = TunedRates {
            tf32: None,
            bf16: Some(1000.0),
            graph: Some(4000.0),
            graph_bf16: Some(6000.0),
        };
        let mut r = row(64, tuned);
        r.native = Some(2000.0);
        r.native_bf16 = Some(3000.0);
        let rep = report(vec![r.clone()]);
        let text = rep.to_string();
        let line = text
            .lines()
            .skip_while(|l| !l.starts_with("native backend"))
            .nth(2)
            .unwrap_or_else(|| panic!("no native table:\n{text}"));
        // native/candle 2.00; f32 against the f32 graph 0.50; bf16 against
        // the faster bf16 mode 0.50.
        let cells: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(cells[cells.len() - 3..], ["2.00", "0.50", "0.50"], "{line}");
        // The eager target takes the native figure (2000 over 500).
        let eager = &rep.targets()[0];
        assert_eq!(eager.status, Status::Met, "{}", eager.detail);
        r.native = Some(400.0);
        r.plies = 300.0;
        let eager = &report(vec![r]).targets()[0];
        assert_eq!(eager.status, Status::Unmet, "{}", eager.detail);
        assert!(eager.detail.contains("0.80x"), "{}", eager.detail);
        // Without native figures (a CPU run) there is no such table.
        let text = report(vec![row(64, tuned)]).to_string();
        assert!(!text.contains("native backend"), "{text}");
    }
}
